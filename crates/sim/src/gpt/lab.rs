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
    order: Vec<usize>,
    cursor: usize,
    epoch: u64,
    step: u64,
    reference: Vec<T>,
    /// The gradient a run applies (clipped), reused from step to step.
    applied: Vec<T>,
    batch: Vec<usize>,
    window: Vec<MicroBatchTokens>,
}

impl<T: Real> GptLab<T> {
    pub fn new(config: GptLabConfig, corpus: Corpus) -> Result<Self, ConfigError> {
        config.validate()?;
        if corpus.context != config.model.context {
            return Err(ConfigError::new(
                "model.context",
                format!(
                    "the text was cut for a context of {}, not {}",
                    corpus.context, config.model.context
                ),
            ));
        }
        if corpus.train.len() < config.batch {
            return Err(ConfigError::new(
                "batch",
                format!(
                    "the text has {} training examples, fewer than a batch of {}",
                    corpus.train.len(),
                    config.batch
                ),
            ));
        }
        let limit = config.model.context + 1;
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
        if config.eval_every > 0 && (config.eval_examples == 0 || corpus.validation.is_empty()) {
            return Err(ConfigError::new(
                "eval_examples",
                "measuring the validation loss needs at least one held-out example",
            ));
        }
        let layout = GptLayout::new(config.model, corpus.vocabulary.len());
        let initial: Vec<T> = layout.initialize(config.seed).into_iter().map(T::from_f64).collect();
        let decayed: Vec<bool> = layout
            .tensors
            .iter()
            .flat_map(|t| std::iter::repeat_n(t.decayed, t.len))
            .collect();
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
        let mut lab = Self {
            model: GptModel::new(layout),
            order: (0..corpus.train.len()).collect(),
            corpus,
            runs,
            cursor: 0,
            epoch: 0,
            step: 0,
            reference: vec![T::ZERO; initial.len()],
            applied: vec![T::ZERO; initial.len()],
            batch: Vec::new(),
            window: Vec::new(),
            config,
        };
        lab.shuffle();
        Ok(lab)
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

    fn shuffle(&mut self) {
        let mut rng = SeededRng::derive(self.config.seed, 300 + self.epoch);
        self.order.sort_unstable();
        rng.shuffle(&mut self.order);
    }

    /// The next `batch` examples of the shared order (reshuffled at each epoch's end).
    fn next_batch(&mut self) -> Vec<usize> {
        let mut batch = Vec::with_capacity(self.config.batch);
        while batch.len() < self.config.batch {
            if self.cursor == self.order.len() {
                self.epoch += 1;
                self.cursor = 0;
                self.shuffle();
            }
            batch.push(self.order[self.cursor]);
            self.cursor += 1;
        }
        batch
    }

    /// The records `sent` (one count per run) does not cover yet, and the last window; moves
    /// `sent` on. What a worker sends the page after some steps.
    pub fn update_since(&self, sent: &mut Vec<usize>) -> GptUpdate {
        sent.resize(self.runs.len(), 0);
        let records = self
            .runs
            .iter()
            .zip(sent.iter_mut())
            .map(|(run, sent)| {
                let new = run.history.get(*sent..).unwrap_or_default().to_vec();
                *sent = run.history.len();
                new
            })
            .collect();
        GptUpdate {
            steps_taken: self.step,
            records,
            window: self.window.clone(),
        }
    }

    /// One optimizer step of every run.
    pub fn step(&mut self) {
        self.batch = self.next_batch();
        let examples: Vec<&[u32]> = self.batch.iter().map(|&i| self.corpus.train[i].as_slice()).collect();
        let n = self.config.micro_batches;
        let per_micro = examples.len() / n;
        let micro: Vec<&[&[u32]]> = examples.chunks(per_micro).collect();
        let window_tokens: usize = examples.iter().map(|e| e.len() - 1).sum();
        self.window = micro
            .iter()
            .map(|m| MicroBatchTokens {
                examples: m.len(),
                tokens: m.iter().map(|e| e.len() - 1).sum(),
                padded_tokens: padded_tokens(m),
            })
            .collect();
        let learning_rate = self.config.schedule.learning_rate(self.step);
        let full_weight = T::from_f64(Reduction::FullBatch.token_weight(window_tokens, window_tokens, 1));
        // After the first step (a curve starts at once), then every `eval_every` steps.
        let evaluate =
            self.config.eval_every > 0 && (self.step == 0 || (self.step + 1).is_multiple_of(self.config.eval_every));
        for r in 0..self.runs.len() {
            let run = &mut self.runs[r];
            run.grads.fill(T::ZERO);
            let mut loss = T::ZERO;
            if run.reduction.accumulates() {
                for (m, tokens) in micro.iter().zip(&self.window) {
                    let weight = T::from_f64(run.reduction.token_weight(tokens.tokens, window_tokens, n));
                    loss = self
                        .model
                        .forward_backward(&run.params, m, weight, loss, &mut run.grads);
                }
            } else {
                loss = self
                    .model
                    .forward_backward(&run.params, &examples, full_weight, loss, &mut run.grads);
            }
            let (grad_relative_error, grad_cosine) = if self.config.compare && run.reduction.accumulates() {
                self.reference.fill(T::ZERO);
                self.model
                    .forward_backward(&run.params, &examples, full_weight, T::ZERO, &mut self.reference);
                let (error, cosine) = compare_gradients(&run.grads, &self.reference);
                (Some(error), Some(cosine))
            } else {
                (None, None)
            };
            let grad_norm = global_norm(&run.grads).to_f64();
            self.applied.copy_from_slice(&run.grads);
            if let Some(max_norm) = self.config.clip {
                clip_by_global_norm(&mut self.applied, max_norm);
            }
            run.optimizer.step(&mut run.params, &self.applied, learning_rate);
            run.history.push(GptStepRecord {
                step: self.step,
                train_loss: loss.to_f64() / window_tokens as f64,
                grad_norm,
                grad_relative_error,
                grad_cosine,
                validation_loss: None,
                learning_rate,
            });
        }
        if evaluate {
            for r in 0..self.runs.len() {
                let loss = self.validation_loss(r);
                if let Some(record) = self.runs[r].history.last_mut() {
                    record.validation_loss = Some(loss);
                }
            }
        }
        self.step += 1;
    }

    /// Run `run`'s mean loss per validation character (nats), over the configured examples.
    pub fn validation_loss(&mut self, run: usize) -> f64 {
        let count = self.config.eval_examples.min(self.corpus.validation.len());
        let examples: Vec<&[u32]> = self.corpus.validation[..count].iter().map(Vec::as_slice).collect();
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
        let vocabulary = &self.corpus.vocabulary;
        let ids: Vec<u32> = prompt.chars().filter_map(|c| vocabulary.id(c)).collect();
        let ids = if ids.is_empty() { vec![0] } else { ids };
        let line_break = vocabulary.id('\n');
        let generated = self
            .model
            .generate(&self.runs[run].params, &ids, count, temperature, seed, line_break);
        self.corpus.vocabulary.decode(&generated)
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
