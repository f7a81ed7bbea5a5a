//! What a run's engine gives back: the metrics of its steps, its predictions, parameters,
//! gradient and running statistics, read asynchronously; and, natively, the synchronous
//! `TrainingBackend` over them.

use super::workspace::{labels_buffer, to_f32, ItemBuffers};
use super::GpuEngine;
use crate::ops::{Recorder, Submitter};
use crate::readback::read_f32;
use crate::GpuError;
#[cfg(not(target_arch = "wasm32"))]
use gradlab_sim::backend::{StepBatch, TrainingBackend};
use gradlab_sim::metrics::StepRecord;
use gradlab_sim::reference::forward::PassMode;
#[cfg(not(target_arch = "wasm32"))]
use gradlab_sim::regime::StepPlan;
#[cfg(not(target_arch = "wasm32"))]
use gradlab_sim::trace::GradientSnapshot;
#[cfg(not(target_arch = "wasm32"))]
use gradlab_sim::SimError;

impl GpuEngine {
    /// Reads back the metrics of every step submitted since the last call, in one transfer.
    pub async fn read_records(&mut self) -> Result<Vec<StepRecord>, GpuError> {
        self.metric.read_records(&self.context, self.test.rows).await
    }

    /// Milliseconds of training work of each step read back since the last call, by the GPU's
    /// timestamps (the span between the step's marks); empty without timestamp queries.
    pub fn take_step_times(&mut self) -> Vec<f64> {
        self.metric.take_step_times()
    }

    /// Class probabilities for `points` (row-major) in evaluation mode, in chunks that fit the
    /// metrics workspace; one submission and one readback per chunk.
    pub async fn predict_points(&self, points: &[f64]) -> Result<Vec<f64>, GpuError> {
        let d = self.layout.input_dim;
        let classes = self.layout.classes;
        let mut probabilities = Vec::with_capacity(points.len() / d * classes);
        let workspace = &self.workspaces.metrics;
        for chunk in points.chunks(workspace.rows * d) {
            let rows = chunk.len() / d;
            let items = ItemBuffers {
                inputs: self.context.storage_buffer("predict inputs", &to_f32(chunk)),
                labels: labels_buffer(&self.context, "predict labels", &[], rows),
                rows,
            };
            let mut recorder = Recorder::new();
            let losses = workspace.own_losses();
            self.forward(&mut recorder, workspace, items.source(), PassMode::Eval, losses, None)?;
            // Predictions bind fresh input buffers, so they use a throwaway submitter.
            Submitter::new().submit(&self.context, &self.ops, recorder);
            let probs = read_f32(&self.context, &workspace.probs, rows * classes).await?;
            probabilities.extend(probs.into_iter().map(f64::from));
        }
        Ok(probabilities)
    }

    async fn read_f64(&self, buffer: &wgpu::Buffer, len: usize) -> Result<Vec<f64>, GpuError> {
        Ok(read_f32(&self.context, buffer, len)
            .await?
            .into_iter()
            .map(f64::from)
            .collect())
    }

    pub async fn read_parameters(&self) -> Result<Vec<f64>, GpuError> {
        self.read_f64(&self.parameters.values, self.layout.parameter_count)
            .await
    }

    pub async fn read_gradient(&self) -> Result<Vec<f64>, GpuError> {
        self.read_f64(&self.parameters.gradients, self.layout.parameter_count)
            .await
    }

    pub async fn read_buffers(&self) -> Result<Vec<f64>, GpuError> {
        self.read_f64(&self.parameters.running, self.layout.buffer_count).await
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn engine_error(error: GpuError) -> SimError {
    SimError::Engine(gradlab_sim::EngineError::new("GPU engine", error))
}

/// Natively the engine serves the synchronous `TrainingBackend` by blocking on readback
/// (pollster); on wasm the async `read_*` methods are used and nothing blocks.
#[cfg(not(target_arch = "wasm32"))]
impl TrainingBackend for GpuEngine {
    fn name(&self) -> String {
        "gpu".into()
    }

    fn execute(&mut self, step: u64, plan: &StepPlan, batch: &StepBatch) -> Result<(), SimError> {
        self.encode_step(step, plan, batch).map_err(engine_error)
    }

    fn drain_records(&mut self) -> Result<Vec<StepRecord>, SimError> {
        pollster::block_on(self.read_records()).map_err(engine_error)
    }

    fn drain_snapshots(&mut self) -> Result<Vec<GradientSnapshot>, SimError> {
        pollster::block_on(self.read_snapshots()).map_err(engine_error)
    }

    fn drain_step_times(&mut self) -> Vec<f64> {
        self.take_step_times()
    }

    fn parameters(&self) -> Result<Vec<f64>, SimError> {
        pollster::block_on(self.read_parameters()).map_err(engine_error)
    }

    fn gradient(&self) -> Result<Vec<f64>, SimError> {
        pollster::block_on(self.read_gradient()).map_err(engine_error)
    }

    fn buffers(&self) -> Result<Vec<f64>, SimError> {
        pollster::block_on(self.read_buffers()).map_err(engine_error)
    }

    fn predict(&mut self, points: &[f64]) -> Result<Vec<f64>, SimError> {
        pollster::block_on(self.predict_points(points)).map_err(engine_error)
    }
}
