//! The linear layers: the forward (`z = x W^T + b`, the activation fused), the parameter and
//! input gradients (fused where they fit; the first and output layers' shared dispatch is in
//! `first_and_output.rs`); their parameters, how their rows lie in memory (vec4 or scalar kernels), shape checks and dispatch
//! methods, beside their `.wgsl` files.

#[allow(
    unused_imports,
    reason = "each family takes what it needs of the shared kernel definitions"
)]
use super::*;
use crate::ops::{aligned, check, check_whole_vec4s, GpuOps, Recorder};
use crate::GpuError;

/// This family's place in [`FAMILIES`].
const FAMILY: usize = 0;

kernel_params! {
    /// `z = x W^T + b` and `a = f(z)` of one linear layer (linear_forward.wgsl for vec4-aligned
    /// shapes, linear_forward_scalar.wgsl for any).
    pub struct LinearForwardParams {
        pub rows: u32,
        pub fan_in: u32,
        pub fan_out: u32,
        /// Offsets of W and b inside the parameter buffer.
        pub weight_offset: u32,
        pub bias_offset: u32,
        /// Offset of the first input value inside the input buffer.
        pub x_offset: u32,
        /// An [`ActivationCode`]; identity writes `z` only.
        pub activation: u32,
        pub pad0: u32,
    }
}

kernel_params! {
    /// The backward of one linear layer: its parameter gradients (linear_parameter_gradient*.wgsl)
    /// and the gradient at the input of the layer below with its activation's derivative
    /// applied (linear_input_gradient*.wgsl), or both in one dispatch (linear_backward.wgsl).
    /// Each kernel reads the fields it needs.
    pub struct LinearBackwardParams {
        pub rows: u32,
        pub fan_in: u32,
        pub fan_out: u32,
        pub weight_offset: u32,
        pub bias_offset: u32,
        pub x_offset: u32,
        /// The [`ActivationCode`] whose derivative multiplies the input gradient.
        pub activation_below: u32,
        pub pad0: u32,
    }
}

pub const LINEAR_FORWARD: Kernel<LinearForwardParams, 4> = Kernel::new(
    KernelId::new(FAMILY, 0),
    "linear_forward",
    concat!(
        include_str!("shared/activation.wgsl"),
        include_str!("shared/linear_forward_vec4_block.wgsl"),
        include_str!("linear_forward.wgsl")
    ),
    64,
    &[R, R, RW, RW],
);

pub const LINEAR_FORWARD_SCALAR: Kernel<LinearForwardParams, 4> = Kernel::new(
    KernelId::new(FAMILY, 1),
    "linear_forward_scalar",
    with_activations!("linear_forward_scalar.wgsl"),
    64,
    &[R, R, RW, RW],
);

pub const LINEAR_FORWARD_VEC4_OUT: Kernel<LinearForwardParams, 4> = Kernel::new(
    KernelId::new(FAMILY, 2),
    "linear_forward_vec4_out",
    concat!(
        include_str!("shared/activation.wgsl"),
        include_str!("shared/linear_forward_vec4_out_block.wgsl"),
        include_str!("linear_forward_vec4_out.wgsl")
    ),
    16,
    &[R, R, RW, RW],
);

pub const LINEAR_PARAMETER_GRADIENT: Kernel<LinearBackwardParams, 3> = Kernel::new(
    KernelId::new(FAMILY, 3),
    "linear_parameter_gradient",
    concat!(
        include_str!("shared/grads4.wgsl"),
        include_str!("shared/linear_parameter_gradient_block.wgsl"),
        include_str!("linear_parameter_gradient.wgsl")
    ),
    16,
    &[R, R, RW],
);

pub const LINEAR_PARAMETER_GRADIENT_SCALAR: Kernel<LinearBackwardParams, 3> = Kernel::new(
    KernelId::new(FAMILY, 4),
    "linear_parameter_gradient_scalar",
    include_str!("linear_parameter_gradient_scalar.wgsl"),
    16,
    &[R, R, RW],
);

pub const LINEAR_PARAMETER_GRADIENT_VEC4_OUT: Kernel<LinearBackwardParams, 3> = Kernel::new(
    KernelId::new(FAMILY, 5),
    "linear_parameter_gradient_vec4_out",
    concat!(
        include_str!("shared/linear_parameter_gradient_vec4_out_block.wgsl"),
        include_str!("linear_parameter_gradient_vec4_out.wgsl")
    ),
    8,
    &[R, R, RW],
);

pub const LINEAR_INPUT_GRADIENT: Kernel<LinearBackwardParams, 4> = Kernel::new(
    KernelId::new(FAMILY, 6),
    "linear_input_gradient",
    concat!(
        include_str!("shared/activation.wgsl"),
        include_str!("shared/linear_input_gradient_block.wgsl"),
        include_str!("linear_input_gradient.wgsl")
    ),
    32,
    &[R, R, R, RW],
);

pub const LINEAR_BACKWARD: Kernel<LinearBackwardParams, 6> = Kernel::new(
    KernelId::new(FAMILY, 7),
    "linear_backward",
    concat!(
        include_str!("shared/activation.wgsl"),
        include_str!("shared/grads4.wgsl"),
        include_str!("shared/linear_parameter_gradient_block.wgsl"),
        include_str!("shared/linear_input_gradient_block.wgsl"),
        include_str!("linear_backward.wgsl")
    ),
    16,
    &[R, R, RW, R, R, RW],
);

pub const LINEAR_INPUT_GRADIENT_SCALAR: Kernel<LinearBackwardParams, 4> = Kernel::new(
    KernelId::new(FAMILY, 8),
    "linear_input_gradient_scalar",
    with_activations!("linear_input_gradient_scalar.wgsl"),
    64,
    &[R, R, R, RW],
);

/// The checks of a linear layer's forward, whichever kernel runs it.
pub(super) fn check_forward(
    p: &LinearForwardParams,
    x: &wgpu::Buffer,
    parameters: &wgpu::Buffer,
    z: &wgpu::Buffer,
    a: &wgpu::Buffer,
) -> Result<(), GpuError> {
    let layer = LinearShape::new(p.rows, p.fan_in, p.fan_out, p.weight_offset, p.bias_offset)?;
    check(x, u64::from(p.x_offset) + layer.inputs(), "input")?;
    layer.check_weight_and_bias(parameters, "parameters (weight)", "parameters (bias)")?;
    check(z, layer.outputs(), "output")?;
    if p.activation != ActivationCode::Identity as u32 {
        check(a, layer.outputs(), "activation output")?;
    }
    Ok(())
}

/// How a linear layer's rows lie in memory, which picks its forward and parameter-gradient
/// kernels (each asks for its own alignment: the forward's inputs and weights, the gradient's
/// inputs and outputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LinearLayout {
    /// Whole vec4s throughout (linear_forward.wgsl, linear_parameter_gradient.wgsl).
    Vec4,
    /// Outputs in whole vec4s, inputs of any count, as the first layer of 2-D data
    /// (linear_forward_vec4_out.wgsl, linear_parameter_gradient_vec4_out.wgsl: dy loaded four
    /// at a time).
    Vec4Outputs,
    /// Any other shape (linear_forward_scalar.wgsl, linear_parameter_gradient_scalar.wgsl).
    Scalar,
}

impl LinearLayout {
    pub(super) fn new(vec4: bool, fan_out: u32) -> Self {
        if vec4 {
            LinearLayout::Vec4
        } else if aligned(&[fan_out]) {
            LinearLayout::Vec4Outputs
        } else {
            LinearLayout::Scalar
        }
    }

    pub(super) fn for_forward(p: &LinearForwardParams) -> Self {
        Self::new(aligned(&[p.fan_in, p.x_offset, p.weight_offset]), p.fan_out)
    }

    pub(super) fn for_parameter_gradient(p: &LinearBackwardParams) -> Self {
        Self::new(aligned(&[p.fan_in, p.x_offset, p.fan_out]), p.fan_out)
    }
}

/// The buffer sizes the parameter gradients of a linear layer read and write.
pub(super) fn check_parameter_gradient(
    p: &LinearBackwardParams,
    x: &wgpu::Buffer,
    dy: &wgpu::Buffer,
    grads: &wgpu::Buffer,
) -> Result<(), GpuError> {
    let layer = LinearShape::of_backward(p)?;
    check(x, u64::from(p.x_offset) + layer.inputs(), "input")?;
    check(dy, layer.outputs(), "upstream gradient")?;
    layer.check_weight_and_bias(grads, "gradients (weight)", "gradients (bias)")
}

/// The buffer sizes the input gradient of a linear layer reads and writes.
pub(super) fn check_input_gradient(
    p: &LinearBackwardParams,
    dy: &wgpu::Buffer,
    parameters: &wgpu::Buffer,
    u_below: &wgpu::Buffer,
    du_below: &wgpu::Buffer,
) -> Result<(), GpuError> {
    let layer = LinearShape::of_backward(p)?;
    check(dy, layer.outputs(), "upstream gradient")?;
    layer.check_weight(parameters, "parameters (weight)")?;
    check(u_below, layer.inputs(), "activation input below")?;
    check(du_below, layer.inputs(), "input gradient")
}

/// Jobs of the vec4 parameter-gradient block (4 outputs x 8 inputs each).
pub(super) fn parameter_gradient_blocks(p: &LinearBackwardParams) -> u32 {
    (p.fan_out / 4) * p.fan_in.div_ceil(8)
}

/// Jobs of the vec4-output parameter-gradient block (4 outputs x 2 inputs each).
pub(super) fn vec4_out_parameter_gradient_blocks(p: &LinearBackwardParams) -> u32 {
    (p.fan_out / 4) * p.fan_in.div_ceil(2)
}

/// Jobs of the vec4 input-gradient block (8 rows x 8 inputs each).
pub(super) fn input_gradient_blocks(p: &LinearBackwardParams) -> u32 {
    p.rows.div_ceil(8) * p.fan_in.div_ceil(8)
}

/// A linear layer's rows and fans, and where its weight and bias lie in a parameter-sized
/// buffer: what the checks of every kernel that reads or writes a layer share (the output
/// layer's classes are its `fan_out`).
pub(super) struct LinearShape {
    rows: u64,
    fan_in: u64,
    fan_out: u64,
    weight_offset: u64,
    bias_offset: u64,
}

impl LinearShape {
    /// Refuses an empty layer: the kernels index the last input and output (`fan_in - 1`);
    /// zero rows do nothing.
    pub(super) fn new(
        rows: u32,
        fan_in: u32,
        fan_out: u32,
        weight_offset: u32,
        bias_offset: u32,
    ) -> Result<Self, GpuError> {
        if fan_in == 0 || fan_out == 0 {
            return Err(GpuError::Shape(format!(
                "a linear layer of {fan_in} inputs and {fan_out} outputs is empty"
            )));
        }
        Ok(Self {
            rows: rows.into(),
            fan_in: fan_in.into(),
            fan_out: fan_out.into(),
            weight_offset: weight_offset.into(),
            bias_offset: bias_offset.into(),
        })
    }

    fn of_backward(p: &LinearBackwardParams) -> Result<Self, GpuError> {
        Self::new(p.rows, p.fan_in, p.fan_out, p.weight_offset, p.bias_offset)
    }

    /// Values of the layer's input (rows x fan_in).
    pub(super) fn inputs(&self) -> u64 {
        self.rows * self.fan_in
    }

    /// Values of the layer's output (rows x fan_out).
    pub(super) fn outputs(&self) -> u64 {
        self.rows * self.fan_out
    }

    /// The weight fits `buffer`.
    pub(super) fn check_weight(&self, buffer: &wgpu::Buffer, what: &'static str) -> Result<(), GpuError> {
        check(buffer, self.weight_offset + self.fan_in * self.fan_out, what)
    }

    /// The weight and the bias fit `buffer`.
    pub(super) fn check_weight_and_bias(
        &self,
        buffer: &wgpu::Buffer,
        weight: &'static str,
        bias: &'static str,
    ) -> Result<(), GpuError> {
        self.check_weight(buffer, weight)?;
        check(buffer, self.bias_offset + self.fan_out, bias)
    }
}

impl GpuOps {
    /// `z = x W^T + b` and, unless `params.activation` is the identity, `a = f(z)`.
    pub fn linear_forward(
        &self,
        recorder: &mut Recorder,
        params: LinearForwardParams,
        x: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        z: &wgpu::Buffer,
        a: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        check_forward(&p, x, parameters, z, a)?;
        let buffers = [x, parameters, z, a];
        match LinearLayout::for_forward(&p) {
            LinearLayout::Vec4 => {
                check_whole_vec4s(&[x, parameters])?;
                let blocks = p.rows.div_ceil(8) * p.fan_out.div_ceil(4);
                self.run(recorder, &LINEAR_FORWARD, &p, buffers, blocks)
            }
            LinearLayout::Vec4Outputs => {
                check_whole_vec4s(&[z, a])?;
                let blocks = p.rows.div_ceil(8) * (p.fan_out / 4);
                self.run(recorder, &LINEAR_FORWARD_VEC4_OUT, &p, buffers, blocks)
            }
            LinearLayout::Scalar => {
                let invocations = p.rows.div_ceil(2) * p.fan_out.div_ceil(16) * 4;
                self.run(recorder, &LINEAR_FORWARD_SCALAR, &p, buffers, invocations)
            }
        }
    }

    /// Adds the weight and bias gradients of `dy` (at the layer's input `x`) into `grads`.
    pub fn linear_parameter_gradient(
        &self,
        recorder: &mut Recorder,
        params: LinearBackwardParams,
        x: &wgpu::Buffer,
        dy: &wgpu::Buffer,
        grads: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        check_parameter_gradient(&p, x, dy, grads)?;
        let buffers = [x, dy, grads];
        match LinearLayout::for_parameter_gradient(&p) {
            LinearLayout::Vec4 => {
                check_whole_vec4s(&[x, dy])?;
                let blocks = parameter_gradient_blocks(&p);
                self.run(recorder, &LINEAR_PARAMETER_GRADIENT, &p, buffers, blocks)
            }
            LinearLayout::Vec4Outputs => {
                check_whole_vec4s(&[dy])?;
                let blocks = vec4_out_parameter_gradient_blocks(&p);
                let kernel = &LINEAR_PARAMETER_GRADIENT_VEC4_OUT;
                self.run(recorder, kernel, &p, buffers, blocks)
            }
            LinearLayout::Scalar => {
                let invocations = p.fan_out.div_ceil(4) * p.fan_in.div_ceil(8) * 4;
                let kernel = &LINEAR_PARAMETER_GRADIENT_SCALAR;
                self.run(recorder, kernel, &p, buffers, invocations)
            }
        }
    }

    /// The backward of a linear layer above another: [`GpuOps::linear_parameter_gradient`] and
    /// [`GpuOps::linear_input_gradient`], in one dispatch where both take their vec4 kernels
    /// (linear_backward.wgsl), the same numbers bit for bit.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn linear_backward(
        &self,
        recorder: &mut Recorder,
        params: LinearBackwardParams,
        x: &wgpu::Buffer,
        dy: &wgpu::Buffer,
        grads: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        u_below: &wgpu::Buffer,
        du_below: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        // Both halves' sizes are checked before anything is recorded, on either path.
        check_parameter_gradient(&p, x, dy, grads)?;
        check_input_gradient(&p, dy, parameters, u_below, du_below)?;
        if !aligned(&[p.fan_in, p.x_offset, p.fan_out, p.weight_offset]) {
            self.linear_parameter_gradient(recorder, p, x, dy, grads)?;
            return self.linear_input_gradient(recorder, p, dy, parameters, u_below, du_below);
        }
        check_whole_vec4s(&[x, dy, parameters, u_below, du_below])?;
        // The jobs of the two vec4 kernels, as linear_backward.wgsl splits its invocations.
        let jobs = parameter_gradient_blocks(&p) + input_gradient_blocks(&p);
        let buffers = [x, dy, grads, parameters, u_below, du_below];
        self.run(recorder, &LINEAR_BACKWARD, &p, buffers, jobs)
    }

    /// Writes `du_below = (dy W) * f'(u_below)`, the gradient at the input of the activation
    /// below the layer.
    pub fn linear_input_gradient(
        &self,
        recorder: &mut Recorder,
        params: LinearBackwardParams,
        dy: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        u_below: &wgpu::Buffer,
        du_below: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        check_input_gradient(&p, dy, parameters, u_below, du_below)?;
        let buffers = [dy, parameters, u_below, du_below];
        if aligned(&[p.fan_in, p.fan_out, p.weight_offset]) {
            check_whole_vec4s(&buffers)?;
            let blocks = input_gradient_blocks(&p);
            self.run(recorder, &LINEAR_INPUT_GRADIENT, &p, buffers, blocks)
        } else {
            let invocations = p.rows.div_ceil(4) * p.fan_in.div_ceil(8) * 4;
            let kernel = &LINEAR_INPUT_GRADIENT_SCALAR;
            self.run(recorder, kernel, &p, buffers, invocations)
        }
    }
}

/// The family's kernels, each at its `KernelId::index`.
pub(super) const KERNELS: &[KernelInfo] = &[
    LINEAR_FORWARD.info,
    LINEAR_FORWARD_SCALAR.info,
    LINEAR_FORWARD_VEC4_OUT.info,
    LINEAR_PARAMETER_GRADIENT.info,
    LINEAR_PARAMETER_GRADIENT_SCALAR.info,
    LINEAR_PARAMETER_GRADIENT_VEC4_OUT.info,
    LINEAR_INPUT_GRADIENT.info,
    LINEAR_BACKWARD.info,
    LINEAR_INPUT_GRADIENT_SCALAR.info,
];
