//! `gradlab plan`: the memory planner of `sim::planner` on the command line, as a table or as
//! JSON that scripts can rely on.

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};

use gradlab_sim::engine_memory::LabEngine;
use gradlab_sim::planner::{
    self, Architecture, Family, LoraTargets, Method, Optimizer, Outcome, Plan, PlanRequest, Precision, Sharding,
    Transformer, MODELS,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    Full,
    Lora,
    Qlora,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TargetsArg {
    Attention,
    AllLinear,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    Fp32,
    Bf16Mixed,
    Bf16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OptimizerArg {
    Adamw,
    #[value(name = "adamw-8bit", alias = "adamw8bit")]
    Adamw8bit,
    /// SGD with momentum.
    Sgd,
    /// SGD without momentum (no optimizer state).
    SgdPlain,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Cpu,
    Webgpu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FamilyArg {
    Gpt2,
    Llama,
    Qwen2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckpointingArg {
    Off,
    Layer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShardingArg {
    None,
    Zero1,
    Zero2,
    Zero3,
    Fsdp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    Table,
    Json,
}

/// What `gradlab plan` takes.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// List the models the planner knows, with their parameter counts, and stop.
    #[arg(long)]
    list_models: bool,
    /// Model id (see --list-models), or `custom` with the dimensions below.
    #[arg(long, required_unless_present = "list_models")]
    model: Option<String>,
    /// The Lab's engine whose allocation the Lab's models are planned with.
    #[arg(long, value_enum)]
    engine: Option<EngineArg>,
    /// custom: how blocks are built (GPT-2: LayerNorm, biases, GELU MLP; Llama: RMSNorm,
    /// SwiGLU, no biases; Qwen2: Llama with q/k/v biases).
    #[arg(long, value_enum, default_value_t = FamilyArg::Llama)]
    family: FamilyArg,
    /// custom: transformer blocks.
    #[arg(long)]
    layers: Option<u64>,
    /// custom: the hidden (embedding) width.
    #[arg(long)]
    hidden: Option<u64>,
    /// custom: attention heads.
    #[arg(long)]
    heads: Option<u64>,
    /// custom: key/value heads (default: one per head).
    #[arg(long)]
    kv_heads: Option<u64>,
    /// custom: the MLP's inner width (default: 4 x hidden).
    #[arg(long)]
    intermediate: Option<u64>,
    /// custom: vocabulary size.
    #[arg(long)]
    vocab: Option<u64>,
    /// custom: learned positions (GPT-2 family; default 1024 there, 0 otherwise).
    #[arg(long)]
    positions: Option<u64>,
    /// custom: the output head shares the token embedding's weights.
    #[arg(long)]
    tied_embeddings: bool,
    #[arg(long, value_enum, default_value_t = MethodArg::Full)]
    method: MethodArg,
    /// LoRA rank (with --method lora or qlora).
    #[arg(long, default_value_t = 16)]
    lora_rank: u64,
    /// The layers LoRA adapts.
    #[arg(long, value_enum, default_value_t = TargetsArg::Attention)]
    lora_targets: TargetsArg,
    /// Default: bf16-mixed, or fp32 for the Lab's own models (the precision their engines use).
    #[arg(long, value_enum)]
    precision: Option<PrecisionArg>,
    #[arg(long, value_enum, default_value_t = OptimizerArg::Adamw)]
    optimizer: OptimizerArg,
    /// Activation checkpointing: off, or every layer.
    #[arg(long, value_enum, default_value_t = CheckpointingArg::Off)]
    checkpointing: CheckpointingArg,
    /// Tokens per sequence.
    #[arg(long, required_unless_present = "list_models")]
    seq_len: Option<u64>,
    /// Memory of one device, GiB (decimals allowed).
    #[arg(long, required_unless_present_any = ["list_models", "memory_kib"], conflicts_with = "memory_kib")]
    memory_gib: Option<f64>,
    /// Memory of one device, KiB: for the Lab's own models, whose budgets are small.
    #[arg(long)]
    memory_kib: Option<f64>,
    #[arg(long, default_value_t = 1)]
    devices: u64,
    #[arg(long, value_enum, default_value_t = ShardingArg::None)]
    sharding: ShardingArg,
    /// Sequences per optimizer step, across all devices.
    #[arg(long, required_unless_present = "list_models")]
    target_batch: Option<u64>,
    #[arg(long, value_enum, default_value_t = PlanFormat::Table)]
    format: PlanFormat,
}

const GIB: f64 = (1u64 << 30) as f64;

impl PlanArgs {
    /// The model: a preset by id (on the chosen engine, for the Lab's), or custom dimensions.
    fn architecture(&self) -> Result<Architecture> {
        let id = self.model.as_deref().unwrap_or_default();
        if id == "custom" {
            let need = |field: &str, value: Option<u64>| {
                value.ok_or_else(|| anyhow::anyhow!("{field}: --model custom needs --{field}"))
            };
            let hidden = need("hidden", self.hidden)?;
            let heads = need("heads", self.heads)?;
            let family = match self.family {
                FamilyArg::Gpt2 => Family::Gpt2,
                FamilyArg::Llama => Family::Llama,
                FamilyArg::Qwen2 => Family::Qwen2,
            };
            return Ok(Architecture::Transformer(Transformer {
                family,
                layers: need("layers", self.layers)?,
                hidden,
                heads,
                kv_heads: self.kv_heads.unwrap_or(heads),
                intermediate: self.intermediate.unwrap_or(4 * hidden),
                vocabulary: need("vocab", self.vocab)?,
                positions: self.positions.unwrap_or(if family == Family::Gpt2 { 1024 } else { 0 }),
                tied_embeddings: self.tied_embeddings,
            }));
        }
        match (planner::model(id)?.architecture, self.engine) {
            (Architecture::LabMlp { .. }, Some(engine)) => Ok(Architecture::LabMlp {
                engine: match engine {
                    EngineArg::Cpu => LabEngine::Cpu,
                    EngineArg::Webgpu => LabEngine::Webgpu,
                },
            }),
            (Architecture::Transformer(_), Some(_)) => {
                anyhow::bail!("engine: only the Lab's own models run on the Lab's engines")
            }
            (architecture, None) => Ok(architecture),
        }
    }

    fn request(&self) -> Result<PlanRequest> {
        let memory = match (self.memory_gib, self.memory_kib) {
            (_, Some(kib)) => kib / (1u64 << 20) as f64,
            (gib, None) => gib.unwrap_or_default(),
        };
        if !(memory.is_finite() && memory > 0.0 && memory <= 1e6) {
            anyhow::bail!("memory: the device memory must be more than 0 (and at most 1000000 GiB), got {memory} GiB");
        }
        let architecture = self.architecture()?;
        let targets = match self.lora_targets {
            TargetsArg::Attention => LoraTargets::Attention,
            TargetsArg::AllLinear => LoraTargets::AllLinear,
        };
        Ok(PlanRequest {
            architecture,
            method: match self.method {
                MethodArg::Full => Method::Full,
                MethodArg::Lora => Method::Lora {
                    rank: self.lora_rank,
                    targets,
                },
                MethodArg::Qlora => Method::Qlora {
                    rank: self.lora_rank,
                    targets,
                },
            },
            precision: match self.precision {
                Some(PrecisionArg::Fp32) => Precision::Fp32,
                Some(PrecisionArg::Bf16Mixed) => Precision::Bf16Mixed,
                Some(PrecisionArg::Bf16) => Precision::Bf16,
                None if matches!(architecture, Architecture::LabMlp { .. }) => Precision::Fp32,
                None => Precision::Bf16Mixed,
            },
            optimizer: match self.optimizer {
                OptimizerArg::Adamw => Optimizer::AdamW,
                OptimizerArg::Adamw8bit => Optimizer::AdamW8bit,
                OptimizerArg::Sgd => Optimizer::SgdMomentum,
                OptimizerArg::SgdPlain => Optimizer::Sgd,
            },
            checkpointing: self.checkpointing == CheckpointingArg::Layer,
            sequence_length: self.seq_len.unwrap_or_default(),
            budget_bytes: (memory * GIB) as u64,
            devices: self.devices,
            sharding: match self.sharding {
                ShardingArg::None => Sharding::None,
                ShardingArg::Zero1 => Sharding::Zero1,
                ShardingArg::Zero2 => Sharding::Zero2,
                ShardingArg::Zero3 | ShardingArg::Fsdp => Sharding::Zero3,
            },
            target_batch: self.target_batch.unwrap_or_default(),
        })
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB)
}

fn table(plan: &Plan, out: &mut dyn Write) -> Result<()> {
    let p = &plan.parameters;
    let m = &plan.memory_bytes;
    writeln!(out, "parameters: {} total, {} trainable", p.total, p.trainable)?;
    writeln!(out, "memory per device (budget {}, {} B):", gib(m.budget), m.budget)?;
    for (what, bytes) in [
        ("weights", m.weights),
        ("gradients", m.gradients),
        ("optimizer states", m.optimizer),
        ("activations (one micro-batch)", m.activations),
        ("margin (runtime, fragmentation)", m.margin),
        ("total", m.total),
    ] {
        writeln!(out, "  {what:<31} {:>12}  {bytes:>15} B", gib(bytes))?;
    }
    writeln!(
        out,
        "micro-batch {} x {} accumulation steps x {} devices = effective batch {}",
        plan.micro_batch, plan.accumulation_steps, plan.devices, plan.effective_batch
    )?;
    if !plan.exact {
        match plan.exact_micro_batch {
            Some(b) => writeln!(
                out,
                "the target is not a multiple: a micro-batch of {b} reaches it exactly; otherwise scale the learning rate with the effective batch"
            )?,
            None => writeln!(
                out,
                "the target is not a multiple of devices x micro-batch: keep the learning rate tuned for {} sequences, or scale it by {}/target",
                plan.effective_batch, plan.effective_batch
            )?,
        }
    }
    let c = &plan.costs;
    writeln!(
        out,
        "costs: {} forward pass(es) per micro-batch; {} passes per optimizer step; all-reduce {} per device, {} per step with no_sync, {} without",
        c.forward_passes_per_micro_batch,
        c.passes_per_step,
        gib(c.all_reduce_bytes),
        c.all_reduces_with_no_sync,
        c.all_reduces_without_no_sync
    )?;
    writeln!(
        out,
        "Hugging Face TrainingArguments: {}",
        plan.configs.hf_training_arguments
    )?;
    writeln!(out, "DeepSpeed: {}", plan.configs.deepspeed)?;
    writeln!(out, "Lightning Trainer: {}", plan.configs.lightning)?;
    write!(out, "PyTorch:\n{}", plan.configs.pytorch_loop)?;
    Ok(())
}

/// Runs `gradlab plan`. Nothing fitting is an answer, not an error: it says what would fit and
/// exits with a failure status, so scripts notice.
pub fn run(args: &PlanArgs, out: &mut dyn Write) -> Result<bool> {
    if args.list_models {
        for model in MODELS {
            let p = model.architecture.parameters();
            writeln!(
                out,
                "{:<14} {:<20} {:>15} parameters  ({})",
                model.id, model.name, p.total, model.source
            )?;
        }
        return Ok(true);
    }
    let outcome = args.request()?.plan()?;
    match args.format {
        PlanFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&outcome)?)?,
        PlanFormat::Table => match &outcome {
            Outcome::Fits(plan) => table(plan, out)?,
            Outcome::NothingFits(reason) => {
                writeln!(
                    out,
                    "nothing fits: one sequence needs {} of a {} budget",
                    gib(reason.memory_bytes.total),
                    gib(reason.memory_bytes.budget)
                )?;
                for change in &reason.would_fit {
                    writeln!(out, "  would fit with: {}", change.label())?;
                }
                if let Some(together) = &reason.would_fit_together {
                    let labels: Vec<&str> = together.iter().map(|l| l.label()).collect();
                    writeln!(out, "  would fit with, together: {}", labels.join(" + "))?;
                }
            }
        },
    }
    Ok(matches!(outcome, Outcome::Fits(_)))
}
