//! Finite-difference checks, in f64, of every layer's backward pass and of the whole network.
//! Central differences with step 1e-6 have truncation error ~1e-12 relative; a wrong formula
//! gives errors of order 1, so the 1e-6 tolerance cannot hide a bug.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

mod common;

use common::{model, random_vec, relative};
use gradlab::sim::backend::TrainingBackend;
use gradlab::sim::data::Split;
use gradlab::sim::model::{Activation, Layout, Norm};
use gradlab::sim::optim::OptimizerSpec;
use gradlab::sim::reference::{backward, forward, linear, ReferenceEngine};
use gradlab::sim::rng::SeededRng;

const STEP: f64 = 1e-6;
const TOLERANCE: f64 = 1e-6;

/// Central-difference gradient of `f` at `x`.
fn numeric_gradient(x: &[f64], mut f: impl FnMut(&[f64]) -> f64) -> Vec<f64> {
    let mut probe = x.to_vec();
    (0..x.len())
        .map(|i| {
            probe[i] = x[i] + STEP;
            let up = f(&probe);
            probe[i] = x[i] - STEP;
            let down = f(&probe);
            probe[i] = x[i];
            (up - down) / (2.0 * STEP)
        })
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn assert_close(what: &str, analytic: &[f64], numeric: &[f64]) {
    let error = relative(analytic, numeric);
    assert!(
        error < TOLERANCE,
        "{what}: relative error {error:e}\nanalytic {analytic:?}\nnumeric {numeric:?}"
    );
}

#[test]
fn linear_backward_matches_finite_differences() {
    let mut rng = SeededRng::new(1);
    let (rows, fan_in, fan_out) = (4, 3, 5);
    let x = random_vec(&mut rng, rows * fan_in, 1.0);
    let w = random_vec(&mut rng, fan_out * fan_in, 1.0);
    let b = random_vec(&mut rng, fan_out, 1.0);
    let upstream = random_vec(&mut rng, rows * fan_out, 1.0);
    let loss = |x: &[f64], w: &[f64], b: &[f64]| {
        let mut y = vec![0.0; rows * fan_out];
        linear::forward(x, rows, fan_in, w, b, fan_out, &mut y, &mut Vec::new());
        dot(&y, &upstream)
    };
    let (mut dw, mut db, mut dx) = (vec![0.0; w.len()], vec![0.0; b.len()], vec![0.0; x.len()]);
    linear::backward(
        &x,
        rows,
        fan_in,
        &w,
        fan_out,
        &upstream,
        &mut dw,
        &mut db,
        Some(&mut dx),
    );
    assert_close("dx", &dx, &numeric_gradient(&x, |p| loss(p, &w, &b)));
    assert_close("dw", &dw, &numeric_gradient(&w, |p| loss(&x, p, &b)));
    assert_close("db", &db, &numeric_gradient(&b, |p| loss(&x, &w, p)));
}

#[test]
fn linear_backward_adds_into_parameter_gradients() {
    let (x, w, dy) = ([1.0, 2.0], [0.5, -1.0], [3.0]);
    let (mut dw, mut db) = (vec![10.0, 10.0], vec![1.0]);
    linear::backward(&x, 1, 2, &w, 1, &dy, &mut dw, &mut db, None);
    assert_eq!(dw, vec![13.0, 16.0]);
    assert_eq!(db, vec![4.0]);
}

#[test]
fn every_activation_backward_matches_finite_differences() {
    let mut rng = SeededRng::new(2);
    // Keep ReLU inputs away from the kink at 0, where the derivative is undefined.
    let u: Vec<f64> = random_vec(&mut rng, 40, 1.5)
        .into_iter()
        .map(|v| if v.abs() < 1e-3 { 0.5 } else { v })
        .collect();
    let upstream = random_vec(&mut rng, 40, 1.0);
    for kind in Activation::ALL {
        let loss = |u: &[f64]| {
            let mut a = vec![0.0; u.len()];
            forward::activation(kind, u, &mut a);
            dot(&a, &upstream)
        };
        let mut a = vec![0.0; u.len()];
        forward::activation(kind, &u, &mut a);
        let mut du = vec![0.0; u.len()];
        backward::activation(kind, &u, &a, &upstream, &mut du);
        assert_close(&format!("{kind:?}"), &du, &numeric_gradient(&u, loss));
    }
}

#[test]
fn gelu_is_the_tanh_approximation() {
    let mut a = [0.0f64; 3];
    forward::activation(Activation::Gelu, &[-1.0, 0.0, 2.0], &mut a);
    // PyTorch gelu(approximate="tanh") at -1, 0, 2.
    let expected = [-0.158_808_009_4, 0.0, 1.954_597_694];
    for (got, want) in a.iter().zip(expected) {
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }
}

fn norm_case(norm: Norm, rows: usize, width: usize, seed: u64) {
    let mut rng = SeededRng::new(seed);
    let z = random_vec(&mut rng, rows * width, 2.0);
    let gamma: Vec<f64> = random_vec(&mut rng, width, 0.5).iter().map(|g| 1.0 + g).collect();
    let beta = random_vec(&mut rng, width, 0.5);
    let upstream = random_vec(&mut rng, rows * width, 1.0);
    let geometry = forward::NormGeometry::new(norm, rows, width);
    let run = |z: &[f64], gamma: &[f64], beta: &[f64]| {
        let n = rows * width;
        let (mut xhat, mut out) = (vec![0.0; n], vec![0.0; n]);
        let (mut mean, mut var, mut rstd) = (
            vec![0.0; geometry.sets],
            vec![0.0; geometry.sets],
            vec![0.0; geometry.sets],
        );
        forward::norm_train(
            geometry,
            norm.eps(),
            z,
            width,
            gamma,
            beta,
            &mut xhat,
            &mut out,
            &mut mean,
            &mut var,
            &mut rstd,
        );
        (dot(&out, &upstream), xhat, rstd)
    };
    let (_, xhat, rstd) = run(&z, &gamma, &beta);
    let (mut dgamma, mut dbeta, mut dz) = (vec![0.0; width], vec![0.0; width], vec![0.0; rows * width]);
    backward::norm(
        geometry,
        width,
        &xhat,
        &rstd,
        &gamma,
        &upstream,
        &mut dgamma,
        &mut dbeta,
        &mut dz,
    );
    let label = norm.label();
    assert_close(
        &format!("{label} dz"),
        &dz,
        &numeric_gradient(&z, |p| run(p, &gamma, &beta).0),
    );
    assert_close(
        &format!("{label} dgamma"),
        &dgamma,
        &numeric_gradient(&gamma, |p| run(&z, p, &beta).0),
    );
    assert_close(
        &format!("{label} dbeta"),
        &dbeta,
        &numeric_gradient(&beta, |p| run(&z, &gamma, p).0),
    );
}

#[test]
fn batch_norm_backward_matches_finite_differences() {
    norm_case(Norm::batch_norm(), 6, 4, 3);
}

#[test]
fn layer_norm_backward_matches_finite_differences() {
    norm_case(Norm::layer_norm(), 5, 6, 4);
}

#[test]
fn group_norm_backward_matches_finite_differences() {
    norm_case(Norm::group_norm(3), 5, 6, 5);
    norm_case(Norm::group_norm(1), 3, 4, 6);
}

#[test]
fn norms_normalize_over_the_right_axis() {
    // Two rows, four features. LayerNorm: each row has mean 0 and variance ~1.
    let z = [1.0, 2.0, 3.0, 4.0, 10.0, 0.0, -10.0, 0.0];
    let check = |norm: Norm, sets: usize| {
        let geometry = forward::NormGeometry::new(norm, 2, 4);
        assert_eq!(geometry.sets, sets);
        let (mut xhat, mut out) = (vec![0.0; 8], vec![0.0; 8]);
        let (mut m, mut v, mut r) = (vec![0.0; sets], vec![0.0; sets], vec![0.0; sets]);
        forward::norm_train(
            geometry, 0.0, &z, 4, &[1.0; 4], &[0.0; 4], &mut xhat, &mut out, &mut m, &mut v, &mut r,
        );
        (out, m)
    };
    let (out, mean) = check(Norm::LayerNorm { eps: 0.0 }, 2);
    assert_eq!(mean, vec![2.5, 0.0]);
    assert!((out[..4].iter().sum::<f64>()).abs() < 1e-12);
    let (_, mean) = check(
        Norm::BatchNorm {
            momentum: 0.1,
            eps: 0.0,
        },
        4,
    );
    assert_eq!(mean, vec![5.5, 1.0, -3.5, 2.0]);
    let (_, mean) = check(Norm::GroupNorm { groups: 2, eps: 0.0 }, 4);
    assert_eq!(mean, vec![1.5, 3.5, 5.0, -5.0]);
}

#[test]
fn softmax_cross_entropy_backward_matches_finite_differences() {
    let mut rng = SeededRng::new(7);
    let (rows, classes) = (5, 3);
    let logits = random_vec(&mut rng, rows * classes, 3.0);
    let labels = [0, 2, 1, 1, 0];
    let weight = 0.37;
    let loss = |l: &[f64]| {
        let mut probs = vec![0.0; l.len()];
        weight * forward::softmax_cross_entropy(l, classes, &labels, &mut probs)
    };
    let mut probs = vec![0.0; logits.len()];
    forward::softmax_cross_entropy(&logits, classes, &labels, &mut probs);
    let mut dlogits = vec![0.0; logits.len()];
    backward::softmax_cross_entropy(&probs, classes, &labels, weight, &mut dlogits);
    assert_close("dlogits", &dlogits, &numeric_gradient(&logits, loss));
}

#[test]
fn softmax_cross_entropy_is_stable_for_large_logits() {
    let mut probs = [0.0; 2];
    let loss = forward::softmax_cross_entropy(&[1000.0f64, 0.0], 2, &[1], &mut probs);
    assert!((loss - 1000.0).abs() < 1e-9 && probs[0] > 0.999_999);
}

fn empty_test_split() -> Split {
    Split {
        inputs: vec![0.0, 0.0],
        labels: vec![0],
        example_offsets: vec![0, 1],
    }
}

/// The whole network: analytic parameter gradient against finite differences of the loss.
fn whole_network_case(norm: Norm, activation: Activation, seed: u64) {
    let spec = model(vec![6, 4], activation, norm);
    let layout = Layout::new(&spec, 2, 3);
    let (mut params, buffers) = layout.initialize(seed);
    let mut rng = SeededRng::new(seed);
    // Perturb scale and shift away from 1 and 0 so their gradients are exercised in general position.
    for p in &mut params {
        *p += rng.normal() * 0.1;
    }
    let rows = 7;
    let inputs = random_vec(&mut rng, rows * 2, 1.0);
    let labels: Vec<u32> = (0..rows).map(|i| (i % 3) as u32).collect();
    let weight = 1.0 / rows as f64;
    let mut engine =
        ReferenceEngine::<f64>::new(layout, &params, &buffers, OptimizerSpec::default(), &empty_test_split()).unwrap();
    engine.zero_grad();
    engine.accumulate_items(&inputs, &labels, weight);
    let analytic = engine.gradient().unwrap();
    let numeric = numeric_gradient(&params, |p| {
        engine.set_parameters(p);
        engine.loss_at(&inputs, &labels, weight)
    });
    assert_close(&format!("network {} {activation:?}", norm.label()), &analytic, &numeric);
}

#[test]
fn whole_network_gradient_matches_finite_differences_for_every_norm_and_activation() {
    let mut seed = 10;
    for norm in [Norm::None, Norm::batch_norm(), Norm::layer_norm(), Norm::group_norm(2)] {
        for activation in Activation::ALL {
            seed += 1;
            whole_network_case(norm, activation, seed);
        }
    }
}

#[test]
fn a_wrong_gradient_is_caught_by_the_check() {
    // The check itself must be able to fail: a gradient off by 1 % in one entry is rejected.
    let x = [0.3, -0.7, 1.1];
    let f = |p: &[f64]| p.iter().map(|v| v * v * v).sum::<f64>();
    let mut wrong: Vec<f64> = x.iter().map(|v| 3.0 * v * v).collect();
    wrong[1] *= 1.01;
    assert!(relative(&wrong, &numeric_gradient(&x, f)) > TOLERANCE);
}
