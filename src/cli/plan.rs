//! `gradlab plan`: the memory planner of `sim::planner` on the command line, as a table or as
//! JSON that scripts can rely on.

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::sim::planner::{
    self, LoraTargets, Method, Optimizer, Outcome, Plan, PlanRequest, Precision, Sharding, MODELS,
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
    Adamw8bit,
    Sgd,
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
    /// Model id (see --list-models).
    #[arg(long, required_unless_present = "list_models")]
    model: Option<String>,
    #[arg(long, value_enum, default_value_t = MethodArg::Full)]
    method: MethodArg,
    /// LoRA rank (with --method lora or qlora).
    #[arg(long, default_value_t = 16)]
    lora_rank: u64,
    /// The layers LoRA adapts.
    #[arg(long, value_enum, default_value_t = TargetsArg::Attention)]
    lora_targets: TargetsArg,
    #[arg(long, value_enum, default_value_t = PrecisionArg::Bf16Mixed)]
    precision: PrecisionArg,
    #[arg(long, value_enum, default_value_t = OptimizerArg::Adamw)]
    optimizer: OptimizerArg,
    /// Activation checkpointing: off, or every layer.
    #[arg(long, value_enum, default_value_t = CheckpointingArg::Off)]
    checkpointing: CheckpointingArg,
    /// Tokens per sequence.
    #[arg(long, required_unless_present = "list_models")]
    seq_len: Option<u64>,
    /// Memory of one device, GiB (decimals allowed).
    #[arg(long, required_unless_present = "list_models")]
    memory_gib: Option<f64>,
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
    fn request(&self) -> Result<PlanRequest> {
        let model = planner::model(self.model.as_deref().unwrap_or_default())?;
        let memory = self.memory_gib.unwrap_or_default();
        if !(memory.is_finite() && memory > 0.0 && memory <= 1e6) {
            anyhow::bail!("memory: the device memory must be more than 0 GiB (and at most 1000000), got {memory}");
        }
        let targets = match self.lora_targets {
            TargetsArg::Attention => LoraTargets::Attention,
            TargetsArg::AllLinear => LoraTargets::AllLinear,
        };
        Ok(PlanRequest {
            architecture: model.architecture,
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
                PrecisionArg::Fp32 => Precision::Fp32,
                PrecisionArg::Bf16Mixed => Precision::Bf16Mixed,
                PrecisionArg::Bf16 => Precision::Bf16,
            },
            optimizer: match self.optimizer {
                OptimizerArg::Adamw => Optimizer::AdamW,
                OptimizerArg::Adamw8bit => Optimizer::AdamW8bit,
                OptimizerArg::Sgd => Optimizer::SgdMomentum,
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
    writeln!(out, "memory per device (budget {}):", gib(m.budget))?;
    for (what, bytes) in [
        ("weights", m.weights),
        ("gradients", m.gradients),
        ("optimizer states", m.optimizer),
        ("activations (one micro-batch)", m.activations),
        ("margin (10 % of the budget)", m.margin),
        ("total", m.total),
    ] {
        writeln!(out, "  {what:<31} {:>12}", gib(bytes))?;
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
