//! A run that diverges (a loss, gradient or parameter becomes NaN or infinite) is reported at the
//! step it did and not trained after it, while the other runs go on; on every engine.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

mod backends;
mod common;

use backends::Backend;
use common::{model, small_lab};
use gradlab::sim::data::DatasetKind;
use gradlab::sim::lab::{LabConfig, LabRun};
use gradlab::sim::metrics::StepRecord;
use gradlab::sim::model::{Activation, Norm};
use gradlab::sim::optim::{OptimizerSpec, ScheduleSpec};
use gradlab::sim::regime::{LossNormalization, RegimeSpec};

const STEPS: u64 = 12;

/// A steady run (learning rate 0.1) beside one that must blow up: the largest learning rate the
/// Lab takes, on an unscaled sum over 64 micro-batches (a 64-times gradient).
fn steady_and_exploding() -> LabConfig {
    let mut config = small_lab(
        DatasetKind::Spiral,
        model(vec![32, 32], Activation::Gelu, Norm::None),
        OptimizerSpec::Sgd { weight_decay: 0.0 },
        100.0,
        64,
        &[
            ("steady", RegimeSpec::full_batch()),
            (
                "exploding",
                RegimeSpec::accumulate(64).with_loss(LossNormalization::Unscaled),
            ),
        ],
    );
    config.runs[0].schedule = ScheduleSpec::Constant { learning_rate: 0.1 };
    config
}

fn assert_diverged_once(
    run: &LabRun<Box<dyn gradlab::sim::backend::TrainingBackend>>,
    parameters: &[f64],
    engine: &str,
) -> u64 {
    let at = run
        .diverged_at
        .unwrap_or_else(|| panic!("{engine}: the exploding run did not diverge in {STEPS} steps"));
    assert_eq!(run.history.len() as u64, at + 1, "{engine}: no records after step {at}");
    assert!(
        run.history[..at as usize].iter().all(StepRecord::is_finite),
        "{engine}: the steps before {at} were finite"
    );
    let last_finite = run.history.last().is_some_and(StepRecord::is_finite);
    let parameters_finite = parameters.iter().all(|v| v.is_finite());
    assert!(
        !(last_finite && parameters_finite),
        "{engine}: step {at} had a non-finite loss, gradient or parameter"
    );
    at
}

/// In f32 the exploding run's test loss overflows at step 2 (about 1.7e42 in exact arithmetic,
/// beyond f32's 3.4e38); in f64 the same numbers stay finite, and its dead GELU units then keep
/// the loss near 3e3, so the f64 engine must not report a divergence.
fn a_diverging_run_stops_where_it_diverged_and_the_others_go_on(backend: &Backend) {
    let mut lab = (backend.make)(steady_and_exploding());
    lab.run(STEPS, |_| {}).unwrap();
    assert_eq!(lab.steps_taken(), STEPS, "{}: the lab goes on", backend.name);
    let steady = &lab.runs()[0];
    assert_eq!(steady.diverged_at, None, "{}", backend.name);
    assert_eq!(steady.history.len() as u64, STEPS);
    assert!(steady.history.iter().all(StepRecord::is_finite));
    assert!(!lab.all_diverged());
    let exploding = &lab.runs()[1];
    let parameters = exploding.backend.parameters().unwrap();
    if backend.name == "cpu-f64" {
        assert_eq!(exploding.diverged_at, None, "f64 holds these numbers");
        assert_eq!(exploding.history.len() as u64, STEPS);
        assert!(exploding.history.iter().all(StepRecord::is_finite));
        assert!(
            exploding.history[2].test_loss.unwrap() > 1e40,
            "the value f32 cannot hold"
        );
    } else {
        assert_eq!(
            assert_diverged_once(exploding, &parameters, backend.name),
            2,
            "{}",
            backend.name
        );
    }
}

for_every_backend!(a_diverging_run_stops_where_it_diverged_and_the_others_go_on);

/// When every run diverges the lab stops by itself, before the steps asked for.
#[test]
fn a_lab_whose_runs_all_diverge_stops() {
    let mut config = steady_and_exploding();
    config.runs.remove(0);
    let mut lab = gradlab::sim::lab::CpuLab::<f32>::cpu(config).unwrap();
    let mut reported = 0;
    lab.run(1000, |done| reported = done).unwrap();
    assert!(lab.all_diverged());
    assert_eq!(lab.steps_taken(), reported);
    assert!(lab.steps_taken() <= STEPS, "{}", lab.steps_taken());
}

/// The browser's driver trains several steps before reading any back: what the GPU computed
/// after the divergence is dropped, and the next advance does not train that run any more.
#[test]
fn the_async_gpu_lab_drops_what_follows_a_divergence() {
    use gradlab::gpu::lab::GpuLab;
    let Some((context, _)) = backends::gpu_device() else {
        return;
    };
    let mut gpu = GpuLab::new(context, steady_and_exploding()).unwrap();
    pollster::block_on(gpu.advance(STEPS)).unwrap();
    pollster::block_on(gpu.advance(2)).unwrap();
    let lab = gpu.lab();
    assert_eq!(lab.runs()[0].history.len() as u64, STEPS + 2);
    assert!(lab.runs()[0].history.iter().all(StepRecord::is_finite));
    let parameters = pollster::block_on(lab.runs()[1].backend.read_parameters()).unwrap();
    let run = &lab.runs()[1];
    let at = run.diverged_at.expect("diverged");
    assert_eq!(run.history.len() as u64, at + 1);
    assert!(run.history[..at as usize].iter().all(StepRecord::is_finite));
    assert!(!run.history.last().unwrap().is_finite() || parameters.iter().any(|v| !v.is_finite()));
}
