//! The CPU engine's optimizer steps allocate nothing once its workspace has met the shapes.
//! Only this test binary links the counting allocator (`allocation-counter`), which counts the
//! allocations of the current thread.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

use gradlab::sim::backend::TrainingBackend;
use gradlab::sim::lab::CpuLab;
use gradlab::sim::real::Real;
use gradlab::sim::regime::MetricOps;
use gradlab::sim::scenario::{canonical_config, Scenario};

/// Allocations of `steps` optimizer steps of run `run`'s engine, after two warm-up steps; the
/// lab's own per-step work (drawing the batch, planning, the history) is outside the count.
fn engine_allocations<T: Real>(mut lab: CpuLab<T>, run: usize, steps: usize) -> u64 {
    let mut engine = lab.runs()[run].backend.clone();
    let work: Vec<_> = (0..steps + 2)
        .map(|_| lab.begin_step().swap_remove(run).unwrap())
        .collect();
    for w in &work[..2] {
        engine.execute(w.step, &w.plan, &w.batch).unwrap();
    }
    engine.drain_records().unwrap();
    engine.drain_step_times();
    let mut allocations = 0;
    for w in &work[2..] {
        let mut result = Ok(());
        let counted = allocation_counter::measure(|| result = engine.execute(w.step, &w.plan, &w.batch));
        result.unwrap();
        allocations += counted.count_total;
        // As the Lab does after every step (the drained records and times are the Lab's
        // allocation).
        assert_eq!(engine.drain_records().unwrap().len(), 1, "the step was recorded");
        assert_eq!(engine.drain_step_times().len(), 1, "the step was timed");
    }
    allocations
}

#[test]
fn canonical_training_steps_allocate_nothing() {
    for micro_batches in [1, 4] {
        for metrics in [MetricOps::NONE, MetricOps::ALL] {
            let mut lab = CpuLab::<f32>::cpu(canonical_config(micro_batches)).unwrap();
            lab.set_metric_ops(metrics);
            assert_eq!(
                engine_allocations(lab, 0, 8),
                0,
                "{micro_batches} micro-batches, metrics {metrics:?}"
            );
        }
    }
}

#[test]
fn every_scenario_run_steps_without_allocating() {
    for scenario in Scenario::all() {
        for run in 0..scenario.config.runs.len() {
            let lab = CpuLab::<f64>::cpu(scenario.config.clone()).unwrap();
            assert_eq!(engine_allocations(lab, run, 4), 0, "{} run {run}", scenario.id);
        }
    }
}
