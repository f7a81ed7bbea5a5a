//! The benchmark command: optimizer steps per second of the CPU engine on the canonical workload
//! (3-class spiral, 300 points per class, MLP 2-64-64-3 ReLU, SGD lr 0.1, B = 256 as one full
//! batch and as 4 micro-batches of 64).

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::sim::lab::{CpuLab, LabConfig, RunSpec};
use crate::sim::optim::ScheduleSpec;
use crate::sim::real::Real;
use crate::sim::regime::{MetricOps, RegimeSpec};

/// The canonical workload with one run in the given regime.
pub fn canonical_config(micro_batches: usize) -> LabConfig {
    LabConfig {
        batch_size: 256,
        runs: vec![RunSpec {
            label: if micro_batches == 1 {
                "full batch 256".into()
            } else {
                format!("{micro_batches} x {}", 256 / micro_batches)
            },
            schedule: ScheduleSpec::Constant { learning_rate: 0.1 },
            regime: RegimeSpec::accumulate(micro_batches),
            ..RunSpec::default()
        }],
        ..LabConfig::default()
    }
}

#[allow(
    clippy::disallowed_methods,
    reason = "native-only benchmark; the wasm build never reaches this"
)]
fn now() -> Instant {
    Instant::now()
}

fn time_steps<T: Real>(micro_batches: usize, metrics: MetricOps, steps: u64) -> Result<Duration> {
    let mut lab = CpuLab::<T>::cpu(canonical_config(micro_batches))?;
    lab.set_metric_ops(metrics);
    lab.run(5, |_| {})?; // warm caches and workspace buffers
    let start = now();
    lab.run(steps, |_| {})?;
    Ok(start.elapsed())
}

pub fn run(steps: u64, out: &mut dyn Write) -> Result<()> {
    let steps = steps.max(1);
    writeln!(
        out,
        "canonical workload: spiral 3x300, MLP 2-64-64-3 ReLU, SGD lr 0.1, B = 256"
    )?;
    writeln!(
        out,
        "{:<10} {:<14} {:<22} {:>12} {:>12}",
        "engine", "regime", "work per step", "steps/s", "ms/step"
    )?;
    for (name, metrics) in [
        ("training only", MetricOps::NONE),
        ("+ reference grad + eval", MetricOps::ALL),
    ] {
        for micro_batches in [1, 4] {
            for precision in ["f32", "f64"] {
                let elapsed = match precision {
                    "f32" => time_steps::<f32>(micro_batches, metrics, steps)?,
                    _ => time_steps::<f64>(micro_batches, metrics, steps)?,
                };
                let seconds = elapsed.as_secs_f64();
                let regime = if micro_batches == 1 {
                    "full 256".to_string()
                } else {
                    "4 x 64".to_string()
                };
                writeln!(
                    out,
                    "{:<10} {:<14} {:<22} {:>12.1} {:>12.3}",
                    format!("cpu-{precision}"),
                    regime,
                    name,
                    steps as f64 / seconds,
                    1000.0 * seconds / steps as f64
                )?;
            }
        }
    }
    Ok(())
}
