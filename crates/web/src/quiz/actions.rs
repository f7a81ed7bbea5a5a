//! What the quiz page's buttons do: move between questions, check answers, start again, and
//! ask for a certificate.

use leptos::prelude::*;

use super::state::{fresh_attempt, Quiz};
use crate::i18n::{msg, tr};
use crate::{browser, capitalize};
use gradlab_credential::normalize_learner_name;
use gradlab_embed::{answered_question, quiz_result};
use gradlab_quiz::attempt::Feedback;
use gradlab_quiz::certificate::{self, Certificate, IssuedCertificate};
use gradlab_quiz::issuance::{self, Issuing, Outcome};
use gradlab_quiz::page;

impl Quiz {
    pub fn go_to(self, index: usize) {
        self.attempt.update(|a| a.current = index);
        // An answer shown on request stays shown while the page is open.
        let asked = self.revealed.with_untracked(|r| r.contains(&index));
        self.show(index, asked);
        self.show_result.set(false);
        self.persist();
    }

    pub fn check(self) {
        let Quiz {
            bank, attempt, message, ..
        } = self;
        let index = attempt.with_untracked(|a| a.current);
        let answer = bank.with_value(|b| {
            self.selection.with_untracked(|chosen| {
                self.numeric
                    .with_untracked(|text| page::answer_from_inputs(&b.questions[index].kind, chosen, text))
            })
        });
        let Some(answer) = answer else {
            message.set(Some(tr("quiz-choose-first")));
            return;
        };
        let was_complete = bank.with_value(|b| attempt.with_untracked(|a| a.is_complete(b)));
        let response = page::response(&answer);
        let result = bank.with_value(|b| {
            let mut result = None;
            attempt.update(|a| result = Some(a.answer(b, index, answer)));
            result
        });
        match result {
            Some(Ok(f)) => {
                self.report_to_host(index, f.correct, &response, was_complete);
                message.set(None);
                self.feedback.set(Some(f));
                self.persist();
                // Keyboard and screen-reader users land on what the check said.
                browser::focus_when_drawn("[data-testid=feedback]");
            }
            Some(Err(e)) => message.set(Some(format!("{}.", capitalize(&msg(&e.message()))))),
            None => {}
        }
    }

    /// Embedded: the first answer to each question, then the result when the quiz is complete.
    fn report_to_host(self, index: usize, correct: bool, response: &str, was_complete: bool) {
        if !crate::embed::is_active() {
            return;
        }
        self.bank.with_value(|b| {
            self.attempt.with_untracked(|a| {
                let question = &b.questions[index];
                if a.progress_of(question).is_some_and(|p| p.tries == 1) {
                    let language = crate::i18n::language().tag();
                    crate::embed::report(&answered_question(
                        &question.id,
                        &question.prompt,
                        language,
                        correct,
                        response,
                    ));
                }
                if !was_complete && a.is_complete(b) {
                    let score = a.score(b);
                    let seconds = browser::now_ms() / 1000.0;
                    for statement in quiz_result(score.first_try_correct, score.total, score.passed, seconds) {
                        crate::embed::report(&statement);
                    }
                }
            })
        });
    }

    pub fn try_again(self) {
        self.feedback.set(None);
        self.selection.set(Vec::new());
        self.numeric.set(String::new());
    }

    pub fn show_answer(self) {
        self.feedback.update(|f| *f = f.take().map(Feedback::revealed));
        self.revealed.update(|r| {
            r.insert(self.attempt.with_untracked(|a| a.current));
        });
        browser::focus_when_drawn("[data-testid=feedback]");
    }

    pub fn see_result(self) {
        self.show_result.set(true);
        browser::focus_when_drawn("[data-testid=result]");
    }

    pub fn new_attempt(self) {
        self.issuing.set(Issuing::Idle);
        self.attempt.set(self.bank.with_value(fresh_attempt));
        self.feedback.set(None);
        self.selection.set(Vec::new());
        self.show_result.set(false);
        self.persist();
    }

    fn keep(self, record: IssuedCertificate) {
        let key = certificate::storage_key(self.bank.with_value(|b| b.version));
        if let Err(e) = browser::save(&key, &serde_json::to_string(&record).unwrap_or_default()) {
            self.message.set(Some(msg(&e)));
        }
        self.issued.set(Some(record));
    }

    /// The name as it will appear (the issuer's own rules: NFC, white space collapsed, no control
    /// or direction characters, 1 to 80 characters), or why it cannot.
    fn checked_name(self) -> Option<String> {
        match normalize_learner_name(&self.name.get_untracked()) {
            Ok(text) => Some(text),
            Err(error) => {
                self.message
                    .set(Some(format!("{}.", capitalize(&msg(&error.message())))));
                None
            }
        }
    }

    fn attempt_id(self) -> Option<String> {
        self.attempt.with_untracked(|a| a.attempt_id.clone())
    }

    /// The signed certificate: the issuer grades the first answers itself.
    pub fn request_signed(self) {
        if self.issuing.with_untracked(Issuing::is_busy) {
            return;
        }
        let Some(holder) = self.checked_name() else { return };
        let body = self.bank.with_value(|b| {
            self.attempt.with_untracked(|a| {
                issuance::request_body(
                    b.version,
                    crate::i18n::language(),
                    &holder,
                    &a.first_answers(),
                    a.seed,
                    a.attempt_id.as_deref(),
                )
            })
        });
        self.message.set(None);
        self.issuing.set(Issuing::Busy);
        leptos::task::spawn_local(async move {
            // After an LTI launch the server names the learner as the course platform does.
            let bearer = self.lti.map(crate::lti::LtiLink::bearer);
            let url = browser::api_url(issuance::ISSUE_PATH);
            let reply = browser::fetch_as("POST", &url, Some(&body), bearer.as_deref()).await;
            let mut signed = None;
            self.issuing.update(|i| signed = i.settle(Outcome::from_reply(reply)));
            if let Some(signed) = signed {
                // The name the credential carries: a second request of this attempt gets the
                // first credential, under the first name.
                let name = gradlab_credential::CredentialSummary::from_json(&signed.credential)
                    .map_or(holder, |summary| summary.subject_name);
                self.keep(issuance::keep_signed(signed, name, self.attempt_id()));
            }
        });
    }

    /// After an LTI launch: the finished attempt's first answers to the server, which grades
    /// them and posts the score to the course (the name is the platform's, so none is sent).
    pub fn send_lti_grade(self) {
        let Some(link) = self.lti else { return };
        let body = self.bank.with_value(|b| {
            self.attempt.with_untracked(|a| {
                issuance::request_body(
                    b.version,
                    crate::i18n::language(),
                    "",
                    &a.first_answers(),
                    a.seed,
                    a.attempt_id.as_deref(),
                )
            })
        });
        link.send_grade(body);
    }

    /// The app's own format-1 ID: integrity only, for when no issuer can be reached.
    pub fn issue_integrity_only(self) {
        let Some(holder) = self.checked_name() else { return };
        let (score, quiz_version) = self
            .bank
            .with_value(|b| (self.attempt.with_untracked(|a| a.score(b)), b.version));
        let cert = Certificate {
            name: holder,
            score_percent: score.percent,
            date: browser::today(),
            quiz_version,
        };
        match issuance::integrity_only(&cert, self.attempt_id()) {
            Ok(record) => {
                self.issuing.set(Issuing::Idle);
                self.keep(record);
            }
            Err(e) => self.message.set(Some(format!("{}.", capitalize(&msg(&e.message()))))),
        }
    }
}
