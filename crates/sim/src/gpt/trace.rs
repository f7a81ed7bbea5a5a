//! Inside one optimizer step of the tiny GPT: each run's passes over a step's examples, one
//! after the other, as its gradient buffer fills: each micro-batch's tokens, its summed token
//! loss, the weight the run gives each of its tokens (the division it applies), and the buffer
//! after it against the full batch's gradient at the same weights. The step-through view shows
//! these; computing them changes no run.

use serde::{Deserialize, Serialize};

use super::lab::{GptLab, GptStepPlan, Reduction};
use crate::metrics::compare_gradients;
use crate::optim::global_norm;
use crate::real::Real;

/// One pass of a run, and its gradient buffer after it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GptPassTrace {
    pub examples: usize,
    /// Predicted tokens of the pass.
    pub tokens: usize,
    /// The pass's summed token losses (nats).
    pub loss_sum: f64,
    /// The weight the run gives each of the pass's tokens.
    pub token_weight: f64,
    /// The buffer's norm after this pass was added.
    pub buffer_norm: f64,
    /// The buffer against the full batch's gradient at the same weights (relative): what is
    /// still missing while it fills, the run's error once full.
    pub buffer_error: f64,
}

/// One run's passes over the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GptRunTrace {
    pub reduction: Reduction,
    pub passes: Vec<GptPassTrace>,
    /// The full batch's gradient norm at the run's weights.
    pub full_batch_norm: f64,
}

/// Every run's passes over one step's examples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GptStepTrace {
    /// Predicted tokens of the whole step (the full batch's divisor).
    pub window_tokens: usize,
    pub runs: Vec<GptRunTrace>,
}

impl<T: Real> GptLab<T> {
    /// The passes of every run over the examples `batch` (indices into the training examples;
    /// the last step's when empty) at the runs' current weights, or at `weights` (one vector per
    /// run: another engine's). `None` for weights of another shape or an index out of range.
    pub fn trace_step(&mut self, batch: &[usize], weights: Option<&[Vec<T>]>) -> Option<GptStepTrace> {
        let batch = if batch.is_empty() {
            self.last_batch().to_vec()
        } else {
            batch.to_vec()
        };
        let count = self.layout().parameter_count;
        if batch.is_empty() || batch.iter().any(|&i| i >= self.corpus().train.len()) {
            return None;
        }
        if let Some(w) = weights {
            if w.len() != self.runs().len() || w.iter().any(|w| w.len() != count) {
                return None;
            }
        }
        let plan = GptStepPlan::new(self.config(), self.corpus(), self.step_count(), batch);
        let corpus = self.corpus().clone();
        let examples = plan.examples(&corpus);
        let (full_range, full_weight) = plan.passes(Reduction::FullBatch).into_iter().next()?;
        let mut reference = vec![T::ZERO; count];
        let mut buffer = vec![T::ZERO; count];
        let mut runs = Vec::with_capacity(self.runs().len());
        for r in 0..self.runs().len() {
            let reduction = self.runs()[r].reduction;
            let params: Vec<T> = match weights {
                Some(w) => w[r].clone(),
                None => self.runs()[r].params().to_vec(),
            };
            reference.fill(T::ZERO);
            let model = self.model_mut();
            model.forward_backward(
                &params,
                &examples[full_range.clone()],
                T::from_f64(full_weight),
                T::ZERO,
                &mut reference,
            );
            buffer.fill(T::ZERO);
            let passes = plan
                .passes(reduction)
                .into_iter()
                .map(|(range, weight)| {
                    let pass = &examples[range];
                    let loss = model.forward_backward(&params, pass, T::from_f64(weight), T::ZERO, &mut buffer);
                    GptPassTrace {
                        examples: pass.len(),
                        tokens: pass.iter().map(|e| e.len() - 1).sum(),
                        loss_sum: loss.to_f64(),
                        token_weight: weight,
                        buffer_norm: global_norm(&buffer).to_f64(),
                        buffer_error: compare_gradients(&buffer, &reference).0,
                    }
                })
                .collect();
            runs.push(GptRunTrace {
                reduction,
                passes,
                full_batch_norm: global_norm(&reference).to_f64(),
            });
        }
        Some(GptStepTrace {
            window_tokens: plan.window_tokens,
            runs,
        })
    }
}
