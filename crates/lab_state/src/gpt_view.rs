//! What the tiny-GPT page shows of its lab: charts of each run, the last step's micro-batches
//! with the weight each reduction gives their tokens, and the answer to the prediction the
//! learner made first, read from the learner's own numbers. Plain and tested; the page is a view
//! over it.

use crate::numbers::readable;
use gradlab_i18n::Msg;
use gradlab_plot::{ChartLook, LineChart, Series, LOG_FLOOR};
use gradlab_sim::gpt::lab::{GptMirror, GptStepRecord, Reduction};
use gradlab_sim::gpt::memory::GptMemoryRow;
use gradlab_sim::gpt::trace::{GptRunTrace, GptStepTrace};

/// The page's charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GptChart {
    TrainLoss,
    ValidationLoss,
    GradError,
}

impl GptChart {
    pub const ALL: [GptChart; 3] = [GptChart::TrainLoss, GptChart::ValidationLoss, GptChart::GradError];

    /// The chart's name in ids and file names.
    pub fn slug(self) -> &'static str {
        match self {
            GptChart::TrainLoss => "train-loss",
            GptChart::ValidationLoss => "validation-loss",
            GptChart::GradError => "grad-error",
        }
    }

    /// The value a record gives this chart, if any.
    fn value(self, record: &GptStepRecord) -> Option<f64> {
        match self {
            GptChart::TrainLoss => Some(record.train_loss),
            GptChart::ValidationLoss => record.validation_loss,
            GptChart::GradError => record.grad_relative_error.map(|e| e.max(LOG_FLOOR)),
        }
    }

    /// The chart of every run that has this value, each run its own colour (its place in the
    /// lab), labelled by `label`; x is the step counted from 1.
    pub fn of(self, mirror: &GptMirror, label: impl Fn(Reduction) -> String, look: ChartLook) -> LineChart {
        let series = mirror
            .reductions
            .iter()
            .zip(&mirror.histories)
            .enumerate()
            .filter(|(_, (&reduction, _))| self != GptChart::GradError || reduction.accumulates())
            .map(|(style, (&reduction, history))| Series {
                label: label(reduction),
                points: history
                    .iter()
                    .filter_map(|r| Some(((r.step + 1) as f64, self.value(r)?)))
                    .collect(),
                style,
                diverged: None,
            })
            .collect();
        LineChart {
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            log_y: self == GptChart::GradError,
            metric: None,
            series,
            look,
        }
    }
}

/// One micro-batch of the last step, and what each accumulated run weighs its tokens by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowRow {
    /// Counted from 1.
    pub index: usize,
    pub examples: usize,
    pub tokens: usize,
    pub padded_tokens: usize,
    /// `1 / (N · T_m)`: the per-micro-batch mean / N.
    pub mean_weight: f64,
    /// `1 / T`: the sum over the window's tokens (the full batch's weight too).
    pub window_weight: f64,
}

impl WindowRow {
    /// How many times the full batch's weight the per-micro-batch mean gives each token here.
    pub fn times_full_batch(&self) -> f64 {
        self.mean_weight / self.window_weight
    }
}

pub fn window_rows(mirror: &GptMirror) -> Vec<WindowRow> {
    let n = mirror.window.len();
    let total: usize = mirror.window.iter().map(|m| m.tokens).sum();
    mirror
        .window
        .iter()
        .enumerate()
        .map(|(i, m)| WindowRow {
            index: i + 1,
            examples: m.examples,
            tokens: m.tokens,
            padded_tokens: m.padded_tokens,
            mean_weight: Reduction::MicroBatchMean.token_weight(m.tokens, total, n),
            window_weight: Reduction::WindowTokens.token_weight(m.tokens, total, n),
        })
        .collect()
}

/// The learner's prediction: which run will drift from the full batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prediction {
    /// This accumulated run drifts.
    Drifts(Reduction),
    /// Both accumulated runs match the full batch.
    NoneDrifts,
}

impl Prediction {
    pub const ALL: [Prediction; 3] = [
        Prediction::Drifts(Reduction::MicroBatchMean),
        Prediction::Drifts(Reduction::WindowTokens),
        Prediction::NoneDrifts,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Prediction::Drifts(reduction) => reduction.id(),
            Prediction::NoneDrifts => "none",
        }
    }
}

/// A gradient this close to the full batch's (relative error) matches it: f32 rounding of the
/// same sums in another order stays far below, a drift from unequal token weights far above.
pub const MATCHES_BELOW: f64 = 1e-5;

/// What the learner's numbers say: the accumulated runs' largest gradient error so far, and
/// which prediction that makes right. `None` before the first step.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub errors: Vec<(Reduction, f64)>,
    pub answer: Prediction,
}

pub fn observed(mirror: &GptMirror) -> Option<Observed> {
    let errors: Vec<(Reduction, f64)> = mirror
        .reductions
        .iter()
        .zip(&mirror.histories)
        .filter(|(r, _)| r.accumulates())
        .map(|(&r, history)| {
            // A run whose error is not a number (it diverged) has drifted as far as can be.
            let worst = history
                .iter()
                .filter_map(|h| h.grad_relative_error)
                .map(|e| if e.is_nan() { f64::INFINITY } else { e })
                .fold(None, |worst: Option<f64>, e| Some(worst.map_or(e, |w| w.max(e))));
            worst.map(|w| (r, w))
        })
        .collect::<Option<_>>()?;
    let drifting: Vec<Reduction> = errors
        .iter()
        .filter(|(_, e)| *e >= MATCHES_BELOW)
        .map(|(r, _)| *r)
        .collect();
    let answer = match drifting.as_slice() {
        [] => Prediction::NoneDrifts,
        [one] => Prediction::Drifts(*one),
        // Both drifting is no outcome of this experiment; name the worse one.
        _ => {
            let worst = errors
                .iter()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map_or(Reduction::MicroBatchMean, |(r, _)| *r);
            Prediction::Drifts(worst)
        }
    };
    Some(Observed { errors, answer })
}

/// The verdict on `prediction` from what was observed: a message whose `answer` argument is
/// left for the page to fill with the answer's own text (`gpt-predict-<id>`).
pub fn verdict(prediction: Prediction, observed: &Observed) -> Msg {
    let error_of = |reduction: Reduction| {
        observed
            .errors
            .iter()
            .find(|(r, _)| *r == reduction)
            .map_or(0.0, |(_, e)| *e)
    };
    Msg::new(if prediction == observed.answer {
        "gpt-verdict-right"
    } else {
        "gpt-verdict-wrong"
    })
    .arg("mean_error", readable(error_of(Reduction::MicroBatchMean), 2))
    .arg("window_error", readable(error_of(Reduction::WindowTokens), 2))
}

/// The memory experiment's prediction: what happens to the activations one pass keeps when the
/// step is cut into [`MEMORY_QUESTION_N`] micro-batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryPrediction {
    /// About an Nth of the full batch's.
    Nth,
    /// About the same.
    Same,
    /// About N times as much.
    Times,
}

/// The N the memory question asks about (the tokens experiment's N).
pub const MEMORY_QUESTION_N: usize = 8;

impl MemoryPrediction {
    pub const ALL: [MemoryPrediction; 3] = [MemoryPrediction::Nth, MemoryPrediction::Same, MemoryPrediction::Times];

    pub fn id(self) -> &'static str {
        match self {
            MemoryPrediction::Nth => "nth",
            MemoryPrediction::Same => "same",
            MemoryPrediction::Times => "times",
        }
    }
}

/// One row of the memory table as the page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryTableRow {
    pub micro_batches: usize,
    pub examples_per_pass: usize,
    pub tokens_per_pass: usize,
    pub per_token: String,
    pub attention: String,
    pub logits: String,
    pub total: String,
    /// This pass's total against the full batch's (1 for the full batch).
    pub of_full: f64,
    pub ms_per_step: f64,
}

/// Bytes in KiB or MiB, one decimal.
pub fn bytes_text(bytes: u64) -> String {
    let kib = bytes as f64 / 1024.0;
    if kib >= 1024.0 {
        format!("{:.1} MiB", kib / 1024.0)
    } else {
        format!("{kib:.1} KiB")
    }
}

pub fn memory_rows(rows: &[GptMemoryRow]) -> Vec<MemoryTableRow> {
    let full = rows.first().map_or(0, |r| r.bytes.total()).max(1) as f64;
    rows.iter()
        .map(|r| MemoryTableRow {
            micro_batches: r.micro_batches,
            examples_per_pass: r.examples_per_pass,
            tokens_per_pass: r.tokens_per_pass,
            per_token: bytes_text(r.bytes.per_token),
            attention: bytes_text(r.bytes.attention),
            logits: bytes_text(r.bytes.logits),
            total: bytes_text(r.bytes.total()),
            of_full: r.bytes.total() as f64 / full,
            ms_per_step: r.ms_per_step,
        })
        .collect()
}

/// What the measured rows answer: the [`MEMORY_QUESTION_N`] row against the full batch (a
/// pass under half of the full batch's is "an Nth", one over twice is "N times"), and the
/// verdict on `prediction`. `None` until both rows are measured.
pub fn memory_verdict(prediction: MemoryPrediction, rows: &[GptMemoryRow]) -> Option<(MemoryPrediction, Msg)> {
    let full = rows.iter().find(|r| r.micro_batches == 1)?;
    let split = rows.iter().find(|r| r.micro_batches == MEMORY_QUESTION_N)?;
    let ratio = split.bytes.total() as f64 / full.bytes.total().max(1) as f64;
    let answer = if ratio < 0.5 {
        MemoryPrediction::Nth
    } else if ratio > 2.0 {
        MemoryPrediction::Times
    } else {
        MemoryPrediction::Same
    };
    let msg = Msg::new(if prediction == answer {
        "gpt-memory-verdict-right"
    } else {
        "gpt-memory-verdict-wrong"
    })
    .arg("n", MEMORY_QUESTION_N)
    .arg("percent", readable(100.0 * ratio, 3))
    .arg("split", bytes_text(split.bytes.total()))
    .arg("full", bytes_text(full.bytes.total()))
    .arg("split_ms", readable(split.ms_per_step, 3))
    .arg("full_ms", readable(full.ms_per_step, 3));
    Some((answer, msg))
}

/// One pass of a run in the step-through's table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceRow {
    /// Counted from 1.
    pub index: usize,
    pub tokens: usize,
    pub loss_sum: f64,
    pub token_weight: f64,
    /// The token weight against the full batch's `1 / T`.
    pub times_full_batch: f64,
    pub buffer_error: f64,
}

/// The micro-batches the step-through walks through: the most passes any run takes.
pub fn trace_phases(trace: &GptStepTrace) -> usize {
    trace.runs.iter().map(|r| r.passes.len()).max().unwrap_or(0)
}

/// The run's first `phase` passes (all of them for the full batch's single pass, which is
/// the reference the others fill towards).
pub fn trace_rows(run: &GptRunTrace, window_tokens: usize, phase: usize) -> Vec<TraceRow> {
    let full_weight = 1.0 / window_tokens.max(1) as f64;
    run.passes
        .iter()
        .take(if run.reduction.accumulates() {
            phase
        } else {
            run.passes.len()
        })
        .enumerate()
        .map(|(i, p)| TraceRow {
            index: i + 1,
            tokens: p.tokens,
            loss_sum: p.loss_sum,
            token_weight: p.token_weight,
            times_full_batch: p.token_weight / full_weight,
            buffer_error: p.buffer_error,
        })
        .collect()
}

/// Where the run's buffer stands after `phase` passes: still filling, or full and either the
/// full batch's gradient (its error exactly 0) or another.
pub fn trace_status(run: &GptRunTrace, phase: usize) -> Msg {
    let n = run.passes.len();
    let shown = if run.reduction.accumulates() { phase.min(n) } else { n };
    let error = shown
        .checked_sub(1)
        .and_then(|i| run.passes.get(i))
        .map_or(1.0, |p| p.buffer_error);
    if shown < n {
        Msg::new("gpt-trace-filling")
            .arg("k", shown)
            .arg("n", n)
            .arg("error", readable(error, 2))
    } else if error == 0.0 {
        Msg::new("gpt-trace-done-exact")
    } else {
        Msg::new("gpt-trace-done-off").arg("error", readable(error, 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_sim::gpt::lab::{GptUpdate, MicroBatchTokens};

    fn record(step: u64, error: Option<f64>, validation: Option<f64>) -> GptStepRecord {
        GptStepRecord {
            step,
            train_loss: 4.0 - step as f64 * 0.1,
            grad_norm: 1.0,
            grad_relative_error: error,
            grad_cosine: error.map(|_| 1.0),
            validation_loss: validation,
            learning_rate: 1e-3,
        }
    }

    fn mirror(mean_error: f64, window_error: f64) -> GptMirror {
        let mut mirror = GptMirror::new(Reduction::ALL.to_vec());
        mirror.apply(GptUpdate {
            steps_taken: 2,
            records: vec![
                vec![record(0, None, None), record(1, None, Some(3.5))],
                vec![
                    record(0, Some(mean_error / 2.0), None),
                    record(1, Some(mean_error), Some(3.6)),
                ],
                vec![
                    record(0, Some(window_error), None),
                    record(1, Some(window_error), Some(3.5)),
                ],
            ],
            window: vec![
                MicroBatchTokens {
                    examples: 2,
                    tokens: 30,
                    padded_tokens: 40,
                },
                MicroBatchTokens {
                    examples: 2,
                    tokens: 90,
                    padded_tokens: 100,
                },
            ],
        });
        mirror
    }

    #[test]
    fn charts_hold_each_runs_values_and_the_error_chart_only_accumulated_runs() {
        let m = mirror(0.04, 0.0);
        let label = |r: Reduction| r.id().to_string();
        let loss = GptChart::TrainLoss.of(&m, label, ChartLook::default());
        assert_eq!(loss.series.len(), 3);
        assert_eq!(loss.series[0].points, vec![(1.0, 4.0), (2.0, 3.9)]);
        let validation = GptChart::ValidationLoss.of(&m, label, ChartLook::default());
        assert_eq!(validation.series[1].points, vec![(2.0, 3.6)]);
        let error = GptChart::GradError.of(&m, label, ChartLook::default());
        assert!(error.log_y);
        assert_eq!(
            error.series.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(),
            ["micro_batch_mean", "window_tokens"]
        );
        // An exact 0 sits on the log chart's floor; the colours stay each run's own.
        assert_eq!(error.series[1].points[0].1, LOG_FLOOR);
        assert_eq!((error.series[0].style, error.series[1].style), (1, 2));
    }

    #[test]
    fn a_short_micro_batch_weighs_each_token_more_under_the_per_micro_batch_mean() {
        let rows = window_rows(&mirror(0.04, 0.0));
        // 120 tokens in the window, N = 2: 1/(2·30) and 1/(2·90) against 1/120.
        assert_eq!(rows[0].mean_weight, 1.0 / 60.0);
        assert_eq!(rows[0].window_weight, 1.0 / 120.0);
        assert!((rows[0].times_full_batch() - 2.0).abs() < 1e-12);
        assert!((rows[1].times_full_batch() - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn the_prediction_is_judged_by_the_learners_numbers() {
        let lines = observed(&mirror(0.04, 0.0)).expect("a step");
        assert_eq!(lines.answer, Prediction::Drifts(Reduction::MicroBatchMean));
        let right = verdict(Prediction::Drifts(Reduction::MicroBatchMean), &lines);
        assert_eq!(right.id, "gpt-verdict-right");
        assert_eq!(
            right.args,
            [("mean_error", "0.040".to_string()), ("window_error", "0".to_string())]
        );
        let wrong = verdict(Prediction::NoneDrifts, &lines);
        assert_eq!(wrong.id, "gpt-verdict-wrong");
        let diverged = observed(&mirror(f64::NAN, 0.0)).expect("a step");
        assert_eq!(diverged.answer, Prediction::Drifts(Reduction::MicroBatchMean));
        let blocks = observed(&mirror(0.0, 0.0)).expect("a step");
        assert_eq!(blocks.answer, Prediction::NoneDrifts);
        assert!(observed(&GptMirror::new(Reduction::ALL.to_vec())).is_none());
    }

    fn memory_row(n: usize, per_token: u64, ms: f64) -> GptMemoryRow {
        use gradlab_sim::gpt::memory::GptPassBytes;
        GptMemoryRow {
            micro_batches: n,
            examples_per_pass: 32 / n,
            tokens_per_pass: 2048 / n,
            bytes: GptPassBytes {
                per_token,
                attention: per_token / 4,
                logits: 0,
            },
            ms_per_step: ms,
        }
    }

    #[test]
    fn the_memory_table_reads_each_pass_against_the_full_batch() {
        let rows = [memory_row(1, 8 << 20, 400.0), memory_row(8, 1 << 20, 350.0)];
        let table = memory_rows(&rows);
        assert_eq!(table[0].total, "10.0 MiB");
        assert_eq!(table[1].per_token, "1.0 MiB");
        assert_eq!(table[1].attention, "256.0 KiB");
        assert_eq!(table[1].of_full, 0.125);
        assert_eq!(bytes_text(512), "0.5 KiB");
    }

    #[test]
    fn the_memory_answer_is_read_from_the_eighth_pass() {
        let rows = [memory_row(1, 8 << 20, 400.0), memory_row(8, 1 << 20, 350.0)];
        let (answer, msg) = memory_verdict(MemoryPrediction::Nth, &rows).unwrap();
        assert_eq!(answer, MemoryPrediction::Nth);
        assert_eq!(msg.id, "gpt-memory-verdict-right");
        assert!(msg.args.contains(&("percent", "12.5".to_string())), "{:?}", msg.args);
        assert!(msg.args.contains(&("split", "1.2 MiB".to_string())), "{:?}", msg.args);
        let (_, msg) = memory_verdict(MemoryPrediction::Same, &rows).unwrap();
        assert_eq!(msg.id, "gpt-memory-verdict-wrong");
        // Were a split pass to keep as much, "the same" would be right.
        let same = [memory_row(1, 8 << 20, 400.0), memory_row(8, 8 << 20, 350.0)];
        assert_eq!(
            memory_verdict(MemoryPrediction::Same, &same).unwrap().0,
            MemoryPrediction::Same
        );
        assert_eq!(memory_verdict(MemoryPrediction::Nth, &rows[..1]), None);
    }

    #[test]
    fn the_step_through_shows_the_buffer_filling_pass_by_pass() {
        use gradlab_sim::gpt::trace::GptPassTrace;
        let pass = |tokens: usize, weight: f64, error: f64| GptPassTrace {
            examples: 4,
            tokens,
            loss_sum: tokens as f64 * 3.0,
            token_weight: weight,
            buffer_norm: 1.0,
            buffer_error: error,
        };
        let run = |reduction, passes| GptRunTrace {
            reduction,
            passes,
            full_batch_norm: 1.0,
        };
        let trace = GptStepTrace {
            window_tokens: 300,
            runs: vec![
                run(Reduction::FullBatch, vec![pass(300, 1.0 / 300.0, 0.0)]),
                run(
                    Reduction::MicroBatchMean,
                    vec![pass(100, 1.0 / 200.0, 0.6), pass(200, 1.0 / 400.0, 0.04)],
                ),
                run(
                    Reduction::WindowTokens,
                    vec![pass(100, 1.0 / 300.0, 0.5), pass(200, 1.0 / 300.0, 0.0)],
                ),
            ],
        };
        assert_eq!(trace_phases(&trace), 2);
        // The full batch shows its single pass at every phase; the others fill.
        assert_eq!(trace_rows(&trace.runs[0], 300, 1).len(), 1);
        let first = trace_rows(&trace.runs[1], 300, 1);
        assert_eq!(first.len(), 1);
        assert!((first[0].times_full_batch - 1.5).abs() < 1e-12);
        assert_eq!(trace_status(&trace.runs[1], 1).id, "gpt-trace-filling");
        assert_eq!(trace_status(&trace.runs[1], 2).id, "gpt-trace-done-off");
        assert_eq!(trace_status(&trace.runs[2], 2).id, "gpt-trace-done-exact");
        assert_eq!(trace_status(&trace.runs[0], 1).id, "gpt-trace-done-exact");
        assert_eq!(trace_rows(&trace.runs[2], 300, 2)[1].times_full_batch, 1.0);
    }
}
