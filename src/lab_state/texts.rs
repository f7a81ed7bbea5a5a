//! The message ids of each experiment's texts: title, explanation, "what to notice" and run
//! labels. Presets' run labels are messages too; a test keeps their English equal to the labels
//! in the preset configs, which the CLI prints.

use crate::i18n::Msg;
use crate::route::SANDBOX;
use crate::sim::lab::LabConfig;

/// The experiments the Lab offers, in menu order: the presets, then the sandbox.
pub fn experiment_ids() -> Vec<&'static str> {
    let mut ids = crate::sim::scenario::SCENARIO_IDS.to_vec();
    ids.push(SANDBOX);
    ids
}

pub fn title(experiment: &str) -> Msg {
    Msg::new(format!("scenario-{experiment}-title"))
}

pub fn explanation(experiment: &str) -> Msg {
    Msg::new(format!("scenario-{experiment}-explanation"))
}

pub fn what_to_notice(experiment: &str) -> Msg {
    Msg::new(format!("scenario-{experiment}-notice"))
}

/// The label of each run of `config`, the experiment `experiment` built.
pub fn run_labels(experiment: &str, config: &LabConfig) -> Vec<Msg> {
    if experiment == SANDBOX {
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
    }
    // scaling_adam runs the same three regimes as scaling.
    let owner = if experiment == "scaling_adam" {
        "scaling"
    } else {
        experiment
    };
    (0..config.runs.len())
        .map(|i| Msg::new(format!("run-{owner}-{i}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Localizer;
    use crate::lab_state::controls::LabControls;
    use crate::sim::scenario::Scenario;

    #[test]
    fn every_experiment_has_its_texts_and_the_labels_match_the_configs() {
        let en = Localizer::english();
        for id in experiment_ids() {
            for msg in [title(id), explanation(id), what_to_notice(id)] {
                assert!(en.has(&msg.id), "missing {}", msg.id);
            }
        }
        for scenario in Scenario::all() {
            let labels: Vec<String> = run_labels(scenario.id, &scenario.config)
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
}
