//! Recording the step's reductions into the scalar slots: the gradient's norm (with the
//! reference's comparison, and the optimizer step fused into its parallel half where one
//! follows), clipping's norm, the test set's loss and accuracy, and the in-order sum of the
//! step's losses.

use super::metrics::slot;
use super::GpuEngine;
use crate::kernels::{self, GradientNormAndOptimizerParams, OptimizerParams, ReduceMode, ReduceParams};
use crate::ops::Recorder;
use crate::GpuError;

impl GpuEngine {
    /// Reduces `a` (and `b`) into the scalar slots from `slot` on, as `mode` says.
    #[allow(
        clippy::too_many_arguments,
        reason = "the reduction's operands, mode and destination"
    )]
    pub(super) fn reduce(
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
    pub(super) fn reduce_gradient(
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
    pub(super) fn sum_losses(
        &self,
        recorder: &mut Recorder,
        rows: Option<std::ops::Range<usize>>,
    ) -> Result<(), GpuError> {
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
