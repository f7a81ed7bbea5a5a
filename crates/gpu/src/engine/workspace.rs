//! Where a run's values live on the GPU: its parameter-sized buffers, a step's items and the test
//! set, and the two activation workspaces (sized by [`Capacity`]).

use super::GpuEngine;
use crate::context::GpuContext;
use gradlab_sim::data::Split;
use gradlab_sim::model::{Layout, Norm};
use gradlab_sim::reference::forward::NormGeometry;

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

/// The activation workspaces: the training one holds one micro-batch (that is the memory
/// accumulation saves); the metrics one holds the full batch or the test set, for the reference
/// gradient and evaluation, and is reported separately.
#[derive(Debug)]
pub(super) struct Workspaces {
    pub(super) capacity: Capacity,
    pub(super) train: Workspace,
    pub(super) metrics: Workspace,
}

impl Workspaces {
    pub(super) fn new(context: &GpuContext, layout: &Layout, capacity: Capacity) -> Self {
        let metrics_rows = capacity.step_items.max(capacity.test_items);
        Self {
            capacity,
            train: Workspace::new(context, layout, capacity.micro_batch_items, "train", false),
            metrics: Workspace::new(context, layout, metrics_rows, "metrics", true),
        }
    }

    /// Whether a step's micro-batches are smaller than the step (training accumulates).
    pub(super) fn accumulates(&self) -> bool {
        self.capacity.micro_batch_items < self.capacity.step_items
    }
}

#[derive(Debug)]
pub(super) struct LayerBuffers {
    pub(super) z: wgpu::Buffer,
    pub(super) xhat: wgpu::Buffer,
    pub(super) normed: wgpu::Buffer,
    pub(super) a: wgpu::Buffer,
    pub(super) stats: wgpu::Buffer,
}

#[derive(Debug)]
pub(super) struct Workspace {
    pub(super) rows: usize,
    pub(super) layers: Vec<LayerBuffers>,
    pub(super) probs: wgpu::Buffer,
    pub(super) dlogits: wgpu::Buffer,
    pub(super) row_loss: wgpu::Buffer,
    pub(super) row_correct: wgpu::Buffer,
    pub(super) da: wgpu::Buffer,
    pub(super) du: wgpu::Buffer,
    pub(super) dz: wgpu::Buffer,
    pub(super) bytes: u64,
}

fn stats_len(norm: Norm, rows: usize, width: usize) -> usize {
    3 * NormGeometry::new(norm, rows, width).sets.max(1)
}

impl Workspace {
    /// Its own row-loss buffer, from row 0 (the metrics workspace's).
    pub(super) fn own_losses(&self) -> RowLosses<'_> {
        RowLosses::at(&self.row_loss, 0)
    }

    /// Where the gradient at the input of hidden layer `l`'s activation goes: the layers
    /// alternate between two buffers, so that no backward dispatch reads the buffer it writes.
    pub(super) fn activation_gradient(&self, l: usize) -> &wgpu::Buffer {
        if l.is_multiple_of(2) {
            &self.da
        } else {
            &self.du
        }
    }

    /// The input of hidden layer `l` (of `fan_in` values per row) and the offset of its first
    /// value: the data for the first layer, the activation of the layer below otherwise.
    pub(super) fn layer_input<'a>(&'a self, source: Source<'a>, l: usize, fan_in: usize) -> (&'a wgpu::Buffer, usize) {
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
pub(super) struct Source<'a> {
    pub(super) inputs: &'a wgpu::Buffer,
    pub(super) labels: &'a wgpu::Buffer,
    pub(super) first_row: usize,
    pub(super) rows: usize,
}

/// Where a forward pass writes its rows' losses (row 0's at `offset`), and the weight of their
/// sum in the gradient a training pass takes at the logits: it differentiates
/// `gradient_weight * sum CE` (an evaluation takes no gradient).
#[derive(Clone, Copy)]
pub(super) struct RowLosses<'a> {
    pub(super) buffer: &'a wgpu::Buffer,
    pub(super) offset: usize,
    pub(super) gradient_weight: f32,
}

impl<'a> RowLosses<'a> {
    pub(super) fn at(buffer: &'a wgpu::Buffer, offset: usize) -> Self {
        Self {
            buffer,
            offset,
            gradient_weight: 0.0,
        }
    }

    pub(super) fn weighted(self, gradient_weight: f32) -> Self {
        Self {
            gradient_weight,
            ..self
        }
    }
}

/// A run's parameter-sized buffers: the values, their gradient, the full-batch reference
/// gradient and the optimizer's two moments; and the non-trainable running statistics.
#[derive(Debug)]
pub(super) struct ParameterBuffers {
    pub(super) values: wgpu::Buffer,
    pub(super) gradients: wgpu::Buffer,
    pub(super) reference: wgpu::Buffer,
    pub(super) running: wgpu::Buffer,
    pub(super) first_moment: wgpu::Buffer,
    pub(super) second_moment: wgpu::Buffer,
}

/// Items on the GPU: inputs, labels and how many rows they hold.
#[derive(Debug)]
pub(super) struct ItemBuffers {
    pub(super) inputs: wgpu::Buffer,
    pub(super) labels: wgpu::Buffer,
    pub(super) rows: usize,
}

impl ParameterBuffers {
    /// The buffers of `layout`, starting from `values` and the running statistics `running`.
    pub(super) fn new(context: &GpuContext, layout: &Layout, values: &[f64], running: &[f64]) -> Self {
        let p = layout.parameter_count;
        Self {
            values: context.storage_buffer("params", &to_f32(values)),
            gradients: context.zeroed_buffer("grads", p),
            reference: context.zeroed_buffer("reference grads", p),
            running: context.storage_buffer("running stats", &to_f32(running)),
            first_moment: context.zeroed_buffer("optimizer first moment", p),
            second_moment: context.zeroed_buffer("optimizer second moment", p),
        }
    }

    pub(super) fn bytes(&self) -> u64 {
        [
            &self.values,
            &self.gradients,
            &self.reference,
            &self.running,
            &self.first_moment,
            &self.second_moment,
        ]
        .iter()
        .map(|b| b.size())
        .sum()
    }
}

impl ItemBuffers {
    /// Room for a step of `rows` items of `input_dim` values, filled per step.
    pub(super) fn for_steps(context: &GpuContext, input_dim: usize, rows: usize) -> Self {
        Self {
            inputs: context.zeroed_buffer("batch inputs", rows * input_dim),
            labels: labels_buffer(context, "batch labels", &[], rows),
            rows,
        }
    }

    /// The items of `split`, uploaded once.
    pub(super) fn of_split(context: &GpuContext, split: &Split) -> Self {
        Self {
            inputs: context.storage_buffer("test inputs", &to_f32(&split.inputs)),
            labels: labels_buffer(context, "test labels", &split.labels, split.item_count()),
            rows: split.item_count(),
        }
    }

    /// All of them, from the first row.
    pub(super) fn source(&self) -> Source<'_> {
        self.rows_from(0, self.rows)
    }

    /// `rows` of them from `first_row`.
    pub(super) fn rows_from(&self, first_row: usize, rows: usize) -> Source<'_> {
        Source {
            inputs: &self.inputs,
            labels: &self.labels,
            first_row,
            rows,
        }
    }

    pub(super) fn bytes(&self) -> u64 {
        self.inputs.size() + self.labels.size()
    }
}

pub(super) fn labels_buffer(context: &GpuContext, label: &str, labels: &[u32], len: usize) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    let mut padded = labels.to_vec();
    padded.resize(len.max(1), 0);
    context.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(&padded),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
    })
}

pub(super) fn to_f32(values: &[f64]) -> Vec<f32> {
    values.iter().map(|&v| v as f32).collect()
}

impl GpuEngine {
    /// Bytes of the training activation workspace (one micro-batch).
    pub fn activation_bytes(&self) -> u64 {
        self.workspaces.train.bytes
    }

    /// Bytes of the metrics workspace (full batch / test set; only for comparisons).
    pub fn metrics_workspace_bytes(&self) -> u64 {
        self.workspaces.metrics.bytes
    }

    /// Every byte this engine allocated on the GPU.
    pub fn allocated_bytes(&self) -> u64 {
        self.parameters.bytes()
            + self.batch.bytes()
            + self.test.bytes()
            + self.metric.bytes()
            + self.workspaces.train.bytes
            + self.workspaces.metrics.bytes
    }
}
