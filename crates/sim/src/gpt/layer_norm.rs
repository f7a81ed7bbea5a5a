//! LayerNorm over the features of each row (`[rows, d]`, contiguous), forward and backward: the
//! same operations in the same order as the MLP's reference (`reference::forward::norm_train`,
//! `reference::backward::norm`), so the same bits, as loops over whole rows that the compiler
//! vectorizes where no sum's order is at stake.

use crate::real::Real;

/// Writes each row's `xhat`, `out = gamma · xhat + beta` and reciprocal standard deviation.
#[allow(clippy::too_many_arguments, reason = "a kernel's operands, named at the call")]
pub fn forward<T: Real>(
    eps: f64,
    z: &[T],
    d: usize,
    gamma: &[T],
    beta: &[T],
    xhat: &mut [T],
    out: &mut [T],
    rstd: &mut [T],
) {
    let len = T::from_usize(d);
    let eps = T::from_f64(eps);
    for (((z, xhat), out), rstd) in z
        .chunks_exact(d)
        .zip(xhat.chunks_exact_mut(d))
        .zip(out.chunks_exact_mut(d))
        .zip(rstd.iter_mut())
    {
        let mut sum = T::ZERO;
        for &v in z {
            sum += v;
        }
        let mu = sum / len;
        let mut squares = T::ZERO;
        for &v in z {
            let c = v - mu;
            squares += c * c;
        }
        let r = T::ONE / (squares / len + eps).sqrt();
        *rstd = r;
        for (((x, o), &v), (&g, &b)) in xhat.iter_mut().zip(out.iter_mut()).zip(z).zip(gamma.iter().zip(beta)) {
            *x = (v - mu) * r;
            *o = g * *x + b;
        }
    }
}

/// Adds `dgamma`, `dbeta` (summed over the rows in order); writes `dz`:
/// `dz = rstd / d · (d · dxhat − sum(dxhat) − xhat · sum(dxhat · xhat))` per row.
#[allow(clippy::too_many_arguments, reason = "a kernel's operands, named at the call")]
pub fn backward<T: Real>(
    d: usize,
    xhat: &[T],
    rstd: &[T],
    gamma: &[T],
    dout: &[T],
    dgamma: &mut [T],
    dbeta: &mut [T],
    dz: &mut [T],
) {
    for (dout, xhat) in dout.chunks_exact(d).zip(xhat.chunks_exact(d)) {
        for (((dg, db), &g), &x) in dgamma.iter_mut().zip(dbeta.iter_mut()).zip(dout).zip(xhat) {
            *dg += g * x;
            *db += g;
        }
    }
    let n = T::from_usize(d);
    for (((dout, xhat), dz), &r) in dout
        .chunks_exact(d)
        .zip(xhat.chunks_exact(d))
        .zip(dz.chunks_exact_mut(d))
        .zip(rstd)
    {
        let mut sum = T::ZERO;
        let mut dot = T::ZERO;
        for ((&g, &x), &w) in dout.iter().zip(xhat).zip(gamma) {
            let dxhat = g * w;
            sum += dxhat;
            dot += dxhat * x;
        }
        let scale = r / n;
        for (((dz, &g), &x), &w) in dz.iter_mut().zip(dout).zip(xhat).zip(gamma) {
            *dz = scale * (n * (g * w) - sum - x * dot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Norm;
    use crate::reference::forward::NormGeometry;
    use crate::reference::{backward as reference_backward, forward as reference_forward};
    use crate::rng::SeededRng;

    #[test]
    fn it_gives_the_mlp_references_bits() {
        let (rows, d) = (7, 12);
        let mut rng = SeededRng::new(3);
        let mut draw = |n: usize| -> Vec<f32> { (0..n).map(|_| rng.normal() as f32).collect() };
        let (z, gamma, beta, dout) = (draw(rows * d), draw(d), draw(d), draw(rows * d));
        let geometry = NormGeometry::new(Norm::layer_norm(), rows, d);
        let (mut xhat, mut out, mut rstd) = (vec![0.0; rows * d], vec![0.0; rows * d], vec![0.0; rows]);
        forward(1e-5, &z, d, &gamma, &beta, &mut xhat, &mut out, &mut rstd);
        let (mut xhat2, mut out2, mut mean2, mut var2, mut rstd2) = (
            vec![0.0; rows * d],
            vec![0.0; rows * d],
            vec![0.0; rows],
            vec![0.0; rows],
            vec![0.0; rows],
        );
        reference_forward::norm_train(
            geometry, 1e-5, &z, d, &gamma, &beta, &mut xhat2, &mut out2, &mut mean2, &mut var2, &mut rstd2,
        );
        assert_eq!((&xhat, &out, &rstd), (&xhat2, &out2, &rstd2));
        let (mut dg, mut db, mut dz) = (vec![0.5; d], vec![0.25; d], vec![0.0; rows * d]);
        backward(d, &xhat, &rstd, &gamma, &dout, &mut dg, &mut db, &mut dz);
        let (mut dg2, mut db2, mut dz2) = (vec![0.5; d], vec![0.25; d], vec![0.0; rows * d]);
        reference_backward::norm(geometry, d, &xhat2, &rstd2, &gamma, &dout, &mut dg2, &mut db2, &mut dz2);
        assert_eq!((&dg, &db, &dz), (&dg2, &db2, &dz2));
    }
}
