//! The tiny GPT's benchmark workload, the same wherever it is timed (`gradlab bench` natively,
//! the bench page's CPU worker in wasm and its WebGPU engine): the default model and batch, on
//! fixed blocks (the workload of `scripts/pytorch_gpt.py`) and on lines, as one full batch and as
//! N micro-batches; one run, no comparison pass, no validation. The figure is predicted tokens
//! per second.

use serde::{Deserialize, Serialize};

use super::lab::{ExampleOrder, GptLab, GptLabConfig, GptStepPlan, Reduction};
use super::text::{Corpus, ExampleKind};
use crate::ConfigError;

/// Steps taken before the clock starts (the workspace grown, the caches warm).
pub const GPT_BENCH_WARM_UP_STEPS: u64 = 3;

/// One timed configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GptBenchCase {
    pub examples: ExampleKind,
    /// `FullBatch`, or `WindowTokens` for N micro-batches.
    pub reduction: Reduction,
}

impl GptBenchCase {
    pub const ALL: [GptBenchCase; 4] = [
        GptBenchCase {
            examples: ExampleKind::Blocks,
            reduction: Reduction::FullBatch,
        },
        GptBenchCase {
            examples: ExampleKind::Blocks,
            reduction: Reduction::WindowTokens,
        },
        GptBenchCase {
            examples: ExampleKind::Lines,
            reduction: Reduction::FullBatch,
        },
        GptBenchCase {
            examples: ExampleKind::Lines,
            reduction: Reduction::WindowTokens,
        },
    ];

    /// The lab settings it times.
    pub fn config(&self) -> GptLabConfig {
        GptLabConfig {
            examples: self.examples,
            runs: vec![self.reduction],
            eval_every: 0,
            compare: false,
            ..GptLabConfig::default()
        }
    }

    /// "full batch", or "N x examples" for the accumulated run.
    pub fn regime(&self) -> String {
        let config = self.config();
        if self.reduction.accumulates() {
            format!("{} x {}", config.micro_batches, config.batch / config.micro_batches)
        } else {
            "full batch".to_string()
        }
    }
}

/// The model and batch every case shares, in words.
pub fn workload() -> String {
    let config = GptLabConfig::default();
    let model = config.model;
    format!(
        "{} layers x {}, {} heads, context {}; Shakespeare, batch {}",
        model.layers, model.embedding, model.heads, model.context, config.batch
    )
}

/// Timed steps and the predicted tokens they trained.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GptBenchTiming {
    pub steps: u64,
    pub tokens: usize,
    pub elapsed_ms: f64,
}

impl GptBenchTiming {
    pub fn tokens_per_second(&self) -> f64 {
        1000.0 * self.tokens as f64 / self.elapsed_ms.max(1e-9)
    }

    pub fn steps_per_second(&self) -> f64 {
        1000.0 * self.steps as f64 / self.elapsed_ms.max(1e-9)
    }
}

/// The predicted tokens of steps `skip..skip + steps` of `config`'s example order: what any
/// engine trains in them (every engine takes the same examples in the same order).
pub fn timed_tokens(config: &GptLabConfig, corpus: &Corpus, skip: u64, steps: u64) -> usize {
    let mut order = ExampleOrder::new(config.seed, corpus.train.len());
    let mut tokens = 0;
    for step in 0..skip + steps {
        let batch = order.next_batch(config.batch);
        if step >= skip {
            tokens += GptStepPlan::new(config, corpus, step, batch).window_tokens;
        }
    }
    tokens
}

/// Times `case` on the CPU engine at f32 over `corpus` (cut for it): at least `steps` steps and
/// at least `measure_ms` milliseconds by `now_ms` (the caller's clock), after the warm-up.
pub fn time_cpu(
    case: GptBenchCase,
    corpus: Corpus,
    steps: u64,
    measure_ms: f64,
    now_ms: &dyn Fn() -> f64,
) -> Result<GptBenchTiming, ConfigError> {
    let mut lab = GptLab::<f32>::new(case.config(), corpus)?;
    for _ in 0..GPT_BENCH_WARM_UP_STEPS {
        lab.step();
    }
    let start = now_ms();
    let (mut taken, mut tokens) = (0, 0);
    while taken < steps.max(1) || now_ms() - start < measure_ms {
        lab.step();
        taken += 1;
        tokens += lab.window().iter().map(|m| m.tokens).sum::<usize>();
    }
    Ok(GptBenchTiming {
        steps: taken,
        tokens,
        elapsed_ms: now_ms() - start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpt::text::Play;

    const MACBETH: &str = include_str!("../../../../assets/text/shakespeare/macbeth.txt");

    /// The tokens counted from the example order are those the CPU lab trained, so an engine
    /// that is timed without counting (WebGPU) reports the same figure's numerator.
    #[test]
    fn the_order_predicts_the_tokens_the_lab_trains() {
        let ticks = std::cell::Cell::new(0.0);
        let clock = || {
            ticks.set(ticks.get() + 1.0);
            ticks.get()
        };
        for case in GptBenchCase::ALL {
            let config = case.config();
            let play = [Play {
                name: "macbeth",
                text: MACBETH,
            }];
            let corpus = Corpus::new(&play, config.examples, config.model.context).unwrap();
            let timing = time_cpu(case, corpus.clone(), 2, 0.0, &clock).unwrap();
            assert!(timing.steps >= 2 && timing.elapsed_ms > 0.0, "{timing:?}");
            assert_eq!(
                timing.tokens,
                timed_tokens(&config, &corpus, GPT_BENCH_WARM_UP_STEPS, timing.steps)
            );
            if case.examples == ExampleKind::Blocks {
                let per_step = config.batch * config.model.context;
                assert_eq!(timing.tokens, per_step * timing.steps as usize);
            }
        }
        assert_eq!(GptBenchCase::ALL[1].regime(), "8 x 4");
        assert_eq!(GptBenchCase::ALL[0].regime(), "full batch");
    }
}
