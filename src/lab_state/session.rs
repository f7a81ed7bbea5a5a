//! What the Lab page shows about a running experiment, as plain data: each run's history copied
//! from whichever engine trains it, the transport state, chart data, the results table, CSV and
//! the memory bars. The web layer only copies engine output in and renders what this returns.

use crate::i18n::Msg;
use crate::plot::{LineChart, Metric};
use crate::sim::lab::{Lab, RunSpec};
use crate::sim::metrics::{metrics_csv, StepRecord};
use crate::sim::regime::{LossNormalization, RegimeSpec};

/// The Lab stops by itself after this many optimizer steps (charts stay readable, memory bounded).
pub const MAX_LAB_STEPS: u64 = 1000;

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
    /// Training stopped with this message.
    Failed(Msg),
}

impl Transport {
    /// The status line announced to screen readers: it changes when the state does, not on
    /// every step (the step counter beside it is not announced).
    pub fn status(&self, steps: u64) -> Msg {
        match self {
            Transport::Preparing => Msg::new("status-preparing"),
            Transport::Idle => Msg::new("status-idle"),
            Transport::Running => Msg::new("status-running"),
            Transport::Paused => Msg::new("status-paused").arg("step", steps),
            Transport::Finished => Msg::new("status-step-limit").arg("step", steps),
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
}

/// All runs of the experiment on the page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LabView {
    pub runs: Vec<RunView>,
    pub steps: u64,
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
    pub cosine: Option<String>,
    pub grad_norm: String,
    pub accuracy: Option<String>,
}

/// Losses are shown with 6 decimals; the agreement line compares exactly what is shown.
pub fn format_loss(loss: f64) -> String {
    format!("{loss:.6}")
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

fn is_plain_accumulation(regime: &RegimeSpec) -> bool {
    let plain = RegimeSpec::accumulate(regime.micro_batches);
    regime.micro_batches > 1 && *regime == plain && regime.loss == LossNormalization::MeanOfMicroBatchMeans
}

impl LabView {
    /// The view of a freshly built lab: labels (already localized) and memory figures.
    pub fn new<B>(lab: &Lab<B>, labels: Vec<String>, activation_bytes: Vec<u64>, bytes_from_gpu: bool) -> Self {
        let model_bytes = lab.activation_memory(4);
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
                activation_bytes: activation_bytes
                    .get(i)
                    .copied()
                    .unwrap_or_else(|| model_bytes.get(i).map_or(0, |m| m.peak.bytes as u64)),
                bytes_from_gpu: bytes_from_gpu && i < activation_bytes.len(),
            })
            .collect();
        Self {
            runs,
            steps: lab.steps_taken(),
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
        }
        let added = lab.steps_taken().saturating_sub(self.steps);
        self.steps = lab.steps_taken();
        added
    }

    pub fn chart(&self, metric: Metric) -> LineChart {
        LineChart::from_histories(
            metric,
            self.runs.iter().map(|r| (r.label.as_str(), r.history.as_slice())),
        )
    }

    pub fn csv(&self) -> String {
        metrics_csv(self.runs.iter().map(|r| (r.label.as_str(), r.history.as_slice())))
    }

    pub fn rows(&self) -> Vec<ResultRow> {
        self.runs
            .iter()
            .enumerate()
            .filter_map(|(style, run)| {
                let last = run.history.last()?;
                Some(ResultRow {
                    label: run.label.clone(),
                    style,
                    loss: format_loss(last.train_loss),
                    exact_loss: last.train_loss,
                    grad_error: last.grad_relative_error.map(|e| format!("{e:.2e}")),
                    exact_grad_error: last.grad_relative_error,
                    cosine: last.grad_cosine.map(|c| format!("{c:.6}")),
                    grad_norm: format!("{:.4}", last.grad_norm),
                    accuracy: last.test_accuracy.map(|a| format!("{:.1} %", a * 100.0)),
                })
            })
            .collect()
    }

    /// Whether the full-batch run and the first plain loss / N accumulation of the same network
    /// show the same loss at the shown precision; `None` when the experiment has no such pair
    /// or no steps yet.
    pub fn scaled_agreement(&self) -> Option<Msg> {
        let full = self.runs.iter().find(|r| r.spec.regime.micro_batches == 1)?;
        let accumulated = self.runs.iter().find(|r| {
            is_plain_accumulation(&r.spec.regime)
                && r.spec.model == full.spec.model
                && r.spec.optimizer == full.spec.optimizer
                && r.spec.schedule == full.spec.schedule
                && !r.spec.model.norm.mixes_items()
        })?;
        let (a, b) = (full.history.last()?, accumulated.history.last()?);
        Some(if format_loss(a.train_loss) == format_loss(b.train_loss) {
            Msg::new("results-match")
        } else {
            Msg::new("results-differ")
        })
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
    use crate::sim::lab::CpuLab;
    use crate::sim::scenario::Scenario;

    fn labels<B>(lab: &Lab<B>) -> Vec<String> {
        lab.runs().iter().map(|r| r.spec.label.clone()).collect()
    }

    fn small(id: &str) -> crate::sim::lab::LabConfig {
        crate::sim::lab::LabConfig {
            batch_size: 32,
            ..Scenario::by_id(id).unwrap().config
        }
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
        assert_eq!(view.scaled_agreement(), Some(Msg::new("results-match")));
        let rows = view.rows();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].loss, rows[1].loss);
        assert_ne!(rows[0].loss, rows[2].loss, "the unscaled run moves differently");
        let csv = view.csv();
        assert_eq!(csv.lines().count(), 1 + 3 * 5);
        assert!(csv.lines().nth(1).unwrap().starts_with("full batch,1,"));
    }

    #[test]
    fn agreement_reports_a_difference_and_skips_batch_norm() {
        let mut lab = CpuLab::<f32>::cpu(small("scaling")).unwrap();
        lab.run(2, |_| {}).unwrap();
        let mut view = LabView::new(&lab, labels(&lab), vec![], false);
        view.runs[1].history.last_mut().unwrap().train_loss += 1e-3;
        assert_eq!(view.scaled_agreement(), Some(Msg::new("results-differ")));
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
    fn memory_bars_use_the_engines_bytes_or_the_model() {
        let lab = CpuLab::<f32>::cpu(Scenario::by_id("memory").unwrap().config).unwrap();
        let view = LabView::new(&lab, labels(&lab), vec![], false);
        let bars = view.memory_bars();
        assert_eq!(bars.len(), 3);
        assert!(bars[0].1 > bars[1].1 && bars[1].1 > bars[2].1);
        assert!((bars[0].2 - 1.0).abs() < 1e-12);
        assert!((bars[1].1 as f64 / bars[0].1 as f64 - 0.25).abs() < 0.01);
        assert!(!view.runs[0].bytes_from_gpu);
        let gpu = LabView::new(&lab, labels(&lab), vec![400, 100, 25], true);
        assert_eq!(gpu.memory_bars()[1].1, 100);
        assert!(gpu.runs[2].bytes_from_gpu);
    }

    #[test]
    fn transport_status_names_the_step() {
        assert_eq!(
            Transport::Running.status(7),
            Transport::Running.status(8),
            "not re-announced per step"
        );
        assert_eq!(Transport::Paused.status(7), Msg::new("status-paused").arg("step", 7));
        assert!(!Transport::Finished.can_step());
        assert!(Transport::Paused.can_step());
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(117_528), "114.8 KiB (117528 B)");
    }
}
