//! The one task that owns the engine. It waits for commands while paused and, while playing,
//! trains per animation frame as many steps as fit the frame's time budget (at most `steps per
//! frame`); it stops by itself in a hidden tab. Commands are handled while the engine works
//! (the CPU engine yields every few milliseconds, the GPU while its results are on the way):
//! Pause shows at once and no step starts after it, and a Reset cancels the work.
//! When WebGPU fails it says so once and continues on the CPU engine from the same step.

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use futures_channel::mpsc::{TryRecvError, UnboundedReceiver};
use leptos::prelude::*;

use super::super::browser;
use super::super::worker::CpuWorker;
use super::trainer::{TrainError, Trainer};
use gradlab_gpu::context::GpuContext;
use gradlab_i18n::Msg;
use gradlab_lab_state::boundary_history::BoundaryHistory;
use gradlab_lab_state::engine_choice::{EnginePreference, GpuTrial, Verdict};
use gradlab_lab_state::session::{FrameBudget, LabView, Transport, MAX_LAB_STEPS};
use gradlab_plot::boundary::{DecisionBoundary, Grid};
use gradlab_sim::lab::LabConfig;

/// Decision boundaries are recomputed at most this often while training (they cost a forward
/// pass over the grid per run).
const BOUNDARY_INTERVAL_MS: f64 = 800.0;
const BOUNDARY_CELLS: usize = 28;
/// Points drawn over a boundary (every k-th training item).
const BOUNDARY_POINTS: usize = 240;
/// While playing, the charts, table and texts follow the engine at most this often: they are
/// drawn on the page's thread, which must keep its frames (the CPU worker trains meanwhile).
const VIEW_INTERVAL_MS: f64 = 100.0;
/// One frame at 60 Hz.
const FRAME_MS: f64 = 1000.0 / 60.0;
/// With `simulate=gpu-loss`, the device is destroyed after this many steps.
const SIMULATED_LOSS_AFTER: u64 = 4;

pub enum Command {
    Reset {
        config: LabConfig,
        labels: Vec<String>,
    },
    Play,
    Pause,
    Step,
    /// Whether the next steps are traced for the step-through view (it is open).
    Trace(bool),
}

/// What the badge says about the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineBadge {
    Preparing,
    /// WebGPU, on the named adapter; `choosing` while it is being measured against the CPU
    /// engine (the badge then says so rather than naming an adapter that may not stay).
    Gpu {
        adapter: String,
        choosing: bool,
    },
    /// The CPU engine, with why when WebGPU is not used.
    Cpu(Option<Msg>),
    /// The CPU engine, chosen because it measured faster than WebGPU here.
    CpuFaster(Msg),
}

/// The signals the loop writes and the page reads.
#[derive(Clone, Copy)]
pub struct LabSignals {
    pub view: RwSignal<LabView>,
    pub transport: RwSignal<Transport>,
    pub engine: RwSignal<EngineBadge>,
    pub engine_notice: RwSignal<Option<Msg>>,
    pub boundaries: RwSignal<Vec<Option<DecisionBoundary>>>,
    /// Boundaries of past steps, for the history scrubber.
    pub boundary_history: RwSignal<BoundaryHistory>,
    pub first_step_ms: RwSignal<Option<f64>>,
    /// Whether the engine works on steps begun while playing (they finish after a Pause).
    pub working: RwSignal<bool>,
    pub steps_per_frame: RwSignal<u32>,
    /// Whether the CPU engine trains in a Web Worker (not on the page's thread).
    pub cpu_in_worker: RwSignal<bool>,
    /// The step training holds at while the tab is hidden (the view shows that step).
    pub held_at_step: RwSignal<Option<u64>>,
}

fn text(reason: impl ToString) -> Msg {
    Msg::new("status-error").arg("reason", reason.to_string())
}

/// WebGPU's context, or why the CPU engine trains instead (the Lab's and the tiny GPT's pages).
pub(crate) async fn open_webgpu(force_cpu: bool) -> Result<GpuContext, Msg> {
    if force_cpu {
        return Err(Msg::new("engine-forced-cpu"));
    }
    if !browser::has_webgpu() {
        return Err(Msg::new("engine-no-webgpu"));
    }
    match GpuContext::new().await {
        Ok(context) => Ok(context),
        Err(gradlab_gpu::GpuError::NoAdapter(_)) => Err(Msg::new("engine-no-adapter")),
        Err(e) => Err(Msg::new("engine-gpu-error").arg("reason", e.to_string())),
    }
}

/// What the engine badge names: the adapter, or that the browser keeps its name.
pub(crate) fn adapter_label(context: &GpuContext) -> String {
    if context.name_disclosed {
        context.adapter_name.clone()
    } else {
        super::super::i18n::tr("engine-adapter-hidden")
    }
}

/// Sets up WebGPU, or says why the CPU engine is used.
async fn open_gpu(signals: LabSignals, force_cpu: bool, choosing: bool) -> Option<GpuContext> {
    match open_webgpu(force_cpu).await {
        Ok(context) => {
            signals.engine.set(EngineBadge::Gpu {
                adapter: adapter_label(&context),
                choosing,
            });
            Some(context)
        }
        Err(reason) => {
            if !force_cpu {
                let reason_text = super::super::i18n::msg(&reason);
                signals
                    .engine_notice
                    .set(Some(Msg::new("engine-fallback-notice").arg("reason", &reason_text)));
            }
            signals.engine.set(EngineBadge::Cpu(Some(reason)));
            None
        }
    }
}

async fn refresh_boundaries(trainer: &mut Trainer, signals: LabSignals) -> Result<(), TrainError> {
    if trainer.step_in_progress() {
        return Ok(());
    }
    let points = trainer.training_points();
    let stride = (points.len() / BOUNDARY_POINTS).max(1);
    let shown: Vec<_> = points.iter().step_by(stride).copied().collect();
    let flat: Vec<f64> = points.iter().flat_map(|p| [p.0, p.1]).collect();
    let grid = Grid::covering(&flat, BOUNDARY_CELLS);
    let classes = trainer.classes();
    let probabilities = trainer.predict_all(&grid.centres()).await?;
    // A diverged run keeps the last boundary it had while its numbers were finite.
    let previous = signals.boundaries.get_untracked();
    let boundaries: Vec<Option<DecisionBoundary>> = probabilities
        .iter()
        .enumerate()
        .map(|(run, p)| match p {
            Some(p) => Some(DecisionBoundary::from_probabilities(
                String::new(),
                grid,
                p,
                classes,
                shown.clone(),
            )),
            None => previous.get(run).cloned().flatten(),
        })
        .collect();
    let step = trainer.steps_taken();
    signals.boundary_history.update(|h| h.push(step, boundaries.clone()));
    signals.boundaries.set(boundaries);
    let means = trainer.running_means().await?;
    signals.view.update(|v| {
        for (run, means) in v.runs.iter_mut().zip(means) {
            run.running_means = means;
        }
    });
    Ok(())
}

/// Where the CPU engine trains: a Web Worker, started on first use and kept for the next
/// experiments, or the page's thread when no worker starts (or one failed).
#[derive(Default)]
struct CpuWorkers {
    worker: Option<Rc<CpuWorker>>,
    unavailable: bool,
}

impl CpuWorkers {
    /// The CPU engine for `config`, in the worker when there is one.
    async fn trainer(&mut self, config: &LabConfig) -> Result<Trainer, TrainError> {
        if self.worker.as_ref().is_some_and(|w| w.is_busy()) {
            // Its answer to cancelled work is still due: a fresh worker is quicker than waiting.
            if let Some(worker) = self.worker.take() {
                worker.terminate();
            }
        }
        if self.worker.is_none() && !self.unavailable {
            match CpuWorker::spawn().await {
                Ok(worker) => self.worker = Some(Rc::new(worker)),
                Err(e) => self.give_up(&e),
            }
        }
        if let Some(worker) = &self.worker {
            match Trainer::build_in_worker(config, Rc::clone(worker)).await {
                Err(TrainError::Worker(e)) => self.give_up(&e),
                built => return built,
            }
        }
        Trainer::build(config, None)
    }

    /// From now on the CPU engine trains on the page's thread.
    fn give_up(&mut self, reason: &str) {
        web_sys::console::warn_1(&format!("the CPU engine trains on the page's thread: {reason}").into());
        if let Some(worker) = self.worker.take() {
            worker.terminate();
        }
        self.unavailable = true;
    }
}

/// After a GPU (or worker) failure: the same experiment on the CPU, replayed to the step the
/// failed engine reached.
async fn fall_back(
    config: &LabConfig,
    labels: &[String],
    steps: u64,
    signals: LabSignals,
    workers: &mut CpuWorkers,
) -> Result<Trainer, TrainError> {
    let mut trainer = workers.trainer(config).await?;
    while trainer.steps_taken() < steps {
        let chunk = (steps - trainer.steps_taken()).min(5);
        trainer.advance(chunk, &|| true).await?;
    }
    signals.view.set(trainer.view(labels.to_vec()));
    signals.cpu_in_worker.set(trainer.in_worker());
    Ok(trainer)
}

/// The CPU engine against WebGPU's measured `gpu_ms_per_step`: it replays the `steps` steps
/// WebGPU took, timed, and stops as soon as it cannot win. When it wins it is returned at the
/// same step, ready to continue (the numbers shown do not change).
async fn race_cpu(
    config: &LabConfig,
    steps: u64,
    gpu_ms_per_step: f64,
    workers: &mut CpuWorkers,
) -> Result<(Verdict, Option<Trainer>), TrainError> {
    let deadline = GpuTrial::cpu_deadline_ms(gpu_ms_per_step, steps);
    let mut cpu = workers.trainer(config).await?;
    // Timed from its first step, as WebGPU's trial is: building the lab (and starting the
    // worker) is not training, and under load it took longer than the steps themselves.
    let started = browser::now_ms();
    while cpu.steps_taken() < steps {
        cpu.advance(1, &|| true).await?;
        let elapsed = browser::now_ms() - started;
        if elapsed > deadline {
            let per_step = elapsed / cpu.steps_taken().max(1) as f64;
            return Ok((Verdict::of(gpu_ms_per_step, per_step), None));
        }
    }
    let per_step = (browser::now_ms() - started) / steps.max(1) as f64;
    let verdict = Verdict::of(gpu_ms_per_step, per_step);
    Ok((verdict, verdict.uses_cpu().then_some(cpu)))
}

/// What commands change while the engine works (cells: the work reads them as they change).
#[derive(Default)]
struct Playback {
    playing: Cell<bool>,
    single_steps: Cell<u32>,
    /// The step-through view is open: the engine traces the steps it takes.
    traced: Cell<bool>,
}

impl Playback {
    fn busy(&self) -> bool {
        self.playing.get() || self.single_steps.get() > 0
    }

    fn stop(&self) {
        self.playing.set(false);
        self.single_steps.set(0);
    }

    /// Applies Play, Pause or Step; returns a Reset's experiment, which the caller starts.
    fn apply(&self, command: Command, signals: LabSignals) -> Option<(LabConfig, Vec<String>)> {
        match command {
            Command::Reset { config, labels } => return Some((config, labels)),
            Command::Play => {
                self.playing.set(true);
                signals.transport.set(Transport::Running);
            }
            Command::Pause => {
                self.playing.set(false);
                signals.transport.set(Transport::Paused);
            }
            Command::Step => self.single_steps.set(self.single_steps.get().saturating_add(1)),
            Command::Trace(on) => self.traced.set(on),
        }
        None
    }
}

/// Why work ended before it finished.
enum Interrupted {
    Reset(LabConfig, Vec<String>),
    /// The page is gone.
    Closed,
}

/// Runs `work` to its end while applying the commands that arrive meanwhile; a Reset cancels
/// the work (a CPU step in progress stays resumable) and is returned.
async fn handling_commands<T>(
    work: impl Future<Output = T>,
    commands: &mut UnboundedReceiver<Command>,
    playback: &Playback,
    signals: LabSignals,
) -> Result<T, Interrupted> {
    let mut work = pin!(work);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = work.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        loop {
            match pin!(commands.recv()).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(_)) => return Poll::Ready(Err(Interrupted::Closed)),
                Poll::Ready(Ok(command)) => {
                    if let Some((config, labels)) = playback.apply(command, signals) {
                        return Poll::Ready(Err(Interrupted::Reset(config, labels)));
                    }
                    // The work reads what the command changed (a Pause tells the CPU worker
                    // to stop after its step) when it is polled again.
                    cx.waker().wake_by_ref();
                }
            }
        }
    })
    .await
}

pub async fn run(
    mut commands: UnboundedReceiver<Command>,
    signals: LabSignals,
    preference: EnginePreference,
    simulate_gpu_loss: bool,
) {
    // Unless the URL forces an engine, WebGPU is measured against the CPU engine once.
    let choosing = preference == EnginePreference::Faster;
    let mut context = open_gpu(signals, preference == EnginePreference::Cpu, choosing).await;
    let mut trial = choosing.then(GpuTrial::default);
    let mut trainer: Option<Trainer> = None;
    let mut current: Option<(LabConfig, Vec<String>)> = None;
    let playback = Playback::default();
    let mut last_boundary_ms = f64::MIN;
    let mut last_view_ms = f64::MIN;
    // Steps the engine took that the view does not show yet.
    let mut view_behind = false;
    let mut simulated_loss_done = false;
    let mut budget = FrameBudget::default();
    // A Reset that arrived while the engine worked, started before anything else.
    let mut reset: Option<(LabConfig, Vec<String>)> = None;
    let mut workers = CpuWorkers::default();
    loop {
        if let Some((config, labels)) = reset.take() {
            playback.stop();
            // Errors of GPU work the Reset cancelled belong to the old experiment.
            if let Some(context) = &context {
                drop(context.take_errors());
            }
            budget = FrameBudget::default();
            let built = match &context {
                Some(context) => Trainer::build(&config, Some(context)),
                None => workers.trainer(&config).await,
            };
            match built {
                Ok(mut built) => {
                    signals.view.set(built.view(labels.clone()));
                    signals.cpu_in_worker.set(built.in_worker());
                    signals.boundaries.set(Vec::new());
                    signals.boundary_history.update(BoundaryHistory::clear);
                    signals.transport.set(Transport::Idle);
                    current = Some((config, labels));
                    let refreshed = handling_commands(
                        refresh_boundaries(&mut built, signals),
                        &mut commands,
                        &playback,
                        signals,
                    )
                    .await;
                    trainer = Some(built);
                    match refreshed {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => web_sys::console::warn_1(&e.to_string().into()),
                        Err(Interrupted::Reset(config, labels)) => reset = Some((config, labels)),
                        Err(Interrupted::Closed) => return,
                    }
                }
                Err(e) => {
                    trainer = None;
                    current = None;
                    signals.transport.set(Transport::Failed(text(e)));
                }
            }
            continue;
        }
        let command = if playback.busy() {
            match commands.try_recv() {
                Ok(command) => Some(command),
                Err(TryRecvError::Closed) => return,
                Err(TryRecvError::Empty) => None,
            }
        } else {
            // Stopped (a Pause may have arrived during any work): the view shows the step the
            // engine is at before the loop waits.
            if let Some(engine) = trainer.as_ref().filter(|_| view_behind) {
                signals.view.update(|v| {
                    engine.sync(v);
                });
            }
            view_behind = false;
            signals.working.set(false);
            match commands.recv().await {
                Ok(command) => Some(command),
                Err(_) => return,
            }
        };
        if let Some(command) = command {
            reset = playback.apply(command, signals);
            if reset.is_some() {
                continue;
            }
        }
        let (Some(engine), Some((config, labels))) = (trainer.as_mut(), current.as_ref()) else {
            playback.stop();
            continue;
        };
        if !playback.busy() {
            continue;
        }
        let remaining = MAX_LAB_STEPS.saturating_sub(engine.steps_taken());
        let steps = if playback.playing.get() {
            budget.steps(u64::from(signals.steps_per_frame.get_untracked().max(1)).min(remaining))
        } else {
            1.min(remaining)
        };
        if steps == 0 {
            playback.stop();
            signals.transport.set(Transport::Finished);
            continue;
        }
        if simulate_gpu_loss && !simulated_loss_done && engine.is_gpu() && engine.steps_taken() >= SIMULATED_LOSS_AFTER
        {
            simulated_loss_done = true;
            if let Some(context) = &context {
                context.device.destroy();
            }
        }
        let before = engine.steps_taken();
        let single_step = !playback.playing.get();
        let started_ms = browser::now_ms();
        // A step started while playing stops the frame's work once Pause arrives.
        let keep_going = || single_step || playback.playing.get();
        // What Pause may have to wait for: a step begun while playing ("Pausing…").
        signals.working.set(!single_step);
        let traced = playback.traced.get();
        let work = async {
            engine.set_snapshots(traced).await?;
            engine.advance(steps, &keep_going).await
        };
        let advanced = handling_commands(work, &mut commands, &playback, signals).await;
        if !matches!(advanced, Ok(Ok(_))) {
            signals.working.set(false);
        }
        match advanced {
            Ok(Ok(taken)) => {
                let elapsed = browser::now_ms() - started_ms;
                budget.record(taken, elapsed);
                if let Some(trial) = trial.as_mut().filter(|_| engine.is_gpu()) {
                    trial.record(taken, elapsed);
                }
            }
            Err(Interrupted::Reset(config, labels)) => {
                reset = Some((config, labels));
                continue;
            }
            Err(Interrupted::Closed) => return,
            Ok(Err(error @ (TrainError::Worker(_) | TrainError::Gpu(_)))) => {
                match &error {
                    // The worker is gone or confused: the page's thread takes over.
                    TrainError::Worker(reason) => workers.give_up(reason),
                    _ => {
                        context = None;
                        let reason = Msg::new("engine-gpu-error").arg("reason", error.to_string());
                        signals.engine.set(EngineBadge::Cpu(Some(reason)));
                        signals
                            .engine_notice
                            .set(Some(Msg::new("engine-lost-notice").arg("reason", error.to_string())));
                    }
                }
                // The CPU engine continues from the step the failed engine reached.
                match fall_back(config, labels, before, signals, &mut workers).await {
                    Ok(cpu) => trainer = Some(cpu),
                    Err(e) => {
                        playback.stop();
                        trainer = None;
                        signals.transport.set(Transport::Failed(text(e)));
                    }
                }
                continue;
            }
            Ok(Err(error)) => {
                playback.stop();
                signals.transport.set(Transport::Failed(text(error)));
                continue;
            }
        }
        let now = browser::now_ms();
        let stopping = engine.steps_taken() >= MAX_LAB_STEPS || engine.all_diverged();
        if !playback.playing.get() || stopping || now - last_view_ms >= VIEW_INTERVAL_MS {
            last_view_ms = now;
            view_behind = false;
            signals.view.update(|v| {
                engine.sync(v);
            });
        } else {
            view_behind = true;
        }
        // WebGPU has trained long enough to judge: the CPU engine races it on the same steps.
        if let Some(gpu_ms_per_step) = trial.as_ref().and_then(GpuTrial::measured).filter(|_| engine.is_gpu()) {
            let steps = engine.steps_taken();
            match handling_commands(
                race_cpu(config, steps, gpu_ms_per_step, &mut workers),
                &mut commands,
                &playback,
                signals,
            )
            .await
            {
                Ok(Ok((verdict, cpu))) => {
                    trial = None;
                    match cpu {
                        Some(cpu) => {
                            // The faster engine for the rest of the page's life.
                            context = None;
                            signals.engine.set(EngineBadge::CpuFaster(verdict.message()));
                            // One engine's histories throughout, as after a GPU failure.
                            signals.view.set(cpu.view(labels.clone()));
                            signals.cpu_in_worker.set(cpu.in_worker());
                            trainer = Some(cpu);
                            signals.working.set(false);
                            continue;
                        }
                        None => signals.engine.update(|badge| {
                            if let EngineBadge::Gpu { adapter, choosing } = badge {
                                *adapter = format!("{adapter} ({})", super::super::i18n::msg(&verdict.message()));
                                *choosing = false;
                            }
                        }),
                    }
                }
                Ok(Err(e)) => {
                    trial = None;
                    signals.engine.update(|badge| {
                        if let EngineBadge::Gpu { choosing, .. } = badge {
                            *choosing = false;
                        }
                    });
                    web_sys::console::warn_1(&format!("engine race: {e}").into());
                }
                Err(Interrupted::Reset(config, labels)) => {
                    reset = Some((config, labels));
                    continue;
                }
                Err(Interrupted::Closed) => return,
            }
        }
        let Some(engine) = trainer.as_mut() else {
            continue;
        };
        // The step is done, but while the view lags behind the engine (playing, between view
        // updates) the numbers shown will still change: a Pause that arrives now is settled only
        // once the idle loop has shown the engine's step (below, where the loop waits).
        signals.working.set(view_behind);
        if signals.first_step_ms.get_untracked().is_none() {
            signals.first_step_ms.set(Some(browser::now_ms()));
        }
        if single_step {
            playback.single_steps.set(playback.single_steps.get().saturating_sub(1));
        }
        if !playback.playing.get() {
            signals.transport.set(Transport::Paused);
        }
        let now = browser::now_ms();
        if !playback.playing.get() || now - last_boundary_ms > BOUNDARY_INTERVAL_MS {
            last_boundary_ms = now;
            match handling_commands(refresh_boundaries(engine, signals), &mut commands, &playback, signals).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => web_sys::console::warn_1(&e.to_string().into()),
                Err(Interrupted::Reset(config, labels)) => {
                    reset = Some((config, labels));
                    continue;
                }
                Err(Interrupted::Closed) => return,
            }
        }
        if engine.steps_taken() >= MAX_LAB_STEPS {
            playback.stop();
            signals.transport.set(Transport::Finished);
        } else if engine.all_diverged() {
            playback.stop();
            signals.transport.set(Transport::Diverged);
        }
        // The page paints between steps. Work off its thread (WebGPU, the CPU worker) that took
        // longer than a frame left it free to paint meanwhile: the next step then starts at once
        // instead of leaving the engine idle until the next animation frame (up to a frame per
        // step; the norms preset on SwiftShader trained about 3 % more steps).
        let painted_meanwhile = (engine.is_gpu() || engine.in_worker()) && browser::now_ms() - started_ms >= FRAME_MS;
        let engine = &*engine;
        let between_steps = async {
            // A hidden tab gives no animation frames: it holds at once.
            if !browser::is_hidden() {
                if painted_meanwhile {
                    browser::yield_now().await;
                } else {
                    browser::next_frame().await;
                }
            }
            // Training waits while the tab is hidden, and the page says where it holds, its
            // view brought up to that step.
            if browser::is_hidden() {
                signals.view.update(|v| {
                    engine.sync(v);
                });
                signals.held_at_step.set(Some(engine.steps_taken()));
                browser::until_visible().await;
            }
        };
        // Commands act during the wait too: a Pause shows at once even where frames are slow
        // or stopped (a hidden or throttled tab), not only when the next step would start.
        let waited = handling_commands(between_steps, &mut commands, &playback, signals).await;
        if signals.held_at_step.get_untracked().is_some() {
            signals.held_at_step.set(None);
        }
        match waited {
            Ok(()) => {}
            Err(Interrupted::Reset(config, labels)) => reset = Some((config, labels)),
            Err(Interrupted::Closed) => return,
        }
    }
}
