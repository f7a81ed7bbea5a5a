//! The CPU reference engine: plain loops, f32 or f64, forward and backward for every layer.

pub mod backward;
mod engine;
pub mod forward;

pub use engine::{ReferenceEngine, StepCursor};
