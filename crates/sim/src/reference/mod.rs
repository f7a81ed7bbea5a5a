//! The CPU reference engine: f32 or f64, forward and backward for every layer; plain loops, and
//! register-blocked ones for the linear layers that equal the plain loops bit for bit.

pub mod backward;
mod engine;
pub mod forward;
pub mod linear;

pub use engine::{ReferenceEngine, StepCursor};
