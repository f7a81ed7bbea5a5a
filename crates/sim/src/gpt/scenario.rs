//! The tiny GPT's named experiments. A scenario is one or more parts, each a lab of runs side by
//! side over one way of cutting the text (the token-count experiment has two: variable-length
//! lines, where the per-micro-batch mean drifts, and fixed blocks, where it cannot).

use serde::{Deserialize, Serialize};

use super::lab::{GptLabConfig, Reduction};
use super::spec::GptSpec;
use super::text::{Corpus, ExampleKind};
use crate::optim::ScheduleSpec;
use crate::ConfigError;

/// The id of the token-count experiment.
pub const TINY_GPT_TOKENS: &str = "tiny_gpt_tokens";

/// The id of the memory experiment: why people accumulate.
pub const TINY_GPT_MEMORY: &str = "tiny_gpt_memory";

/// Timed steps per N of the memory experiment, unless told.
pub const MEMORY_TIMED_STEPS: u64 = 3;

/// Every tiny-GPT scenario id.
pub const GPT_SCENARIO_IDS: [&str; 2] = [TINY_GPT_TOKENS, TINY_GPT_MEMORY];

/// What a scenario's parts are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GptExperiment {
    /// Runs trained side by side (`gpt::lab`).
    Runs,
    /// Each part's step measured as the full batch and as N micro-batches (`gpt::memory`),
    /// `steps` timed steps each.
    Memory,
}

/// How the CLI and the page sample each run's text, so that both show the same continuation of
/// the same prompt for the same weights.
pub const SAMPLE_PROMPT: &str = "MACBETH.\n";
pub const SAMPLE_CHARS: usize = 120;
pub const SAMPLE_TEMPERATURE: f64 = 0.8;
pub const SAMPLE_SEED: u64 = 1;

/// One part of a scenario: a label and its lab.
#[derive(Debug, Clone, PartialEq)]
pub struct GptPart {
    pub label: &'static str,
    pub config: GptLabConfig,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GptScenario {
    pub id: &'static str,
    pub title: &'static str,
    pub summary: &'static str,
    pub parts: Vec<GptPart>,
    /// Optimizer steps `gradlab run` takes by default (timed steps per N for a memory
    /// experiment).
    pub steps: u64,
    pub experiment: GptExperiment,
}

impl GptScenario {
    pub fn by_id(id: &str) -> Option<Self> {
        match id {
            TINY_GPT_TOKENS => Some(tokens()),
            TINY_GPT_MEMORY => Some(memory()),
            _ => None,
        }
    }
}

/// What a learner chooses for the token-count experiment on its page (its sandbox): how the
/// text is cut, the model, N, the peak learning rate and its warm-up. The rest is the preset's:
/// a batch of 32 examples, AdamW (0.9, 0.99) with decay 0.1 on the matrices, warm-up then cosine
/// decay to a tenth over 2,000 steps, clipping at 1, and the three runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GptSettings {
    pub examples: ExampleKind,
    pub model: GptSpec,
    /// N, the micro-batches of the accumulated runs; it divides the batch.
    pub micro_batches: usize,
    /// The peak learning rate, reached at the end of the warm-up.
    pub learning_rate: f64,
    pub warmup_steps: u32,
}

impl Default for GptSettings {
    /// The preset's first part: variable-length lines.
    fn default() -> Self {
        Self::of(&GptLabConfig::default())
    }
}

impl GptSettings {
    /// The choices `config` makes.
    fn of(config: &GptLabConfig) -> Self {
        let (learning_rate, warmup_steps) = match config.schedule {
            ScheduleSpec::WarmupCosine {
                learning_rate,
                warmup_steps,
                ..
            } => (learning_rate, warmup_steps),
            ScheduleSpec::Constant { learning_rate } => (learning_rate, 0),
        };
        Self {
            examples: config.examples,
            model: config.model,
            micro_batches: config.micro_batches,
            learning_rate,
            warmup_steps,
        }
    }

    /// The experiment's lab settings with these choices, checked.
    pub fn config(&self) -> Result<GptLabConfig, ConfigError> {
        let mut config = tokens()
            .parts
            .into_iter()
            .find(|p| p.config.examples == self.examples)
            .map(|p| p.config)
            .unwrap_or_default();
        config.model = self.model;
        config.micro_batches = self.micro_batches;
        if let ScheduleSpec::WarmupCosine {
            learning_rate,
            warmup_steps,
            ..
        } = &mut config.schedule
        {
            *learning_rate = self.learning_rate;
            *warmup_steps = self.warmup_steps;
        }
        config.validate()?;
        Ok(config)
    }

    /// The lab settings and `plays` (name, text) cut for them: what every engine's lab of the
    /// token-count experiment is built from.
    pub fn lab_input(&self, plays: &[(String, String)]) -> Result<(GptLabConfig, Corpus), ConfigError> {
        let config = self.config()?;
        let corpus = Corpus::from_named(plays, config.examples, config.model.context)?;
        Ok((config, corpus))
    }
}

/// The bug that shipped in 2024: full batch, the per-micro-batch mean / N, and the sum over the
/// window's tokens, on lines and then on fixed blocks.
fn tokens() -> GptScenario {
    let lines = GptLabConfig {
        runs: Reduction::ALL.to_vec(),
        ..GptLabConfig::default()
    };
    let blocks = GptLabConfig {
        examples: ExampleKind::Blocks,
        ..lines.clone()
    };
    GptScenario {
        id: TINY_GPT_TOKENS,
        title: "Tiny GPT: the token count of accumulation",
        summary: "A character-level GPT on Shakespeare: the per-micro-batch mean / N drifts from the full batch on padded lines; dividing by the window's tokens does not; with fixed blocks all agree",
        parts: vec![
            GptPart {
                label: "lines",
                config: lines,
            },
            GptPart {
                label: "blocks",
                config: blocks,
            },
        ],
        steps: 200,
        experiment: GptExperiment::Runs,
    }
}

/// Why people accumulate: the activations one pass keeps, and the time of a step, for the full
/// batch and 2 to 32 micro-batches, on fixed blocks (each pass exactly `batch / N` examples of
/// the context) and on lines.
fn memory() -> GptScenario {
    let tokens = tokens();
    let parts = tokens.parts.into_iter().rev().collect();
    GptScenario {
        id: TINY_GPT_MEMORY,
        title: "Tiny GPT: the memory of one pass",
        summary: "The activations a pass of the tiny GPT keeps for its backward (per token, attention's context² term, logits) and the time of an optimizer step, for the full batch and N micro-batches",
        parts,
        steps: MEMORY_TIMED_STEPS,
        experiment: GptExperiment::Memory,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page's settings left alone build exactly the preset's parts; each choice lands in its
    /// field and nothing else changes.
    #[test]
    fn settings_build_the_presets_parts_and_change_only_what_they_name() {
        let preset = tokens();
        for part in &preset.parts {
            let settings = GptSettings {
                examples: part.config.examples,
                ..GptSettings::default()
            };
            assert_eq!(settings.config().unwrap(), part.config, "{}", part.label);
        }
        let chosen = GptSettings {
            examples: ExampleKind::Blocks,
            model: GptSpec {
                layers: 1,
                embedding: 48,
                heads: 3,
                context: 32,
            },
            micro_batches: 4,
            learning_rate: 1e-3,
            warmup_steps: 10,
        };
        let config = chosen.config().unwrap();
        assert_eq!(GptSettings::of(&config), chosen);
        let expected = GptLabConfig {
            examples: ExampleKind::Blocks,
            model: chosen.model,
            micro_batches: 4,
            schedule: ScheduleSpec::WarmupCosine {
                learning_rate: 1e-3,
                warmup_steps: 10,
                total_steps: 2_000,
                final_fraction: 0.1,
            },
            ..preset.parts[1].config.clone()
        };
        assert_eq!(config, expected);
        let text: String = serde_json::to_string(&chosen).unwrap();
        assert_eq!(serde_json::from_str::<GptSettings>(&text).unwrap(), chosen);
    }

    #[test]
    fn settings_the_lab_cannot_train_are_refused_by_field() {
        let field = |change: fn(&mut GptSettings)| {
            let mut settings = GptSettings::default();
            change(&mut settings);
            settings.config().unwrap_err().field
        };
        assert_eq!(field(|s| s.model.embedding = 50), "model.embedding");
        assert_eq!(field(|s| s.model.layers = 5), "model.layers");
        assert_eq!(field(|s| s.micro_batches = 3), "micro_batches");
        assert_eq!(field(|s| s.learning_rate = 0.0), "schedule.learning_rate");
        assert_eq!(field(|s| s.warmup_steps = 2_000), "schedule.warmup_steps");
    }
}
