//! Backward passes of every layer. Parameter gradients are *added* into their slices (that is what
//! makes accumulation possible); input gradients are overwritten.

use super::forward::{NormGeometry, GELU_A, GELU_C};
use crate::model::Activation;
use crate::real::Real;

/// `du = da * act'(u)`, from the activation's input `u` and output `a`.
pub fn activation<T: Real>(kind: Activation, u: &[T], a: &[T], da: &[T], du: &mut [T]) {
    match kind {
        Activation::Relu => {
            for ((du, &u), &g) in du.iter_mut().zip(u).zip(da) {
                *du = if u > T::ZERO { g } else { T::ZERO };
            }
        }
        Activation::Tanh => {
            for ((du, &a), &g) in du.iter_mut().zip(a).zip(da) {
                *du = g * (T::ONE - a * a);
            }
        }
        Activation::Gelu => {
            let (c, k) = (T::from_f64(GELU_C), T::from_f64(GELU_A));
            let (half, three) = (T::from_f64(0.5), T::from_f64(3.0));
            for ((du, &u), &g) in du.iter_mut().zip(u).zip(da) {
                let t = (c * (u + k * u * u * u)).tanh();
                let sech2 = T::ONE - t * t;
                // Where tanh has saturated the second term is exactly 0; computing it would
                // multiply that 0 by u^2, which overflows to infinity for huge u: NaN.
                let curvature = if sech2 == T::ZERO {
                    T::ZERO
                } else {
                    half * u * sech2 * c * (T::ONE + three * k * u * u)
                };
                let derivative = half * (T::ONE + t) + curvature;
                *du = g * derivative;
            }
        }
    }
}

/// Backward of normalize-scale-shift: adds `dgamma`, `dbeta`; writes `dz`.
/// `dz = rstd / n * (n * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat))` over each statistic's set.
pub fn norm<T: Real>(
    geometry: NormGeometry,
    width: usize,
    xhat: &[T],
    rstd: &[T],
    gamma: &[T],
    dout: &[T],
    dgamma: &mut [T],
    dbeta: &mut [T],
    dz: &mut [T],
) {
    for (e, (&g, &xh)) in dout.iter().zip(xhat).enumerate() {
        let f = e % width;
        dgamma[f] += g * xh;
        dbeta[f] += g;
    }
    let n = T::from_usize(geometry.len);
    for set in 0..geometry.sets {
        let mut sum = T::ZERO;
        let mut dot = T::ZERO;
        for k in 0..geometry.len {
            let e = geometry.index(set, k);
            let dxhat = dout[e] * gamma[e % width];
            sum += dxhat;
            dot += dxhat * xhat[e];
        }
        let scale = rstd[set] / n;
        for k in 0..geometry.len {
            let e = geometry.index(set, k);
            let dxhat = dout[e] * gamma[e % width];
            dz[e] = scale * (n * dxhat - sum - xhat[e] * dot);
        }
    }
}

/// Gradient of `weight * sum_i CE_i` with respect to the logits: `weight * (p - onehot)`.
pub fn softmax_cross_entropy<T: Real>(probs: &[T], classes: usize, labels: &[u32], weight: T, dlogits: &mut [T]) {
    for (i, &label) in labels.iter().enumerate() {
        for c in 0..classes {
            let target = if c == label as usize { T::ONE } else { T::ZERO };
            dlogits[i * classes + c] = weight * (probs[i * classes + c] - target);
        }
    }
}
