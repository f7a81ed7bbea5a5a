//! The output layer with softmax and cross-entropy (and the gradient of the logits when
//! training), alone or fused with the top hidden layer; parameters, checks and dispatch methods,
//! beside their `.wgsl` files.

#[allow(
    unused_imports,
    reason = "each family takes what it needs of the shared kernel definitions"
)]
use super::*;
use crate::ops::{aligned, check, check_whole_vec4s, GpuOps, Recorder};
use crate::GpuError;

/// This family's place in [`FAMILIES`].
const FAMILY: usize = 3;

kernel_params! {
    /// The output layer, softmax, cross-entropy and, when training, the gradient of the logits
    /// and (`write_input_gradient`) the gradient at the input of the activation below
    /// (output_cross_entropy.wgsl, and output_cross_entropy_vec4.wgsl where the shape allows).
    pub struct OutputParams {
        pub rows: u32,
        pub classes: u32,
        /// Inputs per row (the last hidden layer's width).
        pub fan_in: u32,
        /// Offsets of W and b inside the parameter buffer.
        pub weight_offset: u32,
        pub bias_offset: u32,
        /// Where row 0's label is in the label buffer.
        pub label_offset: u32,
        /// The weight of each item's loss in the gradient (`1 / items of the step`).
        pub gradient_weight: f32,
        /// 1 to write `dlogits`.
        pub write_gradient: u32,
        /// Where row 0's loss goes in the row-loss buffer.
        pub loss_offset: u32,
        /// 1 to also write `du_below = (dlogits W) * f'(u)`, f' taken from the input `x = f(u)`
        /// (with `write_gradient`; only for activations where
        /// [`ActivationCode::derivative_from_output`]).
        pub write_input_gradient: u32,
        /// The [`ActivationCode`] f that made the input `x`.
        pub activation_below: u32,
        pub pad0: u32,
    }
}

kernel_params! {
    /// A training forward's top hidden layer (its fields as [`LinearForwardParams`]'s) and the
    /// output layer after it (its fields as [`OutputParams`]'s, the output layer's inputs being
    /// the top layer's `fan_out`) in one dispatch (top_layer_and_output.wgsl).
    pub struct TopLayerAndOutputParams {
        pub rows: u32,
        pub fan_in: u32,
        pub fan_out: u32,
        pub weight_offset: u32,
        pub bias_offset: u32,
        pub x_offset: u32,
        /// The top layer's [`ActivationCode`]; its output must give its derivative.
        pub activation: u32,
        pub classes: u32,
        pub output_weight_offset: u32,
        pub output_bias_offset: u32,
        pub label_offset: u32,
        pub gradient_weight: f32,
        pub loss_offset: u32,
        pub pad0: u32,
        pub pad1: u32,
        pub pad2: u32,
    }
}

pub const OUTPUT_CROSS_ENTROPY: Kernel<OutputParams, 8> = Kernel::new(
    KernelId::new(FAMILY, 0),
    "output_cross_entropy",
    with_activations!("output_cross_entropy.wgsl"),
    16,
    &[R, R, R, RW, RW, RW, RW, RW],
);

pub const OUTPUT_CROSS_ENTROPY_VEC4: Kernel<OutputParams, 8> = Kernel::new(
    KernelId::new(FAMILY, 1),
    "output_cross_entropy_vec4",
    concat!(
        include_str!("shared/activation.wgsl"),
        include_str!("shared/output_cross_entropy_row.wgsl"),
        include_str!("output_cross_entropy_vec4.wgsl")
    ),
    16,
    &[R, R, R, RW, RW, RW, RW, RW],
);

pub const TOP_LAYER_AND_OUTPUT: Kernel<TopLayerAndOutputParams, 7> = Kernel::new(
    KernelId::new(FAMILY, 2),
    "top_layer_and_output",
    concat!(
        include_str!("shared/activation.wgsl"),
        include_str!("shared/linear_forward_vec4_block.wgsl"),
        include_str!("shared/output_cross_entropy_row.wgsl"),
        include_str!("top_layer_and_output.wgsl")
    ),
    16,
    &[R, R, R, RW, RW, RW, RW],
);

/// The most classes the output layer's vec4 kernels keep in registers (one vec4 of logits);
/// every dataset of the Lab has two or three.
pub(super) const MAX_CLASSES_IN_REGISTERS: u32 = 4;

/// The widest top layer that top_layer_and_output.wgsl takes: 4 outputs for each of its
/// workgroup's invocations (`MAX_TOP_VEC4S` there).
pub const MAX_FUSED_TOP_WIDTH: u32 = 64;

/// The sizes an output pass needs ([`GpuOps::output_cross_entropy`] less the probabilities and
/// correctness), and that an input gradient comes only with the logits' and an activation whose
/// output gives its derivative.
pub(super) fn check_output(
    p: &OutputParams,
    x: &wgpu::Buffer,
    parameters: &wgpu::Buffer,
    labels: &wgpu::Buffer,
    row_loss: &wgpu::Buffer,
    dlogits: &wgpu::Buffer,
    du_below: &wgpu::Buffer,
) -> Result<(), GpuError> {
    let layer = LinearShape::new(p.rows, p.fan_in, p.classes, p.weight_offset, p.bias_offset)?;
    let rows = u64::from(p.rows);
    check(x, layer.inputs(), "input")?;
    layer.check_weight_and_bias(parameters, "parameters (weight)", "parameters (bias)")?;
    check(labels, u64::from(p.label_offset) + rows, "labels")?;
    check(row_loss, u64::from(p.loss_offset) + rows, "row losses")?;
    if p.write_gradient == 1 {
        check(dlogits, layer.outputs(), "logit gradient")?;
    }
    if p.write_input_gradient == 1 {
        let derivable =
            ActivationCode::from_code(p.activation_below).is_some_and(ActivationCode::derivative_from_output);
        if p.write_gradient != 1 || !derivable {
            return Err(GpuError::Shape(format!(
                "the output kernel writes an input gradient only with the logit gradient and an activation whose output gives its derivative (activation code {})",
                p.activation_below
            )));
        }
        check(du_below, layer.inputs(), "input gradient")?;
    }
    Ok(())
}

impl GpuOps {
    /// The output layer's logits from `x`, then softmax and cross-entropy: probabilities into
    /// `probs`, each row's loss into `row_loss` (from `params.loss_offset`), whether its arg-max
    /// is its label into `row_correct` and, with `params.write_gradient`, the gradient of the
    /// weighted loss at the logits into `dlogits`; with `params.write_input_gradient` also
    /// the gradient at the input of the activation that made `x` into `du_below`, as
    /// [`GpuOps::linear_input_gradient`] would write it.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn output_cross_entropy(
        &self,
        recorder: &mut Recorder,
        params: OutputParams,
        x: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        labels: &wgpu::Buffer,
        probs: &wgpu::Buffer,
        row_loss: &wgpu::Buffer,
        row_correct: &wgpu::Buffer,
        dlogits: &wgpu::Buffer,
        du_below: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        check_output(&p, x, parameters, labels, row_loss, dlogits, du_below)?;
        let (rows, classes) = (u64::from(p.rows), u64::from(p.classes));
        check(probs, rows * classes, "probabilities")?;
        check(row_correct, rows, "row correctness")?;
        let buffers = [x, parameters, labels, probs, row_loss, row_correct, dlogits, du_below];
        if aligned(&[p.fan_in, p.weight_offset]) && p.classes <= MAX_CLASSES_IN_REGISTERS {
            check_whole_vec4s(&[x, parameters])?;
            if p.write_input_gradient == 1 {
                check_whole_vec4s(&[du_below])?;
            }
            self.run(recorder, &OUTPUT_CROSS_ENTROPY_VEC4, &p, buffers, p.rows)
        } else {
            self.run(recorder, &OUTPUT_CROSS_ENTROPY, &p, buffers, p.rows)
        }
    }

    /// Whether a training forward's top hidden layer (`top`, linear with its activation) and
    /// the output layer after it take one dispatch, [`GpuOps::top_layer_and_output`]: a top
    /// layer of whole vec4s at most [`MAX_FUSED_TOP_WIDTH`] wide over at least one row, at most
    /// four classes, and an output pass over the same rows that writes the gradient at the top
    /// layer's activation input (so that it needs neither `z` nor the probabilities), through
    /// an activation other than the identity (for which the forward writes only `z`).
    pub fn fuses_top_layer_and_output(top: &LinearForwardParams, output: &OutputParams) -> bool {
        LinearLayout::for_forward(top) == LinearLayout::Vec4
            && top.rows > 0
            && top.activation != ActivationCode::Identity as u32
            && aligned(&[top.fan_out, output.weight_offset])
            && top.fan_out <= MAX_FUSED_TOP_WIDTH
            && top.rows == output.rows
            && output.fan_in == top.fan_out
            && output.classes <= MAX_CLASSES_IN_REGISTERS
            && output.write_gradient == 1
            && output.write_input_gradient == 1
            && output.activation_below == top.activation
            && ActivationCode::from_code(top.activation).is_some_and(ActivationCode::derivative_from_output)
    }

    /// The top hidden layer's forward (`a = f(x W^T + b)`, `z` left unwritten) and the output
    /// layer's training pass after it ([`GpuOps::output_cross_entropy`] without the
    /// probabilities and correctness) in one dispatch (top_layer_and_output.wgsl), the same
    /// numbers bit for bit; only where [`GpuOps::fuses_top_layer_and_output`].
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn top_layer_and_output(
        &self,
        recorder: &mut Recorder,
        top: LinearForwardParams,
        output: OutputParams,
        x: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        labels: &wgpu::Buffer,
        a: &wgpu::Buffer,
        row_loss: &wgpu::Buffer,
        dlogits: &wgpu::Buffer,
        du_below: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        if !Self::fuses_top_layer_and_output(&top, &output) {
            return Err(GpuError::Shape(format!(
                "the top layer ({} -> {}) and output layer ({} classes) do not fit one dispatch",
                top.fan_in, top.fan_out, output.classes
            )));
        }
        check_forward(&top, x, parameters, a, a)?;
        check_output(&output, a, parameters, labels, row_loss, dlogits, du_below)?;
        check_whole_vec4s(&[x, parameters, a, du_below])?;
        let params = TopLayerAndOutputParams {
            rows: top.rows,
            fan_in: top.fan_in,
            fan_out: top.fan_out,
            weight_offset: top.weight_offset,
            bias_offset: top.bias_offset,
            x_offset: top.x_offset,
            activation: top.activation,
            classes: output.classes,
            output_weight_offset: output.weight_offset,
            output_bias_offset: output.bias_offset,
            label_offset: output.label_offset,
            gradient_weight: output.gradient_weight,
            loss_offset: output.loss_offset,
            ..TopLayerAndOutputParams::default()
        };
        // One workgroup of MAX_FUSED_TOP_WIDTH / 4 invocations per 8 rows.
        let invocations = top.rows.div_ceil(8) * (MAX_FUSED_TOP_WIDTH / 4);
        let buffers = [x, parameters, labels, a, row_loss, dlogits, du_below];
        self.run(recorder, &TOP_LAYER_AND_OUTPUT, &params, buffers, invocations)
    }
}

/// The family's kernels, each at its `KernelId::index`.
pub(super) const KERNELS: &[KernelInfo] = &[
    OUTPUT_CROSS_ENTROPY.info,
    OUTPUT_CROSS_ENTROPY_VEC4.info,
    TOP_LAYER_AND_OUTPUT.info,
];
