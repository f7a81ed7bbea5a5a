//! The tiny GPT's worker ([`GptWorkerLab`], the `gradlab-gpt-worker` binary): the token-count
//! experiment built from plays the page sends, trained between turns of the worker's event loop,
//! and sampled. Its own wasm, so that the Lab's CPU worker carries none of this.

use gradlab_sim::gpt::bench::{self, GptBenchCase};
use gradlab_sim::gpt::lab::GptLab;
use gradlab_sim::gpt::memory::measure;
use gradlab_sim::gpt::scenario::GptSettings;
use gradlab_sim::gpt::text::Corpus;

use crate::{FromWorker, GptBuilt, Serve, ToWorker, Training, BENCH_MEASURE_MS};

/// The longest sample a page may ask for (a sample recomputes the context at each character).
pub const MAX_SAMPLE_CHARS: usize = 400;
/// The most timed steps per N a memory request may ask for (each is a full step of the model).
pub const MAX_MEMORY_STEPS: u64 = 20;

/// What a worker of the other kind answers to a tiny-GPT request.
pub const NOT_HERE: &str = "the tiny GPT trains in its own worker (gpt-worker.js), not this one";
const ONLY_GPT: &str = "this worker trains the tiny GPT only";
const NOT_BUILT: &str = "no tiny-GPT experiment has been built";

/// The worker's side of the tiny-GPT page: its lab and how much of its history the page has.
#[derive(Debug, Default)]
pub struct GptWorkerLab {
    lab: Option<GptLab<f32>>,
    sent: Vec<usize>,
}

impl GptWorkerLab {
    fn build(&mut self, settings: &GptSettings, plays: &[(String, String)]) -> Result<FromWorker, String> {
        self.lab = None;
        let (config, corpus) = settings.lab_input(plays).map_err(|e| e.to_string())?;
        let lab = GptLab::<f32>::new(config, corpus).map_err(|e| e.to_string())?;
        let built = GptBuilt {
            reductions: lab.runs().iter().map(|r| r.reduction).collect(),
            parameters: lab.layout().parameter_count,
            vocabulary: lab.corpus().vocabulary.len(),
            train_examples: lab.corpus().train.len(),
            validation_examples: lab.corpus().validation.len(),
            batch: lab.config().batch,
            micro_batches: lab.config().micro_batches,
            spec: lab.config().model,
        };
        self.lab = Some(lab);
        self.sent.clear();
        Ok(FromWorker::GptBuilt(built))
    }

    fn lab(&mut self) -> Result<&mut GptLab<f32>, String> {
        self.lab.as_mut().ok_or_else(|| NOT_BUILT.to_string())
    }
}

impl Serve for GptWorkerLab {
    fn handle(&mut self, request: ToWorker) -> FromWorker {
        let answer = match request {
            ToWorker::BuildGpt { settings, plays } => self.build(&settings, &plays),
            ToWorker::SampleGpt { temperature, .. } if !(temperature >= 0.0 && temperature.is_finite()) => {
                Err(format!("a sampling temperature must be 0 or more, got {temperature}"))
            }
            ToWorker::SampleGpt {
                prompt,
                count,
                temperature,
                seed,
                weights,
            } => self.lab().and_then(|lab| {
                let count = count.min(MAX_SAMPLE_CHARS);
                let texts = match weights {
                    None => (0..lab.runs().len())
                        .map(|run| lab.sample(run, &prompt, count, temperature, seed))
                        .collect(),
                    Some(weights) if weights.len() == lab.runs().len() => weights
                        .iter()
                        .map(|w| {
                            lab.sample_with(w, &prompt, count, temperature, seed).ok_or_else(|| {
                                format!(
                                    "weights of {} values for a model of {} parameters",
                                    w.len(),
                                    lab.layout().parameter_count
                                )
                            })
                        })
                        .collect::<Result<_, _>>()?,
                    Some(weights) => {
                        return Err(format!(
                            "{} runs' weights for a lab of {} runs",
                            weights.len(),
                            lab.runs().len()
                        ))
                    }
                };
                Ok(FromWorker::GptSampled { texts })
            }),
            ToWorker::MeasureGptMemory { steps } => self.lab().and_then(|lab| {
                #[allow(
                    clippy::disallowed_methods,
                    reason = "web_time::Instant is std's natively (what the lint sees) and performance.now() on wasm"
                )]
                let start = web_time::Instant::now();
                let now_ms = || start.elapsed().as_secs_f64() * 1000.0;
                let steps = steps.clamp(1, MAX_MEMORY_STEPS);
                measure::<f32>(lab.config(), lab.corpus(), steps, &now_ms)
                    .map(|rows| FromWorker::GptMemory { rows })
                    .map_err(|e| e.to_string())
            }),
            ToWorker::TraceGpt { batch, weights } => self.lab().and_then(|lab| {
                lab.trace_step(&batch, weights.as_deref())
                    .map(|trace| FromWorker::GptTraced { trace })
                    .ok_or_else(|| {
                        "no step to look inside yet, or examples or weights that are not this lab's".to_string()
                    })
            }),
            ToWorker::BenchGpt { plays } => bench_gpt(&plays),
            _ => Err(ONLY_GPT.to_string()),
        };
        answer.unwrap_or_else(|message| FromWorker::Failed { message })
    }

    fn step_of(&mut self, training: Training) -> Result<(), String> {
        match training {
            Training::Gpt => {
                self.lab()?.step();
                Ok(())
            }
            Training::Mlp => Err(ONLY_GPT.to_string()),
        }
    }

    fn advanced_of(&mut self, training: Training, taken: u64) -> FromWorker {
        match (&self.lab, training) {
            (Some(lab), Training::Gpt) => FromWorker::GptAdvanced {
                taken,
                update: lab.update_since(&mut self.sent),
            },
            (None, Training::Gpt) => FromWorker::Failed {
                message: NOT_BUILT.to_string(),
            },
            (_, Training::Mlp) => FromWorker::Failed {
                message: ONLY_GPT.to_string(),
            },
        }
    }
}

/// Every case of the tiny GPT's benchmark on this engine (the CPU engine at f32, in wasm in the
/// page's worker), each for at least [`BENCH_MEASURE_MS`].
fn bench_gpt(plays: &[(String, String)]) -> Result<FromWorker, String> {
    #[allow(
        clippy::disallowed_methods,
        reason = "web_time::Instant is std's natively (what the lint sees) and performance.now() on wasm"
    )]
    let start = web_time::Instant::now();
    let now_ms = || start.elapsed().as_secs_f64() * 1000.0;
    let mut timings = Vec::new();
    for case in GptBenchCase::ALL {
        let corpus =
            Corpus::from_named(plays, case.examples, case.config().model.context).map_err(|e| e.to_string())?;
        let timing = bench::time_cpu(case, corpus, 1, BENCH_MEASURE_MS, &now_ms).map_err(|e| e.to_string())?;
        timings.push(timing);
    }
    Ok(FromWorker::GptBenched { timings })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::ask;
    use crate::WorkerLab;
    use gradlab_sim::gpt::lab::Reduction;
    use gradlab_sim::gpt::scenario::{GptScenario, TINY_GPT_TOKENS};
    use gradlab_sim::gpt::text::{Corpus, Play};

    const MACBETH: &str = include_str!("../../../assets/text/shakespeare/macbeth.txt");

    /// The learner's settings reach the lab the worker builds; settings it cannot train are
    /// answered with the reason, and the worker builds again after them.
    #[test]
    fn the_worker_builds_the_learners_settings_or_says_why_not() {
        use gradlab_sim::gpt::spec::GptSpec;
        use gradlab_sim::gpt::text::ExampleKind;
        let mut worker = GptWorkerLab::default();
        let plays = vec![("macbeth".to_string(), MACBETH.to_string())];
        let settings = GptSettings {
            examples: ExampleKind::Blocks,
            model: GptSpec {
                layers: 1,
                embedding: 32,
                heads: 2,
                context: 32,
            },
            micro_batches: 4,
            ..GptSettings::default()
        };
        let FromWorker::GptBuilt(built) = ask(
            &mut worker,
            ToWorker::BuildGpt {
                settings,
                plays: plays.clone(),
            },
        ) else {
            panic!("build");
        };
        assert_eq!((built.spec, built.micro_batches), (settings.model, 4));
        let bad = GptSettings {
            micro_batches: 5,
            ..settings
        };
        let FromWorker::Failed { message } = ask(&mut worker, ToWorker::BuildGpt { settings: bad, plays }) else {
            panic!("refused")
        };
        assert!(message.contains("micro_batches"), "{message}");
    }

    /// The page's tiny-GPT mirror holds what a lab trained on the page holds, and the samples
    /// are that lab's.
    #[test]
    fn the_tiny_gpt_trains_in_the_worker_as_on_the_page() {
        use gradlab_sim::gpt::lab::GptMirror;
        let mut worker = GptWorkerLab::default();
        let plays = vec![("macbeth".to_string(), MACBETH.to_string())];
        let FromWorker::GptBuilt(built) = ask(
            &mut worker,
            ToWorker::BuildGpt {
                settings: GptSettings::default(),
                plays: plays.clone(),
            },
        ) else {
            panic!("build");
        };
        assert_eq!(built.reductions, Reduction::ALL);
        let config = GptScenario::by_id(TINY_GPT_TOKENS).expect("scenario").parts[0]
            .config
            .clone();
        let corpus = Corpus::new(
            &[Play {
                name: "macbeth",
                text: MACBETH,
            }],
            config.examples,
            config.model.context,
        )
        .expect("corpus");
        let mut on_page = GptLab::<f32>::new(config, corpus).expect("lab");
        let mut mirror = GptMirror::new(built.reductions);
        for steps in [1, 2] {
            let FromWorker::GptAdvanced { taken, update } = ask(&mut worker, ToWorker::AdvanceGpt { steps }) else {
                panic!("advance");
            };
            assert_eq!(taken, steps);
            mirror.apply(update);
            for _ in 0..steps {
                on_page.step();
            }
        }
        for (run, history) in on_page.runs().iter().zip(&mirror.histories) {
            assert_eq!(&run.history, history);
        }
        let FromWorker::GptSampled { texts } = ask(
            &mut worker,
            ToWorker::SampleGpt {
                prompt: "MACBETH.\n".into(),
                count: 30,
                temperature: 0.8,
                seed: 1,
                weights: None,
            },
        ) else {
            panic!("sample");
        };
        assert_eq!(texts.len(), 3);
        assert_eq!(texts[0], on_page.sample(0, "MACBETH.\n", 30, 0.8, 1));
        // Another engine's weights (here other weights of the same model) are sampled as given,
        // and weights for another number of runs are refused.
        let other: Vec<f32> = on_page.layout().initialize(99).iter().map(|&p| p as f32).collect();
        let sample_with = |weights| ToWorker::SampleGpt {
            prompt: "MACBETH.\n".into(),
            count: 30,
            temperature: 0.8,
            seed: 1,
            weights: Some(weights),
        };
        let FromWorker::GptSampled { texts: given } = ask(&mut worker, sample_with(vec![other.clone(); 3])) else {
            panic!("sample with weights");
        };
        let expected = on_page
            .sample_with(&other, "MACBETH.\n", 30, 0.8, 1)
            .expect("weights of the model");
        assert_eq!(given, vec![expected; 3]);
        assert_ne!(given[0], texts[0], "the given weights, not the worker's own");
        let FromWorker::GptMemory { rows } = ask(&mut worker, ToWorker::MeasureGptMemory { steps: 1 }) else {
            panic!("memory");
        };
        assert_eq!(
            rows.iter().map(|r| r.micro_batches).collect::<Vec<_>>(),
            [1, 2, 4, 8, 16, 32]
        );
        assert!(
            rows.windows(2).all(|w| w[1].bytes.total() < w[0].bytes.total()),
            "{rows:?}"
        );
        let FromWorker::GptTraced { trace } = ask(
            &mut worker,
            ToWorker::TraceGpt {
                batch: Vec::new(),
                weights: None,
            },
        ) else {
            panic!("trace");
        };
        assert_eq!(Some(trace), on_page.trace_step(&[], None));
        let answer = ask(
            &mut worker,
            ToWorker::TraceGpt {
                batch: vec![usize::MAX],
                weights: None,
            },
        );
        assert!(
            matches!(answer, FromWorker::Failed { ref message } if message.contains("no step to look inside")),
            "{answer:?}"
        );
        let answer = ask(&mut worker, sample_with(vec![other[1..].to_vec(); 3]));
        assert!(
            matches!(answer, FromWorker::Failed { ref message } if message.contains("for a model of")),
            "{answer:?}"
        );
        let answer = ask(&mut worker, sample_with(vec![other]));
        assert!(
            matches!(answer, FromWorker::Failed { ref message } if message.contains("1 runs' weights")),
            "{answer:?}"
        );
        let answer = ask(
            &mut worker,
            ToWorker::BuildGpt {
                settings: GptSettings {
                    learning_rate: -1.0,
                    ..GptSettings::default()
                },
                plays,
            },
        );
        assert!(
            matches!(answer, FromWorker::Failed { ref message } if message.contains("learning_rate")),
            "{answer:?}"
        );
        let answer = ask(&mut worker, ToWorker::AdvanceGpt { steps: 1 });
        assert!(
            matches!(answer, FromWorker::Failed { ref message } if message.contains("no tiny-GPT")),
            "{answer:?}"
        );
    }

    /// The bench request times every case of the shared workload, counting the tokens the lab
    /// trained, with no lab built first.
    #[test]
    fn the_worker_times_the_tiny_gpt_benchmark() {
        let plays = vec![("macbeth".to_string(), MACBETH.to_string())];
        let FromWorker::GptBenched { timings } = ask(&mut GptWorkerLab::default(), ToWorker::BenchGpt { plays }) else {
            panic!("bench")
        };
        assert_eq!(timings.len(), GptBenchCase::ALL.len());
        for (case, timing) in GptBenchCase::ALL.iter().zip(&timings) {
            assert!(timing.steps >= 1 && timing.elapsed_ms >= BENCH_MEASURE_MS, "{timing:?}");
            assert!(timing.tokens_per_second() > 0.0);
            let config = case.config();
            let corpus = Corpus::new(
                &[Play {
                    name: "macbeth",
                    text: MACBETH,
                }],
                case.examples,
                config.model.context,
            )
            .expect("corpus");
            assert_eq!(
                timing.tokens,
                bench::timed_tokens(&config, &corpus, bench::GPT_BENCH_WARM_UP_STEPS, timing.steps)
            );
        }
    }

    /// Each kind of worker refuses the other's requests with a message.
    #[test]
    fn each_worker_refuses_the_other_kinds_requests() {
        let answer = ask(&mut WorkerLab::default(), ToWorker::AdvanceGpt { steps: 1 });
        assert!(
            matches!(answer, FromWorker::Failed { ref message } if message == NOT_HERE),
            "{answer:?}"
        );
        let answer = ask(
            &mut WorkerLab::default(),
            ToWorker::BuildGpt {
                settings: GptSettings::default(),
                plays: Vec::new(),
            },
        );
        assert!(
            matches!(answer, FromWorker::Failed { ref message } if message == NOT_HERE),
            "{answer:?}"
        );
        let answer = ask(&mut GptWorkerLab::default(), ToWorker::Advance { steps: 1 });
        assert!(
            matches!(answer, FromWorker::Failed { ref message } if message == ONLY_GPT),
            "{answer:?}"
        );
        let answer = ask(&mut GptWorkerLab::default(), ToWorker::RunningMeans);
        assert!(
            matches!(answer, FromWorker::Failed { ref message } if message == ONLY_GPT),
            "{answer:?}"
        );
    }
}
