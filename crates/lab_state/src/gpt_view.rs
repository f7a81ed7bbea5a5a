//! What the tiny-GPT page shows of its lab: charts of each run, the last step's micro-batches
//! with the weight each reduction gives their tokens, and the answer to the prediction the
//! learner made first, read from the learner's own numbers. Plain and tested; the page is a view
//! over it.

use crate::numbers::readable;
use gradlab_i18n::Msg;
use gradlab_plot::{ChartLook, LineChart, Series, LOG_FLOOR};
use gradlab_sim::gpt::lab::{GptMirror, GptStepRecord, Reduction};

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
}
