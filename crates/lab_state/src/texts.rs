//! The message ids of each experiment's texts: title, explanation, "what to notice" and run
//! labels. Presets' run labels are messages too; a test keeps their English equal to the labels
//! in the preset configs, which the CLI prints.

use gradlab_i18n::Msg;
use gradlab_plot::Metric;
use gradlab_route::SANDBOX;
use gradlab_sim::data::DatasetKind;
use gradlab_sim::lab::LabConfig;
use gradlab_sim::scenario::ScenarioId;

/// The experiments the Lab offers, in menu order: the presets, then the sandbox.
pub fn experiment_ids() -> Vec<&'static str> {
    let mut ids: Vec<&str> = ScenarioId::ALL.into_iter().map(ScenarioId::id).collect();
    ids.push(SANDBOX);
    ids
}

pub fn title(experiment: &str) -> Msg {
    Msg::new(format!("scenario-{experiment}-title"))
}

/// What a preset sets up, without its result: shown in the course until the learner has
/// predicted (or skipped the prediction).
pub fn setup(experiment: &str) -> Msg {
    Msg::new(format!("scenario-{experiment}-setup"))
}

pub fn explanation(experiment: &str) -> Msg {
    Msg::new(format!("scenario-{experiment}-explanation"))
}

/// What to notice in `experiment`; in the sandbox it depends on the settings (`config`, when
/// they are valid), so that the claim about loss / N is true for the settings shown.
pub fn what_to_notice(experiment: &str, config: Option<&LabConfig>) -> Msg {
    match config.filter(|_| experiment == SANDBOX) {
        Some(config) => sandbox_notice(config),
        None => Msg::new(format!("scenario-{experiment}-notice")),
    }
}

/// Whether the sandbox's loss / N run must equal its full batch, and why not when it need not.
fn sandbox_notice(config: &LabConfig) -> Msg {
    let Some(accumulated) = config.runs.get(1) else {
        return Msg::new("scenario-sandbox-notice");
    };
    let n = accumulated.regime.micro_batches;
    if n == 1 {
        Msg::new("scenario-sandbox-notice-one")
    } else if accumulated.model.norm.mixes_items() {
        Msg::new("scenario-sandbox-notice-batch-norm").arg("n", n)
    } else if config.dataset.kind == DatasetKind::VariableLengthSequences {
        Msg::new("scenario-sandbox-notice-variable-items").arg("n", n)
    } else {
        // The controls accept only a batch that N divides, so the micro-batches are equal.
        Msg::new("scenario-sandbox-notice-matches").arg("n", n)
    }
}

/// The two charts that carry `experiment`'s lesson: a compact embed shows these and folds the
/// others.
pub fn key_charts(experiment: &str) -> [Metric; 2] {
    match ScenarioId::from_id(experiment) {
        Some(ScenarioId::Pitfalls) => [Metric::TrainLoss, Metric::GradCosine],
        Some(ScenarioId::Memory) => [Metric::TrainLoss, Metric::TestAccuracy],
        Some(ScenarioId::Scaling | ScenarioId::ScalingAdam | ScenarioId::Norms | ScenarioId::VariableLength) | None => {
            [Metric::TrainLoss, Metric::GradRelativeError]
        }
    }
}

/// The label of each run of `config`, the experiment `experiment` built.
pub fn run_labels(experiment: &str, config: &LabConfig) -> Vec<Msg> {
    let Some(preset) = ScenarioId::from_id(experiment) else {
        // The sandbox (an unknown id never builds a config: the controls refuse it).
        return config
            .runs
            .iter()
            .enumerate()
            .map(|(i, run)| {
                let n = run.regime.micro_batches;
                match i {
                    0 => Msg::new("run-full-batch"),
                    1 => Msg::new("run-accumulate-scaled").arg("n", n),
                    _ => Msg::new("run-accumulate-unscaled").arg("n", n),
                }
            })
            .collect();
    };
    // scaling_adam runs the same three regimes as scaling.
    let owner = match preset {
        ScenarioId::ScalingAdam => ScenarioId::Scaling,
        other => other,
    };
    (0..config.runs.len())
        .map(|i| match (owner, config.runs.get(i)) {
            // The planner picks this run's N from the learner's budget.
            (ScenarioId::Memory, Some(run)) if i == 3 => {
                Msg::new("run-memory-budget").arg("n", run.regime.micro_batches)
            }
            _ => Msg::new(format!("run-{owner}-{i}")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controls::LabControls;
    use gradlab_i18n::Localizer;
    use gradlab_sim::scenario::Scenario;

    #[test]
    fn every_experiment_has_its_texts_and_the_labels_match_the_configs() {
        let en = Localizer::english();
        for id in experiment_ids() {
            for msg in [title(id), explanation(id), what_to_notice(id, None)] {
                assert!(en.has(&msg.id), "missing {}", msg.id);
            }
        }
        for scenario in Scenario::all() {
            let labels: Vec<String> = run_labels(scenario.id.id(), &scenario.config)
                .iter()
                .map(|m| en.msg(m))
                .collect();
            let expected: Vec<String> = scenario.config.runs.iter().map(|r| r.label.clone()).collect();
            assert_eq!(labels, expected, "{}", scenario.id);
        }
        let sandbox = LabControls {
            scenario: SANDBOX.into(),
            micro_batches: 8,
            ..LabControls::default()
        };
        let config = sandbox.lab_config();
        let labels: Vec<String> = run_labels(SANDBOX, &config).iter().map(|m| en.msg(m)).collect();
        let expected: Vec<String> = config.runs.iter().map(|r| r.label.clone()).collect();
        assert_eq!(labels, expected);
    }

    /// The sandbox's claim about loss / N, checked against the engine for the settings shown:
    /// where it says the run must match, its gradient equals the full batch's to float
    /// rounding; where it says it misses, it really does.
    #[test]
    fn the_sandbox_notice_is_true_for_the_settings_shown() {
        use crate::session::F32_ROUNDING;
        use gradlab_sim::lab::CpuLab;
        let base = LabControls {
            scenario: SANDBOX.into(),
            batch_size: 48,
            micro_batches: 4,
            ..LabControls::default()
        };
        let cases = [
            ("scenario-sandbox-notice-matches", base.clone()),
            (
                "scenario-sandbox-notice-one",
                LabControls {
                    micro_batches: 1,
                    norm: crate::controls::NormChoice::BatchNorm,
                    ..base.clone()
                },
            ),
            (
                "scenario-sandbox-notice-batch-norm",
                LabControls {
                    norm: crate::controls::NormChoice::BatchNorm,
                    ..base.clone()
                },
            ),
            (
                "scenario-sandbox-notice-variable-items",
                LabControls {
                    dataset: DatasetKind::VariableLengthSequences,
                    ..base.clone()
                },
            ),
        ];
        for (expected, controls) in cases {
            assert!(controls.validate().is_empty(), "{expected}: valid settings");
            let config = controls.lab_config();
            let notice = what_to_notice(SANDBOX, Some(&config));
            assert_eq!(notice.id, expected);
            let mut lab = CpuLab::<f32>::cpu(config).expect("valid");
            lab.run(2, |_| {}).expect("trains");
            let error = lab.runs()[1]
                .history
                .iter()
                .map(|r| r.grad_relative_error.expect("measured"))
                .fold(0.0, f64::max);
            if ["scenario-sandbox-notice-matches", "scenario-sandbox-notice-one"].contains(&expected) {
                assert!(error <= F32_ROUNDING, "{expected}: error {error}");
            } else {
                assert!(error > 100.0 * F32_ROUNDING, "{expected}: error {error} is a real miss");
            }
        }
    }
}
