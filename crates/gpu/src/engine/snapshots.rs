//! Gradient snapshots for the step-through: a step's `Op::Snapshot`s copy the gradient (and the
//! first BatchNorm layer's batch statistics) into slots of one buffer, read back in one transfer.

use super::GpuEngine;
use crate::ops::Recorder;
use crate::readback::read_f32;
use crate::GpuError;
use gradlab_sim::regime::{Op, StepPlan};
use gradlab_sim::trace::{GradientSnapshot, NormStats, SnapshotOf};

/// The snapshot buffer, allocated when a plan first asks for snapshots, and which buffer each of
/// the last step's slots holds.
#[derive(Debug, Default)]
pub(super) struct Snapshots {
    /// The buffer and how many slots it has room for.
    buffer: Option<(wgpu::Buffer, usize)>,
    taken: Vec<SnapshotOf>,
}

impl GpuEngine {
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
    pub(super) fn snapshot_buffer(&mut self, plan: &StepPlan) -> Option<wgpu::Buffer> {
        let count = plan.ops.iter().filter(|op| matches!(op, Op::Snapshot(_))).count();
        if count == 0 {
            return None;
        }
        self.snapshots.taken.clear();
        let slot_len = self.snapshot_slot_len();
        match &self.snapshots.buffer {
            Some((buffer, slots)) if *slots >= count => Some(buffer.clone()),
            _ => {
                let buffer = self.context.zeroed_buffer("gradient snapshots", count * slot_len);
                self.snapshots.buffer = Some((buffer.clone(), count));
                Some(buffer)
            }
        }
    }

    /// Records the copy of `of` (and the BatchNorm statistics of the workspace that computed it)
    /// into the next slot of `destination`, the buffer [`Self::snapshot_buffer`] gave.
    pub(super) fn record_snapshot(&mut self, recorder: &mut Recorder, destination: &wgpu::Buffer, of: SnapshotOf) {
        let (source, workspace) = match of {
            SnapshotOf::ReferenceGradient => (&self.parameters.reference, &self.workspaces.metrics),
            SnapshotOf::Gradient => (&self.parameters.gradients, &self.workspaces.train),
        };
        let p = self.layout.parameter_count;
        let base = (self.snapshots.taken.len() * self.snapshot_slot_len() * 4) as u64;
        recorder.copy(source, destination, base, (p * 4) as u64);
        if let (Some(sets), Some(layer)) = (self.batch_norm_sets(), workspace.layers.first()) {
            // The stats buffer starts with the means, then the variances.
            recorder.copy(&layer.stats, destination, base + (p * 4) as u64, (2 * sets * 4) as u64);
        }
        self.snapshots.taken.push(of);
    }

    /// What the last step's `Op::Snapshot`s copied, in one transfer; empty when it took none.
    pub async fn read_snapshots(&mut self) -> Result<Vec<GradientSnapshot>, GpuError> {
        let Some((buffer, _)) = &self.snapshots.buffer else {
            return Ok(Vec::new());
        };
        if self.snapshots.taken.is_empty() {
            return Ok(Vec::new());
        }
        let (p, slot_len) = (self.layout.parameter_count, self.snapshot_slot_len());
        let values = read_f32(&self.context, buffer, self.snapshots.taken.len() * slot_len).await?;
        let sets = self.batch_norm_sets();
        let snapshots = self
            .snapshots
            .taken
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
}
