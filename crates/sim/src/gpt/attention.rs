//! Causal self-attention of one sequence, all heads: the CPU reference, forward and backward.
//!
//! `qkv` is `c_attn`'s output, `[len, 3d]`: each row holds q, then k, then v, and head `h` owns
//! columns `h·hs..(h+1)·hs` of each (nanoGPT's `split` then `view(B, T, nh, hs)`). Position `i`
//! attends to positions `0..=i`, with scores `q_i · k_j / sqrt(hs)` and a softmax over them.
//! Padding sits after a sequence's last token, so no real position ever attends to it: a
//! sequence is computed at its own length and padding never enters.

use crate::real::Real;

/// The shape of one attention call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heads {
    /// Embedding width `d`.
    pub width: usize,
    pub heads: usize,
}

impl Heads {
    fn head_size(self) -> usize {
        self.width / self.heads
    }

    fn scale<T: Real>(self) -> T {
        T::ONE / T::from_usize(self.head_size()).sqrt()
    }

    /// Values of the attention probabilities kept for a sequence of `len` positions.
    pub fn probs_len(self, len: usize) -> usize {
        self.heads * len * len
    }
}

/// `t[c * len + j] = qkv[j, offset + c]`: one head's keys or values, transposed, so that the
/// scores of a query against every earlier position are one vectorized sweep per feature (each
/// score still sums its features in order, as the textbook dot product does).
fn transpose_head<T: Real>(qkv: &[T], len: usize, d: usize, offset: usize, hs: usize, t: &mut [T]) {
    for j in 0..len {
        for c in 0..hs {
            t[c * len + j] = qkv[j * 3 * d + offset + c];
        }
    }
}

/// `out[j] = sum_c a[c] · t[c * len + j]` for `j` in `0..out.len()`, each sum in order of `c`.
#[inline(always)]
fn dots<T: Real>(a: &[T], t: &[T], len: usize, out: &mut [T]) {
    out.fill(T::ZERO);
    let n = out.len();
    for (c, &a) in a.iter().enumerate() {
        for (o, &b) in out.iter_mut().zip(&t[c * len..c * len + n]) {
            *o += a * b;
        }
    }
}

/// Writes `y` (`[len, d]`, heads side by side) and the probabilities `probs`
/// (`[heads, len, len]`, row `i` filled up to `i`). `scratch` holds a head's transposed keys.
pub fn forward<T: Real>(shape: Heads, qkv: &[T], len: usize, probs: &mut [T], y: &mut [T], scratch: &mut Vec<T>) {
    let (d, hs) = (shape.width, shape.head_size());
    let scale = shape.scale::<T>();
    scratch.resize(hs * len, T::ZERO);
    for h in 0..shape.heads {
        let (q0, k0, v0) = (h * hs, d + h * hs, 2 * d + h * hs);
        transpose_head(qkv, len, d, k0, hs, scratch);
        for i in 0..len {
            let q = &qkv[i * 3 * d + q0..i * 3 * d + q0 + hs];
            let p = &mut probs[(h * len + i) * len..(h * len + i) * len + i + 1];
            dots(q, scratch, len, p);
            let mut max = p[0] * scale;
            for s in p.iter_mut() {
                *s *= scale;
                max = max.max(*s);
            }
            for s in p.iter_mut() {
                *s -= max;
            }
            T::exp_in_place(p);
            let mut sum = T::ZERO;
            for &s in p.iter() {
                sum += s;
            }
            for s in p.iter_mut() {
                *s /= sum;
            }
            let out = &mut y[i * d + h * hs..i * d + (h + 1) * hs];
            out.fill(T::ZERO);
            for (j, &pj) in p.iter().enumerate() {
                let v = &qkv[j * 3 * d + v0..j * 3 * d + v0 + hs];
                for (o, &vv) in out.iter_mut().zip(v) {
                    *o += pj * vv;
                }
            }
        }
    }
}

/// Writes `dqkv` (`[len, 3d]`) from `dy` (`[len, d]`) and what [`forward`] kept. `scratch`
/// holds a head's transposed values, a row's `dp` and its `dq`.
pub fn backward<T: Real>(
    shape: Heads,
    qkv: &[T],
    len: usize,
    probs: &[T],
    dy: &[T],
    dqkv: &mut [T],
    scratch: &mut Vec<T>,
) {
    let (d, hs) = (shape.width, shape.head_size());
    let scale = shape.scale::<T>();
    dqkv[..len * 3 * d].fill(T::ZERO);
    scratch.resize(hs * len + len + hs, T::ZERO);
    let (vt, rest) = scratch.split_at_mut(hs * len);
    let (dp, dq) = rest.split_at_mut(len);
    for h in 0..shape.heads {
        let columns = h * hs..(h + 1) * hs;
        transpose_head(qkv, len, d, 2 * d + columns.start, hs, vt);
        for i in 0..len {
            let p = &probs[(h * len + i) * len..(h * len + i) * len + i + 1];
            let g = &dy[i * d + columns.start..i * d + columns.end];
            let q = &qkv[i * 3 * d + columns.start..i * 3 * d + columns.end];
            // dp_j = dy_i · v_j, then the softmax's backward: ds_j = p_j (dp_j - sum_j' p_j' dp_j').
            dots(g, vt, len, &mut dp[..=i]);
            let mut weighted = T::ZERO;
            for (&dpj, &pj) in dp[..=i].iter().zip(p) {
                weighted += pj * dpj;
            }
            dq.fill(T::ZERO);
            for (j, (&dpj, &pj)) in dp[..=i].iter().zip(p).enumerate() {
                let ds = pj * (dpj - weighted) * scale;
                let k = &qkv[j * 3 * d + d + columns.start..j * 3 * d + d + columns.end];
                for (dq, &k) in dq.iter_mut().zip(k) {
                    *dq += ds * k;
                }
                let row = &mut dqkv[j * 3 * d + d..(j + 1) * 3 * d];
                let (dk, dv) = row.split_at_mut(d);
                for (dk, &q) in dk[columns.clone()].iter_mut().zip(q) {
                    *dk += ds * q;
                }
                for (dv, &g) in dv[columns.clone()].iter_mut().zip(g) {
                    *dv += pj * g;
                }
            }
            dqkv[i * 3 * d + columns.start..i * 3 * d + columns.end].copy_from_slice(dq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    fn random(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = SeededRng::new(seed);
        (0..n).map(|_| rng.normal()).collect()
    }

    /// `sum(y · weights)`, a scalar whose gradient with respect to y is `weights`.
    fn objective(shape: Heads, qkv: &[f64], len: usize, weights: &[f64]) -> f64 {
        let mut probs = vec![0.0; shape.probs_len(len)];
        let mut y = vec![0.0; len * shape.width];
        forward(shape, qkv, len, &mut probs, &mut y, &mut Vec::new());
        y.iter().zip(weights).map(|(a, b)| a * b).sum()
    }

    #[test]
    fn backward_matches_finite_differences() {
        let shape = Heads { width: 8, heads: 2 };
        let len = 5;
        let qkv = random(len * 3 * shape.width, 1);
        let weights = random(len * shape.width, 2);
        let mut probs = vec![0.0; shape.probs_len(len)];
        let mut y = vec![0.0; len * shape.width];
        forward(shape, &qkv, len, &mut probs, &mut y, &mut Vec::new());
        let mut dqkv = vec![0.0; qkv.len()];
        backward(shape, &qkv, len, &probs, &weights, &mut dqkv, &mut Vec::new());
        let h = 1e-6;
        for e in 0..qkv.len() {
            let (mut plus, mut minus) = (qkv.clone(), qkv.clone());
            plus[e] += h;
            minus[e] -= h;
            let numeric =
                (objective(shape, &plus, len, &weights) - objective(shape, &minus, len, &weights)) / (2.0 * h);
            assert!(
                (numeric - dqkv[e]).abs() < 1e-7 * (1.0 + numeric.abs()),
                "element {e}: numeric {numeric}, analytic {}",
                dqkv[e]
            );
        }
    }

    #[test]
    fn a_position_never_sees_the_future() {
        let shape = Heads { width: 4, heads: 1 };
        let len = 4;
        let qkv = random(len * 12, 3);
        let mut changed = qkv.clone();
        for c in 4..12 {
            changed[3 * 12 + c] += 1.0; // the last position's k and v
        }
        let run = |qkv: &[f64]| {
            let mut probs = vec![0.0; shape.probs_len(len)];
            let mut y = vec![0.0; len * 4];
            forward(shape, qkv, len, &mut probs, &mut y, &mut Vec::new());
            y
        };
        let (a, b) = (run(&qkv), run(&changed));
        assert_eq!(a[..12], b[..12], "positions 0..3 must not depend on position 3");
        assert_ne!(a[12..], b[12..]);
    }

    #[test]
    fn a_sequence_gives_the_same_bits_alone_and_as_the_prefix_of_a_longer_one() {
        // What lets the engine skip padding: a shorter sequence is the prefix of a padded one.
        let shape = Heads { width: 8, heads: 2 };
        let qkv = random(6 * 24, 4);
        let run = |len: usize| {
            let mut probs = vec![0.0f64; shape.probs_len(len)];
            let mut y = vec![0.0; len * 8];
            forward(shape, &qkv[..len * 24], len, &mut probs, &mut y, &mut Vec::new());
            y
        };
        assert_eq!(run(4), run(6)[..4 * 8]);
    }
}
