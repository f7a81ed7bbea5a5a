//! GELU with the tanh approximation (nanoGPT's `GELU(approximate='tanh')`), forward and backward,
//! keeping each element's tanh for the backward.
//!
//! `gelu(u) = u/2 · (1 + tanh(c · (u + a·u³)))`. tanh is taken as `1 − 2 / (exp(2z) + 1)`: one
//! `exp` (vectorized in f32) where `libm`'s tanh calls `expm1` (the transformer's hidden layer is
//! four times as wide as its residual stream, and tanh was 40 % of a training step). It is exact
//! to a few units in the last place of `1 + tanh`, which is what GELU uses; its relative error
//! grows only where tanh is near 0, where `1 + tanh` is near 1 and does not see it.

use crate::real::Real;
use crate::reference::forward::{GELU_A, GELU_C};

/// Writes `a = gelu(u)` and `t`, each element's tanh, for [`backward`]. tanh saturates to ±1
/// where exp overflows to infinity or underflows to 0. Three sweeps, so that the exp in the
/// middle one runs as a vectorized loop ([`Real::exp_in_place`]).
pub fn forward<T: Real>(u: &[T], a: &mut [T], t: &mut [T]) {
    let (c, k, half, two) = (
        T::from_f64(GELU_C),
        T::from_f64(GELU_A),
        T::from_f64(0.5),
        T::from_f64(2.0),
    );
    for (t, &u) in t.iter_mut().zip(u) {
        *t = two * (c * (u + k * u * u * u));
    }
    T::exp_in_place(t);
    for ((a, t), &u) in a.iter_mut().zip(t.iter_mut()).zip(u) {
        *t = T::ONE - two / (*t + T::ONE);
        *a = half * u * (T::ONE + *t);
    }
}

/// `du = da · gelu'(u)`, with the tanh [`forward`] kept.
pub fn backward<T: Real>(u: &[T], t: &[T], da: &[T], du: &mut [T]) {
    let (c, k) = (T::from_f64(GELU_C), T::from_f64(GELU_A));
    let (half, three) = (T::from_f64(0.5), T::from_f64(3.0));
    for (((du, &u), &t), &g) in du.iter_mut().zip(u).zip(t).zip(da) {
        let sech2 = T::ONE - t * t;
        // Where tanh has saturated the second term is exactly 0; computing it would multiply
        // that 0 by u², which overflows to infinity for huge u: NaN.
        let curvature = if sech2 == T::ZERO {
            T::ZERO
        } else {
            half * u * sech2 * c * (T::ONE + three * k * u * u)
        };
        *du = g * (half * (T::ONE + t) + curvature);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Activation;
    use crate::reference::forward as reference;

    fn inputs() -> Vec<f64> {
        (-400..=400)
            .map(|i| f64::from(i) * 0.025)
            .chain([-1e30, -90.0, 90.0, 1e30])
            .collect()
    }

    #[test]
    fn it_agrees_with_libms_tanh_gelu() {
        let u = inputs();
        let (mut a, mut t, mut expected) = (vec![0.0; u.len()], vec![0.0; u.len()], vec![0.0; u.len()]);
        forward(&u, &mut a, &mut t);
        reference::activation(Activation::Gelu, &u, &mut expected);
        for ((x, a), e) in u.iter().zip(&a).zip(&expected) {
            assert!((a - e).abs() <= 1e-15 * (1.0 + x.abs()), "gelu({x}) = {a}, libm {e}");
        }
        let u32s: Vec<f32> = u.iter().map(|&x| x as f32).collect();
        let (mut a32, mut t32, mut e32) = (vec![0.0f32; u.len()], vec![0.0f32; u.len()], vec![0.0f32; u.len()]);
        forward(&u32s, &mut a32, &mut t32);
        reference::activation(Activation::Gelu, &u32s, &mut e32);
        for ((x, a), e) in u32s.iter().zip(&a32).zip(&e32) {
            assert!((a - e).abs() <= 4e-7 * (1.0 + x.abs()), "gelu({x}) = {a}, libm {e}");
        }
        assert!(a32.iter().all(|v| v.is_finite()) && a.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn backward_matches_finite_differences_and_stays_finite_when_saturated() {
        let u = inputs();
        let (mut a, mut t) = (vec![0.0; u.len()], vec![0.0; u.len()]);
        forward(&u, &mut a, &mut t);
        let mut du = vec![0.0; u.len()];
        backward(&u, &t, &vec![1.0; u.len()], &mut du);
        let gelu = |x: f64| {
            let (mut a, mut t) = ([0.0], [0.0]);
            forward(&[x], &mut a, &mut t);
            a[0]
        };
        let h = 1e-6;
        for (&x, &d) in u.iter().zip(&du) {
            assert!(d.is_finite(), "gelu'({x}) = {d}");
            if x.abs() < 50.0 {
                let numeric = (gelu(x + h) - gelu(x - h)) / (2.0 * h);
                assert!((numeric - d).abs() < 1e-8, "gelu'({x}): {d} vs {numeric}");
            }
        }
    }
}
