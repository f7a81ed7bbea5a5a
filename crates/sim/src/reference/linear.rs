//! Linear layers, forward and backward, as register-blocked loops.
//!
//! Every output element sums its terms in the same order and with the same operations as the
//! textbook loop (the forward over `k` from the bias, the weight gradient over the rows, the input
//! gradient over the outputs from zero), so the results are bit-identical to it; that is what
//! keeps micro-batch accumulation bit-identical to the full batch. Speed comes from doing many
//! such sums at once: a block of outputs lives in a fixed-size accumulator array that the
//! compiler keeps in vector registers (SSE2 natively, simd128 in the wasm build), and each loaded
//! input feeds a whole block. No fused multiply-add: Rust never contracts `a * b + c`.

use std::ops::Range;

use crate::real::Real;
use crate::simd::{self, Isa};

/// Rows (or output features, for the weight gradient) per register block.
const BLOCK: usize = 4;
/// Features per register block (the vectorized dimension) of the portable build: two SSE2 or
/// simd128 registers of f32, so that four rows give eight independent sums in flight.
const LANES: usize = 8;
/// The transposed weights' rows are padded to a multiple of this: the widest block of any build.
pub const PADDING: usize = 32;
/// Rows per cache tile: the kernels sweep a layer's input once per block of outputs, so a tile
/// of 64 rows (16 KiB of a 64-wide f32 layer, its gradient as much) stays in L1 across those
/// sweeps, where a full batch of 256 rows would not. Tiling over rows keeps every sum's order:
/// a tile's sums start from where the previous tile left them.
const ROW_TILE: usize = 64;

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
    forward_with(simd::best(), x, rows, fan_in, w, b, fan_out, y, scratch);
}

/// [`forward`] for the build's baseline instruction set (SSE2 natively, simd128 in wasm).
#[inline(always)]
fn forward_portable<T: Real, const L: usize>(
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
    let padded = fan_out.div_ceil(PADDING) * PADDING;
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
    for tile in (0..rows).step_by(ROW_TILE) {
        let end = rows.min(tile + ROW_TILE);
        for o0 in (0..fan_out).step_by(L) {
            let mut i0 = tile;
            while i0 + BLOCK <= end {
                forward_block::<T, BLOCK, L>(x, i0, shape, wt, bias, padded, o0, y);
                i0 += BLOCK;
            }
            for i in i0..end {
                forward_block::<T, 1, L>(x, i, shape, wt, bias, padded, o0, y);
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Shape {
    fan_in: usize,
    fan_out: usize,
}

/// Rows `i0..i0 + R`, outputs `o0..o0 + L` (those below `fan_out` stored) of the forward.
#[inline(always)]
fn forward_block<T: Real, const R: usize, const L: usize>(
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
    let mut start = [T::ZERO; L];
    start.copy_from_slice(&bias[o0..o0 + L]);
    let mut acc = [start; R];
    let rows: [&[T]; R] = std::array::from_fn(|r| &x[(i0 + r) * fan_in..(i0 + r + 1) * fan_in]);
    for (k, wrow) in wt.chunks_exact(padded).take(fan_in).enumerate() {
        let mut wk = [T::ZERO; L];
        wk.copy_from_slice(&wrow[o0..o0 + L]);
        for r in 0..R {
            let xv = rows[r][k];
            for l in 0..L {
                acc[r][l] += xv * wk[l];
            }
        }
    }
    let width = L.min(fan_out - o0);
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
    backward_with(simd::best(), x, rows, fan_in, w, fan_out, dy, dw, db, dx);
}

/// [`backward`] for the build's baseline instruction set.
#[inline(always)]
fn backward_portable<T: Real, const L: usize>(
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
    for tile in (0..rows).step_by(ROW_TILE) {
        let rows = tile..rows.min(tile + ROW_TILE);
        let mut o0 = 0;
        while o0 + BLOCK <= fan_out {
            weight_gradient_row_block::<T, BLOCK, L>(x, rows.clone(), shape, dy, o0, dw);
            o0 += BLOCK;
        }
        for o in o0..fan_out {
            weight_gradient_row_block::<T, 1, L>(x, rows.clone(), shape, dy, o, dw);
        }
    }
    if let Some(dx) = dx {
        let mut i0 = 0;
        while i0 + BLOCK <= rows {
            input_gradient_row_block::<T, BLOCK, L>(i0, shape, w, dy, dx);
            i0 += BLOCK;
        }
        for i in i0..rows {
            input_gradient_row_block::<T, 1, L>(i, shape, w, dy, dx);
        }
    }
}

/// Weight-gradient rows `o0..o0 + O` over every `k`, in blocks of `L` and a scalar tail.
#[inline(always)]
fn weight_gradient_row_block<T: Real, const O: usize, const L: usize>(
    x: &[T],
    rows: Range<usize>,
    shape: Shape,
    dy: &[T],
    o0: usize,
    dw: &mut [T],
) {
    let mut k0 = 0;
    while k0 + L <= shape.fan_in {
        weight_gradient_block::<T, O, L>(x, rows.clone(), shape, dy, o0, k0, dw);
        k0 += L;
    }
    for k in k0..shape.fan_in {
        weight_gradient_block::<T, O, 1>(x, rows.clone(), shape, dy, o0, k, dw);
    }
}

/// `dw[o0..o0 + O, k0..k0 + L] += sum_i dy[i, o] * x[i, k]` over `rows` in order, held in
/// registers over the rows.
#[inline(always)]
fn weight_gradient_block<T: Real, const O: usize, const L: usize>(
    x: &[T],
    rows: Range<usize>,
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
    for i in rows {
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

/// Input-gradient rows `i0..i0 + R` over every `k`, in blocks of `L` and a scalar tail.
#[inline(always)]
fn input_gradient_row_block<T: Real, const R: usize, const L: usize>(
    i0: usize,
    shape: Shape,
    w: &[T],
    dy: &[T],
    dx: &mut [T],
) {
    let mut k0 = 0;
    while k0 + L <= shape.fan_in {
        input_gradient_block::<T, R, L>(i0, shape, w, dy, k0, dx);
        k0 += L;
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

/// The kernels compiled again for AVX2 and AVX-512 (see [`crate::simd`]): two registers of `T`
/// per row, so that four rows keep eight independent sums in flight.
#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "calling a target_feature function needs unsafe; the feature is checked first"
)]
mod wide {
    use super::{backward_portable, forward_portable, LANES};
    use crate::real::Real;
    use crate::simd::Isa;

    pub(super) fn forward<T: Real>(
        isa: Isa,
        x: &[T],
        rows: usize,
        fan_in: usize,
        w: &[T],
        b: &[T],
        fan_out: usize,
        y: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        match isa {
            // SAFETY: the CPU has the build's feature (checked in the guard), the only
            // requirement of a `#[target_feature]` function; the body is safe code.
            Isa::Avx512 if isa.runs_here() => unsafe { forward_avx512(x, rows, fan_in, w, b, fan_out, y, scratch) },
            // SAFETY: as above.
            Isa::Avx2 if isa.runs_here() => unsafe { forward_avx2(x, rows, fan_in, w, b, fan_out, y, scratch) },
            _ => forward_portable::<T, LANES>(x, rows, fan_in, w, b, fan_out, y, scratch),
        }
    }

    pub(super) fn backward<T: Real>(
        isa: Isa,
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
        match isa {
            // SAFETY: as in `forward`.
            Isa::Avx512 if isa.runs_here() => unsafe { backward_avx512(x, rows, fan_in, w, fan_out, dy, dw, db, dx) },
            // SAFETY: as in `forward`.
            Isa::Avx2 if isa.runs_here() => unsafe { backward_avx2(x, rows, fan_in, w, fan_out, dy, dw, db, dx) },
            _ => backward_portable::<T, LANES>(x, rows, fan_in, w, fan_out, dy, dw, db, dx),
        }
    }

    #[target_feature(enable = "avx2")]
    fn forward_avx2<T: Real>(
        x: &[T],
        rows: usize,
        fan_in: usize,
        w: &[T],
        b: &[T],
        fan_out: usize,
        y: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        if Isa::Avx2.two_registers_of::<T>() == 16 {
            forward_portable::<T, 16>(x, rows, fan_in, w, b, fan_out, y, scratch);
        } else {
            forward_portable::<T, LANES>(x, rows, fan_in, w, b, fan_out, y, scratch);
        }
    }

    #[target_feature(enable = "avx2")]
    fn backward_avx2<T: Real>(
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
        if Isa::Avx2.two_registers_of::<T>() == 16 {
            backward_portable::<T, 16>(x, rows, fan_in, w, fan_out, dy, dw, db, dx);
        } else {
            backward_portable::<T, LANES>(x, rows, fan_in, w, fan_out, dy, dw, db, dx);
        }
    }

    #[target_feature(enable = "avx512f")]
    fn forward_avx512<T: Real>(
        x: &[T],
        rows: usize,
        fan_in: usize,
        w: &[T],
        b: &[T],
        fan_out: usize,
        y: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        if Isa::Avx512.two_registers_of::<T>() == 32 {
            forward_portable::<T, 32>(x, rows, fan_in, w, b, fan_out, y, scratch);
        } else {
            forward_portable::<T, 16>(x, rows, fan_in, w, b, fan_out, y, scratch);
        }
    }

    #[target_feature(enable = "avx512f")]
    fn backward_avx512<T: Real>(
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
        if Isa::Avx512.two_registers_of::<T>() == 32 {
            backward_portable::<T, 32>(x, rows, fan_in, w, fan_out, dy, dw, db, dx);
        } else {
            backward_portable::<T, 16>(x, rows, fan_in, w, fan_out, dy, dw, db, dx);
        }
    }
}

/// [`forward`] built for `isa` (the portable build where this CPU lacks it).
fn forward_with<T: Real>(
    isa: Isa,
    x: &[T],
    rows: usize,
    fan_in: usize,
    w: &[T],
    b: &[T],
    fan_out: usize,
    y: &mut [T],
    scratch: &mut Vec<T>,
) {
    #[cfg(target_arch = "x86_64")]
    return wide::forward(isa, x, rows, fan_in, w, b, fan_out, y, scratch);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = isa;
        forward_portable::<T, LANES>(x, rows, fan_in, w, b, fan_out, y, scratch);
    }
}

/// [`backward`] built for `isa` (the portable build where this CPU lacks it).
fn backward_with<T: Real>(
    isa: Isa,
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
    #[cfg(target_arch = "x86_64")]
    return wide::backward(isa, x, rows, fan_in, w, fan_out, dy, dw, db, dx);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = isa;
        backward_portable::<T, LANES>(x, rows, fan_in, w, fan_out, dy, dw, db, dx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng as Rng;

    /// The textbook loops that the blocked kernels must equal bit for bit.
    fn textbook_forward<T: Real>(x: &[T], rows: usize, fan_in: usize, w: &[T], b: &[T], fan_out: usize) -> Vec<T> {
        let mut y = vec![T::ZERO; rows * fan_out];
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

    fn textbook_backward<T: Real>(
        x: &[T],
        rows: usize,
        fan_in: usize,
        w: &[T],
        fan_out: usize,
        dy: &[T],
        dw: &mut [T],
        db: &mut [T],
    ) -> Vec<T> {
        for i in 0..rows {
            for o in 0..fan_out {
                let g = dy[i * fan_out + o];
                db[o] += g;
                for k in 0..fan_in {
                    dw[o * fan_in + k] += g * x[i * fan_in + k];
                }
            }
        }
        let mut dx = vec![T::ZERO; rows * fan_in];
        for i in 0..rows {
            for k in 0..fan_in {
                let mut acc = T::ZERO;
                for o in 0..fan_out {
                    acc += dy[i * fan_out + o] * w[o * fan_in + k];
                }
                dx[i * fan_in + k] = acc;
            }
        }
        dx
    }

    /// Every build of the kernels this machine runs (the CI machines run all three).
    fn builds() -> Vec<Isa> {
        let builds = simd::available();
        if builds.len() < 3 {
            eprintln!("this CPU runs only {builds:?}: the other builds of the linear kernels were not checked");
        }
        builds
    }

    fn random<T: Real>(rng: &mut Rng, n: usize) -> Vec<T> {
        (0..n).map(|_| T::from_f64(rng.normal())).collect()
    }

    fn bits<T: Real>(values: &[T]) -> Vec<u64> {
        values.iter().map(|v| v.to_f64().to_bits()).collect()
    }

    /// Every shape class: multiples of the blocks, tails in every dimension (beyond one block of
    /// the widest build, too), and degenerate sizes.
    const SHAPES: [(usize, usize, usize); 12] = [
        (7, 45, 37),
        (66, 33, 70),
        (3, 100, 65),
        (256, 2, 64),
        (200, 64, 64),
        (64, 64, 64),
        (61, 64, 3),
        (5, 13, 9),
        (1, 1, 1),
        (3, 17, 4),
        (8, 8, 8),
        (0, 4, 4),
    ];

    fn check_forward<T: Real>(seed: u64) {
        let mut rng = Rng::new(seed);
        let mut scratch = Vec::new();
        for (rows, fan_in, fan_out) in SHAPES {
            let x = random::<T>(&mut rng, rows * fan_in);
            let w = random::<T>(&mut rng, fan_out * fan_in);
            let b = random::<T>(&mut rng, fan_out);
            let expected = textbook_forward(&x, rows, fan_in, &w, &b, fan_out);
            for build in builds() {
                let mut y = vec![T::from_f64(f64::NAN); rows * fan_out];
                forward_with(build, &x, rows, fan_in, &w, &b, fan_out, &mut y, &mut scratch);
                assert_eq!(
                    bits(&y),
                    bits(&expected),
                    "{} {build:?} forward {rows}x{fan_in} -> {fan_out}",
                    T::NAME
                );
            }
        }
    }

    fn check_backward<T: Real>(seed: u64) {
        let mut rng = Rng::new(seed);
        for (rows, fan_in, fan_out) in SHAPES {
            let x = random::<T>(&mut rng, rows * fan_in);
            let w = random::<T>(&mut rng, fan_out * fan_in);
            let dy = random::<T>(&mut rng, rows * fan_out);
            // Gradients already holding a sum, as when accumulating the second micro-batch.
            let dw0 = random::<T>(&mut rng, fan_out * fan_in);
            let db0 = random::<T>(&mut rng, fan_out);
            let (mut dw_expected, mut db_expected) = (dw0.clone(), db0.clone());
            let dx_expected = textbook_backward(&x, rows, fan_in, &w, fan_out, &dy, &mut dw_expected, &mut db_expected);
            for build in builds() {
                let (mut dw, mut db) = (dw0.clone(), db0.clone());
                let mut dx = vec![T::from_f64(f64::NAN); rows * fan_in];
                backward_with(
                    build,
                    &x,
                    rows,
                    fan_in,
                    &w,
                    fan_out,
                    &dy,
                    &mut dw,
                    &mut db,
                    Some(&mut dx),
                );
                let shape = format!("{} {build:?} {rows}x{fan_in} -> {fan_out}", T::NAME);
                assert_eq!(bits(&dw), bits(&dw_expected), "weight gradient {shape}");
                assert_eq!(bits(&db), bits(&db_expected), "bias gradient {shape}");
                assert_eq!(bits(&dx), bits(&dx_expected), "input gradient {shape}");
            }
        }
    }

    #[test]
    fn blocked_forward_is_bit_identical_to_the_textbook_loop() {
        check_forward::<f32>(7);
        check_forward::<f64>(17);
    }

    #[test]
    fn blocked_backward_is_bit_identical_to_the_textbook_loop() {
        check_backward::<f32>(8);
        check_backward::<f64>(18);
    }
}
