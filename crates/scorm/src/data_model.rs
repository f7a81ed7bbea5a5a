//! What the app writes into an LMS's SCORM data model, as `(element, value)` pairs: a pure
//! function of the quiz attempt (or of whether a Lab experiment was experienced), so writing
//! everything again after a failed call loses nothing and changes nothing.
//!
//! Score: `raw` is the whole first-try percent the certificate shows (rounded down, never
//! overstated), `min` 0, `max` 100, and in SCORM 2004 `scaled` = raw / 100, so every LMS's
//! gradebook shows the same number whichever field it reads.
//!
//! Interactions: interaction `n` is always question `n + 1` of the bank, written once the
//! questions before it are answered too (SCORM 2004 forbids gaps). The learner response and
//! result are those of the *first* answer, the one that counts. Option identifiers are letters
//! in the bank's order (`a` is the bank's first option, whatever order the learner saw).

use super::ScormVersion;
use gradlab_quiz::attempt::{Answer, Attempt};
use gradlab_quiz::bank::{QuestionBank, QuestionKind};

/// One `SetValue` call.
pub type Element = (String, String);

fn element(name: impl Into<String>, value: impl Into<String>) -> Element {
    (name.into(), value.into())
}

/// Option identifiers: SCORM 1.2 allows one character from `0-9a-z` per option.
const OPTION_IDS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

fn option_id(index: usize) -> Option<char> {
    OPTION_IDS.get(index).map(|&b| char::from(b))
}

/// A number as SCORM's decimal types take it (no exponent, at most 7 decimals), or `None`
/// when it has no such form.
fn decimal(x: f64) -> Option<String> {
    if !x.is_finite() || x.abs() >= 1e10 {
        return None;
    }
    let text = format!("{x:.7}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    Some(if text == "-0" { "0".into() } else { text.into() })
}

/// The pass mark in effect: the LMS's, when it passes one on from the package's manifest
/// (`cmi.student_data.mastery_score` 0 to 100, `cmi.scaled_passing_score` 0 to 1), else the
/// bank's own.
pub fn pass_mark(version: ScormVersion, lms_value: &str, bank: &QuestionBank) -> f64 {
    let parsed = lms_value.trim().parse::<f64>().ok().filter(|x| x.is_finite());
    let fraction = match version {
        ScormVersion::Scorm12 => parsed.map(|x| x / 100.0),
        ScormVersion::Scorm2004 => parsed,
    };
    fraction
        .filter(|f| (0.0..=1.0).contains(f))
        .unwrap_or(bank.pass_threshold)
}

/// Whether the quiz attempt is complete and passes `pass_mark` (a fraction).
pub fn passes(bank: &QuestionBank, attempt: &Attempt, pass_mark: f64) -> bool {
    let score = attempt.score(bank);
    score.answered == score.total && score.first_try_correct as f64 >= pass_mark * score.total as f64 - 1e-9
}

/// Status, score and interactions of the quiz SCO for `attempt` (without `suspend_data`).
pub fn quiz_elements(version: ScormVersion, bank: &QuestionBank, attempt: &Attempt, pass_mark: f64) -> Vec<Element> {
    let score = attempt.score(bank);
    let complete = score.answered == score.total;
    let passed = passes(bank, attempt, pass_mark);
    let raw = score.percent.to_string();
    let mut out = Vec::new();
    match version {
        ScormVersion::Scorm12 => {
            let status = match (complete, passed) {
                (false, _) => "incomplete",
                (true, true) => "passed",
                (true, false) => "failed",
            };
            out.push(element("cmi.core.lesson_status", status));
            if complete {
                out.push(element("cmi.core.score.raw", raw));
                out.push(element("cmi.core.score.min", "0"));
                out.push(element("cmi.core.score.max", "100"));
            }
        }
        ScormVersion::Scorm2004 => {
            out.push(element(
                "cmi.completion_status",
                if complete { "completed" } else { "incomplete" },
            ));
            let success = match (complete, passed) {
                (false, _) => "unknown",
                (true, true) => "passed",
                (true, false) => "failed",
            };
            out.push(element("cmi.success_status", success));
            let progress = score.answered as f64 / score.total.max(1) as f64;
            out.push(element(
                "cmi.progress_measure",
                decimal(progress).unwrap_or_else(|| "0".into()),
            ));
            if complete {
                out.push(element(
                    "cmi.score.scaled",
                    decimal(f64::from(score.percent) / 100.0).unwrap_or_else(|| "0".into()),
                ));
                out.push(element("cmi.score.raw", raw));
                out.push(element("cmi.score.min", "0"));
                out.push(element("cmi.score.max", "100"));
            }
        }
    }
    for (n, question) in bank.questions.iter().enumerate() {
        let Some(progress) = attempt.progress_of(question) else {
            break;
        };
        let Some(first) = &progress.first_answer else { break };
        out.extend(interaction(version, n, question, first, progress.first_try_correct));
    }
    out
}

/// The elements of one interaction, in the order SCORM 2004 requires (id, then type, then the
/// rest).
fn interaction(
    version: ScormVersion,
    n: usize,
    question: &gradlab_quiz::bank::Question,
    first: &Answer,
    correct: bool,
) -> Vec<Element> {
    let prefix = format!("cmi.interactions.{n}");
    let separator = match version {
        ScormVersion::Scorm12 => ",",
        ScormVersion::Scorm2004 => "[,]",
    };
    let choices = |indices: &mut dyn Iterator<Item = usize>| -> Option<String> {
        let ids: Option<Vec<String>> = indices.map(|i| option_id(i).map(String::from)).collect();
        ids.map(|ids| ids.join(separator))
    };
    let (kind, pattern) = match &question.kind {
        QuestionKind::Single { options } | QuestionKind::Multiple { options } => (
            "choice",
            choices(&mut options.iter().enumerate().filter(|(_, o)| o.correct).map(|(i, _)| i)),
        ),
        QuestionKind::Numeric { answer, tolerance, .. } => (
            "numeric",
            match version {
                ScormVersion::Scorm12 => decimal(*answer),
                ScormVersion::Scorm2004 => decimal(answer - tolerance)
                    .zip(decimal(answer + tolerance))
                    .map(|(low, high)| format!("{low}[:]{high}")),
            },
        ),
    };
    let response = match first {
        Answer::Single(i) => choices(&mut std::iter::once(*i)),
        Answer::Multiple(list) => {
            let mut sorted = list.clone();
            sorted.sort_unstable();
            sorted.dedup();
            choices(&mut sorted.into_iter())
        }
        Answer::Numeric(x) => decimal(*x),
    };
    let mut out = vec![
        element(format!("{prefix}.id"), question.id.clone()),
        element(format!("{prefix}.type"), kind),
    ];
    if version == ScormVersion::Scorm2004 {
        // localized_string_type(250); a brace would start a language tag.
        let description: String = question.prompt.replace(['{', '}'], "").chars().take(250).collect();
        out.push(element(format!("{prefix}.description"), description));
    }
    if let Some(pattern) = pattern {
        out.push(element(format!("{prefix}.correct_responses.0.pattern"), pattern));
    }
    if let Some(response) = response {
        let field = match version {
            ScormVersion::Scorm12 => "student_response",
            ScormVersion::Scorm2004 => "learner_response",
        };
        out.push(element(format!("{prefix}.{field}"), response));
    }
    let result = match (version, correct) {
        (_, true) => "correct",
        (ScormVersion::Scorm12, false) => "wrong",
        (ScormVersion::Scorm2004, false) => "incorrect",
    };
    out.push(element(format!("{prefix}.result"), result));
    out
}

/// Whether the LMS already records the SCO as done (read at launch, so it is never set back).
pub fn already_completed(version: ScormVersion, status: &str) -> bool {
    match version {
        ScormVersion::Scorm12 => matches!(status, "completed" | "passed" | "failed"),
        ScormVersion::Scorm2004 => status == "completed",
    }
}

/// A Lab SCO: incomplete at launch, completed once its experiment has been experienced.
pub fn lab_elements(version: ScormVersion, experienced: bool) -> Vec<Element> {
    let status = if experienced { "completed" } else { "incomplete" };
    vec![element(version.completion_element(), status)]
}

/// What the Lab writes when it launches as a SCO, given the completion status the LMS holds:
/// incomplete (saved, not yet finished), unless an earlier launch completed it, which is never
/// undone (nothing written; the session is closed as finished).
pub fn lab_launch(version: ScormVersion, status: &str) -> (Vec<Element>, bool) {
    if already_completed(version, status) {
        (Vec::new(), true)
    } else {
        (lab_elements(version, false), false)
    }
}

/// What is written when the learner leaves: the session's time and whether the LMS should keep
/// the data for a later launch (`suspend`) or consider the attempt over.
pub fn exit_elements(version: ScormVersion, session_seconds: f64, finished: bool) -> Vec<Element> {
    match version {
        ScormVersion::Scorm12 => vec![
            element("cmi.core.session_time", timespan_12(session_seconds)),
            element("cmi.core.exit", if finished { "" } else { "suspend" }),
        ],
        ScormVersion::Scorm2004 => vec![
            element("cmi.session_time", gradlab_embed::iso_duration(session_seconds)),
            element("cmi.exit", if finished { "normal" } else { "suspend" }),
        ],
    }
}

/// The value of each element as the LMS last committed it, so that a save sends only what
/// changed (a quiz answer is a handful of `SetValue` calls, not every interaction again).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommittedValues(std::collections::HashMap<String, String>);

impl CommittedValues {
    /// The elements whose value the LMS has not committed, in the order given (SCORM 2004
    /// wants an interaction's id before its other elements).
    pub fn uncommitted<'a>(&self, elements: &'a [Element]) -> Vec<&'a Element> {
        elements
            .iter()
            .filter(|(name, value)| self.0.get(name) != Some(value))
            .collect()
    }

    /// Records elements that the LMS has committed.
    pub fn record<'a>(&mut self, committed: impl IntoIterator<Item = &'a Element>) {
        self.0
            .extend(committed.into_iter().map(|(name, value)| (name.clone(), value.clone())));
    }
}

/// SCORM 1.2's CMITimespan, `HHHH:MM:SS.SS` (hours 2 to 4 digits).
pub fn timespan_12(seconds: f64) -> String {
    let hundredths = (seconds.max(0.0) * 100.0)
        .round()
        .min(9999.0 * 3600.0 * 100.0 + 359_999.0) as u64;
    let (seconds, hundredths) = (hundredths / 100, hundredths % 100);
    let (minutes, seconds) = (seconds / 60, seconds % 60);
    let (hours, minutes) = (minutes / 60, minutes % 60);
    format!("{hours:02}:{minutes:02}:{seconds:02}.{hundredths:02}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn bank() -> QuestionBank {
        QuestionBank::bundled().unwrap()
    }

    /// The right answer to a question of kind `kind` (the other modules' tests use it too).
    pub(crate) fn right(kind: &QuestionKind) -> Answer {
        match kind {
            QuestionKind::Single { options } => Answer::Single(options.iter().position(|o| o.correct).unwrap()),
            QuestionKind::Multiple { options } => Answer::Multiple(
                options
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| o.correct)
                    .map(|(i, _)| i)
                    .collect(),
            ),
            QuestionKind::Numeric { answer, .. } => Answer::Numeric(*answer),
        }
    }

    fn wrong(kind: &QuestionKind) -> Answer {
        match kind {
            QuestionKind::Single { options } => Answer::Single(options.iter().position(|o| !o.correct).unwrap()),
            QuestionKind::Multiple { options } => Answer::Multiple((0..options.len()).collect()),
            QuestionKind::Numeric { answer, .. } => Answer::Numeric(answer + 1000.0),
        }
    }

    /// Answers every question, the first `wrong_first` of them wrongly at the first try.
    fn finished(bank: &QuestionBank, wrong_first: usize) -> Attempt {
        let mut attempt = Attempt::new(bank, 3);
        for (i, q) in bank.questions.iter().enumerate() {
            if i < wrong_first {
                attempt.answer(bank, i, wrong(&q.kind)).unwrap();
            }
            attempt.answer(bank, i, right(&q.kind)).unwrap();
        }
        attempt
    }

    fn get<'a>(elements: &'a [Element], name: &str) -> Option<&'a str> {
        elements.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_passed_quiz_in_scorm_12() {
        let bank = bank();
        let attempt = finished(&bank, 2);
        let elements = quiz_elements(ScormVersion::Scorm12, &bank, &attempt, bank.pass_threshold);
        let total = bank.questions.len();
        let percent = (100 * (total - 2) / total).to_string();
        assert_eq!(get(&elements, "cmi.core.lesson_status"), Some("passed"));
        assert_eq!(get(&elements, "cmi.core.score.raw"), Some(percent.as_str()));
        assert_eq!(get(&elements, "cmi.core.score.min"), Some("0"));
        assert_eq!(get(&elements, "cmi.core.score.max"), Some("100"));
        assert_eq!(
            get(&elements, "cmi.interactions.0.id"),
            Some(bank.questions[0].id.as_str())
        );
        assert_eq!(get(&elements, "cmi.interactions.0.result"), Some("wrong"));
        assert_eq!(get(&elements, "cmi.interactions.2.result"), Some("correct"));
        let last = total - 1;
        assert!(get(&elements, &format!("cmi.interactions.{last}.result")).is_some());
        assert!(get(&elements, &format!("cmi.interactions.{total}.id")).is_none());
        assert!(elements
            .iter()
            .all(|(n, _)| !n.contains("learner_response") && !n.contains("scaled")));
    }

    #[test]
    fn a_failed_quiz_in_scorm_2004() {
        let bank = bank();
        let attempt = finished(&bank, 10);
        let elements = quiz_elements(ScormVersion::Scorm2004, &bank, &attempt, bank.pass_threshold);
        let total = bank.questions.len();
        let percent = 100 * (total - 10) / total;
        assert_eq!(get(&elements, "cmi.completion_status"), Some("completed"));
        assert_eq!(get(&elements, "cmi.success_status"), Some("failed"));
        assert_eq!(get(&elements, "cmi.progress_measure"), Some("1"));
        assert_eq!(get(&elements, "cmi.score.raw"), Some(percent.to_string().as_str()));
        assert_eq!(
            get(&elements, "cmi.score.scaled").map(|s| s.parse::<f64>().unwrap()),
            Some(percent as f64 / 100.0)
        );
        assert_eq!(get(&elements, "cmi.interactions.0.result"), Some("incorrect"));
        assert_eq!(
            get(&elements, "cmi.interactions.0.description"),
            Some(bank.questions[0].prompt.chars().take(250).collect::<String>().as_str())
        );
        assert!(elements.iter().all(|(n, _)| !n.contains("student_response")));
    }

    #[test]
    fn responses_and_patterns_use_each_versions_format() {
        let bank = bank();
        let attempt = finished(&bank, bank.questions.len());
        for version in ScormVersion::ALL {
            let elements = quiz_elements(version, &bank, &attempt, bank.pass_threshold);
            let (separator, response_field) = match version {
                ScormVersion::Scorm12 => (",", "student_response"),
                ScormVersion::Scorm2004 => ("[,]", "learner_response"),
            };
            for (n, q) in bank.questions.iter().enumerate() {
                let field = |name: &str| get(&elements, &format!("cmi.interactions.{n}.{name}")).unwrap();
                let response = field(response_field);
                let pattern = field("correct_responses.0.pattern");
                match &q.kind {
                    QuestionKind::Single { options } => {
                        assert_eq!(field("type"), "choice");
                        let i = options.iter().position(|o| !o.correct).unwrap();
                        assert_eq!(response, option_id(i).unwrap().to_string());
                        assert_eq!(pattern.len(), 1);
                    }
                    QuestionKind::Multiple { options } => {
                        let all: Vec<String> = (0..options.len()).map(|i| option_id(i).unwrap().to_string()).collect();
                        assert_eq!(response, all.join(separator));
                        assert!(pattern.split(separator).count() < options.len(), "{pattern}");
                    }
                    QuestionKind::Numeric { answer, tolerance, .. } => {
                        assert_eq!(field("type"), "numeric");
                        assert_eq!(response.parse::<f64>().unwrap(), answer + 1000.0);
                        match version {
                            ScormVersion::Scorm12 => assert_eq!(pattern.parse::<f64>().unwrap(), *answer),
                            ScormVersion::Scorm2004 => {
                                let (low, high) = pattern.split_once("[:]").unwrap();
                                assert!(low.parse::<f64>().unwrap() <= answer - tolerance + 1e-7);
                                assert!(high.parse::<f64>().unwrap() >= answer + tolerance - 1e-7);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_unfinished_quiz_reports_progress_but_no_score() {
        let bank = bank();
        let mut attempt = Attempt::new(&bank, 3);
        attempt.answer(&bank, 0, right(&bank.questions[0].kind)).unwrap();
        // Question 3 answered before question 2: its interaction waits for question 2.
        attempt.answer(&bank, 2, right(&bank.questions[2].kind)).unwrap();
        let twelve = quiz_elements(ScormVersion::Scorm12, &bank, &attempt, 0.8);
        assert_eq!(get(&twelve, "cmi.core.lesson_status"), Some("incomplete"));
        assert!(get(&twelve, "cmi.core.score.raw").is_none());
        assert!(get(&twelve, "cmi.interactions.0.id").is_some());
        assert!(get(&twelve, "cmi.interactions.1.id").is_none());
        let later = {
            let mut a = attempt.clone();
            a.answer(&bank, 1, right(&bank.questions[1].kind)).unwrap();
            quiz_elements(ScormVersion::Scorm12, &bank, &a, 0.8)
        };
        assert_eq!(
            get(&later, "cmi.interactions.2.id"),
            Some(bank.questions[2].id.as_str())
        );
        let twenty = quiz_elements(ScormVersion::Scorm2004, &bank, &attempt, 0.8);
        assert_eq!(get(&twenty, "cmi.success_status"), Some("unknown"));
        let expected = 2.0 / bank.questions.len() as f64;
        let measure: f64 = get(&twenty, "cmi.progress_measure").unwrap().parse().unwrap();
        assert!((measure - expected).abs() < 1e-7);
    }

    #[test]
    fn the_lms_pass_mark_decides_passed_or_failed() {
        let bank = bank();
        let total = bank.questions.len();
        // Three wrong first answers: 14 of 17 = 82 %.
        let attempt = finished(&bank, 3);
        let score = (total - 3) as f64 / total as f64;
        assert_eq!(pass_mark(ScormVersion::Scorm12, "", &bank), bank.pass_threshold);
        assert_eq!(pass_mark(ScormVersion::Scorm12, "90", &bank), 0.9);
        assert_eq!(pass_mark(ScormVersion::Scorm2004, "0.9", &bank), 0.9);
        for junk in ["abc", "150", "-1", "NaN", "inf"] {
            assert_eq!(
                pass_mark(ScormVersion::Scorm12, junk, &bank),
                bank.pass_threshold,
                "{junk}"
            );
        }
        assert_eq!(pass_mark(ScormVersion::Scorm2004, "-0.5", &bank), bank.pass_threshold);
        assert!(passes(&bank, &attempt, score));
        assert!(!passes(&bank, &attempt, score + 0.01));
        let strict = quiz_elements(ScormVersion::Scorm2004, &bank, &attempt, 0.9);
        assert_eq!(get(&strict, "cmi.success_status"), Some("failed"));
    }

    #[test]
    fn numbers_lab_status_and_session_time() {
        assert_eq!(decimal(0.25).as_deref(), Some("0.25"));
        assert_eq!(decimal(4.0).as_deref(), Some("4"));
        assert_eq!(decimal(-0.0000000001).as_deref(), Some("0"));
        assert_eq!(decimal(1e12), None);
        assert_eq!(decimal(f64::NAN), None);
        assert_eq!(timespan_12(62.5), "00:01:02.50");
        assert_eq!(timespan_12(3600.0 * 123.0), "123:00:00.00");
        assert_eq!(timespan_12(-4.0), "00:00:00.00");
        assert_eq!(timespan_12(1e12), "9999:59:59.99");
        assert_eq!(
            exit_elements(ScormVersion::Scorm2004, 95.0, false),
            vec![
                ("cmi.session_time".into(), "PT1M35S".into()),
                ("cmi.exit".into(), "suspend".into())
            ]
        );
        assert_eq!(exit_elements(ScormVersion::Scorm12, 1.0, true)[1].1, "");
        assert_eq!(
            lab_elements(ScormVersion::Scorm12, true),
            vec![("cmi.core.lesson_status".into(), "completed".into())]
        );
        assert_eq!(lab_elements(ScormVersion::Scorm2004, false)[0].1, "incomplete");
        assert!(already_completed(ScormVersion::Scorm12, "passed"));
        assert!(!already_completed(ScormVersion::Scorm12, "not attempted"));
        assert!(!already_completed(ScormVersion::Scorm2004, "unknown"));
    }

    #[test]
    fn a_save_sends_only_what_the_lms_has_not_committed() {
        let bank = bank();
        let mut attempt = Attempt::new(&bank, 7);
        let mut committed = CommittedValues::default();
        attempt.answer(&bank, 0, right(&bank.questions[0].kind)).unwrap();
        let first = quiz_elements(ScormVersion::Scorm2004, &bank, &attempt, 0.8);
        assert_eq!(
            committed.uncommitted(&first).len(),
            first.len(),
            "nothing committed yet"
        );
        let sent_first: Vec<Element> = committed.uncommitted(&first).into_iter().cloned().collect();
        committed.record(&sent_first);
        assert!(
            committed.uncommitted(&first).is_empty(),
            "the same state again sends nothing"
        );

        attempt.answer(&bank, 1, right(&bank.questions[1].kind)).unwrap();
        let second = quiz_elements(ScormVersion::Scorm2004, &bank, &attempt, 0.8);
        let sent: Vec<&str> = committed.uncommitted(&second).iter().map(|(n, _)| n.as_str()).collect();
        // The second answer's interaction, in SCORM 2004's order, and the progress measure; the
        // first interaction and the unchanged statuses are not sent again.
        assert_eq!(sent.first(), Some(&"cmi.progress_measure"));
        assert!(sent.iter().all(|n| !n.starts_with("cmi.interactions.0.")), "{sent:?}");
        let interaction: Vec<&&str> = sent.iter().filter(|n| n.starts_with("cmi.interactions.1.")).collect();
        assert_eq!(interaction.first(), Some(&&"cmi.interactions.1.id"));
        assert_eq!(interaction.get(1), Some(&&"cmi.interactions.1.type"));
        assert!(!sent.contains(&"cmi.completion_status"));

        // A failed commit records nothing: the next save sends the same elements again.
        let again: Vec<&str> = committed.uncommitted(&second).iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(sent, again);
    }

    #[test]
    fn the_lab_launches_incomplete_and_never_undoes_a_completion() {
        for version in [ScormVersion::Scorm12, ScormVersion::Scorm2004] {
            let (elements, finished) = lab_launch(version, "");
            assert_eq!(elements, lab_elements(version, false));
            assert!(!finished);
            let (elements, finished) = lab_launch(version, "completed");
            assert!(elements.is_empty() && finished, "{version:?}");
        }
        assert!(lab_launch(ScormVersion::Scorm12, "passed").1);
        assert!(
            !lab_launch(ScormVersion::Scorm2004, "passed").1,
            "2004 keeps success apart"
        );
    }
}
