//! The benchmark page (`?view=bench` or `?bench`): the canonical workload on the CPU engine in
//! wasm (in its Web Worker, where the Lab trains it; on the page's thread only where no worker
//! starts) and on WebGPU, with metrics read back in bulk and after every step; then the tiny
//! GPT's workload (`sim::gpt::bench`, as `gradlab bench` times it natively) in tokens per second
//! on the CPU engine in its worker and on WebGPU. The figures go into `#bench-result` as JSON and
//! to the console.

use std::sync::Arc;

use leptos::prelude::*;

use super::i18n::tr;
use serde::Serialize;

use gradlab_cpu_worker::{
    time_canonical_steps, BenchTiming, FromWorker, ToWorker, BENCH_MEASURE_MS as MEASURE_MS,
    BENCH_WARM_UP_STEPS as WARM_UP_STEPS,
};
use gradlab_gpu::context::GpuContext;
use gradlab_gpu::gpt::GptGpuLab;
use gradlab_gpu::ops::GpuOps;
use gradlab_gpu::workload::GpuWorkload;
use gradlab_lab_state::engine_choice::Verdict;
use gradlab_sim::gpt::bench::{self, GptBenchCase, GptBenchTiming};
use gradlab_sim::gpt::text::Corpus;
use gradlab_sim::regime::MetricOps;

use super::worker::CpuWorker;

/// Steps between two bulk readbacks of the metrics (the GPU engine keeps 256 steps' worth).
const BULK_READBACK_STEPS: u64 = 200;

#[derive(Debug, Serialize)]
struct Figure {
    engine: &'static str,
    regime: &'static str,
    readback: &'static str,
    steps: u64,
    steps_per_second: f64,
    ms_per_step: f64,
    /// Compute dispatches per optimizer step (WebGPU only).
    dispatches_per_step: Option<usize>,
}

/// The engine the Lab would train this regime on, by the same rule as its race
/// ([`Verdict::of`] on the CPU engine's and WebGPU's bulk-readback time per step).
#[derive(Debug, Serialize)]
struct Choice {
    regime: &'static str,
    engine: &'static str,
    /// How many times faster the chosen engine measured.
    times: f64,
}

/// A tiny-GPT figure: predicted tokens per second of one case of `sim::gpt::bench`.
#[derive(Debug, Serialize)]
struct GptFigure {
    engine: &'static str,
    examples: &'static str,
    regime: String,
    steps: u64,
    tokens_per_second: f64,
    ms_per_step: f64,
}

impl GptFigure {
    fn new(engine: &'static str, case: GptBenchCase, timing: GptBenchTiming) -> Self {
        Self {
            engine,
            examples: case.examples.id(),
            regime: case.regime(),
            steps: timing.steps,
            tokens_per_second: timing.tokens_per_second(),
            ms_per_step: timing.elapsed_ms / timing.steps.max(1) as f64,
        }
    }
}

/// The tiny GPT's figures on both engines (`gradlab bench` prints the native CPU engine's).
#[derive(Debug, Serialize)]
struct GptReport {
    workload: String,
    figures: Vec<GptFigure>,
    errors: Vec<String>,
}

#[derive(Debug, Serialize)]
struct BenchReport {
    workload: &'static str,
    adapter: Option<String>,
    gpu_error: Option<String>,
    figures: Vec<Figure>,
    lab_would_choose: Vec<Choice>,
    tiny_gpt: GptReport,
}

fn lab_choices(figures: &[Figure]) -> Vec<Choice> {
    ["full 256", "4 x 64"]
        .into_iter()
        .filter_map(|regime| {
            let ms = |engine: &str| {
                figures
                    .iter()
                    .find(|f| f.regime == regime && f.engine == engine && f.readback != PER_STEP_READBACK)
                    .map(|f| f.ms_per_step)
            };
            let cpu = ms(CPU_ENGINE)?;
            Some(match ms(GPU_ENGINE).map(|gpu| Verdict::of(gpu, cpu)) {
                None => Choice {
                    regime,
                    engine: CPU_ENGINE,
                    times: 1.0,
                },
                Some(Verdict::Cpu { times }) => Choice {
                    regime,
                    engine: CPU_ENGINE,
                    times,
                },
                Some(Verdict::Gpu { times }) => Choice {
                    regime,
                    engine: GPU_ENGINE,
                    times,
                },
            })
        })
        .collect()
}

const CPU_ENGINE: &str = "cpu-wasm-f32";
const GPU_ENGINE: &str = "webgpu-f32";
const PER_STEP_READBACK: &str = "loss read back every step";

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

fn figure(engine: &'static str, micro_batches: usize, readback: &'static str, steps: u64, elapsed_ms: f64) -> Figure {
    Figure {
        engine,
        regime: if micro_batches == 1 { "full 256" } else { "4 x 64" },
        readback,
        steps,
        steps_per_second: 1000.0 * steps as f64 / elapsed_ms.max(1e-9),
        ms_per_step: elapsed_ms / steps.max(1) as f64,
        dispatches_per_step: None,
    }
}

/// The CPU engine's figure, timed in the worker (`worker` is None where none started: then on
/// the page's thread, which the figure says).
async fn cpu_figure(worker: Option<&CpuWorker>, micro_batches: usize) -> Result<Figure, String> {
    let (timing, place): (BenchTiming, &'static str) = match worker {
        Some(worker) => match worker.request(&ToWorker::Bench { micro_batches }, &|| true).await? {
            FromWorker::Benched(timing) => (timing, "every step (in memory), in the Web Worker"),
            FromWorker::Failed { message } => return Err(message),
            other => return Err(format!("the CPU worker answered {other:?}")),
        },
        None => (
            time_canonical_steps(micro_batches)?,
            "every step (in memory), on the page's thread (no worker started)",
        ),
    };
    Ok(figure(
        CPU_ENGINE,
        micro_batches,
        place,
        timing.steps,
        timing.elapsed_ms,
    ))
}

async fn gpu_figure(
    context: &GpuContext,
    ops: &Arc<GpuOps>,
    micro_batches: usize,
    per_step_readback: bool,
) -> Result<Figure, String> {
    let mut workload =
        GpuWorkload::canonical(context, ops, micro_batches, MetricOps::NONE).map_err(|e| e.to_string())?;
    for step in 0..WARM_UP_STEPS {
        workload.step(step).map_err(|e| e.to_string())?;
    }
    workload.read_back().await.map_err(|e| e.to_string())?;
    let start = now_ms();
    let mut steps = 0;
    while steps == 0 || now_ms() - start < MEASURE_MS {
        workload.step(WARM_UP_STEPS + steps).map_err(|e| e.to_string())?;
        steps += 1;
        // Bulk readback as the Lab does it: every so many steps, before the history fills.
        if per_step_readback || steps.is_multiple_of(BULK_READBACK_STEPS) {
            workload.read_back().await.map_err(|e| e.to_string())?;
        }
    }
    workload.read_back().await.map_err(|e| e.to_string())?;
    let readback = if per_step_readback {
        PER_STEP_READBACK
    } else {
        "bulk readback (every 200 steps and at the end)"
    };
    let mut figure = figure(GPU_ENGINE, micro_batches, readback, steps, now_ms() - start);
    figure.dispatches_per_step = Some(workload.last_step_dispatches());
    Ok(figure)
}

/// The tiny GPT on the CPU engine in its own worker (as its page trains it) and on WebGPU.
async fn gpt_report(gpu: Option<(&GpuContext, &Arc<GpuOps>)>) -> GptReport {
    let mut report = GptReport {
        workload: bench::workload(),
        figures: Vec::new(),
        errors: Vec::new(),
    };
    let plays = match super::gpt::fetch_plays().await {
        Ok(plays) => plays,
        Err(error) => {
            report.errors.push(format!("the plays: {error}"));
            return report;
        }
    };
    let cpu = async {
        let worker = CpuWorker::spawn_gpt().await?;
        match worker
            .request(&ToWorker::BenchGpt { plays: plays.clone() }, &|| true)
            .await?
        {
            FromWorker::GptBenched { timings } => Ok(timings),
            FromWorker::Failed { message } => Err(message),
            other => Err(format!("the tiny GPT's worker answered {other:?}")),
        }
    };
    match cpu.await {
        Ok(timings) => {
            for (case, timing) in GptBenchCase::ALL.into_iter().zip(timings) {
                report.figures.push(GptFigure::new(CPU_ENGINE, case, timing));
            }
        }
        Err(error) => report.errors.push(format!("CPU engine: {error}")),
    }
    if let Some((context, ops)) = gpu {
        for case in GptBenchCase::ALL {
            match gpu_gpt_timing(context, ops, case, &plays).await {
                Ok(timing) => report.figures.push(GptFigure::new(GPU_ENGINE, case, timing)),
                Err(error) => report.errors.push(format!("WebGPU: {error}")),
            }
        }
    }
    report
}

/// One case on WebGPU for at least [`MEASURE_MS`], as the page trains it: several steps per
/// submission, read back once per advance.
async fn gpu_gpt_timing(
    context: &GpuContext,
    ops: &Arc<GpuOps>,
    case: GptBenchCase,
    plays: &[(String, String)],
) -> Result<GptBenchTiming, String> {
    let config = case.config();
    let corpus = Corpus::from_named(plays, case.examples, config.model.context).map_err(|e| e.to_string())?;
    let mut lab = GptGpuLab::new(context, ops.clone(), config.clone(), corpus.clone()).map_err(|e| e.to_string())?;
    lab.advance(bench::GPT_BENCH_WARM_UP_STEPS)
        .await
        .map_err(|e| e.to_string())?;
    let start = now_ms();
    let before = lab.step_count();
    while lab.step_count() == before || now_ms() - start < MEASURE_MS {
        lab.advance(GPT_STEPS_PER_ADVANCE).await.map_err(|e| e.to_string())?;
    }
    let elapsed_ms = now_ms() - start;
    let steps = lab.step_count() - before;
    let tokens = bench::timed_tokens(&config, &corpus, bench::GPT_BENCH_WARM_UP_STEPS, steps);
    Ok(GptBenchTiming {
        steps,
        tokens,
        elapsed_ms,
    })
}

/// Steps per WebGPU advance of the tiny GPT (its page's pace).
const GPT_STEPS_PER_ADVANCE: u64 = 2;

async fn run_bench() -> BenchReport {
    let mut report = BenchReport {
        workload: "spiral 3x300, MLP 2-64-64-3 ReLU, SGD lr 0.1, B = 256; training steps only",
        adapter: None,
        gpu_error: None,
        figures: Vec::new(),
        lab_would_choose: Vec::new(),
        tiny_gpt: GptReport {
            workload: bench::workload(),
            figures: Vec::new(),
            errors: Vec::new(),
        },
    };
    let worker = CpuWorker::spawn().await;
    if let Err(e) = &worker {
        web_sys::console::warn_1(&format!("the bench page times the CPU engine on its own thread: {e}").into());
    }
    for micro_batches in [1, 4] {
        match cpu_figure(worker.as_ref().ok(), micro_batches).await {
            Ok(f) => report.figures.push(f),
            Err(e) => report.gpu_error = Some(format!("CPU engine failed: {e}")),
        }
    }
    match GpuContext::new().await {
        Err(error) => {
            report.gpu_error = Some(error.to_string());
            report.tiny_gpt = gpt_report(None).await;
        }
        Ok(context) => {
            report.adapter = Some(context.adapter_name.clone());
            let ops = GpuOps::shared(&context);
            for micro_batches in [1, 4] {
                for per_step in [false, true] {
                    match gpu_figure(&context, &ops, micro_batches, per_step).await {
                        Ok(f) => report.figures.push(f),
                        Err(e) => report.gpu_error = Some(e),
                    }
                }
            }
            report.tiny_gpt = gpt_report(Some((&context, &ops))).await;
        }
    }
    report.lab_would_choose = lab_choices(&report.figures);
    report
}

#[component]
pub fn BenchPage() -> impl IntoView {
    let result = RwSignal::new(None::<String>);
    leptos::task::spawn_local(async move {
        let report = run_bench().await;
        let json = serde_json::to_string_pretty(&report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        web_sys::console::log_1(&json.clone().into());
        result.set(Some(json));
    });
    view! {
        <section>
            <h2>{tr("bench-title")}</h2>
            <p class="muted">{tr("bench-intro")}</p>
            <pre id="bench-result" data-testid="bench-result" data-done=move || result.with(Option::is_some).to_string()>
                {move || result.get().unwrap_or_else(|| tr("bench-running"))}
            </pre>
        </section>
    }
}
