//! One optimizer step seen from inside: what an engine's gradient buffer held after each
//! micro-batch, measured by the engine that trains (snapshots), and what the step-through view
//! shows of it (a [`StepTrace`]: partial sums against the full-batch gradient at the same
//! parameters, the first layer's weight gradient filling in, BatchNorm's statistics, the rows
//! each pass held). Snapshots are taken only when a lab asks for them (`MetricOps::snapshots`).

use serde::{Deserialize, Serialize};

use super::metrics::{activation_memory, compare_gradients};
use super::model::Layout;
use super::optim::global_norm;
use super::regime::{ClipPlacement, Op, RegimeSpec, StepPlan, ZeroGradPlacement};
use super::SimError;

/// Which buffer an [`Op::Snapshot`] copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SnapshotOf {
    /// The full-batch gradient at the step's parameters (the plan's `ReferenceGradient`).
    ReferenceGradient,
    /// The gradient buffer as it stands (the partial sum of the micro-batches so far).
    Gradient,
}

/// The mean and variance a norm layer used for the items of one pass, per channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct NormStats {
    pub mean: Vec<f64>,
    pub variance: Vec<f64>,
}

/// What an engine copied at an [`Op::Snapshot`].
#[derive(Debug, Clone, PartialEq)]
pub struct GradientSnapshot {
    pub of: SnapshotOf,
    /// The buffer, in the layout's flat order.
    pub gradient: Vec<f64>,
    /// The statistics the first hidden layer's BatchNorm computed in the last pass over items
    /// (the reference pass for a reference snapshot); `None` without BatchNorm.
    pub batch_norm: Option<NormStats>,
}

/// The accumulated gradient so far, compared with the full-batch gradient at the same parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialSum {
    pub norm: f64,
    /// `|g - g_full| / |g_full|`.
    pub relative_error: f64,
    pub cosine: f64,
    /// The first hidden layer's weight gradient (`width x fan_in`, row-major).
    pub first_layer: Vec<f64>,
}

impl PartialSum {
    fn of(gradient: &[f64], reference: &[f64], layout: &Layout) -> Self {
        let (relative_error, cosine) = compare_gradients(gradient, reference);
        Self {
            norm: global_norm(gradient),
            relative_error,
            cosine,
            first_layer: first_layer_weights(gradient, layout),
        }
    }
}

fn first_layer_weights(values: &[f64], layout: &Layout) -> Vec<f64> {
    layout
        .hidden
        .first()
        .and_then(|layer| values.get(layer.weight..layer.weight + layer.width * layer.fan_in))
        .map(<[f64]>::to_vec)
        .unwrap_or_default()
}

/// One micro-batch of a traced step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MicroBatchTrace {
    /// Training example indices it holds.
    pub examples: Vec<usize>,
    /// Its items as points of the data plot: the first two inputs and the label.
    pub points: Vec<(f64, f64, u32)>,
    pub items: usize,
    /// The weight of each item's loss in the backward pass (1/(items·N), 1/items or 1/total).
    pub item_weight: f64,
    /// Whether zero_grad ran right before it (zero_grad placed inside the loop).
    pub zeroed_before: bool,
    /// Whether the partial sum was clipped right after it (clipping inside the loop).
    pub clipped_after: bool,
    /// Activation bytes held between its forward and backward (the engines' f32 values).
    pub activation_bytes: usize,
    /// The gradient buffer after its backward (and clipping, when clipped here).
    pub partial: PartialSum,
    pub batch_norm: Option<NormStats>,
}

/// One optimizer step of one run, micro-batch by micro-batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepTrace {
    /// The 0-based optimizer step.
    pub step: u64,
    pub learning_rate: f64,
    /// Whether the step started with zero_grad (false when zero_grad is forgotten or in the loop).
    pub zeroed_at_start: bool,
    pub micro_batches: Vec<MicroBatchTrace>,
    /// Clipping of the whole accumulated gradient before the optimizer step.
    pub clip_max_norm: Option<f64>,
    /// The gradient the optimizer applied (after any clipping).
    pub applied: PartialSum,
    /// The full-batch gradient at the step's parameters.
    pub full_batch_norm: f64,
    pub full_batch_first_layer: Vec<f64>,
    /// Inputs of each first-layer unit: the first-layer gradients are `units x fan_in`.
    pub first_layer_fan_in: usize,
    pub full_batch_norm_stats: Option<NormStats>,
    /// Activation bytes of one pass over the whole batch (what the full batch holds).
    pub full_batch_activation_bytes: usize,
}

/// Bytes per activation value in the engines that train in the Lab (f32).
const ENGINE_BYTES_PER_VALUE: usize = 4;

/// The step a trace describes: its plan, the run's regime and clipping, and how its items were split.
#[derive(Debug, Clone, Copy)]
pub struct TracedStep<'a> {
    pub step: u64,
    pub plan: &'a StepPlan,
    pub regime: &'a RegimeSpec,
    pub clip_max_norm: Option<f64>,
    /// Training example indices of each micro-batch.
    pub micro_batch_examples: &'a [Vec<usize>],
    /// The items of each micro-batch as points (first two inputs, label).
    pub micro_batch_points: &'a [Vec<(f64, f64, u32)>],
    pub micro_batch_items: &'a [usize],
}

impl StepTrace {
    /// Builds the trace of a step from the snapshots the engine took while executing its plan
    /// (one per `Op::Snapshot`, in order).
    pub fn new(traced: TracedStep<'_>, snapshots: &[GradientSnapshot], layout: &Layout) -> Result<Self, SimError> {
        let missing = || SimError::Shape("the engine's snapshots do not match the step's plan".into());
        let mut snapshots = snapshots.iter();
        let mut reference: Option<&GradientSnapshot> = None;
        let mut micro_batches = Vec::new();
        let mut applied = None;
        let mut accumulated: Option<(usize, f64)> = None;
        let clip_in_loop = traced.clip_max_norm.is_some() && traced.regime.clip == ClipPlacement::EveryMicroBatch;
        for op in &traced.plan.ops {
            match *op {
                Op::Accumulate {
                    micro_batch,
                    item_weight,
                } => accumulated = Some((micro_batch, item_weight)),
                Op::Snapshot(of) => {
                    let snapshot = snapshots.next().filter(|s| s.of == of).ok_or_else(missing)?;
                    if of == SnapshotOf::ReferenceGradient {
                        reference = Some(snapshot);
                        continue;
                    }
                    let reference = reference.ok_or_else(missing)?;
                    let partial = PartialSum::of(&snapshot.gradient, &reference.gradient, layout);
                    let Some((k, item_weight)) = accumulated.take() else {
                        applied = Some(partial);
                        continue;
                    };
                    let items = traced.micro_batch_items.get(k).copied().ok_or_else(missing)?;
                    micro_batches.push(MicroBatchTrace {
                        examples: traced.micro_batch_examples.get(k).cloned().unwrap_or_default(),
                        points: traced.micro_batch_points.get(k).cloned().unwrap_or_default(),
                        items,
                        item_weight,
                        zeroed_before: traced.regime.zero_grad == ZeroGradPlacement::EveryMicroBatch,
                        clipped_after: clip_in_loop,
                        activation_bytes: activation_memory(layout, items, ENGINE_BYTES_PER_VALUE).bytes,
                        partial,
                        batch_norm: snapshot.batch_norm.clone(),
                    });
                }
                _ => {}
            }
        }
        let (Some(reference), Some(applied)) = (reference, applied) else {
            return Err(missing());
        };
        let total_items: usize = traced.micro_batch_items.iter().sum();
        Ok(Self {
            step: traced.step,
            learning_rate: traced.plan.learning_rate,
            zeroed_at_start: traced.regime.zero_grad == ZeroGradPlacement::BeforeEachStep,
            micro_batches,
            clip_max_norm: traced.clip_max_norm.filter(|_| !clip_in_loop),
            applied,
            full_batch_norm: global_norm(&reference.gradient),
            full_batch_first_layer: first_layer_weights(&reference.gradient, layout),
            first_layer_fan_in: layout.hidden.first().map_or(0, |layer| layer.fan_in),
            full_batch_norm_stats: reference.batch_norm.clone(),
            full_batch_activation_bytes: activation_memory(layout, total_items, ENGINE_BYTES_PER_VALUE).bytes,
        })
    }
}
