//! Reductions into scalar slots (gradient norms, comparisons against the reference gradient,
//! losses): a parallel half and a serial half that adds in a fixed order.

#[allow(
    unused_imports,
    reason = "each family takes what it needs of the shared kernel definitions"
)]
use super::*;
use crate::ops::{check, GpuOps, Recorder};
use crate::GpuError;

/// This family's place in [`FAMILIES`].
const FAMILY: usize = 4;

/// What a reduction sums (reduce_partials.wgsl, then reduce_serial.wgsl).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ReduceMode {
    /// `sum a^2` into `slot`.
    SumOfSquares = 1,
    /// `sum a^2, sum a b, sum b^2, sum (a - b)^2` into `slot .. slot + 4` (a gradient against
    /// its reference in one pass).
    Comparison = 2,
    /// `sum a, sum b` into `slot, slot + 1` (test loss and correct predictions in one pass).
    PairSums = 3,
    /// `sum a` into `slot`, element by element in order from `offset` (the training loss, so
    /// that micro-batches add in the full batch's sequence).
    InOrderSum = 4,
}

impl ReduceMode {
    /// Scalar slots the mode writes.
    pub fn slots(self) -> u32 {
        match self {
            Self::SumOfSquares | Self::InOrderSum => 1,
            Self::Comparison => 4,
            Self::PairSums => 2,
        }
    }

    /// The mode a kernel parameter names, if any.
    pub fn from_code(code: u32) -> Option<Self> {
        [Self::SumOfSquares, Self::Comparison, Self::PairSums, Self::InOrderSum]
            .into_iter()
            .find(|mode| *mode as u32 == code)
    }

    /// Whether the sum is serial from the start (no parallel partials first).
    pub fn is_serial(self) -> bool {
        self == Self::InOrderSum
    }
}

/// Invocations of reduce_partials.wgsl: the partial sums reduce_serial.wgsl adds in a tree.
pub const REDUCE_PARTIALS_COUNT: usize = 256;

kernel_params! {
    /// A reduction into scalar slots (reduce_partials.wgsl and reduce_serial.wgsl).
    pub struct ReduceParams {
        pub len: u32,
        /// A [`ReduceMode`].
        pub mode: u32,
        pub slot: u32,
        /// 1 to add to the slot instead of replacing it.
        pub accumulate: u32,
        /// The first element an in-order sum reads.
        pub offset: u32,
        /// Rows of a step's loss that a tree reduction's serial half also adds, in order, from
        /// `loss_offset` of the buffer it then reads, into `loss_slot` (0: none).
        pub loss_rows: u32,
        pub loss_offset: u32,
        pub loss_slot: u32,
    }
}

impl ReduceParams {
    pub fn new(len: usize, mode: ReduceMode, slot: u32, accumulate: bool) -> Self {
        Self {
            len: len as u32,
            mode: mode as u32,
            slot,
            accumulate: u32::from(accumulate),
            ..Self::default()
        }
    }
}

pub const REDUCE_PARTIALS: Kernel<ReduceParams, 3> = Kernel::new(
    KernelId::new(FAMILY, 0),
    "reduce_partials",
    concat!(
        include_str!("shared/reduce_terms.wgsl"),
        include_str!("reduce_partials.wgsl")
    ),
    64,
    &[R, R, RW],
);

pub const REDUCE_SERIAL: Kernel<ReduceParams, 3> = Kernel::new(
    KernelId::new(FAMILY, 1),
    "reduce_serial",
    include_str!("reduce_serial.wgsl"),
    1,
    &[R, RW, RW],
);

impl GpuOps {
    /// Reduces `params.len` elements of `a` (and `b`, as the mode says) into `scalars` from
    /// `params.slot`: a tree mode's parallel half into `partials`
    /// ([`REDUCE_PARTIALS_COUNT`] vec4s), then the serial half; an in-order sum from
    /// `params.offset`. (The MLP engine records its own, with the optimizer step fused.)
    pub fn reduce(
        &self,
        recorder: &mut Recorder,
        params: ReduceParams,
        a: &wgpu::Buffer,
        b: &wgpu::Buffer,
        partials: &wgpu::Buffer,
        scalars: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let mode = ReduceMode::from_code(params.mode)
            .ok_or_else(|| GpuError::Shape(format!("no reduction has mode code {}", params.mode)))?;
        let (serial, slots) = (mode.is_serial(), u64::from(mode.slots()));
        let end = u64::from(params.offset) + u64::from(params.len);
        check(a, end, "reduced values")?;
        if slots > 1 && !serial {
            check(b, end, "reduced values (second operand)")?;
        }
        check(scalars, u64::from(params.slot) + slots, "scalar slots")?;
        if params.loss_rows > 0 {
            check(scalars, u64::from(params.loss_slot) + 1, "scalar slots (loss)")?;
            let loss_end = u64::from(params.loss_offset) + u64::from(params.loss_rows);
            check(a, loss_end, "row losses")?;
        }
        if !serial {
            if params.offset > 0 {
                return Err(GpuError::Shape("a tree reduction starts at the first element".into()));
            }
            check(partials, 4 * REDUCE_PARTIALS_COUNT as u64, "reduction partials")?;
            let invocations = REDUCE_PARTIALS_COUNT as u32;
            self.run(recorder, &REDUCE_PARTIALS, &params, [a, b, partials], invocations)?;
        }
        self.run_one_group(recorder, &REDUCE_SERIAL, &params, [a, partials, scalars])
    }
}

/// The family's kernels, each at its `KernelId::index`.
pub(super) const KERNELS: &[KernelInfo] = &[REDUCE_PARTIALS.info, REDUCE_SERIAL.info];
