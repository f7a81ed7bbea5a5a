//! The CPU engine in a Web Worker, as plain data: the messages between the Lab page and the
//! worker, and what the worker does with each ([`WorkerLab`]). The worker is its own small wasm
//! (the `gradlab-cpu-worker` binary: this crate and the simulation, no UI), built at full speed;
//! its browser side, which listens, yields and answers, is `serve` (wasm only). The page keeps a mirror of the
//! lab (a `Lab<()>` of the same config) that the worker's [`LabUpdate`]s keep up to date, so
//! that the views, charts and tables read it exactly as they read a lab that trains on the page.
//! The page's side (spawning, posting) is `worker.rs` in `gradlab_web`.

use serde::{Deserialize, Serialize};

use gradlab_sim::backend::TrainingBackend;
use gradlab_sim::gpt::bench::GptBenchTiming;
use gradlab_sim::gpt::lab::{GptUpdate, Reduction};
use gradlab_sim::gpt::memory::GptMemoryRow;
use gradlab_sim::gpt::scenario::GptSettings;
use gradlab_sim::gpt::spec::GptSpec;
use gradlab_sim::gpt::trace::GptStepTrace;
use gradlab_sim::lab::{CpuLab, LabConfig, LabUpdate};
use gradlab_sim::regime::MetricOps;
use gradlab_sim::scenario::canonical_config;

pub mod gpt;
#[cfg(target_arch = "wasm32")]
pub mod serve;
#[cfg(target_arch = "wasm32")]
pub mod wire;
use gradlab_sim::SimError;

/// What the page asks of the worker. One request is in flight at a time, except [`ToWorker::Stop`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToWorker {
    /// A new experiment. The config travels as its JSON document: its internally tagged enums
    /// need a self-describing format, and a valid config's numbers are all finite.
    Build { config_json: String },
    /// Up to `steps` optimizer steps of every run; fewer when a [`ToWorker::Stop`] arrives.
    Advance { steps: u64 },
    /// Pause: the worker finishes the step in progress and starts no other for this request.
    Stop,
    /// Class probabilities of every run at these (x, y) points.
    Predict { points: Vec<f64> },
    /// The first running means of each BatchNorm run.
    RunningMeans,
    /// Times the canonical workload (the bench page's CPU figure, measured where the Lab trains).
    Bench { micro_batches: usize },
    /// Whether the next steps are traced for the step-through view (see `Lab::set_snapshots`).
    SetSnapshots { on: bool },
    /// The tiny GPT's token-count experiment with the learner's settings (the preset's by
    /// default), trained on these `(name, text)` plays (the page fetches them; the worker's
    /// wasm stays small).
    BuildGpt {
        settings: GptSettings,
        plays: Vec<(String, String)>,
    },
    /// Up to `steps` optimizer steps of every tiny-GPT run; fewer when a Stop arrives.
    AdvanceGpt { steps: u64 },
    /// Each tiny-GPT run's continuation of `prompt`: from the worker's own runs, or from
    /// `weights` (one vector per run) when another engine trains them (WebGPU on the page).
    SampleGpt {
        prompt: String,
        count: usize,
        temperature: f64,
        seed: u64,
        weights: Option<Vec<Vec<f32>>>,
    },
    /// The memory experiment on the built part's text and settings: the full batch and N
    /// micro-batches, `steps` timed steps each (`gpt::memory::measure`).
    MeasureGptMemory { steps: u64 },
    /// Every run's passes over the examples `batch` (the worker's last step's when empty) at
    /// its own weights or at `weights` (`GptLab::trace_step`).
    TraceGpt {
        batch: Vec<usize>,
        weights: Option<Vec<Vec<f32>>>,
    },
    /// The tiny GPT's benchmark (`gpt::bench`), every case for at least
    /// [`BENCH_MEASURE_MS`] over these plays; needs no built lab.
    BenchGpt { plays: Vec<(String, String)> },
}

/// What the page shows of a tiny-GPT lab before it trains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GptBuilt {
    pub reductions: Vec<Reduction>,
    pub parameters: usize,
    pub vocabulary: usize,
    pub train_examples: usize,
    pub validation_examples: usize,
    pub batch: usize,
    pub micro_batches: usize,
    pub spec: GptSpec,
}

/// What the worker answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker listens (sent once, when it has started).
    Ready,
    Built,
    SnapshotsSet,
    Advanced {
        taken: u64,
        update: LabUpdate,
    },
    /// Per run; `None` for a run that has diverged.
    Predicted {
        probabilities: Vec<Option<Vec<f64>>>,
    },
    RunningMeans {
        means: Vec<Option<Vec<f64>>>,
    },
    Benched(BenchTiming),
    GptBuilt(GptBuilt),
    GptAdvanced {
        taken: u64,
        update: GptUpdate,
    },
    /// One text per run, in the runs' order.
    GptSampled {
        texts: Vec<String>,
    },
    GptMemory {
        rows: Vec<GptMemoryRow>,
    },
    GptTraced {
        trace: GptStepTrace,
    },
    /// One timing per case of `GptBenchCase::ALL`, in its order.
    GptBenched {
        timings: Vec<GptBenchTiming>,
    },
    /// The request failed with this message (an experiment the engine cannot run, a message
    /// it cannot read); the page shows it.
    Failed {
        message: String,
    },
}

/// A message that could not be read (a different build on the other side, a truncated buffer).
#[derive(Debug, thiserror::Error)]
#[error("unreadable message between the page and the CPU worker: {0}")]
pub struct ProtocolError(#[from] postcard::Error);

macro_rules! codec {
    ($message:ty) => {
        impl $message {
            pub fn encode(&self) -> Result<Vec<u8>, ProtocolError> {
                Ok(postcard::to_allocvec(self)?)
            }
            pub fn decode(bytes: &[u8]) -> Result<Self, ProtocolError> {
                Ok(postcard::from_bytes(bytes)?)
            }
        }
    };
}
codec!(ToWorker);
codec!(FromWorker);

/// Each bench figure times the engine for at least this long after warm-up, so that it is
/// stable (a few dozen steps were not).
pub const BENCH_MEASURE_MS: f64 = 1000.0;
/// Warm-up steps before the timing starts (caches filled).
pub const BENCH_WARM_UP_STEPS: u64 = 3;
/// Steps between two looks at the clock.
const BENCH_CHUNK: u64 = 10;

/// Training steps of the canonical workload and the milliseconds they took.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BenchTiming {
    pub steps: u64,
    pub elapsed_ms: f64,
}

/// Times the canonical workload (training only, no metrics) on the CPU engine at f32 for at
/// least [`BENCH_MEASURE_MS`], after [`BENCH_WARM_UP_STEPS`].
pub fn time_canonical_steps(micro_batches: usize) -> Result<BenchTiming, String> {
    let mut lab = CpuLab::<f32>::cpu(canonical_config(micro_batches)).map_err(|e| e.to_string())?;
    lab.set_metric_ops(MetricOps::NONE);
    lab.run(BENCH_WARM_UP_STEPS, |_| {}).map_err(|e| e.to_string())?;
    #[allow(
        clippy::disallowed_methods,
        reason = "web_time::Instant is std's natively (what the lint sees) and performance.now() on wasm"
    )]
    let start = web_time::Instant::now();
    let elapsed_ms = || start.elapsed().as_secs_f64() * 1000.0;
    let mut steps = 0;
    while steps == 0 || elapsed_ms() < BENCH_MEASURE_MS {
        lab.run(BENCH_CHUNK, |_| {}).map_err(|e| e.to_string())?;
        steps += BENCH_CHUNK;
    }
    Ok(BenchTiming {
        steps,
        elapsed_ms: elapsed_ms(),
    })
}

/// How many running means of each BatchNorm run the page shows.
pub const RUNNING_MEANS_SHOWN: usize = 3;

/// The worker's side: the lab that trains (the CPU reference at f32, the GPU's precision, as
/// on the page) and how much of its history the page has been sent.
#[derive(Debug, Default)]
pub struct WorkerLab {
    lab: Option<CpuLab<f32>>,
    sent: Vec<usize>,
}

/// Which of the worker's labs an advance trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Training {
    Mlp,
    Gpt,
}

/// What a worker's wasm serves: one kind of lab. Each kind is its own binary, so that the
/// Lab's worker carries none of the tiny GPT's code (`gradlab-cpu-worker`, [`WorkerLab`]) and
/// the GPT page's none of the MLP's engine (`gradlab-gpt-worker`, [`gpt::GptWorkerLab`]).
pub trait Serve: Default {
    /// Answers every request except a training one, whose steps the caller takes one at a time
    /// with [`Serve::step_of`] (between steps it listens for `Stop`) before
    /// [`Serve::advanced_of`].
    fn handle(&mut self, request: ToWorker) -> FromWorker;
    /// One optimizer step of the lab `training` names.
    fn step_of(&mut self, training: Training) -> Result<(), String>;
    /// The answer to an advance of `training` after `taken` steps.
    fn advanced_of(&mut self, training: Training, taken: u64) -> FromWorker;
}

impl ToWorker {
    /// The lab and step count of a request to train, if it is one.
    pub fn training(&self) -> Option<(Training, u64)> {
        match *self {
            ToWorker::Advance { steps } => Some((Training::Mlp, steps)),
            ToWorker::AdvanceGpt { steps } => Some((Training::Gpt, steps)),
            _ => None,
        }
    }
}

impl Serve for WorkerLab {
    fn handle(&mut self, request: ToWorker) -> FromWorker {
        WorkerLab::handle(self, request)
    }

    fn step_of(&mut self, training: Training) -> Result<(), String> {
        match training {
            Training::Mlp => self.step(),
            Training::Gpt => Err(gpt::NOT_HERE.to_string()),
        }
    }

    fn advanced_of(&mut self, training: Training, taken: u64) -> FromWorker {
        match training {
            Training::Mlp => self.advanced(taken),
            Training::Gpt => FromWorker::Failed {
                message: gpt::NOT_HERE.to_string(),
            },
        }
    }
}

impl WorkerLab {
    /// Answers every request except `Advance`, whose steps the caller takes one at a time with
    /// [`WorkerLab::step`] (between steps it listens for `Stop`) before [`WorkerLab::advanced`].
    pub fn handle(&mut self, request: ToWorker) -> FromWorker {
        let answer = match request {
            ToWorker::Build { config_json } => self.build(&config_json),
            ToWorker::Predict { points } => self.predict(&points),
            ToWorker::RunningMeans => self.running_means(),
            ToWorker::Bench { micro_batches } => time_canonical_steps(micro_batches).map(FromWorker::Benched),
            ToWorker::SetSnapshots { on } => self.lab().map(|lab| {
                lab.set_snapshots(on);
                FromWorker::SnapshotsSet
            }),
            ToWorker::BuildGpt { .. }
            | ToWorker::SampleGpt { .. }
            | ToWorker::AdvanceGpt { .. }
            | ToWorker::MeasureGptMemory { .. }
            | ToWorker::BenchGpt { .. }
            | ToWorker::TraceGpt { .. } => Err(gpt::NOT_HERE.to_string()),
            ToWorker::Advance { .. } | ToWorker::Stop => Err("a step request was not handled".to_string()),
        };
        answer.unwrap_or_else(|message| FromWorker::Failed { message })
    }

    fn build(&mut self, config_json: &str) -> Result<FromWorker, String> {
        self.lab = None;
        let config: LabConfig = serde_json::from_str(config_json).map_err(|e| e.to_string())?;
        self.lab = Some(CpuLab::cpu(config).map_err(|e| e.to_string())?);
        self.sent.clear();
        Ok(FromWorker::Built)
    }

    fn lab(&mut self) -> Result<&mut CpuLab<f32>, String> {
        self.lab
            .as_mut()
            .ok_or_else(|| "no experiment has been built".to_string())
    }

    /// One optimizer step of every run that has not diverged. The step counts even when every
    /// run has diverged, as on the page's thread and the GPU: a replay to a given step ends.
    pub fn step(&mut self) -> Result<(), String> {
        self.lab()?.step().map_err(|e: SimError| e.to_string())
    }

    /// The answer to an `Advance` after `taken` steps: what the runs recorded since the last one.
    pub fn advanced(&mut self, taken: u64) -> FromWorker {
        match &self.lab {
            Some(lab) => FromWorker::Advanced {
                taken,
                update: lab.update_since(&mut self.sent),
            },
            None => FromWorker::Failed {
                message: "no experiment has been built".to_string(),
            },
        }
    }

    fn predict(&mut self, points: &[f64]) -> Result<FromWorker, String> {
        let lab = self.lab()?;
        let probabilities = lab
            .runs_mut()
            .iter_mut()
            .map(|run| match run.diverged_at {
                Some(_) => Ok(None),
                None => run.backend.predict(points).map(Some),
            })
            .collect::<Result<_, SimError>>()
            .map_err(|e| e.to_string())?;
        Ok(FromWorker::Predicted { probabilities })
    }

    fn running_means(&mut self) -> Result<FromWorker, String> {
        let lab = self.lab()?;
        let means = lab
            .runs()
            .iter()
            .map(|run| {
                if run.layout.buffer_count == 0 {
                    return Ok(None);
                }
                let buffers = run.backend.buffers()?;
                Ok(Some(buffers.into_iter().take(RUNNING_MEANS_SHOWN).collect()))
            })
            .collect::<Result<_, SimError>>()
            .map_err(|e| e.to_string())?;
        Ok(FromWorker::RunningMeans { means })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_sim::lab::Lab;
    use gradlab_sim::scenario::Scenario;

    /// Every message as it crosses: encoded, decoded, handled, answered, encoded, decoded.
    pub(crate) fn ask<S: Serve>(worker: &mut S, request: ToWorker) -> FromWorker {
        let request = ToWorker::decode(&request.encode().expect("encode")).expect("decode");
        let answer = match request.training() {
            Some((training, steps)) => {
                let mut taken = 0;
                loop {
                    if taken == steps {
                        break worker.advanced_of(training, taken);
                    }
                    match worker.step_of(training) {
                        Ok(()) => taken += 1,
                        Err(message) => break FromWorker::Failed { message },
                    }
                }
            }
            None => worker.handle(request),
        };
        FromWorker::decode(&answer.encode().expect("encode")).expect("decode")
    }

    /// The bench page's CPU figure, measured in the worker: whole chunks of steps, for at least
    /// the measuring time, and an unknown workload is refused with a message.
    #[test]
    fn a_bench_request_times_whole_steps_for_at_least_a_second() {
        let mut worker = WorkerLab::default();
        match ask(&mut worker, ToWorker::Bench { micro_batches: 4 }) {
            FromWorker::Benched(timing) => {
                assert!(
                    timing.steps >= BENCH_CHUNK && timing.steps % BENCH_CHUNK == 0,
                    "{timing:?}"
                );
                assert!(timing.elapsed_ms >= BENCH_MEASURE_MS, "{timing:?}");
            }
            other => panic!("{other:?}"),
        }
        for micro_batches in [0, 3] {
            assert!(
                matches!(
                    ask(&mut worker, ToWorker::Bench { micro_batches }),
                    FromWorker::Failed { .. }
                ),
                "{micro_batches}"
            );
        }
    }

    /// The page's mirror, fed by the worker's answers, shows what a lab trained on the page
    /// shows, record for record; boundaries and running means are the same numbers too.
    #[test]
    fn the_pages_mirror_matches_a_lab_trained_on_the_page() {
        let config = Scenario::by_id("norms").expect("norms").config;
        let mut worker = WorkerLab::default();
        let built = ask(
            &mut worker,
            ToWorker::Build {
                config_json: serde_json::to_string(&config).expect("json"),
            },
        );
        assert_eq!(built, FromWorker::Built);
        let mut mirror = Lab::new(config.clone(), |_| Ok::<(), SimError>(())).expect("valid");
        let mut on_page = CpuLab::<f32>::cpu(config).expect("valid");
        for steps in [1, 4] {
            match ask(&mut worker, ToWorker::Advance { steps }) {
                FromWorker::Advanced { taken, update } => {
                    assert_eq!(taken, steps);
                    mirror.apply_update(update);
                }
                other => panic!("{other:?}"),
            }
            on_page.run(steps, |_| {}).expect("train");
        }
        assert_eq!(mirror.steps_taken(), 5);
        for (a, b) in on_page.runs().iter().zip(mirror.runs()) {
            assert_eq!(a.history, b.history, "{}", a.spec.label);
        }
        // Traces of the step-through view cross too, once asked for.
        assert_eq!(
            ask(&mut worker, ToWorker::SetSnapshots { on: true }),
            FromWorker::SnapshotsSet
        );
        on_page.set_snapshots(true);
        let FromWorker::Advanced { update, .. } = ask(&mut worker, ToWorker::Advance { steps: 1 }) else {
            panic!("advance");
        };
        mirror.apply_update(update);
        on_page.step().expect("train");
        for (a, b) in on_page.runs().iter().zip(mirror.runs()) {
            assert!(a.trace.is_some());
            assert_eq!(a.trace, b.trace, "{}", a.spec.label);
        }
        let points = vec![0.1, -0.2, 0.5, 0.5];
        let expected: Vec<_> = on_page
            .runs_mut()
            .iter_mut()
            .map(|run| Some(run.backend.predict(&points).expect("predict")))
            .collect();
        assert_eq!(
            ask(&mut worker, ToWorker::Predict { points }),
            FromWorker::Predicted {
                probabilities: expected
            }
        );
        let FromWorker::RunningMeans { means } = ask(&mut worker, ToWorker::RunningMeans) else {
            panic!("running means");
        };
        assert!(means.iter().any(Option::is_some), "norms has a BatchNorm run");
        for (run, means) in on_page.runs().iter().zip(means) {
            let expected = (run.layout.buffer_count > 0).then(|| {
                run.backend
                    .buffers()
                    .expect("read")
                    .into_iter()
                    .take(RUNNING_MEANS_SHOWN)
                    .collect()
            });
            assert_eq!(means, expected);
        }
    }

    #[test]
    fn bad_requests_get_a_message_not_a_panic() {
        let mut worker = WorkerLab::default();
        let FromWorker::Failed { message } = ask(&mut worker, ToWorker::Advance { steps: 1 }) else {
            panic!("advance before build");
        };
        assert!(message.contains("no experiment"), "{message}");
        for config_json in ["{", r#"{"batch_size": 0}"#] {
            let answer = ask(
                &mut worker,
                ToWorker::Build {
                    config_json: config_json.into(),
                },
            );
            assert!(matches!(answer, FromWorker::Failed { .. }), "{config_json}: {answer:?}");
        }
        assert!(ToWorker::decode(&[250, 1, 2]).is_err());
        assert!(FromWorker::decode(&[]).is_err());
    }
}
