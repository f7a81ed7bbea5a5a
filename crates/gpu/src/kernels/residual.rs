//! The tiny GPT's residual stream: its start (each row's token and position embeddings added),
//! what each block's branches add onto it, and the embeddings' gradients at its start; their
//! parameters, checks and dispatch methods, beside their `.wgsl` files.
//!
//! The micro-batch's rows are a `rows` buffer of four u32 per row ([`TokenRowField`]), written
//! by `gpt::rows`, read by this family and by attention's.

#[allow(
    unused_imports,
    reason = "each family takes what it needs of the shared kernel definitions"
)]
use super::*;
use crate::ops::{check, GpuOps, Recorder};
use crate::GpuError;

/// This family's place in [`FAMILIES`].
const FAMILY: usize = 6;

/// Where each of a token row's four u32 lies (generated into the kernels as `ROW_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum TokenRowField {
    /// The input token's id.
    Token = 0,
    /// Its position in its example (0 for the example's first row).
    Position = 1,
    /// The example's number of input positions.
    Length = 2,
    /// Where the example's attention probabilities (`[heads, len, len]`) start.
    Probs = 3,
}

/// u32 values per token row.
pub const TOKEN_ROW_FIELDS: usize = 4;

kernel_params! {
    /// The residual stream of `rows` rows of `width` values, and the embeddings that start it
    /// (residual_embed.wgsl, residual_add.wgsl, residual_embed_backward.wgsl; each reads the
    /// fields it needs).
    pub struct ResidualParams {
        pub rows: u32,
        pub width: u32,
        /// Offsets of `wte` (`[vocab, width]`) and `wpe` (`[context, width]`) in the parameter
        /// (and gradient) buffer.
        pub wte_offset: u32,
        pub wpe_offset: u32,
        pub vocab: u32,
        pub context: u32,
        pub pad0: u32,
        pub pad1: u32,
    }
}

pub const RESIDUAL_EMBED: Kernel<ResidualParams, 3> = Kernel::new(
    KernelId::new(FAMILY, 0),
    "residual_embed",
    include_str!("residual_embed.wgsl"),
    64,
    &[R, R, RW],
);

pub const RESIDUAL_ADD: Kernel<ResidualParams, 2> = Kernel::new(
    KernelId::new(FAMILY, 1),
    "residual_add",
    include_str!("residual_add.wgsl"),
    64,
    &[R, RW],
);

pub const RESIDUAL_EMBED_BACKWARD: Kernel<ResidualParams, 3> = Kernel::new(
    KernelId::new(FAMILY, 2),
    "residual_embed_backward",
    include_str!("residual_embed_backward.wgsl"),
    64,
    &[R, R, RW],
);

impl ResidualParams {
    fn values(&self) -> u64 {
        u64::from(self.rows) * u64::from(self.width)
    }

    /// The embeddings fit `buffer` (parameters or gradients).
    fn check_embeddings(&self, buffer: &wgpu::Buffer, what: &'static str) -> Result<(), GpuError> {
        let width = u64::from(self.width);
        check(buffer, u64::from(self.wte_offset) + u64::from(self.vocab) * width, what)?;
        check(
            buffer,
            u64::from(self.wpe_offset) + u64::from(self.context) * width,
            what,
        )
    }

    /// The row table holds `rows` rows (their ids and positions are checked when it is
    /// written: `gpt::rows`).
    fn check_rows(&self, rows: &wgpu::Buffer) -> Result<(), GpuError> {
        check(rows, TOKEN_ROW_FIELDS as u64 * u64::from(self.rows), "token rows")
    }
}

impl GpuOps {
    /// `x[r] = wte[token r] + wpe[position r]`.
    pub fn residual_embed(
        &self,
        recorder: &mut Recorder,
        params: ResidualParams,
        rows: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        x: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        params.check_rows(rows)?;
        params.check_embeddings(parameters, "parameters (embeddings)")?;
        check(x, params.values(), "residual stream")?;
        let invocations = params.rows * params.width;
        self.run(recorder, &RESIDUAL_EMBED, &params, [rows, parameters, x], invocations)
    }

    /// `x += branch`, over `rows x width` values.
    pub fn residual_add(
        &self,
        recorder: &mut Recorder,
        params: ResidualParams,
        branch: &wgpu::Buffer,
        x: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        check(branch, params.values(), "residual branch")?;
        check(x, params.values(), "residual stream")?;
        let invocations = params.rows * params.width;
        self.run(recorder, &RESIDUAL_ADD, &params, [branch, x], invocations)
    }

    /// Adds each row's `dx` into its token's row of `wte` and its position's row of `wpe`.
    pub fn residual_embed_backward(
        &self,
        recorder: &mut Recorder,
        params: ResidualParams,
        rows: &wgpu::Buffer,
        dx: &wgpu::Buffer,
        grads: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        params.check_rows(rows)?;
        check(dx, params.values(), "residual stream gradient")?;
        params.check_embeddings(grads, "gradients (embeddings)")?;
        let invocations = (params.vocab + params.context) * params.width;
        self.run(
            recorder,
            &RESIDUAL_EMBED_BACKWARD,
            &params,
            [rows, dx, grads],
            invocations,
        )
    }
}

/// The family's kernels, each at its `KernelId::index`.
pub(super) const KERNELS: &[KernelInfo] = &[RESIDUAL_EMBED.info, RESIDUAL_ADD.info, RESIDUAL_EMBED_BACKWARD.info];
