//! The quiz page's signals, and the browser side of its saves: local storage, the LMS and other
//! tabs. What is read and written is decided in `gradlab_quiz::page` and
//! `gradlab_scorm::lms_quiz`.

use std::collections::BTreeSet;

use leptos::prelude::*;

use crate::certificate::load_issued;
use crate::i18n::{msg, num, tr};
use crate::{browser, capitalize, scorm};
use gradlab_quiz::attempt::{storage_key, Attempt, Feedback};
use gradlab_quiz::bank::QuestionBank;
use gradlab_quiz::certificate::IssuedCertificate;
use gradlab_quiz::issuance::Issuing;
use gradlab_quiz::page::{self, Opening, OtherTab, Shown};
use gradlab_scorm::lms_quiz::{self, LmsQuiz, SUSPEND_BACKUP_KEY};

/// The page's state: the attempt and what the page shows of it.
#[derive(Clone, Copy)]
pub(super) struct Quiz {
    pub bank: StoredValue<QuestionBank>,
    /// What the LMS said at launch; `None` outside an LMS.
    pub lms: Option<LmsQuiz>,
    pub attempt: RwSignal<Attempt>,
    pub feedback: RwSignal<Option<Feedback>>,
    /// Questions whose answer the learner asked to see.
    pub revealed: RwSignal<BTreeSet<usize>>,
    pub selection: RwSignal<Vec<usize>>,
    pub numeric: RwSignal<String>,
    pub message: RwSignal<Option<String>>,
    pub show_result: RwSignal<bool>,
    pub name: RwSignal<String>,
    pub issued: RwSignal<Option<IssuedCertificate>>,
    pub issuing: RwSignal<Issuing>,
    /// The course this tab was launched from by LTI 1.3; `None` otherwise.
    pub lti: Option<crate::lti::LtiLink>,
}

/// A new attempt: its own option order and its own ID at the issuer.
pub(super) fn fresh_attempt(bank: &QuestionBank) -> Attempt {
    Attempt::new(bank, browser::random_seed()).with_attempt_id(browser::random_attempt_id())
}

impl Quiz {
    /// Opens the saved attempt (from the LMS's `suspend_data` inside one, else this browser's),
    /// at the question a link names; an unreadable save is kept aside, never thrown away.
    pub fn open(bank: QuestionBank, question: Option<String>) -> (Self, Opening) {
        let lms = scorm::version().map(|version| LmsQuiz::read(version, &bank, scorm::get));
        let (restored, backup_key, saved) = match lms {
            Some(_) => {
                let (restored, saved) = lms_quiz::restore(&bank, scorm::get);
                (restored, SUSPEND_BACKUP_KEY.to_string(), saved)
            }
            None => page::restore_local(&bank, browser::load),
        };
        let opening = Opening::new(
            &bank,
            restored,
            question.as_deref(),
            browser::random_seed(),
            browser::random_attempt_id(),
        );
        let restore_notice = opening.unreadable.as_ref().map(|reason| {
            let reason = capitalize(&msg(reason));
            msg(&page::restore_notice(
                &reason,
                browser::keep_unreadable(&backup_key, &saved),
            ))
        });
        let (stored, stored_problem) = match load_issued(bank.version) {
            Ok(stored) => (stored, None),
            Err(problem) => (None, Some(problem)),
        };
        let notice = restore_notice
            .or(opening.carried_over.as_ref().map(msg))
            .or(opening.unknown_question.as_ref().map(msg))
            .or(stored_problem);
        let shown = Shown::at(&bank, &opening.attempt, opening.attempt.current, false);
        let quiz = Quiz {
            bank: StoredValue::new(bank),
            lms,
            attempt: RwSignal::new(opening.attempt.clone()),
            feedback: RwSignal::new(shown.feedback),
            revealed: RwSignal::new(BTreeSet::new()),
            selection: RwSignal::new(shown.inputs.selection),
            numeric: RwSignal::new(typed(shown.inputs.number)),
            message: RwSignal::new(notice),
            show_result: RwSignal::new(false),
            name: RwSignal::new(String::new()),
            issued: RwSignal::new(stored),
            issuing: RwSignal::new(Issuing::Idle),
            lti: crate::lti::LtiLink::open(),
        };
        (quiz, opening)
    }

    fn storage_key(self) -> String {
        storage_key(self.bank.with_value(|b| b.version))
    }

    /// Saves at once where the page must: in an LMS, to say the quiz was opened; outside one, a
    /// new attempt (so a second tab continues it) or a linked question.
    pub fn save_on_open(self, opening: &Opening) {
        let at_once = match self.lms {
            Some(lms) => lms.saves_on_open(&opening.attempt, opening.carried_over.is_some()),
            None => opening.saves_locally_at_once(browser::load(&self.storage_key()).is_some()),
        };
        if at_once {
            self.persist();
        }
    }

    /// Writes the attempt: to the LMS inside one, else to local storage, merging in what
    /// another tab saved to the same attempt since.
    pub fn persist(self) {
        let Quiz {
            bank, attempt, message, ..
        } = self;
        if let Some(lms) = self.lms {
            let save = bank.with_value(|b| attempt.with_untracked(|a| lms.save(b, a)));
            if let Some(e) = save.problem {
                message.set(Some(format!("{}.", capitalize(&msg(&e.message())))));
            }
            scorm::save(&save.elements, save.finished);
            return;
        }
        let key = self.storage_key();
        let stored = browser::load(&key);
        let newer = bank.with_value(|b| attempt.with_untracked(|a| page::same_attempt_saved(b, a, stored.as_deref())));
        if let Some(stored) = newer {
            attempt.update(|a| a.merge_stored(&stored));
        }
        let saved = attempt.with_untracked(Attempt::save);
        if let Err(e) = browser::save(&key, &saved) {
            message.set(Some(msg(&e)));
        }
    }

    /// Outside an LMS, other tabs of this quiz show answers as soon as one tab saves them; a
    /// new attempt started in another tab replaces this one.
    pub fn follow_other_tabs(self) {
        if self.lms.is_some() {
            return;
        }
        let Quiz { bank, attempt, .. } = self;
        let listener = browser::on_storage_change(self.storage_key(), move |value| {
            let Some(stored) = value.and_then(|text| bank.with_value(|b| Attempt::restore(b, &text).ok())) else {
                return;
            };
            let mut change = OtherTab::Merged { shown_changed: false };
            bank.with_value(|b| attempt.update(|a| change = OtherTab::take(b, a, stored)));
            if change == OtherTab::Replaced {
                self.show_result.set(false);
                self.message.set(Some(tr("quiz-other-tab-new-attempt")));
            }
            if change.refreshes_question(self.feedback.with_untracked(Option::is_some)) {
                self.show(attempt.with_untracked(|a| a.current), false);
            }
        });
        on_cleanup(move || listener.remove());
    }

    /// Shows question `index` as the attempt has it: its feedback (with the answer if
    /// `revealed`) and the inputs as the learner left them.
    pub fn show(self, index: usize, revealed: bool) {
        let shown = self
            .bank
            .with_value(|b| self.attempt.with_untracked(|a| Shown::at(b, a, index, revealed)));
        self.feedback.set(shown.feedback);
        self.selection.set(shown.inputs.selection);
        self.numeric.set(typed(shown.inputs.number));
    }
}

/// A number as the learner would have typed it (the page's decimal separator).
fn typed(number: Option<f64>) -> String {
    number.map(|x| num(&x.to_string())).unwrap_or_default()
}
