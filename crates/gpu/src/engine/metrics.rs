//! A step's metrics on the GPU: the scalar slots its reductions fill, the history they are
//! copied into after each step, and the bulk readback that turns them into [`StepRecord`]s
//! (with the steps' GPU timestamps, where the adapter offers them).

use crate::context::GpuContext;
use crate::kernels;
use crate::ops::{Recorder, TimestampSlots};
use crate::readback::{read_f32_and_timestamps, Queries};
use crate::GpuError;
use gradlab_sim::metrics::StepRecord;

/// Scalar slots of one step's metrics.
pub(super) mod slot {
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
pub(super) const HISTORY_STEPS: usize = 256;

/// A step submitted whose metrics are not read back yet: what its record needs besides the
/// scalars (which metric operations ran, how many clippings to average).
#[derive(Debug)]
pub(super) struct PendingStep {
    pub(super) record: StepRecord,
    pub(super) has_reference: bool,
    pub(super) evaluated: bool,
    pub(super) clips: u32,
    /// Whether the GPU wrote both timestamps of the step's training span.
    pub(super) timed: bool,
}

/// Where a step's metrics are reduced and kept until they are read back, and what the records
/// of the steps not read back yet need besides.
#[derive(Debug)]
pub(super) struct MetricHistory {
    pub(super) scalars: wgpu::Buffer,
    /// The losses of every item of a step, summed in order once per run of neighbouring
    /// micro-batches (once per step for every plan the regimes make).
    pub(super) step_row_loss: wgpu::Buffer,
    /// The partial sums of a reduction (one vec4 per invocation of reduce_partials.wgsl).
    pub(super) reduce_partials: wgpu::Buffer,
    history: wgpu::Buffer,
    /// Host-side parts of the records whose GPU parts are still in `history`.
    pending: Vec<PendingStep>,
    /// Each pending step's start and end timestamps, where the adapter offers them.
    timestamps: Option<StepTimestamps>,
    /// Training time of the steps read back since the last drain.
    step_times_ms: Vec<f64>,
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

impl MetricHistory {
    /// The buffers for steps of up to `step_items` items.
    pub(super) fn new(context: &GpuContext, step_items: usize) -> Self {
        Self {
            scalars: context.zeroed_buffer("scalars", slot::COUNT),
            step_row_loss: context.zeroed_buffer("step row loss", step_items),
            reduce_partials: context.zeroed_buffer("reduce partials", 4 * kernels::REDUCE_PARTIALS_COUNT),
            history: context.zeroed_buffer("metric history", slot::COUNT * HISTORY_STEPS),
            pending: Vec::new(),
            timestamps: StepTimestamps::new(context),
            step_times_ms: Vec::new(),
        }
    }

    pub(super) fn bytes(&self) -> u64 {
        [&self.scalars, &self.step_row_loss, &self.reduce_partials, &self.history]
            .iter()
            .map(|b| b.size())
            .sum()
    }

    /// Refuses another step while the history is full.
    pub(super) fn check_room(&self) -> Result<(), GpuError> {
        if self.pending.len() >= HISTORY_STEPS {
            return Err(GpuError::Shape(format!(
                "read the metrics back at least every {HISTORY_STEPS} steps"
            )));
        }
        Ok(())
    }

    /// Records the copy of the step's scalars into the history, after the pending steps'.
    pub(super) fn record_copy(&self, recorder: &mut Recorder) {
        let offset = (self.pending.len() * slot::COUNT * 4) as u64;
        recorder.copy(&self.scalars, &self.history, offset, (slot::COUNT * 4) as u64);
    }

    /// Where the step being encoded writes its two timestamps.
    pub(super) fn timestamp_slots(&self) -> Option<TimestampSlots<'_>> {
        self.timestamps.as_ref().map(|t| TimestampSlots {
            set: &t.set,
            first: 2 * self.pending.len() as u32,
        })
    }

    /// Keeps what the record of the step just encoded needs, until it is read back.
    pub(super) fn push(&mut self, step: PendingStep) {
        self.pending.push(step);
    }

    /// Milliseconds of training work of each step read back since the last call, by the GPU's
    /// timestamps (the span between the step's marks); empty without timestamp queries.
    pub(super) fn take_step_times(&mut self) -> Vec<f64> {
        std::mem::take(&mut self.step_times_ms)
    }

    /// Reads back the metrics of every step submitted since the last call, in one transfer;
    /// evaluations averaged over the `test_rows` items of the test set.
    pub(super) async fn read_records(
        &mut self,
        context: &GpuContext,
        test_rows: usize,
    ) -> Result<Vec<StepRecord>, GpuError> {
        if self.pending.is_empty() {
            return Ok(Vec::new());
        }
        // The metrics and the steps' timestamps come back in one mapping.
        let queries = self.timestamps.as_ref().map(|t| Queries {
            set: &t.set,
            count: 2 * self.pending.len() as u32,
            resolve: &t.resolve,
        });
        let (values, ticks) =
            read_f32_and_timestamps(context, &self.history, self.pending.len() * slot::COUNT, queries).await?;
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
            .map(|(pending, scalars)| pending.into_record(scalars, test_rows))
            .collect();
        Ok(records)
    }
}

impl PendingStep {
    /// The step's record, completed from its scalar slots.
    fn into_record(self, scalars: &[f32], test_rows: usize) -> StepRecord {
        let Self {
            mut record,
            has_reference,
            evaluated,
            clips,
            timed: _,
        } = self;
        let get = |i: u32| f64::from(scalars[i as usize]);
        record.train_loss = get(slot::LOSS_SUM) / record.items.max(1) as f64;
        // Sums of squares are never negative; no `max(0.0)` here, which would turn a NaN
        // (a diverged run) into a gradient norm of 0.
        record.grad_norm = get(slot::GRAD_SQ).sqrt();
        if has_reference {
            record.grad_reference_norm = Some(get(slot::REFERENCE_SQ).sqrt());
            let reference_norm = get(slot::REFERENCE_SQ).sqrt().max(f64::MIN_POSITIVE);
            record.grad_relative_error = Some(get(slot::DIFF_SQ).sqrt() / reference_norm);
            record.grad_cosine = Some(get(slot::DOT) / (record.grad_norm * reference_norm).max(f64::MIN_POSITIVE));
        }
        if clips > 0 {
            record.clip_factor = Some(get(slot::CLIP_FACTOR_SUM) / f64::from(clips));
            record.grad_norm_before_clip = Some(get(slot::CLIP_SQ).sqrt());
        }
        if evaluated {
            let rows = test_rows.max(1) as f64;
            record.test_loss = Some(get(slot::TEST_LOSS_SUM) / rows);
            record.test_accuracy = Some(get(slot::TEST_CORRECT) / rows);
        }
        record
    }
}
