//! Forward passes of every layer, on flat row-major slices (`rows x features`).

use crate::model::{Activation, Norm};
use crate::real::Real;

/// How a forward pass normalizes, in every engine: BatchNorm with the batch's statistics in
/// training (updating the running statistics unless the pass only measures, as the reference
/// gradient's does), with the running statistics in evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassMode {
    Train { update_running_stats: bool },
    Eval,
}

pub(crate) const GELU_C: f64 = 0.797_884_560_802_865_4; // sqrt(2 / pi)
pub(crate) const GELU_A: f64 = 0.044_715;

pub fn activation<T: Real>(kind: Activation, u: &[T], a: &mut [T]) {
    match kind {
        Activation::Relu => {
            for (a, &u) in a.iter_mut().zip(u) {
                *a = if u > T::ZERO { u } else { T::ZERO };
            }
        }
        Activation::Tanh => {
            for (a, &u) in a.iter_mut().zip(u) {
                *a = u.tanh();
            }
        }
        Activation::Gelu => {
            let (c, k) = (T::from_f64(GELU_C), T::from_f64(GELU_A));
            let half = T::from_f64(0.5);
            for (a, &u) in a.iter_mut().zip(u) {
                let t = (c * (u + k * u * u * u)).tanh();
                *a = half * u * (T::ONE + t);
            }
        }
    }
}

/// Which elements one normalization statistic is taken over: `set * set_stride + k * item_stride`
/// for `k` in `0..len`. BatchNorm: one set per feature, over the rows. LayerNorm: one set per row.
/// GroupNorm: one set per (row, group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NormGeometry {
    pub sets: usize,
    pub len: usize,
    pub set_stride: usize,
    pub item_stride: usize,
}

impl NormGeometry {
    /// For `Norm::None` there are no statistics: zero sets.
    pub fn new(norm: Norm, rows: usize, width: usize) -> Self {
        match norm {
            Norm::None => Self {
                sets: 0,
                len: 1,
                set_stride: 0,
                item_stride: 0,
            },
            Norm::BatchNorm { .. } => Self {
                sets: width,
                len: rows,
                set_stride: 1,
                item_stride: width,
            },
            Norm::LayerNorm { .. } => Self {
                sets: rows,
                len: width,
                set_stride: width,
                item_stride: 1,
            },
            Norm::GroupNorm { groups, .. } => Self {
                sets: rows * groups,
                len: width / groups.max(1),
                set_stride: width / groups.max(1),
                item_stride: 1,
            },
        }
    }

    #[inline]
    pub fn index(&self, set: usize, k: usize) -> usize {
        set * self.set_stride + k * self.item_stride
    }
}

/// Normalizes `z` with statistics of the batch itself (training mode), then scales and shifts.
/// Writes `xhat`, the output, and each set's mean and reciprocal standard deviation;
/// returns nothing else so that backward can be computed from exactly what was kept.
pub fn norm_train<T: Real>(
    geometry: NormGeometry,
    eps: f64,
    z: &[T],
    width: usize,
    gamma: &[T],
    beta: &[T],
    xhat: &mut [T],
    out: &mut [T],
    mean: &mut [T],
    variance: &mut [T],
    rstd: &mut [T],
) {
    let len = T::from_usize(geometry.len);
    let eps = T::from_f64(eps);
    for set in 0..geometry.sets {
        let mut sum = T::ZERO;
        for k in 0..geometry.len {
            sum += z[geometry.index(set, k)];
        }
        let mu = sum / len;
        let mut squares = T::ZERO;
        for k in 0..geometry.len {
            let d = z[geometry.index(set, k)] - mu;
            squares += d * d;
        }
        let var = squares / len;
        let r = T::ONE / (var + eps).sqrt();
        mean[set] = mu;
        variance[set] = var;
        rstd[set] = r;
        for k in 0..geometry.len {
            let e = geometry.index(set, k);
            let f = e % width;
            xhat[e] = (z[e] - mu) * r;
            out[e] = gamma[f] * xhat[e] + beta[f];
        }
    }
}

/// PyTorch's running-statistics update: biased variance normalizes, the unbiased one is tracked.
pub fn update_running_stats<T: Real>(
    momentum: f64,
    rows: usize,
    batch_mean: &[T],
    batch_variance: &[T],
    running_mean: &mut [T],
    running_var: &mut [T],
) {
    let m = T::from_f64(momentum);
    let keep = T::ONE - m;
    let unbias = T::from_usize(rows) / T::from_usize(rows.saturating_sub(1).max(1));
    for f in 0..running_mean.len() {
        running_mean[f] = keep * running_mean[f] + m * batch_mean[f];
        running_var[f] = keep * running_var[f] + m * batch_variance[f] * unbias;
    }
}

/// BatchNorm in evaluation mode: running statistics instead of the batch's.
pub fn batch_norm_eval<T: Real>(
    eps: f64,
    z: &[T],
    width: usize,
    running_mean: &[T],
    running_var: &[T],
    gamma: &[T],
    beta: &[T],
    out: &mut [T],
) {
    let eps = T::from_f64(eps);
    for (e, (o, &v)) in out.iter_mut().zip(z).enumerate() {
        let f = e % width;
        let xhat = (v - running_mean[f]) / (running_var[f] + eps).sqrt();
        *o = gamma[f] * xhat + beta[f];
    }
}

/// Row-wise softmax into `probs`; returns the sum over rows of the cross-entropy `-log p[label]`.
pub fn softmax_cross_entropy<T: Real>(logits: &[T], classes: usize, labels: &[u32], probs: &mut [T]) -> T {
    softmax_cross_entropy_onto(T::ZERO, logits, classes, labels, probs)
}

/// [`softmax_cross_entropy`] whose row losses are added one by one onto `total`: a step's
/// micro-batches then add their items' losses in the very sequence of the full batch.
pub fn softmax_cross_entropy_onto<T: Real>(
    mut total: T,
    logits: &[T],
    classes: usize,
    labels: &[u32],
    probs: &mut [T],
) -> T {
    for (i, &label) in labels.iter().enumerate() {
        let row = &logits[i * classes..(i + 1) * classes];
        let max = row.iter().copied().fold(row[0], T::max);
        let mut sum = T::ZERO;
        for &l in row {
            sum += (l - max).exp();
        }
        let log_sum = max + sum.ln();
        for c in 0..classes {
            probs[i * classes + c] = (row[c] - log_sum).exp();
        }
        total += log_sum - row[label as usize];
    }
    total
}
