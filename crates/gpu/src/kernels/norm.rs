//! BatchNorm, LayerNorm and GroupNorm: the training and evaluation forward (the activation
//! fused) and the backward; their parameters, how their statistic sets lie in memory, shape
//! checks and dispatch methods, beside their `.wgsl` files.

#[allow(
    unused_imports,
    reason = "each family takes what it needs of the shared kernel definitions"
)]
use super::*;
use crate::ops::{aligned, check, check_whole_vec4s, GpuOps, Recorder};
use crate::GpuError;
use gradlab_sim::model::Norm;
use gradlab_sim::reference::forward::NormGeometry;

/// This family's place in [`FAMILIES`].
const FAMILY: usize = 2;

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

impl NormParams {
    /// The statistic sets of a norm layer of `rows` x `width` and where its scale and shift are
    /// (no activation, no running statistics: the forward sets those).
    pub fn for_layer(norm: Norm, rows: usize, width: usize, scale: usize, shift: usize) -> Self {
        let g = NormGeometry::new(norm, rows, width);
        Self {
            sets: g.sets as u32,
            len: g.len as u32,
            set_stride: g.set_stride as u32,
            item_stride: g.item_stride as u32,
            width: width as u32,
            gamma_offset: scale as u32,
            beta_offset: shift as u32,
            eps: norm.eps() as f32,
            ..Self::default()
        }
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

impl NormParams {
    /// Whether set s is feature s of rows `width` apart (BatchNorm): the sets that have running
    /// statistics, and that the across-sets kernels take four at a time.
    pub fn one_set_per_feature(&self) -> bool {
        self.set_stride == 1 && self.sets == self.width && self.item_stride == self.width
    }
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

pub const NORM_FORWARD: Kernel<NormParams, 7> = Kernel::new(
    KernelId::new(FAMILY, 0),
    "norm_forward",
    norm_kernel!("norm_forward.wgsl", running_stats),
    16,
    &[R, R, RW, RW, RW, RW, RW],
);

pub const NORM_FORWARD_ACROSS_SETS: Kernel<NormParams, 7> = Kernel::new(
    KernelId::new(FAMILY, 1),
    "norm_forward_across_sets",
    norm_kernel!("norm_forward_across_sets.wgsl", running_stats),
    4,
    &[R, R, RW, RW, RW, RW, RW],
);

pub const NORM_FORWARD_WITHIN_SETS: Kernel<NormParams, 6> = Kernel::new(
    KernelId::new(FAMILY, 2),
    "norm_forward_within_sets",
    norm_kernel!("norm_forward_within_sets.wgsl"),
    16,
    &[R, R, RW, RW, RW, RW],
);

pub const NORM_BACKWARD_ACROSS_SETS: Kernel<NormParams, 6> = Kernel::new(
    KernelId::new(FAMILY, 3),
    "norm_backward_across_sets",
    norm_kernel!("norm_backward_across_sets.wgsl"),
    4,
    &[R, R, R, R, RW, RW],
);

pub const NORM_BACKWARD_INPUT: Kernel<NormParams, 5> = Kernel::new(
    KernelId::new(FAMILY, 4),
    "norm_backward_input",
    norm_kernel!("norm_backward_input.wgsl"),
    16,
    &[R, R, R, R, RW],
);

pub const NORM_BACKWARD_WITHIN_SETS: Kernel<NormParams, 6> = Kernel::new(
    KernelId::new(FAMILY, 5),
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
    KernelId::new(FAMILY, 6),
    "norm_backward_params",
    include_str!("norm_backward_params.wgsl"),
    16,
    &[R, R, RW],
);

pub const NORM_BACKWARD_PARAMS_ACROSS_FEATURES: Kernel<NormGradientParams, 3> = Kernel::new(
    KernelId::new(FAMILY, 7),
    "norm_backward_params_across_features",
    concat!(
        include_str!("shared/norm_parameter_gradient_quad.wgsl"),
        include_str!("norm_backward_params_across_features.wgsl")
    ),
    4,
    &[R, R, RW],
);

pub const BATCH_NORM_EVAL: Kernel<BatchNormEvalParams, 4> = Kernel::new(
    KernelId::new(FAMILY, 8),
    "batch_norm_eval",
    with_activations!("batch_norm_eval.wgsl"),
    64,
    &[R, R, R, RW],
);

/// How a norm layer's statistic sets lie in memory, which picks the kernels that normalize them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormLayout {
    /// Set s is value s of each item, items a multiple of 4 apart (BatchNorm of a layer whose
    /// width is a multiple of 4): four sets per invocation as the lanes of a vec4.
    AcrossSets,
    /// Each set is contiguous and a multiple of 4 long (LayerNorm, GroupNorm): one set per
    /// invocation, four items at a time.
    WithinSets,
    /// Any other shape: one set per invocation, one value at a time.
    Scalar,
}

impl NormLayout {
    pub fn of(params: &NormParams) -> Self {
        let p = params;
        // What the vec4 kernels assume beyond alignment: across sets, set s is feature s; within
        // sets, no set crosses a row.
        if p.one_set_per_feature() && aligned(&[p.sets]) {
            NormLayout::AcrossSets
        } else if p.item_stride == 1
            && p.len > 0
            && p.set_stride == p.len
            && p.width.is_multiple_of(p.len)
            && aligned(&[p.len])
        {
            NormLayout::WithinSets
        } else {
            NormLayout::Scalar
        }
    }
}

impl GpuOps {
    /// A training-mode norm layer over `z`: statistics into `stats` ([means, variances, 1/std]),
    /// the normalized values into `xhat`, scaled and shifted into `out`, and activated into `a`;
    /// with `params.update_running`, BatchNorm's running statistics in `running` too.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn norm_forward(
        &self,
        recorder: &mut Recorder,
        params: NormParams,
        z: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        xhat: &wgpu::Buffer,
        out: &wgpu::Buffer,
        stats: &wgpu::Buffer,
        a: &wgpu::Buffer,
        running: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        let values = u64::from(p.sets) * u64::from(p.len);
        for (buffer, what) in [
            (z, "norm input"),
            (xhat, "normalized"),
            (out, "norm output"),
            (a, "activation"),
        ] {
            check(buffer, values, what)?;
        }
        check(stats, 3 * u64::from(p.sets), "norm statistics")?;
        check(
            parameters,
            u64::from(p.gamma_offset.max(p.beta_offset)) + u64::from(p.width),
            "parameters (norm)",
        )?;
        if p.update_running != 0 {
            // The kernels update running statistics per set: only a set that is a feature has them.
            if !p.one_set_per_feature() {
                return Err(GpuError::Shape(
                    "only BatchNorm-shaped sets (one per feature) have running statistics".into(),
                ));
            }
            check(
                running,
                u64::from(p.running_offset) + 2 * u64::from(p.width),
                "running statistics",
            )?;
        }
        let buffers = [z, parameters, xhat, out, stats, a, running];
        match NormLayout::of(&p) {
            NormLayout::AcrossSets => {
                check_whole_vec4s(&[z, xhat, out, a])?;
                self.run(recorder, &NORM_FORWARD_ACROSS_SETS, &p, buffers, p.sets / 4)
            }
            NormLayout::WithinSets => {
                check_whole_vec4s(&[z, xhat, out, a])?;
                // LayerNorm and GroupNorm sets: no running statistics, not bound.
                self.run(
                    recorder,
                    &NORM_FORWARD_WITHIN_SETS,
                    &p,
                    [z, parameters, xhat, out, stats, a],
                    p.sets,
                )
            }
            NormLayout::Scalar => self.run(recorder, &NORM_FORWARD, &p, buffers, p.sets),
        }
    }

    /// The backward of a training-mode norm layer: adds its scale and shift gradients into
    /// `grads` (each feature's rows in order) and writes the gradient at its input `dz` from the
    /// gradient at its output `dout`. BatchNorm-shaped sets take one dispatch for both (the
    /// invocation that owns a feature's set owns its parameter gradients), LayerNorm- and
    /// GroupNorm-shaped ones one too (some invocations for the parameter gradients, the others
    /// for the sets); the scalar shapes two.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn norm_backward(
        &self,
        recorder: &mut Recorder,
        params: NormParams,
        dout: &wgpu::Buffer,
        xhat: &wgpu::Buffer,
        stats: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        grads: &wgpu::Buffer,
        dz: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        let values = u64::from(p.sets) * u64::from(p.len);
        for (buffer, what) in [
            (dout, "norm output gradient"),
            (xhat, "normalized"),
            (dz, "norm input gradient"),
        ] {
            check(buffer, values, what)?;
        }
        check(stats, 3 * u64::from(p.sets), "norm statistics")?;
        check(
            parameters,
            u64::from(p.gamma_offset) + u64::from(p.width),
            "parameters (norm scale)",
        )?;
        check(
            grads,
            u64::from(p.gamma_offset.max(p.beta_offset)) + u64::from(p.width),
            "gradients (norm)",
        )?;
        let layout = NormLayout::of(&p);
        if layout == NormLayout::AcrossSets {
            check_whole_vec4s(&[dout, xhat, dz])?;
            let buffers = [dout, xhat, stats, parameters, grads, dz];
            return self.run(recorder, &NORM_BACKWARD_ACROSS_SETS, &p, buffers, p.sets / 4);
        }
        if p.width == 0 || !values.is_multiple_of(u64::from(p.width)) {
            return Err(GpuError::Shape(format!(
                "{values} values are not whole rows of a norm layer {} wide",
                p.width
            )));
        }
        if layout == NormLayout::WithinSets {
            // Sets within rows, whole vec4s long: the width is whole vec4s too.
            check_whole_vec4s(&[dout, xhat, dz])?;
            let buffers = [dout, xhat, stats, parameters, grads, dz];
            let kernel = &NORM_BACKWARD_WITHIN_SETS;
            return self.run(recorder, kernel, &p, buffers, p.width / 4 + p.sets);
        }
        let gradient_params = NormGradientParams {
            rows: (values / u64::from(p.width)) as u32,
            width: p.width,
            gamma_offset: p.gamma_offset,
            beta_offset: p.beta_offset,
        };
        let buffers = [dout, xhat, grads];
        if aligned(&[p.width]) {
            check_whole_vec4s(&[dout, xhat])?;
            let kernel = &NORM_BACKWARD_PARAMS_ACROSS_FEATURES;
            self.run(recorder, kernel, &gradient_params, buffers, p.width / 4)?;
        } else {
            self.run(recorder, &NORM_BACKWARD_PARAMS, &gradient_params, buffers, p.width)?;
        }
        self.run(
            recorder,
            &NORM_BACKWARD_INPUT,
            &p,
            [dout, xhat, stats, parameters, dz],
            p.sets,
        )
    }
}

/// The family's kernels, each at its `KernelId::index`.
pub(super) const KERNELS: &[KernelInfo] = &[
    NORM_FORWARD.info,
    NORM_FORWARD_ACROSS_SETS.info,
    NORM_FORWARD_WITHIN_SETS.info,
    NORM_BACKWARD_ACROSS_SETS.info,
    NORM_BACKWARD_INPUT.info,
    NORM_BACKWARD_WITHIN_SETS.info,
    NORM_BACKWARD_PARAMS.info,
    NORM_BACKWARD_PARAMS_ACROSS_FEATURES.info,
    BATCH_NORM_EVAL.info,
];

#[cfg(test)]
mod tests {
    use super::{NormLayout, NormParams};
    use gradlab_sim::model::Norm;

    #[test]
    fn norm_layers_take_vec4_kernels_where_their_sets_are_aligned() {
        use NormLayout::{AcrossSets, Scalar, WithinSets};
        for (norm, width, expected) in [
            (Norm::batch_norm(), 64, AcrossSets),
            (Norm::batch_norm(), 12, AcrossSets),
            (Norm::batch_norm(), 6, Scalar),
            (Norm::layer_norm(), 64, WithinSets),
            (Norm::layer_norm(), 10, Scalar),
            (Norm::group_norm(8), 64, WithinSets),
            (Norm::group_norm(16), 64, WithinSets),
            (Norm::group_norm(2), 12, Scalar),
            (Norm::group_norm(64), 64, Scalar),
        ] {
            for rows in [1, 7, 64] {
                let params = NormParams::for_layer(norm, rows, width, 0, width);
                assert_eq!(NormLayout::of(&params), expected, "{norm:?}, {rows} x {width}");
            }
        }
    }
}
