//! Recording a backward pass: per linear layer one dispatch adds its parameter gradients and
//! computes the gradient at the input of the activation below (the activation's derivative
//! fused in; two dispatches for shapes that are not whole vec4s; the first layer has no input
//! gradient, and the output layer's forward dispatch wrote its input gradient where
//! [`GpuEngine::output_writes_input_gradient`]: then the output layer's parameter gradients
//! share the first layer's dispatch, the last of the pass, which the next micro-batch's first
//! forward dispatch may share in turn); a norm layer adds one dispatch (BatchNorm-, LayerNorm-
//! and GroupNorm-shaped sets of whole vec4s) or two for other shapes (its scale and shift
//! gradients, then its input gradient).
//! The gradients between layers alternate between two workspace buffers, so that no dispatch
//! reads the buffer it writes.

use super::workspace::{Source, Workspace};
use super::GpuEngine;
use crate::kernels::FirstAndOutputGradients;
use crate::kernels::{ActivationCode, LinearBackwardParams, NormParams};
use crate::ops::Recorder;
use crate::GpuError;

impl GpuEngine {
    /// Backward of the weighted loss after a training forward (which left the gradient of the
    /// logits in `ws.dlogits`); adds the parameter gradients into `target`. With `defer_last`,
    /// the first and output layers' parameter gradients, where they share the pass's last
    /// dispatch, are returned instead of recorded: the next micro-batch's forward records them
    /// (with its first dispatch where it can); nothing may read `target` before.
    pub(super) fn backward(
        &self,
        recorder: &mut Recorder,
        ws: &Workspace,
        source: Source<'_>,
        target: &wgpu::Buffer,
        defer_last: bool,
    ) -> Result<Option<FirstAndOutputGradients>, GpuError> {
        let rows = source.rows as u32;
        let activation = ActivationCode::from(self.layout.spec.activation) as u32;
        let hidden = &self.layout.hidden;
        let activation_input = |l: usize| {
            let buffers = &ws.layers[l];
            if hidden[l].norm_scale.is_some() {
                &buffers.normed
            } else {
                &buffers.z
            }
        };
        let top = hidden.len() - 1;
        let params = LinearBackwardParams {
            rows,
            fan_in: self.layout.output_fan_in as u32,
            fan_out: self.layout.classes as u32,
            weight_offset: self.layout.output_weight as u32,
            bias_offset: self.layout.output_bias as u32,
            x_offset: 0,
            activation_below: activation,
            pad0: 0,
        };
        let output = params;
        let (top_input, logit_gradient) = (&ws.layers[top].a, &ws.dlogits);
        // Where the output dispatch wrote the top layer's input gradient, the output layer's
        // parameter gradients wait for the first layer's, to share its dispatch (nothing in
        // between writes the activations or logit gradient they read).
        let output_parameters_last = self.output_writes_input_gradient();
        if !output_parameters_last {
            self.ops.linear_backward(
                recorder,
                params,
                top_input,
                logit_gradient,
                target,
                &self.parameters.values,
                activation_input(top),
                ws.activation_gradient(top),
            )?;
        }
        for (l, layer) in hidden.iter().enumerate().rev() {
            let buffers = &ws.layers[l];
            let mut dy = ws.activation_gradient(l);
            if let (Some(scale), Some(shift)) = (layer.norm_scale, layer.norm_shift) {
                let norm = self.layout.spec.norm;
                let params = NormParams::for_layer(norm, rows as usize, layer.width, scale, shift);
                self.ops.norm_backward(
                    recorder,
                    params,
                    dy,
                    &buffers.xhat,
                    &buffers.stats,
                    &self.parameters.values,
                    target,
                    &ws.dz,
                )?;
                dy = &ws.dz;
            }
            let (x, x_offset) = ws.layer_input(source, l, layer.fan_in);
            let params = LinearBackwardParams {
                rows,
                fan_in: layer.fan_in as u32,
                fan_out: layer.width as u32,
                weight_offset: layer.weight as u32,
                bias_offset: layer.bias as u32,
                x_offset: x_offset as u32,
                activation_below: activation,
                pad0: 0,
            };
            // The first layer's input is the data: no input gradient.
            if l > 0 {
                self.ops.linear_backward(
                    recorder,
                    params,
                    x,
                    dy,
                    target,
                    &self.parameters.values,
                    activation_input(l - 1),
                    ws.activation_gradient(l - 1),
                )?;
            } else if output_parameters_last {
                let last = FirstAndOutputGradients {
                    first: params,
                    output,
                    x: x.clone(),
                    dy: dy.clone(),
                    a_top: top_input.clone(),
                    dlogits: logit_gradient.clone(),
                    grads: target.clone(),
                };
                if defer_last {
                    return Ok(Some(last));
                }
                last.record(&self.ops, recorder)?;
            } else {
                self.ops.linear_parameter_gradient(recorder, params, x, dy, target)?;
            }
        }
        Ok(None)
    }
}
