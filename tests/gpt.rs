//! The tiny GPT on the CPU: finite-difference checks of the whole model, f32 against f64, and
//! the token-count identities of accumulation on real text (lines and fixed blocks).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

mod common;

use common::relative;
use gradlab::sim::gpt::lab::{GptLab, GptLabConfig, Reduction};
use gradlab::sim::gpt::model::GptModel;
use gradlab::sim::gpt::spec::{GptLayout, GptSpec};
use gradlab::sim::gpt::text::{Corpus, ExampleKind, Play};
use gradlab::sim::real::Real;
use gradlab::sim::rng::SeededRng;

const MACBETH: &str = include_str!("../assets/text/shakespeare/macbeth.txt");

/// Central differences with step 1e-6 in f64 (truncation ~1e-12 relative): a wrong formula
/// gives errors of order 1, so 1e-6 hides none.
const STEP: f64 = 1e-6;
const TOLERANCE: f64 = 1e-6;

fn small_spec() -> GptSpec {
    GptSpec {
        layers: 2,
        embedding: 8,
        heads: 2,
        context: 6,
    }
}

/// Examples of several lengths (2 to 7 tokens) over a vocabulary of 5.
fn examples(vocab: u32) -> Vec<Vec<u32>> {
    let mut rng = SeededRng::new(11);
    [7, 3, 5, 2, 6]
        .iter()
        .map(|&len| (0..len).map(|_| rng.below(vocab as usize) as u32).collect())
        .collect()
}

/// Parameters far from the initialization (std 0.5), so every nonlinearity is exercised.
fn perturbed(layout: &GptLayout) -> Vec<f64> {
    let mut rng = SeededRng::new(5);
    layout.initialize(3).iter().map(|p| p + 0.5 * rng.normal()).collect()
}

fn loss_of(model: &mut GptModel<f64>, params: &[f64], examples: &[&[u32]]) -> f64 {
    model.loss(params, examples, 0.0)
}

#[test]
fn every_parameters_gradient_matches_finite_differences() {
    let layout = GptLayout::new(small_spec(), 5);
    let params = perturbed(&layout);
    let data = examples(5);
    let batch: Vec<&[u32]> = data.iter().map(Vec::as_slice).collect();
    let mut model = GptModel::<f64>::new(layout.clone());
    let mut grads = vec![0.0; params.len()];
    let weight = 0.37;
    model.forward_backward(&params, &batch, weight, 0.0, &mut grads);
    let mut probe = params.clone();
    let mut numeric = vec![0.0; params.len()];
    for i in 0..params.len() {
        probe[i] = params[i] + STEP;
        let up = loss_of(&mut model, &probe, &batch);
        probe[i] = params[i] - STEP;
        let down = loss_of(&mut model, &probe, &batch);
        probe[i] = params[i];
        numeric[i] = weight * (up - down) / (2.0 * STEP);
    }
    for tensor in &layout.tensors {
        let range = tensor.offset..tensor.offset + tensor.len;
        let error = relative(&grads[range.clone()], &numeric[range.clone()]);
        assert!(
            error < TOLERANCE,
            "{}: relative error {error:e}\nanalytic {:?}\nnumeric {:?}",
            tensor.name,
            &grads[range.clone()],
            &numeric[range]
        );
        // wpe's rows past the longest input and the vocabulary's unused ids get no gradient;
        // every other tensor must get one.
        if !tensor.name.contains("wpe") && !tensor.name.contains("wte") {
            assert!(
                grads[tensor.offset..tensor.offset + tensor.len]
                    .iter()
                    .any(|&g| g != 0.0),
                "{}",
                tensor.name
            );
        }
    }
}

#[test]
fn the_f32_engine_agrees_with_f64() {
    let layout = GptLayout::new(GptSpec::default(), 30);
    let params = layout.initialize(9);
    let mut rng = SeededRng::new(2);
    let data: Vec<Vec<u32>> = (0..6)
        .map(|i| (0..20 + 9 * i).map(|_| rng.below(30) as u32).collect())
        .collect();
    let batch: Vec<&[u32]> = data.iter().map(Vec::as_slice).collect();
    let run = |params: &[f64]| {
        let mut model = GptModel::<f64>::new(layout.clone());
        let mut grads = vec![0.0; params.len()];
        let loss = model.forward_backward(params, &batch, 1.0 / 200.0, 0.0, &mut grads);
        (loss, grads)
    };
    let (loss64, grads64) = run(&params);
    let params32: Vec<f32> = params.iter().map(|&p| p as f32).collect();
    let mut model = GptModel::<f32>::new(layout.clone());
    let mut grads32 = vec![0.0f32; params.len()];
    let loss32 = model.forward_backward(&params32, &batch, 1.0 / 200.0, 0.0, &mut grads32);
    let grads32: Vec<f64> = grads32.iter().map(|&g| f64::from(g)).collect();
    let loss_error = (f64::from(loss32) - loss64).abs() / loss64;
    let grad_error = relative(&grads32, &grads64);
    // f32 keeps 24 bits: relative rounding 6e-8 per operation, over a few hundred operations
    // deep; measured 2.7e-7 (loss) and 3.7e-7 (gradient). A wrong kernel is off by order 1.
    assert!(loss_error < 1e-5, "loss {loss32} vs {loss64}");
    assert!(grad_error < 1e-5, "gradient relative error {grad_error:e}");
}

fn corpus(kind: ExampleKind, context: usize) -> Corpus {
    Corpus::new(
        &[Play {
            name: "macbeth",
            text: MACBETH,
        }],
        kind,
        context,
    )
    .expect("macbeth")
}

fn config(kind: ExampleKind) -> GptLabConfig {
    GptLabConfig {
        model: GptSpec {
            layers: 1,
            embedding: 16,
            heads: 2,
            context: 24,
        },
        examples: kind,
        batch: 8,
        micro_batches: 4,
        eval_every: 0,
        ..GptLabConfig::default()
    }
}

fn new_lab<T: Real>(kind: ExampleKind) -> GptLab<T> {
    GptLab::<T>::new(config(kind), corpus(kind, 24)).expect("lab")
}

fn bits<T: Real>(values: &[T]) -> Vec<u64> {
    values.iter().map(|v| v.to_f64().to_bits()).collect()
}

fn run_index<T: Real>(lab: &GptLab<T>, reduction: Reduction) -> usize {
    lab.runs().iter().position(|r| r.reduction == reduction).expect("run")
}

fn lines_fix_equals_the_full_batch_to_the_bit<T: Real>() {
    let mut lab = new_lab::<T>(ExampleKind::Lines);
    let (full, mean, fix) = (
        run_index(&lab, Reduction::FullBatch),
        run_index(&lab, Reduction::MicroBatchMean),
        run_index(&lab, Reduction::WindowTokens),
    );
    for _ in 0..5 {
        lab.step();
        let runs = lab.runs();
        assert_eq!(bits(runs[fix].gradient()), bits(runs[full].gradient()), "{}", T::NAME);
        assert_eq!(bits(runs[fix].params()), bits(runs[full].params()));
        assert_eq!(
            runs[fix].history.last().map(|r| r.train_loss),
            runs[full].history.last().map(|r| r.train_loss)
        );
        let record = runs[fix].history.last().expect("record");
        assert_eq!(record.grad_relative_error, Some(0.0));
    }
    // The per-micro-batch mean drifts: its window's token counts differ.
    let runs = lab.runs();
    assert_ne!(bits(runs[mean].params()), bits(runs[full].params()));
    assert!(
        lab.window().iter().any(|m| m.tokens != lab.window()[0].tokens),
        "{:?}",
        lab.window()
    );
}

#[test]
fn lines_fix_equals_the_full_batch_to_the_bit_f32() {
    lines_fix_equals_the_full_batch_to_the_bit::<f32>();
}

#[test]
fn lines_fix_equals_the_full_batch_to_the_bit_f64() {
    lines_fix_equals_the_full_batch_to_the_bit::<f64>();
}

fn blocks_all_three_agree_to_the_bit<T: Real>() {
    let mut lab = new_lab::<T>(ExampleKind::Blocks);
    for _ in 0..5 {
        lab.step();
        assert!(lab
            .window()
            .iter()
            .all(|m| m.tokens == 24 * 2 && m.padded_tokens == m.tokens));
        let runs = lab.runs();
        for run in &runs[1..] {
            assert_eq!(
                bits(run.gradient()),
                bits(runs[0].gradient()),
                "{:?} ({})",
                run.reduction,
                T::NAME
            );
            assert_eq!(bits(run.params()), bits(runs[0].params()));
        }
    }
}

#[test]
fn blocks_all_three_agree_to_the_bit_f32() {
    blocks_all_three_agree_to_the_bit::<f32>();
}

#[test]
fn blocks_all_three_agree_to_the_bit_f64() {
    blocks_all_three_agree_to_the_bit::<f64>();
}

/// The per-micro-batch mean's gradient is `sum_m G_m / (N · T_m)` where the full batch's is
/// `sum_m G_m / T` (`G_m`: micro-batch m's summed token-loss gradient): its error is what the
/// token counts predict.
#[test]
fn the_micro_batch_mean_is_off_by_what_the_token_counts_predict() {
    let mut lab = new_lab::<f64>(ExampleKind::Lines);
    for _ in 0..3 {
        lab.step();
    }
    // Recompute the last step's micro-batch gradients at the weights the step started from,
    // which a second lab, one step behind, holds.
    let mut behind = new_lab::<f64>(ExampleKind::Lines);
    behind.step();
    behind.step();
    let mean = run_index(&lab, Reduction::MicroBatchMean);
    let params = behind.runs()[mean].params().to_vec();
    let step_examples: Vec<Vec<u32>> = lab
        .last_batch()
        .iter()
        .map(|&i| lab.corpus().train[i].clone())
        .collect();
    let n = 4;
    let per_micro = step_examples.len() / n;
    let mut model = GptModel::<f64>::new(lab.layout().clone());
    let mut predicted = vec![0.0; params.len()];
    let mut full = vec![0.0; params.len()];
    let total: usize = step_examples.iter().map(|e| e.len() - 1).sum();
    for micro in step_examples.chunks(per_micro) {
        let batch: Vec<&[u32]> = micro.iter().map(Vec::as_slice).collect();
        let tokens: usize = micro.iter().map(|e| e.len() - 1).sum();
        let mut g = vec![0.0; params.len()];
        model.forward_backward(&params, &batch, 1.0, 0.0, &mut g);
        for ((p, f), g) in predicted.iter_mut().zip(&mut full).zip(&g) {
            *p += g / (n * tokens) as f64;
            *f += g / total as f64;
        }
    }
    let actual = lab.runs()[mean].gradient();
    assert!(
        relative(actual, &predicted) < 1e-12,
        "{:e}",
        relative(actual, &predicted)
    );
    let record = lab.runs()[mean].history.last().expect("record");
    let predicted_error = relative(&predicted, &full);
    assert!(
        predicted_error > 1e-3,
        "the counts differ, so must the gradients: {predicted_error:e}"
    );
    let reported = record.grad_relative_error.expect("compared");
    assert!(
        (reported - predicted_error).abs() < 1e-9 * predicted_error,
        "{reported} vs {predicted_error}"
    );
}

#[test]
fn the_model_learns_macbeth_and_samples_from_it() {
    let mut config = config(ExampleKind::Lines);
    config.eval_every = 40;
    config.eval_examples = 64;
    config.runs = vec![Reduction::FullBatch];
    config.compare = false;
    let mut lab = GptLab::<f32>::new(config, corpus(ExampleKind::Lines, 24)).expect("lab");
    let start = lab.validation_loss(0);
    for _ in 0..80 {
        lab.step();
    }
    let end = lab.runs()[0]
        .history
        .last()
        .and_then(|r| r.validation_loss)
        .expect("measured");
    // A uniform guess over the vocabulary costs ln(V) nats; the first steps learn the
    // characters' frequencies.
    let uniform = (lab.corpus().vocabulary.len() as f64).ln();
    assert!((start - uniform).abs() < 0.1, "start {start} vs ln V {uniform}");
    assert!(end < start - 0.5, "validation loss {start} -> {end}");
    let text = lab.sample(0, "MACBETH.\n", 40, 0.8, 1);
    assert_eq!(text.chars().count(), 40);
    assert_eq!(text, lab.sample(0, "MACBETH.\n", 40, 0.8, 1), "seeded");
}

#[test]
fn a_mirror_fed_updates_holds_the_labs_histories() {
    let mut lab = new_lab::<f32>(ExampleKind::Lines);
    let mut mirror = gradlab::sim::gpt::lab::GptMirror::new(lab.config().runs.clone());
    let mut sent = Vec::new();
    for chunk in [2, 3] {
        for _ in 0..chunk {
            lab.step();
        }
        mirror.apply(lab.update_since(&mut sent));
    }
    assert_eq!(mirror.steps_taken, 5);
    for (run, history) in lab.runs().iter().zip(&mirror.histories) {
        assert_eq!(&run.history, history);
    }
    assert_eq!(mirror.window, lab.window());
    assert!(lab.update_since(&mut sent).records.iter().all(Vec::is_empty));
    assert_eq!(mirror.history(Reduction::WindowTokens).map(<[_]>::len), Some(5));
}

/// The CPU engine's activation buffers are what `GptPassBytes::cpu` says for the largest pass
/// they met (its tokens and its attention values, which may come from different passes).
fn the_cpu_engines_activation_buffers_are_the_formula<T: Real>() {
    use gradlab::sim::gpt::memory::{attention_values, GptPassBytes};
    // One accumulated run, no comparison: every pass is a micro-batch.
    let config = GptLabConfig {
        compare: false,
        runs: vec![Reduction::WindowTokens],
        ..config(ExampleKind::Lines)
    };
    let mut lab = GptLab::<T>::new(config.clone(), corpus(ExampleKind::Lines, 24)).unwrap();
    let (mut rows, mut probs) = (0, 0);
    for _ in 0..4 {
        lab.step();
        let examples: Vec<&[u32]> = lab
            .last_batch()
            .iter()
            .map(|&i| lab.corpus().train[i].as_slice())
            .collect();
        for micro in examples.chunks(config.batch / config.micro_batches) {
            rows = rows.max(micro.iter().map(|e| e.len() - 1).sum());
            probs = probs.max(attention_values(config.model.heads, micro));
        }
    }
    assert!(rows > 0 && probs > 0);
    let expected = GptPassBytes::cpu(lab.layout(), rows, probs, size_of::<T>());
    assert_eq!(lab.activation_bytes(), expected);
}

#[test]
fn the_cpu_engines_activation_buffers_are_the_formula_f32() {
    the_cpu_engines_activation_buffers_are_the_formula::<f32>();
}

#[test]
fn the_cpu_engines_activation_buffers_are_the_formula_f64() {
    the_cpu_engines_activation_buffers_are_the_formula::<f64>();
}

#[test]
fn accumulating_in_n_passes_keeps_an_nth_of_the_activations() {
    use gradlab::sim::gpt::memory::{measure, micro_batch_counts};
    assert_eq!(micro_batch_counts(32), vec![1, 2, 4, 8, 16, 32]);
    assert_eq!(micro_batch_counts(12), vec![1, 2, 4]);
    let config = config(ExampleKind::Blocks);
    // A clock that ticks a millisecond per reading: times are the bench's business, not a test's.
    let ticks = std::cell::Cell::new(0.0);
    let now = || {
        ticks.set(ticks.get() + 1.0);
        ticks.get()
    };
    let rows = measure::<f32>(&config, &corpus(ExampleKind::Blocks, 24), 2, &now).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.micro_batches).collect::<Vec<_>>(),
        vec![1, 2, 4, 8]
    );
    let full = rows[0];
    assert_eq!(full.tokens_per_pass, config.batch * 24);
    for row in &rows {
        // Fixed blocks: every pass holds batch / N examples of exactly the context, so each kind
        // of activation is exactly an Nth of the full batch's; the logits too.
        let n = row.micro_batches as u64;
        assert_eq!(row.examples_per_pass * row.micro_batches, config.batch);
        assert_eq!(row.tokens_per_pass as u64 * n, full.tokens_per_pass as u64);
        assert_eq!(row.bytes.per_token * n, full.bytes.per_token, "N = {n}");
        assert_eq!(row.bytes.attention * n, full.bytes.attention, "N = {n}");
        assert_eq!(row.bytes.logits * n, full.bytes.logits, "N = {n}");
        assert_eq!(row.ms_per_step, 0.5, "one tick over the two timed steps");
    }
}

#[test]
fn the_trace_of_a_step_fills_each_runs_buffer_pass_by_pass() {
    let mut lab = new_lab::<f64>(ExampleKind::Lines);
    lab.step();
    lab.step();
    let n = lab.config().micro_batches;
    let trace = lab.trace_step(&[], None).unwrap();
    let tokens = trace.window_tokens;
    let full = &trace.runs[run_index(&lab, Reduction::FullBatch)];
    assert_eq!(full.passes.len(), 1);
    assert_eq!(full.passes[0].tokens, tokens);
    assert_eq!(full.passes[0].buffer_error, 0.0, "the full batch is its own reference");
    let fix = &trace.runs[run_index(&lab, Reduction::WindowTokens)];
    let mean = &trace.runs[run_index(&lab, Reduction::MicroBatchMean)];
    assert_eq!(fix.passes.len(), n);
    assert_eq!(fix.passes.iter().map(|p| p.tokens).sum::<usize>(), tokens);
    assert!(
        fix.passes[0].buffer_error > 0.1,
        "one micro-batch of {n} is far from the whole"
    );
    assert_eq!(
        fix.passes[n - 1].buffer_error,
        0.0,
        "the fix ends exactly at the full batch"
    );
    assert!(
        mean.passes[n - 1].buffer_error > 1e-3,
        "the per-micro-batch mean ends elsewhere"
    );
    for (f, m) in fix.passes.iter().zip(&mean.passes) {
        assert_eq!(f.token_weight, 1.0 / tokens as f64);
        assert_eq!(m.token_weight, 1.0 / (n * m.tokens) as f64);
        assert_eq!((f.examples, f.tokens), (m.examples, m.tokens), "the same micro-batches");
    }
    // The fix's weights are the full batch's (bit for bit on lines): its passes' losses add up
    // to the full batch's.
    let summed: f64 = fix.passes.iter().map(|p| p.loss_sum).sum();
    assert!((summed - full.passes[0].loss_sum).abs() < 1e-12 * summed);
    // The runs' own weights, given, trace the same; weights of another shape are refused.
    let weights: Vec<Vec<f64>> = lab.runs().iter().map(|r| r.params().to_vec()).collect();
    assert_eq!(lab.trace_step(&[], Some(&weights)), Some(trace));
    assert_eq!(lab.trace_step(&[], Some(&weights[..1])), None);
    assert_eq!(lab.trace_step(&[usize::MAX], None), None);
}
