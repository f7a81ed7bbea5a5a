//! Why people accumulate (`tiny_gpt_memory`): the activations an engine keeps for the backward of
//! one pass over a micro-batch, by what they hold, and the time an optimizer step takes, for the
//! full batch and for N micro-batches of the same step.
//!
//! The byte counts are the engines' real buffers: [`GptPassBytes::cpu`] is what the CPU engine's
//! `GptModel` allocates (its buffers grow exactly to the largest pass they meet; tests hold the
//! two together), [`GptPassBytes::webgpu`] what the WebGPU engine's workspace allocates
//! (`gpu::gpt::GptGpuModel`, tested there). Neither engine pads: a framework that pads each
//! micro-batch to its longest example holds `padded_tokens` rows instead of the real ones.

use serde::{Deserialize, Serialize};

use super::lab::{GptLab, GptLabConfig, Reduction};
use super::spec::GptLayout;
use super::text::Corpus;
use crate::real::Real;
use crate::ConfigError;

/// What one pass keeps for its backward, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GptPassBytes {
    /// The residual stream, LayerNorms, q/k/v, attention outputs and MLP activations: a fixed
    /// number of values per token (`≈ layers · 20 · width`).
    pub per_token: u64,
    /// Attention's probabilities, `layers · heads · Σ len²` over the pass's examples: the
    /// context² term.
    pub attention: u64,
    /// The logits and their probabilities, `2 · tokens · vocabulary`.
    pub logits: u64,
}

impl GptPassBytes {
    pub fn total(&self) -> u64 {
        self.per_token + self.attention + self.logits
    }

    /// The CPU engine's buffers for a pass of `rows` tokens whose examples' attention takes
    /// `probs` values per layer, `value_bytes` per value (4 in f32, 8 in f64).
    pub fn cpu(layout: &GptLayout, rows: usize, probs: usize, value_bytes: usize) -> Self {
        let (d, layers, v) = (layout.spec.embedding, layout.spec.layers, layout.vocab);
        // A LayerNorm keeps x̂ and its output (rows · d each) and 1/σ per row.
        let norm = 2 * rows * d + rows;
        // ln_1, qkv, attention output, ln_2, c_fc's output, GELU's output and its tanh.
        let block = 2 * norm + 3 * rows * d + rows * d + 3 * 4 * rows * d;
        let bytes = |values: usize| (values * value_bytes) as u64;
        Self {
            per_token: bytes(rows * d + layers * block + norm),
            attention: bytes(layers * probs),
            logits: bytes(2 * rows * v),
        }
    }

    /// The WebGPU engine's buffers for the same pass (f32 storage buffers of whole vec4s).
    pub fn webgpu(layout: &GptLayout, rows: usize, probs: usize) -> Self {
        let (d, layers, v) = (layout.spec.embedding, layout.spec.layers, layout.vocab);
        let buffer = |values: usize| 4 * values.max(1).next_multiple_of(4) as u64;
        // A LayerNorm keeps x̂, its output and [mean, variance, 1/σ] per row.
        let norm = 2 * buffer(rows * d) + buffer(3 * rows);
        // ln_1, qkv, attention output, ln_2, c_fc's output and GELU's output.
        let block = 2 * norm + buffer(3 * rows * d) + buffer(rows * d) + 2 * buffer(4 * rows * d);
        Self {
            per_token: buffer(rows * d) + layers as u64 * block + norm,
            attention: layers as u64 * buffer(probs),
            // Probabilities, their gradient and each row's correctness.
            logits: 2 * buffer(rows * v) + buffer(rows),
        }
    }
}

/// Attention's values per layer for `examples`: `heads · len²` each (len = input positions).
pub fn attention_values(heads: usize, examples: &[&[u32]]) -> usize {
    examples.iter().map(|e| heads * e.len().saturating_sub(1).pow(2)).sum()
}

/// One row of the memory experiment: the step cut into `micro_batches` passes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GptMemoryRow {
    pub micro_batches: usize,
    pub examples_per_pass: usize,
    /// Tokens of the step's largest pass.
    pub tokens_per_pass: usize,
    /// What the CPU engine allocated for its passes (its buffers after the timed steps).
    pub bytes: GptPassBytes,
    /// Milliseconds per optimizer step (the mean of the timed steps, by `now_ms`).
    pub ms_per_step: f64,
}

/// The micro-batch counts measured: the full batch, then halving the micro-batch down to one
/// example (those that divide the batch).
pub fn micro_batch_counts(batch: usize) -> Vec<usize> {
    (0..)
        .map(|k| 1usize << k)
        .take_while(|&n| n <= batch)
        .filter(|&n| batch.is_multiple_of(n))
        .collect()
}

/// The memory experiment on the CPU engine: for each N of [`micro_batch_counts`], one run that
/// accumulates `config.batch` examples in N micro-batches (the full batch for N = 1), one warm-up
/// step, then `steps` timed steps. `now_ms` is the engine's clock.
pub fn measure<T: Real>(
    config: &GptLabConfig,
    corpus: &Corpus,
    steps: u64,
    now_ms: &dyn Fn() -> f64,
) -> Result<Vec<GptMemoryRow>, ConfigError> {
    micro_batch_counts(config.batch)
        .into_iter()
        .map(|n| {
            let run = if n == 1 {
                Reduction::FullBatch
            } else {
                Reduction::WindowTokens
            };
            let config = GptLabConfig {
                micro_batches: n,
                runs: vec![run],
                compare: false,
                eval_every: 0,
                ..config.clone()
            };
            let mut lab = GptLab::<T>::new(config, corpus.clone())?;
            lab.step();
            let mut tokens_per_pass = lab.window().iter().map(|m| m.tokens).max().unwrap_or(0);
            let started = now_ms();
            for _ in 0..steps {
                lab.step();
                tokens_per_pass = tokens_per_pass.max(lab.window().iter().map(|m| m.tokens).max().unwrap_or(0));
            }
            let ms_per_step = (now_ms() - started) / steps.max(1) as f64;
            Ok(GptMemoryRow {
                micro_batches: n,
                examples_per_pass: lab.config().batch / n,
                tokens_per_pass,
                bytes: lab.activation_bytes(),
                ms_per_step,
            })
        })
        .collect()
}
