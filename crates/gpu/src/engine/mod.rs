//! The GPU training engine for one run: parameters, gradients, optimizer state and activation
//! workspaces live on the GPU; a step plan is encoded into one command buffer and submitted once.
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | the engine: set-up, warm-up, checks, `record_step` |
//! | `workspace.rs` | parameter, item and activation buffers, and their sizes |
//! | `step.rs` | [`StepEncoder`](step::StepEncoder): one method per `Op` of a step plan |
//! | `forward.rs`, `backward.rs` | recording a forward and a backward pass |
//! | `reduce.rs` | the reductions into a step's scalar slots |
//! | `metrics.rs` | the slots, their history and its bulk readback into records |
//! | `snapshots.rs` | the step-through's gradient snapshots |
//! | `backend.rs` | what the engine gives back, and the native `TrainingBackend` |

use std::sync::Arc;

mod backend;
mod backward;
mod forward;
mod metrics;
mod reduce;
mod snapshots;
mod step;
mod workspace;

pub use workspace::Capacity;

use super::context::GpuContext;
use super::ops::{GpuOps, Recorder, Submitter};
use super::GpuError;
use gradlab_sim::backend::StepBatch;
use gradlab_sim::lab::RunSetup;
use gradlab_sim::model::Layout;
use gradlab_sim::optim::OptimizerSpec;
use gradlab_sim::reference::forward::PassMode;
use gradlab_sim::regime::StepPlan;
use metrics::MetricHistory;
use snapshots::Snapshots;
use step::StepEncoder;
use workspace::{to_f32, ItemBuffers, ParameterBuffers, RowLosses, Workspaces};

/// One run's engine on the GPU.
#[derive(Debug)]
pub struct GpuEngine {
    context: GpuContext,
    ops: Arc<GpuOps>,
    layout: Layout,
    optimizer: OptimizerSpec,
    /// Optimizer steps taken (Adam's bias corrections depend on the count).
    steps_taken: u32,
    parameters: ParameterBuffers,
    /// A step's items (as many as `workspaces.capacity.step_items`).
    batch: ItemBuffers,
    test: ItemBuffers,
    workspaces: Workspaces,
    metric: MetricHistory,
    snapshots: Snapshots,
    submitter: Submitter,
}

impl GpuEngine {
    /// The engine of one run, from what [`gradlab_sim::lab::Lab::new`] (or a single-engine
    /// caller, through the same [`RunSetup::new`]) set up: its layout, initial parameters and
    /// the data that sizes its workspaces.
    pub fn new(context: &GpuContext, ops: &Arc<GpuOps>, setup: &RunSetup<'_>) -> Result<Self, GpuError> {
        let (context, ops) = (context.clone(), Arc::clone(ops));
        let layout = setup.layout.clone();
        if setup.params.len() != layout.parameter_count || setup.buffers.len() != layout.buffer_count {
            return Err(GpuError::Shape("initial parameters do not fit the layout".into()));
        }
        let (train, test) = (&setup.dataset.train, &setup.dataset.test);
        let capacity = Capacity::for_split(train, test, setup.batch_size, setup.micro_batch_examples());
        let engine = Self {
            parameters: ParameterBuffers::new(&context, &layout, &setup.params, &setup.buffers),
            batch: ItemBuffers::for_steps(&context, layout.input_dim, capacity.step_items),
            test: ItemBuffers::of_split(&context, test),
            workspaces: Workspaces::new(&context, &layout, capacity),
            metric: MetricHistory::new(&context, capacity.step_items),
            snapshots: Snapshots::default(),
            submitter: Submitter::new(),
            optimizer: setup.spec.optimizer,
            steps_taken: 0,
            layout,
            context,
            ops,
        };
        engine.record_warm_up()?;
        if let Some(error) = engine.context.take_errors().into_iter().next() {
            return Err(error);
        }
        Ok(engine)
    }

    /// Records, and drops, the passes whose kernels take long to compile: a training
    /// micro-batch's forward and backward (where micro-batches accumulate, two, the second's
    /// forward taking the first's deferred gradients), and an evaluation. Their pipelines are
    /// built now, while the learner reads the page, instead of holding up the first step
    /// (seconds on a software adapter); any kernel a step needs beyond these is built when it
    /// is first recorded.
    fn record_warm_up(&self) -> Result<(), GpuError> {
        let mut recorder = Recorder::new();
        let Workspaces {
            capacity,
            train,
            metrics,
        } = &self.workspaces;
        let source = self.batch.rows_from(0, capacity.micro_batch_items);
        let mode = PassMode::Train {
            update_running_stats: true,
        };
        let losses = RowLosses::at(&self.metric.step_row_loss, 0).weighted(1.0);
        let gradients = &self.parameters.gradients;
        self.forward(&mut recorder, train, source, mode, losses, None)?;
        let deferred = self.backward(&mut recorder, train, source, gradients, self.workspaces.accumulates())?;
        if deferred.is_some() {
            self.forward(&mut recorder, train, source, mode, losses, deferred)?;
            self.backward(&mut recorder, train, source, gradients, false)?;
        }
        let (source, losses) = (self.test.source(), metrics.own_losses());
        self.forward(&mut recorder, metrics, source, PassMode::Eval, losses, None)
    }

    /// Bind groups created so far; constant once steps repeat (nothing is created per step).
    pub fn cached_bind_groups(&self) -> usize {
        self.submitter.cached_bind_groups()
    }

    /// Compute dispatches the last recorded step made (kernels fused: fewer, fatter ones).
    pub fn last_step_dispatches(&self) -> usize {
        self.submitter.last_dispatch_count()
    }

    pub fn adapter_name(&self) -> &str {
        &self.context.adapter_name
    }

    /// The shared checks, plus the engine's own capacity.
    fn check_batch(&self, batch: &StepBatch) -> Result<(), GpuError> {
        batch.check(&self.layout).map_err(GpuError::Data)?;
        let capacity = &self.workspaces.capacity;
        if batch.item_count() > capacity.step_items {
            return Err(GpuError::OverCapacity {
                what: "step",
                items: batch.item_count(),
                capacity: capacity.step_items,
            });
        }
        if let Some(range) = batch
            .micro_batches
            .iter()
            .find(|r| r.len() > capacity.micro_batch_items)
        {
            return Err(GpuError::OverCapacity {
                what: "micro-batch",
                items: range.len(),
                capacity: capacity.micro_batch_items,
            });
        }
        Ok(())
    }

    /// Encodes and submits one optimizer step: one command buffer, one submission.
    pub fn encode_step(&mut self, step: u64, plan: &StepPlan, batch: &StepBatch) -> Result<(), GpuError> {
        let commands = self.record_step(step, plan, batch)?;
        self.context.queue.submit([commands]);
        Ok(())
    }

    /// Encodes one optimizer step into a command buffer without submitting it, so that the
    /// steps of all side-by-side runs go to the queue in one `submit`. Submit it before recording
    /// this engine's next step: the step's items are uploaded into the engine's batch buffer now.
    pub fn record_step(
        &mut self,
        step: u64,
        plan: &StepPlan,
        batch: &StepBatch,
    ) -> Result<wgpu::CommandBuffer, GpuError> {
        self.check_batch(batch)?;
        self.metric.check_room()?;
        let queue = &self.context.queue;
        queue.write_buffer(&self.batch.inputs, 0, bytemuck::cast_slice(&to_f32(&batch.inputs)));
        queue.write_buffer(&self.batch.labels, 0, bytemuck::cast_slice(&batch.labels));
        let mut encoder = StepEncoder::new(self, step, plan, batch);
        for (i, &op) in plan.ops.iter().enumerate() {
            encoder.record(i, op)?;
        }
        let (recorder, pending) = encoder.finish()?;
        let timestamps = self.metric.timestamp_slots();
        let (commands, timed) = self.submitter.encode(&self.context, &self.ops, recorder, timestamps);
        self.metric.push(metrics::PendingStep { timed, ..pending });
        Ok(commands)
    }

    /// Whether a training forward's output dispatch also writes the gradient at the input of
    /// the top hidden layer's activation (which the backward then skips): where that
    /// activation's output gives its derivative.
    fn output_writes_input_gradient(&self) -> bool {
        super::kernels::ActivationCode::from(self.layout.spec.activation).derivative_from_output()
    }
}
