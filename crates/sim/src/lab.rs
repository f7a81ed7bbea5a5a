//! Side-by-side runs: several runs that share their initial parameters (per architecture) and
//! consume the same B examples at every optimizer step, stepped together.

use serde::{Deserialize, Serialize};

use super::backend::{StepBatch, TrainingBackend};
use super::data::{DataOrder, Dataset, DatasetSpec};
use super::metrics::{activation_memory, relative_distance, ActivationMemory, RunHistory, StepRecord};
use super::model::{Layout, ModelSpec};
use super::optim::{OptimizerSpec, ScheduleSpec};
use super::real::Real;
use super::reference::{ReferenceEngine, StepCursor};
use super::regime::{plan_step, MetricOps, RegimeSpec, StepPlan};
use super::step_time::StepTimes;
use super::trace::{GradientSnapshot, StepTrace, TracedStep};
use super::{ConfigError, SimError};

pub const MAX_RUNS: usize = 8;
pub const MAX_STEPS: u64 = 1_000_000;
/// Run labels are names in a legend and a table column, not documents.
pub const MAX_LABEL_CHARS: usize = 64;

/// One run of a lab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSpec {
    pub label: String,
    pub model: ModelSpec,
    pub optimizer: OptimizerSpec,
    pub schedule: ScheduleSpec,
    pub regime: RegimeSpec,
    /// Clip the gradient to this global L2 norm; no clipping when absent.
    pub clip_max_norm: Option<f64>,
}

impl Default for RunSpec {
    fn default() -> Self {
        Self {
            label: "full batch".into(),
            model: ModelSpec::default(),
            optimizer: OptimizerSpec::default(),
            schedule: ScheduleSpec::default(),
            regime: RegimeSpec::default(),
            clip_max_norm: None,
        }
    }
}

/// A whole experiment: data, batch size, seeds and the runs compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LabConfig {
    pub dataset: DatasetSpec,
    /// B: examples per optimizer step, shared by every run.
    pub batch_size: usize,
    /// Seed of the order in which examples are drawn.
    pub data_order_seed: u64,
    /// Seed of the initial parameters; runs with the same architecture start identical.
    pub init_seed: u64,
    /// How many optimizer steps `gradlab run` takes by default.
    pub steps: u64,
    pub runs: Vec<RunSpec>,
}

impl Default for LabConfig {
    fn default() -> Self {
        Self {
            dataset: DatasetSpec::default(),
            batch_size: 256,
            data_order_seed: 7,
            init_seed: 42,
            steps: 100,
            runs: vec![RunSpec::default()],
        }
    }
}

impl LabConfig {
    /// Checks every field; the error names the first bad one (`runs[2].regime.micro_batches`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.dataset.validate("dataset")?;
        let train_examples = {
            let total = self.dataset.examples_per_class * self.dataset.kind.classes();
            total - ((total as f64) * self.dataset.test_fraction).round() as usize
        };
        if self.batch_size == 0 || self.batch_size > train_examples {
            return Err(ConfigError::new(
                "batch_size",
                format!(
                    "must be between 1 and the {train_examples} training examples, got {}",
                    self.batch_size
                ),
            ));
        }
        if self.steps == 0 || self.steps > MAX_STEPS {
            return Err(ConfigError::new(
                "steps",
                format!("must be between 1 and {MAX_STEPS}, got {}", self.steps),
            ));
        }
        if self.runs.is_empty() || self.runs.len() > MAX_RUNS {
            return Err(ConfigError::new(
                "runs",
                format!("needs 1 to {MAX_RUNS} runs, got {}", self.runs.len()),
            ));
        }
        for (i, run) in self.runs.iter().enumerate() {
            let field = format!("runs[{i}]");
            if run.label.trim().is_empty() {
                return Err(ConfigError::new(format!("{field}.label"), "must not be empty"));
            }
            let label_chars = run.label.chars().count();
            if label_chars > MAX_LABEL_CHARS {
                return Err(ConfigError::new(
                    format!("{field}.label"),
                    format!("must be at most {MAX_LABEL_CHARS} characters, got {label_chars}"),
                ));
            }
            // Labels reach terminals, CSV and charts: control characters could rewrite a terminal.
            if run.label.chars().any(char::is_control) {
                return Err(ConfigError::new(
                    format!("{field}.label"),
                    "must not contain control characters (newlines, tabs, escapes)",
                ));
            }
            if self.runs[..i].iter().any(|other| other.label == run.label) {
                return Err(ConfigError::new(
                    format!("{field}.label"),
                    format!("\"{}\" is used by an earlier run", run.label),
                ));
            }
            run.model.validate(&format!("{field}.model"))?;
            run.optimizer.validate(&format!("{field}.optimizer"))?;
            run.schedule.validate(&format!("{field}.schedule"))?;
            run.regime.validate(&format!("{field}.regime"), self.batch_size)?;
            if let Some(max_norm) = run.clip_max_norm {
                if !(max_norm > 0.0 && max_norm.is_finite()) {
                    return Err(ConfigError::new(
                        format!("{field}.clip_max_norm"),
                        format!("must be a positive number, got {max_norm}"),
                    ));
                }
            }
            let smallest = self.batch_size / run.regime.micro_batches;
            if run.model.norm.mixes_items() && smallest < 2 {
                return Err(ConfigError::new(
                    format!("{field}.regime.micro_batches"),
                    format!("BatchNorm needs at least 2 examples per micro-batch; B / N = {smallest}"),
                ));
            }
        }
        Ok(())
    }
}

/// One run inside a lab, with its history.
#[derive(Debug)]
pub struct LabRun<B> {
    pub spec: RunSpec,
    pub layout: Layout,
    pub backend: B,
    pub history: Vec<StepRecord>,
    /// Index of the first run with the same architecture, which parameter distances refer to.
    pub baseline: usize,
    /// Items in each micro-batch of the last step.
    pub last_micro_batch_items: Vec<usize>,
    /// The step (0-based) at which a loss, gradient or parameter of this run first was NaN or
    /// infinite. Its history ends with that step's record and it is not trained after it; the
    /// other runs go on.
    pub diverged_at: Option<u64>,
    /// The last step seen from inside, while the lab takes snapshots.
    pub trace: Option<StepTrace>,
    /// The plan of the last step, kept while the lab takes snapshots (its trace is built from it).
    traced_plan: Option<StepPlan>,
    /// Training time of the latest steps, where the engine can time the run on its own.
    pub step_times: StepTimes,
}

impl<B> LabRun<B> {
    pub fn history(&self) -> RunHistory<'_> {
        RunHistory {
            label: &self.spec.label,
            records: &self.history,
            diverged_at: self.diverged_at,
        }
    }
}

/// Runs stepped together over one data stream.
#[derive(Debug)]
pub struct Lab<B> {
    config: LabConfig,
    dataset: Dataset,
    order: DataOrder,
    runs: Vec<LabRun<B>>,
    step: u64,
    metric_ops: MetricOps,
    last_examples: Vec<usize>,
}

/// The CPU reference lab at a given precision.
pub type CpuLab<T> = Lab<ReferenceEngine<T>>;

/// One optimizer step of every run of a [`CpuLab`], executed a phase at a time (see
/// [`StepCursor`]): the browser's CPU engine gives the page its thread back between slices.
#[derive(Debug)]
pub struct SlicedStep {
    work: Vec<Option<RunStepWork>>,
    run: usize,
    cursor: Option<StepCursor>,
}

impl<T: Real> Lab<ReferenceEngine<T>> {
    pub fn cpu(config: LabConfig) -> Result<Self, SimError> {
        Lab::new(config, ReferenceEngine::for_run)
    }

    /// Starts the next optimizer step of every run; [`Self::continue_step`] executes it. Until
    /// it completes, the lab's runs hold a step in progress: nothing else may use them.
    pub fn start_step(&mut self) -> SlicedStep {
        SlicedStep {
            work: self.begin_step(),
            run: 0,
            cursor: None,
        }
    }

    /// Executes phases of `step`, run after run, while `keep_going()` (asked after each phase)
    /// says so; returns whether the step is complete (its records pushed, as [`Lab::step`]
    /// would). The numbers are the same however the step is sliced.
    pub fn continue_step(
        &mut self,
        step: &mut SlicedStep,
        mut keep_going: impl FnMut() -> bool,
    ) -> Result<bool, SimError> {
        while step.run < self.runs.len() {
            let Some(Some(work)) = step.work.get(step.run) else {
                step.run += 1;
                continue;
            };
            let backend = &mut self.runs[step.run].backend;
            let cursor = match &mut step.cursor {
                Some(cursor) => cursor,
                None => step
                    .cursor
                    .insert(backend.begin_step(work.step, &work.plan, &work.batch)?),
            };
            if backend.run_phase(&work.plan, &work.batch, cursor)? {
                step.run += 1;
                step.cursor = None;
            }
            if step.run < self.runs.len() && !keep_going() {
                return Ok(false);
            }
        }
        if !step.work.is_empty() {
            self.end_step()?;
            step.work.clear();
        }
        Ok(true)
    }
}

/// The records a lab's runs took since the last update, handed to a mirror of the lab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabUpdate {
    pub steps_taken: u64,
    pub runs: Vec<RunUpdate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunUpdate {
    pub records: Vec<StepRecord>,
    pub diverged_at: Option<u64>,
    pub last_micro_batch_items: Vec<usize>,
    pub trace: Option<StepTrace>,
    pub step_times: StepTimes,
}

/// What an engine for one run is built from. [`Lab::new`] makes one per run and hands it to
/// the engine's constructor; anything that builds a single engine (benchmarks, tests) makes it
/// with the same [`RunSetup::new`], so that every engine starts from the same layout, weights
/// and capacity.
#[derive(Debug, Clone)]
pub struct RunSetup<'a> {
    pub spec: &'a RunSpec,
    pub layout: Layout,
    /// Initial parameters and non-trainable buffers (BatchNorm running statistics).
    pub params: Vec<f64>,
    pub buffers: Vec<f64>,
    pub dataset: &'a Dataset,
    /// Examples per optimizer step.
    pub batch_size: usize,
}

impl<'a> RunSetup<'a> {
    pub fn new(config: &LabConfig, spec: &'a RunSpec, dataset: &'a Dataset) -> Self {
        let layout = Layout::new(&spec.model, dataset.input_dim, dataset.classes);
        let (params, buffers) = layout.initialize(config.init_seed);
        Self {
            spec,
            layout,
            params,
            buffers,
            dataset,
            batch_size: config.batch_size,
        }
    }

    /// The most examples one micro-batch holds.
    pub fn micro_batch_examples(&self) -> usize {
        self.batch_size.div_ceil(self.spec.regime.micro_batches.max(1))
    }
}

/// The work of one optimizer step for one run.
#[derive(Debug, Clone)]
pub struct RunStepWork {
    pub step: u64,
    pub plan: StepPlan,
    pub batch: StepBatch,
}

impl<B> Lab<B> {
    /// Validates the config, generates the data and builds one backend per run with
    /// `make_backend`, whose errors (an engine's own, or a [`SimError`]) it returns as they are.
    pub fn new<E: From<SimError>>(
        config: LabConfig,
        mut make_backend: impl FnMut(&RunSetup<'_>) -> Result<B, E>,
    ) -> Result<Self, E> {
        config.validate().map_err(SimError::from)?;
        let dataset = config.dataset.generate();
        let order = DataOrder::new(config.data_order_seed, dataset.train.example_count());
        let mut runs = Vec::with_capacity(config.runs.len());
        for (i, spec) in config.runs.iter().enumerate() {
            let setup = RunSetup::new(&config, spec, &dataset);
            let backend = make_backend(&setup)?;
            let layout = setup.layout;
            let baseline = config.runs[..i]
                .iter()
                .position(|other| other.model == spec.model)
                .unwrap_or(i);
            runs.push(LabRun {
                spec: spec.clone(),
                layout,
                backend,
                history: Vec::new(),
                baseline,
                last_micro_batch_items: Vec::new(),
                diverged_at: None,
                trace: None,
                traced_plan: None,
                step_times: StepTimes::default(),
            });
        }
        Ok(Self {
            config,
            dataset,
            order,
            runs,
            step: 0,
            metric_ops: MetricOps::ALL,
            last_examples: Vec::new(),
        })
    }

    /// What the runs recorded since `update.sent` records per run were handed over, for a
    /// mirror of this lab elsewhere (the page's copy of a lab that trains in a Web Worker);
    /// `sent` is advanced to what is handed over now.
    pub fn update_since(&self, sent: &mut Vec<usize>) -> LabUpdate {
        sent.resize(self.runs.len(), 0);
        let runs = self
            .runs
            .iter()
            .zip(sent.iter_mut())
            .map(|(run, sent)| {
                let start = (*sent).min(run.history.len());
                *sent = run.history.len();
                RunUpdate {
                    records: run.history[start..].to_vec(),
                    diverged_at: run.diverged_at,
                    last_micro_batch_items: run.last_micro_batch_items.clone(),
                    trace: run.trace.clone(),
                    step_times: run.step_times.clone(),
                }
            })
            .collect();
        LabUpdate {
            steps_taken: self.step,
            runs,
        }
    }

    /// Applies what another lab of the same config recorded (see [`Lab::update_since`]): its
    /// records, divergence and step count, as if this lab had taken the steps itself.
    pub fn apply_update(&mut self, update: LabUpdate) {
        self.step = self.step.max(update.steps_taken);
        for (run, update) in self.runs.iter_mut().zip(update.runs) {
            run.history.extend(update.records);
            run.diverged_at = update.diverged_at;
            run.last_micro_batch_items = update.last_micro_batch_items;
            run.trace = update.trace;
            run.step_times = update.step_times;
        }
    }

    /// Which metric passes each step includes (benchmarks turn them off).
    pub fn set_metric_ops(&mut self, metric_ops: MetricOps) {
        self.metric_ops = metric_ops;
    }

    /// Whether the next steps are traced (the step-through view is open); turning it off drops
    /// the traces.
    pub fn set_snapshots(&mut self, on: bool) {
        self.metric_ops.snapshots = on;
        if !on {
            for run in &mut self.runs {
                run.trace = None;
                run.traced_plan = None;
            }
        }
    }

    pub fn snapshots(&self) -> bool {
        self.metric_ops.snapshots
    }

    /// Builds run `run`'s trace of the last step from what its engine's `Op::Snapshot`s copied.
    pub fn set_trace(&mut self, run: usize, snapshots: &[GradientSnapshot]) -> Result<(), SimError> {
        let examples = &self.last_examples;
        let Some(run) = self.runs.get_mut(run) else {
            return Ok(());
        };
        let Some(plan) = &run.traced_plan else {
            return Ok(());
        };
        let micro_batch_examples: Vec<Vec<usize>> = run
            .spec
            .regime
            .split_examples(examples.len())
            .into_iter()
            .map(|range| examples[range].to_vec())
            .collect();
        let train = &self.dataset.train;
        let d = self.dataset.input_dim;
        let micro_batch_points: Vec<Vec<(f64, f64, u32)>> = micro_batch_examples
            .iter()
            .map(|examples| {
                examples
                    .iter()
                    .flat_map(|&e| train.items_in(e))
                    .map(|item| {
                        let x = &train.inputs[item * d..(item + 1) * d];
                        (x[0], x.get(1).copied().unwrap_or(0.0), train.labels[item])
                    })
                    .collect()
            })
            .collect();
        let traced = TracedStep {
            step: self.step.saturating_sub(1),
            plan,
            regime: &run.spec.regime,
            clip_max_norm: run.spec.clip_max_norm,
            micro_batch_examples: &micro_batch_examples,
            micro_batch_points: &micro_batch_points,
            micro_batch_items: &run.last_micro_batch_items,
        };
        run.trace = Some(StepTrace::new(traced, snapshots, &run.layout)?);
        Ok(())
    }

    pub fn config(&self) -> &LabConfig {
        &self.config
    }
    pub fn dataset(&self) -> &Dataset {
        &self.dataset
    }
    pub fn runs(&self) -> &[LabRun<B>] {
        &self.runs
    }
    pub fn runs_mut(&mut self) -> &mut [LabRun<B>] {
        &mut self.runs
    }
    /// Optimizer steps taken so far.
    pub fn steps_taken(&self) -> u64 {
        self.step
    }

    /// Every run's history, in run order.
    pub fn histories(&self) -> Vec<RunHistory<'_>> {
        self.runs.iter().map(LabRun::history).collect()
    }

    /// Whether every run has diverged, so that stepping on would train nothing.
    pub fn all_diverged(&self) -> bool {
        self.runs.iter().all(|run| run.diverged_at.is_some())
    }

    /// Draws the next B examples and returns, for every run, the step's plan and the batch split
    /// the run's way (`None` for a run that has diverged: it is not trained any more). The caller
    /// executes them (on any engine, possibly later and in bulk) and hands the records back with
    /// [`Lab::push_records`].
    pub fn begin_step(&mut self) -> Vec<Option<RunStepWork>> {
        let examples = self.order.next_batch(self.config.batch_size);
        let train = &self.dataset.train;
        let mut batch = StepBatch::gather(train, self.dataset.input_dim, examples, &RegimeSpec::full_batch());
        let mut work = Vec::with_capacity(self.runs.len());
        for run in &mut self.runs {
            if run.diverged_at.is_some() {
                // Not traced any more: an older step's trace would sit beside this step's.
                run.trace = None;
                run.traced_plan = None;
                work.push(None);
                continue;
            }
            batch.split(train, &run.spec.regime);
            run.last_micro_batch_items = batch.micro_batch_items();
            let plan = plan_step(
                &run.spec.regime,
                run.spec.clip_max_norm,
                &run.spec.schedule,
                self.step,
                &run.last_micro_batch_items,
                self.metric_ops,
            );
            run.traced_plan = self.metric_ops.snapshots.then(|| plan.clone());
            work.push(Some(RunStepWork {
                step: self.step,
                plan,
                batch: batch.clone(),
            }));
        }
        self.step += 1;
        self.last_examples = batch.examples;
        work
    }

    /// What the lab needs back from run `run` after its steps, asked before they are booked:
    /// nothing from a run that had diverged before them; its parameters (for the distances);
    /// its snapshots while tracing.
    pub fn needs_from(&self, run: usize) -> RunNeeds {
        let live = self.runs.get(run).is_some_and(|r| r.diverged_at.is_none());
        RunNeeds {
            parameters: live,
            snapshots: live && self.metric_ops.snapshots,
        }
    }

    /// Books what every run's engine produced over one or more steps (its records up to a
    /// divergence, the times of the steps kept, its trace, parameter distances): the one path of
    /// the synchronous lab and the asynchronous GPU lab. `results[i]` holds what
    /// [`Lab::needs_from`]`(i)` asked for, asked before this call.
    pub fn finish_steps(&mut self, results: Vec<RunResults>) -> Result<(), SimError> {
        let mut parameters = Vec::with_capacity(results.len());
        for (i, result) in results.into_iter().enumerate() {
            let needs = self.needs_from(i);
            let known = self.runs.get(i).map_or(0, |r| r.history.len());
            self.push_records(i, result.records);
            if let Some(run) = self.runs.get_mut(i) {
                // The times of the steps whose records were kept (none after a divergence).
                let kept = run.history.len() - known;
                for ms in result.step_times.into_iter().take(kept) {
                    run.step_times.push(ms);
                }
            }
            if needs.snapshots {
                self.set_trace(i, &result.snapshots)?;
            }
            parameters.push(result.parameters);
        }
        self.set_parameter_distances(&parameters);
        Ok(())
    }

    /// Appends the records an engine produced for run `run`, up to and including the first
    /// that is not finite: there the run has diverged, and what an engine computed after it (a
    /// GPU trains several steps before reading any back) is dropped.
    pub fn push_records(&mut self, run: usize, records: Vec<StepRecord>) {
        let Some(run) = self.runs.get_mut(run) else {
            return;
        };
        for record in records {
            if run.diverged_at.is_some() {
                break;
            }
            if !record.is_finite() {
                run.diverged_at = Some(record.step);
            }
            run.history.push(record);
        }
    }

    /// Given every run's current parameters (an empty vector for a run that had diverged
    /// before): marks a run whose parameters are no longer finite as diverged at its latest
    /// step, and sets each run's latest record's distance from its baseline run (none when
    /// either has diverged).
    pub fn set_parameter_distances(&mut self, parameters: &[Vec<f64>]) {
        for (run, values) in self.runs.iter_mut().zip(parameters) {
            if run.diverged_at.is_none() && values.iter().any(|v| !v.is_finite()) {
                run.diverged_at = run.history.last().map(|r| r.step);
            }
        }
        for i in 0..self.runs.len().min(parameters.len()) {
            let baseline = self.runs[i].baseline;
            let comparable = self.runs[i].diverged_at.is_none() && self.runs[baseline].diverged_at.is_none();
            let distance = parameters
                .get(baseline)
                .filter(|_| comparable)
                .map(|base| relative_distance(&parameters[i], base));
            let run = &mut self.runs[i];
            if let Some(record) = run.history.last_mut() {
                if run.diverged_at.is_none_or(|step| step == record.step) {
                    record.param_distance = distance;
                }
            }
        }
    }

    /// Training example indices of the last step, in the order consumed.
    pub fn last_examples(&self) -> &[usize] {
        &self.last_examples
    }

    /// Peak activation memory of each run: its largest micro-batch of the first step's sizes,
    /// against the whole batch held at once.
    pub fn activation_memory(&self, bytes_per_value: usize) -> Vec<RunMemory> {
        let mut order = DataOrder::new(self.config.data_order_seed, self.dataset.train.example_count());
        let examples = order.next_batch(self.config.batch_size);
        self.runs
            .iter()
            .map(|run| {
                let rows = StepBatch::gather(
                    &self.dataset.train,
                    self.dataset.input_dim,
                    examples.clone(),
                    &run.spec.regime,
                )
                .micro_batches;
                let peak_rows = rows.iter().map(|r| r.len()).max().unwrap_or(0);
                let full_rows = rows.last().map_or(0, |r| r.end);
                RunMemory {
                    label: run.spec.label.clone(),
                    peak: activation_memory(&run.layout, peak_rows, bytes_per_value),
                    full_batch: activation_memory(&run.layout, full_rows, bytes_per_value),
                }
            })
            .collect()
    }
}

impl<B: TrainingBackend> Lab<B> {
    /// One optimizer step for every run, on the same B examples.
    pub fn step(&mut self) -> Result<(), SimError> {
        let work = self.begin_step();
        for (run, work) in self.runs.iter_mut().zip(&work) {
            if let Some(work) = work {
                run.backend.execute(work.step, &work.plan, &work.batch)?;
            }
        }
        self.end_step()
    }

    /// After every run has executed its step: what each engine produced, through the one
    /// bookkeeping path ([`Lab::finish_steps`]).
    fn end_step(&mut self) -> Result<(), SimError> {
        let mut results = Vec::with_capacity(self.runs.len());
        for i in 0..self.runs.len() {
            let needs = self.needs_from(i);
            let backend = &mut self.runs[i].backend;
            results.push(RunResults {
                records: backend.drain_records()?,
                step_times: backend.drain_step_times(),
                snapshots: if needs.snapshots {
                    backend.drain_snapshots()?
                } else {
                    Vec::new()
                },
                parameters: if needs.parameters {
                    backend.parameters()?
                } else {
                    Vec::new()
                },
            });
        }
        self.finish_steps(results)
    }

    /// Up to `steps` optimizer steps, calling `progress(done)` after each; it stops early when
    /// every run has diverged.
    pub fn run(&mut self, steps: u64, mut progress: impl FnMut(u64)) -> Result<(), SimError> {
        for done in 1..=steps {
            if self.all_diverged() {
                break;
            }
            self.step()?;
            progress(done);
        }
        Ok(())
    }
}

/// What [`Lab::finish_steps`] needs back from one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunNeeds {
    pub parameters: bool,
    pub snapshots: bool,
}

/// What one run's engine produced over the steps being booked; a vector the lab did not ask
/// for ([`RunNeeds`]) stays empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunResults {
    pub records: Vec<StepRecord>,
    /// Milliseconds of each step, in order.
    pub step_times: Vec<f64>,
    pub snapshots: Vec<GradientSnapshot>,
    pub parameters: Vec<f64>,
}

/// What a lab holds at its peak, estimated from its config and data before any engine is built,
/// so that an experiment that cannot fit is refused with a message instead of aborting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MemoryEstimate {
    /// The generated data set (inputs as f64, labels, example offsets).
    pub dataset_bytes: u64,
    /// Every run's engine: activations of its largest pass (the full-batch reference gradient
    /// or the test-set evaluation), its test set, and parameter-sized vectors (parameters,
    /// gradients, reference gradient, optimizer moments and scratch, counted as eight).
    pub engine_bytes: u64,
}

impl MemoryEstimate {
    pub fn total_bytes(&self) -> u64 {
        self.dataset_bytes.saturating_add(self.engine_bytes)
    }
}

/// Parameter-sized vectors an engine keeps (see [`MemoryEstimate::engine_bytes`]).
const PARAMETER_COPIES: u64 = 8;

/// Estimates the peak memory of `config` on `dataset` (its generated data) with engines of
/// `bytes_per_value` bytes per number.
pub fn memory_estimate(config: &LabConfig, dataset: &Dataset, bytes_per_value: usize) -> MemoryEstimate {
    let u = |n: usize| n as u64;
    let split_bytes = |split: &super::data::Split| {
        u(split.inputs.len()) * 8 + u(split.labels.len()) * 4 + u(split.example_offsets.len()) * 8
    };
    let dataset_bytes = split_bytes(&dataset.train) + split_bytes(&dataset.test);
    let largest_example = (0..dataset.train.example_count())
        .map(|e| dataset.train.items_in(e).len())
        .max()
        .unwrap_or(1);
    let batch_rows = config
        .batch_size
        .saturating_mul(largest_example)
        .min(dataset.train.item_count());
    let test_rows = dataset.test.item_count();
    let engine_bytes = config
        .runs
        .iter()
        .map(|run| {
            let layout = Layout::new(&run.model, dataset.input_dim, dataset.classes);
            let activations = activation_memory(&layout, batch_rows.max(test_rows), bytes_per_value).bytes;
            let test_set = test_rows * (dataset.input_dim + 1) * bytes_per_value;
            let parameters = PARAMETER_COPIES * u(layout.parameter_count + layout.buffer_count) * u(bytes_per_value);
            u(activations) + u(test_set) + parameters
        })
        .fold(0u64, u64::saturating_add);
    MemoryEstimate {
        dataset_bytes,
        engine_bytes,
    }
}

/// Activation memory of one run against holding the full batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunMemory {
    pub label: String,
    pub peak: ActivationMemory,
    pub full_batch: ActivationMemory,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DatasetKind, MAX_EXAMPLES_PER_CLASS};
    use crate::model::{MAX_HIDDEN_LAYERS, MAX_WIDTH};
    use crate::scenario::Scenario;

    fn with_label(label: &str) -> LabConfig {
        let mut config = LabConfig::default();
        config.runs[0].label = label.into();
        config
    }

    /// Every scenario's lab stepped whole and a phase per call: the same records, parameters and
    /// running statistics, bit for bit, and the sliced one really did give control back.
    #[test]
    fn a_step_executed_a_phase_at_a_time_gives_the_same_numbers() {
        for scenario in Scenario::all() {
            let mut whole = CpuLab::<f32>::cpu(scenario.config.clone()).expect("valid scenario");
            let mut sliced = CpuLab::<f32>::cpu(scenario.config.clone()).expect("valid scenario");
            let mut slices = 0;
            for _ in 0..3 {
                whole.step().expect("step");
                let mut step = sliced.start_step();
                loop {
                    slices += 1;
                    if sliced.continue_step(&mut step, || false).expect("slice") {
                        break;
                    }
                }
            }
            let (hidden, runs) = (scenario.config.runs[0].model.hidden.len(), whole.runs().len());
            assert!(
                slices >= 3 * runs * (2 * hidden + 3),
                "{}: {slices} slices for 3 steps of {runs} runs",
                scenario.id
            );
            assert_eq!(sliced.steps_taken(), whole.steps_taken());
            for (a, b) in whole.runs().iter().zip(sliced.runs()) {
                assert_eq!(a.history, b.history, "{}: {}", scenario.id, a.spec.label);
                assert_eq!(
                    a.backend.parameters().expect("read"),
                    b.backend.parameters().expect("read")
                );
                assert_eq!(a.backend.buffers().expect("read"), b.backend.buffers().expect("read"));
            }
        }
    }

    /// The CPU engine times every step, whole or sliced, by its own clock; a plan of
    /// measurements alone has no training span and is not timed.
    #[test]
    fn the_cpu_engine_times_the_training_work_of_each_step() {
        let config = Scenario::by_id("memory").expect("memory").config;
        let mut whole = CpuLab::<f32>::cpu(config.clone()).expect("valid");
        whole.run(2, |_| {}).expect("train");
        let mut sliced = CpuLab::<f32>::cpu(config).expect("valid");
        let mut step = sliced.start_step();
        while !sliced.continue_step(&mut step, || false).expect("slice") {}
        for (lab, steps) in [(&whole, 2), (&sliced, 1)] {
            for run in lab.runs() {
                assert_eq!(run.step_times.steps(), steps, "{}", run.spec.label);
                assert!(run.step_times.mean_ms().expect("timed") > 0.0);
            }
        }
        let mut engine =
            ReferenceEngine::<f32>::for_run(&RunSetup::new(whole.config(), &whole.config().runs[0], whole.dataset()))
                .expect("engine");
        let examples = DataOrder::new(1, whole.dataset().train.example_count()).next_batch(64);
        let regime = RegimeSpec::accumulate(2);
        let batch = StepBatch::gather(&whole.dataset().train, whole.dataset().input_dim, examples, &regime);
        let measurements = StepPlan {
            ops: vec![
                super::super::regime::Op::ReferenceGradient,
                super::super::regime::Op::Evaluate,
            ],
            learning_rate: 0.1,
        };
        engine.execute(0, &measurements, &batch).expect("step");
        assert!(engine.drain_step_times().is_empty(), "no training work, no time");
        let items = batch.micro_batch_items();
        let training = plan_step(&regime, None, &ScheduleSpec::default(), 1, &items, MetricOps::ALL);
        engine.execute(1, &training, &batch).expect("step");
        assert_eq!(engine.drain_step_times().len(), 1);
        assert!(engine.drain_step_times().is_empty(), "drained");
    }

    /// A mirror fed with updates holds what the lab that trains holds: records (a diverging
    /// run included, the parameter distances set after each step), divergence and step count.
    #[test]
    fn a_mirror_fed_with_updates_holds_the_training_labs_histories() {
        let mut config = Scenario::by_id("scaling").expect("scaling").config;
        config.runs[2].schedule = ScheduleSpec::Constant { learning_rate: 100.0 };
        let mut training = CpuLab::<f32>::cpu(config.clone()).expect("valid");
        let mut mirror = Lab::new(config, |_| Ok::<(), SimError>(())).expect("valid");
        let mut sent = Vec::new();
        for steps in [1, 3, 0, 2] {
            training.run(steps, |_| {}).expect("train");
            let update = training.update_since(&mut sent);
            // As it crosses to the page (a diverged run's NaN kept: JSON would turn it into null).
            let bytes = postcard::to_allocvec(&update).expect("serialize");
            mirror.apply_update(postcard::from_bytes(&bytes).expect("deserialize"));
        }
        assert_eq!(mirror.steps_taken(), 6);
        assert!(
            training.runs()[2].diverged_at.is_some(),
            "the test needs a run that diverges"
        );
        for (a, b) in training.runs().iter().zip(mirror.runs()) {
            assert_eq!(a.history, b.history, "{}", a.spec.label);
            assert_eq!(a.diverged_at, b.diverged_at);
            assert_eq!(a.last_micro_batch_items, b.last_micro_batch_items);
            assert_eq!(a.step_times, b.step_times, "the engine's times cross too");
        }
        assert!(training.runs()[1].history.iter().all(|r| r.param_distance.is_some()));
        assert_eq!(
            training
                .update_since(&mut sent)
                .runs
                .iter()
                .map(|r| r.records.len())
                .sum::<usize>(),
            0
        );
    }

    #[test]
    fn labels_are_short_printable_names() {
        assert!(with_label(&"x".repeat(MAX_LABEL_CHARS)).validate().is_ok());
        assert!(
            with_label(&"é".repeat(MAX_LABEL_CHARS)).validate().is_ok(),
            "characters, not bytes"
        );
        let long = with_label(&"x".repeat(65_536)).validate().expect_err("too long");
        assert_eq!(long.field, "runs[0].label");
        assert!(
            long.message.contains("at most 64 characters, got 65536"),
            "{}",
            long.message
        );
        assert!(long.message.len() < 100, "the message does not echo the label");
        for control in ["a\nb", "tab\there", "\u{1b}[2J", "nul\0"] {
            let error = with_label(control).validate().expect_err("control character");
            assert_eq!(error.field, "runs[0].label");
        }
    }

    /// The largest config validation accepts: every limit at its maximum.
    fn largest_config() -> LabConfig {
        let mut config = LabConfig::default();
        config.dataset.examples_per_class = MAX_EXAMPLES_PER_CLASS;
        config.dataset.test_fraction = 0.05;
        let classes = config.dataset.kind.classes();
        let total = MAX_EXAMPLES_PER_CLASS * classes;
        config.batch_size = total - (total as f64 * 0.05).round() as usize;
        config.runs = (0..MAX_RUNS)
            .map(|i| RunSpec {
                label: format!("run {i}"),
                model: ModelSpec {
                    hidden: vec![MAX_WIDTH; MAX_HIDDEN_LAYERS],
                    ..ModelSpec::default()
                },
                ..RunSpec::default()
            })
            .collect();
        config
    }

    #[test]
    fn the_largest_valid_config_is_estimated_far_above_a_laptops_memory() {
        let config = largest_config();
        config.validate().expect("every limit at its maximum is valid");
        let estimate = memory_estimate(&config, &config.dataset.generate(), 4);
        assert!(estimate.total_bytes() > 10_000_000_000, "{estimate:?}");
    }

    #[test]
    fn every_scenario_is_estimated_small_and_at_least_its_activations() {
        for scenario in Scenario::all() {
            let dataset = scenario.config.dataset.generate();
            let estimate = memory_estimate(&scenario.config, &dataset, 4);
            assert!(estimate.total_bytes() < 256 << 20, "{}: {estimate:?}", scenario.id);
            let lab = CpuLab::<f32>::cpu(scenario.config.clone()).expect("valid scenario");
            let activations: u64 = lab.activation_memory(4).iter().map(|r| r.full_batch.bytes as u64).sum();
            assert!(estimate.engine_bytes >= activations, "{}: {estimate:?}", scenario.id);
        }
    }

    #[test]
    fn the_estimate_grows_with_the_batch_and_the_precision() {
        let config = LabConfig {
            dataset: DatasetSpec {
                kind: DatasetKind::default(),
                examples_per_class: 2_000,
                ..Default::default()
            },
            ..LabConfig::default()
        };
        let dataset = config.dataset.generate();
        let small = memory_estimate(&config, &dataset, 4);
        let bigger_batch = memory_estimate(
            &LabConfig {
                batch_size: 4096,
                ..config.clone()
            },
            &dataset,
            4,
        );
        assert!(bigger_batch.engine_bytes > small.engine_bytes);
        assert!(memory_estimate(&config, &dataset, 8).engine_bytes > small.engine_bytes);
        assert_eq!(small.dataset_bytes, bigger_batch.dataset_bytes);
    }
}
