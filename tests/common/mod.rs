//! Helpers shared by the integration tests.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use gradlab::sim::data::{DatasetKind, DatasetSpec};
use gradlab::sim::lab::{LabConfig, RunSpec};
use gradlab::sim::model::{Activation, ModelSpec, Norm};
use gradlab::sim::optim::{OptimizerSpec, ScheduleSpec};
use gradlab::sim::regime::RegimeSpec;
use gradlab::sim::rng::SeededRng;

/// Notes that the running test skipped part of its work knowingly (GRADLAB_SKIP_GPU_TESTS=1 or
/// GRADLAB_SKIP_POSTGRES_TESTS=1): a line in the file GRADLAB_SKIPPED_TESTS_FILE names, which
/// the test command counts and prints, so that a skipped test never passes as a plain "ok".
pub fn record_skip(what: &str) {
    use std::io::Write;
    let test = std::thread::current().name().unwrap_or("(main)").to_string();
    // The test binary's name, without the hash cargo appends.
    let binary = std::env::current_exe()
        .ok()
        .and_then(|path| path.file_stem().map(|stem| stem.to_string_lossy().into_owned()))
        .map(|stem| stem.rsplit_once('-').map_or(stem.clone(), |(name, _)| name.to_string()))
        .unwrap_or_default();
    eprintln!("SKIPPED {what}: {test}");
    let Ok(path) = std::env::var("GRADLAB_SKIPPED_TESTS_FILE") else {
        return;
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    // One write per line: tests run in parallel, and an appended write is not split.
    let line = format!("{binary} {test}: {what}\n");
    file.write_all(line.as_bytes())
        .unwrap_or_else(|e| panic!("{path}: {e}"));
}

/// Relative L2 distance `|a - b| / |b|`.
pub fn relative(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    gradlab::sim::metrics::relative_distance(a, b)
}

pub fn random_vec(rng: &mut SeededRng, len: usize, scale: f64) -> Vec<f64> {
    (0..len).map(|_| rng.normal() * scale).collect()
}

/// A small lab with one run per regime, everything else shared.
pub fn small_lab(
    kind: DatasetKind,
    model: ModelSpec,
    optimizer: OptimizerSpec,
    learning_rate: f64,
    batch_size: usize,
    regimes: &[(&str, RegimeSpec)],
) -> LabConfig {
    LabConfig {
        dataset: DatasetSpec {
            kind,
            examples_per_class: 60,
            ..DatasetSpec::default()
        },
        batch_size,
        steps: 5,
        runs: regimes
            .iter()
            .map(|(label, regime)| RunSpec {
                label: (*label).to_string(),
                model: model.clone(),
                optimizer,
                schedule: ScheduleSpec::Constant { learning_rate },
                regime: *regime,
                clip_max_norm: None,
            })
            .collect(),
        ..LabConfig::default()
    }
}

pub fn model(hidden: Vec<usize>, activation: Activation, norm: Norm) -> ModelSpec {
    ModelSpec {
        hidden,
        activation,
        norm,
    }
}

pub const NORMS_THAT_MATCH: [(&str, Norm); 3] = [
    ("none", Norm::None),
    ("layer", Norm::LayerNorm { eps: 1e-5 }),
    ("group", Norm::GroupNorm { groups: 4, eps: 1e-5 }),
];
