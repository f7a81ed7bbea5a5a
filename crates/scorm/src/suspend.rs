//! Quiz progress in `cmi.suspend_data`, so a learner who leaves a course and comes back goes on
//! where they were.
//!
//! The encoding is compact JSON (serde), one object:
//! `{"f":1,"b":<bank version>,"s":<seed>,"c":<question shown>,"p":{"<question id>":[first,last,tries],...},"i":"<attempt id>"}`
//! where an answer is an option index (single choice), an array of option indices (multiple
//! choice) or `{"n":<number>}` (numeric), and `first` is `null` only for progress restored from
//! an old local save that lacked it. No verdict is stored: restoring grades the answers again
//! with the bank, so an edited `suspend_data` cannot raise a score. SCORM 1.2 allows 4,096
//! characters; the longest progress the bundled banks allow takes well under half of that
//! (tested with the largest seed, tries, option sets and numbers).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::ScormVersion;
use gradlab_quiz::attempt::{Answer, Attempt, RecordedAnswers};
use gradlab_quiz::bank::QuestionBank;

/// The version of this encoding, first in every `suspend_data` the app writes.
const FORMAT: u8 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SuspendError {
    #[error("the saved progress takes {length} characters, more than the {limit} this LMS keeps")]
    TooLong { length: usize, limit: usize },
    #[error("the progress saved in the course could not be read: {0}")]
    Unreadable(String),
    #[error("the progress saved in the course belongs to question bank version {saved}, this is version {current}")]
    OtherBank { saved: u8, current: u8 },
}

impl SuspendError {
    /// The message the quiz page shows (see `assets/i18n`).
    pub fn message(&self) -> gradlab_i18n::Msg {
        use gradlab_i18n::Msg;
        match self {
            SuspendError::TooLong { length, limit } => Msg::new("scorm-suspend-too-long")
                .arg("length", length)
                .arg("limit", limit),
            SuspendError::Unreadable(detail) => Msg::new("scorm-suspend-unreadable").arg("detail", detail),
            SuspendError::OtherBank { saved, current } => Msg::new("quiz-restore-other-version")
                .arg("saved", saved)
                .arg("current", current),
        }
    }
}

/// An answer in as few characters as JSON allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum CompactAnswer {
    Single(usize),
    Multiple(Vec<usize>),
    Numeric { n: f64 },
}

impl From<&Answer> for CompactAnswer {
    fn from(answer: &Answer) -> Self {
        match answer {
            Answer::Single(i) => CompactAnswer::Single(*i),
            Answer::Multiple(list) => CompactAnswer::Multiple(list.clone()),
            Answer::Numeric(x) => CompactAnswer::Numeric { n: *x },
        }
    }
}

impl From<CompactAnswer> for Answer {
    fn from(answer: CompactAnswer) -> Self {
        match answer {
            CompactAnswer::Single(i) => Answer::Single(i),
            CompactAnswer::Multiple(list) => Answer::Multiple(list),
            CompactAnswer::Numeric { n } => Answer::Numeric(n),
        }
    }
}

/// `[first, last, tries]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry(Option<CompactAnswer>, CompactAnswer, u32);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Suspended {
    f: u8,
    b: u8,
    s: u64,
    c: usize,
    p: BTreeMap<String, Entry>,
    /// The attempt's ID (one credential per attempt); absent in progress saved before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    i: Option<String>,
}

/// Encodes an attempt for `cmi.suspend_data`, refusing what the LMS could not keep whole.
pub fn encode(attempt: &Attempt, version: ScormVersion) -> Result<String, SuspendError> {
    let suspended = Suspended {
        f: FORMAT,
        b: attempt.bank_version,
        s: attempt.seed,
        c: attempt.current,
        p: attempt
            .progress
            .iter()
            .map(|(id, p)| {
                let entry = Entry(
                    p.first_answer.as_ref().map(CompactAnswer::from),
                    CompactAnswer::from(&p.last_answer),
                    p.tries,
                );
                (id.clone(), entry)
            })
            .collect(),
        i: attempt.attempt_id.clone(),
    };
    let text = serde_json::to_string(&suspended).map_err(|e| SuspendError::Unreadable(e.to_string()))?;
    let (length, limit) = (text.chars().count(), version.suspend_data_limit());
    if length > limit {
        return Err(SuspendError::TooLong { length, limit });
    }
    Ok(text)
}

/// Decodes `cmi.suspend_data`: `Ok(None)` when it is empty (a first launch), otherwise the
/// attempt with every answer graded again by the bank.
pub fn decode(bank: &QuestionBank, text: &str) -> Result<Option<Attempt>, SuspendError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let suspended: Suspended = serde_json::from_str(text).map_err(|e| SuspendError::Unreadable(e.to_string()))?;
    if suspended.f != FORMAT {
        return Err(SuspendError::Unreadable(format!("unknown format {}", suspended.f)));
    }
    if suspended.b != bank.version {
        return Err(SuspendError::OtherBank {
            saved: suspended.b,
            current: bank.version,
        });
    }
    let recorded = suspended.p.into_iter().map(|(id, Entry(first, last, tries))| {
        let answers = RecordedAnswers {
            first: first.map(Answer::from),
            last: Answer::from(last),
            tries,
        };
        (id, answers)
    });
    Ok(Some(
        Attempt::from_recorded(bank, suspended.s, suspended.c, recorded).with_attempt_id(suspended.i),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_i18n::Language;
    use gradlab_quiz::bank::QuestionKind;

    fn right_answer(kind: &QuestionKind) -> Answer {
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

    fn wrong_answer(kind: &QuestionKind) -> Answer {
        match kind {
            QuestionKind::Single { options } => Answer::Single(options.iter().position(|o| !o.correct).unwrap()),
            QuestionKind::Multiple { options } => Answer::Multiple((0..options.len()).collect()),
            QuestionKind::Numeric { answer, .. } => Answer::Numeric(answer + 1000.0),
        }
    }

    #[test]
    fn progress_round_trips_and_is_graded_again() {
        let bank = QuestionBank::bundled().unwrap();
        let mut attempt = Attempt::new(&bank, 0x1234_5678_9abc_def0);
        for (i, q) in bank.questions.iter().enumerate().take(5) {
            if i % 2 == 0 {
                attempt.answer(&bank, i, wrong_answer(&q.kind)).unwrap();
            }
            attempt.answer(&bank, i, right_answer(&q.kind)).unwrap();
        }
        attempt.current = 5;
        let text = encode(&attempt, ScormVersion::Scorm12).unwrap();
        assert!(text.starts_with("{\"f\":1,"), "{text}");
        let restored = decode(&bank, &text).unwrap().unwrap();
        assert_eq!(restored, attempt);
        assert_eq!(restored.score(&bank), attempt.score(&bank));
        assert_eq!(decode(&bank, "").unwrap(), None, "a first launch has no progress");
        assert_eq!(decode(&bank, "  ").unwrap(), None);
    }

    #[test]
    fn an_edited_suspend_data_cannot_raise_the_score() {
        let bank = QuestionBank::bundled().unwrap();
        let q = &bank.questions[0];
        let mut attempt = Attempt::new(&bank, 7);
        attempt.answer(&bank, 0, wrong_answer(&q.kind)).unwrap();
        attempt.answer(&bank, 0, right_answer(&q.kind)).unwrap();
        let text = encode(&attempt, ScormVersion::Scorm2004).unwrap();
        // Claim the question was solved at the first try with one try.
        let forged = text.replace(",2]", ",1]");
        assert_ne!(forged, text);
        let restored = decode(&bank, &forged).unwrap().unwrap();
        assert_eq!(
            restored.score(&bank).first_try_correct,
            0,
            "the first answer is graded, not the count"
        );
    }

    #[test]
    fn bad_suspend_data_is_refused_with_a_reason() {
        let bank = QuestionBank::bundled().unwrap();
        for bad in [
            "not json",
            "{\"f\":9,\"b\":1,\"s\":1,\"c\":0,\"p\":{}}",
            "[]",
            "{\"f\":1}",
        ] {
            let error = decode(&bank, bad).unwrap_err();
            assert!(matches!(error, SuspendError::Unreadable(_)), "{bad}: {error:?}");
        }
        let other = format!("{{\"f\":1,\"b\":{},\"s\":1,\"c\":0,\"p\":{{}}}}", bank.version + 1);
        assert_eq!(
            decode(&bank, &other).unwrap_err(),
            SuspendError::OtherBank {
                saved: bank.version + 1,
                current: bank.version
            }
        );
        // Unknown questions and answers that do not fit are dropped, a wild index is clamped.
        let text = format!(
            "{{\"f\":1,\"b\":{},\"s\":1,\"c\":999,\"p\":{{\"no-such-question\":[0,0,1],\"{}\":[{{\"n\":1}},{{\"n\":1}},1]}}}}",
            bank.version, bank.questions[0].id
        );
        let restored = decode(&bank, &text).unwrap().unwrap();
        assert!(restored.progress.is_empty());
        assert_eq!(restored.current, bank.questions.len() - 1);
    }

    /// The longest progress any bundled bank allows: every question answered, tried
    /// `u32::MAX` times, every option of a multiple choice chosen, numbers with the longest
    /// JSON form, the largest seed and index. It must fit SCORM 1.2's 4,096 characters.
    #[test]
    fn the_longest_progress_fits_scorm_12() {
        let longest_number = -2.2250738585072014e-308_f64;
        for language in Language::ALL {
            let bank = QuestionBank::bundled_in(language).unwrap();
            let mut attempt = Attempt::new(&bank, u64::MAX);
            attempt.current = bank.questions.len() - 1;
            for q in &bank.questions {
                let answer = match &q.kind {
                    QuestionKind::Single { options } => Answer::Single(options.len() - 1),
                    QuestionKind::Multiple { options } => Answer::Multiple((0..options.len()).collect()),
                    QuestionKind::Numeric { .. } => Answer::Numeric(longest_number),
                };
                attempt.progress.insert(
                    q.id.clone(),
                    gradlab_quiz::attempt::QuestionProgress {
                        first_try_correct: false,
                        tries: u32::MAX,
                        solved: false,
                        last_answer: answer.clone(),
                        first_answer: Some(answer),
                    },
                );
            }
            let text = encode(&attempt, ScormVersion::Scorm12).unwrap();
            let length = text.chars().count();
            assert!(
                length <= 2048,
                "{language:?}: {length} characters leave too little room to grow"
            );
            let restored = decode(&bank, &text).unwrap().unwrap();
            assert_eq!(restored.progress.len(), bank.questions.len());
            assert_eq!(restored.seed, u64::MAX);
        }
    }

    #[test]
    fn progress_longer_than_the_lms_keeps_is_refused() {
        let mut bank = QuestionBank::bundled().unwrap();
        let template = bank.questions[0].clone();
        for i in 0..400 {
            let mut q = template.clone();
            q.id = format!("{}-copy-{i}", template.id);
            bank.questions.push(q);
        }
        let mut attempt = Attempt::new(&bank, 1);
        for i in 0..bank.questions.len() {
            let kind = bank.questions[i].kind.clone();
            attempt.answer(&bank, i, right_answer(&kind)).unwrap();
        }
        let error = encode(&attempt, ScormVersion::Scorm12).unwrap_err();
        assert!(matches!(error, SuspendError::TooLong { limit: 4096, .. }), "{error:?}");
        assert!(
            encode(&attempt, ScormVersion::Scorm2004).is_ok(),
            "SCORM 2004 keeps 64,000"
        );
    }
}
