//! Text output of the CLI: tables, CSV and JSON of per-step metrics.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::sim::backend::TrainingBackend;
use crate::sim::lab::{Lab, RunMemory};
use crate::sim::metrics::{metrics_csv, StepRecord};
use crate::sim::scenario::Scenario;

pub fn scenarios(out: &mut dyn Write) -> Result<()> {
    for s in Scenario::all() {
        writeln!(out, "{:<16} {}\n{:<16} {}", s.id, s.title, "", s.summary)?;
    }
    Ok(())
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
        .clamp(3, crate::sim::lab::MAX_LABEL_CHARS);
    writeln!(
        out,
        "{:>5}  {:<width$}  {:>10}  {:>8}  {:>10}  {:>10}  {:>12}  {:>10}  {:>9}",
        "step", "run", "train_loss", "test_acc", "grad_norm", "grad_err", "grad_cos", "param_dist", "lr"
    )?;
    let steps = lab.steps_taken();
    for step in 0..steps {
        if (step + 1) % every != 0 && step + 1 != steps {
            continue;
        }
        for run in lab.runs() {
            let Some(r) = run.history.get(step as usize) else {
                continue;
            };
            writeln!(
                out,
                "{:>5}  {:<width$}  {:>10.6}  {:>8}  {:>10.4e}  {:>10}  {:>12}  {:>10}  {:>9.3e}",
                r.step + 1,
                run.spec.label,
                r.train_loss,
                r.test_accuracy
                    .map_or_else(|| "-".into(), |a| format!("{:.1}%", a * 100.0)),
                r.grad_norm,
                optional(r.grad_relative_error, 2),
                r.grad_cosine.map_or_else(|| "-".into(), |c| format!("{c:.9}")),
                optional(r.param_distance, 2),
                r.learning_rate,
            )?;
        }
    }
    Ok(())
}

pub fn csv<B: TrainingBackend>(lab: &Lab<B>, out: &mut dyn Write) -> Result<()> {
    let histories = lab
        .runs()
        .iter()
        .map(|run| (run.spec.label.as_str(), run.history.as_slice()));
    write!(out, "{}", metrics_csv(histories))?;
    Ok(())
}

#[derive(Serialize)]
struct JsonRun<'a> {
    label: &'a str,
    engine: String,
    steps: &'a [StepRecord],
}

pub fn json<B: TrainingBackend>(lab: &Lab<B>, out: &mut dyn Write) -> Result<()> {
    let runs: Vec<JsonRun<'_>> = lab
        .runs()
        .iter()
        .map(|r| JsonRun {
            label: &r.spec.label,
            engine: r.backend.name(),
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
    use crate::sim::metrics::{csv_row, csv_text, CSV_HEADER};

    #[test]
    fn csv_quotes_labels_with_commas() {
        assert_eq!(csv_text("plain"), "plain");
        assert_eq!(csv_text("accumulate 4, loss / 4"), "\"accumulate 4, loss / 4\"");
        assert_eq!(csv_text("say \"hi\""), "\"say \"\"hi\"\"\"");
        let row = csv_row("a,b", &StepRecord::default());
        assert!(row.starts_with("\"a,b\",1,"));
        assert_eq!(row.split(',').count(), CSV_HEADER.split(',').count() + 1);
    }
}
