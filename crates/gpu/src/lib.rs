//! The GPU engine layer: WGSL compute kernels dispatched through wgpu (WebGPU in the browser,
//! Vulkan natively, Mesa lavapipe in tests). Depends on `sim` only; knows nothing of the UI.
//!
//! `lab::GpuLab` drives side-by-side runs asynchronously (the browser Lab); `engine::GpuEngine`
//! is one run, and also implements `sim::backend::TrainingBackend` natively (tests, CLI).

pub mod context;
pub mod engine;
pub mod gpt;
pub mod kernels;
pub mod lab;
pub mod ops;
pub mod readback;
pub mod workload;

use thiserror::Error;

/// Errors of the GPU layer; the UI shows them and falls back to the CPU engine.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GpuError {
    #[error("no GPU adapter is available ({0})")]
    NoAdapter(String),
    #[error("the GPU device could not be created: {0}")]
    Device(String),
    #[error("the GPU reported a validation error: {0}")]
    Validation(String),
    #[error("the GPU ran out of memory: {0}")]
    OutOfMemory(String),
    #[error("the GPU device was lost: {0}")]
    DeviceLost(String),
    #[error("reading results back from the GPU failed: {0}")]
    Readback(String),
    /// A buffer smaller than a dispatch or a readback needs.
    #[error("the {what} buffer holds {bytes} bytes, {needed} are needed")]
    BufferTooSmall {
        what: &'static str,
        bytes: u64,
        needed: u64,
    },
    /// A dispatch with more workgroups than the device allows in one dimension.
    #[error("{kernel} needs {workgroups} workgroups, more than the {limit} a dispatch may have")]
    TooManyWorkgroups {
        kernel: &'static str,
        workgroups: u32,
        limit: u32,
    },
    /// More items than the engine's buffers were sized for.
    #[error("{items} items in a {what} do not fit the {capacity} the engine was sized for")]
    OverCapacity {
        what: &'static str,
        items: usize,
        capacity: usize,
    },
    /// Data that does not fit the model, as the simulation layer's checks found.
    #[error("the data does not fit the model: {0}")]
    Data(#[source] gradlab_sim::SimError),
    #[error("there is no run {0}")]
    NoRun(usize),
    /// A kernel whose id is not its place in its family's list (a kernel left out of `KERNELS`).
    #[error("kernel {0} is not listed at its place in its family's kernels")]
    UnlistedKernel(&'static str),
    /// A shape a kernel cannot take (a precondition of its dispatch).
    #[error("shape mismatch before dispatch: {0}")]
    Shape(String),
}
