//! The tiny GPT's named experiments. A scenario is one or more parts, each a lab of runs side by
//! side over one way of cutting the text (the token-count experiment has two: variable-length
//! lines, where the per-micro-batch mean drifts, and fixed blocks, where it cannot).

use super::lab::{GptLabConfig, Reduction};
use super::text::{Corpus, ExampleKind, Play};
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

    /// The token-count experiment's part `part` over `plays` (name, text): its settings and the
    /// text cut for them, what every engine's lab is built from.
    pub fn tokens_part(part: &str, plays: &[(String, String)]) -> Result<(GptLabConfig, Corpus), ConfigError> {
        let config = tokens()
            .parts
            .into_iter()
            .find(|p| p.label == part)
            .ok_or_else(|| ConfigError::new("part", format!("the tiny-GPT experiment has no part \"{part}\"")))?
            .config;
        let plays: Vec<Play<'_>> = plays.iter().map(|(name, text)| Play { name, text }).collect();
        let corpus = Corpus::new(&plays, config.examples, config.model.context)?;
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
