//! Encoding one optimizer step: a [`StepEncoder`] walks the step plan and records each `Op` with
//! a method of its own; what an op leaves for a later one (losses not summed yet, a micro-batch's
//! deferred gradients, an optimizer step already taken) is held in its fields.

use std::ops::Range;

use super::metrics::{slot, PendingStep};
use super::workspace::RowLosses;
use super::GpuEngine;
use crate::kernels::{self, ClipParams, FirstAndOutputGradients, OptimizerParams, ReduceMode};
use crate::ops::{Recorder, TimingMark};
use crate::GpuError;
use gradlab_sim::backend::StepBatch;
use gradlab_sim::metrics::StepRecord;
use gradlab_sim::reference::forward::PassMode;
use gradlab_sim::regime::{Op, StepPlan};
use gradlab_sim::trace::SnapshotOf;

/// The state of one step's encoding.
pub(super) struct StepEncoder<'a> {
    engine: &'a mut GpuEngine,
    plan: &'a StepPlan,
    batch: &'a StepBatch,
    recorder: Recorder,
    /// The record's host-side part and which metrics the step fills.
    step: PendingStep,
    /// The ops between the training span's marks.
    timed: Option<std::ops::RangeInclusive<usize>>,
    snapshot_buffer: Option<wgpu::Buffer>,
    /// Rows of `step_row_loss` whose losses are not yet added to the step's loss.
    unsummed_losses: Option<Range<usize>>,
    /// A closed run of those rows, summed by the next gradient reduction's serial half (one
    /// dispatch fewer), or on its own before the next micro-batch's forward or at the end.
    deferred_losses: Option<Range<usize>>,
    /// The gradient's reduction took the optimizer step that follows it.
    optimizer_stepped: bool,
    /// The last backward dispatch of a micro-batch, for the next micro-batch's forward.
    pending_gradients: Option<FirstAndOutputGradients>,
}

impl<'a> StepEncoder<'a> {
    /// Starts step `step` of `plan` over `batch` (already uploaded into the engine's batch buffers).
    pub(super) fn new(engine: &'a mut GpuEngine, step: u64, plan: &'a StepPlan, batch: &'a StepBatch) -> Self {
        let mut recorder = Recorder::new();
        recorder.clear(&engine.metric.scalars);
        let snapshot_buffer = engine.snapshot_buffer(plan);
        Self {
            engine,
            plan,
            batch,
            recorder,
            step: PendingStep {
                record: StepRecord {
                    step,
                    learning_rate: plan.learning_rate,
                    ..StepRecord::default()
                },
                has_reference: false,
                evaluated: false,
                clips: 0,
                timed: false,
            },
            timed: plan.training_span(),
            snapshot_buffer,
            unsummed_losses: None,
            deferred_losses: None,
            optimizer_stepped: false,
            pending_gradients: None,
        }
    }

    /// Records the plan's `i`-th op.
    pub(super) fn record(&mut self, i: usize, op: Op) -> Result<(), GpuError> {
        if self.timed.as_ref().is_some_and(|span| *span.start() == i) {
            self.recorder.mark(TimingMark::Start);
        }
        match op {
            Op::ReferenceGradient => self.reference_gradient()?,
            Op::GradientAsReference => self.gradient_as_reference(),
            Op::ZeroGrad => self.recorder.clear(&self.engine.parameters.gradients),
            Op::Accumulate {
                micro_batch,
                item_weight,
            } => self.accumulate(i, micro_batch, item_weight)?,
            Op::ClipGradNorm { max_norm } => self.clip_grad_norm(max_norm)?,
            Op::RecordGradient => self.record_gradient(i)?,
            Op::OptimizerStep { learning_rate } => self.optimizer_step(learning_rate)?,
            Op::Evaluate => self.evaluate()?,
            Op::Snapshot(of) => self.snapshot(of)?,
        }
        if self.timed.as_ref().is_some_and(|span| *span.end() == i) {
            self.recorder.mark(TimingMark::End);
        }
        Ok(())
    }

    /// Closes the step: records what is still deferred and the copy of its scalars into the
    /// history; returns the recorder and what the record needs once read back.
    pub(super) fn finish(mut self) -> Result<(Recorder, PendingStep), GpuError> {
        // Deferred only where another micro-batch followed at once, which took them; kept
        // here so that no plan can drop a gradient.
        if let Some(gradients) = self.pending_gradients.take() {
            gradients.record(&self.engine.ops, &mut self.recorder)?;
        }
        self.engine
            .sum_losses(&mut self.recorder, self.deferred_losses.take())?;
        self.engine.metric.record_copy(&mut self.recorder);
        Ok((self.recorder, self.step))
    }

    /// The full batch's gradient into the reference buffer, through the metrics workspace.
    fn reference_gradient(&mut self) -> Result<(), GpuError> {
        let engine = &*self.engine;
        let source = engine.batch.rows_from(0, self.batch.item_count());
        self.recorder.clear(&engine.parameters.reference);
        let mode = PassMode::Train {
            update_running_stats: false,
        };
        // As a full batch's `Op::Accumulate` carries it, so that the two agree bit for bit.
        let weight = (1.0 / self.batch.item_count().max(1) as f64) as f32;
        let (workspace, target) = (&engine.workspaces.metrics, &engine.parameters.reference);
        let losses = workspace.own_losses().weighted(weight);
        engine.forward(&mut self.recorder, workspace, source, mode, losses, None)?;
        engine.backward(&mut self.recorder, workspace, source, target, false)?;
        self.step.has_reference = true;
        Ok(())
    }

    fn gradient_as_reference(&mut self) {
        let parameters = &self.engine.parameters;
        let bytes = (self.engine.layout.parameter_count * 4) as u64;
        self.recorder
            .copy(&parameters.gradients, &parameters.reference, 0, bytes);
        self.step.has_reference = true;
    }

    /// The forward and backward of micro-batch `micro_batch`, the plan's `i`-th op, adding
    /// `item_weight` times its items' loss gradients into the gradient.
    fn accumulate(&mut self, i: usize, micro_batch: usize, item_weight: f64) -> Result<(), GpuError> {
        let engine = &*self.engine;
        engine.sum_losses(&mut self.recorder, self.deferred_losses.take())?;
        let rows = self.batch.micro_batch(micro_batch).map_err(GpuError::Data)?;
        let source = engine.batch.rows_from(rows.start, rows.len());
        let mode = PassMode::Train {
            update_running_stats: true,
        };
        // The step's loss adds its items' losses one by one in item order, once for each run of
        // neighbouring micro-batches (once per step, in every plan the regimes make): the same
        // sequence as the full batch's. A run is kept open only when the next micro-batch
        // continues it (below), so rows are summed before any later forward could rewrite them.
        let losses = RowLosses::at(&engine.metric.step_row_loss, rows.start).weighted(item_weight as f32);
        // The last backward dispatch of the micro-batch before waits for this forward's first;
        // this one's waits for the next micro-batch where one follows at once (nothing reads
        // the gradient in between).
        let next_accumulates = matches!(self.plan.ops.get(i + 1), Some(Op::Accumulate { .. }));
        let earlier = self.pending_gradients.take();
        let (workspace, target) = (&engine.workspaces.train, &engine.parameters.gradients);
        engine.forward(&mut self.recorder, workspace, source, mode, losses, earlier)?;
        self.pending_gradients = engine.backward(&mut self.recorder, workspace, source, target, next_accumulates)?;
        let run_start = self.unsummed_losses.take().map_or(rows.start, |run| run.start);
        self.unsummed_losses = Some(run_start..rows.end);
        if !self.next_micro_batch_continues(i, rows.end) {
            self.deferred_losses = self.unsummed_losses.take();
        }
        self.step.record.items += rows.len();
        Ok(())
    }

    /// Whether the next micro-batch after op `i` starts at row `end`, continuing the run.
    fn next_micro_batch_continues(&self, i: usize, end: usize) -> bool {
        self.plan.ops[i + 1..]
            .iter()
            .find_map(|op| match op {
                Op::Accumulate { micro_batch, .. } => Some(*micro_batch),
                _ => None,
            })
            .and_then(|next| self.batch.micro_batch(next).ok())
            .is_some_and(|next| next.start == end)
    }

    fn clip_grad_norm(&mut self, max_norm: f64) -> Result<(), GpuError> {
        self.step.clips += 1;
        let engine = &*self.engine;
        let gradients = &engine.parameters.gradients;
        let (squares, losses) = (ReduceMode::SumOfSquares, self.deferred_losses.take());
        engine.reduce_gradient(&mut self.recorder, gradients, squares, slot::CLIP_SQ, losses, None)?;
        let p = engine.layout.parameter_count;
        let params = ClipParams {
            len: p as u32,
            slot: slot::CLIP_SQ,
            max_norm: max_norm as f32,
            factor_slot: slot::CLIP_FACTOR_SUM,
        };
        let buffers = [&engine.metric.scalars, gradients];
        engine
            .ops
            .run(&mut self.recorder, &kernels::CLIP, &params, buffers, p as u32)
    }

    /// The gradient's norm (and its comparison with the reference, where the step has one).
    fn record_gradient(&mut self, i: usize) -> Result<(), GpuError> {
        // The optimizer step that follows (it does in every plan) reads the gradient this
        // reduction reads: the reduction's parallel half takes it.
        let update = match self.plan.ops.get(i + 1) {
            Some(&Op::OptimizerStep { learning_rate }) => Some(self.engine.next_optimizer_step(learning_rate)),
            _ => None,
        };
        let engine = &*self.engine;
        // With a reference, one pass fills GRAD_SQ, DOT, REFERENCE_SQ and DIFF_SQ.
        let (reference, mode) = if self.step.has_reference {
            (&engine.parameters.reference, ReduceMode::Comparison)
        } else {
            (&engine.parameters.gradients, ReduceMode::SumOfSquares)
        };
        let losses = self.deferred_losses.take();
        engine.reduce_gradient(
            &mut self.recorder,
            reference,
            mode,
            slot::GRAD_SQ,
            losses,
            update.as_ref(),
        )?;
        self.optimizer_stepped = update.is_some();
        Ok(())
    }

    /// The optimizer step, unless the gradient's reduction took it.
    fn optimizer_step(&mut self, learning_rate: f64) -> Result<(), GpuError> {
        if std::mem::take(&mut self.optimizer_stepped) {
            return Ok(());
        }
        let params = self.engine.next_optimizer_step(learning_rate);
        let parameters = &self.engine.parameters;
        let buffers = [
            &parameters.gradients,
            &parameters.values,
            &parameters.first_moment,
            &parameters.second_moment,
        ];
        let len = params.len;
        self.engine
            .ops
            .run(&mut self.recorder, &kernels::OPTIMIZER, &params, buffers, len)
    }

    /// The test set's loss and accuracy.
    fn evaluate(&mut self) -> Result<(), GpuError> {
        let engine = &*self.engine;
        let workspace = &engine.workspaces.metrics;
        let (source, losses) = (engine.test.source(), workspace.own_losses());
        engine.forward(&mut self.recorder, workspace, source, PassMode::Eval, losses, None)?;
        // One pass fills TEST_LOSS_SUM and TEST_CORRECT.
        engine.reduce(
            &mut self.recorder,
            &workspace.row_loss,
            &workspace.row_correct,
            engine.test.rows,
            ReduceMode::PairSums,
            slot::TEST_LOSS_SUM,
            false,
        )?;
        self.step.evaluated = true;
        Ok(())
    }

    fn snapshot(&mut self, of: SnapshotOf) -> Result<(), GpuError> {
        let Some(destination) = &self.snapshot_buffer else {
            return Err(GpuError::Shape("no snapshot buffer".into()));
        };
        self.engine.record_snapshot(&mut self.recorder, destination, of);
        Ok(())
    }
}

impl GpuEngine {
    /// Counts the optimizer step and returns its settings.
    fn next_optimizer_step(&mut self, learning_rate: f64) -> OptimizerParams {
        self.steps_taken += 1;
        let len = self.layout.parameter_count;
        OptimizerParams::for_step(&self.optimizer, self.steps_taken, learning_rate, len)
    }
}
