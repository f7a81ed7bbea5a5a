//! Every WGSL kernel of the GPU engine, embedded from the `.wgsl` files beside this module, each
//! with the typed parameter struct of its uniform.
//!
//! A kernel is a [`Kernel<P>`]: its dispatches take a `P` and nothing else. One source of truth:
//! the WGSL declaration of `P`, its binding (`args` at `@binding(0)`) and the mode codes
//! ([`MODE_CONSTANTS`], from the enums here) are generated and prepended to the kernel's source
//! by [`KernelInfo::wgsl`]; the `.wgsl` files use them and declare neither. The naga test
//! (tests/shaders.rs) checks `P`'s size, field names, types and offsets against naga's layout of
//! the generated struct, and that no `.wgsl` writes a uniform or a mode code by hand.
//!
//! Adding a kernel: its `.wgsl` file (storage bindings from 1, no uniform), its parameter struct
//! and its constant here (its index in [`ALL`], name, source, workgroup size and storage
//! accesses, which the naga test checks against the shader), and its entry in [`ALL`] (the test
//! fails until a `.wgsl` file is listed there).

use std::marker::PhantomData;

use crate::sim::model::Activation;

/// A kernel's uniform parameters: plain old data whose layout the naga test compares with WGSL.
pub trait KernelParams: bytemuck::Pod + std::fmt::Debug {
    /// The struct's name, which its generated WGSL declaration takes.
    const NAME: &'static str;
    /// (field name, byte offset, Rust type name) in declaration order.
    const FIELDS: &'static [(&'static str, usize, &'static str)];
}

/// Declares a `#[repr(C)]` parameter struct and records its fields for the layout test.
macro_rules! kernel_params {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$field_meta:meta])* pub $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty),*
        }

        impl KernelParams for $name {
            const NAME: &'static str = stringify!($name);
            const FIELDS: &'static [(&'static str, usize, &'static str)] =
                &[$((stringify!($field), std::mem::offset_of!($name, $field), stringify!($ty))),*];
        }
    };
}

/// What the pipeline builder and the validation test need of a kernel, whatever its parameters.
#[derive(Debug, Clone, Copy)]
pub struct KernelInfo {
    /// Its position in [`ALL`].
    pub index: usize,
    pub name: &'static str,
    pub source: &'static str,
    pub entry_point: &'static str,
    pub params_name: &'static str,
    pub params_size: usize,
    pub params_fields: &'static [(&'static str, usize, &'static str)],
    /// Invocations per workgroup (`@workgroup_size`).
    pub workgroup_size: u32,
    /// Its storage buffers, bindings 1, 2, ..., in order.
    pub storage: &'static [Access],
}

/// The mode codes the kernels compare with, as WGSL constants: generated into every kernel
/// from the Rust enums, so that no `.wgsl` writes a code as a literal (tests/shaders.rs checks).
pub const MODE_CONSTANTS: [(&str, u32); 12] = [
    ("ACTIVATION_IDENTITY", ActivationCode::Identity as u32),
    ("ACTIVATION_RELU", ActivationCode::Relu as u32),
    ("ACTIVATION_TANH", ActivationCode::Tanh as u32),
    ("ACTIVATION_GELU", ActivationCode::Gelu as u32),
    ("REDUCE_SUM_OF_SQUARES", ReduceMode::SumOfSquares as u32),
    ("REDUCE_COMPARISON", ReduceMode::Comparison as u32),
    ("REDUCE_PAIR_SUMS", ReduceMode::PairSums as u32),
    ("REDUCE_IN_ORDER_SUM", ReduceMode::InOrderSum as u32),
    ("OPTIMIZER_SGD", OptimizerKind::Sgd as u32),
    ("OPTIMIZER_MOMENTUM", OptimizerKind::Momentum as u32),
    ("OPTIMIZER_ADAM", OptimizerKind::Adam as u32),
    ("OPTIMIZER_ADAMW", OptimizerKind::AdamW as u32),
];

impl KernelInfo {
    /// The kernel's WGSL as the device compiles it: the mode constants, the uniform struct and
    /// its binding (`args`, at `@binding(0)`), generated from the Rust definitions, then the
    /// kernel's own source, which declares neither.
    pub fn wgsl(&self) -> String {
        let mut out = String::from("// Generated from gpu/kernels/mod.rs.\n");
        for (name, code) in MODE_CONSTANTS {
            out.push_str(&format!("const {name}: u32 = {code}u;\n"));
        }
        out.push_str(&format!("struct {} {{\n", self.params_name));
        for (field, _, ty) in self.params_fields {
            out.push_str(&format!("    {field}: {ty},\n"));
        }
        out.push_str(&format!(
            "}}\n@group(0) @binding(0) var<uniform> args: {};\n",
            self.params_name
        ));
        out.push_str(self.source);
        out
    }
}

/// A compute shader whose dispatches take parameters of type `P`.
/// A compute shader whose dispatches take parameters of type `P` and `N` storage buffers (at
/// bindings 1 to N): a typed handle, found by its index in [`ALL`], never by its name.
#[derive(Debug)]
pub struct Kernel<P, const N: usize> {
    pub info: KernelInfo,
    params: PhantomData<fn(P)>,
}

/// Dispatch constants live in 256-byte uniform slots (WebGPU's minimum offset alignment).
pub const MAX_PARAMS_BYTES: usize = 256;

impl<P: KernelParams, const N: usize> Kernel<P, N> {
    /// Kernel `index` of [`ALL`], running `workgroup_size` invocations per workgroup, binding its
    /// storage buffers as `storage` says (both checked against the WGSL by tests/shaders.rs).
    const fn new(
        index: usize,
        name: &'static str,
        source: &'static str,
        workgroup_size: u32,
        storage: &'static [Access; N],
    ) -> Self {
        assert!(size_of::<P>() <= MAX_PARAMS_BYTES);
        Self {
            info: KernelInfo {
                index,
                name,
                source,
                entry_point: "main",
                params_name: P::NAME,
                params_size: size_of::<P>(),
                params_fields: P::FIELDS,
                workgroup_size,
                storage,
            },
            params: PhantomData,
        }
    }
}

/// How a kernel binds a storage buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    ReadWrite,
}

use Access::{Read as R, ReadWrite as RW};

/// Activation codes of the WGSL kernels (kernels/shared/activation.wgsl).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ActivationCode {
    Identity = 0,
    Relu = 1,
    Tanh = 2,
    Gelu = 3,
}

impl ActivationCode {
    /// The activation a kernel parameter names, if any.
    pub fn from_code(code: u32) -> Option<Self> {
        [Self::Identity, Self::Relu, Self::Tanh, Self::Gelu]
            .into_iter()
            .find(|kind| *kind as u32 == code)
    }

    /// Whether f'(u) follows from f(u) alone, bit for bit as from u (identity, ReLU: a > 0
    /// exactly where u > 0; tanh: 1 - a^2 is what the derivative computes from tanh(u)), so that
    /// a kernel holding only the activations can apply the derivative. GELU's cannot.
    pub fn derivative_from_output(self) -> bool {
        !matches!(self, Self::Gelu)
    }
}

impl From<Activation> for ActivationCode {
    fn from(kind: Activation) -> Self {
        match kind {
            Activation::Relu => Self::Relu,
            Activation::Tanh => Self::Tanh,
            Activation::Gelu => Self::Gelu,
        }
    }
}

/// What a reduction sums (reduce_partials.wgsl, then reduce_serial.wgsl).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ReduceMode {
    /// `sum a^2` into `slot`.
    SumOfSquares = 1,
    /// `sum a^2, sum a b, sum b^2, sum (a - b)^2` into `slot .. slot + 4` (a gradient against
    /// its reference in one pass).
    Comparison = 2,
    /// `sum a, sum b` into `slot, slot + 1` (test loss and correct predictions in one pass).
    PairSums = 3,
    /// `sum a` into `slot`, element by element in order from `offset` (the training loss, so
    /// that micro-batches add in the full batch's sequence).
    InOrderSum = 4,
}

impl ReduceMode {
    /// Scalar slots the mode writes.
    pub fn slots(self) -> u32 {
        match self {
            Self::SumOfSquares | Self::InOrderSum => 1,
            Self::Comparison => 4,
            Self::PairSums => 2,
        }
    }

    /// Whether the sum is serial from the start (no parallel partials first).
    pub fn is_serial(self) -> bool {
        self == Self::InOrderSum
    }
}

/// Invocations of reduce_partials.wgsl: the partial sums reduce_serial.wgsl adds in a tree.
pub const REDUCE_PARTIALS_COUNT: usize = 256;

/// The optimizers of optimizer.wgsl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum OptimizerKind {
    Sgd = 0,
    Momentum = 1,
    Adam = 2,
    AdamW = 3,
}

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

kernel_params! {
    /// The statistic sets of a norm layer (norm_forward*.wgsl, norm_backward_input*.wgsl,
    /// norm_backward_across_sets.wgsl; declared in shared/norm.wgsl).
    pub struct NormParams {
        pub sets: u32,
        pub len: u32,
        pub set_stride: u32,
        pub item_stride: u32,
        pub width: u32,
        pub gamma_offset: u32,
        pub beta_offset: u32,
        pub eps: f32,
        /// The [`ActivationCode`] the forward kernels apply after the norm (unused backward).
        pub activation: u32,
        /// Where BatchNorm's running means start in the running-statistics buffer (the
        /// variances follow them, `width` later).
        pub running_offset: u32,
        pub momentum: f32,
        /// Nonzero to update the running statistics (training forwards of BatchNorm-shaped sets).
        pub update_running: u32,
    }
}

kernel_params! {
    /// Scale and shift gradients of a norm layer (norm_backward_params.wgsl).
    pub struct NormGradientParams {
        pub rows: u32,
        pub width: u32,
        pub gamma_offset: u32,
        pub beta_offset: u32,
    }
}

kernel_params! {
    /// BatchNorm in evaluation mode, from the running statistics, and the activation after it
    /// (batch_norm_eval.wgsl).
    pub struct BatchNormEvalParams {
        pub len: u32,
        pub width: u32,
        pub gamma_offset: u32,
        pub beta_offset: u32,
        pub running_offset: u32,
        pub eps: f32,
        /// The [`ActivationCode`] applied after the norm.
        pub activation: u32,
        pub pad0: u32,
    }
}

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

kernel_params! {
    /// A reduction into scalar slots (reduce_partials.wgsl and reduce_serial.wgsl).
    pub struct ReduceParams {
        pub len: u32,
        /// A [`ReduceMode`].
        pub mode: u32,
        pub slot: u32,
        /// 1 to add to the slot instead of replacing it.
        pub accumulate: u32,
        /// The first element an in-order sum reads.
        pub offset: u32,
        /// Rows of a step's loss that a tree reduction's serial half also adds, in order, from
        /// `loss_offset` of the buffer it then reads, into `loss_slot` (0: none).
        pub loss_rows: u32,
        pub loss_offset: u32,
        pub loss_slot: u32,
    }
}

kernel_params! {
    /// Gradient clipping by the norm held in a scalar slot (clip.wgsl).
    pub struct ClipParams {
        pub len: u32,
        pub slot: u32,
        pub max_norm: f32,
        pub factor_slot: u32,
    }
}

kernel_params! {
    /// One optimizer step over every parameter (optimizer.wgsl).
    pub struct OptimizerParams {
        pub len: u32,
        /// An [`OptimizerKind`].
        pub kind: u32,
        pub learning_rate: f32,
        pub weight_decay: f32,
        pub beta1: f32,
        pub beta2: f32,
        pub eps: f32,
        pub momentum: f32,
        pub correction1: f32,
        pub correction2: f32,
        pub pad0: u32,
        pub pad1: u32,
    }
}

kernel_params! {
    /// The parallel half of the gradient's reduction and the optimizer step in one pass
    /// (gradient_norm_and_optimizer.wgsl): [`ReduceParams`]'s `len` and `mode` (a tree mode),
    /// then [`OptimizerParams`]'s settings.
    pub struct GradientNormAndOptimizerParams {
        pub len: u32,
        /// A [`ReduceMode`] of the tree ([`ReduceMode::SumOfSquares`] or [`ReduceMode::Comparison`]).
        pub mode: u32,
        /// An [`OptimizerKind`].
        pub kind: u32,
        pub learning_rate: f32,
        pub weight_decay: f32,
        pub beta1: f32,
        pub beta2: f32,
        pub eps: f32,
        pub momentum: f32,
        pub correction1: f32,
        pub correction2: f32,
        pub pad0: u32,
    }
}

impl GradientNormAndOptimizerParams {
    /// The reduction of `len` elements as `mode` says, with `optimizer`'s update of each.
    pub fn new(len: usize, mode: ReduceMode, optimizer: &OptimizerParams) -> Self {
        let o = optimizer;
        Self {
            len: len as u32,
            mode: mode as u32,
            kind: o.kind,
            learning_rate: o.learning_rate,
            weight_decay: o.weight_decay,
            beta1: o.beta1,
            beta2: o.beta2,
            eps: o.eps,
            momentum: o.momentum,
            correction1: o.correction1,
            correction2: o.correction2,
            pad0: 0,
        }
    }
}

impl NormParams {
    /// Whether set s is feature s of rows `width` apart (BatchNorm): the sets that have running
    /// statistics, and that the across-sets kernels take four at a time.
    pub fn one_set_per_feature(&self) -> bool {
        self.set_stride == 1 && self.sets == self.width && self.item_stride == self.width
    }
}

impl ReduceParams {
    pub fn new(len: usize, mode: ReduceMode, slot: u32, accumulate: bool) -> Self {
        Self {
            len: len as u32,
            mode: mode as u32,
            slot,
            accumulate: u32::from(accumulate),
            ..Self::default()
        }
    }
}

/// Prepends the shared activation functions to a kernel's source.
macro_rules! with_activations {
    ($file:literal) => {
        concat!(include_str!("shared/activation.wgsl"), include_str!($file))
    };
}

/// Prepends the activations and what the norm kernels share (their parameters, vec4 helpers).
macro_rules! norm_kernel {
    ($file:literal) => {
        concat!(
            include_str!("shared/activation.wgsl"),
            include_str!("shared/norm.wgsl"),
            include_str!($file)
        )
    };
    // A training forward that also updates BatchNorm's running statistics.
    ($file:literal, running_stats) => {
        concat!(
            include_str!("shared/activation.wgsl"),
            include_str!("shared/norm.wgsl"),
            include_str!("shared/running_stats.wgsl"),
            include_str!($file)
        )
    };
}

pub const LINEAR_FORWARD: Kernel<LinearForwardParams, 4> = Kernel::new(
    0,
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
    1,
    "linear_forward_scalar",
    with_activations!("linear_forward_scalar.wgsl"),
    64,
    &[R, R, RW, RW],
);
pub const LINEAR_FORWARD_VEC4_OUT: Kernel<LinearForwardParams, 4> = Kernel::new(
    2,
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
    3,
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
    4,
    "linear_parameter_gradient_scalar",
    include_str!("linear_parameter_gradient_scalar.wgsl"),
    16,
    &[R, R, RW],
);
pub const LINEAR_PARAMETER_GRADIENT_VEC4_OUT: Kernel<LinearBackwardParams, 3> = Kernel::new(
    5,
    "linear_parameter_gradient_vec4_out",
    concat!(
        include_str!("shared/linear_parameter_gradient_vec4_out_block.wgsl"),
        include_str!("linear_parameter_gradient_vec4_out.wgsl")
    ),
    8,
    &[R, R, RW],
);
pub const FIRST_AND_OUTPUT_PARAMETER_GRADIENTS: Kernel<FirstAndOutputParams, 5> = Kernel::new(
    6,
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
    7,
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
pub const LINEAR_INPUT_GRADIENT: Kernel<LinearBackwardParams, 4> = Kernel::new(
    8,
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
    10,
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
    9,
    "linear_input_gradient_scalar",
    with_activations!("linear_input_gradient_scalar.wgsl"),
    64,
    &[R, R, R, RW],
);
pub const NORM_FORWARD: Kernel<NormParams, 7> = Kernel::new(
    11,
    "norm_forward",
    norm_kernel!("norm_forward.wgsl", running_stats),
    16,
    &[R, R, RW, RW, RW, RW, RW],
);
pub const NORM_FORWARD_ACROSS_SETS: Kernel<NormParams, 7> = Kernel::new(
    12,
    "norm_forward_across_sets",
    norm_kernel!("norm_forward_across_sets.wgsl", running_stats),
    4,
    &[R, R, RW, RW, RW, RW, RW],
);
pub const NORM_FORWARD_WITHIN_SETS: Kernel<NormParams, 6> = Kernel::new(
    13,
    "norm_forward_within_sets",
    norm_kernel!("norm_forward_within_sets.wgsl"),
    16,
    &[R, R, RW, RW, RW, RW],
);
pub const NORM_BACKWARD_ACROSS_SETS: Kernel<NormParams, 6> = Kernel::new(
    14,
    "norm_backward_across_sets",
    norm_kernel!("norm_backward_across_sets.wgsl"),
    4,
    &[R, R, R, R, RW, RW],
);
pub const NORM_BACKWARD_INPUT: Kernel<NormParams, 5> = Kernel::new(
    15,
    "norm_backward_input",
    norm_kernel!("norm_backward_input.wgsl"),
    16,
    &[R, R, R, R, RW],
);
pub const NORM_BACKWARD_WITHIN_SETS: Kernel<NormParams, 6> = Kernel::new(
    16,
    "norm_backward_within_sets",
    concat!(
        include_str!("shared/activation.wgsl"),
        include_str!("shared/norm.wgsl"),
        include_str!("shared/norm_parameter_gradient_quad.wgsl"),
        include_str!("norm_backward_within_sets.wgsl")
    ),
    16,
    &[R, R, R, R, RW, RW],
);
pub const NORM_BACKWARD_PARAMS: Kernel<NormGradientParams, 3> = Kernel::new(
    17,
    "norm_backward_params",
    include_str!("norm_backward_params.wgsl"),
    16,
    &[R, R, RW],
);
pub const NORM_BACKWARD_PARAMS_ACROSS_FEATURES: Kernel<NormGradientParams, 3> = Kernel::new(
    18,
    "norm_backward_params_across_features",
    concat!(
        include_str!("shared/norm_parameter_gradient_quad.wgsl"),
        include_str!("norm_backward_params_across_features.wgsl")
    ),
    4,
    &[R, R, RW],
);
pub const BATCH_NORM_EVAL: Kernel<BatchNormEvalParams, 4> = Kernel::new(
    19,
    "batch_norm_eval",
    with_activations!("batch_norm_eval.wgsl"),
    64,
    &[R, R, R, RW],
);
pub const OUTPUT_CROSS_ENTROPY: Kernel<OutputParams, 8> = Kernel::new(
    20,
    "output_cross_entropy",
    with_activations!("output_cross_entropy.wgsl"),
    16,
    &[R, R, R, RW, RW, RW, RW, RW],
);
pub const OUTPUT_CROSS_ENTROPY_VEC4: Kernel<OutputParams, 8> = Kernel::new(
    21,
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
    22,
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
pub const REDUCE_PARTIALS: Kernel<ReduceParams, 3> = Kernel::new(
    23,
    "reduce_partials",
    concat!(
        include_str!("shared/reduce_terms.wgsl"),
        include_str!("reduce_partials.wgsl")
    ),
    64,
    &[R, R, RW],
);
pub const REDUCE_SERIAL: Kernel<ReduceParams, 3> =
    Kernel::new(24, "reduce_serial", include_str!("reduce_serial.wgsl"), 1, &[R, RW, RW]);
pub const CLIP: Kernel<ClipParams, 2> = Kernel::new(25, "clip", include_str!("clip.wgsl"), 64, &[RW, RW]);
pub const OPTIMIZER: Kernel<OptimizerParams, 4> = Kernel::new(
    26,
    "optimizer",
    concat!(
        include_str!("shared/optimizer_update.wgsl"),
        include_str!("optimizer.wgsl")
    ),
    64,
    &[R, RW, RW, RW],
);
pub const GRADIENT_NORM_AND_OPTIMIZER: Kernel<GradientNormAndOptimizerParams, 6> = Kernel::new(
    27,
    "gradient_norm_and_optimizer",
    concat!(
        include_str!("shared/reduce_terms.wgsl"),
        include_str!("shared/optimizer_update.wgsl"),
        include_str!("gradient_norm_and_optimizer.wgsl")
    ),
    64,
    &[R, R, RW, RW, RW, RW],
);

/// All kernels, for the validation test and for building pipelines.
pub const ALL: &[KernelInfo] = &[
    LINEAR_FORWARD.info,
    LINEAR_FORWARD_SCALAR.info,
    LINEAR_FORWARD_VEC4_OUT.info,
    LINEAR_PARAMETER_GRADIENT.info,
    LINEAR_PARAMETER_GRADIENT_SCALAR.info,
    LINEAR_PARAMETER_GRADIENT_VEC4_OUT.info,
    FIRST_AND_OUTPUT_PARAMETER_GRADIENTS.info,
    FIRST_AND_OUTPUT_GRADIENTS_AND_FORWARD.info,
    LINEAR_INPUT_GRADIENT.info,
    LINEAR_INPUT_GRADIENT_SCALAR.info,
    LINEAR_BACKWARD.info,
    NORM_FORWARD.info,
    NORM_FORWARD_ACROSS_SETS.info,
    NORM_FORWARD_WITHIN_SETS.info,
    NORM_BACKWARD_ACROSS_SETS.info,
    NORM_BACKWARD_INPUT.info,
    NORM_BACKWARD_WITHIN_SETS.info,
    NORM_BACKWARD_PARAMS.info,
    NORM_BACKWARD_PARAMS_ACROSS_FEATURES.info,
    BATCH_NORM_EVAL.info,
    OUTPUT_CROSS_ENTROPY.info,
    OUTPUT_CROSS_ENTROPY_VEC4.info,
    TOP_LAYER_AND_OUTPUT.info,
    REDUCE_PARTIALS.info,
    REDUCE_SERIAL.info,
    CLIP.info,
    OPTIMIZER.info,
    GRADIENT_NORM_AND_OPTIMIZER.info,
];
