use super::{backward, forward};
use crate::sim::backend::{StepBatch, TrainingBackend};
use crate::sim::data::Split;
use crate::sim::metrics::{compare_gradients, StepRecord};
use crate::sim::model::{Layout, Norm};
use crate::sim::optim::{clip_by_global_norm, global_norm, OptimizerSpec, OptimizerState};
use crate::sim::real::Real;
use crate::sim::regime::{Op, StepPlan};
use crate::sim::SimError;

/// Values kept between forward and backward for one hidden layer.
#[derive(Debug, Clone, Default)]
struct LayerCache<T> {
    /// Linear output.
    z: Vec<T>,
    /// Normalized values (with a norm).
    xhat: Vec<T>,
    /// Norm output, the activation's input (with a norm; otherwise `z` is).
    normed: Vec<T>,
    /// Activation output.
    a: Vec<T>,
    mean: Vec<T>,
    variance: Vec<T>,
    rstd: Vec<T>,
}

#[derive(Debug, Clone, Default)]
struct Workspace<T> {
    input: Vec<T>,
    labels: Vec<u32>,
    layers: Vec<LayerCache<T>>,
    logits: Vec<T>,
    probs: Vec<T>,
    dlogits: Vec<T>,
    da: Vec<T>,
    du: Vec<T>,
    dz: Vec<T>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Batch statistics; running statistics updated when `update_running_stats`.
    Train { update_running_stats: bool },
    /// Running statistics.
    Eval,
}

/// Which buffer a backward pass adds into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GradTarget {
    Training,
    Reference,
}

/// The CPU reference engine for one run.
#[derive(Debug, Clone)]
pub struct ReferenceEngine<T: Real> {
    layout: Layout,
    params: Vec<T>,
    grads: Vec<T>,
    reference: Vec<T>,
    has_reference: bool,
    buffers: Vec<T>,
    optimizer: OptimizerState<T>,
    test_inputs: Vec<T>,
    test_labels: Vec<u32>,
    ws: Workspace<T>,
    records: Vec<StepRecord>,
}

fn convert<T: Real>(values: &[f64]) -> Vec<T> {
    values.iter().map(|&v| T::from_f64(v)).collect()
}

fn to_f64<T: Real>(values: &[T]) -> Vec<f64> {
    values.iter().map(|v| v.to_f64()).collect()
}

fn ensure_len<T: Real>(buffer: &mut Vec<T>, len: usize) {
    if buffer.len() < len {
        buffer.resize(len, T::ZERO);
    }
}

impl<T: Real> ReferenceEngine<T> {
    pub fn new(
        layout: Layout,
        initial_params: &[f64],
        initial_buffers: &[f64],
        optimizer: OptimizerSpec,
        test: &Split,
    ) -> Result<Self, SimError> {
        if initial_params.len() != layout.parameter_count || initial_buffers.len() != layout.buffer_count {
            return Err(SimError::Shape(format!(
                "expected {} parameters and {} buffers, got {} and {}",
                layout.parameter_count,
                layout.buffer_count,
                initial_params.len(),
                initial_buffers.len()
            )));
        }
        let count = layout.parameter_count;
        let ws = Workspace {
            layers: vec![LayerCache::default(); layout.hidden.len()],
            ..Workspace::default()
        };
        Ok(Self {
            params: convert(initial_params),
            grads: vec![T::ZERO; count],
            reference: vec![T::ZERO; count],
            has_reference: false,
            buffers: convert(initial_buffers),
            optimizer: OptimizerState::new(optimizer, count),
            test_inputs: convert(&test.inputs),
            test_labels: test.labels.clone(),
            ws,
            records: Vec::new(),
            layout,
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Loads `rows` items into the workspace input.
    fn load(&mut self, inputs: &[f64], labels: &[u32]) {
        self.ws.input.clear();
        self.ws.input.extend(inputs.iter().map(|&v| T::from_f64(v)));
        self.ws.labels.clear();
        self.ws.labels.extend_from_slice(labels);
    }

    /// Forward pass over the workspace input; leaves logits and probabilities in the workspace and
    /// returns the summed cross-entropy.
    fn forward(&mut self, mode: Mode) -> T {
        let layout = &self.layout;
        let rows = self.ws.labels.len();
        let Workspace {
            input,
            labels,
            layers,
            logits,
            probs,
            ..
        } = &mut self.ws;
        for (l, layer) in layout.hidden.iter().enumerate() {
            let (before, rest) = layers.split_at_mut(l);
            let x: &[T] = if l == 0 { input } else { &before[l - 1].a };
            let cache = &mut rest[0];
            let w = layer.width;
            let n = rows * w;
            ensure_len(&mut cache.z, n);
            ensure_len(&mut cache.a, n);
            forward::linear(
                x,
                rows,
                layer.fan_in,
                &self.params[layer.weight..],
                &self.params[layer.bias..],
                w,
                &mut cache.z,
            );
            let norm = layout.spec.norm;
            if let (Some(scale), Some(shift)) = (layer.norm_scale, layer.norm_shift) {
                ensure_len(&mut cache.normed, n);
                let gamma = &self.params[scale..scale + w];
                let beta = &self.params[shift..shift + w];
                match (mode, norm, layer.running_stats) {
                    (Mode::Eval, Norm::BatchNorm { eps, .. }, Some(stats)) => {
                        let (mean, var) = self.buffers[stats..stats + 2 * w].split_at(w);
                        forward::batch_norm_eval(eps, &cache.z[..n], w, mean, var, gamma, beta, &mut cache.normed);
                    }
                    _ => {
                        let geometry = forward::NormGeometry::new(norm, rows, w);
                        ensure_len(&mut cache.xhat, n);
                        ensure_len(&mut cache.mean, geometry.sets);
                        ensure_len(&mut cache.variance, geometry.sets);
                        ensure_len(&mut cache.rstd, geometry.sets);
                        forward::norm_train(
                            geometry,
                            norm.eps(),
                            &cache.z,
                            w,
                            gamma,
                            beta,
                            &mut cache.xhat,
                            &mut cache.normed,
                            &mut cache.mean,
                            &mut cache.variance,
                            &mut cache.rstd,
                        );
                        if let (
                            Mode::Train {
                                update_running_stats: true,
                            },
                            Norm::BatchNorm { momentum, .. },
                            Some(stats),
                        ) = (mode, norm, layer.running_stats)
                        {
                            let (running_mean, running_var) = self.buffers[stats..stats + 2 * w].split_at_mut(w);
                            forward::update_running_stats(
                                momentum,
                                rows,
                                &cache.mean[..w],
                                &cache.variance[..w],
                                running_mean,
                                running_var,
                            );
                        }
                    }
                }
                forward::activation(layout.spec.activation, &cache.normed[..n], &mut cache.a[..n]);
            } else {
                forward::activation(layout.spec.activation, &cache.z[..n], &mut cache.a[..n]);
            }
        }
        let classes = layout.classes;
        ensure_len(logits, rows * classes);
        ensure_len(probs, rows * classes);
        let last = layers.last().map_or(&input[..], |c| &c.a[..]);
        forward::linear(
            last,
            rows,
            layout.output_fan_in,
            &self.params[layout.output_weight..],
            &self.params[layout.output_bias..],
            classes,
            logits,
        );
        forward::softmax_cross_entropy(&logits[..rows * classes], classes, labels, probs)
    }

    /// Backward of `item_weight * sum CE` after a training-mode forward; adds into `target`.
    fn backward(&mut self, item_weight: T, target: GradTarget) {
        let layout = &self.layout;
        let rows = self.ws.labels.len();
        let grads = match target {
            GradTarget::Training => &mut self.grads,
            GradTarget::Reference => &mut self.reference,
        };
        let Workspace {
            input,
            labels,
            layers,
            probs,
            dlogits,
            da,
            du,
            dz,
            ..
        } = &mut self.ws;
        let classes = layout.classes;
        ensure_len(dlogits, rows * classes);
        backward::softmax_cross_entropy(&probs[..rows * classes], classes, labels, item_weight, dlogits);
        let last = layers.last().map_or(&input[..], |c| &c.a[..]);
        ensure_len(da, rows * layout.output_fan_in);
        {
            let (dw, rest) = grads[layout.output_weight..].split_at_mut(classes * layout.output_fan_in);
            backward::linear(
                last,
                rows,
                layout.output_fan_in,
                &self.params[layout.output_weight..],
                classes,
                &dlogits[..rows * classes],
                dw,
                &mut rest[..classes],
                Some(&mut da[..]),
            );
        }
        for (l, layer) in layout.hidden.iter().enumerate().rev() {
            let w = layer.width;
            let n = rows * w;
            let cache = &layers[l];
            ensure_len(du, n);
            ensure_len(dz, n);
            let activation_input = if layer.norm_scale.is_some() {
                &cache.normed
            } else {
                &cache.z
            };
            backward::activation(
                layout.spec.activation,
                &activation_input[..n],
                &cache.a[..n],
                &da[..n],
                &mut du[..n],
            );
            let dy: &[T] = if let (Some(scale), Some(_)) = (layer.norm_scale, layer.norm_shift) {
                let geometry = forward::NormGeometry::new(layout.spec.norm, rows, w);
                let (dgamma, dbeta) = grads[scale..scale + 2 * w].split_at_mut(w);
                backward::norm(
                    geometry,
                    w,
                    &cache.xhat[..n],
                    &cache.rstd,
                    &self.params[scale..scale + w],
                    &du[..n],
                    dgamma,
                    dbeta,
                    &mut dz[..n],
                );
                &dz[..n]
            } else {
                &du[..n]
            };
            let x: &[T] = if l == 0 { input } else { &layers[l - 1].a };
            let (dw, rest) = grads[layer.weight..].split_at_mut(w * layer.fan_in);
            let dx = if l > 0 {
                ensure_len(da, rows * layer.fan_in);
                Some(&mut da[..rows * layer.fan_in])
            } else {
                None
            };
            backward::linear(
                x,
                rows,
                layer.fan_in,
                &self.params[layer.weight..],
                w,
                dy,
                dw,
                &mut rest[..w],
                dx,
            );
        }
    }

    /// Mean test loss and accuracy, in evaluation mode.
    pub fn evaluate(&mut self) -> (f64, f64) {
        let inputs = std::mem::take(&mut self.test_inputs);
        let labels = std::mem::take(&mut self.test_labels);
        self.ws.input.clear();
        self.ws.input.extend_from_slice(&inputs);
        self.ws.labels.clear();
        self.ws.labels.extend_from_slice(&labels);
        let loss = self.forward(Mode::Eval).to_f64() / labels.len().max(1) as f64;
        let classes = self.layout.classes;
        let correct = labels
            .iter()
            .enumerate()
            .filter(|&(i, &label)| argmax(&self.ws.probs[i * classes..(i + 1) * classes]) == label as usize)
            .count();
        self.test_inputs = inputs;
        self.test_labels = labels;
        (loss, correct as f64 / self.test_labels.len().max(1) as f64)
    }

    /// Forward and backward of a set of items with a given per-item loss weight, adding into the
    /// training gradient; returns the summed cross-entropy. Public for the gradient-check tests.
    pub fn accumulate_items(&mut self, inputs: &[f64], labels: &[u32], item_weight: f64) -> f64 {
        self.load(inputs, labels);
        let loss = self.forward(Mode::Train {
            update_running_stats: true,
        });
        self.backward(T::from_f64(item_weight), GradTarget::Training);
        loss.to_f64()
    }

    /// Training-mode loss `item_weight * sum CE` at the current parameters, without side effects
    /// on running statistics. Public for the gradient-check tests.
    pub fn loss_at(&mut self, inputs: &[f64], labels: &[u32], item_weight: f64) -> f64 {
        self.load(inputs, labels);
        item_weight
            * self
                .forward(Mode::Train {
                    update_running_stats: false,
                })
                .to_f64()
    }

    pub fn set_parameters(&mut self, values: &[f64]) {
        self.params = convert(values);
    }

    pub fn zero_grad(&mut self) {
        self.grads.fill(T::ZERO);
    }
}

fn argmax<T: Real>(values: &[T]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}

impl<T: Real> TrainingBackend for ReferenceEngine<T> {
    fn name(&self) -> String {
        format!("cpu-{}", T::NAME)
    }

    fn execute(&mut self, step: u64, plan: &StepPlan, batch: &StepBatch) -> Result<(), SimError> {
        batch.check(&self.layout)?;
        let d = self.layout.input_dim;
        let mut record = StepRecord {
            step,
            learning_rate: plan.learning_rate,
            ..StepRecord::default()
        };
        let mut loss_sum = 0.0;
        for op in &plan.ops {
            match *op {
                Op::ReferenceGradient => {
                    self.reference.fill(T::ZERO);
                    self.load(&batch.inputs, &batch.labels);
                    self.forward(Mode::Train {
                        update_running_stats: false,
                    });
                    let weight = T::ONE / T::from_usize(batch.item_count().max(1));
                    self.backward(weight, GradTarget::Reference);
                    self.has_reference = true;
                }
                Op::ZeroGrad => self.zero_grad(),
                Op::Accumulate {
                    micro_batch,
                    item_weight,
                } => {
                    let rows = batch.micro_batch(micro_batch)?;
                    loss_sum += self.accumulate_items(
                        &batch.inputs[rows.start * d..rows.end * d],
                        &batch.labels[rows.clone()],
                        item_weight,
                    );
                    record.items += rows.len();
                }
                Op::ClipGradNorm { max_norm } => {
                    clip_by_global_norm(&mut self.grads, max_norm);
                }
                Op::RecordGradient => {
                    record.grad_norm = global_norm(&self.grads).to_f64();
                    if self.has_reference {
                        let (relative, cosine) = compare_gradients(&to_f64(&self.grads), &to_f64(&self.reference));
                        record.grad_relative_error = Some(relative);
                        record.grad_cosine = Some(cosine);
                    }
                }
                Op::OptimizerStep { learning_rate } => {
                    self.optimizer.step(&mut self.params, &self.grads, learning_rate);
                }
                Op::Evaluate => {
                    let (loss, accuracy) = self.evaluate();
                    record.test_loss = Some(loss);
                    record.test_accuracy = Some(accuracy);
                }
            }
        }
        self.has_reference = false;
        record.train_loss = loss_sum / record.items.max(1) as f64;
        self.records.push(record);
        Ok(())
    }

    fn drain_records(&mut self) -> Result<Vec<StepRecord>, SimError> {
        Ok(std::mem::take(&mut self.records))
    }

    fn parameters(&self) -> Result<Vec<f64>, SimError> {
        Ok(to_f64(&self.params))
    }

    fn gradient(&self) -> Result<Vec<f64>, SimError> {
        Ok(to_f64(&self.grads))
    }

    fn buffers(&self) -> Result<Vec<f64>, SimError> {
        Ok(to_f64(&self.buffers))
    }

    fn predict(&mut self, points: &[f64]) -> Result<Vec<f64>, SimError> {
        let rows = points.len() / self.layout.input_dim;
        self.load(points, &vec![0; rows]);
        self.forward(Mode::Eval);
        Ok(to_f64(&self.ws.probs[..rows * self.layout.classes]))
    }
}
