//! The GPU engine against the CPU reference (f64): the same labs, the same plans, compared
//! number by number. f32 on the GPU against f64 on the CPU: losses, applied gradients and
//! parameters agree to the stated relative tolerances.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

mod backends;
mod common;

use backends::{gpu_device, CPU_F32, CPU_F64, GPU};
use common::{model, relative, small_lab};
use gradlab::sim::data::DatasetKind;
use gradlab::sim::lab::LabConfig;
use gradlab::sim::model::{Activation, Norm};
use gradlab::sim::optim::OptimizerSpec;
use gradlab::sim::regime::RegimeSpec;
use gradlab::sim::scenario::Scenario;

/// Gradients and losses of the first step, parameters after each step: GPU f32 against CPU f64
/// must agree to 1e-5 relative, or, where f32 arithmetic itself cannot (a GroupNorm group of two
/// values divides by a tiny spread), to within 4 times the CPU f32 engine's own error.
const TOLERANCE: f64 = 1e-5;
const F32_FACTOR: f64 = 4.0;
const FIRST_STEP_TOLERANCE: f64 = TOLERANCE;

/// Parameters compared: all, except, for BatchNorm with Adam, the biases of the linear layers
/// before BatchNorm. BatchNorm subtracts the batch mean, so their true gradient is exactly 0;
/// what the engines compute is rounding noise (about 1e-18 in f64, 1e-9 in f32), and Adam turns
/// noise into full-size steps of sign(noise) * lr. Those entries differ between any two
/// precisions, CPU against CPU too, and say nothing about the kernels.
fn compared(
    run: &gradlab::sim::lab::LabRun<Box<dyn gradlab::sim::backend::TrainingBackend>>,
    values: Vec<f64>,
) -> Vec<f64> {
    let adam = matches!(
        run.spec.optimizer,
        OptimizerSpec::Adam { .. } | OptimizerSpec::AdamW { .. }
    );
    if !(adam && run.spec.model.norm.mixes_items()) {
        return values;
    }
    let skipped: Vec<std::ops::Range<usize>> = run
        .layout
        .hidden
        .iter()
        .map(|layer| layer.bias..layer.bias + layer.width)
        .collect();
    values
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !skipped.iter().any(|r| r.contains(i)))
        .map(|(_, v)| v)
        .collect()
}

fn compare(config: LabConfig, steps: u64, what: &str) -> f64 {
    let mut cpu = (CPU_F64.make)(config.clone());
    let mut f32_cpu = (CPU_F32.make)(config.clone());
    let mut gpu = (GPU.make)(config);
    let mut worst: f64 = 0.0;
    for step in 0..steps {
        cpu.step().unwrap();
        f32_cpu.step().unwrap();
        gpu.step().unwrap();
        for ((c, g), f) in cpu.runs().iter().zip(gpu.runs()).zip(f32_cpu.runs()) {
            let label = &c.spec.label;
            let (hc, hg) = (c.history.last().unwrap(), g.history.last().unwrap());
            let hf = f.history.last().unwrap();
            let loss_error = (hc.train_loss - hg.train_loss).abs() / hc.train_loss;
            let f32_loss_error = (hc.train_loss - hf.train_loss).abs() / hc.train_loss;
            let bound = TOLERANCE.max(F32_FACTOR * f32_loss_error);
            assert!(
                loss_error < bound,
                "{what} {label} step {step}: loss off by {loss_error:e} (bound {bound:e})"
            );
            let exact = compared(c, c.backend.parameters().unwrap());
            let params = relative(&compared(g, g.backend.parameters().unwrap()), &exact);
            let f32_params = relative(&compared(f, f.backend.parameters().unwrap()), &exact);
            worst = worst.max(params);
            let bound = TOLERANCE.max(F32_FACTOR * f32_params);
            assert!(
                params < bound,
                "{what} {label} step {step}: parameters off by {params:e} (bound {bound:e})"
            );
            if step == 0 {
                let gradient = relative(&g.backend.gradient().unwrap(), &c.backend.gradient().unwrap());
                let f32_gradient = relative(&f.backend.gradient().unwrap(), &c.backend.gradient().unwrap());
                let bound = FIRST_STEP_TOLERANCE.max(F32_FACTOR * f32_gradient);
                assert!(
                    gradient < bound,
                    "{what} {label}: gradient off by {gradient:e} (cpu-f32: {f32_gradient:e})"
                );
                // Layer by layer: every parameter tensor's gradient, where it is not pure noise.
                let (gc, gg, gf) = (
                    c.backend.gradient().unwrap(),
                    g.backend.gradient().unwrap(),
                    f.backend.gradient().unwrap(),
                );
                let total: f64 = gc.iter().map(|v| v * v).sum::<f64>().sqrt();
                for tensor in &c.layout.tensors {
                    let range = tensor.offset..tensor.offset + tensor.len;
                    let norm: f64 = gc[range.clone()].iter().map(|v| v * v).sum::<f64>().sqrt();
                    if norm < 1e-6 * total {
                        continue; // exactly zero in exact arithmetic (a bias before BatchNorm)
                    }
                    let error = relative(&gg[range.clone()], &gc[range.clone()]);
                    let f32_error = relative(&gf[range.clone()], &gc[range]);
                    let bound = FIRST_STEP_TOLERANCE.max(F32_FACTOR * f32_error);
                    assert!(
                        error < bound,
                        "{what} {label} {}: gradient off by {error:e}",
                        tensor.name
                    );
                }
                // An arg-max at a near tie may flip under rounding: at most one test item.
                let noisy_biases = compared(c, vec![0.0; c.layout.parameter_count]).len() < c.layout.parameter_count;
                let one_item = 1.0 / cpu.dataset().test.item_count() as f64 + 1e-9;
                let (ac, ag) = (hc.test_accuracy.unwrap(), hg.test_accuracy.unwrap());
                assert!(
                    noisy_biases || (ac - ag).abs() <= one_item,
                    "{what} {label}: test accuracy {ac} vs {ag}"
                );
                assert_eq!(
                    hc.clip_factor.is_some(),
                    hg.clip_factor.is_some(),
                    "{what} {label}: clipping"
                );
                for (name, cpu_value, gpu_value) in [
                    ("clip factor", hc.clip_factor, hg.clip_factor),
                    (
                        "norm before clipping",
                        hc.grad_norm_before_clip,
                        hg.grad_norm_before_clip,
                    ),
                ] {
                    if let (Some(c), Some(g)) = (cpu_value, gpu_value) {
                        assert!(
                            (c - g).abs() <= 1e-5 * c.abs().max(1e-3),
                            "{what} {label}: {name} {c:e} vs {g:e}"
                        );
                    }
                }
                if let (Some(ec), Some(eg)) = (hc.grad_relative_error, hg.grad_relative_error) {
                    // Both are either float noise or a real mismatch of the same size.
                    assert!(
                        (ec - eg).abs() < 1e-4 + 1e-3 * ec,
                        "{what} {label}: relative error {ec:e} vs {eg:e}"
                    );
                }
            }
            let (mut bc, mut bg) = (c.backend.buffers().unwrap(), g.backend.buffers().unwrap());
            if compared(c, vec![0.0; c.layout.parameter_count]).len() < c.layout.parameter_count {
                // Running means carry those biases; running variances do not, so compare those.
                let variances = |run: &gradlab::sim::lab::LabRun<_>, b: Vec<f64>| -> Vec<f64> {
                    run.layout
                        .hidden
                        .iter()
                        .filter_map(|l| l.running_stats.map(|s| b[s + l.width..s + 2 * l.width].to_vec()))
                        .flatten()
                        .collect()
                };
                bc = variances(c, bc);
                bg = variances(g, bg);
            }
            if !bc.is_empty() {
                assert!(relative(&bg, &bc) < 1e-5, "{what} {label}: running statistics");
            }
        }
    }
    worst
}

#[test]
fn every_scenario_trains_the_same_on_gpu_and_cpu() {
    if gpu_device().is_none() {
        return;
    }
    for scenario in Scenario::all() {
        let worst = compare(scenario.config.clone(), 3, scenario.id.id());
        eprintln!("{}: worst parameter relative error {worst:e}", scenario.id);
    }
}

/// The norm kernels have vec4 versions for aligned layers (the next test: widths 16 and 8) and
/// scalar ones for any other shape, taken here: widths 6 and 10, groups of 3 and 5.
#[test]
fn norm_layers_of_unaligned_widths_match_the_cpu() {
    if gpu_device().is_none() {
        return;
    }
    for norm in [Norm::batch_norm(), Norm::layer_norm(), Norm::group_norm(2)] {
        let config = small_lab(
            DatasetKind::Spiral,
            model(vec![6, 10], Activation::Tanh, norm),
            OptimizerSpec::default(),
            0.1,
            32,
            &[
                ("full", RegimeSpec::full_batch()),
                ("accumulate 4", RegimeSpec::accumulate(4)),
            ],
        );
        compare(config, 3, &format!("{} 6-10", norm.label()));
    }
}

#[test]
fn every_norm_activation_and_optimizer_matches_the_cpu() {
    if gpu_device().is_none() {
        return;
    }
    for norm in [Norm::None, Norm::batch_norm(), Norm::layer_norm(), Norm::group_norm(2)] {
        for activation in Activation::ALL {
            for (optimizer, lr) in [
                (OptimizerSpec::default(), 0.1),
                (OptimizerSpec::momentum(), 0.05),
                (OptimizerSpec::adam(), 0.01),
                (OptimizerSpec::adamw(), 0.01),
            ] {
                let config = small_lab(
                    DatasetKind::Spiral,
                    model(vec![16, 8], activation, norm),
                    optimizer,
                    lr,
                    32,
                    &[
                        ("full", RegimeSpec::full_batch()),
                        ("accumulate 4", RegimeSpec::accumulate(4)),
                    ],
                );
                compare(
                    config,
                    3,
                    &format!("{} {activation:?} {}", norm.label(), optimizer.label()),
                );
            }
        }
    }
}

#[test]
fn gpu_activation_workspace_holds_one_micro_batch() {
    let Some((context, ops)) = gpu_device() else { return };
    use gradlab::gpu::engine::GpuEngine;
    use gradlab::sim::lab::RunSetup;
    use gradlab::sim::scenario::canonical_config;
    let make = |micro_batches: usize| {
        let config = canonical_config(micro_batches);
        let data = config.dataset.generate();
        GpuEngine::new(context, ops, &RunSetup::new(&config, &config.runs[0], &data)).unwrap()
    };
    let (full, accumulated) = (make(1), make(4));
    eprintln!(
        "GPU activation bytes: full batch {}, 4 micro-batches {}; metrics workspace {}; total allocated {} / {}",
        full.activation_bytes(),
        accumulated.activation_bytes(),
        accumulated.metrics_workspace_bytes(),
        full.allocated_bytes(),
        accumulated.allocated_bytes()
    );
    let ratio = accumulated.activation_bytes() as f64 / full.activation_bytes() as f64;
    assert!((ratio - 0.25).abs() < 0.01, "activation bytes ratio {ratio}");
    assert!(accumulated.allocated_bytes() < full.allocated_bytes());
}

/// The memory preset's captions say what each engine holds, and the figures hold them to it:
/// the WebGPU engine allocates more than the activations the CPU engine counts (its backward
/// buffers), and on both the memory falls with N in the same proportion. The captions claim
/// exactly that, in both languages, and never that the two are the same.
/// The WebGPU engine's training workspace is exactly the figure `sim::engine_memory` states
/// (the one the planner plans the Lab's network with), for every norm, several depths and widths
/// and micro-batch sizes that are not multiples of four; on the memory preset it differs from the
/// CPU engine's figure for the same micro-batch, as the captions say.
#[test]
fn the_webgpu_engine_allocates_the_planners_figure() {
    let Some((context, ops)) = gpu_device() else { return };
    use gradlab::gpu::engine::GpuEngine;
    use gradlab::i18n::{Language, Localizer, Msg};
    use gradlab::sim::engine_memory::{micro_batch_bytes, LabEngine};
    use gradlab::sim::lab::RunSetup;
    use gradlab::sim::planner::PlanRequest;
    let shapes: [&[usize]; 3] = [&[64, 64], &[8], &[12, 40, 4]];
    for norm in [Norm::None, Norm::batch_norm(), Norm::layer_norm(), Norm::group_norm(4)] {
        for hidden in shapes {
            for micro_batches in [1, 3, 10] {
                let regime = RegimeSpec {
                    allow_uneven_split: true,
                    ..RegimeSpec::accumulate(micro_batches)
                };
                let config = small_lab(
                    DatasetKind::Spiral,
                    model(hidden.to_vec(), Activation::Relu, norm),
                    OptimizerSpec::default(),
                    0.1,
                    50,
                    &[("run", regime)],
                );
                let data = config.dataset.generate();
                let setup = RunSetup::new(&config, &config.runs[0], &data);
                let rows = 50usize.div_ceil(micro_batches);
                let engine = GpuEngine::new(context, ops, &setup).unwrap();
                assert_eq!(
                    engine.activation_bytes(),
                    micro_batch_bytes(LabEngine::Webgpu, &setup.layout, rows),
                    "{norm:?}, hidden {hidden:?}, micro-batches of {rows}"
                );
            }
        }
    }
    let config = Scenario::by_id("memory").unwrap().config;
    let data = config.dataset.generate();
    for run in &config.runs {
        let setup = RunSetup::new(&config, run, &data);
        let rows = config.batch_size.div_ceil(run.regime.micro_batches);
        let gpu = GpuEngine::new(context, ops, &setup).unwrap().activation_bytes();
        let cpu = micro_batch_bytes(LabEngine::Cpu, &setup.layout, rows);
        // `gradlab plan --model lab-mlp` plans with the same bytes.
        let planned = PlanRequest::for_lab(LabEngine::Webgpu, 1 << 30, 256)
            .memory(rows as u64)
            .activations;
        assert_eq!(planned, gpu, "the planner's activations for micro-batches of {rows}");
        eprintln!("memory preset, micro-batches of {rows}: CPU engine {cpu} B, WebGPU engine {gpu} B");
        assert_ne!(gpu, cpu, "the captions say the engines' figures differ");
    }
    for language in Language::ALL {
        let localizer = Localizer::new(language).unwrap();
        for id in ["memory-model-source", "memory-gpu-source"] {
            let caption = localizer.msg(&Msg::new(id));
            for claim in ["the same for", "lo mismo"] {
                assert!(
                    !caption.contains(claim),
                    "{id} ({}) claims equal figures: {caption}",
                    language.tag()
                );
            }
        }
    }
}

/// Dispatches per optimizer step of the canonical workload (MLP 2-64-64-3, ReLU, SGD): per
/// micro-batch 2 forward (the first hidden linear layer with its activation fused, then the
/// second with the output layer, softmax, cross-entropy, the gradient of the logits and the
/// gradient at the top hidden layer's activation; an evaluation keeps the output layer apart)
/// and 2 backward (the second layer's parameter gradients with the input gradient below it,
/// activation's derivative fused in, then the first layer's parameter gradients with the output
/// layer's, which share the next micro-batch's first forward dispatch where one follows); per
/// step 2 for the gradient norm and the optimizer (parallel partial sums, each invocation also
/// updating the parameters it summed the gradients of, then one invocation adds them in a fixed
/// tree: no barriers, and sums the step's row losses in order). Metrics add the evaluation
/// (3 + 2 for loss and accuracy together), compare the gradient with its reference in the
/// gradient norm's reduction and, with micro-batches, the reference gradient's own pass (2 + 2;
/// a full batch's gradient is copied as its reference).
/// Before fusing: 17 / 62 without metrics, 42 / 87 with them; with one backward dispatch per
/// layer and one-workgroup reductions with barriers: 10 / 34, 22 / 46 (slower on software
/// adapters: see the closing note of issue 15); 25 / 49 before the full batch's reference was
/// copied instead of recomputed; 12 / 36, 17 / 49 before the output dispatch wrote the top
/// layer's input gradient; 11 / 32, 16 / 44 before a layer's parameter and input gradients
/// were one dispatch; 10 / 28, 15 / 39 before the gradient norm's dispatch summed the loss;
/// 9 / 27, 14 / 38 before the output layer's parameter gradients shared the first layer's
/// dispatch; 8 / 23, 13 / 33 before the optimizer update shared the gradient norm's parallel
/// dispatch; 7 / 22, 12 / 32 before a micro-batch's last backward dispatch shared the next
/// one's first forward dispatch; 7 / 19, 12 / 29 before a training pass's top hidden layer
/// shared the output layer's dispatch.
#[test]
fn fused_kernels_hold_the_dispatches_per_step() {
    let Some((context, ops)) = gpu_device() else { return };
    use gradlab::gpu::workload::GpuWorkload;
    use gradlab::sim::regime::MetricOps;
    for (micro_batches, metrics, expected) in [
        (1, MetricOps::NONE, 6),
        (4, MetricOps::NONE, 15),
        (1, MetricOps::ALL, 11),
        (4, MetricOps::ALL, 24),
    ] {
        let mut workload = GpuWorkload::canonical(context, ops, micro_batches, metrics).unwrap();
        for step in 0..2 {
            workload.step(step).unwrap();
            assert_eq!(
                workload.last_step_dispatches(),
                expected,
                "{micro_batches} micro-batches, metrics {metrics:?}, step {step}"
            );
        }
        assert_eq!(pollster::block_on(workload.read_back()).unwrap(), 2);
    }
}

#[test]
fn norm_layers_hold_their_dispatches_per_step() {
    // The norms preset (2-64-64-3, a norm after each hidden layer, metrics on): BatchNorm's
    // running statistics are updated in its forward dispatch, its backward is one dispatch and
    // its evaluation applies the activation; LayerNorm's and GroupNorm's backward is one dispatch
    // too (20 / 61 when it was two, their scale and shift gradients, then their input gradient);
    // the output dispatch of a training pass writes the top layer's input gradient; a linear
    // layer's parameter and input gradients are one dispatch; the gradient norm's serial
    // half sums the step's loss; the output layer's parameter gradients share the first layer's
    // dispatch, and the next micro-batch's first forward dispatch where one follows; the
    // optimizer update shares the gradient norm's parallel dispatch.
    let Some((context, _)) = gpu_device() else { return };
    use gradlab::gpu::lab::GpuLab;
    let config = Scenario::by_id("norms").unwrap().config;
    let labels: Vec<String> = config.runs.iter().map(|r| r.label.clone()).collect();
    let mut lab = GpuLab::new(context, config).unwrap();
    pollster::block_on(lab.advance(2)).unwrap();
    let counts: Vec<usize> = lab
        .lab()
        .runs()
        .iter()
        .map(|r| r.backend.last_step_dispatches())
        .collect();
    assert_eq!(counts, [18, 51, 18, 51, 18, 51], "{labels:?}");
}

/// A pipeline is built when a dispatch of its kernel is first recorded, and an engine records
/// its forward and backward passes when it is built: their kernels (seconds of compiling on a
/// software adapter) are built before the first step, and none that the experiment never uses.
#[test]
fn building_an_engine_compiles_its_passes_kernels_and_no_others() {
    let Some((context, _)) = gpu_device() else { return };
    use gradlab::gpu::engine::GpuEngine;
    use gradlab::gpu::kernels::*;
    use gradlab::gpu::ops::GpuOps;
    use gradlab::sim::lab::Lab;
    use gradlab::sim::scenario::canonical_config;
    let names = |kernels: &[&KernelInfo]| kernels.iter().map(|k| k.name).collect::<Vec<_>>();
    // What a step records beyond its passes: quick to compile, left to the first step.
    let left_to_the_first_step = names(&[
        &REDUCE_PARTIALS.info,
        &REDUCE_SERIAL.info,
        &GRADIENT_NORM_AND_OPTIMIZER.info,
    ]);
    let canonical = (
        "canonical 4 x 64",
        canonical_config(4),
        names(&[
            &LINEAR_FORWARD.info,
            &LINEAR_BACKWARD.info,
            &FIRST_AND_OUTPUT_GRADIENTS_AND_FORWARD.info,
            &FIRST_AND_OUTPUT_PARAMETER_GRADIENTS.info,
            &TOP_LAYER_AND_OUTPUT.info,
            &OUTPUT_CROSS_ENTROPY_VEC4.info,
        ]),
        names(&[
            &LINEAR_FORWARD_SCALAR.info,
            &LINEAR_INPUT_GRADIENT_SCALAR.info,
            &OUTPUT_CROSS_ENTROPY.info,
            &NORM_FORWARD.info,
            &NORM_BACKWARD_INPUT.info,
            &BATCH_NORM_EVAL.info,
        ]),
    );
    let norms = (
        "norms preset",
        Scenario::by_id("norms").unwrap().config,
        names(&[
            &LINEAR_FORWARD.info,
            &LINEAR_BACKWARD.info,
            &NORM_FORWARD_ACROSS_SETS.info,
            &NORM_BACKWARD_ACROSS_SETS.info,
            &BATCH_NORM_EVAL.info,
            &NORM_FORWARD_WITHIN_SETS.info,
            &NORM_BACKWARD_WITHIN_SETS.info,
            &FIRST_AND_OUTPUT_GRADIENTS_AND_FORWARD.info,
            &OUTPUT_CROSS_ENTROPY_VEC4.info,
        ]),
        // The top layer has a norm: it never shares the output layer's dispatch.
        names(&[
            &TOP_LAYER_AND_OUTPUT.info,
            &LINEAR_FORWARD_SCALAR.info,
            &OUTPUT_CROSS_ENTROPY.info,
            &NORM_BACKWARD_PARAMS_ACROSS_FEATURES.info,
            &NORM_BACKWARD_INPUT.info,
        ]),
    );
    for (what, config, built_with_the_engine, never) in [canonical, norms] {
        let ops = GpuOps::shared(context);
        assert!(
            ops.compiled_kernels().is_empty(),
            "{what}: nothing is compiled before it is used"
        );
        let mut lab = Lab::new(config, |setup| -> Result<_, gradlab::gpu::lab::GpuLabError> {
            Ok(GpuEngine::new(context, &ops, setup)?)
        })
        .unwrap();
        let built = ops.compiled_kernels();
        for kernel in &built_with_the_engine {
            assert!(
                built.contains(kernel),
                "{what}: {kernel} is built with the engine: {built:?}"
            );
        }
        lab.run(3, |_| {}).unwrap();
        let after = ops.compiled_kernels();
        for kernel in after.iter().filter(|k| !built.contains(k)) {
            assert!(
                left_to_the_first_step.contains(kernel),
                "{what}: the first step built {kernel}, which the engine's passes should have"
            );
        }
        for kernel in &never {
            assert!(!after.contains(kernel), "{what}: {kernel} was built but is never used");
        }
        assert!(context.take_errors().is_empty(), "{what}");
    }
}

/// Every kernel compiles on the device without a validation error (the tests above build only
/// those their shapes use); the error scope holds this test's errors only.
#[test]
fn every_kernel_compiles_on_the_device() {
    let Some((context, _)) = gpu_device() else { return };
    let ops = gradlab::gpu::ops::GpuOps::new(context);
    let scope = context.device.push_error_scope(wgpu::ErrorFilter::Validation);
    ops.compile_all();
    let error = pollster::block_on(scope.pop());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(ops.compiled_kernels().len(), gradlab::gpu::kernels::all().count());
}

#[test]
fn steady_state_steps_create_no_new_bind_groups() {
    let Some((context, ops)) = gpu_device() else { return };
    use gradlab::gpu::engine::GpuEngine;
    use gradlab::sim::backend::StepBatch;
    use gradlab::sim::data::DataOrder;
    use gradlab::sim::regime::{plan_step, MetricOps};
    let config = Scenario::by_id("norms").unwrap().config;
    let data = config.dataset.generate();
    let run = &config.runs[1];
    let mut engine = GpuEngine::new(context, ops, &gradlab::sim::lab::RunSetup::new(&config, run, &data)).unwrap();
    let mut order = DataOrder::new(config.data_order_seed, data.train.example_count());
    let mut counts = Vec::new();
    for step in 0..6 {
        let batch = StepBatch::gather(
            &data.train,
            data.input_dim,
            order.next_batch(config.batch_size),
            &run.regime,
        );
        let plan = plan_step(
            &run.regime,
            None,
            &run.schedule,
            step,
            &batch.micro_batch_items(),
            MetricOps::ALL,
        );
        engine.encode_step(step, &plan, &batch).unwrap();
        counts.push(engine.cached_bind_groups());
    }
    assert!(counts[0] > 0);
    assert!(
        counts[1..].iter().all(|&c| c == counts[1]),
        "bind groups per step: {counts:?}"
    );
    assert_eq!(
        pollster::block_on(engine.read_records()).unwrap().len(),
        6,
        "one bulk readback"
    );
}

#[test]
fn all_runs_of_a_step_can_share_one_submission() {
    let Some((context, ops)) = gpu_device() else { return };
    use gradlab::gpu::engine::GpuEngine;
    use gradlab::sim::backend::StepBatch;
    use gradlab::sim::data::DataOrder;
    use gradlab::sim::regime::{plan_step, MetricOps};
    let config = Scenario::by_id("scaling").unwrap().config;
    let data = config.dataset.generate();
    let engines = || -> Vec<GpuEngine> {
        config
            .runs
            .iter()
            .map(|run| GpuEngine::new(context, ops, &gradlab::sim::lab::RunSetup::new(&config, run, &data)).unwrap())
            .collect()
    };
    let (mut together, mut apart) = (engines(), engines());
    let mut order = DataOrder::new(config.data_order_seed, data.train.example_count());
    for step in 0..3 {
        let examples = order.next_batch(config.batch_size);
        let mut buffers = Vec::new();
        for (i, run) in config.runs.iter().enumerate() {
            let batch = StepBatch::gather(&data.train, data.input_dim, examples.clone(), &run.regime);
            let plan = plan_step(
                &run.regime,
                None,
                &run.schedule,
                step,
                &batch.micro_batch_items(),
                MetricOps::ALL,
            );
            buffers.push(together[i].record_step(step, &plan, &batch).unwrap());
            apart[i].encode_step(step, &plan, &batch).unwrap();
        }
        context.queue.submit(buffers);
    }
    for (a, b) in together.iter_mut().zip(apart.iter_mut()) {
        let (ra, rb) = (
            pollster::block_on(a.read_records()).unwrap(),
            pollster::block_on(b.read_records()).unwrap(),
        );
        assert_eq!(ra, rb);
        assert_eq!(
            pollster::block_on(a.read_parameters()).unwrap(),
            pollster::block_on(b.read_parameters()).unwrap()
        );
    }
}

/// The async, bulk-readback driver the browser uses: several steps per submission batch and one
/// readback per run must give the same records as the CPU lab stepped one at a time.
#[test]
fn the_async_gpu_lab_matches_the_cpu_lab_step_for_step() {
    use gradlab::gpu::lab::GpuLab;
    use gradlab::sim::lab::CpuLab;
    let Some((context, _)) = gpu_device() else { return };
    for id in ["scaling", "norms", "variable_length"] {
        let config = LabConfig {
            batch_size: 64,
            ..Scenario::by_id(id).unwrap().config
        };
        let mut gpu = GpuLab::new(context, config.clone()).unwrap();
        pollster::block_on(gpu.advance(3)).unwrap();
        pollster::block_on(gpu.advance(2)).unwrap();
        let mut cpu = CpuLab::<f64>::cpu(config).unwrap();
        cpu.run(5, |_| {}).unwrap();
        for (g, c) in gpu.lab().runs().iter().zip(cpu.runs()) {
            assert_eq!(g.history.len(), 5, "{id}: {}", g.spec.label);
            for (gr, cr) in g.history.iter().zip(&c.history) {
                assert_eq!(gr.step, cr.step);
                assert!(
                    relative(&[gr.train_loss], &[cr.train_loss]) < 1e-5,
                    "{id} {} step {}: {} vs {}",
                    g.spec.label,
                    gr.step,
                    gr.train_loss,
                    cr.train_loss
                );
            }
            // Distances are measured at the end of each advance: steps 3 and 5.
            assert!(g.history[2].param_distance.is_some() && g.history[4].param_distance.is_some());
            assert!(g.history[3].param_distance.is_none());
        }
        let probabilities = pollster::block_on(gpu.predict(0, &[0.1, -0.2, 0.5, 0.5])).unwrap();
        let classes = gpu.lab().dataset().classes;
        assert_eq!(probabilities.len(), 2 * classes);
        assert!((probabilities[..classes].iter().sum::<f64>() - 1.0).abs() < 1e-5);
        assert!(pollster::block_on(gpu.predict(99, &[0.0, 0.0])).is_err());
    }
}

/// The step-through view's snapshots: the GPU's partial sums, first-layer gradients and
/// BatchNorm statistics against the CPU's, micro-batch by micro-batch, in the async GPU lab.
#[test]
fn gpu_snapshots_match_the_cpu_micro_batch_by_micro_batch() {
    use gradlab::gpu::lab::GpuLab;
    use gradlab::sim::lab::CpuLab;
    let Some((context, _)) = gpu_device() else { return };
    for id in ["scaling", "norms", "variable_length", "pitfalls"] {
        let config = LabConfig {
            batch_size: 64,
            ..Scenario::by_id(id).unwrap().config
        };
        let mut gpu = GpuLab::new(context, config.clone()).unwrap();
        let mut cpu = CpuLab::<f64>::cpu(config).unwrap();
        pollster::block_on(gpu.advance(1)).unwrap();
        cpu.step().unwrap();
        gpu.set_snapshots(true);
        cpu.set_snapshots(true);
        // Two steps in one advance: the trace is the last one's.
        pollster::block_on(gpu.advance(2)).unwrap();
        cpu.run(2, |_| {}).unwrap();
        for (g, c) in gpu.lab().runs().iter().zip(cpu.runs()) {
            let what = format!("{id} {}", g.spec.label);
            let (gt, ct) = (g.trace.as_ref().unwrap(), c.trace.as_ref().unwrap());
            assert_eq!(gt.step, 2, "{what}");
            assert_eq!(gt.micro_batches.len(), ct.micro_batches.len(), "{what}");
            let close = |a: f64, b: f64| (a - b).abs() <= TOLERANCE * b.abs().max(1e-3);
            assert!(close(gt.full_batch_norm, ct.full_batch_norm), "{what}");
            for (k, (gm, cm)) in gt.micro_batches.iter().zip(&ct.micro_batches).enumerate() {
                assert_eq!(gm.examples, cm.examples, "{what} {k}");
                assert_eq!((gm.items, gm.item_weight), (cm.items, cm.item_weight), "{what} {k}");
                assert!(
                    close(gm.partial.norm, cm.partial.norm),
                    "{what} {k}: norm {} vs {}",
                    gm.partial.norm,
                    cm.partial.norm
                );
                assert!(close(gm.partial.cosine, cm.partial.cosine), "{what} {k}");
                let error = relative(&gm.partial.first_layer, &cm.partial.first_layer);
                assert!(error < TOLERANCE, "{what} {k}: first layer off by {error:e}");
                assert_eq!(gm.batch_norm.is_some(), cm.batch_norm.is_some(), "{what} {k}");
                if let (Some(gs), Some(cs)) = (&gm.batch_norm, &cm.batch_norm) {
                    assert!(relative(&gs.mean, &cs.mean) < TOLERANCE, "{what} {k}");
                    assert!(relative(&gs.variance, &cs.variance) < TOLERANCE, "{what} {k}");
                }
            }
            assert!(close(gt.applied.norm, ct.applied.norm), "{what}");
        }
    }
}

/// The GPU times each run's optimizer steps with its own timestamps where the adapter offers
/// timestamp queries (lavapipe here, SwiftShader and hardware in browsers), steps read back in
/// bulk included; an adapter without them reports no time rather than a made-up one.
#[test]
fn the_gpu_times_each_runs_optimizer_steps_by_its_timestamps() {
    use gradlab::gpu::lab::GpuLab;
    let Some((context, _)) = gpu_device() else { return };
    let timed = context.timestamp_period_ns.is_some();
    eprintln!(
        "{}: timestamp queries {}",
        context.adapter_name,
        if timed { "offered" } else { "not offered" }
    );
    let config = LabConfig {
        batch_size: 64,
        ..Scenario::by_id("memory").unwrap().config
    };
    let mut gpu = GpuLab::new(context, config).unwrap();
    pollster::block_on(gpu.advance(3)).unwrap();
    pollster::block_on(gpu.advance(1)).unwrap();
    for run in gpu.lab().runs() {
        if timed {
            assert_eq!(run.step_times.steps(), 4, "{}", run.spec.label);
            let ms = run.step_times.mean_ms().unwrap();
            eprintln!("{}: {ms:.3} ms per optimizer step", run.spec.label);
            assert!(ms > 0.0 && ms < 60_000.0, "{}: {ms} ms", run.spec.label);
        } else {
            assert_eq!(run.step_times.mean_ms(), None);
        }
    }
}
