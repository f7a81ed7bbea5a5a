//! Text output of the CLI: tables, CSV and JSON of per-step metrics.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use gradlab_sim::backend::TrainingBackend;
use gradlab_sim::lab::{Lab, RunMemory};
use gradlab_sim::metrics::{metrics_csv, StepRecord};
use gradlab_sim::scenario::Scenario;

pub fn scenarios(out: &mut dyn Write) -> Result<()> {
    for s in Scenario::all() {
        writeln!(out, "{:<16} {}\n{:<16} {}", s.id, s.title, "", s.summary)?;
    }
    for id in gradlab_sim::gpt::scenario::GPT_SCENARIO_IDS {
        if let Some(s) = gradlab_sim::gpt::scenario::GptScenario::by_id(id) {
            writeln!(out, "{:<16} {}\n{:<16} {}", s.id, s.title, "", s.summary)?;
        }
    }
    Ok(())
}

/// A loss in the table's column: 6 decimals, or scientific notation where that would not fit
/// (a run on its way to diverging reaches 1e24).
fn loss(value: f64) -> String {
    if value.is_finite() && value.abs() < 1e4 {
        format!("{value:.6}")
    } else {
        format!("{value:.4e}")
    }
}

fn optional(value: Option<f64>, precision: usize) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.precision$e}"))
}

pub fn table<B: TrainingBackend>(lab: &Lab<B>, every: u64, out: &mut dyn Write) -> Result<()> {
    // Validation bounds labels; the cap keeps the width a valid format argument regardless.
    let width = lab
        .runs()
        .iter()
        .map(|r| r.spec.label.chars().count())
        .max()
        .unwrap_or(3)
        .clamp(3, gradlab_sim::lab::MAX_LABEL_CHARS);
    writeln!(
        out,
        "{:>5}  {:<width$}  {:>10}  {:>8}  {:>10}  {:>10}  {:>12}  {:>10}  {:>9}",
        "step", "run", "train_loss", "test_acc", "grad_norm", "grad_err", "grad_cos", "param_dist", "lr"
    )?;
    let steps = lab.steps_taken();
    for step in 0..steps {
        let scheduled = (step + 1).is_multiple_of(every) || step + 1 == steps;
        for run in lab.runs() {
            // The step a run diverged is always printed, whatever `every` says.
            let diverged_here = run.diverged_at == Some(step);
            if !(scheduled || diverged_here) {
                continue;
            }
            let Some(r) = run.history.get(step as usize) else {
                continue;
            };
            writeln!(
                out,
                "{:>5}  {:<width$}  {:>10}  {:>8}  {:>10.4e}  {:>10}  {:>12}  {:>10}  {:>9.3e}{}",
                r.step + 1,
                run.spec.label,
                loss(r.train_loss),
                r.test_accuracy
                    .map_or_else(|| "-".into(), |a| format!("{:.1}%", a * 100.0)),
                r.grad_norm,
                optional(r.grad_relative_error, 2),
                r.grad_cosine.map_or_else(|| "-".into(), |c| format!("{c:.9}")),
                optional(r.param_distance, 2),
                r.learning_rate,
                if diverged_here { "  diverged" } else { "" },
            )?;
        }
    }
    for run in lab.runs() {
        if let Some(step) = run.diverged_at {
            writeln!(out, "{}", divergence_note(&run.spec.label, step))?;
        }
    }
    Ok(())
}

/// The sentence the CLI prints for a run that diverged at `step` (0-based).
pub fn divergence_note(label: &str, step: u64) -> String {
    format!(
        "{label}: diverged at step {} (a loss, gradient or parameter became NaN or infinite); not trained after it",
        step + 1
    )
}

pub fn csv<B: TrainingBackend>(lab: &Lab<B>, out: &mut dyn Write) -> Result<()> {
    write!(out, "{}", metrics_csv(lab.histories()))?;
    Ok(())
}

#[derive(Serialize)]
struct JsonRun<'a> {
    label: &'a str,
    engine: String,
    /// The step (0-based, as each record's `step`) at which the run diverged: its last record,
    /// where a loss, gradient or parameter was NaN or infinite (written as null). Absent if none.
    #[serde(skip_serializing_if = "Option::is_none")]
    diverged_at_step: Option<u64>,
    steps: &'a [StepRecord],
}

pub fn json<B: TrainingBackend>(lab: &Lab<B>, out: &mut dyn Write) -> Result<()> {
    let runs: Vec<JsonRun<'_>> = lab
        .runs()
        .iter()
        .map(|r| JsonRun {
            label: &r.spec.label,
            engine: r.backend.name(),
            diverged_at_step: r.diverged_at,
            steps: &r.history,
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &runs)?;
    writeln!(out)?;
    Ok(())
}

pub fn memory(runs: &[RunMemory], out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "{:<28}  {:>9}  {:>14}  {:>14}  {:>7}",
        "run", "peak rows", "peak bytes", "full-batch bytes", "ratio"
    )?;
    for run in runs {
        writeln!(
            out,
            "{:<28}  {:>9}  {:>14}  {:>14}  {:>6.1}%",
            run.label,
            run.peak.rows,
            run.peak.bytes,
            run.full_batch.bytes,
            100.0 * run.peak.bytes as f64 / run.full_batch.bytes.max(1) as f64
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_sim::metrics::{csv_row, csv_text, CSV_HEADER};

    #[test]
    fn csv_quotes_labels_with_commas() {
        assert_eq!(csv_text("plain"), "plain");
        assert_eq!(csv_text("accumulate 4, loss / 4"), "\"accumulate 4, loss / 4\"");
        assert_eq!(csv_text("say \"hi\""), "\"say \"\"hi\"\"\"");
        let row = csv_row("a,b", &StepRecord::default(), false);
        assert!(row.starts_with("\"a,b\",1,"));
        assert_eq!(row.split(',').count(), CSV_HEADER.split(',').count() + 1);
    }
}
