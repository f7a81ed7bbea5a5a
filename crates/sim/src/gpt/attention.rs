//! Causal self-attention of one sequence, all heads: the CPU reference, forward and backward.
//!
//! `qkv` is `c_attn`'s output, `[len, 3d]`: each row holds q, then k, then v, and head `h` owns
//! columns `h·hs..(h+1)·hs` of each (nanoGPT's `split` then `view(B, T, nh, hs)`). Position `i`
//! attends to positions `0..=i`, with scores `q_i · k_j / sqrt(hs)` and a softmax over them.
//! Padding sits after a sequence's last token, so no real position ever attends to it: a
//! sequence is computed at its own length and padding never enters.

use crate::real::Real;
use crate::simd::{self, Isa};

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

/// `t[c * stride + j] = qkv[j, offset + c]` (zero beyond `len`): one head's keys or values,
/// transposed, so that the scores of a block of queries against a block of positions are one
/// vectorized sweep per feature (each score still sums its features in order, as the textbook
/// dot product does).
fn transpose_head<T: Real>(qkv: &[T], len: usize, d: usize, offset: usize, hs: usize, t: &mut [T]) {
    let stride = padded(len);
    t[..hs * stride].fill(T::ZERO);
    for j in 0..len {
        for c in 0..hs {
            t[c * stride + j] = qkv[j * 3 * d + offset + c];
        }
    }
}

/// Sums per register block of the portable build: eight f32 (two SSE2 or simd128 registers);
/// the AVX builds use wider blocks (see `wide`).
const LANES: usize = 8;
/// Transposed heads' rows are padded to a multiple of this: the widest block of any build.
const PADDING: usize = 16;
/// Queries (or keys) per register block: four rows of `L` sums in flight, the latency of one
/// addition hidden behind the others.
const ROWS: usize = 4;

fn padded(len: usize) -> usize {
    len.div_ceil(PADDING) * PADDING
}

/// A matrix stored row by row, `stride` apart, from `offset`.
#[derive(Debug, Clone, Copy)]
struct Rows {
    offset: usize,
    stride: usize,
}

impl Rows {
    fn at(self, row: usize) -> usize {
        self.offset + row * self.stride
    }
}

/// Scores of queries `i0..i0 + R` (rows of `a`, `hs` wide) against positions `0..=i` each:
/// `out[i, j] = sum_c a[i, c] · t[c * stride + j]`, in order of `c` from zero. The block's
/// positions `0..i0 + R` are computed for every query; each query stores its own `0..=i`.
#[inline(always)]
fn scores_block<T: Real, const R: usize, const L: usize>(
    a: &[T],
    a_rows: Rows,
    t: &[T],
    stride: usize,
    hs: usize,
    i0: usize,
    out: &mut [T],
    out_rows: Rows,
) {
    let rows: [&[T]; R] = std::array::from_fn(|r| &a[a_rows.at(i0 + r)..][..hs]);
    for j0 in (0..i0 + R).step_by(L) {
        let mut acc = [[T::ZERO; L]; R];
        for c in 0..hs {
            let mut keys = [T::ZERO; L];
            keys.copy_from_slice(&t[c * stride + j0..][..L]);
            for r in 0..R {
                let av = rows[r][c];
                for l in 0..L {
                    acc[r][l] += av * keys[l];
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            let count = (i0 + r + 1).saturating_sub(j0).min(L);
            out[out_rows.at(i0 + r) + j0..][..count].copy_from_slice(&row[..count]);
        }
    }
}

/// [`scores_block`] for every query `0..len`, in blocks of [`ROWS`] and then one at a time;
/// `t` is a head transposed by [`transpose_head`].
#[inline(always)]
fn scores<T: Real, const L: usize>(
    a: &[T],
    a_rows: Rows,
    t: &[T],
    hs: usize,
    len: usize,
    out: &mut [T],
    out_rows: Rows,
) {
    let stride = padded(len);
    let mut i0 = 0;
    while i0 + ROWS <= len {
        scores_block::<T, ROWS, L>(a, a_rows, t, stride, hs, i0, out, out_rows);
        i0 += ROWS;
    }
    for i in i0..len {
        scores_block::<T, 1, L>(a, a_rows, t, stride, hs, i, out, out_rows);
    }
}

/// `acc[r] += weight(r) · row` for the block's rows `rs`.
#[inline(always)]
fn add_row<T: Real, const R: usize, const L: usize>(
    acc: &mut [[T; L]; R],
    rs: std::ops::Range<usize>,
    weight: impl Fn(usize) -> T,
    row: &[T],
) {
    let mut values = [T::ZERO; L];
    values.copy_from_slice(row);
    for r in rs {
        let wv = weight(r);
        for l in 0..L {
            acc[r][l] += wv * values[l];
        }
    }
}

/// `out[i, c] = sum_{j <= i} w[i, j] · rows[j, c]` for queries `i0..i0 + R`, features
/// `c0..c0 + L`, each sum in order of `j` from zero.
#[inline(always)]
fn earlier_block<T: Real, const R: usize, const L: usize>(
    w: &[T],
    w_rows: Rows,
    rows: &[T],
    rows_at: Rows,
    i0: usize,
    c0: usize,
    out: &mut [T],
    out_rows: Rows,
) {
    let weights: [&[T]; R] = std::array::from_fn(|r| &w[w_rows.at(i0 + r)..][..i0 + r + 1]);
    let mut acc = [[T::ZERO; L]; R];
    for j in 0..=i0 {
        add_row(&mut acc, 0..R, |r| weights[r][j], &rows[rows_at.at(j) + c0..][..L]);
    }
    // The block's own triangle: position `i0 + r` is seen by queries `i0 + r..`.
    for r in 1..R {
        add_row(
            &mut acc,
            r..R,
            |q| weights[q][i0 + r],
            &rows[rows_at.at(i0 + r) + c0..][..L],
        );
    }
    for (r, row) in acc.iter().enumerate() {
        out[out_rows.at(i0 + r) + c0..][..L].copy_from_slice(row);
    }
}

/// `out[j, c] = sum_{i >= j} w[i, j] · rows[i, c]` for positions `j0..j0 + R`, features
/// `c0..c0 + L`, each sum in order of `i` over the later queries `j..len`.
#[inline(always)]
fn later_block<T: Real, const R: usize, const L: usize>(
    w: &[T],
    w_rows: Rows,
    rows: &[T],
    rows_at: Rows,
    len: usize,
    j0: usize,
    c0: usize,
    out: &mut [T],
    out_rows: Rows,
) {
    let mut acc = [[T::ZERO; L]; R];
    // The block's own triangle: query `j0 + r` sees positions `..=j0 + r`.
    for r in 0..R - 1 {
        let (i, weights) = (j0 + r, &w[w_rows.at(j0 + r) + j0..][..R]);
        add_row(&mut acc, 0..r + 1, |q| weights[q], &rows[rows_at.at(i) + c0..][..L]);
    }
    for i in j0 + R - 1..len {
        let weights = &w[w_rows.at(i) + j0..][..R];
        add_row(&mut acc, 0..R, |q| weights[q], &rows[rows_at.at(i) + c0..][..L]);
    }
    for (r, row) in acc.iter().enumerate() {
        out[out_rows.at(j0 + r) + c0..][..L].copy_from_slice(row);
    }
}

/// Runs `block(r0, c0)` over rows `0..rows` in blocks of [`ROWS`] (then one at a time) and
/// features `0..width` in blocks of `L` (then one at a time), as `R` and `L` allow.
macro_rules! blocked {
    ($rows:expr, $width:expr, $L:ident, |$r0:ident, $c0:ident| $block:ident::<$T:ty>($($arg:expr),*)) => {{
        let (rows, width) = ($rows, $width);
        let mut $r0 = 0;
        while $r0 + ROWS <= rows {
            let mut $c0 = 0;
            while $c0 + $L <= width {
                $block::<$T, ROWS, $L>($($arg),*);
                $c0 += $L;
            }
            for $c0 in $c0..width {
                $block::<$T, ROWS, 1>($($arg),*);
            }
            $r0 += ROWS;
        }
        for $r0 in $r0..rows {
            let mut $c0 = 0;
            while $c0 + $L <= width {
                $block::<$T, 1, $L>($($arg),*);
                $c0 += $L;
            }
            for $c0 in $c0..width {
                $block::<$T, 1, 1>($($arg),*);
            }
        }
    }};
}

/// Writes `y` (`[len, d]`, heads side by side) and the probabilities `probs`
/// (`[heads, len, len]`, row `i` filled up to `i`). `scratch` holds a head's transposed keys.
pub fn forward<T: Real>(shape: Heads, qkv: &[T], len: usize, probs: &mut [T], y: &mut [T], scratch: &mut Vec<T>) {
    forward_with(simd::best(), shape, qkv, len, probs, y, scratch);
}

/// The kernels compiled again for AVX2 and AVX-512 (see [`crate::simd`]).
#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "calling a target_feature function needs unsafe; the feature is checked first"
)]
mod wide {
    use super::{backward_blocked, forward_blocked, Heads, LANES};
    use crate::real::Real;
    use crate::simd::Isa;

    /// Whether a head of `hs` features is summed in blocks of sixteen lanes with `isa`: where
    /// two of its registers hold sixteen or more and the head is as wide; else in the portable
    /// eight (a head's features beyond a block are summed one at a time).
    const fn sixteen_lanes<T>(isa: Isa, hs: usize) -> bool {
        isa.two_registers_of::<T>() >= 16 && hs >= 16
    }

    pub(super) fn forward<T: Real>(
        isa: Isa,
        shape: Heads,
        qkv: &[T],
        len: usize,
        probs: &mut [T],
        y: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        match isa {
            // SAFETY: the CPU has the build's feature (checked in the guard), the only
            // requirement of a `#[target_feature]` function; the body is safe code.
            Isa::Avx512 if isa.runs_here() => unsafe { forward_avx512(shape, qkv, len, probs, y, scratch) },
            // SAFETY: as above.
            Isa::Avx2 if isa.runs_here() => unsafe { forward_avx2(shape, qkv, len, probs, y, scratch) },
            _ => forward_blocked::<T, LANES>(shape, qkv, len, probs, y, scratch),
        }
    }

    pub(super) fn backward<T: Real>(
        isa: Isa,
        shape: Heads,
        qkv: &[T],
        len: usize,
        probs: &[T],
        dy: &[T],
        dqkv: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        match isa {
            // SAFETY: as in `forward`.
            Isa::Avx512 if isa.runs_here() => unsafe { backward_avx512(shape, qkv, len, probs, dy, dqkv, scratch) },
            // SAFETY: as in `forward`.
            Isa::Avx2 if isa.runs_here() => unsafe { backward_avx2(shape, qkv, len, probs, dy, dqkv, scratch) },
            _ => backward_blocked::<T, LANES>(shape, qkv, len, probs, dy, dqkv, scratch),
        }
    }

    #[target_feature(enable = "avx2")]
    fn forward_avx2<T: Real>(shape: Heads, qkv: &[T], len: usize, probs: &mut [T], y: &mut [T], scratch: &mut Vec<T>) {
        if sixteen_lanes::<T>(Isa::Avx2, shape.head_size()) {
            forward_blocked::<T, 16>(shape, qkv, len, probs, y, scratch);
        } else {
            forward_blocked::<T, LANES>(shape, qkv, len, probs, y, scratch);
        }
    }

    #[target_feature(enable = "avx512f")]
    fn forward_avx512<T: Real>(
        shape: Heads,
        qkv: &[T],
        len: usize,
        probs: &mut [T],
        y: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        if sixteen_lanes::<T>(Isa::Avx512, shape.head_size()) {
            forward_blocked::<T, 16>(shape, qkv, len, probs, y, scratch);
        } else {
            forward_blocked::<T, LANES>(shape, qkv, len, probs, y, scratch);
        }
    }

    #[target_feature(enable = "avx2")]
    fn backward_avx2<T: Real>(
        shape: Heads,
        qkv: &[T],
        len: usize,
        probs: &[T],
        dy: &[T],
        dqkv: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        if sixteen_lanes::<T>(Isa::Avx2, shape.head_size()) {
            backward_blocked::<T, 16>(shape, qkv, len, probs, dy, dqkv, scratch);
        } else {
            backward_blocked::<T, LANES>(shape, qkv, len, probs, dy, dqkv, scratch);
        }
    }

    #[target_feature(enable = "avx512f")]
    fn backward_avx512<T: Real>(
        shape: Heads,
        qkv: &[T],
        len: usize,
        probs: &[T],
        dy: &[T],
        dqkv: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        if sixteen_lanes::<T>(Isa::Avx512, shape.head_size()) {
            backward_blocked::<T, 16>(shape, qkv, len, probs, dy, dqkv, scratch);
        } else {
            backward_blocked::<T, LANES>(shape, qkv, len, probs, dy, dqkv, scratch);
        }
    }
}

/// [`forward`] built for `isa` (the portable build where this CPU lacks it).
fn forward_with<T: Real>(
    isa: Isa,
    shape: Heads,
    qkv: &[T],
    len: usize,
    probs: &mut [T],
    y: &mut [T],
    scratch: &mut Vec<T>,
) {
    #[cfg(target_arch = "x86_64")]
    return wide::forward(isa, shape, qkv, len, probs, y, scratch);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = isa;
        forward_blocked::<T, LANES>(shape, qkv, len, probs, y, scratch);
    }
}

/// [`backward`] built for `isa` (the portable build where this CPU lacks it).
fn backward_with<T: Real>(
    isa: Isa,
    shape: Heads,
    qkv: &[T],
    len: usize,
    probs: &[T],
    dy: &[T],
    dqkv: &mut [T],
    scratch: &mut Vec<T>,
) {
    #[cfg(target_arch = "x86_64")]
    return wide::backward(isa, shape, qkv, len, probs, dy, dqkv, scratch);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = isa;
        backward_blocked::<T, LANES>(shape, qkv, len, probs, dy, dqkv, scratch);
    }
}

#[inline(always)]
fn forward_blocked<T: Real, const L: usize>(
    shape: Heads,
    qkv: &[T],
    len: usize,
    probs: &mut [T],
    y: &mut [T],
    scratch: &mut Vec<T>,
) {
    let (d, hs) = (shape.width, shape.head_size());
    let scale = shape.scale::<T>();
    scratch.resize(hs * padded(len), T::ZERO);
    let kt = &mut scratch[..hs * padded(len)];
    for h in 0..shape.heads {
        let (q0, k0, v0) = (h * hs, d + h * hs, 2 * d + h * hs);
        transpose_head(qkv, len, d, k0, hs, kt);
        let head_probs = Rows {
            offset: h * len * len,
            stride: len,
        };
        let queries = Rows {
            offset: q0,
            stride: 3 * d,
        };
        scores::<T, L>(qkv, queries, kt, hs, len, probs, head_probs);
        for i in 0..len {
            let p = &mut probs[head_probs.at(i)..][..i + 1];
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
        }
        let values = Rows {
            offset: v0,
            stride: 3 * d,
        };
        let outputs = Rows { offset: q0, stride: d };
        blocked!(len, hs, L, |i0, c0| earlier_block::<T>(
            probs, head_probs, qkv, values, i0, c0, y, outputs
        ));
    }
}

/// Writes `dqkv` (`[len, 3d]`) from `dy` (`[len, d]`) and what [`forward`] kept. `scratch`
/// holds a head's transposed values and the score gradients `ds` (`[len, len]`, row `i` up to
/// `i`).
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
    backward_with(simd::best(), shape, qkv, len, probs, dy, dqkv, scratch);
}

#[inline(always)]
fn backward_blocked<T: Real, const L: usize>(
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
    scratch.resize(hs * padded(len) + len * len, T::ZERO);
    let (vt, ds) = scratch.split_at_mut(hs * padded(len));
    let ds = &mut ds[..len * len];
    let ds_rows = Rows { offset: 0, stride: len };
    for h in 0..shape.heads {
        let c = h * hs;
        transpose_head(qkv, len, d, 2 * d + c, hs, vt);
        let head_probs = Rows {
            offset: h * len * len,
            stride: len,
        };
        let output_grads = Rows { offset: c, stride: d };
        // dp, into ds's rows, then ds in place.
        scores::<T, L>(dy, output_grads, vt, hs, len, ds, ds_rows);
        for i in 0..len {
            let p = &probs[head_probs.at(i)..][..i + 1];
            let row = &mut ds[i * len..][..i + 1];
            let mut weighted = T::ZERO;
            for (&dpj, &pj) in row.iter().zip(p) {
                weighted += pj * dpj;
            }
            for (s, &pj) in row.iter_mut().zip(p) {
                *s = pj * (*s - weighted) * scale;
            }
        }
        let (queries, keys) = (
            Rows {
                offset: c,
                stride: 3 * d,
            },
            Rows {
                offset: d + c,
                stride: 3 * d,
            },
        );
        let values = Rows {
            offset: 2 * d + c,
            stride: 3 * d,
        };
        blocked!(len, hs, L, |i0, c0| earlier_block::<T>(
            ds, ds_rows, qkv, keys, i0, c0, dqkv, queries
        ));
        blocked!(len, hs, L, |j0, c0| later_block::<T>(
            ds, ds_rows, qkv, queries, len, j0, c0, dqkv, keys
        ));
        blocked!(len, hs, L, |j0, c0| later_block::<T>(
            probs,
            head_probs,
            dy,
            output_grads,
            len,
            j0,
            c0,
            dqkv,
            values
        ));
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

    /// `t[c * len + j] = qkv[j, offset + c]`: one head's keys or values, transposed.
    fn textbook_transpose<T: Real>(qkv: &[T], len: usize, d: usize, offset: usize, hs: usize, t: &mut [T]) {
        for j in 0..len {
            for c in 0..hs {
                t[c * len + j] = qkv[j * 3 * d + offset + c];
            }
        }
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
            textbook_transpose(qkv, len, d, k0, hs, scratch);
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
            textbook_transpose(qkv, len, d, 2 * d + columns.start, hs, vt);
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
            // Outputs start as a value no kernel writes, for each build, so that one that skips
            // an output fails; the probabilities above the diagonal keep it in both.
            let unwritten = T::from_f64(-7.25);
            let (mut probs_t, mut y_t) = (vec![unwritten; shape.probs_len(len)], vec![unwritten; len * d]);
            textbook_forward(shape, &qkv, len, &mut probs_t, &mut y_t, &mut Vec::new());
            let mut dqkv_t = vec![T::ZERO; len * 3 * d];
            textbook_backward(shape, &qkv, len, &probs_t, &dy, &mut dqkv_t, &mut Vec::new());
            let builds = simd::available();
            if builds.len() < 3 {
                eprintln!("this CPU runs only {builds:?}: the other builds of attention were not checked");
            }
            for build in builds {
                let (mut probs, mut y) = (vec![unwritten; shape.probs_len(len)], vec![unwritten; len * d]);
                forward_with(build, shape, &qkv, len, &mut probs, &mut y, &mut Vec::new());
                assert_eq!(
                    bits(&probs),
                    bits(&probs_t),
                    "probabilities, {build:?} {shape:?} len {len}"
                );
                assert_eq!(bits(&y), bits(&y_t), "outputs, {build:?} {shape:?} len {len}");
                let mut dqkv = vec![T::ONE; len * 3 * d];
                backward_with(build, shape, &qkv, len, &probs, &dy, &mut dqkv, &mut Vec::new());
                assert_eq!(bits(&dqkv), bits(&dqkv_t), "gradients, {build:?} {shape:?} len {len}");
            }
        }
        for (width, heads) in [(5, 1), (16, 2), (24, 2), (40, 2), (64, 4), (128, 4)] {
            for len in [0, 1, 7, 8, 13, 64] {
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
