//! A side-by-side lab trained on the GPU without ever blocking: several optimizer steps of every
//! run are recorded and submitted, then the metrics of all of them come back in one async
//! readback per run. The browser's frame loop drives this; natively tests drive it with pollster.

use super::context::GpuContext;
use super::engine::GpuEngine;
use super::ops::GpuOps;
use super::GpuError;
use gradlab_sim::lab::{Lab, LabConfig, RunResults};
use gradlab_sim::SimError;

/// Errors of building a GPU lab: a bad config, or the GPU itself.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GpuLabError {
    #[error(transparent)]
    Config(#[from] SimError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// A [`Lab`] whose runs are [`GpuEngine`]s sharing one device.
#[derive(Debug)]
pub struct GpuLab {
    context: GpuContext,
    lab: Lab<GpuEngine>,
}

impl GpuLab {
    pub fn new(context: &GpuContext, config: LabConfig) -> Result<Self, GpuLabError> {
        let ops = GpuOps::shared(context);
        let lab = Lab::new(config, |setup| {
            GpuEngine::new(context, &ops, setup).map_err(GpuLabError::Gpu)
        })?;
        Ok(Self {
            context: context.clone(),
            lab,
        })
    }

    pub fn lab(&self) -> &Lab<GpuEngine> {
        &self.lab
    }

    /// Whether the next steps are traced (see [`Lab::set_snapshots`]).
    pub fn set_snapshots(&mut self, on: bool) {
        self.lab.set_snapshots(on);
    }

    pub fn adapter_name(&self) -> &str {
        &self.context.adapter_name
    }

    /// `steps` optimizer steps of every run: one submission per step for all runs, then one
    /// readback of metrics and one of parameters per run. Parameter distances are set on the
    /// last step's records (the steps in between have none).
    pub async fn advance(&mut self, steps: u64) -> Result<(), GpuError> {
        for _ in 0..steps {
            let work = self.lab.begin_step();
            let mut commands = Vec::with_capacity(work.len());
            for (run, work) in self.lab.runs_mut().iter_mut().zip(&work) {
                if let Some(work) = work {
                    commands.push(run.backend.record_step(work.step, &work.plan, &work.batch)?);
                }
            }
            self.context.queue.submit(commands);
        }
        let mut results = Vec::with_capacity(self.lab.runs().len());
        for i in 0..self.lab.runs().len() {
            let needs = self.lab.needs_from(i);
            let backend = &mut self.lab.runs_mut()[i].backend;
            results.push(RunResults {
                records: backend.read_records().await?,
                step_times: backend.take_step_times(),
                snapshots: if needs.snapshots {
                    backend.read_snapshots().await?
                } else {
                    Vec::new()
                },
                parameters: if needs.parameters {
                    backend.read_parameters().await?
                } else {
                    Vec::new()
                },
            });
        }
        self.lab.finish_steps(results).map_err(GpuError::Data)?;
        // Errors the device reported outside any call (validation, loss) end the run here.
        if let Some(error) = self.context.take_errors().into_iter().next() {
            return Err(error);
        }
        Ok(())
    }

    /// Class probabilities of run `run` at `points` (row-major, 2 values per point).
    pub async fn predict(&self, run: usize, points: &[f64]) -> Result<Vec<f64>, GpuError> {
        match self.lab.runs().get(run) {
            Some(run) => run.backend.predict_points(points).await,
            None => Err(GpuError::NoRun(run)),
        }
    }

    /// Non-trainable buffers (BatchNorm running statistics) of run `run`.
    pub async fn buffers(&self, run: usize) -> Result<Vec<f64>, GpuError> {
        match self.lab.runs().get(run) {
            Some(run) => run.backend.read_buffers().await,
            None => Err(GpuError::NoRun(run)),
        }
    }

    /// Bytes each run's engine allocated for its training activations (one micro-batch).
    pub fn activation_bytes(&self) -> Vec<u64> {
        self.lab.runs().iter().map(|r| r.backend.activation_bytes()).collect()
    }
}
