//! The first and the output layer's parameter gradients in one dispatch (the last of a
//! micro-batch's backward where the output layer wrote its input gradient), and that dispatch
//! shared with the next micro-batch's first forward; their parameters, when they fuse, and their
//! dispatch methods, beside their `.wgsl` files. Each falls back to the linear family's kernels
//! with the same numbers bit for bit.

use super::linear::{check_forward, check_parameter_gradient, vec4_out_parameter_gradient_blocks, LinearLayout};
#[allow(
    unused_imports,
    reason = "each family takes what it needs of the shared kernel definitions"
)]
use super::*;
use crate::ops::{aligned, check_whole_vec4s, GpuOps, Recorder};
use crate::GpuError;

/// This family's place in [`FAMILIES`].
const FAMILY: usize = 1;

kernel_params! {
    /// The parameter gradients of the first layer (its fields as in [`LinearBackwardParams`])
    /// and of the output layer in one dispatch (first_and_output_parameter_gradients.wgsl).
    pub struct FirstAndOutputParams {
        pub rows: u32,
        pub fan_in: u32,
        pub fan_out: u32,
        pub weight_offset: u32,
        pub bias_offset: u32,
        pub x_offset: u32,
        pub classes: u32,
        /// The output layer's inputs per row (the top hidden layer's width).
        pub output_fan_in: u32,
        pub output_weight_offset: u32,
        pub output_bias_offset: u32,
        pub pad0: u32,
        pub pad1: u32,
    }
}

kernel_params! {
    /// [`FirstAndOutputParams`] and the first layer's forward of the next micro-batch in one
    /// dispatch (first_and_output_gradients_and_forward.wgsl): the same layer, so the forward
    /// shares `fan_in`, `fan_out` and the offsets of the weight and bias.
    pub struct GradientsAndForwardParams {
        pub rows: u32,
        pub fan_in: u32,
        pub fan_out: u32,
        pub weight_offset: u32,
        pub bias_offset: u32,
        pub x_offset: u32,
        pub classes: u32,
        pub output_fan_in: u32,
        pub output_weight_offset: u32,
        pub output_bias_offset: u32,
        /// The next micro-batch's rows and the offset of its first input.
        pub forward_rows: u32,
        pub forward_x_offset: u32,
        /// The [`ActivationCode`] the forward applies.
        pub activation: u32,
        pub pad0: u32,
        pub pad1: u32,
        pub pad2: u32,
    }
}

pub const FIRST_AND_OUTPUT_PARAMETER_GRADIENTS: Kernel<FirstAndOutputParams, 5> = Kernel::new(
    KernelId::new(FAMILY, 0),
    "first_and_output_parameter_gradients",
    concat!(
        include_str!("shared/grads4.wgsl"),
        include_str!("shared/output_parameter_gradient_block.wgsl"),
        include_str!("shared/linear_parameter_gradient_vec4_out_block.wgsl"),
        include_str!("first_and_output_parameter_gradients.wgsl")
    ),
    8,
    &[R, R, RW, R, R],
);

pub const FIRST_AND_OUTPUT_GRADIENTS_AND_FORWARD: Kernel<GradientsAndForwardParams, 8> = Kernel::new(
    KernelId::new(FAMILY, 1),
    "first_and_output_gradients_and_forward",
    concat!(
        include_str!("shared/activation.wgsl"),
        include_str!("shared/grads4.wgsl"),
        include_str!("shared/output_parameter_gradient_block.wgsl"),
        include_str!("shared/linear_parameter_gradient_vec4_out_block.wgsl"),
        include_str!("shared/linear_forward_vec4_out_block.wgsl"),
        include_str!("first_and_output_gradients_and_forward.wgsl")
    ),
    8,
    &[R, R, RW, R, R, R, RW, RW],
);

/// The parameter gradients of the first and the output layer of one micro-batch
/// ([`GpuOps::first_and_output_parameter_gradients`]), the last dispatch of its backward, held
/// until the next micro-batch's forward can share it
/// ([`GpuOps::first_and_output_gradients_then_forward`]).
#[derive(Debug, Clone)]
pub struct FirstAndOutputGradients {
    pub first: LinearBackwardParams,
    pub output: LinearBackwardParams,
    /// The first layer's input (the data) and the gradient at its output.
    pub x: wgpu::Buffer,
    pub dy: wgpu::Buffer,
    /// The output layer's input (the top hidden layer's activations) and the logits' gradient.
    pub a_top: wgpu::Buffer,
    pub dlogits: wgpu::Buffer,
    pub grads: wgpu::Buffer,
}

impl FirstAndOutputGradients {
    /// Records the gradients on their own.
    pub fn record(&self, ops: &GpuOps, recorder: &mut Recorder) -> Result<(), GpuError> {
        ops.first_and_output_parameter_gradients(
            recorder,
            self.first,
            self.output,
            &self.x,
            &self.dy,
            &self.a_top,
            &self.dlogits,
            &self.grads,
        )
    }
}

/// Whether the first layer's and the output layer's parameter gradients take one dispatch: the
/// first layer's outputs are whole vec4s, the output layer has at most four classes over a
/// width of whole vec4s, and both have the same rows.
pub(super) fn first_and_output_share_a_dispatch(first: &LinearBackwardParams, output: &LinearBackwardParams) -> bool {
    let output_fits = aligned(&[output.fan_in]) && output.x_offset == 0 && output.fan_out <= MAX_CLASSES_IN_REGISTERS;
    let first_fits = LinearLayout::for_parameter_gradient(first) == LinearLayout::Vec4Outputs;
    first_fits && output_fits && output.rows == first.rows
}

impl GpuOps {
    /// The parameter gradients of the first layer (`first`: from the data `x` and its upstream
    /// gradient `dy`) and of the output layer (`output`: from the top layer's activations
    /// `a_top` and the logit gradient `dlogits`), added into `grads`. One dispatch where the
    /// first layer takes its vec4-output kernel and the output layer has at most four classes
    /// over a width that is a multiple of 4 (first_and_output_parameter_gradients.wgsl), else
    /// the two kernels; the same numbers bit for bit.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn first_and_output_parameter_gradients(
        &self,
        recorder: &mut Recorder,
        first: LinearBackwardParams,
        output: LinearBackwardParams,
        x: &wgpu::Buffer,
        dy: &wgpu::Buffer,
        a_top: &wgpu::Buffer,
        dlogits: &wgpu::Buffer,
        grads: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        // Both halves' sizes are checked before anything is recorded, on either path.
        check_parameter_gradient(&first, x, dy, grads)?;
        check_parameter_gradient(&output, a_top, dlogits, grads)?;
        if !first_and_output_share_a_dispatch(&first, &output) {
            self.linear_parameter_gradient(recorder, output, a_top, dlogits, grads)?;
            return self.linear_parameter_gradient(recorder, first, x, dy, grads);
        }
        check_whole_vec4s(&[dy, a_top])?;
        let params = FirstAndOutputParams {
            rows: first.rows,
            fan_in: first.fan_in,
            fan_out: first.fan_out,
            weight_offset: first.weight_offset,
            bias_offset: first.bias_offset,
            x_offset: first.x_offset,
            classes: output.fan_out,
            output_fan_in: output.fan_in,
            output_weight_offset: output.weight_offset,
            output_bias_offset: output.bias_offset,
            ..FirstAndOutputParams::default()
        };
        // The jobs of the two blocks, as the kernel splits its invocations.
        let jobs = output.fan_in / 4 + vec4_out_parameter_gradient_blocks(&first);
        let buffers = [x, dy, grads, a_top, dlogits];
        self.run(recorder, &FIRST_AND_OUTPUT_PARAMETER_GRADIENTS, &params, buffers, jobs)
    }

    /// [`GpuOps::first_and_output_parameter_gradients`] of one micro-batch, then
    /// [`GpuOps::linear_forward`] of the first layer for the next: in one dispatch
    /// (first_and_output_gradients_and_forward.wgsl, the numbers of the separate kernels bit for
    /// bit) where the gradients share a dispatch, the forward takes its vec4-output kernel, it is
    /// the same layer reading the same data, and it writes nothing the gradients read; as the
    /// two otherwise.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn first_and_output_gradients_then_forward(
        &self,
        recorder: &mut Recorder,
        gradients: &FirstAndOutputGradients,
        forward: LinearForwardParams,
        x: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        z: &wgpu::Buffer,
        a: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let g = gradients;
        let (first, output) = (g.first, g.output);
        check_parameter_gradient(&first, &g.x, &g.dy, &g.grads)?;
        check_parameter_gradient(&output, &g.a_top, &g.dlogits, &g.grads)?;
        check_forward(&forward, x, parameters, z, a)?;
        let same_layer = (
            forward.fan_in,
            forward.fan_out,
            forward.weight_offset,
            forward.bias_offset,
        ) == (first.fan_in, first.fan_out, first.weight_offset, first.bias_offset);
        let read_by_gradients = [&g.x, &g.dy, &g.a_top, &g.dlogits, &g.grads];
        let apart = !read_by_gradients.contains(&z) && !read_by_gradients.contains(&a) && *parameters != g.grads;
        let fits = first_and_output_share_a_dispatch(&first, &output)
            && LinearLayout::for_forward(&forward) == LinearLayout::Vec4Outputs
            && forward.rows > 0;
        if !(fits && same_layer && apart && *x == g.x) {
            self.first_and_output_parameter_gradients(
                recorder, first, output, &g.x, &g.dy, &g.a_top, &g.dlogits, &g.grads,
            )?;
            return self.linear_forward(recorder, forward, x, parameters, z, a);
        }
        check_whole_vec4s(&[&g.dy, &g.a_top, z, a])?;
        let params = GradientsAndForwardParams {
            rows: first.rows,
            fan_in: first.fan_in,
            fan_out: first.fan_out,
            weight_offset: first.weight_offset,
            bias_offset: first.bias_offset,
            x_offset: first.x_offset,
            classes: output.fan_out,
            output_fan_in: output.fan_in,
            output_weight_offset: output.weight_offset,
            output_bias_offset: output.bias_offset,
            forward_rows: forward.rows,
            forward_x_offset: forward.x_offset,
            activation: forward.activation,
            ..GradientsAndForwardParams::default()
        };
        // The jobs of the three blocks, as the kernel splits its invocations.
        let jobs = output.fan_in / 4
            + vec4_out_parameter_gradient_blocks(&first)
            + forward.rows.div_ceil(8) * (forward.fan_out / 4);
        let buffers = [x, &g.dy, &g.grads, &g.a_top, &g.dlogits, parameters, z, a];
        self.run(
            recorder,
            &FIRST_AND_OUTPUT_GRADIENTS_AND_FORWARD,
            &params,
            buffers,
            jobs,
        )
    }
}

/// The family's kernels, each at its `KernelId::index`.
pub(super) const KERNELS: &[KernelInfo] = &[
    FIRST_AND_OUTPUT_PARAMETER_GRADIENTS.info,
    FIRST_AND_OUTPUT_GRADIENTS_AND_FORWARD.info,
];
