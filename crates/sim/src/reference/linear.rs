//! Linear layers, forward and backward, as register-blocked loops.
//!
//! Every output element sums its terms in the same order and with the same operations as the
//! textbook loop (the forward over `k` from the bias, the weight gradient over the rows, the input
//! gradient over the outputs from zero), so the results are bit-identical to it; that is what
//! keeps micro-batch accumulation bit-identical to the full batch. Speed comes from doing many
//! such sums at once: a block of outputs lives in a fixed-size accumulator array that the
//! compiler keeps in vector registers (SSE2 natively, simd128 in the wasm build), and each loaded
//! input feeds a whole block. No fused multiply-add: Rust never contracts `a * b + c`.

use crate::real::Real;

/// Rows (or output features, for the weight gradient) per register block.
const BLOCK: usize = 4;
/// Features per register block: the vectorized dimension.
pub const LANES: usize = 8;

/// `y[i, o] = b[o] + sum_k x[i, k] * w[o, k]` (sum over `k` in order), `w` stored
/// `[fan_out, fan_in]`. `scratch` holds the transposed, zero-padded weights between calls, so
/// that a forward pass allocates only the first time it meets a shape.
pub fn forward<T: Real>(
    x: &[T],
    rows: usize,
    fan_in: usize,
    w: &[T],
    b: &[T],
    fan_out: usize,
    y: &mut [T],
    scratch: &mut Vec<T>,
) {
    // Transposed `[fan_in, padded]` weights, then the padded bias: a block of outputs is then
    // one contiguous load per `k`.
    let padded = fan_out.div_ceil(LANES) * LANES;
    // Grown to the largest layer met and never shrunk, so that its size is the workspace's
    // figure in `sim::engine_memory`; zeroed here because the padding lanes must be zero.
    let len = padded * (fan_in + 1);
    if scratch.len() < len {
        scratch.resize(len, T::ZERO);
    }
    let scratch = &mut scratch[..len];
    scratch.fill(T::ZERO);
    let (wt, bias) = scratch.split_at_mut(padded * fan_in);
    for o in 0..fan_out {
        for k in 0..fan_in {
            wt[k * padded + o] = w[o * fan_in + k];
        }
        bias[o] = b[o];
    }
    let shape = Shape { fan_in, fan_out };
    for o0 in (0..fan_out).step_by(LANES) {
        let mut i0 = 0;
        while i0 + BLOCK <= rows {
            forward_block::<T, BLOCK>(x, i0, shape, wt, bias, padded, o0, y);
            i0 += BLOCK;
        }
        for i in i0..rows {
            forward_block::<T, 1>(x, i, shape, wt, bias, padded, o0, y);
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Shape {
    fan_in: usize,
    fan_out: usize,
}

/// Rows `i0..i0 + R`, outputs `o0..o0 + LANES` (those below `fan_out` stored) of the forward.
#[inline(always)]
fn forward_block<T: Real, const R: usize>(
    x: &[T],
    i0: usize,
    shape: Shape,
    wt: &[T],
    bias: &[T],
    padded: usize,
    o0: usize,
    y: &mut [T],
) {
    let Shape { fan_in, fan_out } = shape;
    let mut start = [T::ZERO; LANES];
    start.copy_from_slice(&bias[o0..o0 + LANES]);
    let mut acc = [start; R];
    let rows: [&[T]; R] = std::array::from_fn(|r| &x[(i0 + r) * fan_in..(i0 + r + 1) * fan_in]);
    for (k, wrow) in wt.chunks_exact(padded).take(fan_in).enumerate() {
        let mut wk = [T::ZERO; LANES];
        wk.copy_from_slice(&wrow[o0..o0 + LANES]);
        for r in 0..R {
            let xv = rows[r][k];
            for l in 0..LANES {
                acc[r][l] += xv * wk[l];
            }
        }
    }
    let width = LANES.min(fan_out - o0);
    for (r, row) in acc.iter().enumerate() {
        let out = (i0 + r) * fan_out + o0;
        y[out..out + width].copy_from_slice(&row[..width]);
    }
}

/// Adds `dw[o, k] += sum_i dy[i, o] * x[i, k]` and `db[o] += sum_i dy[i, o]` (sums over the rows
/// in order); writes `dx[i, k] = sum_o dy[i, o] * w[o, k]` (over the outputs in order, from zero)
/// when asked for.
pub fn backward<T: Real>(
    x: &[T],
    rows: usize,
    fan_in: usize,
    w: &[T],
    fan_out: usize,
    dy: &[T],
    dw: &mut [T],
    db: &mut [T],
    dx: Option<&mut [T]>,
) {
    let shape = Shape { fan_in, fan_out };
    for i in 0..rows {
        for (d, &g) in db[..fan_out].iter_mut().zip(&dy[i * fan_out..(i + 1) * fan_out]) {
            *d += g;
        }
    }
    let mut o0 = 0;
    while o0 + BLOCK <= fan_out {
        weight_gradient_row_block::<T, BLOCK>(x, rows, shape, dy, o0, dw);
        o0 += BLOCK;
    }
    for o in o0..fan_out {
        weight_gradient_row_block::<T, 1>(x, rows, shape, dy, o, dw);
    }
    if let Some(dx) = dx {
        let mut i0 = 0;
        while i0 + BLOCK <= rows {
            input_gradient_row_block::<T, BLOCK>(i0, shape, w, dy, dx);
            i0 += BLOCK;
        }
        for i in i0..rows {
            input_gradient_row_block::<T, 1>(i, shape, w, dy, dx);
        }
    }
}

/// Weight-gradient rows `o0..o0 + O` over every `k`, in blocks of `LANES` and a scalar tail.
#[inline(always)]
fn weight_gradient_row_block<T: Real, const O: usize>(
    x: &[T],
    rows: usize,
    shape: Shape,
    dy: &[T],
    o0: usize,
    dw: &mut [T],
) {
    let mut k0 = 0;
    while k0 + LANES <= shape.fan_in {
        weight_gradient_block::<T, O, LANES>(x, rows, shape, dy, o0, k0, dw);
        k0 += LANES;
    }
    for k in k0..shape.fan_in {
        weight_gradient_block::<T, O, 1>(x, rows, shape, dy, o0, k, dw);
    }
}

/// `dw[o0..o0 + O, k0..k0 + L] += sum_i dy[i, o] * x[i, k]`, held in registers over the rows.
#[inline(always)]
fn weight_gradient_block<T: Real, const O: usize, const L: usize>(
    x: &[T],
    rows: usize,
    shape: Shape,
    dy: &[T],
    o0: usize,
    k0: usize,
    dw: &mut [T],
) {
    let Shape { fan_in, fan_out } = shape;
    let mut acc = [[T::ZERO; L]; O];
    for (oo, row) in acc.iter_mut().enumerate() {
        let at = (o0 + oo) * fan_in + k0;
        row.copy_from_slice(&dw[at..at + L]);
    }
    for i in 0..rows {
        let xk = &x[i * fan_in + k0..i * fan_in + k0 + L];
        let g = &dy[i * fan_out + o0..i * fan_out + o0 + O];
        for (row, &gv) in acc.iter_mut().zip(g) {
            for (a, &xv) in row.iter_mut().zip(xk) {
                *a += gv * xv;
            }
        }
    }
    for (oo, row) in acc.iter().enumerate() {
        let at = (o0 + oo) * fan_in + k0;
        dw[at..at + L].copy_from_slice(row);
    }
}

/// Input-gradient rows `i0..i0 + R` over every `k`, in blocks of `LANES` and a scalar tail.
#[inline(always)]
fn input_gradient_row_block<T: Real, const R: usize>(i0: usize, shape: Shape, w: &[T], dy: &[T], dx: &mut [T]) {
    let mut k0 = 0;
    while k0 + LANES <= shape.fan_in {
        input_gradient_block::<T, R, LANES>(i0, shape, w, dy, k0, dx);
        k0 += LANES;
    }
    for k in k0..shape.fan_in {
        input_gradient_block::<T, R, 1>(i0, shape, w, dy, k, dx);
    }
}

/// `dx[i0..i0 + R, k0..k0 + L] = sum_o dy[i, o] * w[o, k]`.
#[inline(always)]
fn input_gradient_block<T: Real, const R: usize, const L: usize>(
    i0: usize,
    shape: Shape,
    w: &[T],
    dy: &[T],
    k0: usize,
    dx: &mut [T],
) {
    let Shape { fan_in, fan_out } = shape;
    let mut acc = [[T::ZERO; L]; R];
    let dy = &dy[i0 * fan_out..(i0 + R) * fan_out];
    for o in 0..fan_out {
        let wo = &w[o * fan_in + k0..o * fan_in + k0 + L];
        for (r, row) in acc.iter_mut().enumerate() {
            let g = dy[r * fan_out + o];
            for (a, &wv) in row.iter_mut().zip(wo) {
                *a += g * wv;
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        let at = (i0 + r) * fan_in + k0;
        dx[at..at + L].copy_from_slice(row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng as Rng;

    /// The textbook loops that the blocked kernels must equal bit for bit.
    fn textbook_forward(x: &[f32], rows: usize, fan_in: usize, w: &[f32], b: &[f32], fan_out: usize) -> Vec<f32> {
        let mut y = vec![0.0; rows * fan_out];
        for i in 0..rows {
            for o in 0..fan_out {
                let mut acc = b[o];
                for k in 0..fan_in {
                    acc += x[i * fan_in + k] * w[o * fan_in + k];
                }
                y[i * fan_out + o] = acc;
            }
        }
        y
    }

    fn textbook_backward(
        x: &[f32],
        rows: usize,
        fan_in: usize,
        w: &[f32],
        fan_out: usize,
        dy: &[f32],
        dw: &mut [f32],
        db: &mut [f32],
    ) -> Vec<f32> {
        for i in 0..rows {
            for o in 0..fan_out {
                let g = dy[i * fan_out + o];
                db[o] += g;
                for k in 0..fan_in {
                    dw[o * fan_in + k] += g * x[i * fan_in + k];
                }
            }
        }
        let mut dx = vec![0.0; rows * fan_in];
        for i in 0..rows {
            for k in 0..fan_in {
                let mut acc = 0.0;
                for o in 0..fan_out {
                    acc += dy[i * fan_out + o] * w[o * fan_in + k];
                }
                dx[i * fan_in + k] = acc;
            }
        }
        dx
    }

    fn random(rng: &mut Rng, n: usize) -> Vec<f32> {
        (0..n).map(|_| rng.normal() as f32).collect()
    }

    /// Every shape class: multiples of the blocks, tails in every dimension, and degenerate sizes.
    const SHAPES: [(usize, usize, usize); 8] = [
        (256, 2, 64),
        (64, 64, 64),
        (61, 64, 3),
        (5, 13, 9),
        (1, 1, 1),
        (3, 17, 4),
        (8, 8, 8),
        (0, 4, 4),
    ];

    #[test]
    fn blocked_forward_is_bit_identical_to_the_textbook_loop() {
        let mut rng = Rng::new(7);
        let mut scratch = Vec::new();
        for (rows, fan_in, fan_out) in SHAPES {
            let x = random(&mut rng, rows * fan_in);
            let w = random(&mut rng, fan_out * fan_in);
            let b = random(&mut rng, fan_out);
            let mut y = vec![f32::NAN; rows * fan_out];
            forward(&x, rows, fan_in, &w, &b, fan_out, &mut y, &mut scratch);
            let expected = textbook_forward(&x, rows, fan_in, &w, &b, fan_out);
            assert_eq!(
                y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "forward {rows}x{fan_in} -> {fan_out}"
            );
        }
    }

    #[test]
    fn blocked_backward_is_bit_identical_to_the_textbook_loop() {
        let mut rng = Rng::new(8);
        for (rows, fan_in, fan_out) in SHAPES {
            let x = random(&mut rng, rows * fan_in);
            let w = random(&mut rng, fan_out * fan_in);
            let dy = random(&mut rng, rows * fan_out);
            // Gradients already holding a sum, as when accumulating the second micro-batch.
            let dw0 = random(&mut rng, fan_out * fan_in);
            let db0 = random(&mut rng, fan_out);
            let (mut dw, mut db) = (dw0.clone(), db0.clone());
            let mut dx = vec![f32::NAN; rows * fan_in];
            backward(&x, rows, fan_in, &w, fan_out, &dy, &mut dw, &mut db, Some(&mut dx));
            let (mut dw_expected, mut db_expected) = (dw0, db0);
            let dx_expected = textbook_backward(&x, rows, fan_in, &w, fan_out, &dy, &mut dw_expected, &mut db_expected);
            let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            let shape = format!("{rows}x{fan_in} -> {fan_out}");
            assert_eq!(bits(&dw), bits(&dw_expected), "weight gradient {shape}");
            assert_eq!(bits(&db), bits(&db_expected), "bias gradient {shape}");
            assert_eq!(bits(&dx), bits(&dx_expected), "input gradient {shape}");
        }
    }
}
