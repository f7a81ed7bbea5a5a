//! Clipping and the optimizer updates (SGD, momentum, Adam, AdamW), alone or fused with the
//! parallel half of the gradient norm.

#[allow(
    unused_imports,
    reason = "each family takes what it needs of the shared kernel definitions"
)]
use super::*;
use crate::ops::{check, GpuOps, Recorder};
use crate::GpuError;
use gradlab_sim::optim::OptimizerSpec;

/// This family's place in [`FAMILIES`].
const FAMILY: usize = 5;

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
    /// Gradient clipping by the norm held in a scalar slot (clip.wgsl).
    pub struct ClipParams {
        pub len: u32,
        pub slot: u32,
        pub max_norm: f32,
        pub factor_slot: u32,
    }
}

kernel_params! {
    /// One optimizer step over `len` parameters from `offset` (optimizer.wgsl).
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
        /// The first parameter updated (`len` from there): a range whose settings differ from
        /// the rest's (the tiny GPT's AdamW decays only its matrices).
        pub offset: u32,
        pub pad0: u32,
    }
}

impl OptimizerParams {
    /// The settings of `spec`'s `step`-th update (counted from 1: Adam's bias corrections
    /// depend on it) of `len` parameters.
    pub fn for_step(spec: &OptimizerSpec, step: u32, learning_rate: f64, len: usize) -> Self {
        let (kind, weight_decay, beta1, beta2, eps, momentum) = match *spec {
            OptimizerSpec::Sgd { weight_decay } => (OptimizerKind::Sgd, weight_decay, 0.0, 0.0, 0.0, 0.0),
            OptimizerSpec::Momentum { momentum, weight_decay } => {
                (OptimizerKind::Momentum, weight_decay, 0.0, 0.0, 0.0, momentum)
            }
            OptimizerSpec::Adam {
                beta1,
                beta2,
                eps,
                weight_decay,
            } => (OptimizerKind::Adam, weight_decay, beta1, beta2, eps, 0.0),
            OptimizerSpec::AdamW {
                beta1,
                beta2,
                eps,
                weight_decay,
            } => (OptimizerKind::AdamW, weight_decay, beta1, beta2, eps, 0.0),
        };
        let correction = |beta: f64| (1.0 - libm::pow(beta, f64::from(step))) as f32;
        Self {
            len: len as u32,
            kind: kind as u32,
            learning_rate: learning_rate as f32,
            weight_decay: weight_decay as f32,
            beta1: beta1 as f32,
            beta2: beta2 as f32,
            eps: eps as f32,
            momentum: momentum as f32,
            correction1: correction(beta1),
            correction2: correction(beta2),
            offset: 0,
            pad0: 0,
        }
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

pub const CLIP: Kernel<ClipParams, 2> = Kernel::new(
    KernelId::new(FAMILY, 0),
    "clip",
    include_str!("clip.wgsl"),
    64,
    &[RW, RW],
);

pub const OPTIMIZER: Kernel<OptimizerParams, 4> = Kernel::new(
    KernelId::new(FAMILY, 1),
    "optimizer",
    concat!(
        include_str!("shared/optimizer_update.wgsl"),
        include_str!("optimizer.wgsl")
    ),
    64,
    &[R, RW, RW, RW],
);

pub const GRADIENT_NORM_AND_OPTIMIZER: Kernel<GradientNormAndOptimizerParams, 6> = Kernel::new(
    KernelId::new(FAMILY, 2),
    "gradient_norm_and_optimizer",
    concat!(
        include_str!("shared/reduce_terms.wgsl"),
        include_str!("shared/optimizer_update.wgsl"),
        include_str!("gradient_norm_and_optimizer.wgsl")
    ),
    64,
    &[R, R, RW, RW, RW, RW],
);

impl GpuOps {
    /// Scales `grads` (`params.len` values) by `max_norm / (norm + 1e-6)` where that is below
    /// 1, the squared norm read from `scalars[params.slot]`; adds the factor applied to
    /// `scalars[params.factor_slot]`. (The MLP engine records its own.)
    pub fn clip(
        &self,
        recorder: &mut Recorder,
        params: ClipParams,
        scalars: &wgpu::Buffer,
        grads: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        check(
            scalars,
            u64::from(params.slot.max(params.factor_slot)) + 1,
            "scalar slots",
        )?;
        check(grads, u64::from(params.len), "gradients")?;
        self.run(recorder, &CLIP, &params, [scalars, grads], params.len)
    }

    /// One optimizer update of the `params.len` parameters from `params.offset`.
    pub fn optimizer_update(
        &self,
        recorder: &mut Recorder,
        params: OptimizerParams,
        grads: &wgpu::Buffer,
        values: &wgpu::Buffer,
        first_moment: &wgpu::Buffer,
        second_moment: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let end = u64::from(params.offset) + u64::from(params.len);
        for (buffer, what) in [
            (grads, "gradients"),
            (values, "parameters"),
            (first_moment, "first moments"),
            (second_moment, "second moments"),
        ] {
            check(buffer, end, what)?;
        }
        let buffers = [grads, values, first_moment, second_moment];
        self.run(recorder, &OPTIMIZER, &params, buffers, params.len)
    }
}

/// The family's kernels, each at its `KernelId::index`.
pub(super) const KERNELS: &[KernelInfo] = &[CLIP.info, OPTIMIZER.info, GRADIENT_NORM_AND_OPTIMIZER.info];
