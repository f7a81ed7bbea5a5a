//! The simulation core: data, model, CPU reference, regimes, metrics and the side-by-side lab.
//! Pure Rust: nothing here knows about wgpu, Leptos or the browser.

pub mod backend;
pub mod data;
pub mod engine_memory;
pub mod export;
pub mod gpt;
pub mod lab;
pub mod loss_scaler;
pub mod metrics;
pub mod model;
pub mod optim;
pub mod planner;
pub mod precision;
pub mod real;
pub mod reference;
pub mod regime;
pub mod rng;
pub mod scenario;
pub mod simd;
pub mod step_time;
pub mod trace;

use thiserror::Error;

/// A setting that is out of range or inconsistent, with the path of the field that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// Path of the bad field, as in the config file (`runs[1].regime.micro_batches`).
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Errors of the simulation layer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SimError {
    #[error("invalid setting {0}")]
    Config(#[from] ConfigError),
    /// Data handed to an engine does not fit the model (a bug in the caller, checked before work).
    #[error("shape mismatch: {0}")]
    Shape(String),
    #[error("unknown scenario \"{0}\"")]
    UnknownScenario(String),
    /// An engine failed (GPU validation error, device lost, readback failure).
    #[error("{0}")]
    Engine(#[source] EngineError),
}

/// An engine's failure with its source error kept (the simulation layer knows no engine's
/// error type): its message names the engine.
#[derive(Debug, Clone)]
pub struct EngineError {
    pub engine: &'static str,
    pub source: std::sync::Arc<dyn std::error::Error + Send + Sync>,
}

impl EngineError {
    pub fn new(engine: &'static str, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            engine,
            source: std::sync::Arc::new(source),
        }
    }
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.engine, self.source)
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// Two failures are the same when they say the same (errors do not compare otherwise).
impl PartialEq for EngineError {
    fn eq(&self, other: &Self) -> bool {
        self.engine == other.engine && self.source.to_string() == other.source.to_string()
    }
}

impl Eq for EngineError {}
