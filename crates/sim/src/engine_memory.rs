//! The bytes each of the Lab's engines allocates to train one micro-batch: not an estimate but
//! the sizes of the buffers the engine creates, so that the planner can plan the Lab's own
//! network exactly (`gradlab plan --model lab-mlp`) and the memory preset's budget control can
//! pick N from it. Tests hold both functions to the engines' real allocations: the CPU engine's
//! workspace after a micro-batch's forward and backward (`sim::reference`), and the WebGPU
//! engine's training workspace (`tests/gpu_vs_cpu.rs`).

use serde::Serialize;

use super::model::Layout;
use super::reference::forward::NormGeometry;

/// Which of the Lab's engines a figure is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LabEngine {
    /// The CPU engine in f32 (in the page's worker).
    Cpu,
    /// The WebGPU engine (f32 storage buffers).
    #[default]
    Webgpu,
}

impl LabEngine {
    pub const ALL: [LabEngine; 2] = [LabEngine::Cpu, LabEngine::Webgpu];
}

/// Bytes of an f32 value, and of a label (u32), on both engines.
const VALUE_BYTES: u64 = 4;

/// Bytes `engine` allocates to train one micro-batch of `rows` rows of a network laid out as
/// `layout`: the activations it keeps for the backward pass and the backward pass's own buffers.
/// Parameters, gradients and optimizer states are not included (the planner counts them apart).
pub fn micro_batch_bytes(engine: LabEngine, layout: &Layout, rows: usize) -> u64 {
    match engine {
        LabEngine::Cpu => cpu_workspace_values(layout, rows) as u64 * VALUE_BYTES,
        LabEngine::Webgpu => webgpu_workspace_bytes(layout, rows),
    }
}

/// Values (f32, and one u32 label per row) of the CPU engine's workspace after one micro-batch's
/// forward and backward pass: the input and labels; per hidden layer its linear output and
/// activation (with a norm also the normalized values, the norm's output and three statistics
/// per normalized set); logits, probabilities and their gradient; the backward pass's gradient
/// buffers (`da` as wide as the widest layer input above the first, `du` and `dz` as the widest
/// layer); and the linear layers' transposed, lane-padded weights (the largest layer's).
fn cpu_workspace_values(layout: &Layout, rows: usize) -> usize {
    const PADDING: usize = super::reference::linear::PADDING;
    let padded = |outputs: usize| outputs.div_ceil(PADDING) * PADDING;
    let classes = layout.classes;
    let mut values = rows * layout.input_dim + rows;
    let mut da = rows * layout.output_fan_in;
    let mut widest = 0;
    let mut scratch = padded(classes) * (layout.output_fan_in + 1);
    for (l, layer) in layout.hidden.iter().enumerate() {
        let n = rows * layer.width;
        values += 2 * n;
        if layer.norm_scale.is_some() {
            values += 2 * n + 3 * NormGeometry::new(layout.spec.norm, rows, layer.width).sets;
        }
        widest = widest.max(n);
        if l > 0 {
            da = da.max(rows * layer.fan_in);
        }
        scratch = scratch.max(padded(layer.width) * (layer.fan_in + 1));
    }
    values + 3 * rows * classes + da + 2 * widest + scratch
}

/// Bytes of the WebGPU engine's training workspace of `rows` rows: the same activations as the
/// CPU engine's (one buffer of one value where a layer has no norm), probabilities and their
/// gradient, a correct-prediction flag per row, `da`, `du` and `dz` as wide as the widest
/// layer; each storage buffer holds at least one value and whole vec4s.
fn webgpu_workspace_bytes(layout: &Layout, rows: usize) -> u64 {
    let buffer = |len: usize| len.max(1).next_multiple_of(4) as u64 * VALUE_BYTES;
    let norm = layout.spec.norm;
    let has_norm = norm.has_parameters();
    let mut bytes = 0;
    for layer in &layout.hidden {
        let n = rows * layer.width;
        let stats = 3 * NormGeometry::new(norm, rows, layer.width).sets.max(1);
        let (xhat, normed, stats) = if has_norm { (n, n, stats) } else { (1, 1, 1) };
        bytes += buffer(n) + buffer(xhat) + buffer(normed) + buffer(n) + buffer(stats);
    }
    let logits = rows * layout.classes;
    let widest = rows * layout.widest();
    // Probabilities, their gradient, the row-loss slot (the training workspace's losses go to
    // the step's buffer), the flags, then da, du and dz.
    bytes + 2 * buffer(logits) + buffer(1) + buffer(rows) + 3 * buffer(widest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelSpec;

    #[test]
    fn the_memory_presets_network_on_the_gpu_takes_1820_bytes_a_row() {
        // 2-64-64-3 without a norm: 455 f32 values a row, and seven one-value buffers of 16 bytes.
        let layout = Layout::new(&ModelSpec::default(), 2, 3);
        for rows in [4, 16, 64, 256] {
            assert_eq!(
                micro_batch_bytes(LabEngine::Webgpu, &layout, rows),
                1820 * rows as u64 + 112
            );
        }
    }

    /// A fresh CPU engine trains one micro-batch; its workspace then holds exactly the bytes
    /// stated, for every norm, several depths and widths, and row counts that are not multiples
    /// of anything.
    #[test]
    fn the_cpu_figure_is_the_cpu_engines_allocation() {
        use crate::data::Split;
        use crate::model::{Activation, Norm};
        use crate::optim::OptimizerSpec;
        use crate::reference::ReferenceEngine;
        let norms = [Norm::None, Norm::batch_norm(), Norm::layer_norm(), Norm::group_norm(4)];
        let shapes: [&[usize]; 3] = [&[64, 64], &[8], &[12, 40, 4]];
        for norm in norms {
            for hidden in shapes {
                let spec = ModelSpec {
                    hidden: hidden.to_vec(),
                    activation: Activation::Tanh,
                    norm,
                };
                let (input_dim, classes) = (3, 5);
                let layout = Layout::new(&spec, input_dim, classes);
                let (params, buffers) = layout.initialize(7);
                for rows in [2, 7, 33, 100] {
                    let test = Split {
                        inputs: vec![0.5; input_dim],
                        labels: vec![1],
                        example_offsets: vec![0, 1],
                    };
                    let mut engine =
                        ReferenceEngine::<f32>::new(layout.clone(), &params, &buffers, OptimizerSpec::default(), &test)
                            .unwrap();
                    let inputs: Vec<f64> = (0..rows * input_dim).map(|i| (i as f64 * 0.37).sin()).collect();
                    let labels: Vec<u32> = (0..rows).map(|i| (i % classes) as u32).collect();
                    engine.accumulate_items(&inputs, &labels, 1.0 / rows as f64);
                    assert_eq!(
                        engine.workspace_bytes(),
                        micro_batch_bytes(LabEngine::Cpu, &layout, rows),
                        "{norm:?}, hidden {hidden:?}, {rows} rows"
                    );
                }
            }
        }
    }

    #[test]
    fn the_memory_presets_network_on_the_cpu_takes_1840_bytes_a_row_and_its_transposed_weights() {
        // 460 values a row; the 64 x 64 layer's weights, transposed with the bias, 64 x 65.
        let layout = Layout::new(&ModelSpec::default(), 2, 3);
        for rows in [1, 37, 256] {
            assert_eq!(
                micro_batch_bytes(LabEngine::Cpu, &layout, rows),
                1840 * rows as u64 + 4 * 64 * 65
            );
        }
    }

    #[test]
    fn both_engines_grow_with_the_micro_batch() {
        let layout = Layout::new(&ModelSpec::default(), 2, 3);
        for engine in LabEngine::ALL {
            let sizes: Vec<u64> = (1..300).map(|r| micro_batch_bytes(engine, &layout, r)).collect();
            assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{engine:?}");
        }
    }
}
