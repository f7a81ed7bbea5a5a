//! The tiny GPT's export: one JSON document (schema `gradlab-export` 4, `"model": "gpt"`) with
//! everything a replay in PyTorch needs, written while the labs train (one step in memory).
//! `docs/export-schema.md` states the conventions; `scripts/pytorch_gpt_replay.py` replays it.

use std::io::Write;

use serde::Serialize;

use super::lab::{GptLab, GptStepRecord, MicroBatchTokens, Reduction};
use super::spec::{GptSpec, GptTensor, LAYER_NORM_EPS};
use crate::export::{member, ExportError, EXPORT_SCHEMA, EXPORT_SCHEMA_VERSION};
use crate::real::Real;

/// The numerical conventions a replay must follow, named in the document itself.
#[derive(Debug, Clone, Serialize)]
struct Conventions {
    layer_norm_eps: f64,
    gelu: &'static str,
    attention_scale: &'static str,
    padding: &'static str,
    clipping: &'static str,
    optimizer: &'static str,
}

const CONVENTIONS: Conventions = Conventions {
    layer_norm_eps: LAYER_NORM_EPS,
    gelu: "tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))",
    attention_scale: "scores q.k / sqrt(head size), causal (position i attends to 0..=i), softmax over them",
    padding: "a micro-batch is padded after each example's last token to its longest example (input id 0); padded targets are ignored (ignore_index), and causal attention keeps them from every real position",
    clipping: "applied = gradient * min(1, clip / (norm(gradient) + 1e-6)), as torch.nn.utils.clip_grad_norm_",
    optimizer: "torch.optim.AdamW per step at steps[].runs[].metrics.learning_rate; weight decay only on tensors with decayed = true",
};

#[derive(Serialize)]
struct Architecture<'a> {
    #[serde(flatten)]
    spec: GptSpec,
    vocabulary: Vec<String>,
    parameter_count: usize,
    parameter_layout: &'a [GptTensor],
}

#[derive(Serialize)]
struct RunHeader {
    reduction: Reduction,
    formula: &'static str,
}

#[derive(Serialize)]
struct RunStep<'a> {
    metrics: &'a GptStepRecord,
    /// Each micro-batch's weight per token (one entry for the full batch).
    token_weights: Vec<f64>,
    /// The accumulated gradient, before clipping.
    gradient: Vec<f64>,
    /// Parameters after the step.
    parameters: Vec<f64>,
}

#[derive(Serialize)]
struct Step<'a> {
    step: u64,
    /// Each example's token ids, in the order consumed; micro-batch m holds the m-th
    /// `batch / micro_batches` of them.
    examples: Vec<&'a [u32]>,
    micro_batches: &'a [MicroBatchTokens],
    runs: Vec<RunStep<'a>>,
}

fn widened<T: Real>(values: &[T]) -> Vec<f64> {
    values.iter().map(|v| v.to_f64()).collect()
}

/// One part's object: its labs' settings, layout and initial weights, then `steps` steps.
fn write_part<T: Real>(
    label: &str,
    lab: &mut GptLab<T>,
    steps: u64,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(),
) -> Result<(), ExportError> {
    out.write_all(b"{")?;
    member(out, true, "part", &label)?;
    member(out, false, "config", lab.config())?;
    let architecture = Architecture {
        spec: lab.config().model,
        vocabulary: lab.corpus().vocabulary.chars().iter().map(char::to_string).collect(),
        parameter_count: lab.layout().parameter_count,
        parameter_layout: &lab.layout().tensors,
    };
    member(out, false, "architecture", &architecture)?;
    let initial = lab.runs().first().map(|r| widened(r.params())).unwrap_or_default();
    member(out, false, "initial_parameters", &initial)?;
    drop(initial);
    let runs: Vec<RunHeader> = lab
        .runs()
        .iter()
        .map(|r| RunHeader {
            reduction: r.reduction,
            formula: r.reduction.formula(),
        })
        .collect();
    member(out, false, "runs", &runs)?;
    out.write_all(b",\"steps\":[")?;
    for done in 0..steps {
        lab.step();
        let window = lab.window();
        let window_tokens: usize = window.iter().map(|m| m.tokens).sum();
        let n = lab.config().micro_batches;
        let step = Step {
            step: lab.step_count() - 1,
            examples: lab
                .last_batch()
                .iter()
                .map(|&i| lab.corpus().train[i].as_slice())
                .collect(),
            micro_batches: window,
            runs: lab
                .runs()
                .iter()
                .filter_map(|run| {
                    let metrics = run.history.last()?;
                    let token_weights = if run.reduction.accumulates() {
                        window
                            .iter()
                            .map(|m| run.reduction.token_weight(m.tokens, window_tokens, n))
                            .collect()
                    } else {
                        vec![Reduction::FullBatch.token_weight(window_tokens, window_tokens, 1)]
                    };
                    Some(RunStep {
                        metrics,
                        token_weights,
                        gradient: widened(run.gradient()),
                        parameters: widened(run.params()),
                    })
                })
                .collect(),
        };
        if done > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, &step)?;
        progress();
    }
    out.write_all(b"]}")?;
    Ok(())
}

/// Trains each `(label, lab)` part for `steps` steps, writing one document to `out`; calls
/// `progress()` after each step.
pub fn write_gpt_export<T: Real>(
    scenario: &str,
    parts: &mut [(&str, GptLab<T>)],
    steps: u64,
    out: &mut dyn Write,
    mut progress: impl FnMut(),
) -> Result<(), ExportError> {
    out.write_all(b"{")?;
    member(out, true, "schema", &EXPORT_SCHEMA)?;
    member(out, false, "schema_version", &EXPORT_SCHEMA_VERSION)?;
    member(out, false, "model", &"gpt")?;
    member(out, false, "engine", &format!("cpu-{}", T::NAME))?;
    member(out, false, "scenario", &scenario)?;
    member(out, false, "conventions", &CONVENTIONS)?;
    out.write_all(b",\"parts\":[")?;
    for (index, (label, lab)) in parts.iter_mut().enumerate() {
        if index > 0 {
            out.write_all(b",")?;
        }
        write_part(label, lab, steps, out, &mut progress)?;
    }
    out.write_all(b"]}\n")?;
    out.flush()?;
    Ok(())
}
