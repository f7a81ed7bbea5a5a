//! The canonical benchmark workload on one GPU engine, shared by the native bench command and
//! the browser benchmark page (each times it with its own clock).

use std::sync::Arc;

use super::context::GpuContext;
use super::engine::GpuEngine;
use super::ops::GpuOps;
use super::GpuError;
use gradlab_sim::backend::StepBatch;
use gradlab_sim::data::DataOrder;
use gradlab_sim::lab::{RunSetup, RunSpec};
use gradlab_sim::regime::{plan_step, MetricOps};
use gradlab_sim::scenario::canonical_config;

/// Batches cycled through, prepared up front so that timing measures only the engine.
const PREPARED_BATCHES: usize = 8;

#[derive(Debug)]
pub struct GpuWorkload {
    engine: GpuEngine,
    run: RunSpec,
    batches: Vec<StepBatch>,
    metrics: MetricOps,
}

impl GpuWorkload {
    /// 3-class spiral, MLP 2-64-64-3 ReLU, SGD lr 0.1, B = 256 in `micro_batches` micro-batches.
    pub fn canonical(
        context: &GpuContext,
        ops: &Arc<GpuOps>,
        micro_batches: usize,
        metrics: MetricOps,
    ) -> Result<Self, GpuError> {
        let config = canonical_config(micro_batches);
        let data = config.dataset.generate();
        let run = config.runs[0].clone();
        let engine = GpuEngine::new(context, ops, &RunSetup::new(&config, &run, &data))?;
        let mut order = DataOrder::new(config.data_order_seed, data.train.example_count());
        let batches = (0..PREPARED_BATCHES)
            .map(|_| {
                StepBatch::gather(
                    &data.train,
                    data.input_dim,
                    order.next_batch(config.batch_size),
                    &run.regime,
                )
            })
            .collect();
        Ok(Self {
            engine,
            run,
            batches,
            metrics,
        })
    }

    /// Encodes and submits optimizer step `step`.
    pub fn step(&mut self, step: u64) -> Result<(), GpuError> {
        let batch = &self.batches[step as usize % self.batches.len()];
        let plan = plan_step(
            &self.run.regime,
            None,
            &self.run.schedule,
            step,
            &batch.micro_batch_items(),
            self.metrics,
        );
        self.engine.encode_step(step, &plan, batch)
    }

    /// Compute dispatches of the last step.
    pub fn last_step_dispatches(&self) -> usize {
        self.engine.last_step_dispatches()
    }

    /// Reads back the metrics of the steps since the last call, in one transfer.
    pub async fn read_back(&mut self) -> Result<usize, GpuError> {
        let read = self.engine.read_records().await?.len();
        // The bench reports steps per second; the engine's own step times are not kept.
        drop(self.engine.take_step_times());
        Ok(read)
    }
}
