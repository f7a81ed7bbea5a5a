//! What the Lab page shows about a running experiment, as plain data: each run's history copied
//! from whichever engine trains it, the transport state, chart data, the results table, CSV and
//! the memory bars. The web layer only copies engine output in and renders what this returns.

use super::numbers::{metric_value, readable};
use gradlab_i18n::Msg;
use gradlab_plot::{LineChart, Metric};
use gradlab_sim::engine_memory::{micro_batch_bytes, LabEngine};
use gradlab_sim::lab::{Lab, LabConfig, RunSpec};
use gradlab_sim::metrics::{metrics_csv, RunHistory, StepRecord};
use gradlab_sim::regime::{LossNormalization, RegimeSpec};
use gradlab_sim::step_time::StepTimes;
use gradlab_sim::trace::StepTrace;

/// The Lab stops by itself after this many optimizer steps (charts stay readable, memory bounded).
pub const MAX_LAB_STEPS: u64 = 1000;

/// How much training one animation frame may do, in milliseconds of the page's time. Commands
/// (pause, step, reset) are read between frames, so this bounds how late they take effect.
pub const FRAME_BUDGET_MS: f64 = 40.0;

/// Steps per frame chosen by time, not by count: the "steps per frame" setting is an upper
/// bound, and a frame trains only as many steps as the last frames' speed says fit the budget
/// (at least one). Heavy settings then slow the curves down instead of freezing the page.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameBudget {
    /// Smoothed milliseconds per optimizer step; `None` before the first measurement.
    ms_per_step: Option<f64>,
}

impl FrameBudget {
    /// Steps the next frame trains, at most `limit` (and at least 1 when `limit` is not 0).
    pub fn steps(&self, limit: u64) -> u64 {
        let fit = match self.ms_per_step {
            // Unknown speed: one step, measured, before trusting any more.
            None => 1,
            Some(ms) if ms > 0.0 => (FRAME_BUDGET_MS / ms).floor().max(1.0) as u64,
            Some(_) => limit,
        };
        fit.min(limit)
    }

    /// Records that `steps` steps took `elapsed_ms`.
    pub fn record(&mut self, steps: u64, elapsed_ms: f64) {
        if steps == 0 || !elapsed_ms.is_finite() || elapsed_ms < 0.0 {
            return;
        }
        let measured = elapsed_ms / steps as f64;
        // Slower frames count at once (a heavy setting must not overrun for long); faster ones
        // are averaged in, so one quick frame does not make the next one overrun.
        self.ms_per_step = Some(match self.ms_per_step {
            Some(old) if measured < old => 0.5 * old + 0.5 * measured,
            _ => measured,
        });
    }
}

/// Where the training loop is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// The engine is being set up.
    Preparing,
    Idle,
    Running,
    Paused,
    /// Reached [`MAX_LAB_STEPS`].
    Finished,
    /// Every run diverged; nothing is left to train.
    Diverged,
    /// Training stopped with this message.
    Failed(Msg),
}

impl Transport {
    /// The status line announced to screen readers: it changes when the state does, not on
    /// every step (the step counter beside it is not announced).
    /// The status line after `steps` steps, `step_in_flight` while the engine still works on
    /// steps begun before Pause (they finish; none starts after them).
    pub fn status(&self, steps: u64, step_in_flight: bool) -> Msg {
        match self {
            Transport::Preparing => Msg::new("status-preparing"),
            Transport::Idle => Msg::new("status-idle"),
            Transport::Running => Msg::new("status-running"),
            Transport::Paused if step_in_flight => Msg::new("status-pausing"),
            Transport::Paused => Msg::new("status-paused").arg("step", steps),
            Transport::Finished => Msg::new("status-step-limit").arg("step", steps),
            Transport::Diverged => Msg::new("status-all-diverged").arg("step", steps),
            Transport::Failed(reason) => reason.clone(),
        }
    }

    /// A stable name of the state, for styling and tests (`data-transport`).
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Preparing => "preparing",
            Transport::Idle => "idle",
            Transport::Running => "running",
            Transport::Paused => "paused",
            Transport::Finished => "finished",
            Transport::Diverged => "diverged",
            Transport::Failed(_) => "failed",
        }
    }

    pub fn can_step(&self) -> bool {
        matches!(self, Transport::Idle | Transport::Paused | Transport::Running)
    }
}

/// One run as the page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunView {
    pub label: String,
    pub spec: RunSpec,
    pub history: Vec<StepRecord>,
    /// Micro-batches per optimizer step (BatchNorm updates its running statistics once per each).
    pub micro_batches: usize,
    /// The first running means of the first BatchNorm layer, when the run has one.
    pub running_means: Option<Vec<f64>>,
    /// Training-activation bytes the engine holds for one micro-batch.
    pub activation_bytes: u64,
    /// Whether `activation_bytes` were allocated by the GPU engine (or computed for the CPU one).
    pub bytes_from_gpu: bool,
    /// The step (0-based) at which the run diverged; it has no records after it.
    pub diverged_at: Option<u64>,
    /// Items in each micro-batch of the latest step (loss / N equals the full batch's mean only
    /// when they are equal).
    pub micro_batch_items: Vec<usize>,
    /// The latest step seen from inside, while the step-through view is open.
    pub trace: Option<StepTrace>,
    /// Training time of its latest optimizer steps, by the engine's clock (none on an engine
    /// that cannot time one run alone).
    pub step_times: StepTimes,
}

impl RunView {
    pub fn history(&self) -> RunHistory<'_> {
        RunHistory {
            label: &self.label,
            records: &self.history,
            diverged_at: self.diverged_at,
        }
    }

    /// "diverged at step k" (counted from 1, as shown), when it did.
    pub fn divergence(&self) -> Option<Msg> {
        self.diverged_at.map(|step| {
            Msg::new("results-diverged-at")
                .arg("run", &self.label)
                .arg("step", step + 1)
        })
    }
}

/// All runs of the experiment on the page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LabView {
    pub runs: Vec<RunView>,
    pub steps: u64,
    /// The experiment this view was built for: after the learner switches, the previous
    /// experiment's view stays on the page until the engine has rebuilt.
    pub config: Option<LabConfig>,
}

/// One row of the results table, formatted as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    pub label: String,
    pub style: usize,
    pub loss: String,
    /// The loss in full precision (a data attribute for tests).
    pub exact_loss: f64,
    pub grad_error: Option<String>,
    pub exact_grad_error: Option<f64>,
    /// The gradient's length as a multiple of the full-batch gradient's at the same weights
    /// ("4.00" for an unscaled run of 4 micro-batches).
    pub grad_ratio: Option<String>,
    pub cosine: Option<String>,
    pub grad_norm: String,
    pub accuracy: Option<String>,
    /// Set when the run diverged: the row shows this instead of its numbers.
    pub diverged: Option<Msg>,
}

/// Losses are shown with 6 decimals, or from a million on with 7 significant digits (a run on its
/// way to diverging reaches 1e13); the agreement line compares exactly what is shown.
pub fn format_loss(loss: f64) -> String {
    metric_value(Metric::TrainLoss, loss)
}

pub fn format_bytes(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.2} MiB ({bytes} B)", bytes as f64 / f64::from(1u32 << 20))
    } else if bytes >= 1 << 10 {
        format!("{:.1} KiB ({bytes} B)", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

/// Relative differences up to this are what f32 arithmetic in two summation orders gives (the
/// tolerance the GPU-vs-CPU tests hold the engines to); above it, something else differs.
pub const F32_ROUNDING: f64 = 1e-5;

/// Whether the maths says `run` computes the full batch's gradient: plain accumulation, a norm
/// that does not mix items, and a loss that is the full batch's mean.
fn must_equal_the_full_batch(run: &RunView) -> bool {
    let regime = &run.spec.regime;
    let equal_sizes = run.micro_batch_items.windows(2).all(|w| w[0] == w[1]);
    let mean_of_the_step = match regime.loss {
        LossNormalization::TotalItemCount => true,
        LossNormalization::MeanOfMicroBatchMeans => equal_sizes,
        LossNormalization::Unscaled => false,
    };
    let plain = RegimeSpec {
        loss: regime.loss,
        ..RegimeSpec::accumulate(regime.micro_batches)
    };
    regime.micro_batches > 1 && *regime == plain && mean_of_the_step && !run.spec.model.norm.mixes_items()
}

/// A gradient this many times the full batch's is worth explaining (an unscaled run of 2 or more
/// micro-batches: 2 or more).
const OVERSIZED_GRADIENT: f64 = 1.5;

/// A run's gradient length over the full-batch gradient's at the same weights.
fn gradient_ratio(record: &StepRecord) -> Option<f64> {
    let reference = record.grad_reference_norm.filter(|&n| n > 0.0)?;
    let ratio = record.grad_norm / reference;
    ratio.is_finite().then_some(ratio)
}

impl LabView {
    /// The view of a freshly built lab: labels (already localized) and memory figures.
    pub fn new<B>(lab: &Lab<B>, labels: Vec<String>, activation_bytes: Vec<u64>, bytes_from_gpu: bool) -> Self {
        // Without the WebGPU engine's own figures: the CPU engine's allocation for each run's
        // largest micro-batch.
        let peak_rows: Vec<usize> = lab.activation_memory(4).iter().map(|m| m.peak.rows).collect();
        let runs = lab
            .runs()
            .iter()
            .enumerate()
            .map(|(i, run)| RunView {
                label: labels.get(i).cloned().unwrap_or_else(|| run.spec.label.clone()),
                spec: run.spec.clone(),
                history: run.history.clone(),
                micro_batches: run.spec.regime.micro_batches,
                running_means: None,
                activation_bytes: activation_bytes.get(i).copied().unwrap_or_else(|| {
                    peak_rows
                        .get(i)
                        .map_or(0, |&rows| micro_batch_bytes(LabEngine::Cpu, &run.layout, rows))
                }),
                bytes_from_gpu: bytes_from_gpu && i < activation_bytes.len(),
                diverged_at: run.diverged_at,
                micro_batch_items: run.last_micro_batch_items.clone(),
                trace: run.trace.clone(),
                step_times: run.step_times.clone(),
            })
            .collect();
        Self {
            runs,
            steps: lab.steps_taken(),
            config: Some(lab.config().clone()),
        }
    }

    /// The steps this view shows of the experiment `config`: 0 while it still shows another
    /// one (what counts a switched-to experiment as trained must not count the last one's steps).
    pub fn steps_of(&self, config: Option<&LabConfig>) -> u64 {
        if config.is_some() && self.config.as_ref() == config {
            self.steps
        } else {
            0
        }
    }

    /// Copies the records the lab gained since the last sync; returns how many steps were added.
    pub fn sync<B>(&mut self, lab: &Lab<B>) -> u64 {
        for (view, run) in self.runs.iter_mut().zip(lab.runs()) {
            let known = view.history.len();
            if run.history.len() >= known {
                view.history.extend_from_slice(&run.history[known..]);
            }
            // Parameter distances arrive on the latest record after the fact.
            if let (Some(last), Some(source)) = (view.history.last_mut(), run.history.last()) {
                *last = *source;
            }
            view.diverged_at = run.diverged_at;
            view.micro_batch_items.clone_from(&run.last_micro_batch_items);
            if view.trace != run.trace {
                view.trace.clone_from(&run.trace);
            }
            view.step_times.clone_from(&run.step_times);
        }
        let added = lab.steps_taken().saturating_sub(self.steps);
        self.steps = lab.steps_taken();
        added
    }

    pub fn chart(&self, metric: Metric) -> LineChart {
        LineChart::from_histories(metric, self.runs.iter().map(RunView::history))
    }

    /// The chart of `metric` without the runs the learner switched off (by index); each curve
    /// keeps its run's colour and dash.
    pub fn chart_of_runs(&self, metric: Metric, runs_off: &[usize]) -> LineChart {
        let mut chart = self.chart(metric);
        chart.series.retain(|s| !runs_off.contains(&s.style));
        chart
    }

    /// Whether the chart of `metric` says something for these runs: the learning rate only where
    /// a run follows a schedule, the clipping factor only where a run clips.
    pub fn shows(&self, metric: Metric) -> bool {
        match metric {
            Metric::LearningRate => self.has_schedule(),
            Metric::ClipFactor => self.runs.iter().any(|r| r.spec.clip_max_norm.is_some()),
            _ => true,
        }
    }

    pub fn csv(&self) -> String {
        metrics_csv(self.runs.iter().map(RunView::history))
    }

    /// Whether a run's learning rate follows a schedule (so a learning-rate chart says something).
    pub fn has_schedule(&self) -> bool {
        self.runs
            .iter()
            .any(|r| !matches!(r.spec.schedule, gradlab_sim::optim::ScheduleSpec::Constant { .. }))
    }

    /// Whether every run has diverged (and there is at least one).
    pub fn all_diverged(&self) -> bool {
        !self.runs.is_empty() && self.runs.iter().all(|r| r.diverged_at.is_some())
    }

    pub fn rows(&self) -> Vec<ResultRow> {
        self.rows_at(None)
    }

    /// The results table at step `step` (1-based, as the charts and the scrubber count), or at
    /// the latest step. A run that diverged later shows its numbers of that step.
    pub fn rows_at(&self, step: Option<u64>) -> Vec<ResultRow> {
        self.runs
            .iter()
            .enumerate()
            .filter_map(|(style, run)| {
                let diverged_by_then = match step {
                    None => true,
                    Some(step) => run.diverged_at.is_some_and(|at| at < step),
                };
                let last = match step {
                    None => run.history.last()?,
                    Some(step) => {
                        // That step's record; a run that diverged before has none after its
                        // divergence and shows where it diverged.
                        let at = run.history.partition_point(|r| r.step < step);
                        let record = run.history.get(at.checked_sub(1)?)?;
                        (record.step + 1 == step || diverged_by_then).then_some(record)?
                    }
                };
                Some(ResultRow {
                    label: run.label.clone(),
                    style,
                    loss: format_loss(last.train_loss),
                    exact_loss: last.train_loss,
                    grad_error: last
                        .grad_relative_error
                        .map(|e| metric_value(Metric::GradRelativeError, e)),
                    exact_grad_error: last.grad_relative_error,
                    // Only a gradient of another length says something; "x1.00" beside every
                    // matching run would only lengthen the table.
                    grad_ratio: gradient_ratio(last).map(|r| format!("{r:.2}")).filter(|r| r != "1.00"),
                    cosine: last.grad_cosine.map(|c| metric_value(Metric::GradCosine, c)),
                    grad_norm: metric_value(Metric::GradNorm, last.grad_norm),
                    accuracy: last.test_accuracy.map(|a| metric_value(Metric::TestAccuracy, a)),
                    diverged: run.divergence().filter(|_| diverged_by_then),
                })
            })
            .collect()
    }

    /// Compares the full-batch run with the first accumulated run that the maths says must equal
    /// it: the same network, optimizer and schedule, no pitfall, a norm that does not mix items,
    /// and a loss that is the full batch's mean (divided by the step's item count, or loss / N
    /// over micro-batches of equal size). `None` when the experiment has no such pair or no
    /// steps yet. The message names both runs.
    pub fn scaled_agreement(&self) -> Option<Msg> {
        let full = self.runs.iter().find(|r| r.spec.regime.micro_batches == 1)?;
        let accumulated = self.runs.iter().find(|r| {
            must_equal_the_full_batch(r)
                && r.spec.model == full.spec.model
                && r.spec.optimizer == full.spec.optimizer
                && r.spec.schedule == full.spec.schedule
                && r.spec.clip_max_norm == full.spec.clip_max_norm
        })?;
        let (a, b) = (full.history.last()?, accumulated.history.last()?);
        // A diverged run agrees with nothing, whatever its numbers print as ("NaN" == "NaN").
        for (run, last) in [(full, a), (accumulated, b)] {
            let diverged = run.diverged_at.or((!last.is_finite()).then_some(last.step));
            if let Some(step) = diverged {
                return Some(
                    Msg::new("results-no-agreement")
                        .arg("run", &run.label)
                        .arg("step", step + 1),
                );
            }
        }
        let pair = |id: &'static str| {
            Msg::new(id)
                .arg("full", &full.label)
                .arg("accumulated", &accumulated.label)
        };
        if a.train_loss == b.train_loss {
            return Some(pair("results-match-exact"));
        }
        let difference = (a.train_loss - b.train_loss).abs() / a.train_loss.abs().max(b.train_loss.abs());
        // The gradient at this step, against the full batch's at the same weights, says whether
        // the mechanism matches; a loss difference is then rounding carried over from earlier
        // steps (the trajectories drift apart by float rounding, as any two summation orders do).
        // With clipping the reference is the unclipped gradient: only the losses can say.
        let rounding = match b
            .grad_relative_error
            .filter(|_| accumulated.spec.clip_max_norm.is_none())
        {
            Some(error) => error <= F32_ROUNDING,
            None => difference <= F32_ROUNDING,
        };
        let message = if rounding {
            pair("results-match-rounding")
        } else {
            pair("results-differ")
        };
        Some(message.arg("difference", readable(difference, 2)))
    }

    /// One line on why a relative error of N - 1 means N times the gradient, when a run's
    /// gradient is markedly longer than the full batch's.
    pub fn ratio_note(&self) -> Option<Msg> {
        let oversized = self.runs.iter().filter(|r| r.diverged_at.is_none()).any(|r| {
            r.history
                .last()
                .and_then(gradient_ratio)
                .is_some_and(|ratio| ratio >= OVERSIZED_GRADIENT)
        });
        oversized.then(|| Msg::new("results-ratio-note"))
    }

    /// For each BatchNorm run: how often its running statistics were updated, and their first
    /// values when the engine has reported them.
    pub fn running_stats(&self) -> Vec<Msg> {
        self.runs
            .iter()
            .filter(|r| r.spec.model.norm.mixes_items())
            .map(|r| {
                let values = r.running_means.as_ref().map_or_else(
                    || "-".to_string(),
                    |v| {
                        v.iter()
                            .take(3)
                            .map(|x| format!("{x:.4}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                );
                Msg::new("running-stats-updates")
                    .arg("run", &r.label)
                    .arg("updates", r.history.len() * r.micro_batches)
                    .arg("steps", r.history.len())
                    .arg("per", r.micro_batches)
                    .arg("values", values)
            })
            .collect()
    }

    /// Each run's mean training time per optimizer step in milliseconds (none where the engine
    /// does not time runs), and its share of the slowest run's, for bars like the memory ones.
    pub fn step_time_bars(&self) -> Vec<(String, Option<f64>, f64)> {
        let slowest = self
            .runs
            .iter()
            .filter_map(|r| r.step_times.mean_ms())
            .fold(0.0, f64::max);
        self.runs
            .iter()
            .map(|r| {
                let mean = r.step_times.mean_ms();
                let share = match mean {
                    Some(ms) if slowest > 0.0 => ms / slowest,
                    _ => 0.0,
                };
                (r.label.clone(), mean, share)
            })
            .collect()
    }

    /// Memory bars: label, bytes, and the bar's length relative to the largest.
    pub fn memory_bars(&self) -> Vec<(String, u64, f64)> {
        let largest = self.runs.iter().map(|r| r.activation_bytes).max().unwrap_or(0).max(1);
        self.runs
            .iter()
            .map(|r| {
                (
                    r.label.clone(),
                    r.activation_bytes,
                    r.activation_bytes as f64 / largest as f64,
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_sim::data::DatasetKind;
    use gradlab_sim::lab::CpuLab;
    use gradlab_sim::scenario::Scenario;

    fn labels<B>(lab: &Lab<B>) -> Vec<String> {
        lab.runs().iter().map(|r| r.spec.label.clone()).collect()
    }

    fn small(id: &str) -> LabConfig {
        LabConfig {
            batch_size: 32,
            ..Scenario::by_id(id).unwrap().config
        }
    }

    #[test]
    fn pitfalls_show_their_lessons_during_the_whole_run() {
        let mut lab = CpuLab::<f32>::cpu(Scenario::by_id("pitfalls").unwrap().config).unwrap();
        lab.run(200, |_| {}).unwrap();
        let view = LabView::new(&lab, labels(&lab), vec![], false);
        assert!(view.shows(Metric::ClipFactor) && view.shows(Metric::LearningRate));
        let run = |label: &str| &view.runs.iter().find(|r| r.label == label).unwrap().history;
        let (correct, clip_each) = (run("correct accumulation"), run("clip every micro-batch"));
        // The threshold is reached all run long, not only in the first steps.
        let clipped = correct.iter().filter(|r| r.clip_factor.unwrap() < 1.0).count();
        assert!(clipped >= 150, "the correct run clips at {clipped} of 200 steps");
        // Clipping the sum once never turns it; clipping partial sums does, in many steps
        // spread over the run, and its clipping factor is not the correct run's.
        assert!(correct.iter().all(|r| r.grad_cosine.unwrap() > 1.0 - 1e-9));
        // What the notice says: the correct run's gradient error is 1 minus its clipping factor.
        for r in correct {
            let (error, factor) = (r.grad_relative_error.unwrap(), r.clip_factor.unwrap());
            assert!(
                (error - (1.0 - factor)).abs() < 1e-5,
                "step {}: {error} vs 1 - {factor}",
                r.step
            );
        }
        let turned: Vec<u64> = clip_each
            .iter()
            .filter(|r| r.grad_cosine.unwrap() < 1.0 - 1e-3)
            .map(|r| r.step)
            .collect();
        assert!(turned.len() >= 50, "{} steps turned", turned.len());
        assert!(turned.iter().any(|&s| s >= 150), "still turning late in the run");
        let factors_differ = correct
            .iter()
            .zip(clip_each)
            .filter(|(a, b)| (a.clip_factor.unwrap() - b.clip_factor.unwrap()).abs() > 0.05)
            .count();
        assert!(factors_differ >= 100, "{factors_differ}");
        // Without clipping, a forgotten zero_grad's gradient norm grows many times over and its
        // loss jumps up at some steps; it ends worse than the correct run.
        let unclipped = run("zero_grad forgotten, no clipping");
        assert_eq!(unclipped[0].clip_factor, None);
        assert!(unclipped[199].grad_norm > 10.0 * unclipped[0].grad_norm);
        let jumps = unclipped
            .windows(2)
            .filter(|w| w[1].train_loss > 2.0 * w[0].train_loss)
            .count();
        assert!(jumps >= 3, "{jumps} jumps");
        assert!(unclipped[199].test_accuracy.unwrap() < correct[199].test_accuracy.unwrap());
        // With clipping the stale sum is capped: it acts like momentum and follows old
        // gradients, so its cosine with the current gradient is far from 1.
        let forgotten = run("zero_grad forgotten");
        assert!(forgotten[100..].iter().all(|r| r.grad_cosine.unwrap() < 0.999));
    }

    #[test]
    fn a_chart_leaves_out_the_runs_switched_off_and_keeps_the_styles() {
        let mut lab = CpuLab::<f32>::cpu(small("scaling")).unwrap();
        lab.run(2, |_| {}).unwrap();
        let view = LabView::new(&lab, labels(&lab), vec![], false);
        let chart = view.chart_of_runs(Metric::TrainLoss, &[1]);
        assert_eq!(
            chart
                .series
                .iter()
                .map(|s| (s.label.as_str(), s.style))
                .collect::<Vec<_>>(),
            vec![("full batch", 0), ("accumulate 4, unscaled", 2)]
        );
        assert!(!view.shows(Metric::ClipFactor) && view.shows(Metric::GradNorm));
    }

    /// The scrubber and a chart's crosshair show the table of a past step: that step's record,
    /// and a divergence only from the step it happened.
    #[test]
    fn rows_at_a_past_step_show_that_steps_numbers() {
        let mut lab = CpuLab::<f32>::cpu(small("scaling")).unwrap();
        lab.run(5, |_| {}).unwrap();
        let mut view = LabView::new(&lab, labels(&lab), vec![], false);
        assert_eq!(view.rows_at(None), view.rows());
        assert_eq!(view.rows_at(Some(5)), view.rows());
        let second = view.rows_at(Some(2));
        assert_eq!(second.len(), view.runs.len());
        for (row, run) in second.iter().zip(&view.runs) {
            assert_eq!(row.exact_loss, run.history[1].train_loss);
        }
        assert!(view.rows_at(Some(0)).is_empty() && view.rows_at(Some(6)).is_empty());
        // A run that diverged at step 3 (0-based 2) has no records after it.
        view.runs[2].diverged_at = Some(2);
        view.runs[2].history.truncate(3);
        assert!(
            view.rows_at(Some(2))[2].diverged.is_none(),
            "not diverged yet at step 2"
        );
        assert!(view.rows_at(Some(3))[2].diverged.is_some());
        let later = view.rows_at(Some(5));
        assert_eq!(later.len(), 3, "a diverged run stays in the table");
        assert!(later[2].diverged.is_some());
    }

    #[test]
    fn a_view_counts_steps_only_for_the_experiment_it_was_built_for() {
        let (scaling, norms) = (small("scaling"), small("norms"));
        let mut lab = CpuLab::<f32>::cpu(scaling.clone()).unwrap();
        lab.run(3, |_| {}).unwrap();
        let view = LabView::new(&lab, labels(&lab), vec![], false);
        assert_eq!(view.steps_of(Some(&scaling)), 3);
        // Switched to another experiment (or other settings) before the engine rebuilt.
        assert_eq!(view.steps_of(Some(&norms)), 0);
        let other_seed = LabConfig {
            init_seed: scaling.init_seed + 1,
            ..scaling.clone()
        };
        assert_eq!(view.steps_of(Some(&other_seed)), 0);
        // Settings that do not make an experiment, and the empty view before any engine.
        assert_eq!(view.steps_of(None), 0);
        assert_eq!(LabView::default().steps_of(None), 0);
        assert_eq!(LabView::default().steps_of(Some(&scaling)), 0);
    }

    #[test]
    fn sync_copies_only_new_records_and_the_latest_distance() {
        let mut lab = CpuLab::<f32>::cpu(small("scaling")).unwrap();
        let mut view = LabView::new(&lab, labels(&lab), vec![], false);
        assert!(view.rows().is_empty());
        assert_eq!(view.scaled_agreement(), None);
        lab.run(3, |_| {}).unwrap();
        assert_eq!(view.sync(&lab), 3);
        lab.run(2, |_| {}).unwrap();
        assert_eq!(view.sync(&lab), 2);
        assert_eq!(view.sync(&lab), 0);
        for (v, r) in view.runs.iter().zip(lab.runs()) {
            assert_eq!(v.history, r.history);
        }
        assert_eq!(view.steps, 5);
        let agreement = view.scaled_agreement().unwrap();
        assert!(
            ["results-match-exact", "results-match-rounding"].contains(&agreement.id.as_ref()),
            "{agreement:?}"
        );
        assert!(agreement.args.contains(&("full", "full batch".to_string())));
        assert!(agreement
            .args
            .contains(&("accumulated", "accumulate 4, loss / 4".to_string())));
        let rows = view.rows();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].loss, rows[1].loss);
        assert_ne!(rows[0].loss, rows[2].loss, "the unscaled run moves differently");
        let csv = view.csv();
        assert_eq!(csv.lines().count(), 1 + 3 * 5);
        assert!(csv.lines().nth(1).unwrap().starts_with("full batch,1,"));
    }

    /// The hostile pass's cases: the line named "loss / N" in a scenario without such a run, and
    /// called a rounding difference a difference. It names the pair the maths says must match.
    #[test]
    fn agreement_names_the_runs_that_must_match_and_only_those() {
        let mut lengths = CpuLab::<f32>::cpu(small("variable_length")).unwrap();
        lengths.run(2, |_| {}).unwrap();
        let view = LabView::new(&lengths, labels(&lengths), vec![], false);
        let agreement = view.scaled_agreement().expect("full batch and / total tokens");
        let accumulated = &agreement.args.iter().find(|a| a.0 == "accumulated").unwrap().1;
        let by_total = lengths
            .runs()
            .iter()
            .find(|r| r.spec.regime.micro_batches > 1 && r.spec.regime.loss == LossNormalization::TotalItemCount)
            .unwrap();
        assert_eq!(accumulated, &by_total.spec.label, "not the mean of means");
        assert_ne!(agreement.id, "results-differ", "{agreement:?}");
        // Mean of means over unequal micro-batches is not expected to match: no line for it.
        let mut sandbox = crate::controls::LabControls {
            scenario: gradlab_route::SANDBOX.into(),
            dataset: DatasetKind::VariableLengthSequences,
            ..Default::default()
        }
        .lab_config();
        sandbox.batch_size = 32;
        let mut lab = CpuLab::<f32>::cpu(sandbox).unwrap();
        lab.run(1, |_| {}).unwrap();
        let view = LabView::new(&lab, labels(&lab), vec![], false);
        assert_eq!(view.scaled_agreement(), None);
    }

    /// The scheduler pitfall had no learning-rate chart: it has one, and it shows the per
    /// micro-batch scheduler running ahead of the correct run's warm-up.
    #[test]
    fn the_scheduler_pitfall_shows_its_learning_rate_per_step() {
        let mut lab = CpuLab::<f32>::cpu(Scenario::by_id("pitfalls").unwrap().config).unwrap();
        lab.run(5, |_| {}).unwrap();
        let view = LabView::new(&lab, labels(&lab), vec![], false);
        assert!(view.has_schedule());
        let chart = view.chart(Metric::LearningRate);
        let series = |label: &str| &chart.series.iter().find(|s| s.label == label).unwrap().points;
        let correct = series("correct accumulation");
        let early = series("scheduler every micro-batch");
        assert_eq!(correct.len(), 5);
        for step in 1..5 {
            assert!(correct[step].1 > correct[step - 1].1, "the correct run warms up");
            assert!(
                early[step].1 > 2.0 * correct[step].1,
                "step {step}: {} vs {}",
                early[step].1,
                correct[step].1
            );
        }
        let scaling = CpuLab::<f32>::cpu(small("scaling")).unwrap();
        assert!(!LabView::new(&scaling, labels(&scaling), vec![], false).has_schedule());
    }

    #[test]
    fn an_unscaled_gradient_shows_how_many_times_too_long_it_is() {
        let mut lab = CpuLab::<f32>::cpu(small("scaling")).unwrap();
        lab.run(2, |_| {}).unwrap();
        let view = LabView::new(&lab, labels(&lab), vec![], false);
        let rows = view.rows();
        assert_eq!(rows[0].grad_ratio, None, "the same length: no ratio shown");
        assert_eq!(rows[1].grad_ratio, None);
        assert_eq!(
            rows[2].grad_error.as_deref(),
            Some("3.00"),
            "plain decimals, not 3.00e0"
        );
        assert_eq!(
            rows[2].grad_ratio.as_deref(),
            Some("4.00"),
            "relative error 3 is 4 times"
        );
        assert_eq!(view.ratio_note(), Some(Msg::new("results-ratio-note")));
        let mut norms = CpuLab::<f32>::cpu(small("norms")).unwrap();
        norms.run(1, |_| {}).unwrap();
        let view = LabView::new(&norms, labels(&norms), vec![], false);
        assert_eq!(view.ratio_note(), None, "no gradient is markedly too long");
    }

    #[test]
    fn agreement_reports_a_difference_and_skips_batch_norm() {
        let mut lab = CpuLab::<f32>::cpu(small("scaling")).unwrap();
        lab.run(2, |_| {}).unwrap();
        let mut view = LabView::new(&lab, labels(&lab), vec![], false);
        // A loss difference with this step's gradients equal is float rounding carried over
        // from earlier steps; with the gradient off too, a real difference.
        let last = view.runs[1].history.last_mut().unwrap();
        last.train_loss += 1e-3;
        assert_eq!(view.scaled_agreement().unwrap().id, "results-match-rounding");
        view.runs[1].history.last_mut().unwrap().grad_relative_error = Some(1e-3);
        let differ = view.scaled_agreement().unwrap();
        assert_eq!(differ.id, "results-differ");
        assert!(
            differ.args.iter().any(|(k, v)| *k == "difference" && v == "0.0011"),
            "{differ:?}"
        );
        view.runs[1].history.last_mut().unwrap().grad_relative_error = None;
        assert_eq!(
            view.scaled_agreement().unwrap().id,
            "results-differ",
            "without a reference gradient the loss decides"
        );
        view.runs[1].spec.clip_max_norm = Some(1.0);
        assert_eq!(
            view.scaled_agreement(),
            None,
            "a clipped run is not the unclipped full batch"
        );
        let mut norms = CpuLab::<f32>::cpu(small("norms")).unwrap();
        norms.run(2, |_| {}).unwrap();
        let view = LabView::new(&norms, labels(&norms), vec![], false);
        assert_eq!(
            view.scaled_agreement(),
            None,
            "BatchNorm's accumulation is not expected to match"
        );
        let stats = view.running_stats();
        assert_eq!(stats.len(), 2, "the two BatchNorm runs");
        let args = |m: &Msg, k: &str| m.args.iter().find(|a| a.0 == k).unwrap().1.clone();
        assert_eq!(args(&stats[0], "updates"), "2");
        assert_eq!(args(&stats[1], "updates"), "8");
        assert_eq!(args(&stats[1], "per"), "4");
    }

    #[test]
    fn a_non_finite_loss_never_reads_as_agreement() {
        let mut lab = CpuLab::<f32>::cpu(small("scaling")).unwrap();
        lab.run(2, |_| {}).unwrap();
        let mut view = LabView::new(&lab, labels(&lab), vec![], false);
        // Both NaN print as "NaN": equal text, but nothing agrees.
        view.runs[0].history.last_mut().unwrap().train_loss = f64::NAN;
        view.runs[1].history.last_mut().unwrap().train_loss = f64::NAN;
        let agreement = view.scaled_agreement().unwrap();
        assert_eq!(agreement.id, "results-no-agreement");
        assert_eq!(
            agreement.args,
            vec![("run", "full batch".to_string()), ("step", "2".to_string())]
        );
    }

    #[test]
    fn a_diverged_run_stops_and_says_where_while_the_others_go_on() {
        let mut lab = CpuLab::<f32>::cpu(small("scaling")).unwrap();
        lab.run(2, |_| {}).unwrap();
        // What an engine hands back when the accumulated run's loss overflows at step 3.
        let blown = StepRecord {
            step: 2,
            train_loss: f64::INFINITY,
            grad_norm: f64::NAN,
            ..StepRecord::default()
        };
        let later = StepRecord { step: 3, ..blown };
        lab.push_records(1, vec![blown, later]);
        assert_eq!(lab.runs()[1].diverged_at, Some(2));
        assert_eq!(
            lab.runs()[1].history.len(),
            3,
            "records after the divergence are dropped"
        );
        lab.step().unwrap();
        lab.run(2, |_| {}).unwrap();
        let mut view = LabView::new(&lab, labels(&lab), vec![], false);
        view.sync(&lab);
        assert_eq!(view.runs[0].history.len(), 5, "the full batch goes on");
        assert_eq!(view.runs[2].history.len(), 5, "so does the unscaled run");
        assert_eq!(view.runs[1].history.len(), 3, "the diverged run stopped");
        assert!(!view.all_diverged());

        let rows = view.rows();
        assert_eq!(rows[0].diverged, None);
        let shown = rows[1].diverged.clone().expect("the row says it diverged");
        assert_eq!(shown.id, "results-diverged-at");
        assert!(shown.args.contains(&("step", "3".to_string())), "{shown:?}");
        let agreement = view.scaled_agreement().unwrap();
        assert_eq!(agreement.id, "results-no-agreement");
        assert!(agreement.args.contains(&("step", "3".to_string())));

        let csv = view.csv();
        let accumulated: Vec<&str> = csv.lines().filter(|l| l.starts_with("\"accumulate 4, loss")).collect();
        assert_eq!(accumulated.len(), 3, "{csv}");
        assert!(accumulated[2].ends_with(",diverged") && accumulated[2].contains(",inf,"));
        assert!(csv.lines().skip(1).filter(|l| l.ends_with(",trained")).count() == 12);

        let chart = view.chart(Metric::TrainLoss);
        assert_eq!(chart.series[1].diverged.as_ref().map(|d| d.step), Some(3));
        assert_eq!(
            chart.series[1].points.len(),
            2,
            "the infinite loss is a mark, not a point"
        );
        assert_eq!(chart.series[0].diverged, None);
    }

    #[test]
    fn a_frame_trains_what_fits_its_time_budget() {
        let mut budget = FrameBudget::default();
        assert_eq!(budget.steps(50), 1, "one measured step before any more");
        assert_eq!(budget.steps(0), 0, "nothing left to train");
        budget.record(1, 2.0);
        assert_eq!(budget.steps(50), 20, "40 ms at 2 ms a step");
        assert_eq!(budget.steps(5), 5, "the steps-per-frame setting is an upper bound");
        // A heavy setting: one step takes 700 ms, so every frame trains a single step.
        budget.record(20, 14_000.0);
        assert_eq!(budget.steps(50), 1, "a slower frame counts at once");
        budget.record(1, 10.0);
        assert_eq!(budget.steps(50), 1, "a faster one is averaged in: (700 + 10) / 2 ms");
        for _ in 0..12 {
            budget.record(1, 10.0);
        }
        assert_eq!(budget.steps(50), 3, "then it converges on 10 ms a step (just above)");
        budget.record(3, f64::NAN);
        budget.record(0, 5.0);
        assert_eq!(budget.steps(50), 3, "nonsense measurements are ignored");
    }

    #[test]
    fn step_time_bars_show_each_runs_measured_time() {
        let mut lab = CpuLab::<f32>::cpu(small("memory")).unwrap();
        let before = LabView::new(&lab, labels(&lab), vec![], false);
        assert!(before
            .step_time_bars()
            .iter()
            .all(|(_, ms, share)| ms.is_none() && *share == 0.0));
        lab.run(3, |_| {}).unwrap();
        let mut view = LabView::new(&lab, labels(&lab), vec![], false);
        let bars = view.step_time_bars();
        assert_eq!(bars.len(), 4);
        for ((label, ms, share), run) in bars.iter().zip(lab.runs()) {
            assert_eq!(*label, run.spec.label);
            assert_eq!(*ms, run.step_times.mean_ms());
            assert!(ms.unwrap() > 0.0 && *share > 0.0 && *share <= 1.0);
        }
        assert!(bars.iter().any(|b| b.2 == 1.0), "the slowest run fills its bar");
        // The view follows the engine's figures.
        lab.run(2, |_| {}).unwrap();
        view.sync(&lab);
        assert!(view.runs.iter().all(|r| r.step_times.steps() == 5));
    }

    #[test]
    fn memory_bars_use_the_engines_bytes_or_the_model() {
        let lab = CpuLab::<f32>::cpu(Scenario::by_id("memory").unwrap().config).unwrap();
        let view = LabView::new(&lab, labels(&lab), vec![], false);
        let bars = view.memory_bars();
        assert_eq!(bars.len(), 4);
        assert!(bars[0].1 > bars[1].1 && bars[1].1 > bars[2].1);
        assert!((bars[0].2 - 1.0).abs() < 1e-12);
        // Without the WebGPU engine's figures: the CPU engine's allocation for each run's
        // largest micro-batch (full batch, 4, 16, and 7 of at most 37 for the default budget).
        for (bar, (run, rows)) in bars.iter().zip(lab.runs().iter().zip([256, 64, 16, 37])) {
            assert_eq!(
                bar.1,
                micro_batch_bytes(LabEngine::Cpu, &run.layout, rows),
                "{}",
                run.spec.label
            );
        }
        assert!(!view.runs[0].bytes_from_gpu);
        let gpu = LabView::new(&lab, labels(&lab), vec![400, 100, 25, 60], true);
        assert_eq!(gpu.memory_bars()[1].1, 100);
        assert!(gpu.runs[2].bytes_from_gpu);
    }

    #[test]
    fn transport_status_names_the_step() {
        assert_eq!(
            Transport::Running.status(7, true),
            Transport::Running.status(8, true),
            "not re-announced per step"
        );
        assert_eq!(
            Transport::Paused.status(7, false),
            Msg::new("status-paused").arg("step", 7)
        );
        assert_eq!(
            Transport::Paused.status(7, true),
            Msg::new("status-pausing"),
            "the step begun before Pause finishes first"
        );
        assert!(!Transport::Finished.can_step());
        assert!(!Transport::Diverged.can_step(), "nothing is left to train");
        assert_eq!(Transport::Diverged.kind(), "diverged");
        assert_eq!(
            Transport::Diverged.status(3, false),
            Msg::new("status-all-diverged").arg("step", 3)
        );
        assert!(Transport::Paused.can_step());
        assert_eq!(format_loss(1.0986123), "1.098612");
        assert_eq!(format_loss(12_327_108_739_072.0), "1.232711 × 10¹³");
        assert_eq!(format_loss(f64::NAN), "NaN");
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(117_528), "114.8 KiB (117528 B)");
    }
}
