//! Regimes: how one optimizer step over B examples is carried out. A regime turns into a plain
//! list of operations ([`StepPlan`]) that any engine executes, so the CPU and GPU engines cannot
//! disagree about what a regime means.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::optim::ScheduleSpec;
use super::trace::SnapshotOf;
use super::ConfigError;

/// How each micro-batch's loss is scaled before backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LossNormalization {
    /// `loss = mean over the micro-batch / N`: the usual `loss / accumulation_steps`. Correct when all
    /// micro-batches hold the same number of items; a mean of means otherwise.
    #[default]
    MeanOfMicroBatchMeans,
    /// `loss = mean over the micro-batch`, not divided by N: the gradient is N times too large.
    Unscaled,
    /// `loss = sum over the micro-batch / items in the whole optimizer step`: always the full-batch mean.
    TotalItemCount,
}

/// Where `zero_grad` is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ZeroGradPlacement {
    /// Once per optimizer step, before its first micro-batch (correct).
    #[default]
    BeforeEachStep,
    /// Never: gradients of every earlier step keep adding up.
    Forgotten,
    /// Before every micro-batch: only the last micro-batch's gradient survives.
    EveryMicroBatch,
}

/// Where gradient clipping happens (when the run clips at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ClipPlacement {
    /// Once, on the accumulated gradient, right before the optimizer step (correct).
    #[default]
    AfterAccumulation,
    /// After every micro-batch's backward, on the partial sum accumulated so far.
    EveryMicroBatch,
}

/// How often the learning-rate scheduler is stepped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerPlacement {
    /// Once per optimizer step (correct).
    #[default]
    EveryOptimizerStep,
    /// Once per micro-batch: the schedule runs N times too fast.
    EveryMicroBatch,
}

pub const MAX_MICRO_BATCHES: usize = 256;

/// How a run turns B examples into one optimizer step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegimeSpec {
    /// N; 1 means one full batch.
    pub micro_batches: usize,
    pub loss: LossNormalization,
    pub zero_grad: ZeroGradPlacement,
    pub clip: ClipPlacement,
    pub scheduler: SchedulerPlacement,
    /// Allow B not divisible by N (micro-batches then differ in size by one example).
    pub allow_uneven_split: bool,
}

impl Default for RegimeSpec {
    fn default() -> Self {
        Self {
            micro_batches: 1,
            loss: LossNormalization::default(),
            zero_grad: ZeroGradPlacement::default(),
            clip: ClipPlacement::default(),
            scheduler: SchedulerPlacement::default(),
            allow_uneven_split: false,
        }
    }
}

impl RegimeSpec {
    pub fn full_batch() -> Self {
        Self::default()
    }

    pub fn accumulate(micro_batches: usize) -> Self {
        Self {
            micro_batches,
            ..Self::default()
        }
    }

    pub fn with_loss(self, loss: LossNormalization) -> Self {
        Self { loss, ..self }
    }

    pub fn validate(&self, field: &str, batch_size: usize) -> Result<(), ConfigError> {
        let n = self.micro_batches;
        if n == 0 || n > MAX_MICRO_BATCHES {
            return Err(ConfigError::new(
                format!("{field}.micro_batches"),
                format!("must be between 1 and {MAX_MICRO_BATCHES}, got {n}"),
            ));
        }
        if n > batch_size {
            return Err(ConfigError::new(
                format!("{field}.micro_batches"),
                format!("{n} micro-batches cannot split a batch of {batch_size} examples"),
            ));
        }
        if !batch_size.is_multiple_of(n) && !self.allow_uneven_split {
            return Err(ConfigError::new(
                format!("{field}.micro_batches"),
                format!("batch size {batch_size} is not divisible by {n}; choose another N or set allow_uneven_split"),
            ));
        }
        Ok(())
    }

    /// Splits `batch_size` examples into N contiguous ranges whose sizes differ by at most one.
    pub fn split_examples(&self, batch_size: usize) -> Vec<Range<usize>> {
        let n = self.micro_batches.max(1);
        let (base, extra) = (batch_size / n, batch_size % n);
        let mut start = 0;
        (0..n)
            .map(|k| {
                let len = base + usize::from(k < extra);
                let range = start..start + len;
                start += len;
                range
            })
            .collect()
    }
}

/// One operation of an optimizer step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// Metrics only: the full-batch gradient at the current parameters, into a separate buffer,
    /// without touching running statistics.
    ReferenceGradient,
    /// Metrics only, in place of [`Op::ReferenceGradient`]: the micro-batch just accumulated
    /// was the whole batch, after zero_grad and before any clipping, so the gradient buffer
    /// holds the full-batch gradient; it is copied as the reference instead of computed again
    /// by a second pass that repeats the same arithmetic (tests hold that they agree bit for bit).
    GradientAsReference,
    ZeroGrad,
    /// Forward and backward of one micro-batch; the gradient of `item_weight * sum of item losses`
    /// is added to the gradient buffer.
    Accumulate {
        micro_batch: usize,
        item_weight: f64,
    },
    ClipGradNorm {
        max_norm: f64,
    },
    /// Metrics only: norm of the gradient about to be applied, and its agreement with the reference.
    RecordGradient,
    OptimizerStep {
        learning_rate: f64,
    },
    /// Metrics only: test loss and accuracy in evaluation mode.
    Evaluate,
    /// Step-through only: a copy of a gradient buffer (and of the first BatchNorm layer's
    /// statistics of the last pass) for the step's [`super::trace::StepTrace`].
    Snapshot(SnapshotOf),
}

impl Op {
    /// Whether the operation is part of training itself, as in any training loop; the others
    /// are the Lab's measurements.
    pub fn is_training(&self) -> bool {
        match self {
            Op::ZeroGrad | Op::Accumulate { .. } | Op::ClipGradNorm { .. } | Op::OptimizerStep { .. } => true,
            Op::ReferenceGradient | Op::GradientAsReference | Op::RecordGradient | Op::Evaluate | Op::Snapshot(_) => {
                false
            }
        }
    }
}

/// Which metric operations a plan includes (they cost extra passes, except a full batch's
/// reference gradient, which is a copy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricOps {
    pub reference_gradient: bool,
    pub evaluate: bool,
    /// Snapshots of the gradient buffer after each micro-batch (with the reference gradient
    /// they are compared with), only while the step-through view is open.
    pub snapshots: bool,
}

impl MetricOps {
    pub const ALL: MetricOps = MetricOps {
        reference_gradient: true,
        evaluate: true,
        snapshots: false,
    };
    pub const NONE: MetricOps = MetricOps {
        reference_gradient: false,
        evaluate: false,
        snapshots: false,
    };
}

/// The operations of one optimizer step, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct StepPlan {
    pub ops: Vec<Op>,
    pub learning_rate: f64,
}

impl StepPlan {
    /// The operations an engine times as the optimizer step's own work: from the first
    /// training operation to the last (the optimizer step), so the Lab's reference gradient and
    /// evaluation before and after it are left out; the gradient-norm reduction (and, with the
    /// step-through open, the snapshot copies) between them are small and counted.
    pub fn training_span(&self) -> Option<std::ops::RangeInclusive<usize>> {
        let first = self.ops.iter().position(Op::is_training)?;
        let last = self.ops.iter().rposition(Op::is_training)?;
        Some(first..=last)
    }
}

/// Builds the plan of optimizer step `step` (0-based) for micro-batches holding `items` items each.
pub fn plan_step(
    regime: &RegimeSpec,
    clip_max_norm: Option<f64>,
    schedule: &ScheduleSpec,
    step: u64,
    items: &[usize],
    metrics: MetricOps,
) -> StepPlan {
    let n = items.len();
    let total_items: usize = items.iter().sum();
    let scheduler_steps = match regime.scheduler {
        SchedulerPlacement::EveryOptimizerStep => step,
        SchedulerPlacement::EveryMicroBatch => step * n as u64,
    };
    let learning_rate = schedule.learning_rate(scheduler_steps);
    let mut ops = Vec::with_capacity(if metrics.snapshots { 4 * n + 7 } else { 3 * n + 5 });
    // One micro-batch of every item, accumulated onto zeroed gradients, is the full-batch
    // gradient: the reference is copied from it (the step-through keeps its separate pass, which
    // it snapshots before the training pass).
    let gradient_is_reference =
        n == 1 && regime.zero_grad != ZeroGradPlacement::Forgotten && metrics.reference_gradient && !metrics.snapshots;
    if (metrics.reference_gradient || metrics.snapshots) && !gradient_is_reference {
        ops.push(Op::ReferenceGradient);
    }
    if metrics.snapshots {
        ops.push(Op::Snapshot(SnapshotOf::ReferenceGradient));
    }
    if regime.zero_grad == ZeroGradPlacement::BeforeEachStep {
        ops.push(Op::ZeroGrad);
    }
    for (micro_batch, &count) in items.iter().enumerate() {
        if regime.zero_grad == ZeroGradPlacement::EveryMicroBatch {
            ops.push(Op::ZeroGrad);
        }
        let item_weight = match regime.loss {
            LossNormalization::MeanOfMicroBatchMeans => 1.0 / (count.max(1) * n) as f64,
            LossNormalization::Unscaled => 1.0 / count.max(1) as f64,
            LossNormalization::TotalItemCount => 1.0 / total_items.max(1) as f64,
        };
        ops.push(Op::Accumulate {
            micro_batch,
            item_weight,
        });
        if gradient_is_reference {
            ops.push(Op::GradientAsReference);
        }
        if let (Some(max_norm), ClipPlacement::EveryMicroBatch) = (clip_max_norm, regime.clip) {
            ops.push(Op::ClipGradNorm { max_norm });
        }
        if metrics.snapshots {
            ops.push(Op::Snapshot(SnapshotOf::Gradient));
        }
    }
    if let (Some(max_norm), ClipPlacement::AfterAccumulation) = (clip_max_norm, regime.clip) {
        ops.push(Op::ClipGradNorm { max_norm });
    }
    if metrics.snapshots {
        // The gradient the optimizer applies.
        ops.push(Op::Snapshot(SnapshotOf::Gradient));
    }
    ops.push(Op::RecordGradient);
    ops.push(Op::OptimizerStep { learning_rate });
    if metrics.evaluate {
        ops.push(Op::Evaluate);
    }
    StepPlan { ops, learning_rate }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(plan: &StepPlan) -> Vec<f64> {
        plan.ops
            .iter()
            .filter_map(|op| match op {
                Op::Accumulate { item_weight, .. } => Some(*item_weight),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn split_is_contiguous_and_near_even() {
        let regime = RegimeSpec {
            micro_batches: 4,
            allow_uneven_split: true,
            ..RegimeSpec::default()
        };
        let ranges = regime.split_examples(10);
        assert_eq!(ranges, vec![0..3, 3..6, 6..8, 8..10]);
    }

    #[test]
    fn the_timed_span_runs_from_the_first_training_operation_to_the_optimizer_step() {
        let schedule = ScheduleSpec::default();
        let regime = RegimeSpec::accumulate(2);
        for metric_ops in [MetricOps::ALL, MetricOps::NONE] {
            let plan = plan_step(&regime, Some(1.0), &schedule, 0, &[4, 4], metric_ops);
            let span = plan.training_span().unwrap();
            assert!(plan.ops[*span.start()].is_training() && plan.ops[*span.end()].is_training());
            assert!(matches!(plan.ops[*span.end()], Op::OptimizerStep { .. }));
            assert!(plan.ops[..*span.start()].iter().all(|op| !op.is_training()));
            assert!(plan.ops[*span.end() + 1..].iter().all(|op| !op.is_training()));
            let outside: Vec<_> = plan
                .ops
                .iter()
                .enumerate()
                .filter(|(i, _)| !span.contains(i))
                .map(|(_, op)| *op)
                .collect();
            let expected = if metric_ops == MetricOps::ALL {
                vec![Op::ReferenceGradient, Op::Evaluate]
            } else {
                vec![]
            };
            assert_eq!(outside, expected, "the Lab's measurements are outside the span");
        }
        let measurements = StepPlan {
            ops: vec![Op::ReferenceGradient, Op::Evaluate],
            learning_rate: 0.1,
        };
        assert_eq!(measurements.training_span(), None);
    }

    #[test]
    fn loss_weights_per_normalization() {
        let schedule = ScheduleSpec::default();
        let items = [2, 6];
        let weights_for = |loss| {
            let regime = RegimeSpec::accumulate(2).with_loss(loss);
            weights(&plan_step(&regime, None, &schedule, 0, &items, MetricOps::NONE))
        };
        assert_eq!(
            weights_for(LossNormalization::MeanOfMicroBatchMeans),
            vec![0.25, 1.0 / 12.0]
        );
        assert_eq!(weights_for(LossNormalization::Unscaled), vec![0.5, 1.0 / 6.0]);
        assert_eq!(weights_for(LossNormalization::TotalItemCount), vec![0.125, 0.125]);
    }

    #[test]
    fn pitfalls_move_zero_grad_clip_and_scheduler() {
        let schedule = ScheduleSpec::WarmupCosine {
            learning_rate: 1.0,
            warmup_steps: 10,
            total_steps: 100,
            final_fraction: 0.0,
        };
        let correct = RegimeSpec::accumulate(4);
        let plan = plan_step(&correct, Some(1.0), &schedule, 2, &[8; 4], MetricOps::NONE);
        let zero_grads = |p: &StepPlan| p.ops.iter().filter(|op| **op == Op::ZeroGrad).count();
        let clips = |p: &StepPlan| p.ops.iter().filter(|op| matches!(op, Op::ClipGradNorm { .. })).count();
        assert_eq!(zero_grads(&plan), 1);
        assert_eq!(plan.ops[0], Op::ZeroGrad);
        assert_eq!(clips(&plan), 1);
        assert_eq!(plan.learning_rate, schedule.learning_rate(2));

        let forgotten = RegimeSpec {
            zero_grad: ZeroGradPlacement::Forgotten,
            ..correct
        };
        assert_eq!(
            zero_grads(&plan_step(&forgotten, None, &schedule, 2, &[8; 4], MetricOps::NONE)),
            0
        );
        let every = RegimeSpec {
            zero_grad: ZeroGradPlacement::EveryMicroBatch,
            ..correct
        };
        assert_eq!(
            zero_grads(&plan_step(&every, None, &schedule, 2, &[8; 4], MetricOps::NONE)),
            4
        );
        let clip_each = RegimeSpec {
            clip: ClipPlacement::EveryMicroBatch,
            ..correct
        };
        assert_eq!(
            clips(&plan_step(
                &clip_each,
                Some(1.0),
                &schedule,
                2,
                &[8; 4],
                MetricOps::NONE
            )),
            4
        );
        let fast = RegimeSpec {
            scheduler: SchedulerPlacement::EveryMicroBatch,
            ..correct
        };
        let plan = plan_step(&fast, None, &schedule, 2, &[8; 4], MetricOps::NONE);
        assert_eq!(plan.learning_rate, schedule.learning_rate(8));
        assert_ne!(plan.learning_rate, schedule.learning_rate(2));
    }

    #[test]
    fn snapshots_follow_the_reference_each_micro_batch_and_the_last_clip() {
        let schedule = ScheduleSpec::default();
        let snapshots = MetricOps {
            snapshots: true,
            ..MetricOps::NONE
        };
        let regime = RegimeSpec {
            clip: ClipPlacement::AfterAccumulation,
            ..RegimeSpec::accumulate(2)
        };
        let plan = plan_step(&regime, Some(1.0), &schedule, 0, &[4, 4], snapshots);
        let reference = Op::Snapshot(SnapshotOf::ReferenceGradient);
        let gradient = Op::Snapshot(SnapshotOf::Gradient);
        let accumulate = |micro_batch| Op::Accumulate {
            micro_batch,
            item_weight: 0.125,
        };
        assert_eq!(
            plan.ops,
            vec![
                Op::ReferenceGradient,
                reference,
                Op::ZeroGrad,
                accumulate(0),
                gradient,
                accumulate(1),
                gradient,
                Op::ClipGradNorm { max_norm: 1.0 },
                gradient,
                Op::RecordGradient,
                Op::OptimizerStep { learning_rate: 0.1 },
            ]
        );
        let without = plan_step(&regime, Some(1.0), &schedule, 0, &[4, 4], MetricOps::NONE);
        assert!(!without.ops.iter().any(|op| matches!(op, Op::Snapshot(_))));
    }

    #[test]
    fn a_full_batch_copies_its_gradient_as_the_reference_and_other_plans_compute_it() {
        let schedule = ScheduleSpec::default();
        let references = |plan: &StepPlan| {
            plan.ops
                .iter()
                .filter(|op| matches!(op, Op::ReferenceGradient | Op::GradientAsReference))
                .copied()
                .collect::<Vec<_>>()
        };
        let full = RegimeSpec::full_batch();
        let plan = plan_step(&full, Some(1.0), &schedule, 0, &[8], MetricOps::ALL);
        let accumulate = Op::Accumulate {
            micro_batch: 0,
            item_weight: 0.125,
        };
        // Copied right after the accumulation, before clipping changes the gradient.
        assert_eq!(
            plan.ops[..4],
            [
                Op::ZeroGrad,
                accumulate,
                Op::GradientAsReference,
                Op::ClipGradNorm { max_norm: 1.0 }
            ]
        );
        assert_eq!(references(&plan), [Op::GradientAsReference]);
        let computed = [Op::ReferenceGradient];
        let forgotten = RegimeSpec {
            zero_grad: ZeroGradPlacement::Forgotten,
            ..full
        };
        // Earlier steps' gradients are in the buffer: it is not the full-batch gradient.
        let plan = plan_step(&forgotten, None, &schedule, 1, &[8], MetricOps::ALL);
        assert_eq!(references(&plan), computed);
        let plan = plan_step(&RegimeSpec::accumulate(2), None, &schedule, 0, &[4, 4], MetricOps::ALL);
        assert_eq!(references(&plan), computed);
        let traced = MetricOps {
            snapshots: true,
            ..MetricOps::ALL
        };
        // The step-through shows the reference pass before the training pass.
        assert_eq!(
            references(&plan_step(&full, None, &schedule, 0, &[8], traced)),
            computed
        );
        let evaluation_only = MetricOps {
            reference_gradient: false,
            ..MetricOps::ALL
        };
        for metrics in [MetricOps::NONE, evaluation_only] {
            assert!(references(&plan_step(&full, None, &schedule, 0, &[8], metrics)).is_empty());
        }
    }

    #[test]
    fn invalid_splits_are_refused_with_the_field() {
        let err = RegimeSpec::accumulate(3).validate("runs[1].regime", 256).unwrap_err();
        assert_eq!(err.field, "runs[1].regime.micro_batches");
        assert!(err.message.contains("not divisible"));
        assert!(RegimeSpec::accumulate(300).validate("r", 256).is_err());
        assert!(RegimeSpec::accumulate(0).validate("r", 256).is_err());
        assert!(RegimeSpec::accumulate(4).validate("r", 256).is_ok());
    }
}
