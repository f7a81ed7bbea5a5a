//! The presets as a course, as plain state: one prediction to make before each experiment
//! (revealed with the number measured in the learner's own run), the order of the experiments
//! with "next experiment" once the notice has been observed, and what the learner has done,
//! kept in the browser apart from the URL like the quiz's progress.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::session::{LabView, RunView};
use crate::i18n::Msg;
use crate::sim::regime::{LossNormalization, ZeroGradPlacement};
use crate::sim::scenario::SCENARIO_IDS;

/// The key the course progress is saved under in the browser.
pub const STORAGE_KEY: &str = "gradlab.course";
/// An experiment counts as observed (its prediction revealed, the next one offered) after this
/// many optimizer steps: enough for every preset's notice to show.
pub const OBSERVED_STEPS: u64 = 30;

/// The question asked before an experiment runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prediction {
    pub experiment: &'static str,
    pub choices: usize,
    pub correct: usize,
    /// The quiz question on the same topic (an id of the quiz bank).
    pub quiz_question: &'static str,
}

const PREDICTIONS: [Prediction; 6] = [
    Prediction {
        experiment: "scaling",
        choices: 4,
        correct: 1,
        quiz_question: "unscaled-sgd",
    },
    Prediction {
        experiment: "scaling_adam",
        choices: 3,
        correct: 0,
        quiz_question: "unscaled-adam",
    },
    Prediction {
        experiment: "norms",
        choices: 3,
        correct: 0,
        quiz_question: "batchnorm",
    },
    Prediction {
        experiment: "variable_length",
        choices: 3,
        correct: 1,
        quiz_question: "variable-length",
    },
    Prediction {
        experiment: "pitfalls",
        choices: 3,
        correct: 1,
        quiz_question: "zero-grad-placement",
    },
    Prediction {
        experiment: "memory",
        choices: 3,
        correct: 1,
        quiz_question: "memory-ratio",
    },
];

impl Prediction {
    /// The prediction of a preset; none for the sandbox.
    pub fn of(experiment: &str) -> Option<Self> {
        PREDICTIONS.iter().find(|p| p.experiment == experiment).copied()
    }

    pub fn question(&self) -> Msg {
        Msg::new(format!("predict-{}-question", self.experiment))
    }

    pub fn choice(&self, index: usize) -> Msg {
        Msg::new(format!("predict-{}-choice-{index}", self.experiment))
    }

    /// Why the right answer is right.
    pub fn explanation(&self) -> Msg {
        Msg::new(format!("predict-{}-why", self.experiment))
    }

    /// What the learner's own run measured, once it has trained: the number the question is
    /// about, from the histories on the page.
    pub fn measured(&self, view: &LabView) -> Option<Msg> {
        let latest = |run: &RunView| run.history.last().copied();
        let find = |wanted: &dyn Fn(&RunView) -> bool| view.runs.iter().find(|r| wanted(r));
        let msg = match self.experiment {
            "scaling" => {
                let unscaled = find(&|r| r.spec.regime.loss == LossNormalization::Unscaled)?;
                let record = latest(unscaled)?;
                let ratio = record.grad_norm / record.grad_reference_norm.filter(|&n| n > 0.0)?;
                Msg::new("predict-scaling-measured").arg("ratio", format!("{ratio:.2}"))
            }
            "scaling_adam" => {
                let full = latest(find(&|r| r.spec.regime.micro_batches == 1)?)?;
                let unscaled = latest(find(&|r| r.spec.regime.loss == LossNormalization::Unscaled)?)?;
                Msg::new("predict-scaling_adam-measured")
                    .arg("full", format!("{:.4}", full.train_loss))
                    .arg("unscaled", format!("{:.4}", unscaled.train_loss))
            }
            "norms" => {
                let accumulated = |name: &str| {
                    find(&|r| r.spec.regime.micro_batches > 1 && r.spec.model.norm.label() == name)
                        .and_then(latest)
                        .and_then(|r| r.grad_relative_error)
                };
                Msg::new("predict-norms-measured")
                    .arg("batch", format!("{:.2e}", accumulated("BatchNorm")?))
                    .arg("layer", format!("{:.2e}", accumulated("LayerNorm")?))
            }
            "variable_length" => {
                let error = |loss: LossNormalization| {
                    find(&|r| r.spec.regime.micro_batches > 1 && r.spec.regime.loss == loss)
                        .and_then(latest)
                        .and_then(|r| r.grad_relative_error)
                };
                Msg::new("predict-variable_length-measured")
                    .arg(
                        "means",
                        format!("{:.2e}", error(LossNormalization::MeanOfMicroBatchMeans)?),
                    )
                    .arg("total", format!("{:.2e}", error(LossNormalization::TotalItemCount)?))
            }
            "pitfalls" => {
                let forgotten = find(&|r| {
                    r.spec.regime.zero_grad == ZeroGradPlacement::Forgotten && r.spec.clip_max_norm.is_none()
                })?;
                let first = forgotten.history.first()?.grad_norm;
                let last = latest(forgotten)?.grad_norm;
                Msg::new("predict-pitfalls-measured")
                    .arg("first", format!("{first:.3}"))
                    .arg("last", format!("{last:.3}"))
                    .arg("steps", forgotten.history.len())
            }
            "memory" => {
                let bytes = |n: usize| {
                    view.runs
                        .iter()
                        .find(|r| r.spec.regime.micro_batches == n)
                        .map(|r| r.activation_bytes)
                };
                let (full, four) = (bytes(1)?, bytes(4)?);
                Msg::new("predict-memory-measured")
                    .arg("full", super::session::format_bytes(full))
                    .arg("four", super::session::format_bytes(four))
                    .arg("ratio", format!("{:.2}", four as f64 / full.max(1) as f64))
            }
            _ => return None,
        };
        Some(msg)
    }
}

/// Where an experiment stands in the course: its place and the next experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoursePlace {
    /// 1-based.
    pub position: usize,
    pub total: usize,
    pub next: Option<&'static str>,
}

/// The presets in course order; the sandbox is not part of it.
pub fn place(experiment: &str) -> Option<CoursePlace> {
    let index = SCENARIO_IDS.iter().position(|&id| id == experiment)?;
    Some(CoursePlace {
        position: index + 1,
        total: SCENARIO_IDS.len(),
        next: SCENARIO_IDS.get(index + 1).copied(),
    })
}

/// What the learner has done in the course, saved in the browser.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CourseProgress {
    /// The choice made for each experiment's prediction.
    pub predictions: BTreeMap<String, usize>,
    /// Experiments trained for at least [`OBSERVED_STEPS`] steps.
    pub observed: BTreeSet<String>,
}

/// Saved progress that cannot be used; the page keeps the text aside and starts afresh.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable course progress: {0}")]
pub struct UnreadableProgress(String);

impl CourseProgress {
    /// Reads saved progress, refusing what this version would not have written (unknown
    /// experiments, a choice out of range).
    pub fn from_json(text: &str) -> Result<Self, UnreadableProgress> {
        let progress: Self = serde_json::from_str(text).map_err(|e| UnreadableProgress(e.to_string()))?;
        for (experiment, &choice) in &progress.predictions {
            let prediction =
                Prediction::of(experiment).ok_or_else(|| UnreadableProgress(format!("no experiment {experiment}")))?;
            if choice >= prediction.choices {
                return Err(UnreadableProgress(format!("choice {choice} for {experiment}")));
            }
        }
        if let Some(unknown) = progress.observed.iter().find(|e| place(e).is_none()) {
            return Err(UnreadableProgress(format!("no experiment {unknown}")));
        }
        Ok(progress)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Records a prediction; a choice out of range or for an experiment without one is ignored.
    pub fn predict(&mut self, experiment: &str, choice: usize) {
        if Prediction::of(experiment).is_some_and(|p| choice < p.choices) {
            self.predictions.insert(experiment.to_string(), choice);
        }
    }

    pub fn prediction(&self, experiment: &str) -> Option<usize> {
        self.predictions.get(experiment).copied()
    }

    /// Marks the experiment observed once `steps` reach [`OBSERVED_STEPS`]; returns whether
    /// that changed anything (then it is saved).
    pub fn observe(&mut self, experiment: &str, steps: u64) -> bool {
        steps >= OBSERVED_STEPS && place(experiment).is_some() && self.observed.insert(experiment.to_string())
    }

    pub fn is_observed(&self, experiment: &str) -> bool {
        self.observed.contains(experiment)
    }

    /// Whether every experiment of the course has been observed.
    pub fn complete(&self) -> bool {
        SCENARIO_IDS.iter().all(|id| self.observed.contains(*id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{Language, Localizer};
    use crate::sim::lab::CpuLab;
    use crate::sim::scenario::Scenario;

    #[test]
    fn every_preset_has_a_prediction_in_every_language() {
        for language in Language::ALL {
            let localizer = Localizer::new(language).expect("bundle");
            for id in SCENARIO_IDS {
                let p = Prediction::of(id).expect("a prediction");
                assert!(p.correct < p.choices);
                let mut ids = vec![
                    p.question().id,
                    p.explanation().id,
                    format!("predict-{id}-measured").into(),
                ];
                ids.extend((0..p.choices).map(|i| p.choice(i).id));
                for message in ids {
                    assert!(localizer.has(&message), "{}: {message}", language.tag());
                }
            }
        }
        assert!(Prediction::of("sandbox").is_none());
        // Each links to a question the quiz asks, in both banks.
        for bank in [
            include_str!("../../assets/quiz/bank.json"),
            include_str!("../../assets/quiz/bank.es.json"),
        ] {
            let bank: serde_json::Value = serde_json::from_str(bank).expect("bank");
            let ids: Vec<&str> = bank["questions"]
                .as_array()
                .expect("questions")
                .iter()
                .filter_map(|q| q["id"].as_str())
                .collect();
            for p in PREDICTIONS {
                assert!(ids.contains(&p.quiz_question), "{}", p.quiz_question);
            }
        }
    }

    /// The number revealed is measured in the run, and it says what the right answer says.
    #[test]
    fn each_reveal_is_measured_in_the_learners_run() {
        for id in SCENARIO_IDS {
            let mut lab = CpuLab::<f32>::cpu(Scenario::by_id(id).expect("scenario").config).expect("valid");
            let labels = lab.runs().iter().map(|r| r.spec.label.clone()).collect();
            let before = LabView::new(&lab, labels, vec![], false);
            let p = Prediction::of(id).expect("prediction");
            if id != "memory" {
                assert!(p.measured(&before).is_none(), "{id}: nothing measured before training");
            }
            lab.run(OBSERVED_STEPS, |_| {}).expect("train");
            let labels = lab.runs().iter().map(|r| r.spec.label.clone()).collect();
            let view = LabView::new(&lab, labels, vec![], false);
            let measured = p.measured(&view).unwrap_or_else(|| panic!("{id}: measured"));
            let number = |name: &str| -> f64 {
                let value = measured.args.iter().find(|(n, _)| *n == name).expect("arg").1.clone();
                value
                    .split_whitespace()
                    .next()
                    .expect("number")
                    .parse()
                    .expect("a number")
            };
            match id {
                "scaling" => assert!((number("ratio") - 4.0).abs() < 0.01, "{measured:?}"),
                "scaling_adam" => {
                    let (full, unscaled) = (number("full"), number("unscaled"));
                    assert!((unscaled - full).abs() < 0.1 * full, "{measured:?}");
                }
                "norms" => assert!(number("batch") > 1e-2 && number("layer") < 1e-5, "{measured:?}"),
                "variable_length" => assert!(number("means") > 1e-3 && number("total") < 1e-5, "{measured:?}"),
                "pitfalls" => assert!(number("last") > 2.0 * number("first"), "{measured:?}"),
                "memory" => assert!((number("ratio") - 0.25).abs() < 0.05, "{measured:?}"),
                _ => {}
            }
        }
    }

    #[test]
    fn the_course_runs_through_the_presets_and_its_progress_round_trips() {
        assert_eq!(
            place("scaling"),
            Some(CoursePlace {
                position: 1,
                total: 6,
                next: Some("scaling_adam")
            })
        );
        assert_eq!(place("memory").map(|p| p.next), Some(None));
        assert!(place("sandbox").is_none());
        let mut progress = CourseProgress::default();
        progress.predict("scaling", 1);
        progress.predict("scaling", 9);
        progress.predict("sandbox", 0);
        assert_eq!(progress.prediction("scaling"), Some(1));
        assert_eq!(progress.predictions.len(), 1);
        assert!(!progress.observe("scaling", OBSERVED_STEPS - 1));
        assert!(progress.observe("scaling", OBSERVED_STEPS));
        assert!(!progress.observe("scaling", OBSERVED_STEPS + 5), "once");
        assert!(!progress.observe("sandbox", 100));
        assert!(!progress.complete());
        let back = CourseProgress::from_json(&progress.to_json()).expect("round trip");
        assert_eq!(back, progress);
        for id in SCENARIO_IDS {
            progress.observe(id, OBSERVED_STEPS);
        }
        assert!(progress.complete());
        for bad in [
            "",
            "{",
            "7",
            r#"{"predictions":{"scaling":7}}"#,
            r#"{"predictions":{"nope":0}}"#,
            r#"{"observed":["sandbox"]}"#,
            r#"{"extra":1}"#,
        ] {
            assert!(CourseProgress::from_json(bad).is_err(), "{bad}");
        }
        assert_eq!(CourseProgress::from_json("{}"), Ok(CourseProgress::default()));
    }
}
