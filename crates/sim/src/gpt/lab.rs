//! The token-count experiment: runs of the tiny GPT side by side, from the same weights and the
//! same order of examples, that differ only in how they divide the summed token losses of an
//! optimizer step's micro-batches.
//!
//! Per step, every run sees the same `batch` examples, cut into `micro_batches` windows of
//! consecutive examples. Each token's loss gets the weight its run's [`Reduction`] gives it,
//! and the gradient buffer adds micro-batch after micro-batch, rows in the full batch's order;
//! so [`Reduction::WindowTokens`] equals [`Reduction::FullBatch`] bit for bit, and with
//! fixed-length blocks so does [`Reduction::MicroBatchMean`] (its `1 / (N · T_m)` is then the
//! same number as `1 / T`).

use serde::{Deserialize, Serialize};

use super::model::{padded_tokens, GptModel};
use super::spec::{GptLayout, GptSpec};
use super::text::{Corpus, ExampleKind};
use crate::metrics::compare_gradients;
use crate::optim::{clip_by_global_norm, global_norm, OptimizerSpec, OptimizerState, ScheduleSpec};
use crate::real::Real;
use crate::rng::SeededRng;
use crate::ConfigError;

/// How a run divides an optimizer step's summed token losses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduction {
    /// The whole batch in one pass: the mean over every predicted token of the step.
    FullBatch,
    /// N micro-batches, each one's own token mean divided by N: what Hugging Face Transformers
    /// did before 4.46 (trl #2175, fixed by transformers #34191).
    MicroBatchMean,
    /// N micro-batches, each one's token-loss sum divided by the tokens of the whole window
    /// (`num_items_in_batch`): the fix, equal to the full batch.
    WindowTokens,
}

impl Reduction {
    pub const ALL: [Reduction; 3] = [Reduction::FullBatch, Reduction::MicroBatchMean, Reduction::WindowTokens];

    pub fn id(self) -> &'static str {
        match self {
            Reduction::FullBatch => "full_batch",
            Reduction::MicroBatchMean => "micro_batch_mean",
            Reduction::WindowTokens => "window_tokens",
        }
    }

    /// What the run computes, in the words of the code a learner would write.
    pub fn formula(self) -> &'static str {
        match self {
            Reduction::FullBatch => "sum(token losses) / tokens in the batch",
            Reduction::MicroBatchMean => "mean(token losses of the micro-batch) / N",
            Reduction::WindowTokens => "sum(token losses of the micro-batch) / tokens in the window",
        }
    }

    pub fn accumulates(self) -> bool {
        self != Reduction::FullBatch
    }

    /// The weight of each of a micro-batch's tokens: `1 / T` for the full batch and the fix,
    /// `1 / (N · T_m)` for the per-micro-batch mean (the product taken in whole numbers, so
    /// that equal token counts give the very same weight).
    pub fn token_weight(self, micro_tokens: usize, window_tokens: usize, micro_batches: usize) -> f64 {
        match self {
            Reduction::FullBatch | Reduction::WindowTokens => 1.0 / window_tokens as f64,
            Reduction::MicroBatchMean => 1.0 / (micro_batches * micro_tokens) as f64,
        }
    }
}

/// The settings of the experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GptLabConfig {
    pub model: GptSpec,
    pub examples: ExampleKind,
    /// Examples per optimizer step.
    pub batch: usize,
    /// N, the micro-batches of the accumulated runs (`batch / N` examples each).
    pub micro_batches: usize,
    pub optimizer: OptimizerSpec,
    pub schedule: ScheduleSpec,
    /// Global-norm clipping of the gradient a run applies (nanoGPT's `grad_clip`), if any.
    pub clip: Option<f64>,
    pub seed: u64,
    /// Validation loss after the first step and every this many steps (0: never).
    pub eval_every: u64,
    /// Validation examples the loss is measured on (the first ones of the held-out text).
    pub eval_examples: usize,
    /// Whether each accumulated run's gradient is compared with the full batch's at its own
    /// weights (one more full-batch pass per run and step).
    pub compare: bool,
    pub runs: Vec<Reduction>,
}

impl Default for GptLabConfig {
    /// nanoGPT's `shakespeare_char` recipe scaled to the Lab: AdamW (0.9, 0.99), weight decay
    /// 0.1 on matrices, clipping at 1, warm-up then cosine decay to a tenth.
    fn default() -> Self {
        Self {
            model: GptSpec::default(),
            examples: ExampleKind::Lines,
            batch: 32,
            micro_batches: 8,
            optimizer: OptimizerSpec::AdamW {
                beta1: 0.9,
                beta2: 0.99,
                eps: 1e-8,
                weight_decay: 0.1,
            },
            schedule: ScheduleSpec::WarmupCosine {
                learning_rate: 3e-3,
                warmup_steps: 50,
                total_steps: 2_000,
                final_fraction: 0.1,
            },
            clip: Some(1.0),
            seed: 42,
            eval_every: 25,
            eval_examples: 128,
            compare: true,
            runs: Reduction::ALL.to_vec(),
        }
    }
}

impl GptLabConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.model.validate("model")?;
        self.optimizer.validate("optimizer")?;
        self.schedule.validate("schedule")?;
        if !(1..=1024).contains(&self.batch) {
            return Err(ConfigError::new(
                "batch",
                format!("must be between 1 and 1024, got {}", self.batch),
            ));
        }
        if self.micro_batches == 0 || !self.batch.is_multiple_of(self.micro_batches) {
            return Err(ConfigError::new(
                "micro_batches",
                format!(
                    "must divide the batch of {} examples, got {}",
                    self.batch, self.micro_batches
                ),
            ));
        }
        if let Some(clip) = self.clip {
            if !(clip > 0.0 && clip.is_finite()) {
                return Err(ConfigError::new(
                    "clip",
                    format!("must be a positive number, got {clip}"),
                ));
            }
        }
        if self.runs.is_empty() {
            return Err(ConfigError::new("runs", "name at least one run"));
        }
        Ok(())
    }

    /// The settings and that `corpus` fits them: cut for the model's context, a batch of
    /// training examples, every example 2 to context + 1 ids of its vocabulary, and held-out
    /// text wherever a validation loss is measured. Every engine's lab checks this first.
    pub fn check_corpus(&self, corpus: &Corpus) -> Result<(), ConfigError> {
        self.validate()?;
        if corpus.context != self.model.context {
            return Err(ConfigError::new(
                "model.context",
                format!(
                    "the text was cut for a context of {}, not {}",
                    corpus.context, self.model.context
                ),
            ));
        }
        if corpus.train.len() < self.batch {
            return Err(ConfigError::new(
                "batch",
                format!(
                    "the text has {} training examples, fewer than a batch of {}",
                    corpus.train.len(),
                    self.batch
                ),
            ));
        }
        let limit = self.model.context + 1;
        let vocabulary = corpus.vocabulary.len();
        for (split, examples) in [("train", &corpus.train), ("validation", &corpus.validation)] {
            let misfit = examples
                .iter()
                .find(|e| e.len() < 2 || e.len() > limit || e.iter().any(|&id| id as usize >= vocabulary));
            if let Some(example) = misfit {
                return Err(ConfigError::new(
                    "text",
                    format!(
                        "a {split} example of {} characters does not fit the model: 2 to {limit} characters of its {vocabulary}-character vocabulary",
                        example.len()
                    ),
                ));
            }
        }
        if self.eval_every > 0 && (self.eval_examples == 0 || corpus.validation.is_empty()) {
            return Err(ConfigError::new(
                "eval_examples",
                "measuring the validation loss needs at least one held-out example",
            ));
        }
        Ok(())
    }

    /// The held-out examples the validation loss is measured on.
    pub fn validation_examples<'c>(&self, corpus: &'c Corpus) -> &'c [Vec<u32>] {
        &corpus.validation[..self.eval_examples.min(corpus.validation.len())]
    }
}

/// One micro-batch of a step's window, as every accumulated run saw it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MicroBatchTokens {
    pub examples: usize,
    /// Predicted (non-padding) tokens.
    pub tokens: usize,
    /// Input positions once padded to the micro-batch's longest example.
    pub padded_tokens: usize,
}

/// What one run did at one optimizer step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GptStepRecord {
    pub step: u64,
    /// The step's mean loss per predicted token, nats, whatever the run's reduction.
    pub train_loss: f64,
    /// The norm of the gradient the run computed, before clipping.
    pub grad_norm: f64,
    /// Against the full batch's gradient at the same weights (accumulated runs, when compared).
    pub grad_relative_error: Option<f64>,
    pub grad_cosine: Option<f64>,
    /// Mean loss per validation character, nats (bits: divide by ln 2), when measured.
    pub validation_loss: Option<f64>,
    pub learning_rate: f64,
}

/// The runs' shared order of examples: batch after batch, reshuffled at each epoch's end with
/// the lab's seed. Every engine's lab draws its steps from one, so all see the same examples.
#[derive(Debug, Clone)]
pub struct ExampleOrder {
    seed: u64,
    order: Vec<usize>,
    cursor: usize,
    epoch: u64,
}

impl ExampleOrder {
    /// The order of `count` training examples.
    pub fn new(seed: u64, count: usize) -> Self {
        let mut order = Self {
            seed,
            order: (0..count).collect(),
            cursor: 0,
            epoch: 0,
        };
        order.shuffle();
        order
    }

    fn shuffle(&mut self) {
        let mut rng = SeededRng::derive(self.seed, 300 + self.epoch);
        self.order.sort_unstable();
        rng.shuffle(&mut self.order);
    }

    /// The next `batch` examples.
    pub fn next_batch(&mut self, batch: usize) -> Vec<usize> {
        let mut examples = Vec::with_capacity(batch);
        while examples.len() < batch && !self.order.is_empty() {
            if self.cursor == self.order.len() {
                self.epoch += 1;
                self.cursor = 0;
                self.shuffle();
            }
            examples.push(self.order[self.cursor]);
            self.cursor += 1;
        }
        examples
    }
}

/// One optimizer step as every run takes it, whatever the engine: its examples, their
/// micro-batches (the window every accumulated run divides), the learning rate and whether the
/// validation loss is measured after it.
#[derive(Debug, Clone, PartialEq)]
pub struct GptStepPlan {
    pub step: u64,
    /// Indices into the corpus's training examples, in order.
    pub batch: Vec<usize>,
    /// Examples per micro-batch: micro-batch m is the m-th run of this many in `batch`.
    pub per_micro_batch: usize,
    pub window: Vec<MicroBatchTokens>,
    /// Predicted tokens of the whole step.
    pub window_tokens: usize,
    pub learning_rate: f64,
    pub evaluate: bool,
}

impl GptStepPlan {
    /// Step `step` over `batch` (examples of `corpus`'s training split).
    pub fn new(config: &GptLabConfig, corpus: &Corpus, step: u64, batch: Vec<usize>) -> Self {
        let per_micro_batch = (batch.len() / config.micro_batches.max(1)).max(1);
        let window: Vec<MicroBatchTokens> = batch
            .chunks(per_micro_batch)
            .map(|m| {
                let examples: Vec<&[u32]> = m.iter().map(|&i| corpus.train[i].as_slice()).collect();
                MicroBatchTokens {
                    examples: m.len(),
                    tokens: examples.iter().map(|e| e.len() - 1).sum(),
                    padded_tokens: padded_tokens(&examples),
                }
            })
            .collect();
        let window_tokens = window.iter().map(|m| m.tokens).sum();
        // After the first step (a curve starts at once), then every `eval_every` steps.
        let evaluate = config.eval_every > 0 && (step == 0 || (step + 1).is_multiple_of(config.eval_every));
        Self {
            step,
            per_micro_batch,
            window,
            window_tokens,
            learning_rate: config.schedule.learning_rate(step),
            evaluate,
            batch,
        }
    }

    /// The examples of the step, in order.
    pub fn examples<'c>(&self, corpus: &'c Corpus) -> Vec<&'c [u32]> {
        self.batch.iter().map(|&i| corpus.train[i].as_slice()).collect()
    }

    /// The passes `reduction` takes: each one's examples (a range of [`Self::batch`]) and the
    /// weight of each of its tokens (the whole batch at `1 / T` for the full batch; each
    /// micro-batch at its reduction's weight for the accumulated runs).
    pub fn passes(&self, reduction: Reduction) -> Vec<(std::ops::Range<usize>, f64)> {
        if !reduction.accumulates() {
            let weight = Reduction::FullBatch.token_weight(self.window_tokens, self.window_tokens, 1);
            return vec![(0..self.batch.len(), weight)];
        }
        let n = self.window.len();
        self.window
            .iter()
            .enumerate()
            .map(|(m, tokens)| {
                let start = m * self.per_micro_batch;
                let weight = reduction.token_weight(tokens.tokens, self.window_tokens, n);
                (start..start + tokens.examples, weight)
            })
            .collect()
    }

    /// What a run did at this step: its summed token losses (nats), the norm of its gradient
    /// before clipping, and its comparison with the full batch's gradient, if any.
    pub fn record(&self, loss_sum: f64, grad_norm: f64, comparison: Option<(f64, f64)>) -> GptStepRecord {
        GptStepRecord {
            step: self.step,
            train_loss: loss_sum / self.window_tokens.max(1) as f64,
            grad_norm,
            grad_relative_error: comparison.map(|c| c.0),
            grad_cosine: comparison.map(|c| c.1),
            validation_loss: None,
            learning_rate: self.learning_rate,
        }
    }
}

/// One run: its reduction, weights, optimizer state and history.
#[derive(Debug, Clone)]
pub struct GptRun<T: Real> {
    pub reduction: Reduction,
    params: Vec<T>,
    grads: Vec<T>,
    optimizer: OptimizerState<T>,
    pub history: Vec<GptStepRecord>,
}

impl<T: Real> GptRun<T> {
    pub fn params(&self) -> &[T] {
        &self.params
    }
    /// The gradient of the last step, before clipping.
    pub fn gradient(&self) -> &[T] {
        &self.grads
    }
}

/// The runs side by side.
#[derive(Debug, Clone)]
pub struct GptLab<T: Real> {
    config: GptLabConfig,
    corpus: Corpus,
    model: GptModel<T>,
    runs: Vec<GptRun<T>>,
    order: ExampleOrder,
    step: u64,
    reference: Vec<T>,
    /// The gradient a run applies (clipped), reused from step to step.
    applied: Vec<T>,
    batch: Vec<usize>,
    window: Vec<MicroBatchTokens>,
}

impl<T: Real> GptLab<T> {
    pub fn new(config: GptLabConfig, corpus: Corpus) -> Result<Self, ConfigError> {
        config.check_corpus(&corpus)?;
        let layout = GptLayout::new(config.model, corpus.vocabulary.len());
        let initial: Vec<T> = layout.initialize(config.seed).into_iter().map(T::from_f64).collect();
        let decayed = layout.decay_mask();
        let runs = config
            .runs
            .iter()
            .map(|&reduction| -> Result<GptRun<T>, ConfigError> {
                Ok(GptRun {
                    reduction,
                    params: initial.clone(),
                    grads: vec![T::ZERO; initial.len()],
                    optimizer: OptimizerState::new(config.optimizer, initial.len()).with_decay_mask(decayed.clone())?,
                    history: Vec::new(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            model: GptModel::new(layout),
            order: ExampleOrder::new(config.seed, corpus.train.len()),
            corpus,
            runs,
            step: 0,
            reference: vec![T::ZERO; initial.len()],
            applied: vec![T::ZERO; initial.len()],
            batch: Vec::new(),
            window: Vec::new(),
            config,
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
    pub fn runs(&self) -> &[GptRun<T>] {
        &self.runs
    }
    /// Optimizer steps taken.
    pub fn step_count(&self) -> u64 {
        self.step
    }
    /// The last step's examples, as indices into the corpus's training examples, in order
    /// (micro-batch m holds the m-th `batch / N` of them).
    pub fn last_batch(&self) -> &[usize] {
        &self.batch
    }
    /// The last step's micro-batches (the window every accumulated run divided).
    pub fn window(&self) -> &[MicroBatchTokens] {
        &self.window
    }
    /// The model's workspace, for what computes with it besides the step (`trace`).
    pub(super) fn model_mut(&mut self) -> &mut GptModel<T> {
        &mut self.model
    }

    /// What the engine's buffers that keep activations for the backward have allocated (the
    /// largest pass so far, of any run: see `memory`).
    pub fn activation_bytes(&self) -> super::memory::GptPassBytes {
        self.model.activation_bytes()
    }

    /// The records `sent` (one count per run) does not cover yet, and the last window; moves
    /// `sent` on. What a worker sends the page after some steps.
    pub fn update_since(&self, sent: &mut Vec<usize>) -> GptUpdate {
        let histories: Vec<&[GptStepRecord]> = self.runs.iter().map(|r| r.history.as_slice()).collect();
        GptUpdate::since(&histories, sent, self.step, &self.window)
    }

    /// One optimizer step of every run.
    pub fn step(&mut self) {
        let batch = self.order.next_batch(self.config.batch);
        let plan = GptStepPlan::new(&self.config, &self.corpus, self.step, batch);
        let examples = plan.examples(&self.corpus);
        let full_batch = plan.passes(Reduction::FullBatch);
        for r in 0..self.runs.len() {
            let run = &mut self.runs[r];
            run.grads.fill(T::ZERO);
            let mut loss = T::ZERO;
            for (range, weight) in plan.passes(run.reduction) {
                let weight = T::from_f64(weight);
                loss = self
                    .model
                    .forward_backward(&run.params, &examples[range], weight, loss, &mut run.grads);
            }
            let comparison = if self.config.compare && run.reduction.accumulates() {
                self.reference.fill(T::ZERO);
                for (range, weight) in &full_batch {
                    let weight = T::from_f64(*weight);
                    let examples = &examples[range.clone()];
                    self.model
                        .forward_backward(&run.params, examples, weight, T::ZERO, &mut self.reference);
                }
                Some(compare_gradients(&run.grads, &self.reference))
            } else {
                None
            };
            let grad_norm = global_norm(&run.grads).to_f64();
            self.applied.copy_from_slice(&run.grads);
            if let Some(max_norm) = self.config.clip {
                clip_by_global_norm(&mut self.applied, max_norm);
            }
            run.optimizer.step(&mut run.params, &self.applied, plan.learning_rate);
            run.history.push(plan.record(loss.to_f64(), grad_norm, comparison));
        }
        if plan.evaluate {
            for r in 0..self.runs.len() {
                let loss = self.validation_loss(r);
                if let Some(record) = self.runs[r].history.last_mut() {
                    record.validation_loss = Some(loss);
                }
            }
        }
        self.batch = plan.batch;
        self.window = plan.window;
        self.step += 1;
    }

    /// Run `run`'s mean loss per validation character (nats), over the configured examples.
    pub fn validation_loss(&mut self, run: usize) -> f64 {
        let examples: Vec<&[u32]> = self
            .config
            .validation_examples(&self.corpus)
            .iter()
            .map(Vec::as_slice)
            .collect();
        let tokens: usize = examples.iter().map(|e| e.len() - 1).sum();
        let mut total = T::ZERO;
        for chunk in examples.chunks(64) {
            total = self.model.loss(&self.runs[run].params, chunk, total);
        }
        total.to_f64() / tokens.max(1) as f64
    }

    /// `count` characters that run `run` writes after `prompt` (characters the text lacks are
    /// left out of the prompt), greedy at temperature 0, else sampled with `seed`.
    pub fn sample(&mut self, run: usize, prompt: &str, count: usize, temperature: f64, seed: u64) -> String {
        let params = std::mem::take(&mut self.runs[run].params);
        let text = self.sample_with(&params, prompt, count, temperature, seed);
        self.runs[run].params = params;
        text.unwrap_or_default()
    }

    /// [`Self::sample`] from other weights of this lab's model (another engine's run: the page
    /// samples the WebGPU engine's weights with this CPU sampler). `None` for weights of another
    /// size.
    pub fn sample_with(
        &mut self,
        params: &[T],
        prompt: &str,
        count: usize,
        temperature: f64,
        seed: u64,
    ) -> Option<String> {
        if params.len() != self.model.layout().parameter_count {
            return None;
        }
        let vocabulary = &self.corpus.vocabulary;
        let ids: Vec<u32> = prompt.chars().filter_map(|c| vocabulary.id(c)).collect();
        let ids = if ids.is_empty() { vec![0] } else { ids };
        let line_break = vocabulary.id('\n');
        let generated = self.model.generate(params, &ids, count, temperature, seed, line_break);
        Some(self.corpus.vocabulary.decode(&generated))
    }
}

/// What a lab hands a copy of it elsewhere (the page, from its worker): each run's records since
/// the last update, and the last step's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GptUpdate {
    pub steps_taken: u64,
    pub records: Vec<Vec<GptStepRecord>>,
    pub window: Vec<MicroBatchTokens>,
}

impl GptUpdate {
    /// The records of `histories` (one per run) that `sent` (one count per run) does not cover
    /// yet, after `steps_taken` steps whose last window was `window`; moves `sent` on.
    pub fn since(
        histories: &[&[GptStepRecord]],
        sent: &mut Vec<usize>,
        steps_taken: u64,
        window: &[MicroBatchTokens],
    ) -> Self {
        sent.resize(histories.len(), 0);
        let records = histories
            .iter()
            .zip(sent.iter_mut())
            .map(|(history, sent)| {
                let new = history.get(*sent..).unwrap_or_default().to_vec();
                *sent = history.len();
                new
            })
            .collect();
        Self {
            steps_taken,
            records,
            window: window.to_vec(),
        }
    }
}

/// A lab's numbers as a page holds them: each run's history, built from updates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GptMirror {
    pub reductions: Vec<Reduction>,
    pub histories: Vec<Vec<GptStepRecord>>,
    pub window: Vec<MicroBatchTokens>,
    pub steps_taken: u64,
}

impl GptMirror {
    pub fn new(reductions: Vec<Reduction>) -> Self {
        Self {
            histories: vec![Vec::new(); reductions.len()],
            reductions,
            ..Self::default()
        }
    }

    pub fn apply(&mut self, update: GptUpdate) {
        for (history, records) in self.histories.iter_mut().zip(update.records) {
            history.extend(records);
        }
        self.window = update.window;
        self.steps_taken = update.steps_taken;
    }

    /// The run with `reduction`, if the lab has one.
    pub fn history(&self, reduction: Reduction) -> Option<&[GptStepRecord]> {
        let index = self.reductions.iter().position(|&r| r == reduction)?;
        self.histories.get(index).map(Vec::as_slice)
    }
}
