//! The engine behind the Lab page: the GPU lab when WebGPU works, the CPU reference (f32, the
//! GPU's precision) otherwise, in a Web Worker (the page keeps a mirror of its lab that the
//! worker's updates fill in) or, where no worker starts, on the page's thread. Everything here
//! is async; nothing blocks: on the page's thread the CPU engine gives the thread back at least
//! every few milliseconds, even inside an optimizer step (it runs a step a layer at a time).

use std::rc::Rc;

use gradlab_cpu_worker::{FromWorker, ToWorker, RUNNING_MEANS_SHOWN};
use gradlab_gpu::context::GpuContext;
use gradlab_gpu::lab::GpuLab;
use gradlab_gpu::GpuError;
use gradlab_lab_state::session::LabView;
use gradlab_sim::backend::TrainingBackend;
use gradlab_sim::lab::{CpuLab, Lab, LabConfig, SlicedStep};
use gradlab_sim::SimError;

use super::super::browser;
use super::super::worker::CpuWorker;

/// CPU work runs in slices of about this many milliseconds between yields to the browser.
const CPU_SLICE_MS: f64 = 12.0;
/// Decision-boundary points the CPU engine predicts between yields (a few rows of the grid).
const CPU_PREDICT_POINTS: usize = 112;

pub enum Trainer {
    Gpu(GpuLab),
    /// The CPU lab and the step it is in the middle of, if any (a step whose work was
    /// cancelled is resumed by the next `advance`).
    Cpu(CpuLab<f32>, Option<SlicedStep>),
    /// The CPU lab in a Web Worker, and the page's mirror of it (histories only, no engine).
    Worker(Rc<CpuWorker>, Lab<()>),
}

/// Why a step failed: the GPU (the page falls back to the CPU) or the experiment itself.
#[derive(Debug)]
pub enum TrainError {
    Gpu(GpuError),
    Sim(SimError),
    /// The CPU worker failed or answered what it should not have.
    Worker(String),
}

impl std::fmt::Display for TrainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrainError::Gpu(e) => write!(f, "{e}"),
            TrainError::Sim(e) => write!(f, "{e}"),
            TrainError::Worker(e) => write!(f, "{e}"),
        }
    }
}

impl Trainer {
    /// The GPU lab when a context is given and builds; otherwise the CPU lab.
    pub fn build(config: &LabConfig, context: Option<&GpuContext>) -> Result<Self, TrainError> {
        if let Some(context) = context {
            return match GpuLab::new(context, config.clone()) {
                Ok(lab) => Ok(Trainer::Gpu(lab)),
                Err(gradlab_gpu::lab::GpuLabError::Gpu(e)) => Err(TrainError::Gpu(e)),
                Err(gradlab_gpu::lab::GpuLabError::Config(e)) => Err(TrainError::Sim(e)),
            };
        }
        CpuLab::<f32>::cpu(config.clone())
            .map(|lab| Trainer::Cpu(lab, None))
            .map_err(TrainError::Sim)
    }

    /// The CPU lab in `worker`; the config is checked (and its data generated for the mirror)
    /// on the page first, so a bad experiment gets the same message as on the page's thread.
    pub async fn build_in_worker(config: &LabConfig, worker: Rc<CpuWorker>) -> Result<Self, TrainError> {
        let mirror = Lab::new(config.clone(), |_| Ok::<(), SimError>(())).map_err(TrainError::Sim)?;
        let config_json = serde_json::to_string(config).map_err(|e| TrainError::Worker(e.to_string()))?;
        match ask(&worker, &ToWorker::Build { config_json }, &|| true).await? {
            FromWorker::Built => Ok(Trainer::Worker(worker, mirror)),
            other => Err(unexpected(other)),
        }
    }

    /// Whether the CPU engine is in the middle of a step (its work was cancelled).
    pub fn step_in_progress(&self) -> bool {
        matches!(self, Trainer::Cpu(_, Some(_)))
    }

    pub fn in_worker(&self) -> bool {
        matches!(self, Trainer::Worker(..))
    }

    pub fn is_gpu(&self) -> bool {
        matches!(self, Trainer::Gpu(_))
    }

    pub fn steps_taken(&self) -> u64 {
        match self {
            Trainer::Gpu(g) => g.lab().steps_taken(),
            Trainer::Cpu(c, _) => c.steps_taken(),
            Trainer::Worker(_, m) => m.steps_taken(),
        }
    }

    pub fn view(&self, labels: Vec<String>) -> LabView {
        match self {
            Trainer::Gpu(g) => LabView::new(g.lab(), labels, g.activation_bytes(), true),
            Trainer::Cpu(c, _) => LabView::new(c, labels, Vec::new(), false),
            Trainer::Worker(_, m) => LabView::new(m, labels, Vec::new(), false),
        }
    }

    pub fn sync(&self, view: &mut LabView) -> u64 {
        match self {
            Trainer::Gpu(g) => view.sync(g.lab()),
            Trainer::Cpu(c, _) => view.sync(c),
            Trainer::Worker(_, m) => view.sync(m),
        }
    }

    pub fn training_points(&self) -> Vec<(f64, f64, usize)> {
        fn points<B>(lab: &Lab<B>) -> Vec<(f64, f64, usize)> {
            let train = &lab.dataset().train;
            train
                .inputs
                .chunks_exact(2)
                .zip(&train.labels)
                .map(|(p, &label)| (p[0], p[1], label as usize))
                .collect()
        }
        match self {
            Trainer::Gpu(g) => points(g.lab()),
            Trainer::Cpu(c, _) => points(c),
            Trainer::Worker(_, m) => points(m),
        }
    }

    pub fn classes(&self) -> usize {
        match self {
            Trainer::Gpu(g) => g.lab().dataset().classes,
            Trainer::Cpu(c, _) => c.dataset().classes,
            Trainer::Worker(_, m) => m.dataset().classes,
        }
    }

    /// Up to `steps` optimizer steps of every run, fewer when `keep_going()` (asked after each
    /// step) says stop; returns how many were taken. The GPU submits them all at once.
    pub async fn advance(&mut self, steps: u64, keep_going: &dyn Fn() -> bool) -> Result<u64, TrainError> {
        match self {
            Trainer::Gpu(g) => {
                g.advance(steps).await.map_err(TrainError::Gpu)?;
                Ok(steps)
            }
            Trainer::Cpu(c, in_progress) => {
                let mut slice_start = browser::now_ms();
                let mut taken = 0;
                while taken < steps {
                    let step = in_progress.get_or_insert_with(|| c.start_step());
                    let complete = c
                        .continue_step(step, || browser::now_ms() - slice_start < CPU_SLICE_MS)
                        .map_err(TrainError::Sim)?;
                    if complete {
                        *in_progress = None;
                        taken += 1;
                        if !keep_going() {
                            break;
                        }
                    }
                    if browser::now_ms() - slice_start >= CPU_SLICE_MS {
                        browser::yield_now().await;
                        slice_start = browser::now_ms();
                    }
                }
                Ok(taken)
            }
            Trainer::Worker(worker, mirror) => match ask(worker, &ToWorker::Advance { steps }, keep_going).await? {
                FromWorker::Advanced { taken, update } => {
                    mirror.apply_update(update);
                    Ok(taken)
                }
                other => Err(unexpected(other)),
            },
        }
    }

    /// Whether every run has diverged (nothing is left to train).
    pub fn all_diverged(&self) -> bool {
        match self {
            Trainer::Gpu(g) => g.lab().all_diverged(),
            Trainer::Cpu(c, _) => c.all_diverged(),
            Trainer::Worker(_, m) => m.all_diverged(),
        }
    }

    /// Class probabilities of every run at `points`; `None` for a run that has diverged (its
    /// parameters are not numbers any more).
    pub async fn predict_all(&mut self, points: &[f64]) -> Result<Vec<Option<Vec<f64>>>, TrainError> {
        let mut out = Vec::new();
        match self {
            Trainer::Gpu(g) => {
                for run in 0..g.lab().runs().len() {
                    out.push(if g.lab().runs()[run].diverged_at.is_some() {
                        None
                    } else {
                        Some(g.predict(run, points).await.map_err(TrainError::Gpu)?)
                    });
                }
            }
            Trainer::Cpu(c, in_progress) => {
                if in_progress.is_some() {
                    // The runs' workspaces hold a step in progress: no run can predict until it
                    // ends, so each keeps its last boundary.
                    return Ok(vec![None; c.runs().len()]);
                }
                for run in c.runs_mut() {
                    if run.diverged_at.is_some() {
                        out.push(None);
                        continue;
                    }
                    let mut probabilities = Vec::with_capacity(points.len() / 2 * run.layout.classes);
                    for chunk in points.chunks(2 * CPU_PREDICT_POINTS) {
                        probabilities.extend(run.backend.predict(chunk).map_err(TrainError::Sim)?);
                        browser::yield_now().await;
                    }
                    out.push(Some(probabilities));
                }
            }
            Trainer::Worker(worker, _) => {
                match ask(
                    worker,
                    &ToWorker::Predict {
                        points: points.to_vec(),
                    },
                    &|| true,
                )
                .await?
                {
                    FromWorker::Predicted { probabilities } => out = probabilities,
                    other => return Err(unexpected(other)),
                }
            }
        }
        Ok(out)
    }

    /// Whether the lab traces its steps (the step-through view is open).
    pub fn snapshots(&self) -> bool {
        match self {
            Trainer::Gpu(g) => g.lab().snapshots(),
            Trainer::Cpu(c, _) => c.snapshots(),
            Trainer::Worker(_, m) => m.snapshots(),
        }
    }

    /// Turns tracing of the next steps on or off (see `Lab::set_snapshots`); nothing to do when
    /// it already is.
    pub async fn set_snapshots(&mut self, on: bool) -> Result<(), TrainError> {
        if self.snapshots() == on {
            return Ok(());
        }
        match self {
            Trainer::Gpu(g) => g.set_snapshots(on),
            Trainer::Cpu(c, _) => c.set_snapshots(on),
            Trainer::Worker(worker, mirror) => match ask(worker, &ToWorker::SetSnapshots { on }, &|| true).await? {
                FromWorker::SnapshotsSet => mirror.set_snapshots(on),
                other => return Err(unexpected(other)),
            },
        }
        Ok(())
    }

    /// The first running means of each BatchNorm run (`None` for runs without BatchNorm).
    pub async fn running_means(&self) -> Result<Vec<Option<Vec<f64>>>, TrainError> {
        let mut out = Vec::new();
        match self {
            Trainer::Worker(worker, _) => {
                return match ask(worker, &ToWorker::RunningMeans, &|| true).await? {
                    FromWorker::RunningMeans { means } => Ok(means),
                    other => Err(unexpected(other)),
                };
            }
            Trainer::Gpu(g) => {
                for (i, run) in g.lab().runs().iter().enumerate() {
                    out.push(if run.layout.buffer_count > 0 {
                        Some(g.buffers(i).await.map_err(TrainError::Gpu)?)
                    } else {
                        None
                    });
                }
            }
            Trainer::Cpu(c, _) => {
                for run in c.runs() {
                    out.push(if run.layout.buffer_count > 0 {
                        Some(run.backend.buffers().map_err(TrainError::Sim)?)
                    } else {
                        None
                    });
                }
            }
        }
        Ok(out
            .into_iter()
            .map(|b| b.map(|values| values.into_iter().take(RUNNING_MEANS_SHOWN).collect()))
            .collect())
    }
}

/// One request to the worker; a `Failed` answer is the worker's error.
async fn ask(worker: &CpuWorker, request: &ToWorker, keep_going: &dyn Fn() -> bool) -> Result<FromWorker, TrainError> {
    match worker.request(request, keep_going).await.map_err(TrainError::Worker)? {
        FromWorker::Failed { message } => Err(TrainError::Worker(message)),
        answer => Ok(answer),
    }
}

fn unexpected(answer: FromWorker) -> TrainError {
    TrainError::Worker(format!("the CPU worker answered out of turn: {answer:?}"))
}
