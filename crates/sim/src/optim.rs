//! Optimizers, gradient clipping and learning-rate schedules, on flat parameter vectors.

use serde::{Deserialize, Serialize};

use super::real::Real;
use super::ConfigError;

/// The optimizer of a run. Formulas follow PyTorch's `SGD`, `Adam` and `AdamW`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum OptimizerSpec {
    Sgd {
        #[serde(default)]
        weight_decay: f64,
    },
    Momentum {
        #[serde(default = "default_momentum")]
        momentum: f64,
        #[serde(default)]
        weight_decay: f64,
    },
    /// Adam with L2 weight decay added to the gradient.
    Adam {
        #[serde(default = "default_beta1")]
        beta1: f64,
        #[serde(default = "default_beta2")]
        beta2: f64,
        #[serde(default = "default_adam_eps")]
        eps: f64,
        #[serde(default)]
        weight_decay: f64,
    },
    /// Adam with decoupled weight decay.
    AdamW {
        #[serde(default = "default_beta1")]
        beta1: f64,
        #[serde(default = "default_beta2")]
        beta2: f64,
        #[serde(default = "default_adam_eps")]
        eps: f64,
        #[serde(default = "default_adamw_decay")]
        weight_decay: f64,
    },
}

fn default_momentum() -> f64 {
    0.9
}
fn default_beta1() -> f64 {
    0.9
}
fn default_beta2() -> f64 {
    0.999
}
fn default_adam_eps() -> f64 {
    1e-8
}
fn default_adamw_decay() -> f64 {
    0.01
}

impl Default for OptimizerSpec {
    fn default() -> Self {
        OptimizerSpec::Sgd { weight_decay: 0.0 }
    }
}

impl OptimizerSpec {
    pub fn adam() -> Self {
        OptimizerSpec::Adam {
            beta1: default_beta1(),
            beta2: default_beta2(),
            eps: default_adam_eps(),
            weight_decay: 0.0,
        }
    }
    pub fn adamw() -> Self {
        OptimizerSpec::AdamW {
            beta1: default_beta1(),
            beta2: default_beta2(),
            eps: default_adam_eps(),
            weight_decay: default_adamw_decay(),
        }
    }
    pub fn momentum() -> Self {
        OptimizerSpec::Momentum {
            momentum: default_momentum(),
            weight_decay: 0.0,
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            OptimizerSpec::Sgd { .. } => "SGD",
            OptimizerSpec::Momentum { .. } => "SGD+momentum",
            OptimizerSpec::Adam { .. } => "Adam",
            OptimizerSpec::AdamW { .. } => "AdamW",
        }
    }

    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        let unit = |name: &str, v: f64| {
            if (0.0..1.0).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::new(
                    format!("{field}.{name}"),
                    format!("must be in [0, 1), got {v}"),
                ))
            }
        };
        let decay = |v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::new(
                    format!("{field}.weight_decay"),
                    format!("must be in [0, 1], got {v}"),
                ))
            }
        };
        match *self {
            OptimizerSpec::Sgd { weight_decay } => decay(weight_decay),
            OptimizerSpec::Momentum { momentum, weight_decay } => {
                unit("momentum", momentum)?;
                decay(weight_decay)
            }
            OptimizerSpec::Adam {
                beta1,
                beta2,
                eps,
                weight_decay,
            }
            | OptimizerSpec::AdamW {
                beta1,
                beta2,
                eps,
                weight_decay,
            } => {
                unit("beta1", beta1)?;
                unit("beta2", beta2)?;
                if !(eps > 0.0 && eps < 1.0) {
                    return Err(ConfigError::new(
                        format!("{field}.eps"),
                        format!("must be in (0, 1), got {eps}"),
                    ));
                }
                decay(weight_decay)
            }
        }
    }
}

/// Optimizer state for one run.
#[derive(Debug, Clone)]
pub struct OptimizerState<T: Real> {
    spec: OptimizerSpec,
    /// Momentum buffer, or Adam's first moment.
    first: Vec<T>,
    /// Adam's second moment.
    second: Vec<T>,
    steps_taken: u32,
    parameter_count: usize,
    /// Which parameters weight decay applies to; all when `None`. (nanoGPT decays its weight
    /// matrices and embeddings, never biases or LayerNorm parameters.)
    decayed: Option<Vec<bool>>,
}

impl<T: Real> OptimizerState<T> {
    pub fn new(spec: OptimizerSpec, parameter_count: usize) -> Self {
        let (first, second) = match spec {
            OptimizerSpec::Sgd { .. } => (Vec::new(), Vec::new()),
            OptimizerSpec::Momentum { .. } => (vec![T::ZERO; parameter_count], Vec::new()),
            OptimizerSpec::Adam { .. } | OptimizerSpec::AdamW { .. } => {
                (vec![T::ZERO; parameter_count], vec![T::ZERO; parameter_count])
            }
        };
        Self {
            spec,
            first,
            second,
            steps_taken: 0,
            parameter_count,
            decayed: None,
        }
    }

    /// Weight decay only where `decayed` is true: one flag per parameter, `parameter_count` of
    /// them (as [`OptimizerState::new`] was given).
    pub fn with_decay_mask(mut self, decayed: Vec<bool>) -> Result<Self, ConfigError> {
        let expected = self.parameter_count;
        if decayed.len() != expected {
            return Err(ConfigError::new(
                "optimizer.weight_decay",
                format!("a decay flag per parameter is needed: {} for {expected}", decayed.len()),
            ));
        }
        self.decayed = Some(decayed);
        Ok(self)
    }

    pub fn steps_taken(&self) -> u32 {
        self.steps_taken
    }

    /// One update of `params` from `grads` at learning rate `learning_rate`.
    pub fn step(&mut self, params: &mut [T], grads: &[T], learning_rate: f64) {
        self.steps_taken += 1;
        let lr = T::from_f64(learning_rate);
        match self.spec {
            OptimizerSpec::Sgd { weight_decay } => {
                let wd = T::from_f64(weight_decay);
                let decayed = self.decayed.as_deref();
                for (i, (p, &g)) in params.iter_mut().zip(grads).enumerate() {
                    let wd = decay_at(decayed, i, wd);
                    *p -= lr * (g + wd * *p);
                }
            }
            OptimizerSpec::Momentum { momentum, weight_decay } => {
                let (mu, wd) = (T::from_f64(momentum), T::from_f64(weight_decay));
                let decayed = self.decayed.as_deref();
                for (i, ((p, &g), v)) in params.iter_mut().zip(grads).zip(&mut self.first).enumerate() {
                    let wd = decay_at(decayed, i, wd);
                    *v = mu * *v + g + wd * *p;
                    *p -= lr * *v;
                }
            }
            OptimizerSpec::Adam {
                beta1,
                beta2,
                eps,
                weight_decay,
            }
            | OptimizerSpec::AdamW {
                beta1,
                beta2,
                eps,
                weight_decay,
            } => {
                let decoupled = matches!(self.spec, OptimizerSpec::AdamW { .. });
                let t = self.steps_taken as i32;
                let (b1, b2) = (T::from_f64(beta1), T::from_f64(beta2));
                let correction1 = T::ONE - b1.powi(t);
                let correction2 = T::ONE - b2.powi(t);
                let (eps, wd) = (T::from_f64(eps), T::from_f64(weight_decay));
                let decayed = self.decayed.as_deref();
                for (i, (((p, &g), m), v)) in params
                    .iter_mut()
                    .zip(grads)
                    .zip(&mut self.first)
                    .zip(&mut self.second)
                    .enumerate()
                {
                    let wd = decay_at(decayed, i, wd);
                    let g = if decoupled {
                        *p -= lr * wd * *p;
                        g
                    } else {
                        g + wd * *p
                    };
                    *m = b1 * *m + (T::ONE - b1) * g;
                    *v = b2 * *v + (T::ONE - b2) * g * g;
                    let m_hat = *m / correction1;
                    let v_hat = *v / correction2;
                    *p -= lr * m_hat / (v_hat.sqrt() + eps);
                }
            }
        }
    }
}

/// The weight decay of parameter `index`: none where the mask says so.
#[inline(always)]
fn decay_at<T: Real>(decayed: Option<&[bool]>, index: usize, weight_decay: T) -> T {
    if decayed.is_some_and(|mask| mask.get(index) == Some(&false)) {
        T::ZERO
    } else {
        weight_decay
    }
}

/// Global L2 norm of a gradient vector.
pub fn global_norm<T: Real>(grads: &[T]) -> T {
    grads.iter().fold(T::ZERO, |acc, &g| acc + g * g).sqrt()
}

/// PyTorch's `clip_grad_norm_`: scale by `max_norm / (norm + 1e-6)` when that is below 1.
/// Returns the norm before clipping.
pub fn clip_by_global_norm<T: Real>(grads: &mut [T], max_norm: f64) -> Clipping {
    let norm = global_norm(grads).to_f64();
    let coefficient = max_norm / (norm + 1e-6);
    if coefficient < 1.0 {
        let c = T::from_f64(coefficient);
        for g in grads {
            *g *= c;
        }
    }
    Clipping {
        norm,
        factor: coefficient.min(1.0),
    }
}

/// What one clipping did: the norm it saw and the factor it applied (1 = left alone).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clipping {
    pub norm: f64,
    pub factor: f64,
}

/// How the learning rate changes over optimizer steps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScheduleSpec {
    Constant {
        learning_rate: f64,
    },
    /// Linear warm-up from 0 to `learning_rate`, then cosine decay to `final_fraction * learning_rate`
    /// at `total_steps`; constant after that.
    WarmupCosine {
        learning_rate: f64,
        warmup_steps: u32,
        total_steps: u32,
        #[serde(default)]
        final_fraction: f64,
    },
}

impl Default for ScheduleSpec {
    fn default() -> Self {
        ScheduleSpec::Constant { learning_rate: 0.1 }
    }
}

pub const MAX_LEARNING_RATE: f64 = 100.0;

impl ScheduleSpec {
    pub fn base_learning_rate(&self) -> f64 {
        match *self {
            ScheduleSpec::Constant { learning_rate } | ScheduleSpec::WarmupCosine { learning_rate, .. } => {
                learning_rate
            }
        }
    }

    /// The learning rate after the scheduler has been stepped `scheduler_steps` times.
    pub fn learning_rate(&self, scheduler_steps: u64) -> f64 {
        match *self {
            ScheduleSpec::Constant { learning_rate } => learning_rate,
            ScheduleSpec::WarmupCosine {
                learning_rate,
                warmup_steps,
                total_steps,
                final_fraction,
            } => {
                let s = scheduler_steps as f64;
                let warmup = f64::from(warmup_steps);
                if s < warmup {
                    return learning_rate * (s + 1.0) / (warmup + 1.0);
                }
                let decay_len = (f64::from(total_steps) - warmup).max(1.0);
                let progress = ((s - warmup) / decay_len).min(1.0);
                let cosine = 0.5 * (1.0 + libm::cos(std::f64::consts::PI * progress));
                learning_rate * (final_fraction + (1.0 - final_fraction) * cosine)
            }
        }
    }

    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        let lr = self.base_learning_rate();
        if !(lr > 0.0 && lr <= MAX_LEARNING_RATE) {
            return Err(ConfigError::new(
                format!("{field}.learning_rate"),
                format!("must be in (0, {MAX_LEARNING_RATE}], got {lr}"),
            ));
        }
        if let ScheduleSpec::WarmupCosine {
            warmup_steps,
            total_steps,
            final_fraction,
            ..
        } = *self
        {
            if total_steps == 0 || warmup_steps >= total_steps {
                return Err(ConfigError::new(
                    format!("{field}.warmup_steps"),
                    format!("must be below total_steps ({total_steps}), got {warmup_steps}"),
                ));
            }
            if !(0.0..=1.0).contains(&final_fraction) {
                return Err(ConfigError::new(
                    format!("{field}.final_fraction"),
                    format!("must be in [0, 1], got {final_fraction}"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nanoGPT's AdamW: decay on the flagged parameters only, and the flags must cover them all.
    #[test]
    fn a_decay_mask_spares_the_parameters_it_names() {
        let spec = OptimizerSpec::AdamW {
            beta1: 0.9,
            beta2: 0.99,
            eps: 1e-8,
            weight_decay: 0.5,
        };
        let mut state = OptimizerState::<f64>::new(spec, 2)
            .with_decay_mask(vec![true, false])
            .expect("one flag per parameter");
        let mut params = [1.0, 1.0];
        state.step(&mut params, &[0.0, 0.0], 0.1);
        assert_eq!(params, [1.0 - 0.1 * 0.5, 1.0]);
        let error = OptimizerState::<f64>::new(spec, 3)
            .with_decay_mask(vec![true])
            .expect_err("too few flags");
        assert!(error.message.contains("1 for 3"), "{error}");
    }

    #[test]
    fn sgd_moves_against_the_gradient() {
        let mut state = OptimizerState::<f64>::new(OptimizerSpec::default(), 2);
        let mut p = vec![1.0, -1.0];
        state.step(&mut p, &[0.5, -2.0], 0.1);
        assert_eq!(p, vec![0.95, -0.8]);
    }

    #[test]
    fn momentum_accumulates_velocity() {
        let mut state = OptimizerState::<f64>::new(OptimizerSpec::momentum(), 1);
        let mut p = vec![0.0];
        state.step(&mut p, &[1.0], 1.0);
        state.step(&mut p, &[1.0], 1.0);
        // v1 = 1, v2 = 0.9 + 1 = 1.9
        assert!((p[0] + 2.9).abs() < 1e-12);
    }

    #[test]
    fn adam_first_step_is_learning_rate_times_sign() {
        let mut state = OptimizerState::<f64>::new(OptimizerSpec::adam(), 2);
        let mut p = vec![0.0, 0.0];
        state.step(&mut p, &[3.0, -0.001], 0.01);
        assert!((p[0] + 0.01).abs() < 1e-9 && (p[1] - 0.01).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn adam_is_invariant_to_gradient_scale_up_to_eps() {
        let grads = [0.3, -1.2, 0.05];
        let run = |scale: f64| {
            let mut state = OptimizerState::<f64>::new(OptimizerSpec::adam(), 3);
            let mut p = vec![0.5; 3];
            for _ in 0..5 {
                let g: Vec<f64> = grads.iter().map(|g| g * scale).collect();
                state.step(&mut p, &g, 0.01);
            }
            p
        };
        let (a, b) = (run(1.0), run(4.0));
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-7);
        }
    }

    #[test]
    fn adamw_decays_decoupled_from_gradient() {
        let mut state = OptimizerState::<f64>::new(OptimizerSpec::adamw(), 1);
        let mut p = vec![2.0];
        state.step(&mut p, &[0.0], 0.1);
        assert!((p[0] - 2.0 * (1.0 - 0.1 * 0.01)).abs() < 1e-12);
    }

    #[test]
    fn clipping_scales_to_the_max_norm_only_when_above() {
        let mut g = vec![3.0f64, 4.0];
        let clipping = clip_by_global_norm(&mut g, 1.0);
        assert_eq!(clipping.norm, 5.0);
        assert!((clipping.factor - 1.0 / (5.0 + 1e-6)).abs() < 1e-15);
        assert!((global_norm(&g) - 1.0).abs() < 1e-6);
        let mut small = vec![0.3f64, 0.4];
        let untouched = clip_by_global_norm(&mut small, 1.0);
        assert_eq!(small, vec![0.3, 0.4]);
        assert_eq!(untouched.factor, 1.0);
    }

    #[test]
    fn warmup_cosine_rises_peaks_and_decays() {
        let s = ScheduleSpec::WarmupCosine {
            learning_rate: 1.0,
            warmup_steps: 4,
            total_steps: 20,
            final_fraction: 0.1,
        };
        assert!(s.learning_rate(0) < s.learning_rate(3));
        assert!((s.learning_rate(4) - 1.0).abs() < 1e-12);
        assert!(s.learning_rate(12) < 1.0 && s.learning_rate(12) > 0.1);
        assert!((s.learning_rate(20) - 0.1).abs() < 1e-12);
        assert!((s.learning_rate(500) - 0.1).abs() < 1e-12);
    }
}
