//! The `gradlab` binary as a user runs it: output formats, files written, and clear errors.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

use std::process::{Command, Output};

use tempfile::TempDir;

fn gradlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gradlab"))
        .args(args)
        .output()
        .expect("the gradlab binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A fresh directory for one test's files, removed when the test ends (pass or fail).
fn scratch_dir(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("gradlab-cli-test-{name}-"))
        .tempdir()
        .unwrap()
}

fn assert_clean_failure(output: &Output, expected: &str) {
    assert!(!output.status.success(), "should fail: {}", stdout(output));
    let err = stderr(output);
    assert!(err.contains(expected), "stderr should mention {expected:?}:\n{err}");
    assert!(!err.contains("panicked"), "no panic:\n{err}");
}

#[test]
fn scenarios_lists_every_preset() {
    let output = gradlab(&["scenarios"]);
    assert!(output.status.success());
    for id in gradlab::sim::scenario::SCENARIO_IDS
        .iter()
        .chain(&gradlab::sim::gpt::scenario::GPT_SCENARIO_IDS)
    {
        assert!(stdout(&output).contains(id), "{id} missing");
    }
}

/// The runs of one part of a tiny-GPT `run --format json` document, by reduction.
fn gpt_runs<'a>(doc: &'a serde_json::Value, part: &str) -> Vec<(&'a str, &'a Vec<serde_json::Value>)> {
    let part = doc
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["part"] == part)
        .unwrap_or_else(|| panic!("part {part}"));
    part["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["reduction"].as_str().unwrap(), r["steps"].as_array().unwrap()))
        .collect()
}

#[test]
fn the_tiny_gpt_shows_the_token_count_bug_on_lines_and_not_on_blocks() {
    let output = gradlab(&[
        "run",
        "--scenario",
        "tiny_gpt_tokens",
        "--steps",
        "2",
        "--format",
        "json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let lines = gpt_runs(&doc, "lines");
    let field = |steps: &Vec<serde_json::Value>, name: &str| -> Vec<f64> {
        steps.iter().map(|s| s[name].as_f64().unwrap_or(-1.0)).collect()
    };
    let (full, mean, fix) = (lines[0].1, lines[1].1, lines[2].1);
    assert_eq!(
        [lines[0].0, lines[1].0, lines[2].0],
        ["full_batch", "micro_batch_mean", "window_tokens"]
    );
    assert_eq!(field(fix, "train_loss"), field(full, "train_loss"));
    assert_eq!(field(fix, "grad_relative_error"), [0.0, 0.0]);
    assert!(field(mean, "grad_relative_error").iter().all(|&e| e > 1e-3), "{mean:?}");
    for (reduction, steps) in gpt_runs(&doc, "blocks").iter().skip(1) {
        assert_eq!(field(steps, "grad_relative_error"), [0.0, 0.0], "{reduction}");
    }
    let table = gradlab(&["run", "--scenario", "tiny_gpt_tokens", "--steps", "1", "--quiet"]);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(
        text.contains("micro_batch_mean") && text.contains("writes after"),
        "{text}"
    );
}

#[test]
fn a_tiny_gpt_export_names_nanogpts_tensors_and_holds_each_runs_gradient() {
    let dir = scratch_dir("gpt-export");
    let path = dir.path().join("gpt.json");
    let output = gradlab(&[
        "export",
        "--scenario",
        "tiny_gpt_tokens",
        "--steps",
        "1",
        "--precision",
        "f64",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(doc["model"], "gpt");
    assert_eq!(doc["engine"], "cpu-f64");
    assert_eq!(doc["schema_version"], gradlab::sim::export::EXPORT_SCHEMA_VERSION);
    let part = &doc["parts"][0];
    let architecture = &part["architecture"];
    let count = architecture["parameter_count"].as_u64().unwrap() as usize;
    let vocab = architecture["vocabulary"].as_array().unwrap().len() as u64;
    let names: Vec<&str> = architecture["parameter_layout"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"transformer.h.1.mlp.c_proj.weight") && names.last() == Some(&"lm_head.weight"));
    let step = &part["steps"][0];
    let examples = step["examples"].as_array().unwrap();
    assert_eq!(examples.len(), 32);
    assert!(examples
        .iter()
        .flat_map(|e| e.as_array().unwrap())
        .all(|id| id.as_u64().unwrap() < vocab));
    let tokens: u64 = step["micro_batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tokens"].as_u64().unwrap())
        .sum();
    for run in step["runs"].as_array().unwrap() {
        assert_eq!(run["gradient"].as_array().unwrap().len(), count);
        assert_eq!(run["parameters"].as_array().unwrap().len(), count);
    }
    // The fix weighs every token 1 / (the window's tokens).
    let fix = &step["runs"][2]["token_weights"];
    assert!(fix
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w.as_f64().unwrap() == 1.0 / tokens as f64));
    assert_clean_failure(
        &gradlab(&["plot", "--scenario", "tiny_gpt_memory"]),
        "measures memory and time",
    );
    assert_clean_failure(&gradlab(&["config", "tiny_gpt_tokens"]), "is a tiny-GPT scenario");
}

#[test]
fn run_prints_csv_with_a_row_per_run_and_step() {
    let output = gradlab(&["run", "--scenario", "scaling", "--steps", "3", "--format", "csv"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("run,step,train_loss"));
    assert_eq!(lines.len(), 1 + 3 * 3);
    // Full batch and loss / N agree; the unscaled run's gradient is 4x, so its relative error is 3.
    // Fields by the header's names; only the label (first) may hold commas, so split from the end.
    let header: Vec<&str> = lines[0].split(',').collect();
    let field = |line: &str, name: &str| {
        let i = header.iter().position(|h| *h == name).unwrap();
        line.rsplitn(header.len(), ',').collect::<Vec<_>>()[header.len() - 1 - i].to_string()
    };
    let full_loss: f64 = field(lines[3], "train_loss").parse().unwrap();
    let accumulated_loss: f64 = field(lines[6], "train_loss").parse().unwrap();
    assert!((full_loss - accumulated_loss).abs() < 1e-6 * full_loss);
    // No run of this scenario clips: its clipping columns are empty.
    assert_eq!(field(lines[3], "clip_factor"), "");
    assert_eq!(field(lines[3], "grad_norm_before_clip"), "");
    let unscaled_error: f64 = field(lines[9], "grad_relative_error").parse().unwrap();
    assert!((unscaled_error - 3.0).abs() < 1e-4, "{}", lines[9]);
}

#[test]
fn run_prints_a_table_and_json() {
    let table = gradlab(&["run", "--scenario", "norms", "--steps", "2"]);
    assert!(table.status.success(), "{}", stderr(&table));
    assert!(stdout(&table).contains("BatchNorm, accumulate 4"));
    let json = gradlab(&[
        "run",
        "--scenario",
        "pitfalls",
        "--steps",
        "2",
        "--format",
        "json",
        "--precision",
        "f64",
    ]);
    assert!(json.status.success());
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let runs = value.as_array().unwrap();
    assert_eq!(runs.len(), 6);
    assert_eq!(runs[0]["engine"], "cpu-f64");
    assert_eq!(runs[0]["steps"].as_array().unwrap().len(), 2);
}

#[test]
fn long_runs_report_progress_on_stderr() {
    let output = gradlab(&["run", "--scenario", "memory", "--steps", "20", "--format", "csv"]);
    assert!(output.status.success());
    let err = stderr(&output);
    assert!(err.contains("step 10/20") && err.contains("step 20/20"), "{err}");
    let quiet = gradlab(&["run", "--scenario", "memory", "--steps", "20", "--quiet"]);
    assert!(stderr(&quiet).is_empty());
}

#[test]
fn a_config_file_round_trips_through_the_config_command() {
    let dir = scratch_dir("roundtrip");
    let printed = gradlab(&["config", "variable_length"]);
    assert!(printed.status.success());
    let path = dir.path().join("lab.toml");
    std::fs::write(&path, stdout(&printed)).unwrap();
    let output = gradlab(&[
        "run",
        "--config",
        path.to_str().unwrap(),
        "--steps",
        "2",
        "--format",
        "csv",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output).lines().count(), 1 + 3 * 2);
}

#[test]
fn bad_configs_name_the_field_and_fail() {
    let dir = scratch_dir("bad");
    let cases = [
        (
            "indivisible.toml",
            "batch_size = 256\n[[runs]]\nlabel = \"a\"\n[runs.regime]\nmicro_batches = 3\n",
            "runs[0].regime.micro_batches",
        ),
        ("unknown.toml", "batch_sise = 10\n", "batch_sise"),
        ("type.toml", "batch_size = \"many\"\n", "batch_size"),
        (
            "lr.json",
            r#"{"runs": [{"label": "a", "schedule": {"kind": "constant", "learning_rate": -1}}]}"#,
            "runs[0].schedule.learning_rate",
        ),
        (
            "norm.toml",
            "[[runs]]\nlabel = \"a\"\n[runs.model]\nhidden = [64, 30]\nnorm = { kind = \"group_norm\", groups = 4 }\n",
            "runs[0].model.norm.groups",
        ),
        ("broken.json", "{\"runs\": [", "lab config"),
    ];
    for (name, text, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let output = gradlab(&["run", "--config", path.to_str().unwrap(), "--steps", "1"]);
        assert_clean_failure(&output, expected);
    }
    assert_clean_failure(
        &gradlab(&["run", "--config", dir.path().join("missing.toml").to_str().unwrap()]),
        "cannot read config file",
    );
}

#[test]
fn bad_arguments_fail_with_a_message() {
    assert_clean_failure(&gradlab(&["run", "--scenario", "nope"]), "unknown scenario \"nope\"");
    assert_clean_failure(&gradlab(&["run", "--scenario", "scaling", "--steps", "0"]), "--steps");
    assert_clean_failure(&gradlab(&["run"]), "--scenario");
    assert_clean_failure(&gradlab(&["run", "--scenario", "scaling", "--format", "xml"]), "xml");
    assert_clean_failure(&gradlab(&["frobnicate"]), "frobnicate");
}

#[test]
fn plot_writes_png_and_svg_files() {
    let dir = scratch_dir("plot");
    let output = gradlab(&[
        "plot",
        "--scenario",
        "scaling",
        "--steps",
        "5",
        "--out-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    for name in [
        "loss",
        "accuracy",
        "grad_norm",
        "grad_error",
        "grad_cosine",
        "learning_rate",
    ] {
        let png = std::fs::read(dir.path().join(format!("{name}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}.png is a PNG");
        let svg = std::fs::read_to_string(dir.path().join(format!("{name}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("full batch"),
            "{name}.svg has the legend"
        );
    }
}

#[test]
fn plot_draws_the_tiny_gpts_charts_for_each_part() {
    let dir = scratch_dir("plot-gpt");
    let output = gradlab(&[
        "plot",
        "--scenario",
        "tiny_gpt_tokens",
        "--steps",
        "2",
        "--quiet",
        "--out-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    for part in ["lines", "blocks"] {
        for chart in ["train-loss", "validation-loss", "grad-error"] {
            let name = format!("{part}-{chart}");
            let png = std::fs::read(dir.path().join(format!("{name}.png"))).unwrap();
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}.png is a PNG");
            let svg = std::fs::read_to_string(dir.path().join(format!("{name}.svg"))).unwrap();
            assert!(
                svg.starts_with("<svg") && svg.contains(part),
                "{name}.svg is titled with its part"
            );
            // The gradient error has only the accumulated runs; the losses have all three.
            assert_eq!(svg.contains("Full batch"), chart != "grad-error", "{name}.svg's legend");
            assert!(svg.contains("Sum / tokens in the window"), "{name}.svg's legend");
        }
    }
}

#[test]
fn memory_of_the_tiny_gpt_shows_an_nth_of_the_activations_per_pass() {
    let output = gradlab(&["memory", "--scenario", "tiny_gpt_memory", "--steps", "1"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let blocks: Vec<Vec<String>> = text
        .lines()
        .skip_while(|l| !l.starts_with("tiny_gpt_memory (blocks)"))
        .skip(2)
        .take(6)
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    assert_eq!(
        blocks.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(),
        ["1", "2", "4", "8", "16", "32"],
        "{text}"
    );
    // Fixed blocks: N micro-batches keep exactly an Nth of the full batch's activations.
    for row in &blocks {
        let n: f64 = row[0].parse().unwrap();
        assert_eq!(row[2].parse::<f64>().unwrap() * n, 2048.0, "tokens per pass: {row:?}");
        assert_eq!(row[7], format!("{:.3}x", 1.0 / n), "{row:?}");
    }
    assert!(text.contains("tiny_gpt_memory (lines)"), "{text}");
    // The same measurement as JSON, and of the token-count experiment's parts.
    let output = gradlab(&[
        "run",
        "--scenario",
        "tiny_gpt_memory",
        "--steps",
        "1",
        "--format",
        "json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let parts: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(parts[0]["part"], "blocks");
    assert_eq!(parts[0]["rows"][3]["micro_batches"], 8);
    assert_eq!(parts[0]["rows"][3]["tokens_per_pass"], 256);
    assert_clean_failure(
        &gradlab(&["run", "--scenario", "tiny_gpt_memory", "--format", "csv"]),
        "not CSV",
    );
    let output = gradlab(&["memory", "--scenario", "tiny_gpt_tokens", "--steps", "1"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("tiny_gpt_tokens (lines)"));
    assert_clean_failure(
        &gradlab(&["export", "--scenario", "tiny_gpt_memory"]),
        "measures memory and time",
    );
}

#[test]
fn export_writes_everything_needed_to_recheck() {
    let dir = scratch_dir("export");
    let path = dir.path().join("export.json");
    let output = gradlab(&[
        "export",
        "--scenario",
        "norms",
        "--steps",
        "2",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("6 runs x 2 steps"), "{}", stdout(&output));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(doc["schema"], "gradlab-export");
    assert_eq!(doc["schema_version"], 4);
    assert_eq!(doc["model"], "mlp");
    let train = &doc["dataset"]["train"];
    assert_eq!(
        train["inputs"].as_array().unwrap().len(),
        2 * train["labels"].as_array().unwrap().len()
    );
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for step in steps {
        assert_eq!(step["examples"].as_array().unwrap().len(), 256);
        assert_eq!(step["runs"].as_array().unwrap().len(), runs.len());
    }
    for (i, run) in runs.iter().enumerate() {
        let count = run["parameter_count"].as_u64().unwrap() as usize;
        assert_eq!(run["initial_parameters"].as_array().unwrap().len(), count);
        for step in steps {
            let result = &step["runs"][i];
            assert_eq!(result["gradient"].as_array().unwrap().len(), count);
            assert_eq!(result["parameters"].as_array().unwrap().len(), count);
        }
        let last = run["parameter_layout"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(
            last["offset"].as_u64().unwrap() + last["len"].as_u64().unwrap(),
            count as u64
        );
    }
    // Re-check one number from the document alone: SGD's update is p1 = p0 - lr * g.
    let p0 = runs[2]["initial_parameters"][5].as_f64().unwrap();
    let g = steps[0]["runs"][2]["gradient"][5].as_f64().unwrap();
    let p1 = steps[0]["runs"][2]["parameters"][5].as_f64().unwrap();
    assert!((p1 - (p0 - 0.1 * g)).abs() < 1e-6, "{p1} vs {}", p0 - 0.1 * g);
}

#[test]
fn export_streams_to_standard_output_as_one_document() {
    let output = gradlab(&["export", "--scenario", "scaling", "--steps", "3", "--quiet"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["steps"].as_array().unwrap().len(), 3);
    assert_eq!(doc["steps"][2]["step"], 2);
}

/// Writes `text` as a config file and runs `gradlab run` on it.
fn run_config(name: &str, text: &str, extra: &[&str]) -> Output {
    let dir = scratch_dir(name);
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let mut args = vec!["run", "--config", path.to_str().unwrap(), "--steps", "1"];
    args.extend_from_slice(extra);
    gradlab(&args)
}

#[test]
fn a_huge_run_label_is_refused_not_a_panic() {
    let label = "x".repeat(65_536);
    let output = run_config("label.toml", &format!("[[runs]]\nlabel = \"{label}\"\n"), &[]);
    assert_clean_failure(&output, "runs[0].label: must be at most 64 characters, got 65536");
    assert_eq!(output.status.code(), Some(1), "an error exit, not a panic (101)");
    assert!(stderr(&output).len() < 1_000, "the label is not echoed");
    let escape = run_config("escape.toml", "[[runs]]\nlabel = \"a\\u001b[2Jb\"\n", &[]);
    assert_clean_failure(&escape, "control characters");
}

#[test]
fn a_config_too_large_for_memory_is_refused_before_training() {
    let hidden = ["1024"; 8].join(", ");
    let runs: String = (0..8)
        .map(|i| format!("[[runs]]\nlabel = \"r{i}\"\n[runs.model]\nhidden = [{hidden}]\n"))
        .collect();
    let text = format!("batch_size = 239872\n[dataset]\nexamples_per_class = 100000\ntest_fraction = 0.2\n{runs}");
    let output = run_config("huge.toml", &text, &[]);
    assert_clean_failure(&output, "more than the budget of 2048 MiB");
    assert!(stderr(&output).contains("--memory-budget-mib"), "{}", stderr(&output));
    // The same estimate is what `gradlab memory` reports, without refusing to report it.
    let dir = scratch_dir("huge-memory");
    let path = dir.path().join("huge.toml");
    std::fs::write(&path, &text).unwrap();
    let memory = gradlab(&["memory", "--config", path.to_str().unwrap()]);
    assert!(memory.status.success(), "{}", stderr(&memory));
    assert!(
        stdout(&memory).contains("whole experiment: about "),
        "{}",
        stdout(&memory)
    );
    // A raised budget lets a config through that the default refuses.
    let wide = "batch_size = 512\n[dataset]\nexamples_per_class = 3000\n[[runs]]\nlabel = \"w\"\n[runs.model]\nhidden = [512, 512]\n";
    assert_clean_failure(
        &run_config("wide.toml", wide, &["--memory-budget-mib", "10"]),
        "budget of 10 MiB",
    );
    let raised = run_config("wide.toml", wide, &["--memory-budget-mib", "4096"]);
    assert!(raised.status.success(), "{}", stderr(&raised));
}

#[test]
fn a_huge_malformed_config_is_quoted_only_near_the_error() {
    let text = format!("batch_size = 256 {}\n", "y".repeat(10 << 20));
    let output = run_config("big-line.toml", &text, &[]);
    assert_clean_failure(&output, "line 1, column");
    assert!(
        stderr(&output).len() < 2_000,
        "stderr holds {} bytes",
        stderr(&output).len()
    );
    let json = format!("{{\"batch_size\": 256, \"{}\": 1}}", "k".repeat(10 << 20));
    let output = run_config("big-key.json", &json, &[]);
    assert_clean_failure(&output, "unknown field");
    assert!(
        stderr(&output).len() < 2_000,
        "stderr holds {} bytes",
        stderr(&output).len()
    );
}

#[test]
fn bench_steps_are_bounded() {
    assert_clean_failure(&gradlab(&["bench", "--steps", "1000000000"]), "--steps");
    assert_clean_failure(&gradlab(&["bench", "--steps", "0"]), "--steps");
}

#[test]
fn memory_reports_one_micro_batch_against_the_full_batch() {
    let output = gradlab(&["memory", "--scenario", "memory"]);
    assert!(output.status.success());
    let text = stdout(&output);
    assert!(text.contains("25.0%") && text.contains("100.0%"), "{text}");
}

/// A steady run beside one whose f32 numbers overflow at step 3 (as tests/divergence.rs).
const EXPLODING: &str = r#"
batch_size = 64
[dataset]
kind = "spiral"
examples_per_class = 60
[[runs]]
label = "steady"
model = { hidden = [32, 32], activation = "gelu" }
schedule = { kind = "constant", learning_rate = 0.1 }
[[runs]]
label = "exploding"
model = { hidden = [32, 32], activation = "gelu" }
schedule = { kind = "constant", learning_rate = 100.0 }
regime = { micro_batches = 64, loss = "unscaled" }
"#;

#[test]
fn a_run_that_diverges_is_reported_in_every_format_and_the_other_goes_on() {
    let dir = scratch_dir("diverged");
    let config = dir.path().join("exploding.toml");
    std::fs::write(&config, EXPLODING).unwrap();
    let run = |format: &str| {
        gradlab(&[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--steps",
            "6",
            "--format",
            format,
        ])
    };
    let table = run("table");
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    let note = "exploding: diverged at step 3 (a loss, gradient or parameter became NaN or infinite)";
    assert!(text.contains(note), "{text}");
    assert!(stderr(&table).contains(note), "said on stderr too");
    let diverged_row = text
        .lines()
        .find(|l| l.ends_with("  diverged"))
        .expect("the step's row is marked");
    assert!(diverged_row.trim_start().starts_with("3  exploding"), "{diverged_row}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("6  steady")),
        "the steady run trained on: {text}"
    );
    assert!(!text.lines().any(|l| l.trim_start().starts_with("6  exploding")));

    let csv = run("csv");
    let csv = stdout(&csv);
    let exploding: Vec<&str> = csv.lines().filter(|l| l.starts_with("exploding,")).collect();
    assert_eq!(exploding.len(), 3, "{csv}");
    assert!(exploding[2].ends_with(",diverged") && exploding[..2].iter().all(|l| l.ends_with(",trained")));
    assert_eq!(csv.lines().filter(|l| l.starts_with("steady,")).count(), 6);

    let json = run("json");
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(value[1]["diverged_at_step"], 2, "0-based, as each record's step");
    assert_eq!(value[1]["steps"].as_array().unwrap().len(), 3);
    assert!(value[1]["steps"][2]["test_loss"].is_null(), "NaN is written as null");
    assert!(value[0].get("diverged_at_step").is_none());
}

#[test]
fn an_export_marks_a_divergence_and_stops_when_every_run_has_diverged() {
    let only_exploding = EXPLODING.replace(
        "[[runs]]\nlabel = \"steady\"\nmodel = { hidden = [32, 32], activation = \"gelu\" }\nschedule = { kind = \"constant\", learning_rate = 0.1 }\n",
        "",
    );
    assert_ne!(only_exploding, EXPLODING);
    let dir = scratch_dir("export-diverged");
    let config = dir.path().join("exploding.toml");
    std::fs::write(&config, &only_exploding).unwrap();
    let out = dir.path().join("export.json");
    let output = gradlab(&[
        "export",
        "--config",
        config.to_str().unwrap(),
        "--steps",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "every run diverged at step 3: the export ends there");
    assert!(steps[1]["runs"][0].get("diverged_at_step").is_none());
    assert_eq!(steps[2]["runs"][0]["diverged_at_step"], 2);
    assert!(steps[2]["runs"][0]["metrics"]["test_loss"].is_null());
}

#[test]
fn plan_lists_the_models_and_prints_a_plan_as_a_table_and_as_json() {
    let listed = gradlab(&["plan", "--list-models"]);
    assert!(listed.status.success());
    let list = stdout(&listed);
    assert!(list.contains("gpt2") && list.contains("124439808"), "{list}");
    assert!(list.contains("llama-3.1-8b") && list.contains("8030261248"), "{list}");

    let args = [
        "plan",
        "--model",
        "gpt2",
        "--seq-len",
        "1024",
        "--memory-gib",
        "8",
        "--target-batch",
        "256",
    ];
    let table = gradlab(&args);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(
        text.contains("accumulation steps") && text.contains("gradient_accumulation_steps"),
        "{text}"
    );

    let json = gradlab(&[&args[..], &["--format", "json"]].concat());
    assert!(json.status.success(), "{}", stderr(&json));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(plan["outcome"], "fits");
    assert_eq!(plan["parameters"]["total"], 124_439_808);
    let (micro, steps) = (
        plan["micro_batch"].as_u64().unwrap(),
        plan["accumulation_steps"].as_u64().unwrap(),
    );
    assert_eq!(plan["effective_batch"].as_u64().unwrap(), micro * steps);
    assert!(micro * steps >= 256 && micro * (steps - 1) < 256);
    let memory = &plan["memory_bytes"];
    let parts: u64 = ["weights", "gradients", "optimizer", "activations", "margin"]
        .iter()
        .map(|k| memory[k].as_u64().unwrap())
        .sum();
    assert_eq!(memory["total"].as_u64().unwrap(), parts);
    assert!(parts <= memory["budget"].as_u64().unwrap());
    assert_eq!(
        plan["configs"]["hf_training_arguments"]["gradient_accumulation_steps"],
        steps
    );
    assert_eq!(plan["configs"]["deepspeed"]["train_micro_batch_size_per_gpu"], micro);
    assert_eq!(plan["configs"]["lightning"]["accumulate_grad_batches"], steps);
}

#[test]
fn plan_refuses_bad_input_by_field_and_says_what_would_fit() {
    let base = ["plan", "--model", "gpt2", "--seq-len", "1024", "--target-batch", "64"];
    assert_clean_failure(&gradlab(&[&base[..], &["--memory-gib", "0"]].concat()), "memory");
    assert_clean_failure(&gradlab(&[&base[..], &["--memory-gib=-3"]].concat()), "memory");
    assert_clean_failure(&gradlab(&[&base[..], &["--memory-gib", "NaN"]].concat()), "memory");
    assert_clean_failure(
        &gradlab(&[
            "plan",
            "--model",
            "gpt-5",
            "--seq-len",
            "8",
            "--memory-gib",
            "8",
            "--target-batch",
            "8",
        ]),
        "unknown model",
    );
    assert_clean_failure(
        &gradlab(&[
            "plan",
            "--model",
            "gpt2",
            "--seq-len",
            "0",
            "--memory-gib",
            "8",
            "--target-batch",
            "8",
        ]),
        "seq_len",
    );
    assert_clean_failure(
        &gradlab(&[&base[..], &["--memory-gib", "8", "--sharding", "zero3"]].concat()),
        "sharding",
    );
    let full_8b = gradlab(&[
        "plan",
        "--model",
        "llama-3.1-8b",
        "--seq-len",
        "2048",
        "--memory-gib",
        "24",
        "--target-batch",
        "256",
    ]);
    assert!(!full_8b.status.success());
    let said = stdout(&full_8b);
    assert!(said.contains("nothing fits"), "{said}");
    assert!(said.contains("activation checkpointing + QLoRA"), "{said}");
}

#[test]
fn plan_takes_the_labs_network_on_either_engine_and_custom_dimensions() {
    use gradlab::sim::engine_memory::{micro_batch_bytes, LabEngine};
    use gradlab::sim::planner::Architecture;
    let layout = Architecture::lab_mlp_layout();
    for (engine, id) in [(LabEngine::Cpu, "cpu"), (LabEngine::Webgpu, "webgpu")] {
        let args = [
            "plan",
            "--model",
            "lab-mlp",
            "--engine",
            id,
            "--optimizer",
            "sgd-plain",
            "--seq-len",
            "1",
            "--memory-kib",
            "96",
            "--target-batch",
            "256",
            "--format",
            "json",
        ];
        let out = gradlab(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let plan: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let micro = plan["micro_batch"].as_u64().unwrap();
        assert_eq!(
            plan["memory_bytes"]["activations"].as_u64().unwrap(),
            micro_batch_bytes(engine, &layout, micro as usize),
            "{id}"
        );
        assert_eq!(plan["memory_bytes"]["margin"], 0);
        assert!(plan["memory_bytes"]["total"].as_u64().unwrap() <= 96 * 1024);
        assert!(
            plan["accumulation_steps"].as_u64().unwrap() > 1,
            "{id}: 96 KiB does not hold 256 points"
        );
    }
    let lab = [
        "plan",
        "--model",
        "lab-mlp",
        "--seq-len",
        "1",
        "--memory-kib",
        "96",
        "--target-batch",
        "256",
    ];
    assert_clean_failure(&gradlab(&[&lab[..], &["--method", "lora"]].concat()), "method");
    assert_clean_failure(&gradlab(&[&lab[..], &["--precision", "bf16"]].concat()), "precision");
    assert_clean_failure(
        &gradlab(&[
            "plan",
            "--model",
            "gpt2",
            "--engine",
            "cpu",
            "--seq-len",
            "8",
            "--memory-gib",
            "8",
            "--target-batch",
            "8",
        ]),
        "engine",
    );

    let custom = [
        "plan",
        "--model",
        "custom",
        "--family",
        "gpt2",
        "--layers",
        "12",
        "--hidden",
        "768",
        "--heads",
        "12",
        "--vocab",
        "50257",
        "--tied-embeddings",
        "--seq-len",
        "1024",
        "--memory-gib",
        "8",
        "--target-batch",
        "256",
        "--format",
        "json",
    ];
    let out = gradlab(&custom);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        plan["parameters"]["total"], 124_439_808,
        "custom GPT-2 dimensions count as GPT-2"
    );
    let without_hidden: Vec<&str> = custom
        .iter()
        .copied()
        .filter(|a| *a != "--hidden" && *a != "768")
        .collect();
    assert_clean_failure(&gradlab(&without_hidden), "hidden");
    let odd_heads: Vec<&str> = custom.iter().map(|a| if *a == "12" { "7" } else { a }).collect();
    assert_clean_failure(&gradlab(&odd_heads), "heads");
}
