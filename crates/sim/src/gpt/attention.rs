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

/// Sums per register block: eight f32 (two SSE2 or simd128 registers, one AVX2 register), so
/// that a block of sums stays in registers while its terms stream past.
const LANES: usize = 8;

/// `out[j] = sum_c a[c] · t[c * len + j]` for `j` in `0..out.len()`, each sum in order of `c`
/// from zero, as the textbook dot product adds: eight outputs at a time, in registers.
#[inline(always)]
fn dots<T: Real>(a: &[T], t: &[T], len: usize, out: &mut [T]) {
    let n = out.len();
    let mut j0 = 0;
    while j0 + LANES <= n {
        let mut acc = [T::ZERO; LANES];
        for (c, &av) in a.iter().enumerate() {
            let row = &t[c * len + j0..][..LANES];
            for (s, &b) in acc.iter_mut().zip(row) {
                *s += av * b;
            }
        }
        out[j0..j0 + LANES].copy_from_slice(&acc);
        j0 += LANES;
    }
    for (j, o) in out.iter_mut().enumerate().skip(j0) {
        let mut acc = T::ZERO;
        for (c, &av) in a.iter().enumerate() {
            acc += av * t[c * len + j];
        }
        *o = acc;
    }
}

/// `out[c] = sum_j w[j] · rows[j * stride + c]` for `c` in `0..out.len()`, each sum in order of
/// `j` from zero: a weighted sum of rows `stride` apart, eight features at a time, in registers.
#[inline(always)]
fn weighted_rows<T: Real>(w: &[T], rows: &[T], stride: usize, out: &mut [T]) {
    let width = out.len();
    let mut c0 = 0;
    while c0 + LANES <= width {
        let mut acc = [T::ZERO; LANES];
        for (j, &wj) in w.iter().enumerate() {
            let row = &rows[j * stride + c0..][..LANES];
            for (s, &b) in acc.iter_mut().zip(row) {
                *s += wj * b;
            }
        }
        out[c0..c0 + LANES].copy_from_slice(&acc);
        c0 += LANES;
    }
    for (c, o) in out.iter_mut().enumerate().skip(c0) {
        let mut acc = T::ZERO;
        for (j, &wj) in w.iter().enumerate() {
            acc += wj * rows[j * stride + c];
        }
        *o = acc;
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
            weighted_rows(p, &qkv[v0..], 3 * d, &mut y[i * d + h * hs..i * d + (h + 1) * hs]);
        }
    }
}

/// Writes `dqkv` (`[len, 3d]`) from `dy` (`[len, d]`) and what [`forward`] kept. `scratch`
/// holds a head's transposed values, the score gradients `ds` (`[len, len]`, row `i` up to
/// `i`), and a column of `ds` and of the probabilities.
///
/// By query row: `dp_j = dy_i · v_j`, the softmax's backward `ds_j = p_j (dp_j - sum_j' p_j' dp_j')`
/// (scaled), and `dq_i = sum_j ds_ij k_j`; then by key row: `dk_j = sum_i ds_ij q_i` and
/// `dv_j = sum_i p_ij dy_i` over the later queries `i >= j` in order. Every sum adds its terms in
/// the order of the textbook loop (queries outer, keys inner), so the bits are the same.
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
    scratch.resize(hs * len + len * len + 3 * len, T::ZERO);
    let (vt, rest) = scratch.split_at_mut(hs * len);
    let (ds, rest) = rest.split_at_mut(len * len);
    let (dp, rest) = rest.split_at_mut(len);
    let (ds_column, p_column) = rest.split_at_mut(len);
    for h in 0..shape.heads {
        let columns = h * hs..(h + 1) * hs;
        transpose_head(qkv, len, d, 2 * d + columns.start, hs, vt);
        for i in 0..len {
            let p = &probs[(h * len + i) * len..(h * len + i) * len + i + 1];
            let g = &dy[i * d + columns.start..i * d + columns.end];
            dots(g, vt, len, &mut dp[..=i]);
            let mut weighted = T::ZERO;
            for (&dpj, &pj) in dp[..=i].iter().zip(p) {
                weighted += pj * dpj;
            }
            let ds_row = &mut ds[i * len..i * len + i + 1];
            for ((s, &dpj), &pj) in ds_row.iter_mut().zip(&dp[..=i]).zip(p) {
                *s = pj * (dpj - weighted) * scale;
            }
            let dq = &mut dqkv[i * 3 * d + columns.start..i * 3 * d + columns.end];
            weighted_rows(ds_row, &qkv[d + columns.start..], 3 * d, dq);
        }
        for j in 0..len {
            let later = len - j;
            for (k, i) in (j..len).enumerate() {
                ds_column[k] = ds[i * len + j];
                p_column[k] = probs[(h * len + i) * len + j];
            }
            let row = &mut dqkv[j * 3 * d..(j + 1) * 3 * d];
            let (dk, dv) = row[d..].split_at_mut(d);
            weighted_rows(
                &ds_column[..later],
                &qkv[j * 3 * d + columns.start..],
                3 * d,
                &mut dk[columns.clone()],
            );
            weighted_rows(
                &p_column[..later],
                &dy[j * d + columns.start..],
                d,
                &mut dv[columns.clone()],
            );
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

    // The loops before they were blocked (queries outer, keys inner, sums in memory): the
    // blocked ones must give their bits.
    /// `out[j] = sum_c a[c] · t[c * len + j]` for `j` in `0..out.len()`, each sum in order of `c`.
    fn textbook_dots<T: Real>(a: &[T], t: &[T], len: usize, out: &mut [T]) {
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
    fn textbook_forward<T: Real>(
        shape: Heads,
        qkv: &[T],
        len: usize,
        probs: &mut [T],
        y: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        let (d, hs) = (shape.width, shape.head_size());
        let scale = shape.scale::<T>();
        scratch.resize(hs * len, T::ZERO);
        for h in 0..shape.heads {
            let (q0, k0, v0) = (h * hs, d + h * hs, 2 * d + h * hs);
            transpose_head(qkv, len, d, k0, hs, scratch);
            for i in 0..len {
                let q = &qkv[i * 3 * d + q0..i * 3 * d + q0 + hs];
                let p = &mut probs[(h * len + i) * len..(h * len + i) * len + i + 1];
                textbook_dots(q, scratch, len, p);
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
    fn textbook_backward<T: Real>(
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
                textbook_dots(g, vt, len, &mut dp[..=i]);
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

    /// The blocked loops add every sum's terms in the textbook loops' order, so they give the
    /// same bits, forward and backward, in f32 and f64, for head sizes below, at and beyond a
    /// register block, and sequences shorter and longer than one.
    #[test]
    fn the_blocked_loops_give_the_textbook_loops_bits() {
        fn check<T: Real>(shape: Heads, len: usize, seed: u64) {
            let d = shape.width;
            let qkv: Vec<T> = random(len * 3 * d, seed).into_iter().map(T::from_f64).collect();
            let dy: Vec<T> = random(len * d, seed + 1).into_iter().map(T::from_f64).collect();
            let bits = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
            let (mut probs, mut y) = (vec![T::ZERO; shape.probs_len(len)], vec![T::ZERO; len * d]);
            let (mut probs_t, mut y_t) = (probs.clone(), y.clone());
            forward(shape, &qkv, len, &mut probs, &mut y, &mut Vec::new());
            textbook_forward(shape, &qkv, len, &mut probs_t, &mut y_t, &mut Vec::new());
            assert_eq!(bits(&probs), bits(&probs_t), "probabilities, {shape:?} len {len}");
            assert_eq!(bits(&y), bits(&y_t), "outputs, {shape:?} len {len}");
            let (mut dqkv, mut dqkv_t) = (vec![T::ONE; len * 3 * d], vec![T::ZERO; len * 3 * d]);
            backward(shape, &qkv, len, &probs, &dy, &mut dqkv, &mut Vec::new());
            textbook_backward(shape, &qkv, len, &probs, &dy, &mut dqkv_t, &mut Vec::new());
            assert_eq!(bits(&dqkv), bits(&dqkv_t), "gradients, {shape:?} len {len}");
        }
        for (width, heads) in [(5, 1), (16, 2), (24, 2), (40, 2), (64, 4), (128, 4)] {
            for len in [1, 7, 8, 13, 64] {
                let shape = Heads { width, heads };
                check::<f32>(shape, len, (width * 100 + len) as u64);
                check::<f64>(shape, len, (width * 100 + len) as u64);
            }
        }
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
