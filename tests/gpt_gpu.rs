//! The tiny GPT's WGSL kernels (the residual and attention families, with the linear, norm and
//! output families they share with the MLP) against the CPU engine: one micro-batch's losses
//! and every parameter's gradient, f32 on the GPU against f64 on the CPU, at the tolerance the
//! MLP's GPU engine is held to (tests/gpu_vs_cpu.rs); attention and the embeddings' gradient
//! kernel by themselves; accumulation on the GPU. lavapipe in CI.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

mod backends;
mod common;

use backends::gpu_device;
use common::relative;
use gradlab::gpu::context::GpuContext;
use gradlab::gpu::gpt::{GptGpuLab, GptGpuModel, RowSlot, TokenRows};
use gradlab::gpu::kernels::{AttentionParams, ResidualParams};
use gradlab::gpu::ops::{GpuOps, Recorder, Submitter};
use gradlab::gpu::readback::read_f32;
use gradlab::sim::gpt::attention::{self, Heads};
use gradlab::sim::gpt::lab::{GptLab, GptLabConfig};
use gradlab::sim::gpt::model::GptModel;
use gradlab::sim::gpt::spec::{GptLayout, GptSpec};
use gradlab::sim::gpt::text::{Corpus, ExampleKind, Play};
use gradlab::sim::rng::SeededRng;

const MACBETH: &str = include_str!("../assets/text/shakespeare/macbeth.txt");

/// GPU f32 against CPU f64, relative: 1e-5, or, where f32 arithmetic itself cannot reach it,
/// within 4 times the CPU f32 engine's own error, as tests/gpu_vs_cpu.rs holds the MLP's engine.
const TOLERANCE: f64 = 1e-5;
const F32_FACTOR: f64 = 4.0;

fn submit(context: &GpuContext, ops: &GpuOps, recorder: Recorder) {
    Submitter::new().submit(context, ops, recorder);
}

fn read(context: &GpuContext, buffer: &wgpu::Buffer, len: usize) -> Vec<f64> {
    let values = pollster::block_on(read_f32(context, buffer, len)).unwrap();
    values.into_iter().map(f64::from).collect()
}

fn to32(values: &[f64]) -> Vec<f32> {
    values.iter().map(|&v| v as f32).collect()
}

/// Parameters far from the initialization (std 0.3), so every nonlinearity is exercised.
fn perturbed(layout: &GptLayout, seed: u64) -> Vec<f64> {
    let mut rng = SeededRng::new(seed);
    layout.initialize(seed).iter().map(|p| p + 0.3 * rng.normal()).collect()
}

/// Random examples of the given lengths over `vocab` ids.
fn random_examples(vocab: usize, lengths: &[usize], seed: u64) -> Vec<Vec<u32>> {
    let mut rng = SeededRng::new(seed);
    lengths
        .iter()
        .map(|&len| (0..len).map(|_| rng.below(vocab) as u32).collect())
        .collect()
}

fn macbeth_lines(context: usize, count: usize) -> (usize, Vec<Vec<u32>>) {
    let corpus = Corpus::new(
        &[Play {
            name: "macbeth",
            text: MACBETH,
        }],
        ExampleKind::Lines,
        context,
    )
    .unwrap();
    (corpus.vocabulary.len(), corpus.train[..count].to_vec())
}

/// One micro-batch's forward and backward on the GPU: the row losses and `seed + weight ·
/// gradient` (the gradient buffer starts at `seed`, so accumulation is exercised).
fn gpu_forward_backward(
    layout: &GptLayout,
    params: &[f64],
    batches: &[&[&[u32]]],
    weight: f32,
    seed: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let (context, ops) = gpu_device().expect("checked by the caller");
    let rows: Vec<TokenRows> = batches.iter().map(|b| TokenRows::new(layout, b).unwrap()).collect();
    let most_rows = rows.iter().map(TokenRows::count).max().unwrap();
    let most_probs = rows.iter().map(TokenRows::probs_len).max().unwrap();
    let model = GptGpuModel::new(context, ops.clone(), layout.clone(), most_rows, most_probs);
    let len = GptGpuModel::buffer_len(layout);
    let mut values = to32(params);
    values.resize(len, 0.0);
    let parameters = context.storage_buffer("parameters", &values);
    let mut seeded = to32(seed);
    seeded.resize(len, 0.0);
    let grads = context.storage_buffer("gradients", &seeded);
    let total_rows: usize = rows.iter().map(TokenRows::count).sum();
    let row_loss = context.zeroed_buffer("row losses", total_rows);
    let mut recorder = Recorder::new();
    let mut offset = 0;
    let slots: Vec<RowSlot> = rows.iter().map(|r| RowSlot::new(context, r.count())).collect();
    for (r, slot) in rows.iter().zip(&slots) {
        slot.write(context, r).unwrap();
        model
            .record(
                &mut recorder,
                r,
                slot,
                &parameters,
                &row_loss,
                offset,
                Some((weight, &grads)),
            )
            .unwrap();
        offset += r.count();
    }
    submit(context, ops, recorder);
    let losses = read(context, &row_loss, total_rows);
    let gradient = read(context, &grads, layout.parameter_count);
    assert!(context.take_errors().is_empty());
    (losses, gradient)
}

fn cpu_forward_backward(
    layout: &GptLayout,
    params: &[f64],
    batch: &[&[u32]],
    weight: f64,
    seed: &[f64],
) -> (f64, Vec<f64>) {
    let mut model = GptModel::<f64>::new(layout.clone());
    let mut grads = seed.to_vec();
    let loss = model.forward_backward(params, batch, weight, 0.0, &mut grads);
    (loss, grads)
}

/// The CPU f32 engine's `seed + weight · gradient`, as f64.
fn cpu_f32_forward_backward(
    layout: &GptLayout,
    params: &[f64],
    batch: &[&[u32]],
    weight: f64,
    seed: &[f64],
) -> Vec<f64> {
    let mut model = GptModel::<f32>::new(layout.clone());
    let mut grads = to32(seed);
    model.forward_backward(&to32(params), batch, weight as f32, 0.0, &mut grads);
    grads.into_iter().map(f64::from).collect()
}

/// Every tensor's gradient and the loss, GPU against CPU f64, for one model and micro-batch.
fn gpu_matches_cpu(spec: GptSpec, vocab: usize, examples: &[Vec<u32>]) {
    if gpu_device().is_none() {
        return;
    }
    let layout = GptLayout::new(spec, vocab);
    let params = perturbed(&layout, 7);
    let batch: Vec<&[u32]> = examples.iter().map(Vec::as_slice).collect();
    let mut rng = SeededRng::new(3);
    let seed: Vec<f64> = (0..params.len()).map(|_| 0.01 * rng.normal()).collect();
    let weight = 1.0 / 37.0;
    let (cpu_loss, cpu_grads) = cpu_forward_backward(&layout, &params, &batch, weight, &seed);
    let f32_grads = cpu_f32_forward_backward(&layout, &params, &batch, weight, &seed);
    let (gpu_losses, gpu_grads) = gpu_forward_backward(&layout, &params, &[&batch], weight as f32, &seed);
    let gpu_loss: f64 = gpu_losses.iter().sum();
    let loss_error = (gpu_loss - cpu_loss).abs() / cpu_loss.abs();
    assert!(loss_error < TOLERANCE, "{spec:?}: loss {gpu_loss} vs {cpu_loss}");
    // What the micro-batch added, tensor by tensor: the seed's own rounding to f32 apart.
    for tensor in &layout.tensors {
        let range = tensor.offset..tensor.offset + tensor.len;
        let added = |grads: &[f64]| -> Vec<f64> { range.clone().map(|i| grads[i] - seed[i]).collect() };
        let (gpu, cpu) = (added(&gpu_grads), added(&cpu_grads));
        let error = relative(&gpu, &cpu);
        let f32_error = relative(&added(&f32_grads), &cpu);
        assert!(
            error < TOLERANCE.max(F32_FACTOR * f32_error),
            "{spec:?}: {} off by {error:e} (the CPU f32 engine by {f32_error:e})",
            tensor.name
        );
    }
}

#[test]
fn the_default_model_on_macbeth_lines_matches_the_cpu_engine() {
    let spec = GptSpec::default();
    let (vocab, lines) = macbeth_lines(spec.context, 6);
    gpu_matches_cpu(spec, vocab, &lines);
}

#[test]
fn unaligned_shapes_take_the_scalar_kernels_and_match_the_cpu_engine() {
    // Width 18 in 3 heads of 6, vocabulary 7: no row is whole vec4s.
    let spec = GptSpec {
        layers: 2,
        embedding: 18,
        heads: 3,
        context: 16,
    };
    gpu_matches_cpu(spec, 7, &random_examples(7, &[17, 2, 9, 5, 12], 4));
}

#[test]
fn one_layer_one_head_at_the_widest_matches_the_cpu_engine() {
    let spec = GptSpec {
        layers: 1,
        embedding: 128,
        heads: 1,
        context: 20,
    };
    gpu_matches_cpu(spec, 11, &random_examples(11, &[21, 4, 13], 5));
}

#[test]
fn attention_kernels_match_the_cpu_reference() {
    let Some((context, ops)) = gpu_device() else { return };
    let (d, heads) = (12, 3);
    let lengths = [5, 1, 8];
    let mut rng = SeededRng::new(9);
    // The rows only need positions and lengths here: any vocabulary that holds the ids.
    let layout = GptLayout::new(
        GptSpec {
            layers: 1,
            embedding: d,
            heads,
            context: 16,
        },
        4,
    );
    let examples = random_examples(4, &lengths.map(|l| l + 1), 2);
    let batch: Vec<&[u32]> = examples.iter().map(Vec::as_slice).collect();
    let rows = TokenRows::new(&layout, &batch).unwrap();
    let n = rows.count();
    let qkv: Vec<f64> = (0..n * 3 * d).map(|_| rng.normal()).collect();
    let dy: Vec<f64> = (0..n * d).map(|_| rng.normal()).collect();
    // The CPU reference, example by example.
    let shape = Heads { width: d, heads };
    let (mut y, mut dqkv, mut scratch) = (vec![0.0; n * d], vec![0.0; n * 3 * d], Vec::new());
    let mut start = 0;
    for &len in &lengths {
        let mut probs = vec![0.0; shape.probs_len(len)];
        let q = &qkv[start * 3 * d..(start + len) * 3 * d];
        attention::forward(
            shape,
            q,
            len,
            &mut probs,
            &mut y[start * d..(start + len) * d],
            &mut scratch,
        );
        let g = &dy[start * d..(start + len) * d];
        let out = &mut dqkv[start * 3 * d..(start + len) * 3 * d];
        attention::backward(shape, q, len, &probs, g, out, &mut scratch);
        start += len;
    }
    let slot = RowSlot::new(context, n);
    slot.write(context, &rows).unwrap();
    let params = AttentionParams::new(n, d, heads, rows.probs_len()).unwrap();
    let qkv_buffer = context.storage_buffer("qkv", &to32(&qkv));
    let dy_buffer = context.storage_buffer("dy", &to32(&dy));
    let probs = context.zeroed_buffer("probs", rows.probs_len());
    let dscores = context.zeroed_buffer("dscores", rows.probs_len());
    let y_buffer = context.zeroed_buffer("y", n * d);
    let dqkv_buffer = context.zeroed_buffer("dqkv", n * 3 * d);
    let table = slot_table(context, &rows);
    let mut recorder = Recorder::new();
    ops.attention_forward(&mut recorder, params, &table, &qkv_buffer, &probs, &y_buffer)
        .unwrap();
    ops.attention_backward(
        &mut recorder,
        params,
        &table,
        &qkv_buffer,
        &probs,
        &dy_buffer,
        &dscores,
        &dqkv_buffer,
    )
    .unwrap();
    submit(context, ops, recorder);
    let gpu_y = read(context, &y_buffer, n * d);
    let gpu_dqkv = read(context, &dqkv_buffer, n * 3 * d);
    assert!(relative(&gpu_y, &y) < TOLERANCE, "y off by {:e}", relative(&gpu_y, &y));
    assert!(
        relative(&gpu_dqkv, &dqkv) < TOLERANCE,
        "dqkv off by {:e}",
        relative(&gpu_dqkv, &dqkv)
    );
    // A position never attends to a later one: changing the last row's keys and values changes
    // no earlier row's output of its example, to the bit, and changes its own.
    let last = n - 1;
    let mut changed = qkv.clone();
    for value in &mut changed[last * 3 * d + d..(last + 1) * 3 * d] {
        *value += 1.0;
    }
    let changed_buffer = context.storage_buffer("qkv changed", &to32(&changed));
    let y_changed = context.zeroed_buffer("y changed", n * d);
    let mut recorder = Recorder::new();
    ops.attention_forward(&mut recorder, params, &table, &changed_buffer, &probs, &y_changed)
        .unwrap();
    submit(context, ops, recorder);
    let gpu_y_changed = read(context, &y_changed, n * d);
    let start = n - lengths[2];
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&gpu_y_changed[start * d..last * d]),
        bits(&gpu_y[start * d..last * d])
    );
    assert_ne!(bits(&gpu_y_changed[last * d..]), bits(&gpu_y[last * d..]));
}

/// The token rows as a storage buffer the kernels bind directly.
fn slot_table(context: &GpuContext, rows: &TokenRows) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    context.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("token rows"),
        contents: bytemuck::cast_slice(rows.table()),
        usage: wgpu::BufferUsages::STORAGE,
    })
}

#[test]
fn the_embeddings_gradient_adds_rows_in_order_as_the_cpu_engine_bit_for_bit() {
    let Some((context, ops)) = gpu_device() else { return };
    let layout = GptLayout::new(
        GptSpec {
            layers: 1,
            embedding: 16,
            heads: 2,
            context: 16,
        },
        9,
    );
    let examples = random_examples(9, &[17, 6, 11, 3], 8);
    let batch: Vec<&[u32]> = examples.iter().map(Vec::as_slice).collect();
    let rows = TokenRows::new(&layout, &batch).unwrap();
    let (n, d) = (rows.count(), 16);
    let mut rng = SeededRng::new(4);
    let dx: Vec<f32> = (0..n * d).map(|_| rng.normal() as f32).collect();
    let seed: Vec<f32> = (0..layout.parameter_count).map(|_| rng.normal() as f32).collect();
    // The CPU engine's order: row after row, token then position.
    let mut expected = seed.clone();
    let mut r = 0;
    for example in &examples {
        for (position, &token) in example[..example.len() - 1].iter().enumerate() {
            for c in 0..d {
                expected[layout.wte + token as usize * d + c] += dx[r * d + c];
                expected[layout.wpe + position * d + c] += dx[r * d + c];
            }
            r += 1;
        }
    }
    let table = slot_table(context, &rows);
    let dx_buffer = context.storage_buffer("dx", &dx);
    let grads = context.storage_buffer("grads", &seed);
    let params = ResidualParams {
        rows: n as u32,
        width: d as u32,
        wte_offset: layout.wte as u32,
        wpe_offset: layout.wpe as u32,
        vocab: layout.vocab as u32,
        context: layout.spec.context as u32,
        ..ResidualParams::default()
    };
    let mut recorder = Recorder::new();
    ops.residual_embed_backward(&mut recorder, params, &table, &dx_buffer, &grads)
        .unwrap();
    submit(context, ops, recorder);
    let got = pollster::block_on(read_f32(context, &grads, seed.len())).unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&expected));
}

#[test]
fn micro_batches_accumulated_on_the_gpu_equal_the_full_batch() {
    if gpu_device().is_none() {
        return;
    }
    let spec = GptSpec::default();
    let (vocab, lines) = macbeth_lines(spec.context, 8);
    let layout = GptLayout::new(spec, vocab);
    let params = perturbed(&layout, 2);
    let all: Vec<&[u32]> = lines.iter().map(Vec::as_slice).collect();
    let tokens: usize = lines.iter().map(|l| l.len() - 1).sum();
    let weight = 1.0 / tokens as f32;
    let zeros = vec![0.0; params.len()];
    let (full_losses, full) = gpu_forward_backward(&layout, &params, &[&all], weight, &zeros);
    let quarters: [&[&[u32]]; 4] = [&all[..2], &all[2..4], &all[4..6], &all[6..]];
    let (micro_losses, accumulated) = gpu_forward_backward(&layout, &params, &quarters, weight, &zeros);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&micro_losses), bits(&full_losses), "row losses");
    assert_eq!(bits(&accumulated), bits(&full), "gradient");
}

#[test]
fn rows_outside_the_model_are_refused_before_any_dispatch() {
    let layout = GptLayout::new(
        GptSpec {
            layers: 1,
            embedding: 16,
            heads: 2,
            context: 16,
        },
        5,
    );
    let too_long = vec![0u32; 18];
    assert!(TokenRows::new(&layout, &[&too_long]).is_err());
    assert!(TokenRows::new(&layout, &[&[1, 5, 2]]).is_err());
    let fits = vec![1u32; 17];
    let rows = TokenRows::new(&layout, &[&fits, &[0, 1]]).unwrap();
    assert_eq!(rows.count(), 17);
    assert_eq!(rows.probs_len(), 2 * 16 * 16 + 2);
}

fn lab_config(kind: ExampleKind) -> GptLabConfig {
    GptLabConfig {
        model: GptSpec {
            layers: 2,
            embedding: 32,
            heads: 4,
            context: 32,
        },
        examples: kind,
        batch: 8,
        micro_batches: 4,
        eval_every: 4,
        eval_examples: 20,
        ..GptLabConfig::default()
    }
}

fn macbeth(kind: ExampleKind, context: usize) -> Corpus {
    Corpus::new(
        &[Play {
            name: "macbeth",
            text: MACBETH,
        }],
        kind,
        context,
    )
    .unwrap()
}

/// The GPU lab's steps against the CPU lab's in f64: every record within the tolerance, and
/// where accumulation must equal the full batch it does exactly (a reported error of 0).
fn gpu_lab_takes_the_cpu_labs_steps(kind: ExampleKind) {
    let Some((context, ops)) = gpu_device() else { return };
    let config = lab_config(kind);
    let steps = 9;
    let mut cpu = GptLab::<f64>::new(config.clone(), macbeth(kind, 32)).unwrap();
    for _ in 0..steps {
        cpu.step();
    }
    let mut gpu = GptGpuLab::new(context, ops.clone(), config, macbeth(kind, 32)).unwrap();
    pollster::block_on(gpu.advance(steps)).unwrap();
    assert_eq!(gpu.step_count(), steps);
    assert_eq!(gpu.last_batch(), cpu.last_batch());
    assert_eq!(gpu.window(), cpu.window());
    let close = |what: &str, g: f64, c: f64| {
        assert!(
            (g - c).abs() <= TOLERANCE * c.abs().max(1e-3),
            "{kind:?} {what}: GPU {g} against CPU {c}"
        );
    };
    for (r, (reduction, history)) in gpu.histories().enumerate() {
        let cpu_run = &cpu.runs()[r];
        assert_eq!(reduction, cpu_run.reduction);
        assert_eq!(history.len(), cpu_run.history.len());
        for (g, c) in history.iter().zip(&cpu_run.history) {
            let at = format!("{reduction:?} step {}", c.step);
            assert_eq!(g.step, c.step);
            close(&format!("{at} train loss"), g.train_loss, c.train_loss);
            close(&format!("{at} gradient norm"), g.grad_norm, c.grad_norm);
            assert_eq!(g.validation_loss.is_some(), c.validation_loss.is_some(), "{at}");
            if let (Some(gv), Some(cv)) = (g.validation_loss, c.validation_loss) {
                close(&format!("{at} validation loss"), gv, cv);
            }
            match (g.grad_relative_error, c.grad_relative_error) {
                (Some(ge), Some(0.0)) => assert_eq!(ge, 0.0, "{at}: must equal the full batch"),
                (Some(ge), Some(ce)) => close(&format!("{at} gradient error"), ge, ce),
                (ge, ce) => assert_eq!(ge.is_some(), ce.is_some(), "{at}"),
            }
        }
        let gpu_params: Vec<f64> = pollster::block_on(gpu.read_parameters(r))
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect();
        let error = relative(&gpu_params, cpu_run.params());
        assert!(error < TOLERANCE, "{kind:?} {reduction:?}: parameters off by {error:e}");
    }
}

#[test]
fn the_gpu_lab_takes_the_cpu_labs_steps_on_lines() {
    gpu_lab_takes_the_cpu_labs_steps(ExampleKind::Lines);
}

#[test]
fn the_gpu_lab_takes_the_cpu_labs_steps_on_blocks() {
    gpu_lab_takes_the_cpu_labs_steps(ExampleKind::Blocks);
}

#[test]
fn the_webgpu_workspace_is_the_memory_formula() {
    use gradlab::sim::gpt::memory::GptPassBytes;
    let Some((context, ops)) = gpu_device() else { return };
    for (spec, vocab, rows, probs) in [
        (GptSpec::default(), 72, 2048, 4 * 32 * 64 * 64),
        (GptSpec::default(), 72, 256, 4 * 4 * 64 * 64),
        (
            GptSpec {
                layers: 3,
                embedding: 18,
                heads: 3,
                context: 17,
            },
            7,
            33,
            3 * 151,
        ),
    ] {
        let layout = GptLayout::new(spec, vocab);
        let model = GptGpuModel::new(context, ops.clone(), layout.clone(), rows, probs);
        assert_eq!(
            model.activation_bytes(),
            GptPassBytes::webgpu(&layout, rows, probs),
            "{spec:?}"
        );
    }
}
