//! The `gradlab` command: run scenarios or config files, print metrics, draw plots, export
//! everything as JSON, and benchmark the engines. Errors are reported once, in `main`.
#![cfg(not(target_arch = "wasm32"))]

mod bench;
mod gpt;
mod issuer;
mod output;
mod package;
mod plan;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use plotters::prelude::*;

use gradlab_plot::{draw_line_chart, LineChart, Metric};
use gradlab_sim::backend::TrainingBackend;
use gradlab_sim::export::write_export;
use gradlab_sim::gpt::scenario::{GptExperiment, GptScenario, MEMORY_TIMED_STEPS};
use gradlab_sim::lab::{memory_estimate, CpuLab, Lab, LabConfig};
use gradlab_sim::scenario::Scenario;

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

#[derive(Debug, Parser)]
#[command(
    name = "gradlab",
    version,
    about = "Gradient Accumulation Lab: train side-by-side runs and compare them"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the named scenarios.
    Scenarios,
    /// Print a scenario's full configuration as TOML, to edit and pass back with --config.
    Config {
        /// Scenario id (see `gradlab scenarios`).
        scenario: String,
    },
    /// Train a scenario or config file and print per-step metrics.
    Run {
        #[command(flatten)]
        source: Source,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// In table format, print every K-th step (default: about 20 rows per run).
        #[arg(long)]
        every: Option<u64>,
    },
    /// Draw a scenario's curves (loss, accuracy, gradient norm and error) to PNG and SVG.
    Plot {
        #[command(flatten)]
        source: Source,
        /// Folder for the images; created when missing.
        #[arg(long, default_value = "plots")]
        out_dir: PathBuf,
    },
    /// Write one JSON document with the data, initial parameters and every step's numbers.
    Export {
        #[command(flatten)]
        source: Source,
        /// Output file; `-` for standard output.
        #[arg(long, default_value = "-")]
        out: PathBuf,
    },
    /// Print each run's peak activation memory against holding the full batch.
    Memory {
        #[command(flatten)]
        source: Source,
    },
    /// Time the engines on the canonical workload: steps per second, allocations and GPU
    /// dispatches per optimizer step.
    Bench {
        /// Timed optimizer steps per measurement (1 to 100000).
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=bench::MAX_STEPS))]
        steps: u64,
        /// Which engines to time.
        #[arg(long, value_enum, default_value_t = bench::Engines::All)]
        engines: bench::Engines,
        /// Timed optimizer steps of the tiny GPT on each engine asked for (0 leaves it out).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(0..=bench::MAX_STEPS))]
        gpt_steps: u64,
    },
    /// Will it fit? The largest micro-batch and the accumulation steps for a model, a method
    /// and a device's memory, what each lever costs, and the configuration to paste.
    Plan(plan::PlanArgs),
    /// The certificate issuer service and its administration.
    #[command(subcommand)]
    Issuer(issuer::IssuerCommand),
    /// Build a SCORM package of the release build for Moodle, Canvas, Open edX or any LMS.
    #[command(subcommand)]
    Package(package::PackageCommand),
    /// Check a signed credential (JSON file or baked PNG): exit 0 and a one-line verdict when
    /// valid, non-zero with the reason otherwise.
    Verify {
        file: PathBuf,
        /// The issuer's DID document, to verify offline (else it is fetched from the did:web).
        #[arg(long)]
        did_document: Option<PathBuf>,
        /// The status list credential, to check revocation offline.
        #[arg(long)]
        status_list: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Precision {
    F32,
    F64,
}

impl Precision {
    fn bytes_per_value(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

/// Where the experiment comes from, and how long it runs.
#[derive(Debug, Args)]
struct Source {
    /// A named scenario (see `gradlab scenarios`).
    #[arg(long, conflicts_with = "config")]
    scenario: Option<String>,
    /// A config file, TOML or JSON (by extension).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Optimizer steps (default: the config's `steps`).
    #[arg(long)]
    steps: Option<u64>,
    /// Arithmetic of the CPU engine.
    #[arg(long, value_enum, default_value_t = Precision::F32)]
    precision: Precision,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
    /// Memory the experiment may use, in MiB; a config estimated above it is refused before
    /// training starts.
    #[arg(long, default_value_t = DEFAULT_MEMORY_BUDGET_MIB, value_parser = clap::value_parser!(u64).range(1..))]
    memory_budget_mib: u64,
}

/// Enough for every scenario many times over, and below what a small laptop can spare.
const DEFAULT_MEMORY_BUDGET_MIB: u64 = 2048;

impl Source {
    /// The tiny-GPT scenario `--scenario` names, if it names one.
    fn gpt_scenario(&self) -> Option<GptScenario> {
        self.scenario.as_deref().and_then(GptScenario::by_id)
    }

    fn load(&self) -> Result<LabConfig> {
        let config = match (&self.scenario, &self.config) {
            (Some(id), None) => Scenario::by_id(id).with_context(known_scenarios)?.config,
            (None, Some(path)) => load_config_file(path)?,
            (None, None) => bail!("give --scenario ID or --config FILE (see `gradlab scenarios`)"),
            (Some(_), Some(_)) => bail!("give either --scenario or --config, not both"),
        };
        config.validate().context("invalid configuration")?;
        Ok(config)
    }

    /// [`Self::load`], refusing a config that would not fit the memory budget.
    fn load_within_budget(&self) -> Result<LabConfig> {
        let config = self.load()?;
        self.check_memory(&config)?;
        Ok(config)
    }

    /// Refuses a config whose estimated peak memory exceeds the budget.
    fn check_memory(&self, config: &LabConfig) -> Result<()> {
        let estimate = memory_estimate(config, &config.dataset.generate(), self.precision.bytes_per_value());
        let budget = self.memory_budget_mib.saturating_mul(1 << 20);
        if estimate.total_bytes() > budget {
            bail!(
                "this experiment needs about {} MiB of memory ({} MiB of data, {} MiB for the runs' engines), \
                 more than the budget of {} MiB; make batch_size, the hidden widths, the number of runs or \
                 examples_per_class smaller, or raise the budget with --memory-budget-mib",
                mib(estimate.total_bytes()),
                mib(estimate.dataset_bytes),
                mib(estimate.engine_bytes),
                self.memory_budget_mib
            );
        }
        Ok(())
    }

    fn steps(&self, config: &LabConfig) -> Result<u64> {
        self.steps_or(config.steps)
    }

    /// `--steps`, else `default`, within the range every experiment takes.
    fn steps_or(&self, default: u64) -> Result<u64> {
        let steps = self.steps.unwrap_or(default);
        if steps == 0 || steps > gradlab_sim::lab::MAX_STEPS {
            bail!(
                "--steps must be between 1 and {}, got {steps}",
                gradlab_sim::lab::MAX_STEPS
            );
        }
        Ok(steps)
    }
}

fn known_scenarios() -> String {
    let ids = gradlab_sim::scenario::SCENARIO_IDS
        .iter()
        .chain(&gradlab_sim::gpt::scenario::GPT_SCENARIO_IDS);
    format!("known scenarios: {}", ids.copied().collect::<Vec<_>>().join(", "))
}

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// Parses a TOML or JSON config. The message names the line and column and quotes at most a
/// short excerpt: a config may be megabytes on one line, and echoing it helps nobody.
pub fn load_config_file(path: &Path) -> Result<LabConfig> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
    let is_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let parsed = if is_json {
        serde_json::from_str(&text).map_err(|error| {
            let offset = offset_of(&text, error.line(), error.column());
            (error.to_string(), offset)
        })
    } else {
        toml::from_str(&text).map_err(|error| (error.message().to_string(), error.span().map_or(0, |span| span.start)))
    };
    parsed.map_err(|(message, offset)| {
        let (line, column) = line_and_column(&text, offset);
        anyhow::anyhow!(
            "config file {} is not a valid lab config: line {line}, column {column}: {}\n  near: {}",
            path.display(),
            excerpt(message.trim(), 0, MESSAGE_CHARS),
            excerpt(&text, offset, EXCERPT_CHARS)
        )
    })
}

const MESSAGE_CHARS: usize = 200;
const EXCERPT_CHARS: usize = 60;

/// The byte offset of a 1-based line and column (as serde_json reports them).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let line_text = text[line_start..].split('\n').next().unwrap_or("");
    let in_line = line_text
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(line_text.len(), |(i, _)| i);
    line_start + in_line
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// At most `chars` characters of `text` on one line, around byte `offset`, with `…` where text
/// was cut and control characters (newlines, escapes) shown escaped.
fn excerpt(text: &str, offset: usize, chars: usize) -> String {
    let at = text[..text.floor_char_boundary(offset)].chars().count();
    let from = at.saturating_sub(chars / 2);
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut shown = text.chars().skip(from);
    for c in shown.by_ref().take(chars) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if shown.next().is_some() {
        out.push('…');
    }
    out
}

/// Progress on stderr: a rewritten line on a terminal, a line per tenth otherwise.
pub(crate) struct Progress {
    total: u64,
    enabled: bool,
    terminal: bool,
}

impl Progress {
    fn new(total: u64, quiet: bool) -> Self {
        Self {
            total,
            enabled: !quiet && total >= 20,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn update(&self, done: u64) {
        if !self.enabled {
            return;
        }
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\rgradlab: step {done}/{}", self.total);
            if done == self.total {
                let _ = writeln!(err);
            }
        } else if done == self.total || done.is_multiple_of((self.total / 10).max(1)) {
            let _ = writeln!(
                err,
                "gradlab: step {done}/{} ({}%)",
                self.total,
                done * 100 / self.total
            );
        }
    }
}

fn trained_lab(source: &Source) -> Result<(Lab<Box<dyn TrainingBackend>>, u64)> {
    let config = source.load_within_budget()?;
    let steps = source.steps(&config)?;
    let mut lab = boxed_lab(config, source.precision)?;
    let progress = Progress::new(steps, source.quiet);
    lab.run(steps, |done| progress.update(done))?;
    if !source.quiet {
        report_divergence(&lab, steps);
    }
    Ok((lab, steps))
}

/// Says on stderr which runs diverged (whatever the output format) and why training ended early.
fn report_divergence<B>(lab: &Lab<B>, steps: u64) {
    let mut err = std::io::stderr().lock();
    for run in lab.runs() {
        if let Some(step) = run.diverged_at {
            let _ = writeln!(err, "gradlab: {}", output::divergence_note(&run.spec.label, step));
        }
    }
    if lab.steps_taken() < steps && lab.all_diverged() {
        let _ = writeln!(
            err,
            "gradlab: every run diverged; stopped after step {} of {steps}",
            lab.steps_taken()
        );
    }
}

/// A lab whose engines are chosen at run time.
fn boxed_lab(config: LabConfig, precision: Precision) -> Result<Lab<Box<dyn TrainingBackend>>> {
    use gradlab_sim::reference::ReferenceEngine;
    let lab = Lab::new(config, |setup| -> Result<_, gradlab_sim::SimError> {
        Ok(match precision {
            Precision::F32 => Box::new(ReferenceEngine::<f32>::for_run(setup)?) as Box<dyn TrainingBackend>,
            Precision::F64 => Box::new(ReferenceEngine::<f64>::for_run(setup)?),
        })
    })?;
    Ok(lab)
}

fn run_command(command: Command, out: &mut dyn Write) -> Result<()> {
    match command {
        Command::Scenarios => output::scenarios(out)?,
        Command::Config { scenario } if GptScenario::by_id(&scenario).is_some() => {
            bail!(
                "{scenario} is a tiny-GPT scenario, whose settings are not read from a config file yet; \
                 `gradlab run --scenario {scenario} --format json` prints them with its numbers"
            );
        }
        Command::Config { scenario } => {
            let config = Scenario::by_id(&scenario).with_context(known_scenarios)?.config;
            writeln!(out, "{}", toml::to_string_pretty(&config)?)?;
        }
        Command::Run { source, format, .. }
            if source
                .gpt_scenario()
                .is_some_and(|s| s.experiment == GptExperiment::Memory) =>
        {
            let scenario = source.gpt_scenario().context("checked by the guard")?;
            let json = match format {
                Format::Table => false,
                Format::Json => true,
                Format::Csv => bail!("{}: prints a table or JSON (--format json), not CSV", scenario.id),
            };
            gpt::memory(&scenario, source.steps_or(scenario.steps)?, json, out)?;
        }
        Command::Memory { source } if source.gpt_scenario().is_some() => {
            // Either tiny-GPT experiment's parts, measured as the memory experiment measures them.
            let scenario = source.gpt_scenario().context("checked by the guard")?;
            gpt::memory(&scenario, source.steps_or(MEMORY_TIMED_STEPS)?, false, out)?;
        }
        Command::Plot { source, .. } | Command::Export { source, .. }
            if source
                .gpt_scenario()
                .is_some_and(|s| s.experiment == GptExperiment::Memory) =>
        {
            bail!(
                "{}: this experiment measures memory and time, not runs to plot or export; `gradlab memory --scenario {0}` prints it",
                source.scenario.as_deref().unwrap_or_default()
            );
        }
        Command::Run { source, format, every } if source.gpt_scenario().is_some() => {
            let scenario = source.gpt_scenario().context("checked by the guard")?;
            let steps = source.steps_or(scenario.steps)?;
            let print = match format {
                Format::Table => gpt::Print::Table {
                    every: every.unwrap_or((steps / 20).max(1)).max(1),
                },
                Format::Csv => gpt::Print::Csv,
                Format::Json => gpt::Print::Json,
            };
            let progress = Progress::new(steps * scenario.parts.len() as u64, source.quiet);
            let update = |done| progress.update(done);
            match source.precision {
                Precision::F32 => gpt::run::<f32>(&scenario, steps, print, &update, out)?,
                Precision::F64 => gpt::run::<f64>(&scenario, steps, print, &update, out)?,
            }
        }
        Command::Export { source, out: path } if source.gpt_scenario().is_some() => {
            let scenario = source.gpt_scenario().context("checked by the guard")?;
            // Every step holds each run's gradient and parameters (about 113k numbers each for
            // the default model): a few steps are what a replay needs.
            let steps = source.steps_or(gpt::EXPORT_STEPS)?;
            let progress = Progress::new(steps * scenario.parts.len() as u64, source.quiet);
            let written = if path.as_os_str() == "-" {
                gpt::export(&scenario, steps, source.precision == Precision::F64, out, &progress)?;
                None
            } else {
                let file = std::fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
                gpt::export(
                    &scenario,
                    steps,
                    source.precision == Precision::F64,
                    &mut std::io::BufWriter::new(file),
                    &progress,
                )
                .with_context(|| format!("export to {} failed", path.display()))?;
                Some(path)
            };
            if let Some(path) = written {
                writeln!(
                    out,
                    "wrote {} ({} parts x {steps} steps)",
                    path.display(),
                    scenario.parts.len()
                )?;
            }
        }
        Command::Plot { source, out_dir } if source.gpt_scenario().is_some() => {
            let scenario = source.gpt_scenario().context("checked by the guard")?;
            let steps = source.steps_or(scenario.steps)?;
            let progress = Progress::new(steps * scenario.parts.len() as u64, source.quiet);
            for path in gpt::plot(&scenario, steps, &out_dir, &|done| progress.update(done))? {
                writeln!(out, "wrote {}", path.display())?;
            }
        }
        Command::Run { source, format, every } => {
            let (lab, steps) = trained_lab(&source)?;
            let every = every.unwrap_or((steps / 20).max(1)).max(1);
            match format {
                Format::Table => output::table(&lab, every, out)?,
                Format::Csv => output::csv(&lab, out)?,
                Format::Json => output::json(&lab, out)?,
            }
        }
        Command::Plot { source, out_dir } => {
            let (lab, _) = trained_lab(&source)?;
            let written = write_plots(&lab, &out_dir)?;
            for path in written {
                writeln!(out, "wrote {}", path.display())?;
            }
        }
        Command::Export { source, out: path } => {
            let config = source.load_within_budget()?;
            let steps = source.steps(&config)?;
            let runs = config.runs.len();
            let mut lab = boxed_lab(config, source.precision)?;
            let progress = Progress::new(steps, source.quiet);
            if path.as_os_str() == "-" {
                write_export(&mut lab, steps, out, |done| progress.update(done))?;
            } else {
                let file = std::fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
                write_export(&mut lab, steps, &mut std::io::BufWriter::new(file), |done| {
                    progress.update(done);
                })
                .with_context(|| format!("export to {} failed", path.display()))?;
                writeln!(out, "wrote {} ({runs} runs x {steps} steps)", path.display())?;
            }
        }
        Command::Memory { source } => {
            let config = source.load()?;
            let estimate = memory_estimate(&config, &config.dataset.generate(), source.precision.bytes_per_value());
            let lab = CpuLab::<f32>::cpu(config)?;
            output::memory(&lab.activation_memory(4), out)?;
            writeln!(
                out,
                "whole experiment: about {} MiB ({} MiB data, {} MiB engines) at {:?}; budget {} MiB (--memory-budget-mib)",
                mib(estimate.total_bytes()),
                mib(estimate.dataset_bytes),
                mib(estimate.engine_bytes),
                source.precision,
                source.memory_budget_mib
            )?;
        }
        Command::Bench {
            steps,
            engines,
            gpt_steps,
        } => {
            bench::run(steps, engines, out)?;
            if gpt_steps > 0 {
                gpt::bench(gpt_steps, engines, out)?;
            }
        }
        Command::Plan(args) => {
            if !plan::run(&args, out)? {
                anyhow::bail!("nothing fits this budget (what would fit is listed above)");
            }
        }
        Command::Issuer(command) => issuer::run(command, out)?,
        Command::Package(command) => package::run(command, out)?,
        Command::Verify {
            file,
            did_document,
            status_list,
        } => issuer::verify(&file, did_document.as_deref(), status_list.as_deref(), out)?,
    }
    Ok(())
}

const PLOTTED: [(Metric, &str); 6] = [
    (Metric::TrainLoss, "loss"),
    (Metric::TestAccuracy, "accuracy"),
    (Metric::GradNorm, "grad_norm"),
    (Metric::GradRelativeError, "grad_error"),
    (Metric::GradCosine, "grad_cosine"),
    (Metric::LearningRate, "learning_rate"),
];

fn write_plots<B: TrainingBackend>(lab: &Lab<B>, out_dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    register_font()?;
    let mut written = Vec::new();
    for (metric, name) in PLOTTED {
        let chart = LineChart::from_histories(metric, lab.histories());
        let png = out_dir.join(format!("{name}.png"));
        let svg = out_dir.join(format!("{name}.svg"));
        draw_line_chart(&BitMapBackend::new(&png, (900, 540)).into_drawing_area(), &chart)
            .with_context(|| format!("cannot draw {}", png.display()))?;
        draw_line_chart(&SVGBackend::new(&svg, (900, 540)).into_drawing_area(), &chart)
            .with_context(|| format!("cannot draw {}", svg.display()))?;
        written.push(png);
        written.push(svg);
    }
    Ok(written)
}

/// Plotters' text needs a font; the bundled one makes PNGs identical on every machine.
pub(crate) fn register_font() -> Result<()> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| anyhow::anyhow!("the bundled font could not be loaded"))
}

/// Entry point of the `gradlab` binary: parse, run, report any error once.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = run_command(cli.command, &mut out).and_then(|()| out.flush().map_err(Into::into));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("gradlab: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
