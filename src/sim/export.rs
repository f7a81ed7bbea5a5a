//! One JSON-serializable document with everything needed to re-check a lab's numbers in another
//! framework: data, initial parameters, and per step each run's batch, loss, gradient and parameters.
//! The schema is documented in `docs/export-schema.md`.

use serde::Serialize;

use super::backend::TrainingBackend;
use super::data::Dataset;
use super::lab::{Lab, LabConfig};
use super::metrics::StepRecord;
use super::model::TensorInfo;
use super::SimError;

pub const EXPORT_SCHEMA: &str = "gradlab-export";
pub const EXPORT_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportDocument {
    pub schema: &'static str,
    pub schema_version: u32,
    /// The engine that produced the numbers ("cpu-f32", "cpu-f64").
    pub engine: String,
    pub config: LabConfig,
    pub dataset: Dataset,
    pub runs: Vec<ExportRun>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportRun {
    pub label: String,
    pub parameter_layout: Vec<TensorInfo>,
    pub parameter_count: usize,
    /// BatchNorm running statistics: per hidden layer, `width` means then `width` variances.
    pub buffer_count: usize,
    pub initial_parameters: Vec<f64>,
    pub initial_buffers: Vec<f64>,
    pub steps: Vec<ExportStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportStep {
    pub step: u64,
    /// Indices into `dataset.train` examples, in the order consumed.
    pub examples: Vec<usize>,
    /// Items per micro-batch, in order; micro-batches are contiguous slices of `examples`' items.
    pub micro_batch_items: Vec<usize>,
    pub metrics: StepRecord,
    /// The gradient the optimizer applied at this step (after accumulation and any clipping).
    pub gradient: Vec<f64>,
    /// Parameters after the step.
    pub parameters: Vec<f64>,
    /// Running statistics after the step.
    pub buffers: Vec<f64>,
}

/// Runs `steps` optimizer steps of `lab` and records everything.
pub fn export<B: TrainingBackend>(lab: &mut Lab<B>, steps: u64) -> Result<ExportDocument, SimError> {
    let mut runs: Vec<ExportRun> = lab
        .runs()
        .iter()
        .map(|run| {
            Ok(ExportRun {
                label: run.spec.label.clone(),
                parameter_layout: run.layout.tensors.clone(),
                parameter_count: run.layout.parameter_count,
                buffer_count: run.layout.buffer_count,
                initial_parameters: run.backend.parameters()?,
                initial_buffers: run.backend.buffers()?,
                steps: Vec::new(),
            })
        })
        .collect::<Result<_, SimError>>()?;
    for _ in 0..steps {
        lab.step()?;
        let examples = lab.last_examples().to_vec();
        for (out, run) in runs.iter_mut().zip(lab.runs()) {
            out.steps.push(ExportStep {
                step: lab.steps_taken() - 1,
                examples: examples.clone(),
                micro_batch_items: run.last_micro_batch_items.clone(),
                metrics: run.history.last().copied().unwrap_or_default(),
                gradient: run.backend.gradient()?,
                parameters: run.backend.parameters()?,
                buffers: run.backend.buffers()?,
            });
        }
    }
    let engine = lab.runs().first().map(|r| r.backend.name()).unwrap_or_default();
    Ok(ExportDocument {
        schema: EXPORT_SCHEMA,
        schema_version: EXPORT_SCHEMA_VERSION,
        engine,
        config: lab.config().clone(),
        dataset: lab.dataset().clone(),
        runs,
    })
}
