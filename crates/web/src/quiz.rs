//! The quiz page: one question at a time, instant feedback, progress saved on every answer.

use leptos::prelude::*;

use super::certificate::{load_issued, CertificateCard};
use super::i18n::{msg, tr};
use super::{browser, capitalize};
use gradlab_credential::normalize_learner_name;
use gradlab_embed::{answered_question, quiz_result};
use gradlab_i18n::Msg;
use gradlab_quiz::attempt::{storage_key, Answer, Attempt, Feedback, RestoreError};
use gradlab_quiz::bank::{QuestionBank, QuestionKind};
use gradlab_quiz::certificate::{self, Certificate, IssuedCertificate};
use gradlab_quiz::issuance::{self, Outcome};
use gradlab_route::Route;
use gradlab_scorm::{self as scorm, data_model, suspend};

/// Where a request for a signed certificate stands.
#[derive(Debug, Clone, PartialEq)]
enum Issuing {
    Idle,
    Busy,
    /// The issuer refused, or none answered; the page says why and what can be done.
    Failed(Outcome),
}

/// A new attempt: its own option order and its own ID at the issuer.
fn fresh_attempt(bank: &QuestionBank) -> Attempt {
    Attempt::new(bank, browser::random_seed()).with_attempt_id(browser::random_attempt_id())
}

/// An attempt restored from a save made before attempts had IDs gets one now (kept with the
/// next save).
fn with_some_id(attempt: Attempt) -> Attempt {
    match attempt.attempt_id {
        Some(_) => attempt,
        None => attempt.with_attempt_id(browser::random_attempt_id()),
    }
}

/// Loads saved progress; an unreadable save is kept under a backup key, never thrown away.
fn load_attempt(bank: &QuestionBank) -> (Attempt, Option<String>) {
    let reason = |error: &RestoreError| capitalize(&msg(&error.message()));
    let key = storage_key(bank.version);
    match browser::load(&key) {
        None => (fresh_attempt(bank), None),
        Some(saved) => match Attempt::restore(bank, &saved) {
            Ok(attempt) => (with_some_id(attempt), None),
            Err(error @ (RestoreError::Unreadable(_) | RestoreError::OtherVersion { .. })) => {
                let note = match browser::keep_unreadable(&key, &saved) {
                    Ok(backup) => msg(&Msg::new("quiz-restore-kept")
                        .arg("reason", reason(&error))
                        .arg("key", backup)),
                    Err(_) => msg(&Msg::new("quiz-restore-lost").arg("reason", reason(&error))),
                };
                (fresh_attempt(bank), Some(note))
            }
        },
    }
}

/// Inside an LMS, progress comes from `cmi.suspend_data` (local storage belongs to whoever
/// used this browser before); unreadable data is kept aside in local storage, never lost.
fn load_from_lms(bank: &QuestionBank) -> (Attempt, Option<String>) {
    let saved = super::scorm::get(scorm::SUSPEND_DATA).unwrap_or_default();
    match suspend::decode(bank, &saved) {
        Ok(Some(attempt)) => (with_some_id(attempt), None),
        Ok(None) => (fresh_attempt(bank), None),
        Err(error) => {
            let reason = capitalize(&msg(&error.message()));
            let note = match browser::keep_unreadable("gradlab.scorm.suspend_data", &saved) {
                Ok(backup) => msg(&Msg::new("quiz-restore-kept").arg("reason", reason).arg("key", backup)),
                Err(_) => msg(&Msg::new("quiz-restore-lost").arg("reason", reason)),
            };
            (fresh_attempt(bank), Some(note))
        }
    }
}

/// The inputs as the learner left them: an answered question shows the answer its feedback
/// explains, a new one empty inputs.
fn inputs_for(answer: Option<&Answer>) -> (Vec<usize>, String) {
    match answer {
        Some(Answer::Single(i)) => (vec![*i], String::new()),
        Some(Answer::Multiple(list)) => (list.clone(), String::new()),
        Some(Answer::Numeric(x)) => (Vec::new(), super::i18n::num(&x.to_string())),
        None => (Vec::new(), String::new()),
    }
}

/// Embedded: the first answer to each question, then the result when the quiz is complete.
fn report_to_host(
    bank: &StoredValue<QuestionBank>,
    attempt: RwSignal<Attempt>,
    index: usize,
    correct: bool,
    response: &str,
    was_complete: bool,
) {
    if !super::embed::is_active() {
        return;
    }
    bank.with_value(|b| {
        attempt.with_untracked(|a| {
            let question = &b.questions[index];
            if a.progress_of(question).is_some_and(|p| p.tries == 1) {
                let language = super::i18n::language().tag();
                super::embed::report(&answered_question(
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
                    super::embed::report(&statement);
                }
            }
        })
    });
}

#[component]
pub fn QuizPage(
    bank: QuestionBank,
    /// Opens the attempt at this question (a link from the Lab); its answers stay as they are.
    question: Option<String>,
) -> impl IntoView {
    let topics = bank.topics();
    let lms = super::scorm::version();
    let (mut initial, restore_notice) = match lms {
        Some(_) => load_from_lms(&bank),
        None => load_attempt(&bank),
    };
    let mut linked = false;
    let link_notice = question.and_then(|id| match bank.index_of(&id) {
        Some(index) => {
            initial.current = index;
            linked = true;
            None
        }
        None => Some(msg(&Msg::new("quiz-unknown-question").quoted("value", &id))),
    });
    // The LMS's pass mark (from the package's manifest) decides passed or failed there.
    let lms_pass_mark = lms.map(|version| {
        let value = super::scorm::get(version.mastery_element()).unwrap_or_default();
        data_model::pass_mark(version, &value, &bank)
    });
    let resumed = lms.is_some() && !initial.progress.is_empty();
    let done_before = lms.is_some_and(|version| {
        let status = super::scorm::get(version.completion_element()).unwrap_or_default();
        data_model::already_completed(version, &status)
    });
    let initial_feedback = initial.feedback_for(&bank, initial.current);
    let (initial_selection, initial_numeric) = inputs_for(initial.shown_answer(&bank, initial.current));
    let (stored, stored_problem) = match load_issued(bank.version) {
        Ok(stored) => (stored, None),
        Err(problem) => (None, Some(problem)),
    };
    let issued = RwSignal::new(stored);
    let issuing = RwSignal::new(Issuing::Idle);
    let bank = StoredValue::new(bank);
    let attempt = RwSignal::new(initial);
    let feedback = RwSignal::new(initial_feedback);
    // Questions whose answer the learner asked to see.
    let revealed = RwSignal::new(std::collections::BTreeSet::<usize>::new());
    let selection = RwSignal::new(initial_selection);
    let numeric = RwSignal::new(initial_numeric);
    let message = RwSignal::new(restore_notice.or(link_notice).or(stored_problem));
    let show_result = RwSignal::new(false);
    let name = RwSignal::new(String::new());

    let persist = move || {
        if let (Some(version), Some(pass_mark)) = (lms, lms_pass_mark) {
            let (mut elements, suspended, complete) = bank.with_value(|b| {
                attempt.with_untracked(|a| {
                    (
                        data_model::quiz_elements(version, b, a, pass_mark),
                        suspend::encode(a, version),
                        a.is_complete(b),
                    )
                })
            });
            match suspended {
                Ok(text) => elements.push((scorm::SUSPEND_DATA.to_string(), text)),
                Err(e) => message.set(Some(format!("{}.", capitalize(&msg(&e.message()))))),
            }
            super::scorm::save(&elements, complete);
            return;
        }
        // Another tab may have saved answers to this attempt since this page last heard of
        // it: they are merged in, never overwritten.
        let key = storage_key(bank.with_value(|b| b.version));
        let stored = browser::load(&key).and_then(|text| bank.with_value(|b| Attempt::restore(b, &text).ok()));
        if let Some(stored) = stored.filter(|s| s.seed == attempt.with_untracked(|a| a.seed)) {
            attempt.update(|a| a.merge_stored(&stored));
        }
        let saved = attempt.with_untracked(Attempt::save);
        if let Err(e) = browser::save(&key, &saved) {
            message.set(Some(msg(&e)));
        }
    };
    // Outside an LMS, other tabs of this quiz show answers as soon as one tab saves them; a
    // new attempt started in another tab replaces this one (its answers are already saved).
    if lms.is_none() {
        let key = storage_key(bank.with_value(|b| b.version));
        let listener = browser::on_storage_change(key, move |value| {
            let Some(stored) = value.and_then(|text| bank.with_value(|b| Attempt::restore(b, &text).ok())) else {
                return;
            };
            let same_attempt = attempt.with_untracked(|a| a.seed == stored.seed);
            if same_attempt {
                attempt.update(|a| a.merge_stored(&stored));
            } else {
                let current = attempt.with_untracked(|a| a.current);
                attempt.set(Attempt { current, ..stored });
                show_result.set(false);
                message.set(Some(tr("quiz-other-tab-new-attempt")));
            }
            // The question shown gets the feedback the other tab's answer earned.
            if feedback.with_untracked(Option::is_none) || !same_attempt {
                let index = attempt.with_untracked(|a| a.current);
                feedback.set(bank.with_value(|b| attempt.with_untracked(|a| a.feedback_for(b, index))));
                let (chosen, typed) =
                    bank.with_value(|b| attempt.with_untracked(|a| inputs_for(a.shown_answer(b, index))));
                selection.set(chosen);
                numeric.set(typed);
            }
        });
        on_cleanup(move || listener.remove());
    }
    // In an LMS: say at once that the quiz was opened (SCORM 1.2 LMSs otherwise mark a SCO
    // that set no status "completed" when it finishes), without undoing an earlier result.
    if resumed || (lms.is_some() && !done_before) {
        persist();
    }
    // Outside an LMS a new attempt is saved at once, so a second tab opened now continues it
    // instead of starting another; a linked question becomes where the learner is.
    if lms.is_none() && (linked || browser::load(&storage_key(bank.with_value(|b| b.version))).is_none()) {
        persist();
    }

    let go_to = move |index: usize| {
        attempt.update(|a| a.current = index);
        let shown = bank.with_value(|b| attempt.with_untracked(|a| a.feedback_for(b, index)));
        // An answer shown on request stays shown while the page is open.
        let asked = revealed.with_untracked(|r| r.contains(&index));
        feedback.set(shown.map(|f| if asked { f.revealed() } else { f }));
        let (chosen, typed) = bank.with_value(|b| attempt.with_untracked(|a| inputs_for(a.shown_answer(b, index))));
        selection.set(chosen);
        numeric.set(typed);
        show_result.set(false);
        persist();
    };

    let check = move |_| {
        let index = attempt.with_untracked(|a| a.current);
        let answer = bank.with_value(|b| match &b.questions[index].kind {
            QuestionKind::Single { .. } => selection.get_untracked().first().copied().map(Answer::Single),
            QuestionKind::Multiple { .. } => Some(Answer::Multiple(selection.get_untracked())),
            QuestionKind::Numeric { .. } => {
                let text = numeric.get_untracked().trim().replace(',', ".");
                Some(Answer::Numeric(text.parse::<f64>().unwrap_or(f64::NAN)))
            }
        });
        let Some(answer) = answer else {
            message.set(Some(tr("quiz-choose-first")));
            return;
        };
        let was_complete = bank.with_value(|b| attempt.with_untracked(|a| a.is_complete(b)));
        let response = match &answer {
            Answer::Single(i) => i.to_string(),
            Answer::Multiple(list) => list.iter().map(usize::to_string).collect::<Vec<_>>().join("[,]"),
            Answer::Numeric(x) => x.to_string(),
        };
        let result = bank.with_value(|b| {
            let mut result = None;
            attempt.update(|a| result = Some(a.answer(b, index, answer)));
            result
        });
        if let Some(Ok(f)) = &result {
            report_to_host(&bank, attempt, index, f.correct, &response, was_complete);
        }
        match result {
            Some(Ok(f)) => {
                message.set(None);
                feedback.set(Some(f));
                persist();
                // Keyboard and screen-reader users land on what the check said.
                browser::focus_when_drawn("[data-testid=feedback]");
            }
            Some(Err(e)) => message.set(Some(format!("{}.", capitalize(&msg(&e.message()))))),
            None => {}
        }
    };

    let try_again = move |_| {
        feedback.set(None);
        selection.set(Vec::new());
        numeric.set(String::new());
    };

    let new_attempt = move |_| {
        issuing.set(Issuing::Idle);
        attempt.set(bank.with_value(fresh_attempt));
        feedback.set(None);
        selection.set(Vec::new());
        show_result.set(false);
        persist();
    };

    let keep = move |record: IssuedCertificate| {
        let key = certificate::storage_key(bank.with_value(|b| b.version));
        if let Err(e) = browser::save(&key, &serde_json::to_string(&record).unwrap_or_default()) {
            message.set(Some(msg(&e)));
        }
        issued.set(Some(record));
    };

    // The name as it will appear (the issuer's own rules: NFC, white space collapsed, no control
    // or direction characters, 1 to 80 characters), or why it cannot.
    let checked_name = move || match normalize_learner_name(&name.get_untracked()) {
        Ok(text) => Some(text),
        Err(error) => {
            message.set(Some(format!("{}.", capitalize(&msg(&error.message())))));
            None
        }
    };

    // The signed certificate: the issuer grades the first answers itself.
    let request_signed = move || {
        if issuing.get_untracked() == Issuing::Busy {
            return;
        }
        let Some(holder) = checked_name() else { return };
        let body = bank.with_value(|b| {
            attempt.with_untracked(|a| {
                issuance::request_body(
                    b.version,
                    super::i18n::language(),
                    &holder,
                    &a.first_answers(),
                    a.seed,
                    a.attempt_id.as_deref(),
                )
            })
        });
        message.set(None);
        issuing.set(Issuing::Busy);
        leptos::task::spawn_local(async move {
            let reply = browser::fetch("POST", &browser::api_url(issuance::ISSUE_PATH), Some(&body)).await;
            match Outcome::from_reply(reply) {
                Outcome::Issued(signed) => {
                    issuing.set(Issuing::Idle);
                    // The name the credential carries: a second request of this attempt gets the
                    // first credential, under the first name.
                    let name = gradlab_credential::CredentialSummary::from_json(&signed.credential)
                        .map_or(holder, |summary| summary.subject_name);
                    keep(IssuedCertificate {
                        name,
                        id: signed.id,
                        credential: Some(signed.credential),
                        attempt_id: attempt.with_untracked(|a| a.attempt_id.clone()),
                    });
                }
                other => issuing.set(Issuing::Failed(other)),
            }
        });
    };

    // The app's own format-1 ID: integrity only, for when no issuer can be reached.
    let issue_integrity_only = move || {
        let Some(holder) = checked_name() else { return };
        let score = bank.with_value(|b| attempt.with_untracked(|a| a.score(b)));
        let cert = Certificate {
            name: holder,
            score_percent: score.percent,
            date: browser::today(),
            quiz_version: bank.with_value(|b| b.version),
        };
        match cert.id() {
            Ok(id) => {
                issuing.set(Issuing::Idle);
                keep(IssuedCertificate {
                    name: certificate::normalize_name(&cert.name),
                    id,
                    credential: None,
                    attempt_id: attempt.with_untracked(|a| a.attempt_id.clone()),
                });
            }
            Err(e) => message.set(Some(format!("{}.", capitalize(&msg(&e.message()))))),
        }
    };

    let question_view = move || {
        let a = attempt.get();
        let shown = feedback.get();
        bank.with_value(|b| {
            let index = a.current;
            let q = &b.questions[index];
            let total = b.questions.len();
            let locked = shown.is_some();
            let input_name = format!("q-{}", q.id);
            let inputs = match &q.kind {
                QuestionKind::Single { options } | QuestionKind::Multiple { options } => {
                    let multiple = matches!(q.kind, QuestionKind::Multiple { .. });
                    a.option_order(q)
                        .into_iter()
                        .map(|i| {
                            let text = options[i].text.clone();
                            let input_name = input_name.clone();
                            let kind = if multiple { "checkbox" } else { "radio" };
                            view! {
                                <label class="option">
                                    <input
                                        type=kind
                                        name=input_name
                                        disabled=locked
                                        prop:checked=move || selection.with(|s| s.contains(&i))
                                        on:change=move |_| {
                                            if multiple {
                                                selection.update(|s| {
                                                    if let Some(p) = s.iter().position(|&x| x == i) {
                                                        s.remove(p);
                                                    } else {
                                                        s.push(i);
                                                    }
                                                });
                                            } else {
                                                selection.set(vec![i]);
                                            }
                                        }
                                    />
                                    <span>{text}</span>
                                </label>
                            }
                        })
                        .collect_view()
                        .into_any()
                }
                QuestionKind::Numeric { unit, .. } => {
                    let unit = unit.clone();
                    view! {
                        <label class="numeric">
                            <span class="visually-hidden">{tr("quiz-your-answer")}</span>
                            <input
                                type="text"
                                inputmode="decimal"
                                data-testid="numeric-answer"
                                disabled=locked
                                prop:value=move || numeric.get()
                                on:input=move |ev| numeric.set(event_target_value(&ev))
                            />
                            <span>{unit}</span>
                        </label>
                    }
                    .into_any()
                }
            };
            let hint = if matches!(q.kind, QuestionKind::Multiple { .. }) {
                tr("quiz-select-all")
            } else {
                String::new()
            };
            view! {
                <p class="counter">{msg(&Msg::new("quiz-counter").arg("number", index + 1).arg("total", total).arg("topic", &q.topic))}</p>
                <fieldset class="question" data-testid="question" data-question-id=q.id.clone()>
                    <legend class="prompt" data-testid="question-prompt">{q.prompt.clone()}</legend>
                    <p class="hint">{hint}</p>
                    {inputs}
                </fieldset>
            }
            .into_any()
        })
    };

    let feedback_view = move || {
        let f: Feedback = feedback.get()?;
        let options = bank.with_value(|b| {
            let q = &b.questions[attempt.with(|a| a.current)];
            f.shown_options()
                .map(|o| {
                    let text = q.options()[o.index].text.clone();
                    let verdict = tr(match (o.correct, o.selected) {
                        (true, true) => "quiz-verdict-chosen-right",
                        (true, false) => "quiz-verdict-missed",
                        (false, true) => "quiz-verdict-chosen-wrong",
                        (false, false) => "quiz-verdict-wrong",
                    });
                    let class = if o.correct {
                        "opt-feedback right"
                    } else {
                        "opt-feedback wrong"
                    };
                    view! {
                        <li class=class>
                            <strong>{verdict}": "</strong>{text}<br/>
                            <span class="why">{o.explanation.clone()}</span>
                        </li>
                    }
                })
                .collect_view()
        });
        let banner = tr(if f.correct { "quiz-correct" } else { "quiz-not-quite" });
        let class = if f.correct {
            "feedback correct"
        } else {
            "feedback incorrect"
        };
        let lab_link = f.scenario.clone().map(|id| {
            let href = super::i18n::link(Route::Lab { scenario: Some(id) }.href());
            // Embedded (and so inside an LMS) the Lab opens beside the quiz: leaving the frame
            // would end the quiz's session.
            let new_tab = super::embed::is_active().then_some("_blank");
            view! { <a href=href class="lab-link" target=new_tab rel=new_tab.map(|_| "noopener")>{tr("quiz-see-in-lab")}</a> }
        });
        let explanation = f.shown_explanation().map(str::to_string);
        let hidden_hint = (!f.answer_revealed).then(|| view! { <p class="muted">{tr("quiz-answer-hidden")}</p> });
        // Until the answer shows: what went wrong with a number, and whether right options are
        // missing (without naming them).
        let hint = f
            .hint
            .clone()
            .filter(|_| !f.answer_revealed)
            .map(|text| view! { <p class="hint" data-testid="numeric-hint">{text}</p> });
        let missing = (!f.answer_revealed && f.missing_correct > 0).then(|| {
            let text = match f.missing_correct {
                1 => tr("quiz-missing-one"),
                count => msg(&Msg::new("quiz-missing-many").arg("count", count)),
            };
            view! { <p class="hint" data-testid="missing-correct">{text}</p> }
        });
        Some(view! {
            <section class=class data-testid="feedback" data-correct=f.correct.to_string()
                data-answer-revealed=f.answer_revealed.to_string() tabindex="-1">
                <h3>{banner}</h3>
                {explanation.map(|e| view! { <p>{e}</p> })}
                {hint}
                {missing}
                <ul class="option-feedback">{options}</ul>
                {hidden_hint}
                {lab_link}
            </section>
        })
    };

    let score_line = move || {
        let s = bank.with_value(|b| attempt.with(|a| a.score(b)));
        msg(&Msg::new("quiz-score-line")
            .arg("correct", s.first_try_correct)
            .arg("answered", s.answered)
            .arg("total", s.total))
    };

    let navigation = move || {
        let (index, total, complete) =
            bank.with_value(|b| attempt.with(|a| (a.current, b.questions.len(), a.is_complete(b))));
        let answered = feedback.with(Option::is_some);
        let wrong = feedback.with(|f| f.as_ref().is_some_and(|f| !f.correct));
        let hidden = feedback.with(|f| f.as_ref().is_some_and(|f| !f.answer_revealed));
        view! {
            <div class="quiz-actions">
                <button type="button" disabled=index == 0 on:click=move |_| go_to(index - 1)>{tr("quiz-previous")}</button>
                {(!answered).then(|| view! { <button type="button" class="primary" data-testid="check" on:click=check>{tr("quiz-check")}</button> })}
                {wrong.then(|| view! { <button type="button" data-testid="try-again" on:click=try_again>{tr("quiz-try-again")}</button> })}
                {hidden.then(|| view! { <button type="button" data-testid="show-answer" on:click=move |_| {
                    feedback.update(|f| *f = f.take().map(Feedback::revealed));
                    revealed.update(|r| {
                        r.insert(attempt.with_untracked(|a| a.current));
                    });
                    browser::focus_when_drawn("[data-testid=feedback]");
                }>{tr("quiz-show-answer")}</button> })}
                {(index + 1 < total).then(|| view! { <button type="button" data-testid="next" on:click=move |_| go_to(index + 1)>{tr("quiz-next")}</button> })}
                {complete.then(|| view! { <button type="button" class="primary" data-testid="see-result" on:click=move |_| {
                    show_result.set(true);
                    browser::focus_when_drawn("[data-testid=result]");
                }>{tr("quiz-see-result")}</button> })}
            </div>
        }
    };

    let issuing_view = move || match issuing.get() {
        Issuing::Idle => None,
        Issuing::Busy => Some(view! { <p class="muted" data-testid="issue-busy">{tr("issue-busy")}</p> }.into_any()),
        Issuing::Failed(outcome) => {
            let (retry, fallback) = (outcome.may_retry(), outcome.offers_integrity_only());
            let kind = match &outcome {
                Outcome::Issued(_) => "issued",
                Outcome::NotPassed { .. } => "not-passed",
                Outcome::Refused { .. } => "refused",
                Outcome::RateLimited { .. } => "rate-limited",
                Outcome::Unreachable { .. } => "unreachable",
            };
            let text = outcome.message().map(|m| msg(&m));
            Some(
                view! {
                    <div class="issue-problem" role="alert" data-testid="issue-problem" data-kind=kind>
                        <p>{text}</p>
                        <div class="quiz-actions">
                            {retry.then(|| view! {
                                <button type="button" class="primary" data-testid="issue-retry"
                                    on:click=move |_| request_signed()>{tr("issue-try-again")}</button>
                            })}
                            {fallback.then(|| view! {
                                <button type="button" data-testid="integrity-only"
                                    on:click=move |_| issue_integrity_only()>{tr("issue-integrity-only")}</button>
                            })}
                        </div>
                    </div>
                }
                .into_any(),
            )
        }
    };

    let result_view = move || {
        if !show_result.get() {
            return None;
        }
        let (score, threshold, unsolved, review) =
            bank.with_value(|b| attempt.with(|a| (a.score(b), b.pass_threshold, a.unsolved(b), a.missed_by_topic(b))));
        let new_tab = super::embed::is_active().then_some("_blank");
        let review = (!review.is_empty()).then(|| {
            let topics = review
                .into_iter()
                .map(|topic| {
                    let items = topic
                        .questions
                        .into_iter()
                        .map(|q| {
                            let lab = q.scenario.map(|id| {
                                let href = super::i18n::link(Route::Lab { scenario: Some(id) }.href());
                                view! { " · "<a href=href target=new_tab rel=new_tab.map(|_| "noopener")>{tr("quiz-see-in-lab")}</a> }
                            });
                            view! {
                                <li>
                                    <button type="button" class="link" on:click=move |_| go_to(q.index)>
                                        {msg(&Msg::new("quiz-question-link").arg("number", q.index + 1))}
                                    </button>
                                    {lab}
                                </li>
                            }
                        })
                        .collect_view();
                    view! { <li><strong>{topic.topic}</strong><ul>{items}</ul></li> }
                })
                .collect_view();
            view! {
                <section class="review" data-testid="review" aria-labelledby="review-title">
                    <h3 id="review-title">{tr("quiz-review-title")}</h3>
                    <ul>{topics}</ul>
                </section>
            }
        });
        let needed = format!("{:.0} %", threshold * 100.0);
        let retry_links = unsolved
            .into_iter()
            .map(|i| view! { <li><button type="button" class="link" on:click=move |_| go_to(i)>{msg(&Msg::new("quiz-question-link").arg("number", i + 1))}</button></li> })
            .collect_view();
        // One attempt, one certificate: once issued, the attempt shows it instead of the form.
        let issued_here = issued.with(|c| {
            c.as_ref()
                .filter(|c| c.attempt_id.is_some() && c.attempt_id == attempt.with(|a| a.attempt_id.clone()))
                .map(|c| c.name.clone())
        });
        let body = if let (true, Some(holder)) = (score.passed, issued_here) {
            let href = super::i18n::link(Route::Certificate.href());
            view! {
                <p>{msg(&Msg::new("quiz-passed").arg("percent", score.percent).arg("needed", &needed))}</p>
                <p data-testid="issued-for-attempt">{msg(&Msg::new("quiz-issued-for-attempt").arg("name", holder))}</p>
                <p><a href=href data-testid="show-certificate">{tr("quiz-show-certificate")}</a></p>
            }
            .into_any()
        } else if score.passed {
            view! {
                <p>{msg(&Msg::new("quiz-passed").arg("percent", score.percent).arg("needed", &needed))}</p>
                <form class="name-form" on:submit=move |ev| { ev.prevent_default(); request_signed(); }>
                    <label for="cert-name">{tr("quiz-name-label")}</label>
                    <input id="cert-name" data-testid="cert-name" maxlength="80" required
                        prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) />
                    <button type="submit" class="primary" data-testid="get-certificate"
                        disabled=move || issuing.with(|i| *i == Issuing::Busy)
                        aria-busy=move || issuing.with(|i| *i == Issuing::Busy).then_some("true")>
                        {tr("quiz-get-certificate")}
                    </button>
                </form>
                {issuing_view}
            }
            .into_any()
        } else {
            view! {
                <p>{msg(&Msg::new("quiz-not-passed").arg("percent", score.percent).arg("needed", &needed))}</p>
                <ul class="retry">{retry_links}</ul>
                <button type="button" data-testid="new-attempt" on:click=new_attempt>{tr("quiz-new-attempt")}</button>
            }
            .into_any()
        };
        Some(view! {
            <section class="result" data-testid="result" data-passed=score.passed.to_string() aria-live="polite" tabindex="-1">
                <h2>{tr("quiz-result-title")}</h2>
                {body}
                {review}
            </section>
        })
    };

    view! {
        <section class="quiz">
            <h2>{tr("quiz-title")}</h2>
            <p class="muted">{tr(if lms.is_some() { "quiz-intro-lms" } else { "quiz-intro" })}</p>
            <p class="muted" data-testid="score-line">{score_line}</p>
            <div role="status" aria-live="polite" class="message">{move || message.get()}</div>
            {question_view}
            <div aria-live="polite">{feedback_view}</div>
            {navigation}
            {result_view}
            {move || issued.get().map(|c| view! { <CertificateCard issued=c topics=topics.clone() /> })}
        </section>
    }
}
