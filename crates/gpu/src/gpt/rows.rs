//! A micro-batch of the tiny GPT as token rows: one row per input position, example after
//! example, with no padding (as the CPU engine lays them out), four u32 per row in the
//! residual family's [`TokenRowField`] order, and each row's target.

use crate::context::GpuContext;
use crate::kernels::{TokenRowField, TOKEN_ROW_FIELDS};
use crate::GpuError;
use gradlab_sim::gpt::spec::GptLayout;

/// A micro-batch's rows, built on the host. Its fields are private: the kernels index
/// embeddings and probabilities by them unchecked, so only [`TokenRows::new`] makes one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRows {
    /// [`TOKEN_ROW_FIELDS`] u32 per row.
    table: Vec<u32>,
    targets: Vec<u32>,
    /// Values of every example's attention probabilities (`heads · len²` each).
    probs_len: usize,
}

impl TokenRows {
    /// The rows of `examples` for a model of `layout`. Refuses an id outside the vocabulary and
    /// an example longer than the context plus its last target (the checks the kernels rely
    /// on: they index embeddings and probabilities by these values unchecked).
    pub fn new(layout: &GptLayout, examples: &[&[u32]]) -> Result<Self, GpuError> {
        let heads = layout.spec.heads;
        let mut rows = Self::default();
        for (e, example) in examples.iter().enumerate() {
            let len = example.len().saturating_sub(1);
            if len > layout.spec.context {
                return Err(GpuError::Shape(format!(
                    "example {e} has {len} input tokens, more than the context of {}",
                    layout.spec.context
                )));
            }
            if let Some(id) = example.iter().find(|&&id| id as usize >= layout.vocab) {
                return Err(GpuError::Shape(format!(
                    "example {e} holds token {id}, outside the vocabulary of {}",
                    layout.vocab
                )));
            }
            for position in 0..len {
                let mut row = [0u32; TOKEN_ROW_FIELDS];
                row[TokenRowField::Token as usize] = example[position];
                row[TokenRowField::Position as usize] = position as u32;
                row[TokenRowField::Length as usize] = len as u32;
                row[TokenRowField::Probs as usize] = rows.probs_len as u32;
                rows.table.extend_from_slice(&row);
                rows.targets.push(example[position + 1]);
            }
            rows.probs_len += heads * len * len;
        }
        Ok(rows)
    }

    pub fn count(&self) -> usize {
        self.targets.len()
    }

    /// [`TOKEN_ROW_FIELDS`] u32 per row, as the kernels read them.
    pub fn table(&self) -> &[u32] {
        &self.table
    }

    /// Each row's target token.
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// Values of every example's attention probabilities, per layer.
    pub fn probs_len(&self) -> usize {
        self.probs_len
    }
}

/// Device buffers that hold one micro-batch's rows: a step of N micro-batches records N
/// slots, each written before the step's commands are submitted.
#[derive(Debug)]
pub struct RowSlot {
    pub(super) table: wgpu::Buffer,
    pub(super) targets: wgpu::Buffer,
    capacity: usize,
}

impl RowSlot {
    /// A slot for up to `capacity` rows.
    pub fn new(context: &GpuContext, capacity: usize) -> Self {
        Self {
            table: context.zeroed_buffer("token rows", TOKEN_ROW_FIELDS * capacity),
            targets: context.zeroed_buffer("targets", capacity),
            capacity,
        }
    }

    /// Writes `rows` into the slot (queued: it lands before the next submission).
    pub fn write(&self, context: &GpuContext, rows: &TokenRows) -> Result<(), GpuError> {
        if rows.count() > self.capacity {
            return Err(GpuError::OverCapacity {
                what: "micro-batch of token rows",
                items: rows.count(),
                capacity: self.capacity,
            });
        }
        if rows.count() > 0 {
            context
                .queue
                .write_buffer(&self.table, 0, bytemuck::cast_slice(&rows.table));
            context
                .queue
                .write_buffer(&self.targets, 0, bytemuck::cast_slice(&rows.targets));
        }
        Ok(())
    }
}
