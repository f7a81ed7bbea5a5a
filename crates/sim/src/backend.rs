//! The interface every training engine implements (the CPU reference now, the GPU engine next),
//! so the lab, the CLI and the tests do not care which one runs.

use std::ops::Range;

use super::data::Split;
use super::metrics::StepRecord;
use super::regime::{RegimeSpec, StepPlan};
use super::trace::GradientSnapshot;
use super::SimError;

/// The items of one optimizer step, gathered once and shared by every run of a lab.
#[derive(Debug, Clone, PartialEq)]
pub struct StepBatch {
    /// Training example indices, in the order consumed.
    pub examples: Vec<usize>,
    /// Items, row-major `items x input_dim`.
    pub inputs: Vec<f64>,
    pub labels: Vec<u32>,
    /// Item rows of each micro-batch, contiguous and in order.
    pub micro_batches: Vec<Range<usize>>,
}

impl StepBatch {
    /// Gathers the items of `examples` from `train`, split into micro-batches by `regime`.
    pub fn gather(train: &Split, input_dim: usize, examples: Vec<usize>, regime: &RegimeSpec) -> Self {
        let mut batch = StepBatch {
            inputs: Vec::new(),
            labels: Vec::new(),
            micro_batches: Vec::new(),
            examples,
        };
        for &e in &batch.examples {
            let items = train.items_in(e);
            batch
                .inputs
                .extend_from_slice(&train.inputs[items.start * input_dim..items.end * input_dim]);
            batch.labels.extend_from_slice(&train.labels[items]);
        }
        batch.split(train, regime);
        batch
    }

    /// Re-splits the same items for another regime (runs of one lab share the items).
    pub fn split(&mut self, train: &Split, regime: &RegimeSpec) {
        let mut row = 0;
        self.micro_batches = regime
            .split_examples(self.examples.len())
            .into_iter()
            .map(|range| {
                let items: usize = self.examples[range].iter().map(|&e| train.items_in(e).len()).sum();
                let rows = row..row + items;
                row += items;
                rows
            })
            .collect();
    }

    /// Checks, before any work, that the batch fits a model: input width, label range, and
    /// contiguous, non-empty micro-batches covering every item (at least two each with BatchNorm).
    pub fn check(&self, layout: &super::model::Layout) -> Result<(), SimError> {
        let items = self.item_count();
        if self.inputs.len() != items * layout.input_dim {
            return Err(SimError::Shape(format!(
                "batch has {} input values for {items} items of dimension {}",
                self.inputs.len(),
                layout.input_dim
            )));
        }
        if let Some(&label) = self.labels.iter().find(|&&l| l as usize >= layout.classes) {
            return Err(SimError::Shape(format!(
                "label {label} out of range for {} classes",
                layout.classes
            )));
        }
        let mut expected_start = 0;
        for range in &self.micro_batches {
            if range.start != expected_start || range.end > items || range.is_empty() {
                return Err(SimError::Shape(format!(
                    "micro-batch rows {range:?} are not contiguous within {items} items"
                )));
            }
            if layout.spec.norm.mixes_items() && range.len() < 2 {
                return Err(SimError::Shape(
                    "BatchNorm needs at least 2 items per micro-batch to compute a variance".into(),
                ));
            }
            expected_start = range.end;
        }
        if expected_start != items {
            return Err(SimError::Shape("micro-batches do not cover the batch".into()));
        }
        Ok(())
    }

    /// Item rows of micro-batch `index`, or an error when a plan names one the batch lacks.
    pub fn micro_batch(&self, index: usize) -> Result<Range<usize>, SimError> {
        self.micro_batches
            .get(index)
            .cloned()
            .ok_or_else(|| SimError::Shape(format!("plan names missing micro-batch {index}")))
    }

    pub fn item_count(&self) -> usize {
        self.labels.len()
    }

    pub fn micro_batch_items(&self) -> Vec<usize> {
        self.micro_batches.iter().map(Range::len).collect()
    }
}

/// A training engine for one run: it owns parameters, gradients, buffers and optimizer state.
pub trait TrainingBackend {
    /// Short name for reports ("cpu-f32", "cpu-f64", "webgpu").
    fn name(&self) -> String;
    /// Executes one optimizer step's plan. `step` is the 0-based optimizer step.
    fn execute(&mut self, step: u64, plan: &StepPlan, batch: &StepBatch) -> Result<(), SimError>;
    /// Records of the steps executed since the last call, oldest first.
    fn drain_records(&mut self) -> Result<Vec<StepRecord>, SimError>;
    /// What the `Op::Snapshot`s of the steps executed since the last call copied, oldest first.
    fn drain_snapshots(&mut self) -> Result<Vec<GradientSnapshot>, SimError>;
    /// Milliseconds each step executed since the last call spent on its training operations,
    /// by the engine's own clock, oldest first; empty where the engine cannot time a run alone.
    fn drain_step_times(&mut self) -> Vec<f64>;
    /// Current parameters, in the layout's flat order.
    fn parameters(&self) -> Result<Vec<f64>, SimError>;
    /// The gradient buffer as it stands (after the last step: the gradient that step applied).
    fn gradient(&self) -> Result<Vec<f64>, SimError>;
    /// BatchNorm running statistics, in the layout's buffer order.
    fn buffers(&self) -> Result<Vec<f64>, SimError>;
    /// Class probabilities for `points` (row-major, `input_dim` each) in evaluation mode.
    fn predict(&mut self, points: &[f64]) -> Result<Vec<f64>, SimError>;
}

/// Lets a lab choose its engine at run time (CPU in f32 or f64, GPU when available).
impl<B: TrainingBackend + ?Sized> TrainingBackend for Box<B> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn execute(&mut self, step: u64, plan: &StepPlan, batch: &StepBatch) -> Result<(), SimError> {
        (**self).execute(step, plan, batch)
    }
    fn drain_records(&mut self) -> Result<Vec<StepRecord>, SimError> {
        (**self).drain_records()
    }
    fn drain_snapshots(&mut self) -> Result<Vec<GradientSnapshot>, SimError> {
        (**self).drain_snapshots()
    }
    fn drain_step_times(&mut self) -> Vec<f64> {
        (**self).drain_step_times()
    }
    fn parameters(&self) -> Result<Vec<f64>, SimError> {
        (**self).parameters()
    }
    fn gradient(&self) -> Result<Vec<f64>, SimError> {
        (**self).gradient()
    }
    fn buffers(&self) -> Result<Vec<f64>, SimError> {
        (**self).buffers()
    }
    fn predict(&mut self, points: &[f64]) -> Result<Vec<f64>, SimError> {
        (**self).predict(points)
    }
}
