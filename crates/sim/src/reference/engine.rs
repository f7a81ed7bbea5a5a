use super::forward::PassMode;
use super::{backward, forward, linear};
use crate::backend::{StepBatch, TrainingBackend};
use crate::data::Split;
use crate::lab::RunSetup;
use crate::metrics::{compare_gradients, StepRecord};
use crate::model::{Layout, Norm};
use crate::optim::{clip_by_global_norm, global_norm, OptimizerSpec, OptimizerState};
use crate::real::Real;
use crate::regime::{Op, StepPlan};
use crate::trace::{GradientSnapshot, NormStats, SnapshotOf};
use crate::SimError;
use web_time::Instant;

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
    /// The linear forward's transposed weights.
    linear_scratch: Vec<T>,
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
    snapshots: Vec<GradientSnapshot>,
    /// Training time of each step since the last drain (see [`TrainingBackend::drain_step_times`]).
    step_times_ms: Vec<f64>,
}

fn convert<T: Real>(values: &[f64]) -> Vec<T> {
    values.iter().map(|&v| T::from_f64(v)).collect()
}

fn to_f64<T: Real>(values: &[T]) -> Vec<f64> {
    values.iter().map(|v| v.to_f64()).collect()
}

/// Grows a workspace buffer to `len` values; it never shrinks, so that steps stop allocating.
/// From empty, a micro-batch's buffers are allocated at exactly their length, which is the
/// figure `sim::engine_memory` states.
fn ensure_len<T: Real>(buffer: &mut Vec<T>, len: usize) {
    if buffer.len() < len {
        buffer.resize(len, T::ZERO);
    }
}

impl<T: Real> ReferenceEngine<T> {
    /// The engine of one run of a lab, as [`crate::lab::Lab::new`] sets it up.
    pub fn for_run(setup: &RunSetup<'_>) -> Result<Self, SimError> {
        Self::new(
            setup.layout.clone(),
            &setup.params,
            &setup.buffers,
            setup.spec.optimizer,
            &setup.dataset.test,
        )
    }

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
            snapshots: Vec::new(),
            step_times_ms: Vec::new(),
            layout,
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Loads `rows` items into the workspace input.
    /// Bytes the workspace holds now: every buffer's length (each grows to what a pass needs
    /// and never shrinks), the labels as u32. After one micro-batch's forward and backward
    /// on a fresh engine, the figure `sim::engine_memory` states for the CPU engine.
    pub fn workspace_bytes(&self) -> u64 {
        let ws = &self.ws;
        let layers: usize = ws
            .layers
            .iter()
            .map(|c| {
                c.z.len() + c.xhat.len() + c.normed.len() + c.a.len() + c.mean.len() + c.variance.len() + c.rstd.len()
            })
            .sum();
        let values = ws.input.len()
            + layers
            + ws.logits.len()
            + ws.probs.len()
            + ws.dlogits.len()
            + ws.da.len()
            + ws.du.len()
            + ws.dz.len()
            + ws.linear_scratch.len();
        (values * size_of::<T>() + ws.labels.len() * size_of::<u32>()) as u64
    }

    fn load(&mut self, inputs: &[f64], labels: &[u32]) {
        self.ws.input.clear();
        self.ws.input.extend(inputs.iter().map(|&v| T::from_f64(v)));
        self.ws.labels.clear();
        self.ws.labels.extend_from_slice(labels);
    }

    /// Forward pass over the workspace input; leaves logits and probabilities in the workspace and
    /// returns the summed cross-entropy.
    fn forward(&mut self, mode: PassMode) -> T {
        for l in 0..self.layout.hidden.len() {
            self.forward_hidden(l, mode);
        }
        self.forward_output(T::ZERO)
    }

    /// Hidden layer `l` of the forward pass (the layers below it done).
    fn forward_hidden(&mut self, l: usize, mode: PassMode) {
        let layout = &self.layout;
        let rows = self.ws.labels.len();
        let Workspace {
            input,
            layers,
            linear_scratch,
            ..
        } = &mut self.ws;
        if let Some(layer) = layout.hidden.get(l) {
            let (before, rest) = layers.split_at_mut(l);
            let x: &[T] = if l == 0 { input } else { &before[l - 1].a };
            let cache = &mut rest[0];
            let w = layer.width;
            let n = rows * w;
            ensure_len(&mut cache.z, n);
            ensure_len(&mut cache.a, n);
            linear::forward(
                x,
                rows,
                layer.fan_in,
                &self.params[layer.weight..],
                &self.params[layer.bias..],
                w,
                &mut cache.z,
                linear_scratch,
            );
            let norm = layout.spec.norm;
            if let (Some(scale), Some(shift)) = (layer.norm_scale, layer.norm_shift) {
                ensure_len(&mut cache.normed, n);
                let gamma = &self.params[scale..scale + w];
                let beta = &self.params[shift..shift + w];
                match (mode, norm, layer.running_stats) {
                    (PassMode::Eval, Norm::BatchNorm { eps, .. }, Some(stats)) => {
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
                            PassMode::Train {
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
    }

    /// The output layer and the loss, after every hidden layer: leaves logits and probabilities
    /// in the workspace and returns `total` plus the cross-entropy of each row, added in order.
    fn forward_output(&mut self, total: T) -> T {
        let layout = &self.layout;
        let rows = self.ws.labels.len();
        let Workspace {
            input,
            labels,
            layers,
            logits,
            probs,
            linear_scratch,
            ..
        } = &mut self.ws;
        let classes = layout.classes;
        ensure_len(logits, rows * classes);
        ensure_len(probs, rows * classes);
        let last = layers.last().map_or(&input[..], |c| &c.a[..]);
        linear::forward(
            last,
            rows,
            layout.output_fan_in,
            &self.params[layout.output_weight..],
            &self.params[layout.output_bias..],
            classes,
            logits,
            linear_scratch,
        );
        forward::softmax_cross_entropy_onto(total, &logits[..rows * classes], classes, labels, probs)
    }

    /// Backward of `item_weight * sum CE` after a training-mode forward; adds into `target`.
    fn backward(&mut self, item_weight: T, target: GradTarget) {
        self.backward_output(item_weight, target);
        for l in (0..self.layout.hidden.len()).rev() {
            self.backward_hidden(l, target);
        }
    }

    /// The loss and output layer of the backward pass: leaves the last hidden layer's output
    /// gradient in the workspace.
    fn backward_output(&mut self, item_weight: T, target: GradTarget) {
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
            ..
        } = &mut self.ws;
        let classes = layout.classes;
        ensure_len(dlogits, rows * classes);
        backward::softmax_cross_entropy(&probs[..rows * classes], classes, labels, item_weight, dlogits);
        let last = layers.last().map_or(&input[..], |c| &c.a[..]);
        ensure_len(da, rows * layout.output_fan_in);
        {
            let (dw, rest) = grads[layout.output_weight..].split_at_mut(classes * layout.output_fan_in);
            linear::backward(
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
    }

    /// Hidden layer `l` of the backward pass (the layers above it done): adds its parameter
    /// gradients into `target` and leaves its input's gradient in the workspace.
    fn backward_hidden(&mut self, l: usize, target: GradTarget) {
        let layout = &self.layout;
        let rows = self.ws.labels.len();
        let grads = match target {
            GradTarget::Training => &mut self.grads,
            GradTarget::Reference => &mut self.reference,
        };
        let Workspace {
            input,
            layers,
            da,
            du,
            dz,
            ..
        } = &mut self.ws;
        if let Some(layer) = layout.hidden.get(l) {
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
            linear::backward(
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
        self.ws.input.clear();
        self.ws.input.extend_from_slice(&self.test_inputs);
        self.ws.labels.clear();
        self.ws.labels.extend_from_slice(&self.test_labels);
        let loss = self.forward(PassMode::Eval);
        self.test_metrics(loss)
    }

    /// Mean loss and accuracy over the test set from an evaluation-mode forward pass over it
    /// (`loss_sum` its summed cross-entropy, the probabilities in the workspace).
    fn test_metrics(&self, loss_sum: T) -> (f64, f64) {
        let classes = self.layout.classes;
        let count = self.test_labels.len().max(1) as f64;
        let correct = self
            .test_labels
            .iter()
            .enumerate()
            .filter(|&(i, &label)| argmax(&self.ws.probs[i * classes..(i + 1) * classes]) == label as usize)
            .count();
        (loss_sum.to_f64() / count, correct as f64 / count)
    }

    /// Forward and backward of a set of items with a given per-item loss weight, adding into the
    /// training gradient; returns the summed cross-entropy. Public for the gradient-check tests.
    pub fn accumulate_items(&mut self, inputs: &[f64], labels: &[u32], item_weight: f64) -> f64 {
        self.load(inputs, labels);
        let loss = self.forward(PassMode::Train {
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
                .forward(PassMode::Train {
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

    /// A copy of the gradient buffer `of`, with the first layer's BatchNorm statistics of the
    /// last pass over items.
    fn snapshot(&self, of: SnapshotOf) -> GradientSnapshot {
        let gradient = match of {
            SnapshotOf::ReferenceGradient => to_f64(&self.reference),
            SnapshotOf::Gradient => to_f64(&self.grads),
        };
        let batch_norm = match (self.layout.spec.norm.mixes_items(), self.ws.layers.first()) {
            (true, Some(cache)) => Some(NormStats {
                mean: to_f64(&cache.mean),
                variance: to_f64(&cache.variance),
            }),
            _ => None,
        };
        GradientSnapshot {
            of,
            gradient,
            batch_norm,
        }
    }
}

/// How far a step executed phase by phase has got: the next operation of the plan and, within a
/// forward or backward pass, the next layer. The browser's CPU engine runs a step a few phases
/// at a time and gives the page its thread back in between; natively a step runs all at once.
#[derive(Debug, Clone)]
pub struct StepCursor {
    op: usize,
    phase: usize,
    record: StepRecord,
    loss_sum: f64,
    /// Sum of the clipping factors so far, and how many clippings there were.
    clip_factor_sum: f64,
    clips: u32,
    /// The record is stored; more phases do nothing.
    finished: bool,
    /// Time spent so far on the step's training operations (not the Lab's measurements).
    training_ms: f64,
}

/// What a pass over a set of items is for.
#[derive(Debug, Clone, Copy)]
enum Pass {
    Reference,
    Accumulate { micro_batch: usize, item_weight: f64 },
    Evaluate,
}

impl<T: Real> ReferenceEngine<T> {
    /// Starts executing `plan` on `batch` as step `step`; [`Self::run_phase`] does the work.
    pub fn begin_step(&self, step: u64, plan: &StepPlan, batch: &StepBatch) -> Result<StepCursor, SimError> {
        batch.check(&self.layout)?;
        Ok(StepCursor {
            op: 0,
            phase: 0,
            record: StepRecord {
                step,
                learning_rate: plan.learning_rate,
                ..StepRecord::default()
            },
            loss_sum: 0.0,
            clip_factor_sum: 0.0,
            clips: 0,
            finished: false,
            training_ms: 0.0,
        })
    }

    /// Runs the next phase of the step (an operation, or one layer of a pass over items: at most
    /// one layer's matrix product) and returns whether the step is complete, its record stored.
    /// The same phases in the same order as one [`TrainingBackend::execute`], so the numbers are
    /// the same however the step is sliced.
    pub fn run_phase(&mut self, plan: &StepPlan, batch: &StepBatch, cursor: &mut StepCursor) -> Result<bool, SimError> {
        if cursor.finished {
            return Ok(true);
        }
        // The engine's own clock times the optimizer step's work (what accumulation costs),
        // not the reference gradient and evaluation the Lab adds to show it.
        let span = plan.training_span();
        let timed = span.as_ref().is_some_and(|span| span.contains(&cursor.op));
        #[allow(
            clippy::disallowed_methods,
            reason = "web_time::Instant is std's natively (what the lint sees) and performance.now() on wasm"
        )]
        let started = timed.then(Instant::now);
        let done = self.next_phase(plan, batch, cursor)?;
        if let Some(started) = started {
            cursor.training_ms += started.elapsed().as_secs_f64() * 1000.0;
        }
        if done && span.is_some() {
            self.step_times_ms.push(cursor.training_ms);
        }
        Ok(done)
    }

    fn next_phase(&mut self, plan: &StepPlan, batch: &StepBatch, cursor: &mut StepCursor) -> Result<bool, SimError> {
        if cursor.op == 0 && cursor.phase == 0 {
            // Only the last step's snapshots are kept (a lab may stop draining them mid-step).
            self.snapshots.clear();
        }
        let Some(&op) = plan.ops.get(cursor.op) else {
            return Ok(self.finish_step(cursor));
        };
        let pass = match op {
            Op::ReferenceGradient => Some(Pass::Reference),
            Op::Accumulate {
                micro_batch,
                item_weight,
            } => Some(Pass::Accumulate {
                micro_batch,
                item_weight,
            }),
            Op::Evaluate => Some(Pass::Evaluate),
            Op::GradientAsReference => {
                self.reference.copy_from_slice(&self.grads);
                self.has_reference = true;
                None
            }
            Op::ZeroGrad => {
                self.zero_grad();
                None
            }
            Op::ClipGradNorm { max_norm } => {
                let clipping = clip_by_global_norm(&mut self.grads, max_norm);
                cursor.clip_factor_sum += clipping.factor;
                cursor.clips += 1;
                cursor.record.grad_norm_before_clip = Some(clipping.norm);
                None
            }
            Op::RecordGradient => {
                cursor.record.grad_norm = global_norm(&self.grads).to_f64();
                if self.has_reference {
                    let (relative, cosine) = compare_gradients(&self.grads, &self.reference);
                    cursor.record.grad_relative_error = Some(relative);
                    cursor.record.grad_cosine = Some(cosine);
                    cursor.record.grad_reference_norm = Some(global_norm(&self.reference).to_f64());
                }
                None
            }
            Op::OptimizerStep { learning_rate } => {
                self.optimizer.step(&mut self.params, &self.grads, learning_rate);
                None
            }
            Op::Snapshot(of) => {
                self.snapshots.push(self.snapshot(of));
                None
            }
        };
        let op_done = match pass {
            Some(pass) => self.pass_phase(pass, batch, cursor)?,
            None => true,
        };
        if op_done {
            cursor.op += 1;
            cursor.phase = 0;
            if cursor.op == plan.ops.len() {
                return Ok(self.finish_step(cursor));
            }
        } else {
            cursor.phase += 1;
        }
        Ok(false)
    }

    /// Phase `cursor.phase` of a pass: the hidden layers forward, the output and loss, then (when
    /// training) the output layer and the hidden layers backward. Returns whether the pass is done.
    fn pass_phase(&mut self, pass: Pass, batch: &StepBatch, cursor: &mut StepCursor) -> Result<bool, SimError> {
        let hidden = self.layout.hidden.len();
        let phase = cursor.phase;
        let mode = match pass {
            Pass::Reference => PassMode::Train {
                update_running_stats: false,
            },
            Pass::Accumulate { .. } => PassMode::Train {
                update_running_stats: true,
            },
            Pass::Evaluate => PassMode::Eval,
        };
        if phase == 0 {
            match pass {
                Pass::Reference => {
                    self.reference.fill(T::ZERO);
                    self.load(&batch.inputs, &batch.labels);
                }
                Pass::Accumulate { micro_batch, .. } => {
                    let d = self.layout.input_dim;
                    let rows = batch.micro_batch(micro_batch)?;
                    self.load(&batch.inputs[rows.start * d..rows.end * d], &batch.labels[rows]);
                }
                Pass::Evaluate => {
                    self.ws.input.clear();
                    self.ws.input.extend_from_slice(&self.test_inputs);
                    self.ws.labels.clear();
                    self.ws.labels.extend_from_slice(&self.test_labels);
                }
            }
        }
        if phase < hidden {
            self.forward_hidden(phase, mode);
            return Ok(false);
        }
        if phase == hidden {
            // The step's loss runs on in T from micro-batch to micro-batch (T -> f64 -> T is
            // exact), so accumulated micro-batches add their items' losses as the full batch does.
            let total = match pass {
                Pass::Accumulate { .. } => T::from_f64(cursor.loss_sum),
                Pass::Reference | Pass::Evaluate => T::ZERO,
            };
            let loss = self.forward_output(total);
            match pass {
                Pass::Reference => {}
                Pass::Accumulate { .. } => {
                    cursor.loss_sum = loss.to_f64();
                    cursor.record.items += self.ws.labels.len();
                }
                Pass::Evaluate => {
                    let (loss, accuracy) = self.test_metrics(loss);
                    cursor.record.test_loss = Some(loss);
                    cursor.record.test_accuracy = Some(accuracy);
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        let (weight, target) = match pass {
            // The weight as a full batch's `Op::Accumulate` carries it (1/B in f64, then the engine's
            // precision), so that the two give the same gradient bit for bit.
            Pass::Reference => (
                T::from_f64(1.0 / batch.item_count().max(1) as f64),
                GradTarget::Reference,
            ),
            Pass::Accumulate { item_weight, .. } => (T::from_f64(item_weight), GradTarget::Training),
            Pass::Evaluate => return Ok(true),
        };
        if phase == hidden + 1 {
            self.backward_output(weight, target);
        } else {
            self.backward_hidden(2 * hidden + 1 - phase, target);
        }
        let done = phase == 2 * hidden + 1;
        if done && matches!(pass, Pass::Reference) {
            self.has_reference = true;
        }
        Ok(done)
    }

    /// Stores the finished step's record.
    fn finish_step(&mut self, cursor: &mut StepCursor) -> bool {
        cursor.finished = true;
        self.has_reference = false;
        let mut record = std::mem::take(&mut cursor.record);
        record.train_loss = cursor.loss_sum / record.items.max(1) as f64;
        if cursor.clips > 0 {
            record.clip_factor = Some(cursor.clip_factor_sum / f64::from(cursor.clips));
        }
        self.records.push(record);
        true
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
        let mut cursor = self.begin_step(step, plan, batch)?;
        while !self.run_phase(plan, batch, &mut cursor)? {}
        Ok(())
    }

    fn drain_records(&mut self) -> Result<Vec<StepRecord>, SimError> {
        // Drained, not taken: the engine keeps its capacity, so a step never allocates for its
        // record.
        Ok(self.records.drain(..).collect())
    }

    fn drain_snapshots(&mut self) -> Result<Vec<GradientSnapshot>, SimError> {
        Ok(std::mem::take(&mut self.snapshots))
    }

    fn drain_step_times(&mut self) -> Vec<f64> {
        // Drained, not taken, like the records: a step never allocates for its time.
        self.step_times_ms.drain(..).collect()
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
        self.forward(PassMode::Eval);
        Ok(to_f64(&self.ws.probs[..rows * self.layout.classes]))
    }
}
