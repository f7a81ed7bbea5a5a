//! The tiny GPT on the GPU: a micro-batch's token rows ([`rows`]) and the model's forward and
//! backward recorded from the kernel families (linear, norm, output, residual, attention) over
//! one workspace of activations ([`model`]). The same operations as the CPU engine
//! (`gradlab_sim::gpt::model`), in the same order, each tested against it.

pub mod lab;
pub mod model;
pub mod rows;

pub use lab::GptGpuLab;
pub use model::GptGpuModel;
pub use rows::{RowSlot, TokenRows};
