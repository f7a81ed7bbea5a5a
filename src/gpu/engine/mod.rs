//! The GPU training engine for one run: parameters, gradients, optimizer state and activation
//! workspaces live on the GPU; a step plan is encoded into one command buffer and submitted once.
//!
//! Two workspaces: the training one holds one micro-batch (that is the memory accumulation saves);
//! the metrics one holds the full batch or the test set, for the reference gradient and
//! evaluation, and is reported separately. Per-step metrics are reduced on the GPU into a history
//! buffer that is read back in bulk.

use std::sync::Arc;

mod backward;
mod forward;

use super::context::GpuContext;
use super::kernels::FirstAndOutputGradients;
use super::kernels::{
    self, ActivationCode, ClipParams, GradientNormAndOptimizerParams, NormParams, OptimizerKind, OptimizerParams,
    ReduceMode, ReduceParams,
};
use super::ops::{GpuOps, Recorder, Submitter, TimestampSlots, TimingMark};
use super::readback::{read_f32, read_f32_and_timestamps, Queries};
use super::GpuError;
use crate::sim::backend::StepBatch;
#[cfg(not(target_arch = "wasm32"))]
use crate::sim::backend::TrainingBackend;
use crate::sim::data::Split;
use crate::sim::lab::RunSetup;
use crate::sim::metrics::StepRecord;
use crate::sim::model::{Layout, Norm};
use crate::sim::optim::OptimizerSpec;
use crate::sim::reference::forward::NormGeometry;
use crate::sim::regime::{Op, StepPlan};
use crate::sim::trace::{GradientSnapshot, NormStats, SnapshotOf};
#[cfg(not(target_arch = "wasm32"))]
use crate::sim::SimError;

/// Rows each workspace must hold, from the data set and the run's regime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    pub micro_batch_items: usize,
    pub step_items: usize,
    pub test_items: usize,
}

impl Capacity {
    /// The most items any `micro_batch_examples` (or `batch_examples`) examples of `train` can hold.
    pub fn for_split(train: &Split, test: &Split, batch_examples: usize, micro_batch_examples: usize) -> Self {
        let mut sizes: Vec<usize> = (0..train.example_count()).map(|e| train.items_in(e).len()).collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        let top = |n: usize| sizes.iter().take(n).sum::<usize>();
        Self {
            micro_batch_items: top(micro_batch_examples).max(1),
            step_items: top(batch_examples).max(1),
            test_items: test.item_count().max(1),
        }
    }
}

/// Scalar slots of one step's metrics.
mod slot {
    pub const LOSS_SUM: u32 = 0;
    pub const GRAD_SQ: u32 = 1;
    pub const DOT: u32 = 2;
    pub const REFERENCE_SQ: u32 = 3;
    pub const DIFF_SQ: u32 = 4;
    pub const TEST_LOSS_SUM: u32 = 5;
    pub const TEST_CORRECT: u32 = 6;
    pub const CLIP_SQ: u32 = 7;
    pub const CLIP_FACTOR_SUM: u32 = 8;
    pub const COUNT: usize = 9;

    // `ReduceMode::Comparison` and `ReduceMode::PairSums` fill consecutive slots in this order.
    const _: () = assert!(DOT == GRAD_SQ + 1 && REFERENCE_SQ == GRAD_SQ + 2 && DIFF_SQ == GRAD_SQ + 3);
    const _: () = assert!(TEST_CORRECT == TEST_LOSS_SUM + 1);
}

/// Steps whose metrics fit in the history buffer between two readbacks.
const HISTORY_STEPS: usize = 256;

/// A step submitted whose metrics are not read back yet: what its record needs besides the
/// scalars (which metric operations ran, how many clippings to average).
#[derive(Debug)]
struct PendingStep {
    record: StepRecord,
    has_reference: bool,
    evaluated: bool,
    clips: u32,
    /// Whether the GPU wrote both timestamps of the step's training span.
    timed: bool,
}

#[derive(Debug)]
struct LayerBuffers {
    z: wgpu::Buffer,
    xhat: wgpu::Buffer,
    normed: wgpu::Buffer,
    a: wgpu::Buffer,
    stats: wgpu::Buffer,
}

#[derive(Debug)]
struct Workspace {
    rows: usize,
    layers: Vec<LayerBuffers>,
    probs: wgpu::Buffer,
    dlogits: wgpu::Buffer,
    row_loss: wgpu::Buffer,
    row_correct: wgpu::Buffer,
    da: wgpu::Buffer,
    du: wgpu::Buffer,
    dz: wgpu::Buffer,
    bytes: u64,
}

fn stats_len(norm: Norm, rows: usize, width: usize) -> usize {
    3 * NormGeometry::new(norm, rows, width).sets.max(1)
}

impl Workspace {
    /// Its own row-loss buffer, from row 0 (the metrics workspace's).
    fn own_losses(&self) -> RowLosses<'_> {
        RowLosses {
            buffer: &self.row_loss,
            offset: 0,
        }
    }

    /// Where the gradient at the input of hidden layer `l`'s activation goes: the layers
    /// alternate between two buffers, so that no backward dispatch reads the buffer it writes.
    fn activation_gradient(&self, l: usize) -> &wgpu::Buffer {
        if l.is_multiple_of(2) {
            &self.da
        } else {
            &self.du
        }
    }

    /// The input of hidden layer `l` (of `fan_in` values per row) and the offset of its first
    /// value: the data for the first layer, the activation of the layer below otherwise.
    fn layer_input<'a>(&'a self, source: Source<'a>, l: usize, fan_in: usize) -> (&'a wgpu::Buffer, usize) {
        if l == 0 {
            (source.inputs, source.first_row * fan_in)
        } else {
            (&self.layers[l - 1].a, 0)
        }
    }

    /// A workspace of `rows` rows; `row_losses` says whether it keeps its rows' losses (the
    /// training workspace does not: a step's losses go to the engine's `step_row_loss`).
    fn new(context: &GpuContext, layout: &Layout, rows: usize, label: &str, row_losses: bool) -> Self {
        let mut bytes = 0u64;
        let mut make = |name: &str, len: usize| {
            let buffer = context.zeroed_buffer(&format!("{label} {name}"), len);
            bytes += buffer.size();
            buffer
        };
        let norm = layout.spec.norm;
        let layers = layout
            .hidden
            .iter()
            .map(|layer| {
                let n = rows * layer.width;
                let has_norm = norm.has_parameters();
                LayerBuffers {
                    z: make("z", n),
                    xhat: make("xhat", if has_norm { n } else { 1 }),
                    normed: make("normed", if has_norm { n } else { 1 }),
                    a: make("a", n),
                    stats: make(
                        "stats",
                        if has_norm {
                            stats_len(norm, rows, layer.width)
                        } else {
                            1
                        },
                    ),
                }
            })
            .collect();
        let classes = layout.classes;
        let widest = layout.widest();
        Self {
            rows,
            layers,
            probs: make("probs", rows * classes),
            dlogits: make("dlogits", rows * classes),
            row_loss: make("row loss", if row_losses { rows } else { 1 }),
            row_correct: make("row correct", rows),
            da: make("da", rows * widest),
            du: make("du", rows * widest),
            dz: make("dz", rows * widest),
            bytes,
        }
    }
}

/// Where a forward pass reads its items.
#[derive(Clone, Copy)]
struct Source<'a> {
    inputs: &'a wgpu::Buffer,
    labels: &'a wgpu::Buffer,
    first_row: usize,
    rows: usize,
}

/// Where a forward pass writes its rows' losses: row 0's at `offset`.
#[derive(Clone, Copy)]
struct RowLosses<'a> {
    buffer: &'a wgpu::Buffer,
    offset: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// Training statistics, and the gradient of `gradient_weight * sum CE` at the logits.
    Train {
        update_running_stats: bool,
        gradient_weight: f32,
    },
    Eval,
}

/// One run's engine on the GPU.
#[derive(Debug)]
pub struct GpuEngine {
    context: GpuContext,
    ops: Arc<GpuOps>,
    layout: Layout,
    optimizer: OptimizerSpec,
    steps_taken: u32,
    parameters: ParameterBuffers,
    /// A step's items (as many as `capacity.step_items`).
    batch: ItemBuffers,
    test: ItemBuffers,
    capacity: Capacity,
    train: Workspace,
    metrics: Workspace,
    metric: MetricBuffers,
    /// Host-side parts of the records whose GPU parts are still in `metric.history`.
    pending: Vec<PendingStep>,
    fixed_bytes: u64,
    submitter: Submitter,
    /// Compute dispatches of the last step recorded.
    last_step_dispatches: usize,
    /// Where the last step's `Op::Snapshot`s copy their buffers (see [`Self::read_snapshots`]),
    /// allocated when a plan first asks for snapshots, and which buffer each slot holds.
    snapshots: Option<(wgpu::Buffer, usize)>,
    pending_snapshots: Vec<SnapshotOf>,
    /// Each pending step's start and end timestamps, where the adapter offers them.
    timestamps: Option<StepTimestamps>,
    /// Training time of the steps read back since the last drain.
    step_times_ms: Vec<f64>,
}

/// A run's parameter-sized buffers: the values, their gradient, the full-batch reference
/// gradient and the optimizer's two moments; and the non-trainable running statistics.
#[derive(Debug)]
struct ParameterBuffers {
    values: wgpu::Buffer,
    gradients: wgpu::Buffer,
    reference: wgpu::Buffer,
    running: wgpu::Buffer,
    first_moment: wgpu::Buffer,
    second_moment: wgpu::Buffer,
}

/// Items on the GPU: inputs, labels and how many rows they hold.
#[derive(Debug)]
struct ItemBuffers {
    inputs: wgpu::Buffer,
    labels: wgpu::Buffer,
    rows: usize,
}

/// Where a step's metrics are reduced and kept until they are read back.
#[derive(Debug)]
struct MetricBuffers {
    scalars: wgpu::Buffer,
    /// The losses of every item of a step, summed in order once per run of neighbouring
    /// micro-batches (once per step for every plan the regimes make).
    step_row_loss: wgpu::Buffer,
    /// The partial sums of a reduction (one vec4 per invocation of reduce_partials.wgsl).
    reduce_partials: wgpu::Buffer,
    history: wgpu::Buffer,
}

/// Two timestamps per step (the training span's start and end) for up to `HISTORY_STEPS` steps
/// between readbacks, and the buffer they are resolved into.
#[derive(Debug)]
struct StepTimestamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    period_ns: f32,
}

impl StepTimestamps {
    fn new(context: &GpuContext) -> Option<Self> {
        let period_ns = context.timestamp_period_ns?;
        let count = 2 * HISTORY_STEPS as u32;
        Some(Self {
            set: context.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("step timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count,
            }),
            resolve: context.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("step timestamps resolved"),
                size: u64::from(count) * 8,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            period_ns,
        })
    }
}

/// The parameters the norm kernels share: the statistic sets of a norm layer of `rows` x `width`
/// and where its scale and shift are (no activation, no running statistics).
pub(crate) fn norm_params(norm: Norm, rows: usize, width: usize, scale: usize, shift: usize) -> NormParams {
    let g = NormGeometry::new(norm, rows, width);
    NormParams {
        sets: g.sets as u32,
        len: g.len as u32,
        set_stride: g.set_stride as u32,
        item_stride: g.item_stride as u32,
        width: width as u32,
        gamma_offset: scale as u32,
        beta_offset: shift as u32,
        eps: norm.eps() as f32,
        ..NormParams::default()
    }
}

fn labels_buffer(context: &GpuContext, label: &str, labels: &[u32], len: usize) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    let mut padded = labels.to_vec();
    padded.resize(len.max(1), 0);
    context.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(&padded),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
    })
}

fn to_f32(values: &[f64]) -> Vec<f32> {
    values.iter().map(|&v| v as f32).collect()
}

impl GpuEngine {
    /// The engine of one run, from what [`crate::sim::lab::Lab::new`] (or a single-engine
    /// caller, through the same [`RunSetup::new`]) set up: its layout, initial parameters and
    /// the data that sizes its workspaces.
    pub fn new(context: &GpuContext, ops: &Arc<GpuOps>, setup: &RunSetup<'_>) -> Result<Self, GpuError> {
        let (context, ops) = (context.clone(), Arc::clone(ops));
        let timestamps = StepTimestamps::new(&context);
        let layout = setup.layout.clone();
        let (initial_params, initial_buffers) = (&setup.params, &setup.buffers);
        let optimizer = setup.spec.optimizer;
        let test = &setup.dataset.test;
        let capacity = Capacity::for_split(
            &setup.dataset.train,
            test,
            setup.batch_size,
            setup.micro_batch_examples(),
        );
        if initial_params.len() != layout.parameter_count || initial_buffers.len() != layout.buffer_count {
            return Err(GpuError::Shape("initial parameters do not fit the layout".into()));
        }
        let p = layout.parameter_count;
        let d = layout.input_dim;
        let params = context.storage_buffer("params", &to_f32(initial_params));
        let grads = context.zeroed_buffer("grads", p);
        let reference = context.zeroed_buffer("reference grads", p);
        let running = context.storage_buffer("running stats", &to_f32(initial_buffers));
        let first = context.zeroed_buffer("optimizer first moment", p);
        let second = context.zeroed_buffer("optimizer second moment", p);
        let batch_inputs = context.zeroed_buffer("batch inputs", capacity.step_items * d);
        let batch_labels = labels_buffer(&context, "batch labels", &[], capacity.step_items);
        let test_inputs = context.storage_buffer("test inputs", &to_f32(&test.inputs));
        let test_labels = labels_buffer(&context, "test labels", &test.labels, test.item_count());
        let scalars = context.zeroed_buffer("scalars", slot::COUNT);
        let step_row_loss = context.zeroed_buffer("step row loss", capacity.step_items);
        let reduce_partials = context.zeroed_buffer("reduce partials", 4 * kernels::REDUCE_PARTIALS_COUNT);
        let history = context.zeroed_buffer("metric history", slot::COUNT * HISTORY_STEPS);
        let fixed_bytes = [
            &params,
            &grads,
            &reference,
            &running,
            &first,
            &second,
            &batch_inputs,
            &batch_labels,
            &test_inputs,
            &test_labels,
            &scalars,
            &step_row_loss,
            &reduce_partials,
            &history,
        ]
        .iter()
        .map(|b| b.size())
        .sum();
        let train = Workspace::new(&context, &layout, capacity.micro_batch_items, "train", false);
        let metrics = Workspace::new(
            &context,
            &layout,
            capacity.step_items.max(capacity.test_items),
            "metrics",
            true,
        );
        let engine = Self {
            context,
            ops,
            layout,
            optimizer,
            steps_taken: 0,
            parameters: ParameterBuffers {
                values: params,
                gradients: grads,
                reference,
                running,
                first_moment: first,
                second_moment: second,
            },
            batch: ItemBuffers {
                inputs: batch_inputs,
                labels: batch_labels,
                rows: capacity.step_items,
            },
            test: ItemBuffers {
                inputs: test_inputs,
                labels: test_labels,
                rows: test.item_count(),
            },
            capacity,
            train,
            metrics,
            metric: MetricBuffers {
                scalars,
                step_row_loss,
                reduce_partials,
                history,
            },
            pending: Vec::new(),
            fixed_bytes,
            submitter: Submitter::new(),
            last_step_dispatches: 0,
            snapshots: None,
            pending_snapshots: Vec::new(),
            timestamps,
            step_times_ms: Vec::new(),
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
        let source = Source {
            inputs: &self.batch.inputs,
            labels: &self.batch.labels,
            first_row: 0,
            rows: self.capacity.micro_batch_items,
        };
        let mode = Mode::Train {
            update_running_stats: true,
            gradient_weight: 1.0,
        };
        let losses = RowLosses {
            buffer: &self.metric.step_row_loss,
            offset: 0,
        };
        let accumulates = self.capacity.micro_batch_items < self.capacity.step_items;
        self.forward(&mut recorder, &self.train, source, mode, losses, None)?;
        let deferred = self.backward(
            &mut recorder,
            &self.train,
            source,
            &self.parameters.gradients,
            accumulates,
        )?;
        if deferred.is_some() {
            self.forward(&mut recorder, &self.train, source, mode, losses, deferred)?;
            self.backward(&mut recorder, &self.train, source, &self.parameters.gradients, false)?;
        }
        let losses = self.metrics.own_losses();
        self.forward(
            &mut recorder,
            &self.metrics,
            self.test_source(),
            Mode::Eval,
            losses,
            None,
        )
    }

    /// The test split, which an evaluation reads.
    fn test_source(&self) -> Source<'_> {
        Source {
            inputs: &self.test.inputs,
            labels: &self.test.labels,
            first_row: 0,
            rows: self.test.rows,
        }
    }

    /// Bytes of the training activation workspace (one micro-batch).
    pub fn activation_bytes(&self) -> u64 {
        self.train.bytes
    }

    /// Bytes of the metrics workspace (full batch / test set; only for comparisons).
    pub fn metrics_workspace_bytes(&self) -> u64 {
        self.metrics.bytes
    }

    /// Bind groups created so far; constant once steps repeat (nothing is created per step).
    pub fn cached_bind_groups(&self) -> usize {
        self.submitter.cached_bind_groups()
    }

    /// Compute dispatches the last recorded step made (kernels fused: fewer, fatter ones).
    pub fn last_step_dispatches(&self) -> usize {
        self.last_step_dispatches
    }

    /// Every byte this engine allocated on the GPU.
    pub fn allocated_bytes(&self) -> u64 {
        self.fixed_bytes + self.train.bytes + self.metrics.bytes
    }

    pub fn adapter_name(&self) -> &str {
        &self.context.adapter_name
    }

    /// Reduces `a` (and `b`) into the scalar slots from `slot` on, as `mode` says.
    #[allow(
        clippy::too_many_arguments,
        reason = "the reduction's operands, mode and destination"
    )]
    fn reduce(
        &self,
        recorder: &mut Recorder,
        a: &wgpu::Buffer,
        b: &wgpu::Buffer,
        len: usize,
        mode: ReduceMode,
        slot: u32,
        accumulate: bool,
    ) -> Result<(), GpuError> {
        self.reduce_from(recorder, a, b, 0..len, mode, slot, accumulate, None, PartialHalf::Sums)
    }

    /// Reduces the gradient (with `b`, as `mode` says) into the slots from `slot`; the serial
    /// half also adds `carried_losses`, rows of `step_row_loss`, to the step's loss in order:
    /// the sum [`Self::sum_losses`] would record a dispatch of its own for. With `update`, the
    /// parallel half also takes the optimizer step (one dispatch and 73 workgroups fewer for
    /// the canonical network, which a software adapter pays for).
    fn reduce_gradient(
        &self,
        recorder: &mut Recorder,
        b: &wgpu::Buffer,
        mode: ReduceMode,
        slot: u32,
        carried_losses: Option<std::ops::Range<usize>>,
        update: Option<&OptimizerParams>,
    ) -> Result<(), GpuError> {
        let all = 0..self.layout.parameter_count;
        let partial_half = update.map_or(PartialHalf::Sums, PartialHalf::WithOptimizerStep);
        self.reduce_from(
            recorder,
            &self.parameters.gradients,
            b,
            all,
            mode,
            slot,
            false,
            carried_losses,
            partial_half,
        )
    }

    /// [`Self::reduce`] over the elements `range` of `a` (only the in-order sum takes an offset).
    #[allow(
        clippy::too_many_arguments,
        reason = "the reduction's operands, mode and destination"
    )]
    fn reduce_from(
        &self,
        recorder: &mut Recorder,
        a: &wgpu::Buffer,
        b: &wgpu::Buffer,
        range: std::ops::Range<usize>,
        mode: ReduceMode,
        slot: u32,
        accumulate: bool,
        carried_losses: Option<std::ops::Range<usize>>,
        partial_half: PartialHalf<'_>,
    ) -> Result<(), GpuError> {
        if mode.is_serial() && matches!(partial_half, PartialHalf::WithOptimizerStep(_)) {
            return Err(GpuError::Shape(
                "an in-order sum has no parallel half to update in".into(),
            ));
        }
        if range.start > 0 && !mode.is_serial() {
            return Err(GpuError::Shape(format!("{mode:?} reduces from the first element")));
        }
        if (range.end as u64) * 4 > a.size() || (mode.slots() > 1 && (range.end as u64) * 4 > b.size()) {
            return Err(GpuError::Shape(format!(
                "a reduction over elements {range:?} does not fit its buffers"
            )));
        }
        if slot + mode.slots() > slot::COUNT as u32 {
            return Err(GpuError::Shape(format!("scalar slots {slot}.. do not fit")));
        }
        let carried = carried_losses.filter(|rows| !rows.is_empty());
        let serial_input = match &carried {
            None => a,
            Some(_) if mode.is_serial() => {
                return Err(GpuError::Shape("an in-order sum carries no other sum".into()));
            }
            Some(rows) if (rows.end as u64) * 4 > self.metric.step_row_loss.size() => {
                return Err(GpuError::Shape(format!("loss rows {rows:?} do not fit")));
            }
            // The tree's serial half does not read `a`: it reads the row losses instead.
            Some(_) => &self.metric.step_row_loss,
        };
        let carried = carried.unwrap_or(0..0);
        let params = ReduceParams {
            offset: range.start as u32,
            loss_rows: carried.len() as u32,
            loss_offset: carried.start as u32,
            loss_slot: slot::LOSS_SUM,
            ..ReduceParams::new(range.len(), mode, slot, accumulate)
        };
        match partial_half {
            _ if mode.is_serial() => {}
            PartialHalf::Sums => self.ops.run(
                recorder,
                &kernels::REDUCE_PARTIALS,
                &params,
                [a, b, &self.metric.reduce_partials],
                kernels::REDUCE_PARTIALS_COUNT as u32,
            )?,
            PartialHalf::WithOptimizerStep(optimizer) => self.ops.run(
                recorder,
                &kernels::GRADIENT_NORM_AND_OPTIMIZER,
                &GradientNormAndOptimizerParams::new(range.len(), mode, optimizer),
                [
                    a,
                    b,
                    &self.metric.reduce_partials,
                    &self.parameters.values,
                    &self.parameters.first_moment,
                    &self.parameters.second_moment,
                ],
                kernels::REDUCE_PARTIALS_COUNT as u32,
            )?,
        }
        self.ops.run_one_group(
            recorder,
            &kernels::REDUCE_SERIAL,
            &params,
            [serial_input, &self.metric.reduce_partials, &self.metric.scalars],
        )
    }

    /// Adds the losses of `rows` of `step_row_loss` to the step's loss, in order.
    fn sum_losses(&self, recorder: &mut Recorder, rows: Option<std::ops::Range<usize>>) -> Result<(), GpuError> {
        let Some(rows) = rows else { return Ok(()) };
        let losses = &self.metric.step_row_loss;
        self.reduce_from(
            recorder,
            losses,
            losses,
            rows,
            ReduceMode::InOrderSum,
            slot::LOSS_SUM,
            true,
            None,
            PartialHalf::Sums,
        )
    }

    /// The optimizer step on its own, for a step whose gradient's reduction did not take it.
    fn optimizer_step(&mut self, recorder: &mut Recorder, learning_rate: f64) -> Result<(), GpuError> {
        let params = self.next_optimizer_step(learning_rate);
        let p = params.len;
        self.ops.run(
            recorder,
            &kernels::OPTIMIZER,
            &params,
            [
                &self.parameters.gradients,
                &self.parameters.values,
                &self.parameters.first_moment,
                &self.parameters.second_moment,
            ],
            p,
        )
    }

    /// Counts the optimizer step and returns its settings (Adam's bias corrections depend on
    /// the count).
    fn next_optimizer_step(&mut self, learning_rate: f64) -> OptimizerParams {
        self.steps_taken += 1;
        let t = self.steps_taken as i32;
        let (kind, weight_decay, beta1, beta2, eps, momentum) = match self.optimizer {
            OptimizerSpec::Sgd { weight_decay } => (OptimizerKind::Sgd, weight_decay, 0.0, 0.0, 0.0, 0.0),
            OptimizerSpec::Momentum { momentum, weight_decay } => {
                (OptimizerKind::Momentum, weight_decay, 0.0, 0.0, 0.0, momentum)
            }
            OptimizerSpec::Adam {
                beta1,
                beta2,
                eps,
                weight_decay,
            } => (OptimizerKind::Adam, weight_decay, beta1, beta2, eps, 0.0),
            OptimizerSpec::AdamW {
                beta1,
                beta2,
                eps,
                weight_decay,
            } => (OptimizerKind::AdamW, weight_decay, beta1, beta2, eps, 0.0),
        };
        let correction = |beta: f64| (1.0 - libm::pow(beta, f64::from(t))) as f32;
        OptimizerParams {
            len: self.layout.parameter_count as u32,
            kind: kind as u32,
            learning_rate: learning_rate as f32,
            weight_decay: weight_decay as f32,
            beta1: beta1 as f32,
            beta2: beta2 as f32,
            eps: eps as f32,
            momentum: momentum as f32,
            correction1: correction(beta1),
            correction2: correction(beta2),
            pad0: 0,
            pad1: 0,
        }
    }

    /// The shared checks, plus the engine's own capacity.
    fn check_batch(&self, batch: &StepBatch) -> Result<(), GpuError> {
        batch.check(&self.layout).map_err(GpuError::Data)?;
        if batch.item_count() > self.capacity.step_items {
            return Err(GpuError::OverCapacity {
                what: "step",
                items: batch.item_count(),
                capacity: self.capacity.step_items,
            });
        }
        if let Some(range) = batch
            .micro_batches
            .iter()
            .find(|r| r.len() > self.capacity.micro_batch_items)
        {
            return Err(GpuError::OverCapacity {
                what: "micro-batch",
                items: range.len(),
                capacity: self.capacity.micro_batch_items,
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
        if self.pending.len() >= HISTORY_STEPS {
            return Err(GpuError::Shape(format!(
                "read the metrics back at least every {HISTORY_STEPS} steps"
            )));
        }
        let ctx = self.context.clone();
        ctx.queue
            .write_buffer(&self.batch.inputs, 0, bytemuck::cast_slice(&to_f32(&batch.inputs)));
        ctx.queue
            .write_buffer(&self.batch.labels, 0, bytemuck::cast_slice(&batch.labels));
        let mut recorder = Recorder::new();
        recorder.clear(&self.metric.scalars);
        let p = self.layout.parameter_count;
        let mut record = StepRecord {
            step,
            learning_rate: plan.learning_rate,
            ..StepRecord::default()
        };
        let (mut has_reference, mut evaluated) = (false, false);
        let mut clips = 0u32;
        let snapshot_buffer = self.snapshot_buffer(plan);
        let timed = plan.training_span();
        // Rows of `step_row_loss` whose losses are not yet added to the step's loss.
        let mut unsummed_losses: Option<std::ops::Range<usize>> = None;
        // A closed run of those rows, summed by the next gradient reduction's serial half (one
        // dispatch fewer), or on its own before the next micro-batch's forward or at the end.
        let mut deferred_losses: Option<std::ops::Range<usize>> = None;
        // The gradient's reduction took the optimizer step that follows it.
        let mut optimizer_stepped = false;
        // The last backward dispatch of a micro-batch, for the next micro-batch's forward.
        let mut pending_gradients: Option<FirstAndOutputGradients> = None;
        for (i, op) in plan.ops.iter().enumerate() {
            if timed.as_ref().is_some_and(|span| *span.start() == i) {
                recorder.mark(TimingMark::Start);
            }
            match *op {
                Op::ReferenceGradient => {
                    let source = Source {
                        inputs: &self.batch.inputs,
                        labels: &self.batch.labels,
                        first_row: 0,
                        rows: batch.item_count(),
                    };
                    recorder.clear(&self.parameters.reference);
                    let mode = Mode::Train {
                        update_running_stats: false,
                        // As a full batch's `Op::Accumulate` carries it, so that the two agree bit for bit.
                        gradient_weight: (1.0 / batch.item_count().max(1) as f64) as f32,
                    };
                    let losses = self.metrics.own_losses();
                    self.forward(&mut recorder, &self.metrics, source, mode, losses, None)?;
                    self.backward(&mut recorder, &self.metrics, source, &self.parameters.reference, false)?;
                    has_reference = true;
                }
                Op::GradientAsReference => {
                    recorder.copy(
                        &self.parameters.gradients,
                        &self.parameters.reference,
                        0,
                        (p * 4) as u64,
                    );
                    has_reference = true;
                }
                Op::ZeroGrad => recorder.clear(&self.parameters.gradients),
                Op::Accumulate {
                    micro_batch,
                    item_weight,
                } => {
                    self.sum_losses(&mut recorder, deferred_losses.take())?;
                    let rows = batch.micro_batch(micro_batch).map_err(GpuError::Data)?;
                    let source = Source {
                        inputs: &self.batch.inputs,
                        labels: &self.batch.labels,
                        first_row: rows.start,
                        rows: rows.len(),
                    };
                    let mode = Mode::Train {
                        update_running_stats: true,
                        gradient_weight: item_weight as f32,
                    };
                    // The step's loss adds its items' losses one by one in item order, once
                    // for each run of neighbouring micro-batches (once per step, in every plan
                    // the regimes make): the same sequence as the full batch's. A run is kept
                    // open only when the next micro-batch continues it (below), so rows are
                    // summed before any later forward could rewrite them.
                    let losses = RowLosses {
                        buffer: &self.metric.step_row_loss,
                        offset: rows.start,
                    };
                    // The last backward dispatch of the micro-batch before waits for this
                    // forward's first; this one's waits for the next micro-batch where one
                    // follows at once (nothing reads the gradient in between).
                    let next_accumulates = matches!(plan.ops.get(i + 1), Some(Op::Accumulate { .. }));
                    let earlier = pending_gradients.take();
                    self.forward(&mut recorder, &self.train, source, mode, losses, earlier)?;
                    pending_gradients = self.backward(
                        &mut recorder,
                        &self.train,
                        source,
                        &self.parameters.gradients,
                        next_accumulates,
                    )?;
                    let run_start = unsummed_losses.take().map_or(rows.start, |run| run.start);
                    unsummed_losses = Some(run_start..rows.end);
                    let next_continues = plan.ops[i + 1..]
                        .iter()
                        .find_map(|op| match op {
                            Op::Accumulate { micro_batch, .. } => Some(*micro_batch),
                            _ => None,
                        })
                        .and_then(|next| batch.micro_batch(next).ok())
                        .is_some_and(|next| next.start == rows.end);
                    if !next_continues {
                        deferred_losses = unsummed_losses.take();
                    }
                    record.items += rows.len();
                }
                Op::ClipGradNorm { max_norm } => {
                    clips += 1;
                    let (squares, losses) = (ReduceMode::SumOfSquares, deferred_losses.take());
                    self.reduce_gradient(
                        &mut recorder,
                        &self.parameters.gradients,
                        squares,
                        slot::CLIP_SQ,
                        losses,
                        None,
                    )?;
                    let params = ClipParams {
                        len: p as u32,
                        slot: slot::CLIP_SQ,
                        max_norm: max_norm as f32,
                        factor_slot: slot::CLIP_FACTOR_SUM,
                    };
                    self.ops.run(
                        &mut recorder,
                        &kernels::CLIP,
                        &params,
                        [&self.metric.scalars, &self.parameters.gradients],
                        p as u32,
                    )?;
                }
                Op::RecordGradient => {
                    // The optimizer step that follows (it does in every plan) reads the gradient
                    // this reduction reads: the reduction's parallel half takes it.
                    let update = match plan.ops.get(i + 1) {
                        Some(&Op::OptimizerStep { learning_rate }) => Some(self.next_optimizer_step(learning_rate)),
                        _ => None,
                    };
                    // With a reference, one pass fills GRAD_SQ, DOT, REFERENCE_SQ and DIFF_SQ.
                    let (reference, mode) = if has_reference {
                        (&self.parameters.reference, ReduceMode::Comparison)
                    } else {
                        (&self.parameters.gradients, ReduceMode::SumOfSquares)
                    };
                    let losses = deferred_losses.take();
                    self.reduce_gradient(&mut recorder, reference, mode, slot::GRAD_SQ, losses, update.as_ref())?;
                    optimizer_stepped = update.is_some();
                }
                Op::OptimizerStep { learning_rate } => {
                    if !std::mem::take(&mut optimizer_stepped) {
                        self.optimizer_step(&mut recorder, learning_rate)?;
                    }
                }
                Op::Evaluate => {
                    let source = self.test_source();
                    let losses = self.metrics.own_losses();
                    self.forward(&mut recorder, &self.metrics, source, Mode::Eval, losses, None)?;
                    let rows = self.test.rows;
                    // One pass fills TEST_LOSS_SUM and TEST_CORRECT.
                    self.reduce(
                        &mut recorder,
                        &self.metrics.row_loss,
                        &self.metrics.row_correct,
                        rows,
                        ReduceMode::PairSums,
                        slot::TEST_LOSS_SUM,
                        false,
                    )?;
                    evaluated = true;
                }
                Op::Snapshot(of) => {
                    let Some(destination) = &snapshot_buffer else {
                        return Err(GpuError::Shape("no snapshot buffer".into()));
                    };
                    let (source, workspace) = match of {
                        SnapshotOf::ReferenceGradient => (&self.parameters.reference, &self.metrics),
                        SnapshotOf::Gradient => (&self.parameters.gradients, &self.train),
                    };
                    let base = (self.pending_snapshots.len() * self.snapshot_slot_len() * 4) as u64;
                    recorder.copy(source, destination, base, (p * 4) as u64);
                    if let (Some(sets), Some(layer)) = (self.batch_norm_sets(), workspace.layers.first()) {
                        // The stats buffer starts with the means, then the variances.
                        recorder.copy(&layer.stats, destination, base + (p * 4) as u64, (2 * sets * 4) as u64);
                    }
                    self.pending_snapshots.push(of);
                }
            }
            if timed.as_ref().is_some_and(|span| *span.end() == i) {
                recorder.mark(TimingMark::End);
            }
        }
        // Deferred only where another micro-batch followed at once, which took them; kept
        // here so that no plan can drop a gradient.
        if let Some(gradients) = pending_gradients.take() {
            gradients.record(&self.ops, &mut recorder)?;
        }
        self.sum_losses(&mut recorder, deferred_losses.take())?;
        let offset = (self.pending.len() * slot::COUNT * 4) as u64;
        recorder.copy(
            &self.metric.scalars,
            &self.metric.history,
            offset,
            (slot::COUNT * 4) as u64,
        );
        self.last_step_dispatches = recorder.dispatch_count();
        let timestamps = self.timestamps.as_ref().map(|t| TimestampSlots {
            set: &t.set,
            first: 2 * self.pending.len() as u32,
        });
        let (commands, timed) = self.submitter.encode(&ctx, &self.ops, recorder, timestamps);
        self.pending.push(PendingStep {
            record,
            has_reference,
            evaluated,
            clips,
            timed,
        });
        Ok(commands)
    }

    /// Milliseconds of training work of each step read back since the last call, by the GPU's
    /// timestamps (the span between the step's marks); empty without timestamp queries.
    pub fn take_step_times(&mut self) -> Vec<f64> {
        std::mem::take(&mut self.step_times_ms)
    }

    /// Reads back the metrics of every step submitted since the last call, in one transfer.
    pub async fn read_records(&mut self) -> Result<Vec<StepRecord>, GpuError> {
        if self.pending.is_empty() {
            return Ok(Vec::new());
        }
        // The metrics and the steps' timestamps come back in one mapping.
        let queries = self.timestamps.as_ref().map(|t| Queries {
            set: &t.set,
            count: 2 * self.pending.len() as u32,
            resolve: &t.resolve,
        });
        let (values, ticks) = read_f32_and_timestamps(
            &self.context,
            &self.metric.history,
            self.pending.len() * slot::COUNT,
            queries,
        )
        .await?;
        if let Some(timestamps) = &self.timestamps {
            let ms_per_tick = f64::from(timestamps.period_ns) / 1e6;
            // Only steps whose two timestamps were written this time; a span shorter than the
            // browser's rounding reads as 0 ms and counts as such (dropping it would bias the mean).
            let times = self
                .pending
                .iter()
                .enumerate()
                .filter(|(_, p)| p.timed)
                .filter_map(|(i, _)| {
                    let (start, end) = (ticks.get(2 * i)?, ticks.get(2 * i + 1)?);
                    Some(end.saturating_sub(*start) as f64 * ms_per_tick)
                });
            self.step_times_ms.extend(times);
        }
        let records = self
            .pending
            .drain(..)
            .zip(values.chunks(slot::COUNT))
            .map(|(pending, s)| {
                let PendingStep {
                    mut record,
                    has_reference,
                    evaluated,
                    clips,
                    timed: _,
                } = pending;
                let get = |i: u32| f64::from(s[i as usize]);
                record.train_loss = get(slot::LOSS_SUM) / record.items.max(1) as f64;
                // Sums of squares are never negative; no `max(0.0)` here, which would turn a NaN
                // (a diverged run) into a gradient norm of 0.
                record.grad_norm = get(slot::GRAD_SQ).sqrt();
                if has_reference {
                    record.grad_reference_norm = Some(get(slot::REFERENCE_SQ).sqrt());
                    let reference_norm = get(slot::REFERENCE_SQ).sqrt().max(f64::MIN_POSITIVE);
                    record.grad_relative_error = Some(get(slot::DIFF_SQ).sqrt() / reference_norm);
                    record.grad_cosine =
                        Some(get(slot::DOT) / (record.grad_norm * reference_norm).max(f64::MIN_POSITIVE));
                }
                if clips > 0 {
                    record.clip_factor = Some(get(slot::CLIP_FACTOR_SUM) / f64::from(clips));
                    record.grad_norm_before_clip = Some(get(slot::CLIP_SQ).sqrt());
                }
                if evaluated {
                    let rows = self.test.rows.max(1) as f64;
                    record.test_loss = Some(get(slot::TEST_LOSS_SUM) / rows);
                    record.test_accuracy = Some(get(slot::TEST_CORRECT) / rows);
                }
                record
            })
            .collect();
        Ok(records)
    }

    /// Whether a training forward's output dispatch also writes the gradient at the input of
    /// the top hidden layer's activation (which the backward then skips): where that
    /// activation's output gives its derivative.
    fn output_writes_input_gradient(&self) -> bool {
        ActivationCode::from(self.layout.spec.activation).derivative_from_output()
    }

    /// Channels of the first hidden layer's BatchNorm, whose statistics snapshots copy.
    fn batch_norm_sets(&self) -> Option<usize> {
        let first = self.layout.hidden.first()?;
        self.layout.spec.norm.mixes_items().then_some(first.width)
    }

    /// Values of one snapshot: the gradient, then BatchNorm's means and variances.
    fn snapshot_slot_len(&self) -> usize {
        self.layout.parameter_count + 2 * self.batch_norm_sets().unwrap_or(0)
    }

    /// The buffer the snapshots of `plan` are copied into (none when it takes none); the
    /// snapshots of an earlier step not read back yet are dropped.
    fn snapshot_buffer(&mut self, plan: &StepPlan) -> Option<wgpu::Buffer> {
        let count = plan.ops.iter().filter(|op| matches!(op, Op::Snapshot(_))).count();
        if count == 0 {
            return None;
        }
        self.pending_snapshots.clear();
        let slot_len = self.snapshot_slot_len();
        match &self.snapshots {
            Some((buffer, slots)) if *slots >= count => Some(buffer.clone()),
            _ => {
                let buffer = self.context.zeroed_buffer("gradient snapshots", count * slot_len);
                self.snapshots = Some((buffer.clone(), count));
                Some(buffer)
            }
        }
    }

    /// What the last step's `Op::Snapshot`s copied, in one transfer; empty when it took none.
    pub async fn read_snapshots(&mut self) -> Result<Vec<GradientSnapshot>, GpuError> {
        let Some((buffer, _)) = &self.snapshots else {
            return Ok(Vec::new());
        };
        if self.pending_snapshots.is_empty() {
            return Ok(Vec::new());
        }
        let (p, slot_len) = (self.layout.parameter_count, self.snapshot_slot_len());
        let values = read_f32(&self.context, buffer, self.pending_snapshots.len() * slot_len).await?;
        let sets = self.batch_norm_sets();
        let snapshots = self
            .pending_snapshots
            .drain(..)
            .zip(values.chunks(slot_len))
            .map(|(of, slot)| {
                let to_f64 = |values: &[f32]| values.iter().map(|&v| f64::from(v)).collect::<Vec<_>>();
                GradientSnapshot {
                    of,
                    gradient: to_f64(&slot[..p]),
                    batch_norm: sets.map(|sets| NormStats {
                        mean: to_f64(&slot[p..p + sets]),
                        variance: to_f64(&slot[p + sets..p + 2 * sets]),
                    }),
                }
            })
            .collect();
        Ok(snapshots)
    }

    /// Class probabilities for `points` (row-major) in evaluation mode, in chunks that fit the
    /// metrics workspace; one submission and one readback per chunk.
    pub async fn predict_points(&self, points: &[f64]) -> Result<Vec<f64>, GpuError> {
        let d = self.layout.input_dim;
        let classes = self.layout.classes;
        let mut probabilities = Vec::with_capacity(points.len() / d * classes);
        for chunk in points.chunks(self.metrics.rows * d) {
            let rows = chunk.len() / d;
            let inputs = self.context.storage_buffer("predict inputs", &to_f32(chunk));
            let labels = labels_buffer(&self.context, "predict labels", &[], rows);
            let mut recorder = Recorder::new();
            let source = Source {
                inputs: &inputs,
                labels: &labels,
                first_row: 0,
                rows,
            };
            self.forward(
                &mut recorder,
                &self.metrics,
                source,
                Mode::Eval,
                self.metrics.own_losses(),
                None,
            )?;
            // Predictions bind fresh input buffers, so they use a throwaway submitter.
            Submitter::new().submit(&self.context, &self.ops, recorder);
            let probs = read_f32(&self.context, &self.metrics.probs, rows * classes).await?;
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
    SimError::Engine(crate::sim::EngineError::new("GPU engine", error))
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

/// What the parallel half of a tree reduction dispatches.
#[derive(Debug, Clone, Copy)]
enum PartialHalf<'a> {
    /// The partial sums alone (reduce_partials.wgsl).
    Sums,
    /// The partial sums of the gradient and the optimizer step with these settings
    /// (gradient_norm_and_optimizer.wgsl).
    WithOptimizerStep(&'a OptimizerParams),
}
