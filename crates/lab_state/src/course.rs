//! The presets as a course, as plain state: one prediction to make before each experiment
//! (revealed with the number measured in the learner's own run), the order of the experiments
//! with "next experiment" once the notice has been observed, and what the learner has done,
//! kept in the browser apart from the URL like the quiz's progress.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::numbers::readable;
use super::session::{LabView, RunView};
use gradlab_i18n::Msg;
use gradlab_sim::regime::{LossNormalization, ZeroGradPlacement};
use gradlab_sim::scenario::{ScenarioId, SCENARIO_IDS};

/// The key the course progress is saved under in the browser.
pub const STORAGE_KEY: &str = "gradlab.course";
/// An experiment counts as observed (its prediction revealed, the next one offered) after this
/// many optimizer steps: enough for every preset's notice to show.
pub const OBSERVED_STEPS: u64 = 30;

/// The question asked before an experiment runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prediction {
    pub experiment: ScenarioId,
    pub choices: usize,
    pub correct: usize,
    /// The quiz question on the same topic (an id of the quiz bank).
    pub quiz_question: &'static str,
}

const PREDICTIONS: [Prediction; 6] = [
    Prediction {
        experiment: ScenarioId::Scaling,
        choices: 4,
        correct: 1,
        quiz_question: "unscaled-sgd",
    },
    Prediction {
        experiment: ScenarioId::ScalingAdam,
        choices: 3,
        correct: 0,
        quiz_question: "unscaled-adam",
    },
    Prediction {
        experiment: ScenarioId::Norms,
        choices: 3,
        correct: 0,
        quiz_question: "batchnorm",
    },
    Prediction {
        experiment: ScenarioId::VariableLength,
        choices: 3,
        correct: 1,
        quiz_question: "variable-length",
    },
    Prediction {
        experiment: ScenarioId::Pitfalls,
        choices: 3,
        correct: 1,
        quiz_question: "zero-grad-placement",
    },
    Prediction {
        experiment: ScenarioId::Memory,
        choices: 3,
        correct: 1,
        quiz_question: "memory-ratio",
    },
];

impl Prediction {
    /// The prediction of a preset; none for the sandbox.
    pub fn of(experiment: &str) -> Option<Self> {
        let id = ScenarioId::from_id(experiment)?;
        PREDICTIONS.iter().find(|p| p.experiment == id).copied()
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
            ScenarioId::Scaling => {
                let unscaled = find(&|r| r.spec.regime.loss == LossNormalization::Unscaled)?;
                let record = latest(unscaled)?;
                let ratio = record.grad_norm / record.grad_reference_norm.filter(|&n| n > 0.0)?;
                Msg::new("predict-scaling-measured").arg("ratio", format!("{ratio:.2}"))
            }
            ScenarioId::ScalingAdam => {
                let full = latest(find(&|r| r.spec.regime.micro_batches == 1)?)?;
                let unscaled = latest(find(&|r| r.spec.regime.loss == LossNormalization::Unscaled)?)?;
                Msg::new("predict-scaling_adam-measured")
                    .arg("full", format!("{:.4}", full.train_loss))
                    .arg("unscaled", format!("{:.4}", unscaled.train_loss))
            }
            ScenarioId::Norms => {
                let accumulated = |name: &str| {
                    find(&|r| r.spec.regime.micro_batches > 1 && r.spec.model.norm.label() == name)
                        .and_then(latest)
                        .and_then(|r| r.grad_relative_error)
                };
                Msg::new("predict-norms-measured")
                    .arg("batch", readable(accumulated("BatchNorm")?, 3))
                    .arg("layer", readable(accumulated("LayerNorm")?, 3))
            }
            ScenarioId::VariableLength => {
                let error = |loss: LossNormalization| {
                    find(&|r| r.spec.regime.micro_batches > 1 && r.spec.regime.loss == loss)
                        .and_then(latest)
                        .and_then(|r| r.grad_relative_error)
                };
                Msg::new("predict-variable_length-measured")
                    .arg("means", readable(error(LossNormalization::MeanOfMicroBatchMeans)?, 3))
                    .arg("total", readable(error(LossNormalization::TotalItemCount)?, 3))
            }
            ScenarioId::Pitfalls => {
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
            ScenarioId::Memory => {
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
///
/// Predict, then observe: an experiment's answer (its explanation, what to notice, and Play)
/// opens once its prediction is locked or skipped ("Just show me"); a prediction locked after
/// the experiment had begun training is kept but does not count as predicted; an experiment
/// gets its ✓ (observed) only after a prediction or a skip.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CourseProgress {
    /// The choice made for each experiment's prediction.
    pub predictions: BTreeMap<String, usize>,
    /// Experiments whose prediction was locked after training had begun ("after watching").
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub after_watching: BTreeSet<String>,
    /// Experiments whose prediction the learner skipped ("Just show me").
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub skipped: BTreeSet<String>,
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
        if let Some(unknown) = progress
            .observed
            .iter()
            .chain(&progress.skipped)
            .find(|e| place(e).is_none())
        {
            return Err(UnreadableProgress(format!("no experiment {unknown}")));
        }
        if let Some(unpredicted) = progress
            .after_watching
            .iter()
            .find(|e| !progress.predictions.contains_key(*e))
        {
            return Err(UnreadableProgress(format!("no prediction for {unpredicted}")));
        }
        Ok(progress)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Records a prediction made when the experiment had trained `steps_trained` steps: made
    /// after training began, it is kept as "after watching". A second prediction, a choice out
    /// of range or one for an experiment without a prediction is ignored.
    pub fn predict(&mut self, experiment: &str, choice: usize, steps_trained: u64) {
        if self.predictions.contains_key(experiment) {
            return;
        }
        if Prediction::of(experiment).is_some_and(|p| choice < p.choices) {
            self.predictions.insert(experiment.to_string(), choice);
            if steps_trained > 0 {
                self.after_watching.insert(experiment.to_string());
            }
        }
    }

    /// The learner chose to watch without predicting ("Just show me").
    pub fn skip(&mut self, experiment: &str) {
        if Prediction::of(experiment).is_some() {
            self.skipped.insert(experiment.to_string());
        }
    }

    pub fn prediction(&self, experiment: &str) -> Option<usize> {
        self.predictions.get(experiment).copied()
    }

    /// Whether the prediction was locked before the experiment trained: only such a prediction
    /// counts as predicted.
    pub fn predicted_first(&self, experiment: &str) -> bool {
        self.predictions.contains_key(experiment) && !self.after_watching.contains(experiment)
    }

    pub fn is_skipped(&self, experiment: &str) -> bool {
        self.skipped.contains(experiment)
    }

    /// Whether the experiment's answer may show (its explanation, what to notice) and Play is
    /// offered: after a prediction or a skip, or once it was observed (progress saved before
    /// predictions came first).
    pub fn answer_open(&self, experiment: &str) -> bool {
        Prediction::of(experiment).is_none()
            || self.predictions.contains_key(experiment)
            || self.skipped.contains(experiment)
            || self.observed.contains(experiment)
    }

    /// Marks the experiment observed once `steps` reach [`OBSERVED_STEPS`], after a prediction
    /// or a skip; returns whether that changed anything (then it is saved).
    pub fn observe(&mut self, experiment: &str, steps: u64) -> bool {
        let chosen = self.predictions.contains_key(experiment) || self.skipped.contains(experiment);
        steps >= OBSERVED_STEPS && chosen && place(experiment).is_some() && self.observed.insert(experiment.to_string())
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
    use gradlab_i18n::{Language, Localizer};
    use gradlab_sim::lab::CpuLab;
    use gradlab_sim::scenario::Scenario;

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
            include_str!("../../../assets/quiz/bank.json"),
            include_str!("../../../assets/quiz/bank.es.json"),
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
        for id in ScenarioId::ALL {
            let mut lab = CpuLab::<f32>::cpu(Scenario::of(id).config).expect("valid");
            let labels = lab.runs().iter().map(|r| r.spec.label.clone()).collect();
            let before = LabView::new(&lab, labels, vec![], false);
            let p = Prediction::of(id.id()).expect("prediction");
            if id != ScenarioId::Memory {
                assert!(p.measured(&before).is_none(), "{id}: nothing measured before training");
            }
            lab.run(OBSERVED_STEPS, |_| {}).expect("train");
            let labels = lab.runs().iter().map(|r| r.spec.label.clone()).collect();
            let view = LabView::new(&lab, labels, vec![], false);
            let measured = p.measured(&view).unwrap_or_else(|| panic!("{id}: measured"));
            let number = |name: &str| -> f64 {
                let value = measured.args.iter().find(|(n, _)| *n == name).expect("arg").1.clone();
                crate::numbers::parse_readable(&value).expect("a number")
            };
            match id {
                ScenarioId::Scaling => assert!((number("ratio") - 4.0).abs() < 0.01, "{measured:?}"),
                ScenarioId::ScalingAdam => {
                    let (full, unscaled) = (number("full"), number("unscaled"));
                    assert!((unscaled - full).abs() < 0.1 * full, "{measured:?}");
                }
                ScenarioId::Norms => assert!(number("batch") > 1e-2 && number("layer") < 1e-5, "{measured:?}"),
                ScenarioId::VariableLength => assert!(number("means") > 1e-3 && number("total") < 1e-5, "{measured:?}"),
                ScenarioId::Pitfalls => assert!(number("last") > 2.0 * number("first"), "{measured:?}"),
                ScenarioId::Memory => assert!((number("ratio") - 0.25).abs() < 0.05, "{measured:?}"),
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
        progress.predict("scaling", 9, 0);
        progress.predict("scaling", 1, 0);
        progress.predict("scaling", 2, 0);
        progress.predict("sandbox", 0, 0);
        assert_eq!(progress.prediction("scaling"), Some(1), "the first prediction stands");
        assert_eq!(progress.predictions.len(), 1);
        assert!(progress.predicted_first("scaling"));
        assert!(!progress.observe("scaling", OBSERVED_STEPS - 1));
        assert!(progress.observe("scaling", OBSERVED_STEPS));
        assert!(!progress.observe("scaling", OBSERVED_STEPS + 5), "once");
        assert!(!progress.observe("sandbox", 100));
        assert!(!progress.complete());
        let back = CourseProgress::from_json(&progress.to_json()).expect("round trip");
        assert_eq!(back, progress);
        for id in SCENARIO_IDS {
            progress.skip(id);
            progress.observe(id, OBSERVED_STEPS);
        }
        assert!(progress.complete());
        let back = CourseProgress::from_json(&progress.to_json()).expect("round trip with skips");
        assert_eq!(back, progress);
        for bad in [
            "",
            "{",
            "7",
            r#"{"predictions":{"scaling":7}}"#,
            r#"{"predictions":{"nope":0}}"#,
            r#"{"observed":["sandbox"]}"#,
            r#"{"skipped":["sandbox"]}"#,
            r#"{"after_watching":["scaling"]}"#,
            r#"{"extra":1}"#,
        ] {
            assert!(CourseProgress::from_json(bad).is_err(), "{bad}");
        }
        assert_eq!(CourseProgress::from_json("{}"), Ok(CourseProgress::default()));
    }

    /// Predict, then observe: the answer opens with a prediction or a skip, the ✓ needs one of
    /// them, and a prediction made after training began does not count as predicted.
    #[test]
    fn the_answer_opens_after_a_prediction_or_a_skip_and_the_tick_needs_one() {
        let mut progress = CourseProgress::default();
        assert!(!progress.answer_open("scaling"));
        assert!(progress.answer_open("sandbox"), "the sandbox has no prediction");
        assert!(!progress.observe("scaling", 100), "no ✓ without a prediction or a skip");
        assert!(!progress.is_observed("scaling"));
        progress.predict("scaling", 1, 0);
        assert!(progress.answer_open("scaling") && progress.predicted_first("scaling"));
        assert!(progress.observe("scaling", OBSERVED_STEPS));

        progress.skip("norms");
        assert!(progress.answer_open("norms") && progress.is_skipped("norms"));
        assert!(!progress.predicted_first("norms"));
        assert!(progress.observe("norms", OBSERVED_STEPS), "a skip earns the ✓ too");

        progress.skip("memory");
        progress.predict("memory", 1, 12);
        assert_eq!(progress.prediction("memory"), Some(1), "recorded");
        assert!(
            !progress.predicted_first("memory"),
            "after watching: not counted as predicted"
        );
        let back = CourseProgress::from_json(&progress.to_json()).expect("round trip");
        assert_eq!(back, progress);
        assert!(!back.predicted_first("memory"));

        // Progress saved before predictions came first: an observed experiment stays open.
        let old = CourseProgress::from_json(r#"{"predictions":{},"observed":["pitfalls"]}"#).expect("old save");
        assert!(old.answer_open("pitfalls"));
        assert!(!old.answer_open("scaling"));
    }

    /// Before the prediction, the page shows each preset's set-up, never its explanation or
    /// what to notice, and the set-up holds none of the phrases that give the answer away.
    #[test]
    fn the_setup_shown_before_predicting_gives_no_answer_away() {
        // Phrases of each experiment's answer, in both languages.
        let giveaways: [(&str, &[&str]); 6] = [
            (
                "scaling",
                &[
                    "too large",
                    "4 times",
                    "4 veces",
                    "demasiado grande",
                    "oscill",
                    "oscila",
                ],
            ),
            ("scaling_adam", &["cancel", "stays close", "se cancelan", "cerca"]),
            (
                "norms",
                &[
                    "differ",
                    "difieren",
                    "gives the full-batch gradient",
                    "da el gradiente del lote completo",
                ],
            ),
            (
                "variable_length",
                &[
                    "weighs",
                    "pesa",
                    "every token the same weight",
                    "mismo peso",
                    "matches",
                    "coincide",
                ],
            ),
            ("pitfalls", &["pile up", "grow", "se acumulan", "crece"]),
            (
                "memory",
                &[
                    "a quarter",
                    "un cuarto",
                    "falls with",
                    "cae con",
                    "one micro-batch",
                    "un microlote",
                ],
            ),
        ];
        for language in Language::ALL {
            let localizer = Localizer::new(language).expect("bundle");
            for (id, phrases) in giveaways {
                let setup = localizer.msg(&crate::texts::setup(id));
                let before = localizer.msg(&Msg::new("course-predict-first"));
                for phrase in phrases {
                    for text in [&setup, &before] {
                        assert!(
                            !text.to_lowercase().contains(phrase),
                            "{} {id}: \"{phrase}\" gives the answer away in: {text}",
                            language.tag()
                        );
                    }
                }
                // The full explanation and the notice do state the answer: they wait.
                let explanation = localizer.msg(&crate::texts::explanation(id));
                let notice = localizer.msg(&crate::texts::what_to_notice(id, None));
                let stated = phrases
                    .iter()
                    .any(|p| explanation.to_lowercase().contains(p) || notice.to_lowercase().contains(p));
                assert!(stated, "{} {id}: the explanation states the answer", language.tag());
            }
        }
    }
}
