//! What is measured per optimizer step, and the activation-memory model.

use serde::{Deserialize, Serialize};

use super::model::{Layout, Norm};
use super::real::Real;

/// Metrics of one run at one optimizer step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct StepRecord {
    /// 0-based optimizer step.
    pub step: u64,
    /// Mean cross-entropy over the step's items, as this run's forward passes computed it
    /// (before the update), whatever scaling the run applies for backward.
    pub train_loss: f64,
    /// Items the step's forward passes saw.
    pub items: usize,
    pub learning_rate: f64,
    /// Global L2 norm of the gradient the optimizer applied (after any clipping).
    pub grad_norm: f64,
    /// `|g_run - g_full| / |g_full|` at the same parameters, where `g_full` is the true full-batch
    /// gradient; `None` when the reference was not computed.
    pub grad_relative_error: Option<f64>,
    /// Cosine similarity of the same two gradients.
    pub grad_cosine: Option<f64>,
    /// `|g_full|`: with `grad_norm`, how many times longer the run's gradient is (an unscaled
    /// run of N micro-batches: N times, which is what a relative error of N - 1 means).
    pub grad_reference_norm: Option<f64>,
    /// The factor clipping multiplied the gradient buffer by (1 = not clipped), averaged over the
    /// step's clipping operations (one per step, or one per micro-batch); `None` without clipping.
    pub clip_factor: Option<f64>,
    /// Norm of the gradient buffer when the step's last clipping looked at it (the accumulated
    /// gradient before clipping: a forgotten zero_grad shows here as a growing norm); `None`
    /// without clipping.
    pub grad_norm_before_clip: Option<f64>,
    pub test_loss: Option<f64>,
    pub test_accuracy: Option<f64>,
    /// Relative parameter distance to the lab's baseline run of the same architecture, after the step.
    pub param_distance: Option<f64>,
}

impl StepRecord {
    /// Whether every number the step measured is finite. A NaN or infinite loss or gradient
    /// means the run diverged: such a record is never shown as a value, let alone as agreement.
    pub fn is_finite(&self) -> bool {
        let optional = [
            self.grad_relative_error,
            self.grad_cosine,
            self.grad_reference_norm,
            self.clip_factor,
            self.grad_norm_before_clip,
            self.test_loss,
            self.test_accuracy,
        ];
        self.train_loss.is_finite() && self.grad_norm.is_finite() && optional.iter().flatten().all(|v| v.is_finite())
    }
}

/// One run's recorded steps as charts, tables and CSV read them: its label, its records, and the
/// step (0-based) at which it diverged, after which it has no records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunHistory<'a> {
    pub label: &'a str,
    pub records: &'a [StepRecord],
    pub diverged_at: Option<u64>,
}

/// Relative error and cosine similarity of `gradient` against `reference`.
pub fn compare_gradients<T: Real>(gradient: &[T], reference: &[T]) -> (f64, f64) {
    let mut diff = 0.0;
    let mut dot = 0.0;
    let mut norm_g = 0.0;
    let mut norm_r = 0.0;
    // In f64 whatever the engine's precision, element by element (no converted copies).
    for (g, r) in gradient.iter().zip(reference) {
        let (g, r) = (g.to_f64(), r.to_f64());
        diff += (g - r) * (g - r);
        dot += g * r;
        norm_g += g * g;
        norm_r += r * r;
    }
    comparison_from_sums(norm_g, dot, norm_r, diff)
}

/// (relative error, cosine) of a gradient against its reference from the sums an engine
/// reduced: `Σ g²`, `Σ g·r`, `Σ r²` and `Σ (g − r)²`.
pub fn comparison_from_sums(norm_g: f64, dot: f64, norm_r: f64, diff: f64) -> (f64, f64) {
    let relative = libm::sqrt(diff) / libm::sqrt(norm_r).max(f64::MIN_POSITIVE);
    let cosine = dot / (libm::sqrt(norm_g) * libm::sqrt(norm_r)).max(f64::MIN_POSITIVE);
    (relative, cosine)
}

/// `|a - b| / |b|`.
pub fn relative_distance(a: &[f64], b: &[f64]) -> f64 {
    let diff: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let norm: f64 = b.iter().map(|y| y * y).sum();
    libm::sqrt(diff) / libm::sqrt(norm).max(f64::MIN_POSITIVE)
}

/// Activation memory held between forward and backward for one pass over `rows` items.
///
/// Counted per item: the input row, and per hidden layer the linear output, (with a norm) the
/// normalized values and the norm's output, and the activation output; then logits and softmax
/// probabilities. Per statistic set: mean, variance and reciprocal std. Parameters, gradients and
/// optimizer state are the same for every regime and are not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ActivationMemory {
    pub rows: usize,
    pub values: usize,
    pub bytes: usize,
}

pub fn activation_memory(layout: &Layout, rows: usize, bytes_per_value: usize) -> ActivationMemory {
    let mut values = rows * layout.input_dim;
    for layer in &layout.hidden {
        let w = layer.width;
        let per_row = match layout.spec.norm {
            Norm::None => 2 * w,
            _ => 4 * w,
        };
        values += rows * per_row;
        values += 3 * match layout.spec.norm {
            Norm::None => 0,
            Norm::BatchNorm { .. } => w,
            Norm::LayerNorm { .. } => rows,
            Norm::GroupNorm { groups, .. } => rows * groups,
        };
    }
    values += 2 * rows * layout.classes;
    ActivationMemory {
        rows,
        values,
        bytes: values * bytes_per_value,
    }
}

/// The last column, `status`, is `trained`, or `diverged` on the step where a loss, gradient or
/// parameter became NaN or infinite (the run's last row: it is not trained after it).
pub const CSV_HEADER: &str = "run,step,train_loss,items,learning_rate,grad_norm,grad_relative_error,grad_cosine,test_loss,test_accuracy,param_distance,clip_factor,grad_norm_before_clip,status";

fn csv_field(value: Option<f64>) -> String {
    value.map_or_else(String::new, |v| format!("{v:e}"))
}

/// Quotes a label for CSV when it holds a comma, quote or newline.
pub fn csv_text(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

pub fn csv_row(label: &str, r: &StepRecord, diverged: bool) -> String {
    format!(
        "{},{},{:e},{},{:e},{:e},{},{},{},{},{},{},{},{}",
        csv_text(label),
        r.step + 1,
        r.train_loss,
        r.items,
        r.learning_rate,
        r.grad_norm,
        csv_field(r.grad_relative_error),
        csv_field(r.grad_cosine),
        csv_field(r.test_loss),
        csv_field(r.test_accuracy),
        csv_field(r.param_distance),
        csv_field(r.clip_factor),
        csv_field(r.grad_norm_before_clip),
        if diverged { "diverged" } else { "trained" },
    )
}

/// Every run's history as CSV (header, then one row per run and step), as the CLI writes and
/// the Lab downloads.
pub fn metrics_csv<'a>(runs: impl IntoIterator<Item = RunHistory<'a>>) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for run in runs {
        for record in run.records {
            out.push_str(&csv_row(run.label, record, run.diverged_at == Some(record.step)));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelSpec;

    #[test]
    fn identical_gradients_compare_perfectly() {
        let g = [1.0, -2.0, 3.0];
        let (rel, cos) = compare_gradients(&g, &g);
        assert_eq!(rel, 0.0);
        assert!((cos - 1.0).abs() < 1e-15);
        let doubled: Vec<f64> = g.iter().map(|v| 2.0 * v).collect();
        let (rel, cos) = compare_gradients(&doubled, &g);
        assert!((rel - 1.0).abs() < 1e-15 && (cos - 1.0).abs() < 1e-15);
    }

    #[test]
    fn a_non_finite_measurement_is_not_finite() {
        let fine = StepRecord {
            train_loss: 0.5,
            grad_norm: 1.0,
            test_loss: Some(0.4),
            ..StepRecord::default()
        };
        assert!(fine.is_finite());
        for broken in [
            StepRecord {
                train_loss: f64::NAN,
                ..fine
            },
            StepRecord {
                train_loss: f64::INFINITY,
                ..fine
            },
            StepRecord {
                grad_norm: f64::NAN,
                ..fine
            },
            StepRecord {
                grad_relative_error: Some(f64::NAN),
                ..fine
            },
            StepRecord {
                test_loss: Some(f64::NEG_INFINITY),
                ..fine
            },
        ] {
            assert!(!broken.is_finite(), "{broken:?}");
        }
    }

    #[test]
    fn csv_marks_the_step_a_run_diverged_and_writes_its_values_as_they_are() {
        let records = [
            StepRecord {
                step: 0,
                train_loss: 0.5,
                ..StepRecord::default()
            },
            StepRecord {
                step: 1,
                train_loss: f64::NAN,
                grad_norm: f64::INFINITY,
                ..StepRecord::default()
            },
        ];
        let csv = metrics_csv([RunHistory {
            label: "a",
            records: &records,
            diverged_at: Some(1),
        }]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].ends_with(",trained"), "{}", lines[1]);
        assert!(lines[2].starts_with("a,2,NaN,"), "{}", lines[2]);
        assert!(lines[2].contains(",inf,"), "{}", lines[2]);
        assert!(lines[2].ends_with(",diverged"), "{}", lines[2]);
        assert_eq!(lines[2].split(',').count(), CSV_HEADER.split(',').count());
    }

    #[test]
    fn memory_scales_with_rows() {
        let layout = Layout::new(&ModelSpec::default(), 2, 3);
        let full = activation_memory(&layout, 256, 4);
        let micro = activation_memory(&layout, 64, 4);
        // 2 + 2*64 + 2*64 + 2*3 = 264 values per row
        assert_eq!(full.values, 256 * 264);
        assert_eq!(full.bytes, 4 * micro.bytes);
    }
}
