//! Recording a forward pass: per hidden layer one fused linear + bias + activation dispatch (with
//! a norm layer, the linear dispatch writes z and the norm's dispatch applies the activation and,
//! for BatchNorm in training, updates the running statistics; in evaluation BatchNorm normalizes
//! with its running statistics, also with the activation in its dispatch),
//! then one dispatch for the output layer, softmax and cross-entropy that also writes the
//! gradient of the logits when training and, where the activation's output gives its
//! derivative (not GELU), the gradient at the input of the top hidden layer's activation:
//! the backward then starts one dispatch later. In such a training pass the top hidden layer's
//! dispatch and the output layer's are one where the layer fits
//! ([`GpuOps::fuses_top_layer_and_output`]: no norm, whole vec4s, at most 64 wide, at most four
//! classes; not where a micro-batch's gradients wait for this layer's dispatch); that dispatch
//! leaves the layer's z, the probabilities and the correctness unwritten, which nothing reads.

use super::workspace::{RowLosses, Source, Workspace};
use super::GpuEngine;
use crate::kernels::FirstAndOutputGradients;
use crate::kernels::{self, ActivationCode, BatchNormEvalParams, LinearForwardParams, NormParams, OutputParams};
use crate::ops::{GpuOps, Recorder};
use crate::GpuError;
use gradlab_sim::model::Norm;
use gradlab_sim::reference::forward::PassMode;

impl GpuEngine {
    /// Forward pass over `source` into `ws`; leaves the probabilities and correctness (not in a
    /// training pass whose top layer shares the output layer's dispatch) and, in training mode,
    /// the gradient of the weighted loss with respect to the logits in `ws`, and the rows'
    /// losses in `losses`. `earlier_gradients`, the last dispatch of the previous micro-batch's
    /// backward, is recorded first, in the first layer's dispatch where it fits.
    pub(super) fn forward(
        &self,
        recorder: &mut Recorder,
        ws: &Workspace,
        source: Source<'_>,
        mode: PassMode,
        losses: RowLosses<'_>,
        mut earlier_gradients: Option<FirstAndOutputGradients>,
    ) -> Result<(), GpuError> {
        let rows = source.rows;
        if rows > ws.rows {
            return Err(GpuError::Shape(format!(
                "{rows} rows exceed a workspace of {}",
                ws.rows
            )));
        }
        let norm = self.layout.spec.norm;
        let activation = ActivationCode::from(self.layout.spec.activation);
        let top = self.layout.hidden.len() - 1;
        let (gradient_weight, write_gradient) = match mode {
            PassMode::Train { .. } => (losses.gradient_weight, 1),
            PassMode::Eval => (0.0, 0),
        };
        let write_input_gradient = write_gradient == 1 && self.output_writes_input_gradient();
        let output = OutputParams {
            rows: rows as u32,
            classes: self.layout.classes as u32,
            fan_in: self.layout.output_fan_in as u32,
            weight_offset: self.layout.output_weight as u32,
            bias_offset: self.layout.output_bias as u32,
            label_offset: source.first_row as u32,
            gradient_weight,
            write_gradient,
            loss_offset: losses.offset as u32,
            write_input_gradient: u32::from(write_input_gradient),
            activation_below: activation as u32,
            ..OutputParams::default()
        };
        for (l, layer) in self.layout.hidden.iter().enumerate() {
            let buffers = &ws.layers[l];
            let (x, x_offset) = ws.layer_input(source, l, layer.fan_in);
            let n = (rows * layer.width) as u32;
            let norm_parameters = layer.norm_scale.zip(layer.norm_shift);
            let params = LinearForwardParams {
                rows: rows as u32,
                fan_in: layer.fan_in as u32,
                fan_out: layer.width as u32,
                weight_offset: layer.weight as u32,
                bias_offset: layer.bias as u32,
                x_offset: x_offset as u32,
                // With a norm layer the activation comes after it: the norm's dispatch applies it.
                activation: if norm_parameters.is_some() {
                    ActivationCode::Identity
                } else {
                    activation
                } as u32,
                pad0: 0,
            };
            // A training pass's top layer shares the output layer's dispatch where it fits (not
            // with a norm layer, nor where the gradients of a micro-batch before are pending).
            let fuses_output = l == top
                && norm_parameters.is_none()
                && earlier_gradients.is_none()
                && GpuOps::fuses_top_layer_and_output(&params, &output);
            if fuses_output {
                return self.ops.top_layer_and_output(
                    recorder,
                    params,
                    output,
                    x,
                    &self.parameters.values,
                    source.labels,
                    &buffers.a,
                    losses.buffer,
                    &ws.dlogits,
                    ws.activation_gradient(top),
                );
            }
            match earlier_gradients.take() {
                Some(gradients) => self.ops.first_and_output_gradients_then_forward(
                    recorder,
                    &gradients,
                    params,
                    x,
                    &self.parameters.values,
                    &buffers.z,
                    &buffers.a,
                )?,
                None => {
                    self.ops
                        .linear_forward(recorder, params, x, &self.parameters.values, &buffers.z, &buffers.a)?
                }
            }
            let Some((scale, shift)) = norm_parameters else {
                continue;
            };
            match (mode, norm, layer.running_stats) {
                (PassMode::Eval, Norm::BatchNorm { eps, .. }, Some(stats)) => {
                    let params = BatchNormEvalParams {
                        len: n,
                        width: layer.width as u32,
                        gamma_offset: scale as u32,
                        beta_offset: shift as u32,
                        running_offset: stats as u32,
                        eps: eps as f32,
                        activation: activation as u32,
                        pad0: 0,
                    };
                    self.ops.run(
                        recorder,
                        &kernels::BATCH_NORM_EVAL,
                        &params,
                        [
                            &buffers.z,
                            &self.parameters.values,
                            &self.parameters.running,
                            &buffers.a,
                        ],
                        n,
                    )?;
                }
                _ => {
                    let mut params = NormParams {
                        activation: activation as u32,
                        ..NormParams::for_layer(norm, rows, layer.width, scale, shift)
                    };
                    // A training step's forward updates BatchNorm's running statistics in the
                    // same dispatch (not the reference pass nor the metrics).
                    if let (
                        PassMode::Train {
                            update_running_stats: true,
                        },
                        Norm::BatchNorm { momentum, .. },
                        Some(stats),
                    ) = (mode, norm, layer.running_stats)
                    {
                        params.update_running = 1;
                        params.running_offset = stats as u32;
                        params.momentum = momentum as f32;
                    }
                    self.ops.norm_forward(
                        recorder,
                        params,
                        &buffers.z,
                        &self.parameters.values,
                        &buffers.xhat,
                        &buffers.normed,
                        &buffers.stats,
                        &buffers.a,
                        &self.parameters.running,
                    )?;
                }
            }
        }
        // The first layer took them above (every network has a hidden layer: the output layer
        // reads the top one); gradients are never dropped, whatever a later change does.
        if let Some(gradients) = earlier_gradients {
            gradients.record(&self.ops, recorder)?;
        }
        self.ops.output_cross_entropy(
            recorder,
            output,
            &ws.layers[top].a,
            &self.parameters.values,
            source.labels,
            &ws.probs,
            losses.buffer,
            &ws.row_correct,
            &ws.dlogits,
            ws.activation_gradient(top),
        )
    }
}
