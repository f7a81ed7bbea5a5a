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

use gradlab_gpu::context::GpuContext;
use gradlab_gpu::ops::GpuOps;
use gradlab_gpu::workload::GpuWorkload;
use gradlab_lab_state::engine_choice::Verdict;
use gradlab_sim::lab::CpuLab;
use gradlab_sim::real::Real;
use gradlab_sim::regime::MetricOps;
use gradlab_sim::scenario::canonical_config;

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
) -> Result<(Duration, usize)> {
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
    Ok((start.elapsed(), workload.last_step_dispatches()))
}

/// One measured row; `allocations` is `None` where they were not counted.
struct Row<'a> {
    engine: &'a str,
    micro_batches: usize,
    work: &'a str,
    steps: u64,
    seconds: f64,
    allocations: Option<f64>,
    /// GPU compute dispatches per optimizer step.
    dispatches: Option<usize>,
}

fn row(out: &mut dyn Write, row: Row<'_>) -> Result<()> {
    let Row {
        engine,
        micro_batches,
        work,
        steps,
        seconds,
        allocations,
        dispatches,
    } = row;
    let regime = regime_name(micro_batches);
    let allocations = allocations.map_or_else(|| "-".to_owned(), |a| format!("{a:.1}"));
    let dispatches = dispatches.map_or_else(|| "-".to_owned(), |d| d.to_string());
    writeln!(
        out,
        "{engine:<10} {regime:<14} {work:<24} {:>10.1} {:>10.3} {allocations:>12} {dispatches:>16}",
        steps as f64 / seconds,
        1000.0 * seconds / steps as f64
    )?;
    // Each row as soon as it is measured: a long bench shows progress, even through a pipe.
    out.flush()?;
    Ok(())
}

fn regime_name(micro_batches: usize) -> &'static str {
    if micro_batches == 1 {
        "full 256"
    } else {
        "4 x 64"
    }
}

const WORK: [(&str, MetricOps); 3] = [
    ("training only", MetricOps::NONE),
    ("+ reference grad + eval", MetricOps::ALL),
    // What a step costs while the step-through view is open (the Lab's default is the row above).
    (
        "+ step-through snapshots",
        MetricOps {
            snapshots: true,
            ..MetricOps::ALL
        },
    ),
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
        "{:<10} {:<14} {:<24} {:>10} {:>10} {:>12} {:>16}",
        "engine", "regime", "work per step", "steps/s", "ms/step", "allocs/step", "dispatches/step"
    )?;
    out.flush()?;
    let cpu = if engines != Engines::Gpu {
        bench_cpu(steps, out)?
    } else {
        Vec::new()
    };
    let gpu = if engines != Engines::Cpu {
        bench_gpu(steps, out)?
    } else {
        Vec::new()
    };
    for ((micro_batches, cpu_ms), (_, gpu_ms)) in cpu.iter().zip(&gpu) {
        let choice = match Verdict::of(*gpu_ms, *cpu_ms) {
            Verdict::Cpu { times } => format!("the CPU engine, {times:.1}x faster than the GPU engine"),
            Verdict::Gpu { times } => format!("the GPU engine, {times:.1}x as fast as the CPU engine"),
        };
        writeln!(
            out,
            "the Lab would choose ({}, training only, the browser race's rule): {choice}",
            regime_name(*micro_batches)
        )?;
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

/// Times every CPU row; returns (micro-batches, ms per step) of f32 training only, the engine
/// the Lab races against WebGPU.
fn bench_cpu(steps: u64, out: &mut dyn Write) -> Result<Vec<(usize, f64)>> {
    let mut raced = Vec::new();
    for (work, metrics) in WORK {
        for micro_batches in [1, 4] {
            let seconds = cpu_row::<f32>(micro_batches, work, metrics, steps, out)?;
            if metrics == MetricOps::NONE {
                raced.push((micro_batches, 1000.0 * seconds / steps as f64));
            }
            cpu_row::<f64>(micro_batches, work, metrics, steps, out)?;
        }
    }
    Ok(raced)
}

/// Times the CPU engine in precision `T` and prints its row.
fn cpu_row<T: Real>(
    micro_batches: usize,
    work: &str,
    metrics: MetricOps,
    steps: u64,
    out: &mut dyn Write,
) -> Result<f64> {
    let (elapsed, allocations) = time_steps::<T>(micro_batches, metrics, steps)?;
    let engine = format!("cpu-{}", T::NAME);
    let seconds = elapsed.as_secs_f64();
    row(
        out,
        Row {
            engine: &engine,
            micro_batches,
            work,
            steps,
            seconds,
            allocations,
            dispatches: None,
        },
    )?;
    Ok(seconds)
}

/// Times every GPU row; returns (micro-batches, ms per step) of training only.
fn bench_gpu(steps: u64, out: &mut dyn Write) -> Result<Vec<(usize, f64)>> {
    let mut raced = Vec::new();
    match pollster::block_on(GpuContext::new()) {
        Err(error) => writeln!(out, "gpu: not measured: {error}")?,
        Ok(context) => {
            let ops = GpuOps::shared(&context);
            writeln!(out, "gpu adapter: {} ({})", context.adapter_name, context.backend)?;
            for (work, metrics) in WORK {
                for micro_batches in [1, 4] {
                    let (elapsed, dispatches) = time_gpu_steps(&context, &ops, micro_batches, metrics, steps)?;
                    let seconds = elapsed.as_secs_f64();
                    if metrics == MetricOps::NONE {
                        raced.push((micro_batches, 1000.0 * seconds / steps as f64));
                    }
                    row(
                        out,
                        Row {
                            engine: "gpu-f32",
                            micro_batches,
                            work,
                            steps,
                            seconds,
                            allocations: None,
                            dispatches: Some(dispatches),
                        },
                    )?;
                }
            }
        }
    }
    Ok(raced)
}
