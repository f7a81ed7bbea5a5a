//! The benchmark command: optimizer steps per second of the CPU engine (f32, f64) and the GPU
//! engine on the canonical workload (3-class spiral, 300 points per class, MLP 2-64-64-3 ReLU,
//! SGD lr 0.1, B = 256 as one full batch and as 4 micro-batches of 64).
//!
//! Allocations per optimizer step are counted when the binary is built with the
//! `count-allocations` feature (a counting global allocator that the service should not carry).

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

/// Which engines `gradlab bench` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Engines {
    All,
    Cpu,
    Gpu,
}

/// Timed steps of the CPU engine, and allocations per step (counted over separate steps when
/// the counting allocator is built in, so that counting never slows the timed ones).
fn time_steps<T: Real>(micro_batches: usize, metrics: MetricOps, steps: u64) -> Result<(Duration, Option<f64>)> {
    let mut lab = CpuLab::<T>::cpu(canonical_config(micro_batches))?;
    lab.set_metric_ops(metrics);
    lab.run(5, |_| {})?; // warm caches and workspace buffers
    let start = now();
    lab.run(steps, |_| {})?;
    let elapsed = start.elapsed();
    Ok((elapsed, allocations_per_step(&mut lab)?))
}

/// Steps over which allocations are counted: enough to see amortized growth (histories).
#[cfg(feature = "count-allocations")]
const COUNTED_STEPS: u64 = 100;

#[cfg(feature = "count-allocations")]
fn allocations_per_step<T: Real>(lab: &mut CpuLab<T>) -> Result<Option<f64>> {
    let mut result = Ok(());
    let counted = allocation_counter::measure(|| result = lab.run(COUNTED_STEPS, |_| {}));
    result?;
    Ok(Some(counted.count_total as f64 / COUNTED_STEPS as f64))
}

#[cfg(not(feature = "count-allocations"))]
fn allocations_per_step<T: Real>(_lab: &mut CpuLab<T>) -> Result<Option<f64>> {
    Ok(None)
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

/// One measured row; `allocations` is `None` where they were not counted.
struct Row<'a> {
    engine: &'a str,
    micro_batches: usize,
    work: &'a str,
    steps: u64,
    seconds: f64,
    allocations: Option<f64>,
}

fn row(out: &mut dyn Write, row: Row<'_>) -> Result<()> {
    let Row {
        engine,
        micro_batches,
        work,
        steps,
        seconds,
        allocations,
    } = row;
    let regime = if micro_batches == 1 { "full 256" } else { "4 x 64" };
    let allocations = allocations.map_or_else(|| "-".to_owned(), |a| format!("{a:.1}"));
    writeln!(
        out,
        "{engine:<10} {regime:<14} {work:<24} {:>10.1} {:>10.3} {allocations:>12}",
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

pub fn run(steps: u64, engines: Engines, out: &mut dyn Write) -> Result<()> {
    let steps = steps.clamp(1, MAX_STEPS);
    writeln!(
        out,
        "canonical workload: spiral 3x300, MLP 2-64-64-3 ReLU, SGD lr 0.1, B = 256"
    )?;
    writeln!(
        out,
        "{:<10} {:<14} {:<24} {:>10} {:>10} {:>12}",
        "engine", "regime", "work per step", "steps/s", "ms/step", "allocs/step"
    )?;
    out.flush()?;
    if engines != Engines::Gpu {
        bench_cpu(steps, out)?;
    }
    if engines != Engines::Cpu {
        bench_gpu(steps, out)?;
    }
    if cfg!(feature = "count-allocations") {
        writeln!(
            out,
            "allocs/step: the Lab's whole step (drawing and splitting the batch, the plan, the history); the engine's own step allocates nothing (tests/allocations.rs)"
        )?;
    } else {
        writeln!(
            out,
            "allocs/step: not counted in this build (cargo run --release --features count-allocations --bin gradlab -- bench)"
        )?;
    }
    Ok(())
}

fn bench_cpu(steps: u64, out: &mut dyn Write) -> Result<()> {
    for (work, metrics) in WORK {
        for micro_batches in [1, 4] {
            cpu_row::<f32>(micro_batches, work, metrics, steps, out)?;
            cpu_row::<f64>(micro_batches, work, metrics, steps, out)?;
        }
    }
    Ok(())
}

/// Times the CPU engine in precision `T` and prints its row.
fn cpu_row<T: Real>(
    micro_batches: usize,
    work: &str,
    metrics: MetricOps,
    steps: u64,
    out: &mut dyn Write,
) -> Result<()> {
    let (elapsed, allocations) = time_steps::<T>(micro_batches, metrics, steps)?;
    let engine = format!("cpu-{}", T::NAME);
    row(
        out,
        Row {
            engine: &engine,
            micro_batches,
            work,
            steps,
            seconds: elapsed.as_secs_f64(),
            allocations,
        },
    )
}

fn bench_gpu(steps: u64, out: &mut dyn Write) -> Result<()> {
    match pollster::block_on(GpuContext::new()) {
        Err(error) => writeln!(out, "gpu: not measured: {error}")?,
        Ok(context) => {
            let ops = Arc::new(GpuOps::new(&context));
            writeln!(out, "gpu adapter: {} ({})", context.adapter_name, context.backend)?;
            for (work, metrics) in WORK {
                for micro_batches in [1, 4] {
                    let seconds = time_gpu_steps(&context, &ops, micro_batches, metrics, steps)?.as_secs_f64();
                    row(
                        out,
                        Row {
                            engine: "gpu-f32",
                            micro_batches,
                            work,
                            steps,
                            seconds,
                            allocations: None,
                        },
                    )?;
                }
            }
        }
    }
    Ok(())
}
