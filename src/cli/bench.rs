//! The benchmark command: optimizer steps per second of the CPU engine (f32, f64) and the GPU
//! engine on the canonical workload (3-class spiral, 300 points per class, MLP 2-64-64-3 ReLU,
//! SGD lr 0.1, B = 256 as one full batch and as 4 micro-batches of 64).

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::gpu::context::GpuContext;
use crate::gpu::ops::GpuOps;
use crate::gpu::workload::GpuWorkload;
use crate::sim::lab::CpuLab;
use crate::sim::real::Real;
use crate::sim::regime::MetricOps;
use crate::sim::scenario::canonical_config;

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

/// The GPU engine on the same workload, stepped without per-step readback (metrics are read in
/// bulk every 200 steps, as the browser reads once per frame).
fn time_gpu_steps(
    context: &GpuContext,
    ops: &Arc<GpuOps>,
    micro_batches: usize,
    metrics: MetricOps,
    steps: u64,
) -> Result<Duration> {
    let mut workload = GpuWorkload::canonical(context, ops, micro_batches, metrics)?;
    for step in 0..5 {
        workload.step(step)?;
    }
    pollster::block_on(workload.read_back())?;
    let start = now();
    let mut done = 0;
    while done < steps {
        let chunk = (steps - done).min(200);
        for step in done..done + chunk {
            workload.step(step)?;
        }
        pollster::block_on(workload.read_back())?;
        done += chunk;
    }
    Ok(start.elapsed())
}

fn row(out: &mut dyn Write, engine: &str, micro_batches: usize, work: &str, steps: u64, seconds: f64) -> Result<()> {
    let regime = if micro_batches == 1 { "full 256" } else { "4 x 64" };
    writeln!(
        out,
        "{engine:<10} {regime:<14} {work:<24} {:>10.1} {:>10.3}",
        steps as f64 / seconds,
        1000.0 * seconds / steps as f64
    )?;
    // Each row as soon as it is measured: a long bench shows progress, even through a pipe.
    out.flush()?;
    Ok(())
}

const WORK: [(&str, MetricOps); 2] = [
    ("training only", MetricOps::NONE),
    ("+ reference grad + eval", MetricOps::ALL),
];

/// The most timed steps per measurement: about a minute of CPU work per row on a slow machine.
pub const MAX_STEPS: u64 = 100_000;

pub fn run(steps: u64, out: &mut dyn Write) -> Result<()> {
    let steps = steps.clamp(1, MAX_STEPS);
    writeln!(
        out,
        "canonical workload: spiral 3x300, MLP 2-64-64-3 ReLU, SGD lr 0.1, B = 256"
    )?;
    writeln!(
        out,
        "{:<10} {:<14} {:<24} {:>10} {:>10}",
        "engine", "regime", "work per step", "steps/s", "ms/step"
    )?;
    out.flush()?;
    for (work, metrics) in WORK {
        for micro_batches in [1, 4] {
            let seconds = time_steps::<f32>(micro_batches, metrics, steps)?.as_secs_f64();
            row(out, "cpu-f32", micro_batches, work, steps, seconds)?;
            let seconds = time_steps::<f64>(micro_batches, metrics, steps)?.as_secs_f64();
            row(out, "cpu-f64", micro_batches, work, steps, seconds)?;
        }
    }
    match pollster::block_on(GpuContext::new()) {
        Err(error) => writeln!(out, "gpu: not measured: {error}")?,
        Ok(context) => {
            let ops = Arc::new(GpuOps::new(&context));
            writeln!(out, "gpu adapter: {} ({})", context.adapter_name, context.backend)?;
            for (work, metrics) in WORK {
                for micro_batches in [1, 4] {
                    let seconds = time_gpu_steps(&context, &ops, micro_batches, metrics, steps)?.as_secs_f64();
                    row(out, "gpu-f32", micro_batches, work, steps, seconds)?;
                }
            }
        }
    }
    Ok(())
}
