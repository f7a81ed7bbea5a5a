//! Causal self-attention of the tiny GPT (every example of a micro-batch, every head): the
//! forward, keeping the probabilities, and the backward in two halves (queries, then keys and
//! values); parameters, checks and dispatch methods, beside their `.wgsl` files. The rows are
//! the residual family's token rows.

#[allow(
    unused_imports,
    reason = "each family takes what it needs of the shared kernel definitions"
)]
use super::*;
use crate::ops::{check, GpuOps, Recorder};
use crate::GpuError;

/// This family's place in [`FAMILIES`].
const FAMILY: usize = 7;

kernel_params! {
    /// The attention of `rows` token rows (attention_*.wgsl).
    pub struct AttentionParams {
        pub rows: u32,
        /// The embedding width `d`; `qkv` rows are `3 d` wide.
        pub width: u32,
        pub heads: u32,
        /// `d / heads`.
        pub head_size: u32,
        /// `1 / sqrt(head_size)`.
        pub scale: f32,
        /// Values of the probabilities of every example (`sum heads len^2`).
        pub probs_len: u32,
        pub pad0: u32,
        pub pad1: u32,
    }
}

impl AttentionParams {
    /// Attention over `rows` rows of width `width` in `heads` heads, whose examples' probabilities
    /// take `probs_len` values. The scale is the CPU reference's: `1 / sqrt(head size)` in f64,
    /// rounded once.
    pub fn new(rows: usize, width: usize, heads: usize, probs_len: usize) -> Result<Self, GpuError> {
        if heads == 0 || width == 0 || !width.is_multiple_of(heads) {
            return Err(GpuError::Shape(format!(
                "{width} features do not split into {heads} heads"
            )));
        }
        let head_size = width / heads;
        Ok(Self {
            rows: rows as u32,
            width: width as u32,
            heads: heads as u32,
            head_size: head_size as u32,
            scale: (1.0 / (head_size as f64).sqrt()) as f32,
            probs_len: probs_len as u32,
            pad0: 0,
            pad1: 0,
        })
    }

    fn check(&self, rows: &wgpu::Buffer, qkv: &wgpu::Buffer, probs: &wgpu::Buffer) -> Result<(), GpuError> {
        let n = u64::from(self.rows);
        check(rows, TOKEN_ROW_FIELDS as u64 * n, "token rows")?;
        check(qkv, 3 * n * u64::from(self.width), "queries, keys and values")?;
        check(probs, u64::from(self.probs_len), "attention probabilities")
    }

    fn values(&self) -> u64 {
        u64::from(self.rows) * u64::from(self.width)
    }
}

/// Prepends what the attention kernels share (the row and head an invocation owns).
macro_rules! attention_kernel {
    ($file:literal) => {
        concat!(include_str!("shared/attention_row.wgsl"), include_str!($file))
    };
}

pub const ATTENTION_FORWARD: Kernel<AttentionParams, 4> = Kernel::new(
    KernelId::new(FAMILY, 0),
    "attention_forward",
    attention_kernel!("attention_forward.wgsl"),
    64,
    &[R, R, RW, RW],
);

pub const ATTENTION_BACKWARD_QUERIES: Kernel<AttentionParams, 6> = Kernel::new(
    KernelId::new(FAMILY, 1),
    "attention_backward_queries",
    attention_kernel!("attention_backward_queries.wgsl"),
    64,
    &[R, R, R, R, RW, RW],
);

pub const ATTENTION_BACKWARD_KEYS_VALUES: Kernel<AttentionParams, 6> = Kernel::new(
    KernelId::new(FAMILY, 2),
    "attention_backward_keys_values",
    attention_kernel!("attention_backward_keys_values.wgsl"),
    64,
    &[R, R, R, R, R, RW],
);

impl GpuOps {
    /// The probabilities (`probs`) and the heads' outputs side by side (`y`, `[rows, d]`) from
    /// `qkv` (`[rows, 3 d]`).
    pub fn attention_forward(
        &self,
        recorder: &mut Recorder,
        params: AttentionParams,
        rows: &wgpu::Buffer,
        qkv: &wgpu::Buffer,
        probs: &wgpu::Buffer,
        y: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        params.check(rows, qkv, probs)?;
        check(y, params.values(), "attention output")?;
        let invocations = params.rows * params.heads;
        self.run(
            recorder,
            &ATTENTION_FORWARD,
            &params,
            [rows, qkv, probs, y],
            invocations,
        )
    }

    /// `dqkv` (`[rows, 3 d]`) from `dy` (`[rows, d]`); `dscores` (the probabilities' size) holds
    /// the scores' gradient between the two halves.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernels")]
    pub fn attention_backward(
        &self,
        recorder: &mut Recorder,
        params: AttentionParams,
        rows: &wgpu::Buffer,
        qkv: &wgpu::Buffer,
        probs: &wgpu::Buffer,
        dy: &wgpu::Buffer,
        dscores: &wgpu::Buffer,
        dqkv: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        params.check(rows, qkv, probs)?;
        check(dy, params.values(), "attention output gradient")?;
        check(dscores, u64::from(params.probs_len), "attention scores gradient")?;
        check(dqkv, 3 * params.values(), "queries, keys and values gradient")?;
        let invocations = params.rows * params.heads;
        let buffers = [rows, qkv, probs, dy, dscores, dqkv];
        self.run(recorder, &ATTENTION_BACKWARD_QUERIES, &params, buffers, invocations)?;
        self.run(recorder, &ATTENTION_BACKWARD_KEYS_VALUES, &params, buffers, invocations)
    }
}

/// The family's kernels, each at its `KernelId::index`.
pub(super) const KERNELS: &[KernelInfo] = &[
    ATTENTION_FORWARD.info,
    ATTENTION_BACKWARD_QUERIES.info,
    ATTENTION_BACKWARD_KEYS_VALUES.info,
];
