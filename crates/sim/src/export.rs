//! One JSON document with everything needed to re-check a lab's numbers in another framework:
//! data, initial parameters, and per step the batch and each run's loss, gradient and parameters.
//! The schema is documented in `docs/export-schema.md`.
//!
//! The document is written while the lab trains, one step at a time, so that memory stays at one
//! step's numbers however many steps are exported (a long export is a large file, not a large
//! process). Steps therefore come step-major: each step lists every run.

use std::io::Write;

use serde::Serialize;

use super::backend::TrainingBackend;
use super::lab::Lab;
use super::metrics::StepRecord;
use super::model::TensorInfo;
use super::SimError;

pub const EXPORT_SCHEMA: &str = "gradlab-export";
/// 4: a `model` member says which model the document holds (`mlp`, or `gpt` with its own
/// layout, written by [`crate::gpt::export`]).
pub const EXPORT_SCHEMA_VERSION: u32 = 4;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("cannot write the export: {0}")]
    Write(#[from] std::io::Error),
    #[error("cannot encode the export: {0}")]
    Encode(#[from] serde_json::Error),
}

/// A run as it starts: its tensors and initial values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportRun {
    pub label: String,
    pub parameter_layout: Vec<TensorInfo>,
    pub parameter_count: usize,
    /// BatchNorm running statistics: per hidden layer, `width` means then `width` variances.
    pub buffer_count: usize,
    pub initial_parameters: Vec<f64>,
    pub initial_buffers: Vec<f64>,
}

/// One optimizer step: the examples every run consumed, then each run's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportStep {
    pub step: u64,
    /// Indices into `dataset.train` examples, in the order consumed.
    pub examples: Vec<usize>,
    pub runs: Vec<ExportRunStep>,
}

/// A run's result at one step. A run that diverged has `diverged_at_step` from that step on: on
/// that step its (non-finite) numbers too, after it nothing else, since it is not trained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportRunStep {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diverged_at_step: Option<u64>,
    #[serde(flatten)]
    pub result: Option<ExportRunResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportRunResult {
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

/// Writes one `"key":value` member of an object (a comma first unless it is the first).
pub(crate) fn member(out: &mut dyn Write, first: bool, key: &str, value: &impl Serialize) -> Result<(), ExportError> {
    if !first {
        out.write_all(b",")?;
    }
    serde_json::to_writer(&mut *out, key)?;
    out.write_all(b":")?;
    serde_json::to_writer(&mut *out, value)?;
    Ok(())
}

/// Runs `steps` optimizer steps of `lab` (fewer when every run has diverged), writing the
/// document to `out` as it goes and calling `progress(done)` after each step.
pub fn write_export<B: TrainingBackend>(
    lab: &mut Lab<B>,
    steps: u64,
    out: &mut dyn Write,
    mut progress: impl FnMut(u64),
) -> Result<(), ExportError> {
    let runs: Vec<ExportRun> = lab
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
            })
        })
        .collect::<Result<_, SimError>>()?;
    let engine = lab.runs().first().map(|r| r.backend.name()).unwrap_or_default();
    out.write_all(b"{")?;
    member(out, true, "schema", &EXPORT_SCHEMA)?;
    member(out, false, "schema_version", &EXPORT_SCHEMA_VERSION)?;
    member(out, false, "model", &"mlp")?;
    member(out, false, "engine", &engine)?;
    member(out, false, "config", lab.config())?;
    member(out, false, "dataset", lab.dataset())?;
    member(out, false, "runs", &runs)?;
    drop(runs);
    out.write_all(b",\"steps\":[")?;
    for done in 1..=steps {
        if lab.all_diverged() {
            break;
        }
        lab.step()?;
        let this_step = lab.steps_taken() - 1;
        let step = ExportStep {
            step: this_step,
            examples: lab.last_examples().to_vec(),
            runs: lab
                .runs()
                .iter()
                .map(|run| {
                    let trained = run.diverged_at.is_none_or(|at| at == this_step);
                    let result = if trained {
                        Some(ExportRunResult {
                            micro_batch_items: run.last_micro_batch_items.clone(),
                            metrics: run.history.last().copied().unwrap_or_default(),
                            gradient: run.backend.gradient()?,
                            parameters: run.backend.parameters()?,
                            buffers: run.backend.buffers()?,
                        })
                    } else {
                        None
                    };
                    Ok(ExportRunStep {
                        diverged_at_step: run.diverged_at,
                        result,
                    })
                })
                .collect::<Result<_, SimError>>()?,
        };
        if done > 1 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, &step)?;
        progress(done);
    }
    out.write_all(b"]}\n")?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::CpuLab;
    use crate::scenario::Scenario;

    fn exported(scenario: &str, steps: u64) -> serde_json::Value {
        let config = Scenario::by_id(scenario).expect("known scenario").config;
        let mut lab = CpuLab::<f64>::cpu(config).expect("valid scenario");
        let mut bytes = Vec::new();
        let mut reported = Vec::new();
        write_export(&mut lab, steps, &mut bytes, |done| reported.push(done)).expect("export");
        assert_eq!(reported, (1..=steps).collect::<Vec<_>>());
        serde_json::from_slice(&bytes).expect("one valid JSON document")
    }

    #[test]
    fn the_streamed_document_is_one_json_object_with_every_step_of_every_run() {
        let doc = exported("norms", 3);
        assert_eq!(doc["schema"], EXPORT_SCHEMA);
        assert_eq!(doc["schema_version"], EXPORT_SCHEMA_VERSION);
        assert_eq!(doc["model"], "mlp");
        let runs = doc["runs"].as_array().expect("runs");
        let steps = doc["steps"].as_array().expect("steps");
        assert_eq!(steps.len(), 3);
        for (i, step) in steps.iter().enumerate() {
            assert_eq!(step["step"], i as u64);
            assert_eq!(step["runs"].as_array().expect("runs of a step").len(), runs.len());
            for (run, result) in runs.iter().zip(step["runs"].as_array().expect("runs")) {
                let count = run["parameter_count"].as_u64().expect("count") as usize;
                assert_eq!(result["gradient"].as_array().expect("gradient").len(), count);
                assert_eq!(result["parameters"].as_array().expect("parameters").len(), count);
                assert_eq!(result["metrics"]["step"], i as u64);
            }
        }
    }

    #[test]
    fn a_shorter_export_is_a_prefix_of_a_longer_one() {
        let one = exported("scaling", 1);
        let two = exported("scaling", 2);
        assert_eq!(one["steps"][0], two["steps"][0]);
        assert_eq!(one["runs"], two["runs"]);
    }
}
