//! The token-count experiment on the GPU: [`GptGpuLab`] takes the CPU lab's steps
//! (`gradlab_sim::gpt::lab`: the same example order, step plans, token weights, clipping and
//! AdamW with its decay mask) with every run's weights, gradients and optimizer state on the
//! device. Each step is one submission; the scalars of every step of an [`GptGpuLab::advance`]
//! come back in one async readback (natively a test's executor polls; on wasm nothing blocks).

use std::ops::Range;
use std::sync::Arc;

use super::model::GptGpuModel;
use super::rows::{RowSlot, TokenRows};
use crate::context::GpuContext;
use crate::kernels::{ClipParams, OptimizerParams, ReduceMode, ReduceParams, REDUCE_PARTIALS_COUNT};
use crate::ops::{GpuOps, Recorder, Submitter};
use crate::readback::read_f32;
use crate::GpuError;
use gradlab_sim::gpt::lab::{
    ExampleOrder, GptLabConfig, GptStepPlan, GptStepRecord, GptUpdate, MicroBatchTokens, Reduction,
};
use gradlab_sim::gpt::spec::GptLayout;
use gradlab_sim::gpt::text::Corpus;
use gradlab_sim::metrics::comparison_from_sums;
use gradlab_sim::SimError;

/// The scalar slots of one run at one step.
mod slot {
    pub const LOSS_SUM: u32 = 0;
    /// `Σ g²`, then (a comparison fills the next three) `Σ g·r`, `Σ r²`, `Σ (g − r)²`.
    pub const GRAD_SQ: u32 = 1;
    pub const DOT: u32 = 2;
    pub const REFERENCE_SQ: u32 = 3;
    pub const DIFF_SQ: u32 = 4;
    pub const CLIP_FACTOR: u32 = 5;
    pub const VALIDATION_SUM: u32 = 6;
    pub const PER_RUN: u32 = 8;
    const _: () = assert!(DOT == GRAD_SQ + 1 && REFERENCE_SQ == GRAD_SQ + 2 && DIFF_SQ == GRAD_SQ + 3);
}

/// Steps one [`GptGpuLab::advance`] records before it reads their scalars back.
pub const MAX_STEPS_PER_ADVANCE: u64 = 64;

/// One run on the device.
#[derive(Debug)]
struct GpuRun {
    reduction: Reduction,
    values: wgpu::Buffer,
    grads: wgpu::Buffer,
    first_moment: wgpu::Buffer,
    second_moment: wgpu::Buffer,
    history: Vec<GptStepRecord>,
}

/// The runs side by side on one device.
#[derive(Debug)]
pub struct GptGpuLab {
    context: GpuContext,
    ops: Arc<GpuOps>,
    config: GptLabConfig,
    corpus: Corpus,
    model: GptGpuModel,
    runs: Vec<GpuRun>,
    order: ExampleOrder,
    step: u64,
    /// One slot per micro-batch.
    slots: Vec<RowSlot>,
    /// The full batch's slot.
    full_slot: RowSlot,
    /// Replays each step's dispatches, its uniform buffer and bind groups kept from step to step
    /// (the buffers a step binds never change).
    submitter: Submitter,
    /// The validation examples' rows in chunks of a batch (written once: they never change).
    validation: Vec<(TokenRows, RowSlot)>,
    validation_tokens: usize,
    reference: wgpu::Buffer,
    row_loss: wgpu::Buffer,
    partials: wgpu::Buffer,
    scalars: wgpu::Buffer,
    /// Runs of parameters AdamW treats alike: (range, decayed).
    decay_ranges: Vec<(Range<usize>, bool)>,
    batch: Vec<usize>,
    window: Vec<MicroBatchTokens>,
}

impl GptGpuLab {
    /// The runs of `config` over `corpus` on `context`'s device, with `ops`' kernels.
    pub fn new(context: &GpuContext, ops: Arc<GpuOps>, config: GptLabConfig, corpus: Corpus) -> Result<Self, GpuError> {
        config
            .check_corpus(&corpus)
            .map_err(|e| GpuError::Data(SimError::Config(e)))?;
        let layout = GptLayout::new(config.model, corpus.vocabulary.len());
        let context_len = config.model.context;
        // A pass holds at most a batch of examples (the full batch, or a validation chunk).
        let most_rows = config.batch * context_len;
        let most_probs = config.batch * config.model.heads * context_len * context_len;
        let model = GptGpuModel::new(context, ops.clone(), layout.clone(), most_rows, most_probs);
        let len = GptGpuModel::buffer_len(&layout);
        let mut initial: Vec<f32> = layout.initialize(config.seed).iter().map(|&p| p as f32).collect();
        initial.resize(len, 0.0);
        let runs = config
            .runs
            .iter()
            .map(|&reduction| GpuRun {
                reduction,
                values: context.storage_buffer("parameters", &initial),
                grads: context.zeroed_buffer("gradients", len),
                first_moment: context.zeroed_buffer("first moments", len),
                second_moment: context.zeroed_buffer("second moments", len),
                history: Vec::new(),
            })
            .collect();
        let per_micro_batch = config.batch / config.micro_batches;
        let slots: Vec<RowSlot> = (0..config.micro_batches)
            .map(|_| RowSlot::new(context, per_micro_batch * context_len))
            .collect();
        let full_slot = RowSlot::new(context, most_rows);
        let mut validation = Vec::new();
        let mut validation_tokens = 0;
        for chunk in config.validation_examples(&corpus).chunks(config.batch) {
            let examples: Vec<&[u32]> = chunk.iter().map(Vec::as_slice).collect();
            let rows = TokenRows::new(&layout, &examples)?;
            let slot = RowSlot::new(context, rows.count());
            slot.write(context, &rows)?;
            validation_tokens += rows.count();
            validation.push((rows, slot));
        }
        let scalars = MAX_STEPS_PER_ADVANCE as usize * config.runs.len() * slot::PER_RUN as usize;
        Ok(Self {
            reference: context.zeroed_buffer("reference gradient", len),
            row_loss: context.zeroed_buffer("row losses", most_rows.max(validation_tokens)),
            partials: context.zeroed_buffer("reduction partials", 4 * REDUCE_PARTIALS_COUNT),
            scalars: context.zeroed_buffer("step scalars", scalars),
            decay_ranges: layout.decay_ranges(),
            order: ExampleOrder::new(config.seed, corpus.train.len()),
            context: context.clone(),
            ops,
            model,
            runs,
            step: 0,
            slots,
            full_slot,
            submitter: Submitter::new(),
            validation,
            validation_tokens,
            batch: Vec::new(),
            window: Vec::new(),
            config,
            corpus,
        })
    }

    pub fn config(&self) -> &GptLabConfig {
        &self.config
    }
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }
    pub fn layout(&self) -> &GptLayout {
        self.model.layout()
    }
    pub fn step_count(&self) -> u64 {
        self.step
    }
    pub fn last_batch(&self) -> &[usize] {
        &self.batch
    }
    pub fn window(&self) -> &[MicroBatchTokens] {
        &self.window
    }
    /// Each run's reduction and history, in the configuration's order.
    pub fn histories(&self) -> impl Iterator<Item = (Reduction, &[GptStepRecord])> {
        self.runs.iter().map(|run| (run.reduction, run.history.as_slice()))
    }
    /// The model's workspace (for the memory experiment).
    pub fn model(&self) -> &GptGpuModel {
        &self.model
    }
    /// The runs side by side.
    pub fn run_count(&self) -> usize {
        self.runs.len()
    }

    /// The records `sent` (one count per run) does not cover yet, and the last window.
    pub fn update_since(&self, sent: &mut Vec<usize>) -> GptUpdate {
        let histories: Vec<&[GptStepRecord]> = self.runs.iter().map(|r| r.history.as_slice()).collect();
        GptUpdate::since(&histories, sent, self.step, &self.window)
    }

    /// Run `run`'s parameters.
    pub async fn read_parameters(&self, run: usize) -> Result<Vec<f32>, GpuError> {
        let run = self.runs.get(run).ok_or(GpuError::NoRun(run))?;
        read_f32(&self.context, &run.values, self.layout().parameter_count).await
    }

    /// `steps` optimizer steps of every run (at most [`MAX_STEPS_PER_ADVANCE`]), their records
    /// read back once at the end.
    pub async fn advance(&mut self, steps: u64) -> Result<(), GpuError> {
        let steps = steps.min(MAX_STEPS_PER_ADVANCE);
        let mut plans = Vec::with_capacity(steps as usize);
        for k in 0..steps {
            let batch = self.order.next_batch(self.config.batch);
            let plan = GptStepPlan::new(&self.config, &self.corpus, self.step + k, batch);
            let recorder = self.record_step(&plan, k as u32)?;
            self.submitter.submit(&self.context, &self.ops, recorder);
            plans.push(plan);
        }
        let per_step = self.runs.len() * slot::PER_RUN as usize;
        let scalars = read_f32(&self.context, &self.scalars, plans.len() * per_step).await?;
        if let Some(error) = self.context.take_errors().into_iter().next() {
            return Err(error);
        }
        for (k, plan) in plans.iter().enumerate() {
            for (r, run) in self.runs.iter_mut().enumerate() {
                let base = k * per_step + r * slot::PER_RUN as usize;
                let get = |s: u32| f64::from(scalars[base + s as usize]);
                let grad_sq = get(slot::GRAD_SQ);
                let comparison = (self.config.compare && run.reduction.accumulates()).then(|| {
                    comparison_from_sums(grad_sq, get(slot::DOT), get(slot::REFERENCE_SQ), get(slot::DIFF_SQ))
                });
                let mut record = plan.record(get(slot::LOSS_SUM), grad_sq.sqrt(), comparison);
                if plan.evaluate {
                    record.validation_loss = Some(get(slot::VALIDATION_SUM) / self.validation_tokens.max(1) as f64);
                }
                run.history.push(record);
            }
        }
        self.step += plans.len() as u64;
        if let Some(plan) = plans.pop() {
            self.batch = plan.batch;
            self.window = plan.window;
        }
        Ok(())
    }

    /// One step of every run, its scalars into the `k`-th step's slots.
    fn record_step(&self, plan: &GptStepPlan, k: u32) -> Result<Recorder, GpuError> {
        let layout = self.model.layout();
        let count = layout.parameter_count;
        let examples = plan.examples(&self.corpus);
        let mut recorder = Recorder::new();
        if k == 0 {
            recorder.clear(&self.scalars);
        }
        // Every pass's rows, written before the submission: micro-batch m in slot m, the full
        // batch in its own.
        let micro_batches = plan
            .passes(Reduction::WindowTokens)
            .into_iter()
            .zip(&self.slots)
            .map(|((range, _), slot)| -> Result<(TokenRows, &RowSlot), GpuError> {
                let rows = TokenRows::new(layout, &examples[range])?;
                slot.write(&self.context, &rows)?;
                Ok((rows, slot))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let full_batch = (TokenRows::new(layout, &examples)?, &self.full_slot);
        full_batch.1.write(&self.context, &full_batch.0)?;
        // Pass m of a run: micro-batch m when it accumulates, else the full batch.
        let pass = |reduction: Reduction, m: usize| match micro_batches.get(m) {
            Some((rows, slot)) if reduction.accumulates() => (rows, *slot),
            _ => (&full_batch.0, full_batch.1),
        };
        let full_batch_weight = Reduction::FullBatch.token_weight(plan.window_tokens, plan.window_tokens, 1);
        let runs_len = self.runs.len() as u32;
        for (r, run) in self.runs.iter().enumerate() {
            let base = (k * runs_len + r as u32) * slot::PER_RUN;
            recorder.clear(&run.grads);
            let mut offset = 0;
            for (m, (_, weight)) in plan.passes(run.reduction).into_iter().enumerate() {
                let (rows, slot) = pass(run.reduction, m);
                let gradient = Some((weight as f32, &run.grads));
                self.model
                    .record(&mut recorder, rows, slot, &run.values, &self.row_loss, offset, gradient)?;
                offset += rows.count();
            }
            // The step's loss: every row's, in the full batch's order.
            let loss = ReduceParams::new(offset, ReduceMode::InOrderSum, base + slot::LOSS_SUM, false);
            self.reduce(&mut recorder, loss, &self.row_loss)?;
            let compare = self.config.compare && run.reduction.accumulates();
            if compare {
                recorder.clear(&self.reference);
                let (rows, slot) = pass(Reduction::FullBatch, 0);
                let weight = full_batch_weight as f32;
                let gradient = Some((weight, &self.reference));
                self.model
                    .record(&mut recorder, rows, slot, &run.values, &self.row_loss, 0, gradient)?;
            }
            let mode = if compare {
                ReduceMode::Comparison
            } else {
                ReduceMode::SumOfSquares
            };
            let norm = ReduceParams::new(count, mode, base + slot::GRAD_SQ, false);
            self.ops.reduce(
                &mut recorder,
                norm,
                &run.grads,
                &self.reference,
                &self.partials,
                &self.scalars,
            )?;
            if let Some(max_norm) = self.config.clip {
                let clip = ClipParams {
                    len: count as u32,
                    slot: base + slot::GRAD_SQ,
                    max_norm: max_norm as f32,
                    factor_slot: base + slot::CLIP_FACTOR,
                };
                self.ops.clip(&mut recorder, clip, &self.scalars, &run.grads)?;
            }
            let t = (plan.step + 1) as u32;
            for (range, decayed) in &self.decay_ranges {
                let mut update = OptimizerParams::for_step(&self.config.optimizer, t, plan.learning_rate, range.len());
                update.offset = range.start as u32;
                if !decayed {
                    update.weight_decay = 0.0;
                }
                self.ops.optimizer_update(
                    &mut recorder,
                    update,
                    &run.grads,
                    &run.values,
                    &run.first_moment,
                    &run.second_moment,
                )?;
            }
            if plan.evaluate {
                let mut offset = 0;
                for (rows, slot) in &self.validation {
                    self.model
                        .record(&mut recorder, rows, slot, &run.values, &self.row_loss, offset, None)?;
                    offset += rows.count();
                }
                let sum = ReduceParams::new(offset, ReduceMode::InOrderSum, base + slot::VALIDATION_SUM, false);
                self.reduce(&mut recorder, sum, &self.row_loss)?;
            }
        }
        Ok(recorder)
    }

    fn reduce(&self, recorder: &mut Recorder, params: ReduceParams, values: &wgpu::Buffer) -> Result<(), GpuError> {
        self.ops
            .reduce(recorder, params, values, values, &self.partials, &self.scalars)
    }
}
