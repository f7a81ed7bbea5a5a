//! Will it fit? Turns a device's memory budget into a micro-batch and a number of accumulation
//! steps for a real transformer (or the Lab's own network), and says what each choice costs.
//!
//! Plain arithmetic, written down and cited in `docs/memory-model.md`:
//! - parameter counts per architecture family, exact (tests hold them to the published counts);
//! - bytes per parameter for each precision and optimizer (mixed-precision Adam: 2 + 2 + 12, the
//!   ZeRO paper's figure), divided by the devices that shard them (ZeRO stages 1 to 3);
//! - activations of one micro-batch per transformer layer, s·b·h·(34 + 5·a·s/h) bytes in 16-bit
//!   without recomputation (Korthikanti et al. 2022), or the layer inputs plus one layer with
//!   full checkpointing, plus the logits (kept in fp32 for the loss);
//! - a margin of [`MARGIN_FRACTION`] of the budget for the runtime, workspaces and fragmentation.
//!
//! The search for the largest micro-batch is the known one: powers of two, then bisection.

use serde::Serialize;
use thiserror::Error;

use super::engine_memory::{micro_batch_bytes, LabEngine};
use super::model::{Layout, ModelSpec};

/// What the budget keeps back for the CUDA context, library workspaces and fragmentation.
pub const MARGIN_FRACTION: f64 = 0.10;
/// Bytes per parameter of a 4-bit NF4 base with double-quantized constants (QLoRA: 4.127 bits).
pub const NF4_BYTES_PER_PARAMETER: f64 = 4.127 / 8.0;
/// Bounds that keep every product in range and every request meaningful.
const MAX_LAYERS: u64 = 10_000;
const MAX_WIDTH: u64 = 1 << 20;
const MAX_VOCABULARY: u64 = 1 << 24;
const MAX_SEQUENCE: u64 = 1 << 22;
const MAX_DEVICES: u64 = 1 << 16;
const MAX_TARGET: u64 = 1 << 32;
/// The Lab's engines train at most this many examples per step.
const MAX_LAB_TARGET: u64 = 1 << 16;
/// The Lab's MLP: the memory preset's network, 2-D points in, 3 classes out.
const LAB_INPUTS: usize = 2;
const LAB_CLASSES: usize = 3;

/// A request the planner cannot answer, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field}: {problem}")]
pub struct PlanError {
    pub field: &'static str,
    pub problem: String,
}

fn refuse(field: &'static str, problem: impl Into<String>) -> PlanError {
    PlanError {
        field,
        problem: problem.into(),
    }
}

/// `value` must be 1 to `max`.
fn within(field: &'static str, value: u64, max: u64) -> Result<(), PlanError> {
    if value == 0 || value > max {
        Err(refuse(field, format!("must be 1 to {max}, got {value}")))
    } else {
        Ok(())
    }
}

/// How a family builds its blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// GPT-2: learned positions, LayerNorm with bias, biases everywhere, a 4·h GELU MLP, tied
    /// embeddings.
    Gpt2,
    /// Llama and Mistral: RMSNorm, no biases, SwiGLU (gate, up, down), grouped key/value heads.
    Llama,
    /// Qwen2: as Llama, with biases on the query, key and value projections.
    Qwen2,
}

/// A decoder-only transformer's dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transformer {
    pub family: Family,
    pub layers: u64,
    pub hidden: u64,
    pub heads: u64,
    pub kv_heads: u64,
    /// The MLP's inner width (4·hidden for GPT-2).
    pub intermediate: u64,
    pub vocabulary: u64,
    /// Learned positions (GPT-2); 0 for rotary families.
    pub positions: u64,
    pub tied_embeddings: bool,
}

/// Parameters of one model, by component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ParameterCounts {
    pub total: u64,
    pub embeddings: u64,
    pub attention: u64,
    pub mlp: u64,
    pub norms: u64,
    pub lm_head: u64,
}

impl Transformer {
    fn head_dim(&self) -> u64 {
        self.hidden / self.heads
    }

    fn kv_width(&self) -> u64 {
        self.kv_heads * self.head_dim()
    }

    /// Refuses dimensions no model has (and that would overflow the arithmetic).
    pub fn check(&self) -> Result<(), PlanError> {
        within("layers", self.layers, MAX_LAYERS)?;
        within("hidden", self.hidden, MAX_WIDTH)?;
        within("heads", self.heads, MAX_WIDTH)?;
        within("kv_heads", self.kv_heads, MAX_WIDTH)?;
        within("intermediate", self.intermediate, 16 * MAX_WIDTH)?;
        within("vocabulary", self.vocabulary, MAX_VOCABULARY)?;
        if !self.hidden.is_multiple_of(self.heads) {
            return Err(refuse(
                "heads",
                format!("{} heads do not divide the hidden width {}", self.heads, self.hidden),
            ));
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(refuse(
                "kv_heads",
                format!(
                    "{} key/value heads do not divide the {} heads",
                    self.kv_heads, self.heads
                ),
            ));
        }
        if self.family == Family::Gpt2 && self.kv_heads != self.heads {
            return Err(refuse("kv_heads", "GPT-2 has one key/value head per head"));
        }
        if self.positions > MAX_SEQUENCE {
            return Err(refuse("positions", format!("at most {MAX_SEQUENCE}")));
        }
        Ok(())
    }

    /// The exact parameter count, by component.
    pub fn parameters(&self) -> ParameterCounts {
        let (h, i, v) = (self.hidden, self.intermediate, self.vocabulary);
        let kv = self.kv_width();
        let (attention, mlp, norms_per_layer, final_norm) = match self.family {
            // q, k, v (with biases) and the output projection (with bias); LayerNorms have a
            // scale and a shift.
            Family::Gpt2 => (3 * h * h + 3 * h + h * h + h, 2 * h * i + i + h, 4 * h, 2 * h),
            Family::Llama => (2 * h * h + 2 * h * kv, 3 * h * i, 2 * h, h),
            Family::Qwen2 => (2 * h * h + 2 * h * kv + h + 2 * kv, 3 * h * i, 2 * h, h),
        };
        let embeddings = v * h + self.positions * h;
        let lm_head = if self.tied_embeddings { 0 } else { v * h };
        let attention = self.layers * attention;
        let mlp = self.layers * mlp;
        let norms = self.layers * norms_per_layer + final_norm;
        ParameterCounts {
            total: embeddings + attention + mlp + norms + lm_head,
            embeddings,
            attention,
            mlp,
            norms,
            lm_head,
        }
    }

    /// The (inputs, outputs) of each linear layer of one block that LoRA may adapt: the
    /// attention projections, then the MLP's.
    fn linear_shapes(&self) -> (Vec<Shape>, Vec<Shape>) {
        let (h, i, kv) = (self.hidden, self.intermediate, self.kv_width());
        let attention = match self.family {
            Family::Gpt2 => vec![(h, 3 * h), (h, h)],
            Family::Llama | Family::Qwen2 => vec![(h, h), (h, kv), (h, kv), (h, h)],
        };
        let mlp = match self.family {
            Family::Gpt2 => vec![(h, i), (i, h)],
            Family::Llama | Family::Qwen2 => vec![(h, i), (h, i), (i, h)],
        };
        (attention, mlp)
    }

    /// Activation bytes of one micro-batch of `sequences` × `length` tokens, 16-bit values
    /// (`bytes_per_value` scales them), with or without checkpointing every layer.
    fn activation_bytes(&self, sequences: u64, length: u64, bytes_per_value: f64, checkpointing: bool) -> f64 {
        let (s, b, h, a) = (length as f64, sequences as f64, self.hidden as f64, self.heads as f64);
        // Korthikanti et al. 2022, eq. 1: bytes per layer in 16-bit, no recomputation.
        let layer = s * b * h * (34.0 + 5.0 * a * s / h) * bytes_per_value / 2.0;
        let layers = self.layers as f64;
        let blocks = if checkpointing {
            // Each layer's input kept (2·s·b·h bytes in 16-bit), one layer recomputed at a time.
            layers * 2.0 * s * b * h * bytes_per_value / 2.0 + layer
        } else {
            layers * layer
        };
        // The logits, in fp32 for the loss (and their gradient, the same size).
        let logits = 2.0 * 4.0 * s * b * self.vocabulary as f64;
        blocks + logits
    }
}

/// A linear layer's (inputs, outputs).
type Shape = (u64, u64);

/// What the planner plans for: a transformer by its dimensions, or the Lab's own network on
/// one of its engines, whose activations are not estimated but the bytes that engine allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Architecture {
    Transformer(Transformer),
    /// The Lab's MLP (the memory preset's: 2-64-64-3, ReLU, no norm).
    LabMlp {
        engine: LabEngine,
    },
}

impl Architecture {
    /// The Lab's MLP, laid out as its engines lay it out.
    pub fn lab_mlp_layout() -> Layout {
        Layout::new(&ModelSpec::default(), LAB_INPUTS, LAB_CLASSES)
    }

    pub fn check(&self) -> Result<(), PlanError> {
        match self {
            Architecture::Transformer(t) => t.check(),
            Architecture::LabMlp { .. } => Ok(()),
        }
    }

    /// The exact parameter count, by component (the Lab's MLP: its hidden layers count as the
    /// MLP, its output layer as the head).
    pub fn parameters(&self) -> ParameterCounts {
        match self {
            Architecture::Transformer(t) => t.parameters(),
            Architecture::LabMlp { .. } => {
                let layout = Self::lab_mlp_layout();
                let total = layout.parameter_count as u64;
                let head = (layout.classes * (layout.output_fan_in + 1)) as u64;
                ParameterCounts {
                    total,
                    embeddings: 0,
                    attention: 0,
                    mlp: total - head,
                    norms: 0,
                    lm_head: head,
                }
            }
        }
    }

    /// What the budget keeps back: a share for a real framework's runtime, nothing for the
    /// Lab's engines, whose every training buffer is counted.
    fn margin_fraction(&self) -> f64 {
        match self {
            Architecture::Transformer(_) => MARGIN_FRACTION,
            Architecture::LabMlp { .. } => 0.0,
        }
    }
}

/// A model the planner knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModelPreset {
    pub id: &'static str,
    pub name: &'static str,
    pub source: &'static str,
    pub architecture: Architecture,
}

const fn llama(
    layers: u64,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
    vocabulary: u64,
    tied: bool,
) -> Transformer {
    Transformer {
        family: Family::Llama,
        layers,
        hidden,
        heads,
        kv_heads,
        intermediate,
        vocabulary,
        positions: 0,
        tied_embeddings: tied,
    }
}

const fn qwen2(
    layers: u64,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
    vocabulary: u64,
    tied: bool,
) -> Transformer {
    Transformer {
        family: Family::Qwen2,
        ..llama(layers, hidden, heads, kv_heads, intermediate, vocabulary, tied)
    }
}

const fn gpt2(layers: u64, hidden: u64, heads: u64) -> Transformer {
    Transformer {
        family: Family::Gpt2,
        layers,
        hidden,
        heads,
        kv_heads: heads,
        intermediate: 4 * hidden,
        vocabulary: 50_257,
        positions: 1024,
        tied_embeddings: true,
    }
}

/// The published architectures (each model's `config.json` on the Hugging Face Hub).
pub const MODELS: [ModelPreset; 9] = [
    ModelPreset {
        id: "gpt2",
        name: "GPT-2 (124M)",
        source: "openai-community/gpt2",
        architecture: Architecture::Transformer(gpt2(12, 768, 12)),
    },
    ModelPreset {
        id: "gpt2-xl",
        name: "GPT-2 XL (1.5B)",
        source: "openai-community/gpt2-xl",
        architecture: Architecture::Transformer(gpt2(48, 1600, 25)),
    },
    ModelPreset {
        id: "qwen2.5-0.5b",
        name: "Qwen2.5-0.5B",
        source: "Qwen/Qwen2.5-0.5B",
        architecture: Architecture::Transformer(qwen2(24, 896, 14, 2, 4864, 151_936, true)),
    },
    ModelPreset {
        id: "qwen2.5-7b",
        name: "Qwen2.5-7B",
        source: "Qwen/Qwen2.5-7B",
        architecture: Architecture::Transformer(qwen2(28, 3584, 28, 4, 18_944, 152_064, false)),
    },
    ModelPreset {
        id: "llama-3.2-1b",
        name: "Llama-3.2-1B",
        source: "meta-llama/Llama-3.2-1B",
        architecture: Architecture::Transformer(llama(16, 2048, 32, 8, 8192, 128_256, true)),
    },
    ModelPreset {
        id: "llama-3.2-3b",
        name: "Llama-3.2-3B",
        source: "meta-llama/Llama-3.2-3B",
        architecture: Architecture::Transformer(llama(28, 3072, 24, 8, 8192, 128_256, true)),
    },
    ModelPreset {
        id: "llama-3.1-8b",
        name: "Llama-3.1-8B",
        source: "meta-llama/Llama-3.1-8B",
        architecture: Architecture::Transformer(llama(32, 4096, 32, 8, 14_336, 128_256, false)),
    },
    ModelPreset {
        id: "mistral-7b",
        name: "Mistral-7B (v0.1)",
        source: "mistralai/Mistral-7B-v0.1",
        architecture: Architecture::Transformer(llama(32, 4096, 32, 8, 14_336, 32_000, false)),
    },
    ModelPreset {
        id: "lab-mlp",
        name: "The Lab's MLP (2-64-64-3)",
        source: "this Lab's memory experiment",
        architecture: Architecture::LabMlp {
            engine: LabEngine::Webgpu,
        },
    },
];

/// The preset named `id`, or why not.
pub fn model(id: &str) -> Result<&'static ModelPreset, PlanError> {
    MODELS.iter().find(|m| m.id == id).ok_or_else(|| {
        let ids: Vec<&str> = MODELS.iter().map(|m| m.id).collect();
        refuse(
            "model",
            format!("unknown model \"{id}\"; the models are {}", ids.join(", ")),
        )
    })
}

/// A device memory as a learner writes it: a number of GiB (`24`, `23,5`), or with its unit
/// (`128 KiB`, `512 MiB`, `80 GiB`; the Lab's own networks need KiB).
pub fn parse_memory(text: &str) -> Result<u64, PlanError> {
    let text = text.trim();
    let split = text.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "gib" | "g" => 1u64 << 30,
        "mib" | "m" => 1 << 20,
        "kib" | "k" => 1 << 10,
        _ => {
            return Err(refuse(
                "memory",
                format!("\"{text}\": write a number of GiB, or one with KiB, MiB or GiB"),
            ))
        }
    };
    let value: f64 = number
        .trim()
        .replace(',', ".")
        .parse()
        .map_err(|_| refuse("memory", format!("\"{text}\" is not an amount of memory")))?;
    let bytes = value * scale as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes <= 1e6 * (1u64 << 30) as f64) {
        return Err(refuse(
            "memory",
            "the device memory must be more than 0 (and at most 1000000 GiB)",
        ));
    }
    Ok(bytes as u64)
}

/// Which layers LoRA adapts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoraTargets {
    Attention,
    AllLinear,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Method {
    Full,
    /// LoRA on a frozen base in the run's precision.
    Lora {
        rank: u64,
        targets: LoraTargets,
    },
    /// LoRA on a frozen 4-bit NF4 base.
    Qlora {
        rank: u64,
        targets: LoraTargets,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    Fp32,
    /// bf16 weights, activations and gradients, fp32 master weights in the optimizer.
    Bf16Mixed,
    /// Everything in bf16, optimizer states included.
    Bf16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    AdamW,
    /// bitsandbytes' 8-bit AdamW: one byte per state.
    AdamW8bit,
    /// SGD with momentum: one state.
    SgdMomentum,
    /// Plain SGD: no state (the Lab's experiments).
    Sgd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sharding {
    None,
    /// Optimizer states sharded across the devices.
    Zero1,
    /// ... and gradients.
    Zero2,
    /// ... and weights (as FSDP's full sharding).
    Zero3,
}

/// What to plan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PlanRequest {
    pub architecture: Architecture,
    pub method: Method,
    pub precision: Precision,
    pub optimizer: Optimizer,
    pub checkpointing: bool,
    /// Tokens per sequence.
    pub sequence_length: u64,
    /// Memory of one device, bytes.
    pub budget_bytes: u64,
    pub devices: u64,
    pub sharding: Sharding,
    /// Sequences per optimizer step, across all devices.
    pub target_batch: u64,
}

/// Bytes on one device, by what they hold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemoryBytes {
    pub weights: u64,
    pub gradients: u64,
    pub optimizer: u64,
    pub activations: u64,
    pub margin: u64,
    pub total: u64,
    pub budget: u64,
}

/// Trainable and frozen parameters under the method.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Parameters {
    pub total: u64,
    pub trainable: u64,
    pub model: ParameterCounts,
}

/// What a lever costs, in numbers a learner can compare.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Costs {
    /// Forward passes per micro-batch: 1, or 2 with checkpointing (one recomputation).
    pub forward_passes_per_micro_batch: u64,
    /// Forward and backward passes per optimizer step on each device.
    pub passes_per_step: u64,
    /// Gradient bytes one device sends in one ring all-reduce: 2·(K−1)/K · gradient bytes.
    pub all_reduce_bytes: u64,
    /// All-reduces per optimizer step with `no_sync` (once, at the boundary) and without it
    /// (after every micro-batch).
    pub all_reduces_with_no_sync: u64,
    pub all_reduces_without_no_sync: u64,
}

/// The plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub parameters: Parameters,
    pub memory_bytes: MemoryBytes,
    pub micro_batch: u64,
    pub accumulation_steps: u64,
    pub devices: u64,
    pub effective_batch: u64,
    /// Whether the effective batch equals the target.
    pub exact: bool,
    /// The largest micro-batch (at most the one that fits) that makes the target exactly, when
    /// the plan's does not.
    pub exact_micro_batch: Option<u64>,
    pub costs: Costs,
    pub configs: Configs,
}

/// The same plan as configuration to paste.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Configs {
    pub hf_training_arguments: serde_json::Value,
    pub deepspeed: serde_json::Value,
    pub lightning: serde_json::Value,
    pub pytorch_loop: String,
}

/// A change the planner tries when nothing fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lever {
    Checkpointing,
    Lora,
    Qlora,
    EightDevicesZero3,
    HalfSequence,
}

impl Lever {
    /// In words (the CLI's and the JSON's; the page has its own in each language).
    pub fn label(self) -> &'static str {
        match self {
            Lever::Checkpointing => "activation checkpointing",
            Lever::Lora => "LoRA (rank 16, attention)",
            Lever::Qlora => "QLoRA (rank 16, attention, 4-bit base)",
            Lever::EightDevicesZero3 => "8 devices with ZeRO-3",
            Lever::HalfSequence => "half the sequence length",
        }
    }
}

impl Serialize for Lever {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.label())
    }
}

/// Why nothing fits, and which changes would make it fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NothingFits {
    /// The memory of a micro-batch of one sequence.
    pub memory_bytes: MemoryBytes,
    /// Changes (in words a CLI or page shows) that fit on their own.
    pub would_fit: Vec<Lever>,
    /// When no single change does: the first of them that fit together, in the order listed
    /// (checkpointing, then a 4-bit base, then sharding, then a shorter sequence).
    pub would_fit_together: Option<Vec<Lever>>,
}

/// A plan, or the proof that nothing fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    Fits(Box<Plan>),
    NothingFits(NothingFits),
}

impl PlanRequest {
    pub fn check(&self) -> Result<(), PlanError> {
        self.architecture.check()?;
        within("seq_len", self.sequence_length, MAX_SEQUENCE)?;
        within("devices", self.devices, MAX_DEVICES)?;
        within("target_batch", self.target_batch, MAX_TARGET)?;
        if self.budget_bytes == 0 {
            return Err(refuse("memory", "the device memory must be more than 0"));
        }
        match self.architecture {
            Architecture::Transformer(t) => {
                if t.positions > 0 && self.sequence_length > t.positions {
                    return Err(refuse("seq_len", format!("this model has {} positions", t.positions)));
                }
                if let Method::Lora { rank, .. } | Method::Qlora { rank, .. } = self.method {
                    if rank == 0 || rank > t.hidden {
                        return Err(refuse(
                            "lora_rank",
                            format!("must be 1 to the hidden width {}", t.hidden),
                        ));
                    }
                }
            }
            // The Lab's engines train as they train: what they cannot do is refused, not
            // estimated.
            Architecture::LabMlp { .. } => {
                if self.method != Method::Full {
                    return Err(refuse("method", "the Lab's engines train every parameter: use full"));
                }
                if self.precision != Precision::Fp32 {
                    return Err(refuse("precision", "the Lab's engines compute in fp32"));
                }
                if self.checkpointing {
                    return Err(refuse(
                        "checkpointing",
                        "the Lab's engines keep every activation: use off",
                    ));
                }
                if self.sequence_length != 1 {
                    return Err(refuse("seq_len", "each of the Lab's examples is one 2-D point: use 1"));
                }
                within("target_batch", self.target_batch, MAX_LAB_TARGET)?;
            }
        }
        if self.devices == 1 && self.sharding != Sharding::None {
            return Err(refuse("sharding", "sharding needs more than one device"));
        }
        Ok(())
    }

    fn trainable(&self) -> u64 {
        let counts = self.architecture.parameters();
        match (self.method, self.architecture) {
            (Method::Lora { rank, targets } | Method::Qlora { rank, targets }, Architecture::Transformer(t)) => {
                let (attention, mlp) = t.linear_shapes();
                let adapted: u64 = match targets {
                    LoraTargets::Attention => attention.iter().map(|(i, o)| i + o).sum(),
                    LoraTargets::AllLinear => attention.iter().chain(&mlp).map(|(i, o)| i + o).sum(),
                };
                t.layers * rank * adapted
            }
            _ => counts.total,
        }
    }

    /// Bytes on one device for a micro-batch of `micro_batch` sequences.
    pub fn memory(&self, micro_batch: u64) -> MemoryBytes {
        let total = self.architecture.parameters().total as f64;
        let trainable = self.trainable() as f64;
        let frozen = match self.method {
            Method::Full => 0.0,
            Method::Lora { .. } | Method::Qlora { .. } => total,
        };
        let half = 2.0;
        // Bytes per trainable parameter: (weights, gradients, optimizer states).
        let states = |precision_bytes: f64| match self.optimizer {
            Optimizer::AdamW => 2.0 * precision_bytes,
            Optimizer::AdamW8bit => 2.0,
            Optimizer::SgdMomentum => precision_bytes,
            Optimizer::Sgd => 0.0,
        };
        let (weight, gradient, optimizer) = match self.precision {
            Precision::Fp32 => (4.0, 4.0, states(4.0)),
            // The ZeRO paper's 2 + 2 + 12 for Adam: fp32 master weights, momentum and variance.
            Precision::Bf16Mixed => (half, half, 4.0 + states(4.0)),
            Precision::Bf16 => (half, half, states(half)),
        };
        let frozen_weight = match (self.method, self.precision) {
            (Method::Qlora { .. }, _) => NF4_BYTES_PER_PARAMETER,
            (_, Precision::Fp32) => 4.0,
            _ => half,
        };
        let devices = self.devices as f64;
        let shard = |stage_shards: bool| if stage_shards { devices } else { 1.0 };
        let weights = (trainable * weight + frozen * frozen_weight) / shard(self.sharding == Sharding::Zero3);
        let gradients = trainable * gradient / shard(matches!(self.sharding, Sharding::Zero2 | Sharding::Zero3));
        let optimizer = trainable * optimizer / shard(self.sharding != Sharding::None);
        let activation_value = match self.precision {
            Precision::Fp32 => 4.0,
            Precision::Bf16Mixed | Precision::Bf16 => half,
        };
        let activations = match self.architecture {
            Architecture::Transformer(t) => {
                t.activation_bytes(micro_batch, self.sequence_length, activation_value, self.checkpointing)
            }
            Architecture::LabMlp { engine } => {
                micro_batch_bytes(engine, &Architecture::lab_mlp_layout(), micro_batch as usize) as f64
            }
        };
        let margin = self.architecture.margin_fraction() * self.budget_bytes as f64;
        let bytes = |x: f64| x.ceil() as u64;
        let (weights, gradients, optimizer, activations, margin) = (
            bytes(weights),
            bytes(gradients),
            bytes(optimizer),
            bytes(activations),
            bytes(margin),
        );
        MemoryBytes {
            weights,
            gradients,
            optimizer,
            activations,
            margin,
            total: weights + gradients + optimizer + activations + margin,
            budget: self.budget_bytes,
        }
    }

    fn fits(&self, micro_batch: u64) -> bool {
        let memory = self.memory(micro_batch);
        memory.total <= memory.budget
    }

    /// The largest micro-batch that fits, at most what the target needs per device: powers of
    /// two, then bisection between the last that fit and the first that did not.
    pub fn largest_micro_batch(&self) -> Option<u64> {
        let cap = self.target_batch.div_ceil(self.devices);
        if !self.fits(1) {
            return None;
        }
        let mut fit = 1;
        let mut fail = None;
        while fit < cap {
            let next = (fit * 2).min(cap);
            if self.fits(next) {
                fit = next;
            } else {
                fail = Some(next);
                break;
            }
        }
        if let Some(mut fail) = fail {
            while fail - fit > 1 {
                let middle = fit + (fail - fit) / 2;
                if self.fits(middle) {
                    fit = middle;
                } else {
                    fail = middle;
                }
            }
        }
        Some(fit)
    }

    /// The plan for this request.
    pub fn plan(&self) -> Result<Outcome, PlanError> {
        self.check()?;
        let Some(largest) = self.largest_micro_batch() else {
            return Ok(Outcome::NothingFits(self.nothing_fits()));
        };
        // The fewest accumulation steps the largest micro-batch allows; then the smallest
        // micro-batch that still reaches the target in that many steps, so that the effective
        // batch overshoots the target by less than one sequence per device and step (31 x 2
        // steps x 8 devices would be 496 for a target of 256; 16 x 2 x 8 is 256).
        let accumulation_steps = self.target_batch.div_ceil(self.devices * largest);
        let micro_batch = self.target_batch.div_ceil(self.devices * accumulation_steps);
        let per_step = self.devices * micro_batch;
        let effective_batch = per_step * accumulation_steps;
        let exact = effective_batch == self.target_batch;
        let exact_micro_batch = (!exact)
            .then(|| {
                (1..=micro_batch)
                    .rev()
                    .find(|&b| self.target_batch.is_multiple_of(self.devices * b))
            })
            .flatten();
        let gradient_bytes = self.trainable()
            * match self.precision {
                Precision::Fp32 => 4,
                Precision::Bf16Mixed | Precision::Bf16 => 2,
            };
        let k = self.devices;
        let costs = Costs {
            forward_passes_per_micro_batch: if self.checkpointing { 2 } else { 1 },
            passes_per_step: accumulation_steps,
            all_reduce_bytes: if k > 1 { 2 * (k - 1) * gradient_bytes / k } else { 0 },
            all_reduces_with_no_sync: u64::from(k > 1),
            all_reduces_without_no_sync: if k > 1 { accumulation_steps } else { 0 },
        };
        let parameters = Parameters {
            total: self.architecture.parameters().total,
            trainable: self.trainable(),
            model: self.architecture.parameters(),
        };
        let configs = self.configs(micro_batch, accumulation_steps);
        Ok(Outcome::Fits(Box::new(Plan {
            parameters,
            memory_bytes: self.memory(micro_batch),
            micro_batch,
            accumulation_steps,
            devices: self.devices,
            effective_batch,
            exact,
            exact_micro_batch,
            costs,
            configs,
        })))
    }

    /// The changes the planner tries when nothing fits, each on top of `from`.
    fn levers(from: &PlanRequest) -> Vec<(Lever, PlanRequest)> {
        let mut levers = Vec::new();
        if !from.checkpointing {
            levers.push((
                Lever::Checkpointing,
                PlanRequest {
                    checkpointing: true,
                    ..*from
                },
            ));
        }
        if from.method == Method::Full {
            let lora = Method::Lora {
                rank: 16,
                targets: LoraTargets::Attention,
            };
            levers.push((Lever::Lora, PlanRequest { method: lora, ..*from }));
        }
        if !matches!(from.method, Method::Qlora { .. }) {
            let qlora = Method::Qlora {
                rank: 16,
                targets: LoraTargets::Attention,
            };
            levers.push((Lever::Qlora, PlanRequest { method: qlora, ..*from }));
        }
        if from.sharding != Sharding::Zero3 {
            let sharded = PlanRequest {
                devices: from.devices.max(8),
                sharding: Sharding::Zero3,
                ..*from
            };
            levers.push((Lever::EightDevicesZero3, sharded));
        }
        if from.sequence_length > 1 {
            let shorter = PlanRequest {
                sequence_length: from.sequence_length / 2,
                ..*from
            };
            levers.push((Lever::HalfSequence, shorter));
        }
        levers
    }

    fn nothing_fits(&self) -> NothingFits {
        let fits = |r: &PlanRequest| r.check().is_ok() && r.fits(1);
        let would_fit: Vec<Lever> = Self::levers(self)
            .into_iter()
            .filter(|(_, changed)| fits(changed))
            .map(|(label, _)| label)
            .collect();
        // No single lever: stack them in order (LoRA is passed over for QLoRA, its stronger
        // form) until the request fits.
        let would_fit_together = would_fit.is_empty().then(|| {
            let mut current = *self;
            let mut taken = Vec::new();
            loop {
                let next = Self::levers(&current)
                    .into_iter()
                    .find(|(lever, _)| *lever != Lever::Lora);
                let (label, changed) = next?;
                taken.push(label);
                current = changed;
                if fits(&current) {
                    return Some(taken);
                }
            }
        });
        NothingFits {
            memory_bytes: self.memory(1),
            would_fit,
            would_fit_together: would_fit_together.flatten(),
        }
    }

    fn configs(&self, micro_batch: u64, steps: u64) -> Configs {
        let bf16 = self.precision != Precision::Fp32;
        let stage = match self.sharding {
            Sharding::None => 0,
            Sharding::Zero1 => 1,
            Sharding::Zero2 => 2,
            Sharding::Zero3 => 3,
        };
        let hf_training_arguments = serde_json::json!({
            "per_device_train_batch_size": micro_batch,
            "gradient_accumulation_steps": steps,
            "gradient_checkpointing": self.checkpointing,
            "bf16": bf16,
        });
        let deepspeed = serde_json::json!({
            "train_batch_size": micro_batch * steps * self.devices,
            "train_micro_batch_size_per_gpu": micro_batch,
            "gradient_accumulation_steps": steps,
            "zero_optimization": { "stage": stage },
            "bf16": { "enabled": bf16 },
        });
        let lightning = serde_json::json!({
            "accumulate_grad_batches": steps,
            "devices": self.devices,
            "precision": match self.precision {
                Precision::Fp32 => "32-true",
                Precision::Bf16Mixed => "bf16-mixed",
                Precision::Bf16 => "bf16-true",
            },
            "strategy": match self.sharding {
                Sharding::None if self.devices > 1 => "ddp",
                Sharding::None => "auto",
                Sharding::Zero1 => "deepspeed_stage_1",
                Sharding::Zero2 => "deepspeed_stage_2",
                Sharding::Zero3 => "fsdp",
            },
        });
        let pytorch_loop = format!(
            "# micro-batches of {micro_batch} sequence(s), {steps} per optimizer step\n\
             for step, batch in enumerate(loader):\n    \
             # padded sequences of different lengths: sum the token losses and divide by the\n    \
             # step's total token count instead (the Lab's variable-length experiment)\n    \
             loss = model(**batch).loss / {steps}\n    \
             loss.backward()\n    \
             if (step + 1) % {steps} == 0:\n        \
             optimizer.step()\n        \
             optimizer.zero_grad()\n"
        );
        Configs {
            hf_training_arguments,
            deepspeed,
            lightning,
            pytorch_loop,
        }
    }
}

/// The Lab's network trained in `batch` examples per step within `budget_bytes` on either of
/// its engines: the accumulation steps the planner picks for the engine that needs more of
/// them, and what each engine then holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabBudgetPlan {
    pub accumulation_steps: u64,
    /// The largest micro-batch (the Lab splits the batch into micro-batches that differ by at
    /// most one example).
    pub micro_batch: u64,
    pub cpu: MemoryBytes,
    pub webgpu: MemoryBytes,
}

/// Plans the Lab's memory experiment: plain SGD in fp32, one device, `batch` examples per
/// step, within `budget_bytes`. Nothing fitting is returned with the memory of one example on
/// the engine that needs more.
pub fn plan_lab_budget(budget_bytes: u64, batch: u64) -> Result<LabBudgetPlan, Box<NothingFits>> {
    let plan = |engine| {
        let request = PlanRequest::for_lab(engine, budget_bytes, batch);
        match request.plan() {
            Ok(Outcome::Fits(plan)) => Ok(*plan),
            Ok(Outcome::NothingFits(why)) => Err(Box::new(why)),
            // Every field above is in range: only the budget can fail, as nothing fitting.
            Err(_) => Err(Box::new(request.nothing_fits())),
        }
    };
    let (cpu, webgpu) = match (plan(LabEngine::Cpu), plan(LabEngine::Webgpu)) {
        (Ok(cpu), Ok(webgpu)) => (cpu, webgpu),
        (Err(why), _) | (_, Err(why)) => return Err(why),
    };
    let accumulation_steps = cpu.accumulation_steps.max(webgpu.accumulation_steps);
    let micro_batch = batch.div_ceil(accumulation_steps);
    let memory = |engine| PlanRequest::for_lab(engine, budget_bytes, batch).memory(micro_batch);
    Ok(LabBudgetPlan {
        accumulation_steps,
        micro_batch,
        cpu: memory(LabEngine::Cpu),
        webgpu: memory(LabEngine::Webgpu),
    })
}

impl PlanRequest {
    /// The Lab's network on `engine` as its memory experiment trains it: plain SGD in fp32 on
    /// one device, `batch` examples per step within `budget_bytes`.
    pub fn for_lab(engine: LabEngine, budget_bytes: u64, batch: u64) -> Self {
        Self {
            architecture: Architecture::LabMlp { engine },
            method: Method::Full,
            precision: Precision::Fp32,
            optimizer: Optimizer::Sgd,
            checkpointing: false,
            sequence_length: 1,
            budget_bytes: budget_bytes.max(1),
            devices: 1,
            sharding: Sharding::None,
            target_batch: batch.clamp(1, MAX_LAB_TARGET),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn request(model_id: &str) -> PlanRequest {
        PlanRequest {
            architecture: model(model_id).unwrap().architecture,
            method: Method::Full,
            precision: Precision::Bf16Mixed,
            optimizer: Optimizer::AdamW,
            checkpointing: false,
            sequence_length: 1024,
            budget_bytes: 80 * GIB,
            devices: 1,
            sharding: Sharding::None,
            target_batch: 256,
        }
    }

    fn transformer(model_id: &str) -> Transformer {
        match model(model_id).unwrap().architecture {
            Architecture::Transformer(t) => t,
            Architecture::LabMlp { .. } => panic!("{model_id} is a transformer"),
        }
    }

    fn lab_request(engine: LabEngine, budget_bytes: u64) -> PlanRequest {
        PlanRequest::for_lab(engine, budget_bytes, 256)
    }

    /// Every preset's count is the published one (the models' safetensors headers on the Hub).
    #[test]
    fn parameter_counts_are_the_published_ones() {
        for (id, published) in [
            ("gpt2", 124_439_808),
            ("gpt2-xl", 1_557_611_200),
            ("qwen2.5-0.5b", 494_032_768),
            ("qwen2.5-7b", 7_615_616_512),
            ("llama-3.2-1b", 1_235_814_400),
            ("llama-3.2-3b", 3_212_749_824),
            ("llama-3.1-8b", 8_030_261_248),
            ("mistral-7b", 7_241_732_096),
            // 2·64 + 64, 64·64 + 64, 64·3 + 3.
            ("lab-mlp", 4_547),
        ] {
            let preset = model(id).unwrap();
            preset.architecture.check().unwrap();
            let counts = preset.architecture.parameters();
            assert_eq!(counts.total, published, "{id}");
            assert_eq!(
                counts.embeddings + counts.attention + counts.mlp + counts.norms + counts.lm_head,
                counts.total,
                "{id}: the components add up"
            );
        }
        assert_eq!(MODELS.len(), 9);
    }

    /// Mixed-precision Adam holds 16 bytes per parameter (ZeRO: 2 + 2 + 12); ZeRO stages divide
    /// what they shard.
    #[test]
    fn bytes_per_parameter_follow_the_zero_paper() {
        let base = request("gpt2");
        let p = base.architecture.parameters().total;
        let memory = base.memory(1);
        assert_eq!(
            (memory.weights, memory.gradients, memory.optimizer),
            (2 * p, 2 * p, 12 * p)
        );
        let sharded = |sharding| {
            PlanRequest {
                devices: 8,
                sharding,
                ..base
            }
            .memory(1)
        };
        assert_eq!(sharded(Sharding::Zero1).optimizer, (12 * p).div_ceil(8));
        assert_eq!(sharded(Sharding::Zero1).gradients, 2 * p);
        assert_eq!(sharded(Sharding::Zero2).gradients, (2 * p).div_ceil(8));
        assert_eq!(sharded(Sharding::Zero2).weights, 2 * p);
        assert_eq!(sharded(Sharding::Zero3).weights, (2 * p).div_ceil(8));
        let fp32 = PlanRequest {
            precision: Precision::Fp32,
            ..base
        }
        .memory(1);
        assert_eq!((fp32.weights, fp32.gradients, fp32.optimizer), (4 * p, 4 * p, 8 * p));
    }

    #[test]
    fn lora_trains_a_sliver_and_qlora_stores_the_base_in_4_bits() {
        let base = request("llama-3.1-8b");
        let lora = PlanRequest {
            method: Method::Lora {
                rank: 16,
                targets: LoraTargets::Attention,
            },
            ..base
        };
        // q, k, v, o: r·(4096 + 4096) + 2·r·(4096 + 1024) + r·(4096 + 4096) per layer.
        assert_eq!(lora.trainable(), 32 * 16 * (8192 + 2 * 5120 + 8192));
        let qlora = PlanRequest {
            method: Method::Qlora {
                rank: 16,
                targets: LoraTargets::Attention,
            },
            ..lora
        };
        let total = base.architecture.parameters().total as f64;
        let (lora_weights, qlora_weights) = (lora.memory(1).weights as f64, qlora.memory(1).weights as f64);
        assert!((lora_weights / total - 2.0).abs() < 0.01, "bf16 base: {lora_weights}");
        assert!(
            (qlora_weights / total - NF4_BYTES_PER_PARAMETER).abs() < 0.01,
            "4-bit base: {qlora_weights}"
        );
    }

    /// Korthikanti et al.'s formula, and checkpointing keeping the layer inputs only.
    #[test]
    fn activations_follow_the_published_formula() {
        let gpt2 = transformer("gpt2");
        let (s, b, h, a) = (1024.0, 4.0, 768.0, 12.0);
        let layer = s * b * h * (34.0 + 5.0 * a * s / h);
        let logits = 8.0 * s * b * 50_257.0;
        assert_eq!(gpt2.activation_bytes(4, 1024, 2.0, false), 12.0 * layer + logits);
        let checkpointed = gpt2.activation_bytes(4, 1024, 2.0, true);
        assert_eq!(checkpointed, 12.0 * 2.0 * s * b * h + layer + logits);
        assert!(checkpointed < gpt2.activation_bytes(4, 1024, 2.0, false));
    }

    #[test]
    fn the_search_finds_the_largest_micro_batch_that_fits() {
        let base = PlanRequest {
            budget_bytes: 24 * GIB,
            ..request("gpt2")
        };
        let largest = base.largest_micro_batch().unwrap();
        assert!(base.fits(largest) && !base.fits(largest + 1), "{largest}");
        // Everything fits at the target: N = 1.
        let roomy = PlanRequest {
            target_batch: 8,
            ..request("gpt2")
        };
        let Outcome::Fits(plan) = roomy.plan().unwrap() else {
            panic!("fits")
        };
        assert_eq!(
            (plan.micro_batch, plan.accumulation_steps, plan.effective_batch),
            (8, 1, 8)
        );
        // A target that is not a multiple: N rounds up, and the exact alternative is named.
        let odd = PlanRequest {
            target_batch: 250,
            ..base
        };
        let Outcome::Fits(plan) = odd.plan().unwrap() else {
            panic!("fits")
        };
        assert_eq!(plan.accumulation_steps, 250u64.div_ceil(plan.micro_batch));
        assert!(plan.effective_batch >= 250);
        assert_eq!(plan.exact, plan.effective_batch == 250);
        if let Some(b) = plan.exact_micro_batch {
            assert!(b <= plan.micro_batch && 250 % b == 0);
        }
        // The micro-batch is the smallest that reaches the target in the fewest steps: a
        // micro-batch that fits almost the whole target does not double it with a second step.
        for target in [200, 250, 255, 256, 257, 300, 1000] {
            let Outcome::Fits(plan) = (PlanRequest {
                target_batch: target,
                ..base
            })
            .plan()
            .unwrap() else {
                panic!("fits")
            };
            let largest = PlanRequest {
                target_batch: target,
                ..base
            }
            .largest_micro_batch()
            .unwrap();
            assert!(plan.micro_batch <= largest);
            assert_eq!(plan.accumulation_steps, target.div_ceil(largest), "{target}");
            assert!(
                plan.effective_batch >= target && plan.effective_batch - target < plan.accumulation_steps,
                "{target}: {plan:?}"
            );
        }
        // Several devices divide the work: effective = devices × micro-batch × N.
        let four = PlanRequest {
            devices: 4,
            sharding: Sharding::Zero2,
            ..base
        };
        let Outcome::Fits(plan) = four.plan().unwrap() else {
            panic!("fits")
        };
        assert_eq!(plan.effective_batch, 4 * plan.micro_batch * plan.accumulation_steps);
        assert_eq!(plan.configs.deepspeed["train_batch_size"], plan.effective_batch);
        assert_eq!(plan.costs.all_reduces_with_no_sync, 1);
        assert_eq!(plan.costs.all_reduces_without_no_sync, plan.accumulation_steps);
    }

    #[test]
    fn when_nothing_fits_the_plan_says_what_would() {
        let tight = PlanRequest {
            budget_bytes: 24 * GIB,
            sequence_length: 2048,
            ..request("llama-3.1-8b")
        };
        let Outcome::NothingFits(reason) = tight.plan().unwrap() else {
            panic!("a full 8B fine-tune does not fit 24 GiB")
        };
        assert!(reason.memory_bytes.total > reason.memory_bytes.budget);
        // 16 bytes per parameter of 8B alone are 128 GB, and 2,048 tokens without
        // checkpointing need about 33 GB of activations: no single change is enough.
        assert!(reason.would_fit.is_empty(), "{:?}", reason.would_fit);
        assert_eq!(
            reason.would_fit_together,
            Some(vec![Lever::Checkpointing, Lever::Qlora])
        );
        // A request one change away names that change: on one 80 GiB device a full 8B
        // fine-tune needs 128 GB of states, LoRA on a bf16 base about 16 GB.
        let one_away = PlanRequest {
            budget_bytes: 80 * GIB,
            ..tight
        };
        let Outcome::NothingFits(reason) = one_away.plan().unwrap() else {
            panic!("128 GB of states do not fit 80 GiB")
        };
        assert!(reason.would_fit.contains(&Lever::Lora), "{:?}", reason.would_fit);
        assert!(
            reason.would_fit.contains(&Lever::EightDevicesZero3),
            "{:?}",
            reason.would_fit
        );
        assert_eq!(reason.would_fit_together, None);
    }

    #[test]
    fn bad_input_names_its_field() {
        let base = request("gpt2");
        let field = |r: PlanRequest| r.plan().unwrap_err().field;
        assert_eq!(
            field(PlanRequest {
                budget_bytes: 0,
                ..base
            }),
            "memory"
        );
        assert_eq!(
            field(PlanRequest {
                sequence_length: 0,
                ..base
            }),
            "seq_len"
        );
        assert_eq!(
            field(PlanRequest {
                sequence_length: 4096,
                ..base
            }),
            "seq_len",
            "GPT-2 has 1024 positions"
        );
        assert_eq!(field(PlanRequest { devices: 0, ..base }), "devices");
        assert_eq!(
            field(PlanRequest {
                target_batch: 0,
                ..base
            }),
            "target_batch"
        );
        assert_eq!(
            field(PlanRequest {
                sharding: Sharding::Zero3,
                ..base
            }),
            "sharding"
        );
        let huge = Transformer {
            layers: 1_000_000_000_000,
            ..transformer("gpt2")
        };
        assert_eq!(
            field(PlanRequest {
                architecture: Architecture::Transformer(huge),
                ..base
            }),
            "layers"
        );
        let uneven = Transformer {
            heads: 7,
            kv_heads: 7,
            ..transformer("gpt2")
        };
        assert_eq!(
            field(PlanRequest {
                architecture: Architecture::Transformer(uneven),
                ..base
            }),
            "heads"
        );
        let lora0 = PlanRequest {
            method: Method::Lora {
                rank: 0,
                targets: LoraTargets::Attention,
            },
            ..base
        };
        assert_eq!(field(lora0), "lora_rank");
        assert_eq!(model("gpt-5").unwrap_err().field, "model");
    }

    /// The Lab's network is not estimated: the activations of a micro-batch are the bytes a
    /// fresh CPU engine holds after training that micro-batch (the WebGPU engine's are held to
    /// the same figure in `tests/gpu_vs_cpu.rs`), and nothing is kept back as a margin.
    #[test]
    fn the_labs_network_is_planned_with_the_engines_own_allocation() {
        use crate::reference::ReferenceEngine;
        use crate::scenario::Scenario;
        let preset = Scenario::by_id("memory").unwrap().config;
        let data = preset.dataset.generate();
        let layout = Architecture::lab_mlp_layout();
        assert_eq!(
            layout,
            Layout::new(&preset.runs[0].model, data.input_dim, data.classes),
            "lab-mlp is the memory experiment's network"
        );
        let (params, buffers) = layout.initialize(1);
        let request = lab_request(LabEngine::Cpu, 1 << 20);
        for rows in [1, 16, 37, 64, 256] {
            let mut engine = ReferenceEngine::<f32>::new(
                layout.clone(),
                &params,
                &buffers,
                crate::optim::OptimizerSpec::default(),
                &data.test,
            )
            .unwrap();
            let inputs = &data.train.inputs[..rows * data.input_dim];
            engine.accumulate_items(inputs, &data.train.labels[..rows], 1.0);
            let memory = request.memory(rows as u64);
            assert_eq!(memory.activations, engine.workspace_bytes(), "{rows} rows");
            assert_eq!(memory.margin, 0);
            assert_eq!(memory.weights, 4 * 4547);
            assert_eq!(memory.gradients, 4 * 4547);
            assert_eq!(memory.optimizer, 0, "plain SGD keeps no state");
        }
    }

    /// A smaller budget: a smaller micro-batch and more accumulation steps, never fewer.
    #[test]
    fn a_smaller_budget_for_the_labs_network_means_more_steps() {
        for engine in LabEngine::ALL {
            let mut last_steps = 0;
            for kib in [1024, 512, 256, 128, 96, 80, 64] {
                let Outcome::Fits(plan) = lab_request(engine, kib * 1024).plan().unwrap() else {
                    panic!("{engine:?} fits in {kib} KiB")
                };
                assert!(plan.memory_bytes.total <= kib * 1024);
                assert!(plan.accumulation_steps >= last_steps, "{engine:?} at {kib} KiB");
                assert!(plan.micro_batch * plan.accumulation_steps >= 256);
                last_steps = plan.accumulation_steps;
            }
            assert!(last_steps > 1);
            let Outcome::NothingFits(why) = lab_request(engine, 36 * 1024).plan().unwrap() else {
                panic!("weights and gradients alone take 35.5 KiB")
            };
            assert!(
                why.would_fit.iter().all(|l| *l == Lever::EightDevicesZero3),
                "{:?}",
                why.would_fit
            );
        }
    }

    /// The memory experiment's budget: the steps of the engine that needs more, and both
    /// engines' memory within the budget at that micro-batch.
    #[test]
    fn the_lab_budget_fits_both_engines() {
        let mut last = 0;
        for kib in [600, 384, 256, 192, 128, 96, 64, 56] {
            let plan = plan_lab_budget(kib * 1024, 256).unwrap();
            for memory in [plan.cpu, plan.webgpu] {
                assert!(memory.total <= kib * 1024, "{kib} KiB: {memory:?}");
            }
            assert_eq!(plan.micro_batch, 256u64.div_ceil(plan.accumulation_steps));
            assert!(plan.accumulation_steps >= last);
            last = plan.accumulation_steps;
        }
        assert_eq!(plan_lab_budget(600 * 1024, 256).unwrap().accumulation_steps, 1);
        let too_small = plan_lab_budget(40 * 1024, 256).unwrap_err();
        assert!(
            too_small.memory_bytes.total > 40 * 1024,
            "one example on the CPU engine needs more"
        );
    }

    #[test]
    fn the_labs_network_refuses_what_its_engines_do_not_do() {
        let base = lab_request(LabEngine::Webgpu, 1 << 20);
        let field = |r: PlanRequest| r.plan().unwrap_err().field;
        let lora = Method::Lora {
            rank: 4,
            targets: LoraTargets::Attention,
        };
        assert_eq!(field(PlanRequest { method: lora, ..base }), "method");
        let bf16 = Precision::Bf16Mixed;
        assert_eq!(
            field(PlanRequest {
                precision: bf16,
                ..base
            }),
            "precision"
        );
        assert_eq!(
            field(PlanRequest {
                checkpointing: true,
                ..base
            }),
            "checkpointing"
        );
        assert_eq!(
            field(PlanRequest {
                sequence_length: 64,
                ..base
            }),
            "seq_len"
        );
        assert_eq!(
            field(PlanRequest {
                target_batch: 1 << 20,
                ..base
            }),
            "target_batch"
        );
    }

    #[test]
    fn memory_is_read_with_its_unit() {
        assert_eq!(parse_memory("24").unwrap(), 24 * GIB);
        assert_eq!(parse_memory("23,5 GiB").unwrap(), (23.5 * GIB as f64) as u64);
        assert_eq!(parse_memory("128KiB").unwrap(), 128 * 1024);
        for bad in ["", "0", "-1 GiB", "24 GB", "lots", "NaN", "inf GiB"] {
            assert_eq!(parse_memory(bad).unwrap_err().field, "memory", "{bad:?}");
        }
    }
}
