//! `gradlab run` and `gradlab bench` for the tiny GPT, trained on the Shakespeare plays that
//! ship in `assets/text/shakespeare/` (embedded in the binary: no file or network at run time).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::bench::Engines;
use gradlab_i18n::Localizer;
use gradlab_lab_state::gpt_view::GptChart;
use gradlab_plot::{draw_line_chart, ChartLook};
use plotters::prelude::{BitMapBackend, IntoDrawingArea, SVGBackend};
use serde::Serialize;

use gradlab_gpu::context::GpuContext;
use gradlab_gpu::gpt::lab::MAX_STEPS_PER_ADVANCE;
use gradlab_gpu::gpt::GptGpuLab;
use gradlab_gpu::ops::GpuOps;
use gradlab_sim::gpt::bench::{self, GptBenchCase, GptBenchTiming};
use gradlab_sim::gpt::export::write_gpt_export;
use gradlab_sim::gpt::lab::{GptLab, GptLabConfig, GptMirror, GptStepRecord, Reduction};
use gradlab_sim::gpt::scenario::{
    GptPart, GptScenario, SAMPLE_CHARS, SAMPLE_PROMPT as PROMPT, SAMPLE_SEED, SAMPLE_TEMPERATURE,
};
use gradlab_sim::gpt::text::{Corpus, ExampleKind, Play};
use gradlab_sim::real::Real;

/// The four tragedies, as the asset's README lists them.
pub const PLAYS: [Play<'static>; 4] = [
    Play {
        name: "hamlet",
        text: include_str!("../../../assets/text/shakespeare/hamlet.txt"),
    },
    Play {
        name: "macbeth",
        text: include_str!("../../../assets/text/shakespeare/macbeth.txt"),
    },
    Play {
        name: "julius_caesar",
        text: include_str!("../../../assets/text/shakespeare/julius_caesar.txt"),
    },
    Play {
        name: "romeo_and_juliet",
        text: include_str!("../../../assets/text/shakespeare/romeo_and_juliet.txt"),
    },
];

#[allow(
    clippy::disallowed_methods,
    reason = "native-only benchmark; the wasm build never reaches this"
)]
fn now() -> Instant {
    Instant::now()
}

pub fn corpus(kind: ExampleKind, context: usize) -> Result<Corpus> {
    Corpus::new(&PLAYS, kind, context).context("cannot cut the plays into examples")
}

fn lab<T: Real>(config: &GptLabConfig) -> Result<GptLab<T>> {
    let corpus = corpus(config.examples, config.model.context)?;
    GptLab::new(config.clone(), corpus).context("invalid tiny-GPT configuration")
}

/// Steps `gradlab export` takes for a tiny-GPT scenario unless told.
pub const EXPORT_STEPS: u64 = 2;

/// `gradlab export` of a tiny-GPT scenario: every part trained `steps` steps, in f64 or f32.
pub fn export(
    scenario: &GptScenario,
    steps: u64,
    f64_engine: bool,
    out: &mut dyn Write,
    progress: &crate::Progress,
) -> Result<()> {
    fn parts<T: Real>(scenario: &GptScenario) -> Result<Vec<(&'static str, GptLab<T>)>> {
        scenario
            .parts
            .iter()
            .map(|p| Ok((p.label, lab::<T>(&p.config)?)))
            .collect()
    }
    let mut done = 0;
    let tick = || {
        done += 1;
        progress.update(done);
    };
    if f64_engine {
        write_gpt_export(scenario.id, &mut parts::<f64>(scenario)?, steps, out, tick)?;
    } else {
        write_gpt_export(scenario.id, &mut parts::<f32>(scenario)?, steps, out, tick)?;
    }
    Ok(())
}

/// `gradlab plot` of a tiny-GPT scenario: each part trained `steps` steps on the CPU engine in
/// f32 (the Lab's), and the page's three charts of it (training and validation loss, gradient
/// error against the full batch) as PNG and SVG, titled in English as the page is: the files
/// written.
pub fn plot(scenario: &GptScenario, steps: u64, out_dir: &Path, progress: &dyn Fn(u64)) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    crate::register_font()?;
    let english = Localizer::english();
    let mut written = Vec::new();
    for (index, part) in scenario.parts.iter().enumerate() {
        let mut lab = lab::<f32>(&part.config)?;
        for step in 0..steps {
            lab.step();
            progress(index as u64 * steps + step + 1);
        }
        let mut mirror = GptMirror::new(lab.runs().iter().map(|r| r.reduction).collect());
        mirror.apply(lab.update_since(&mut Vec::new()));
        let label = |reduction: Reduction| english.text(&format!("gpt-run-{}", reduction.id()));
        for chart in GptChart::ALL {
            let mut drawn = chart.of(&mirror, label, ChartLook::default());
            drawn.title = format!(
                "{} ({})",
                english.text(&format!("gpt-chart-{}", chart.slug())),
                part.label
            );
            drawn.x_label = english.text("chart-step");
            drawn.y_label = english.text(if drawn.log_y {
                "chart-error-floor"
            } else {
                "gpt-chart-nats"
            });
            let name = format!("{}-{}", part.label, chart.slug());
            let png = out_dir.join(format!("{name}.png"));
            let svg = out_dir.join(format!("{name}.svg"));
            draw_line_chart(&BitMapBackend::new(&png, (900, 540)).into_drawing_area(), &drawn)
                .with_context(|| format!("cannot draw {}", png.display()))?;
            draw_line_chart(&SVGBackend::new(&svg, (900, 540)).into_drawing_area(), &drawn)
                .with_context(|| format!("cannot draw {}", svg.display()))?;
            written.push(png);
            written.push(svg);
        }
    }
    Ok(written)
}

/// `gradlab memory` (and `run`) of a tiny-GPT scenario: each part's step as the full batch and
/// as N micro-batches on the CPU engine in f32, `steps` timed steps each: the activations one
/// pass keeps, by kind, and the time per optimizer step.
pub fn memory(scenario: &GptScenario, steps: u64, json: bool, out: &mut dyn Write) -> Result<()> {
    #[derive(Serialize)]
    struct JsonMemory<'a> {
        part: &'a str,
        config: &'a GptLabConfig,
        timed_steps: u64,
        rows: Vec<gradlab_sim::gpt::memory::GptMemoryRow>,
    }
    let kib = |bytes: u64| format!("{:.1}", bytes as f64 / 1024.0);
    let mut measured = Vec::new();
    for part in &scenario.parts {
        let config = &part.config;
        let corpus = corpus(config.examples, config.model.context)?;
        let clock = now();
        let now_ms = || clock.elapsed().as_secs_f64() * 1000.0;
        let rows = gradlab_sim::gpt::memory::measure::<f32>(config, &corpus, steps, &now_ms)
            .context("invalid tiny-GPT configuration")?;
        if json {
            measured.push(JsonMemory {
                part: part.label,
                config,
                timed_steps: steps,
                rows,
            });
            continue;
        }
        writeln!(
            out,
            "{} ({}): {} examples a step; {} layers x {}, {} heads, context {}; CPU engine, f32, {steps} timed steps",
            scenario.id,
            part.label,
            config.batch,
            config.model.layers,
            config.model.embedding,
            config.model.heads,
            config.model.context
        )?;
        writeln!(
            out,
            "  {:>3} {:>9} {:>11} {:>14} {:>14} {:>11} {:>10} {:>8} {:>9}",
            "N",
            "examples",
            "tokens",
            "per-token KiB",
            "attention KiB",
            "logits KiB",
            "total KiB",
            "of full",
            "ms/step"
        )?;
        let full = rows.first().map_or(1, |r| r.bytes.total()).max(1);
        for row in &rows {
            writeln!(
                out,
                "  {:>3} {:>9} {:>11} {:>14} {:>14} {:>11} {:>10} {:>7.3}x {:>9.1}",
                row.micro_batches,
                row.examples_per_pass,
                row.tokens_per_pass,
                kib(row.bytes.per_token),
                kib(row.bytes.attention),
                kib(row.bytes.logits),
                kib(row.bytes.total()),
                row.bytes.total() as f64 / full as f64,
                row.ms_per_step
            )?;
        }
    }
    if json {
        serde_json::to_writer_pretty(&mut *out, &measured)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "(activations one pass keeps for its backward: the largest pass of the steps run, the warm-up step included; tokens are the pass's real ones: a framework that pads holds more)"
    )?;
    Ok(())
}

/// How `gradlab run` prints a tiny-GPT scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Print {
    Table { every: u64 },
    Csv,
    Json,
}

#[derive(Serialize)]
struct JsonPart<'a> {
    part: &'a str,
    config: &'a GptLabConfig,
    vocabulary: String,
    parameters: usize,
    runs: Vec<JsonRun<'a>>,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    reduction: Reduction,
    formula: &'static str,
    steps: &'a [GptStepRecord],
    sample: String,
}

/// Trains each part of `scenario` for `steps` and prints it.
pub fn run<T: Real>(
    scenario: &GptScenario,
    steps: u64,
    print: Print,
    progress: &dyn Fn(u64),
    out: &mut dyn Write,
) -> Result<()> {
    let mut json = Vec::new();
    let mut labs = Vec::new();
    for (index, part) in scenario.parts.iter().enumerate() {
        let mut lab = lab::<T>(&part.config)?;
        for step in 0..steps {
            lab.step();
            progress(index as u64 * steps + step + 1);
        }
        labs.push(lab);
    }
    if print == Print::Csv {
        writeln!(
            out,
            "part,run,step,train_loss,validation_loss,grad_norm,grad_relative_error,grad_cosine,learning_rate"
        )?;
    }
    for (part, lab) in scenario.parts.iter().zip(&mut labs) {
        let samples: Vec<String> = (0..lab.runs().len())
            .map(|r| lab.sample(r, PROMPT, SAMPLE_CHARS, SAMPLE_TEMPERATURE, SAMPLE_SEED))
            .collect();
        match print {
            Print::Table { every } => table(scenario, part, lab, &samples, every, out)?,
            Print::Csv => csv(part, lab, out)?,
            Print::Json => json.push((part, samples)),
        }
    }
    if print == Print::Json {
        let parts: Vec<JsonPart<'_>> = json
            .iter()
            .zip(&labs)
            .map(|((part, samples), lab)| JsonPart {
                part: part.label,
                config: &part.config,
                vocabulary: lab.corpus().vocabulary.chars().iter().collect(),
                parameters: lab.layout().parameter_count,
                runs: lab
                    .runs()
                    .iter()
                    .zip(samples)
                    .map(|(run, sample)| JsonRun {
                        reduction: run.reduction,
                        formula: run.reduction.formula(),
                        steps: &run.history,
                        sample: sample.clone(),
                    })
                    .collect(),
            })
            .collect();
        serde_json::to_writer_pretty(&mut *out, &parts)?;
        writeln!(out)?;
    }
    Ok(())
}

fn optional(value: Option<f64>, format: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| "-".into(), format)
}

fn table<T: Real>(
    scenario: &GptScenario,
    part: &GptPart,
    lab: &GptLab<T>,
    samples: &[String],
    every: u64,
    out: &mut dyn Write,
) -> Result<()> {
    let config = lab.config();
    let spec = config.model;
    writeln!(
        out,
        "{} · {}: {} layers x {} wide, {} heads, context {}; {} parameters; vocabulary of {} characters; \
         {} training and {} validation examples; batch {} = {} micro-batches of {}",
        scenario.id,
        part.label,
        spec.layers,
        spec.embedding,
        spec.heads,
        spec.context,
        lab.layout().parameter_count,
        lab.corpus().vocabulary.len(),
        lab.corpus().train.len(),
        lab.corpus().validation.len(),
        config.batch,
        config.micro_batches,
        config.batch / config.micro_batches
    )?;
    writeln!(
        out,
        "{:>5}  {:<16}  {:>10}  {:>9}  {:>10}  {:>10}  {:>12}  {:>9}",
        "step", "run", "train_loss", "val_loss", "grad_norm", "grad_err", "grad_cos", "lr"
    )?;
    let steps = lab.step_count();
    for step in 0..steps {
        let last = step + 1 == steps;
        let measured = lab.runs().iter().any(|r| {
            r.history
                .get(step as usize)
                .is_some_and(|h| h.validation_loss.is_some())
        });
        if !((step + 1).is_multiple_of(every) || last || measured) {
            continue;
        }
        for run in lab.runs() {
            let Some(r) = run.history.get(step as usize) else {
                continue;
            };
            writeln!(
                out,
                "{:>5}  {:<16}  {:>10.6}  {:>9}  {:>10.4e}  {:>10}  {:>12}  {:>9.3e}",
                r.step + 1,
                run.reduction.id(),
                r.train_loss,
                optional(r.validation_loss, |v| format!("{v:.4}")),
                r.grad_norm,
                optional(r.grad_relative_error, |v| format!("{v:.2e}")),
                optional(r.grad_cosine, |v| format!("{v:.9}")),
                r.learning_rate,
            )?;
        }
    }
    let window = lab.window();
    let window_tokens: usize = window.iter().map(|m| m.tokens).sum();
    writeln!(
        out,
        "last step's micro-batches (every run saw the same {window_tokens} predicted characters):"
    )?;
    writeln!(
        out,
        "  {:>3}  {:>8}  {:>6}  {:>6}  {:>18}  {:>16}",
        "#", "examples", "tokens", "padded", "micro_batch_mean", "window_tokens"
    )?;
    for (m, tokens) in window.iter().enumerate() {
        let mean = Reduction::MicroBatchMean.token_weight(tokens.tokens, window_tokens, window.len());
        let fix = Reduction::WindowTokens.token_weight(tokens.tokens, window_tokens, window.len());
        writeln!(
            out,
            "  {:>3}  {:>8}  {:>6}  {:>6}  {:>18.3e}  {:>16.3e}",
            m + 1,
            tokens.examples,
            tokens.tokens,
            tokens.padded_tokens,
            mean,
            fix
        )?;
    }
    writeln!(out, "  (the weight each token of the micro-batch gets, by reduction)")?;
    for (run, sample) in lab.runs().iter().zip(samples) {
        writeln!(
            out,
            "{} writes after {PROMPT:?} (temperature {SAMPLE_TEMPERATURE}, seed {SAMPLE_SEED}): {sample:?}",
            run.reduction.id()
        )?;
    }
    writeln!(out)?;
    Ok(())
}

fn csv<T: Real>(part: &GptPart, lab: &GptLab<T>, out: &mut dyn Write) -> Result<()> {
    let cell = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
    for run in lab.runs() {
        for r in &run.history {
            writeln!(
                out,
                "{},{},{},{},{},{},{},{},{}",
                part.label,
                run.reduction.id(),
                r.step + 1,
                r.train_loss,
                cell(r.validation_loss),
                r.grad_norm,
                cell(r.grad_relative_error),
                cell(r.grad_cosine),
                r.learning_rate
            )?;
        }
    }
    Ok(())
}

/// The bench's tiny-GPT figures (`sim::gpt::bench`, the workload the bench page times too):
/// predicted tokens per second of the CPU engine in f32 and of the GPU engine, at least `steps`
/// steps each.
pub fn bench(steps: u64, engines: Engines, out: &mut dyn Write) -> Result<()> {
    let model = bench::workload();
    let print = |out: &mut dyn Write, case: GptBenchCase, timing: GptBenchTiming| {
        writeln!(
            out,
            "  {:<6} {:<12} {:>9.0} tokens/s  ({:.1} optimizer steps/s, {} steps)",
            case.examples.id(),
            case.regime(),
            timing.tokens_per_second(),
            timing.steps_per_second(),
            timing.steps
        )
    };
    if engines != Engines::Gpu {
        writeln!(out, "tiny GPT, CPU f32 ({model}):")?;
        let clock = now();
        let now_ms = || clock.elapsed().as_secs_f64() * 1000.0;
        for case in GptBenchCase::ALL {
            let corpus = corpus(case.examples, case.config().model.context)?;
            let timing = bench::time_cpu(case, corpus, steps, 0.0, &now_ms)?;
            print(out, case, timing)?;
        }
    }
    if engines != Engines::Cpu {
        let context = match pollster::block_on(GpuContext::new()) {
            Ok(context) => context,
            Err(error) => {
                writeln!(out, "tiny GPT, GPU: not measured: {error}")?;
                return Ok(());
            }
        };
        let ops = GpuOps::shared(&context);
        writeln!(
            out,
            "tiny GPT, GPU {} ({}) ({model}):",
            context.adapter_name, context.backend
        )?;
        for case in GptBenchCase::ALL {
            let config = case.config();
            let corpus = corpus(case.examples, config.model.context)?;
            let mut lab = GptGpuLab::new(&context, ops.clone(), config.clone(), corpus.clone())?;
            pollster::block_on(lab.advance(bench::GPT_BENCH_WARM_UP_STEPS))?; // compile the kernels, warm the device
            let start = now();
            let mut left = steps;
            while left > 0 {
                let chunk = left.min(MAX_STEPS_PER_ADVANCE);
                let before = lab.step_count();
                pollster::block_on(lab.advance(chunk))?;
                left -= lab.step_count() - before;
            }
            let elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
            // The windows of the timed steps: the same example order as the CPU engine's.
            let tokens = bench::timed_tokens(&config, &corpus, bench::GPT_BENCH_WARM_UP_STEPS, steps);
            print(
                out,
                case,
                GptBenchTiming {
                    steps,
                    tokens,
                    elapsed_ms,
                },
            )?;
        }
    }
    Ok(())
}
