//! The quiz page inside an LMS: what it reads at launch (saved progress, pass mark, whether the
//! SCO was done before) and what each save writes. The web layer only makes the API calls.

use gradlab_i18n::Language;
use gradlab_quiz::attempt::Attempt;
use gradlab_quiz::bank::QuestionBank;
use gradlab_quiz::page::Restored;

use super::data_model::{already_completed, pass_mark, quiz_elements, Element};
use super::suspend::{self, SuspendError};
use super::{ScormVersion, SUSPEND_DATA};

/// The local-storage key under which unreadable `suspend_data` is kept aside.
pub const SUSPEND_BACKUP_KEY: &str = "gradlab.scorm.suspend_data";

/// Progress saved in `cmi.suspend_data` (local storage belongs to whoever used this browser
/// before); `get` reads an element from the LMS.
pub fn restore(bank: &QuestionBank, get: impl Fn(&str) -> Option<String>) -> (Restored, String) {
    let saved = get(SUSPEND_DATA).unwrap_or_default();
    let restored = match suspend::decode(bank, &saved) {
        Ok(Some(attempt)) => Restored::Attempt(attempt),
        Ok(None) => Restored::Nothing,
        // Saved by an older package of the course: carried over as a browser's save is.
        Err(SuspendError::OtherBank { saved: from, current }) if from < current => {
            match QuestionBank::shipped(from, Language::English)
                .map_err(|e| SuspendError::Unreadable(e.to_string()))
                .and_then(|older| Ok((suspend::decode(&older, &saved)?, older)))
            {
                Ok((Some(attempt), older)) => Restored::carried(attempt, &older, bank),
                Ok((None, _)) => Restored::Nothing,
                Err(error) => Restored::Unreadable {
                    reason: error.message(),
                },
            }
        }
        Err(error) => Restored::Unreadable {
            reason: error.message(),
        },
    };
    (restored, saved)
}

/// What the LMS said at launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LmsQuiz {
    pub version: ScormVersion,
    /// The LMS's pass mark (from the package's manifest), else the bank's: it decides passed or
    /// failed there.
    pub pass_mark: f64,
    /// The LMS records the SCO as done already.
    pub done_before: bool,
}

/// What one save writes to the LMS.
#[derive(Debug, Clone, PartialEq)]
pub struct LmsSave {
    /// Status, score, interactions and (unless it does not fit) `cmi.suspend_data`.
    pub elements: Vec<Element>,
    /// The attempt is complete: the learner is done with this SCO.
    pub finished: bool,
    /// Why the progress could not go into `suspend_data`.
    pub problem: Option<SuspendError>,
}

impl LmsQuiz {
    /// Reads the pass mark and the completion status through `get`.
    pub fn read(version: ScormVersion, bank: &QuestionBank, get: impl Fn(&str) -> Option<String>) -> Self {
        let mastery = get(version.mastery_element()).unwrap_or_default();
        let status = get(version.completion_element()).unwrap_or_default();
        LmsQuiz {
            version,
            pass_mark: pass_mark(version, &mastery, bank),
            done_before: already_completed(version, &status),
        }
    }

    /// Whether the page saves as soon as it opens `attempt`: a resumed attempt, or one the LMS
    /// has no result for yet (SCORM 1.2 LMSs otherwise mark a SCO that set no status "completed"
    /// when it finishes); an earlier result is never undone by a new, empty attempt, nor by
    /// progress `carried_over` from an older package (its new questions are still open: the
    /// result changes when the learner answers, not when the page opens).
    pub fn saves_on_open(&self, attempt: &Attempt, carried_over: bool) -> bool {
        if carried_over {
            return !self.done_before;
        }
        !attempt.progress.is_empty() || !self.done_before
    }

    /// What a save of `attempt` writes.
    pub fn save(&self, bank: &QuestionBank, attempt: &Attempt) -> LmsSave {
        let mut elements = quiz_elements(self.version, bank, attempt, self.pass_mark);
        let problem = match suspend::encode(attempt, self.version) {
            Ok(text) => {
                elements.push((SUSPEND_DATA.to_string(), text));
                None
            }
            Err(error) => Some(error),
        };
        LmsSave {
            elements,
            finished: attempt.is_complete(bank),
            problem,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::data_model::tests::right;

    fn bank() -> QuestionBank {
        QuestionBank::bundled().unwrap()
    }

    fn lms(values: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let values: HashMap<String, String> = values.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |element| values.get(element).cloned()
    }

    fn value<'a>(save: &'a LmsSave, name: &str) -> Option<&'a str> {
        save.elements.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn the_lms_pass_mark_and_status_are_read_per_version() {
        let b = bank();
        let v12 = LmsQuiz::read(
            ScormVersion::Scorm12,
            &b,
            lms(&[
                ("cmi.student_data.mastery_score", "60"),
                ("cmi.core.lesson_status", "passed"),
            ]),
        );
        assert!((v12.pass_mark - 0.6).abs() < 1e-12);
        assert!(v12.done_before);
        let v2004 = LmsQuiz::read(
            ScormVersion::Scorm2004,
            &b,
            lms(&[("cmi.completion_status", "incomplete")]),
        );
        assert_eq!(v2004.pass_mark, b.pass_threshold);
        assert!(!v2004.done_before);
    }

    #[test]
    fn a_launch_saves_unless_a_new_attempt_would_undo_an_earlier_result() {
        let b = bank();
        let done = LmsQuiz::read(
            ScormVersion::Scorm2004,
            &b,
            lms(&[("cmi.completion_status", "completed")]),
        );
        let not_done = LmsQuiz {
            done_before: false,
            ..done
        };
        let mut attempt = Attempt::new(&b, 1);
        assert!(!done.saves_on_open(&attempt, false));
        assert!(not_done.saves_on_open(&attempt, false));
        attempt.answer(&b, 0, right(&b.questions[0].kind)).unwrap();
        assert!(done.saves_on_open(&attempt, false));
    }

    #[test]
    fn a_save_writes_the_progress_and_finishes_a_complete_attempt() {
        let b = bank();
        let quiz = LmsQuiz::read(ScormVersion::Scorm2004, &b, lms(&[]));
        let mut attempt = Attempt::new(&b, 1);
        attempt.answer(&b, 0, right(&b.questions[0].kind)).unwrap();
        let save = quiz.save(&b, &attempt);
        assert!(!save.finished);
        assert_eq!(save.problem, None);
        let (restored, _) = restore(&b, lms(&[(SUSPEND_DATA, value(&save, SUSPEND_DATA).unwrap())]));
        assert!(matches!(restored, Restored::Attempt(a) if a.progress == attempt.progress));
        for i in 1..b.questions.len() {
            attempt.answer(&b, i, right(&b.questions[i].kind)).unwrap();
        }
        let save = quiz.save(&b, &attempt);
        assert!(save.finished);
        assert_eq!(value(&save, "cmi.success_status"), Some("passed"));
    }

    #[test]
    fn empty_suspend_data_is_a_first_launch_and_broken_data_is_returned_to_keep() {
        let b = bank();
        assert_eq!(restore(&b, lms(&[])), (Restored::Nothing, String::new()));
        let (restored, saved) = restore(&b, lms(&[(SUSPEND_DATA, "{broken")]));
        assert!(matches!(restored, Restored::Unreadable { reason } if reason.id == "scorm-suspend-unreadable"));
        assert_eq!(saved, "{broken");
    }

    /// A course that replaced its package with a newer one keeps the learner's answers: the
    /// suspend data of version 1 is carried over as a browser's save is; a newer version than
    /// the package knows is kept aside, not guessed at.
    #[test]
    fn suspend_data_of_an_older_package_is_carried_over() {
        let b = bank();
        let first = QuestionBank::shipped(1, Language::English).unwrap();
        let quiz = LmsQuiz::read(ScormVersion::Scorm2004, &first, lms(&[]));
        let mut old = Attempt::new(&first, 3);
        for i in 0..first.questions.len() {
            old.answer(&first, i, right(&first.questions[i].kind)).unwrap();
        }
        let save = quiz.save(&first, &old);
        let suspended = value(&save, SUSPEND_DATA).unwrap();
        let (restored, saved) = restore(&b, lms(&[(SUSPEND_DATA, suspended)]));
        assert_eq!(saved, suspended);
        let Restored::CarriedOver { attempt, from, .. } = restored else {
            panic!("{restored:?}")
        };
        assert_eq!((from, attempt.bank_version), (1, b.version));
        assert_eq!(attempt.progress, old.progress);
        assert!(!attempt.is_complete(&b), "the new questions are open");
        // The LMS recorded version 1 as passed: opening the new package does not write the
        // open questions' "incomplete" over it; where it recorded nothing, the page saves.
        let passed = LmsQuiz::read(ScormVersion::Scorm12, &b, lms(&[("cmi.core.lesson_status", "passed")]));
        assert!(!passed.saves_on_open(&attempt, true));
        assert!(
            passed.saves_on_open(&attempt, false),
            "a resumed attempt of this version"
        );
        assert!(LmsQuiz::read(ScormVersion::Scorm12, &b, lms(&[])).saves_on_open(&attempt, true));

        let newer = suspended.replacen(
            &format!("\"b\":{}", first.version),
            &format!("\"b\":{}", b.version + 1),
            1,
        );
        let (restored, _) = restore(&b, lms(&[(SUSPEND_DATA, &newer)]));
        assert!(matches!(restored, Restored::Unreadable { reason } if reason.id == "quiz-restore-other-version"));
    }
}
