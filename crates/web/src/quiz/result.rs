//! The result step: the score, the questions to review, and the certificate (the name form, the
//! request's progress, or the certificate this attempt already has).

use leptos::prelude::*;

use super::state::Quiz;
use crate::i18n::{msg, tr};
use gradlab_i18n::Msg;
use gradlab_quiz::attempt::TopicReview;
use gradlab_quiz::issuance::Issuing;
use gradlab_route::Route;

#[component]
pub(super) fn ResultView(quiz: Quiz) -> impl IntoView {
    let Quiz {
        bank,
        attempt,
        show_result,
        issued,
        ..
    } = quiz;
    move || {
        if !show_result.get() {
            return None;
        }
        let (score, threshold, unsolved, review) =
            bank.with_value(|b| attempt.with(|a| (a.score(b), b.pass_threshold, a.unsolved(b), a.missed_by_topic(b))));
        let review = (!review.is_empty()).then(|| view! { <Review quiz review /> });
        let needed = format!("{:.0} %", threshold * 100.0);
        let retry_links = unsolved
            .into_iter()
            .map(|i| view! { <li><button type="button" class="link" on:click=move |_| quiz.go_to(i)>{msg(&Msg::new("quiz-question-link").arg("number", i + 1))}</button></li> })
            .collect_view();
        // One attempt, one certificate: once issued, the attempt shows it instead of the form.
        let issued_here = attempt.with(|a| {
            issued.with(|c| {
                c.as_ref()
                    .filter(|c| c.is_for_attempt(a.attempt_id.as_deref()))
                    .map(|c| c.name.clone())
            })
        });
        let passed = msg(&Msg::new("quiz-passed")
            .arg("percent", score.percent)
            .arg("needed", &needed));
        let body = if let (true, Some(holder)) = (score.passed, issued_here) {
            let href = crate::i18n::link(Route::Certificate.href());
            view! {
                <p>{passed}</p>
                <p data-testid="issued-for-attempt">{msg(&Msg::new("quiz-issued-for-attempt").arg("name", holder))}</p>
                <p><a href=href data-testid="show-certificate">{tr("quiz-show-certificate")}</a></p>
            }
            .into_any()
        } else if score.passed {
            view! {
                <p>{passed}</p>
                <CertificateForm quiz />
            }
            .into_any()
        } else {
            view! {
                <p>{msg(&Msg::new("quiz-not-passed").arg("percent", score.percent).arg("needed", &needed))}</p>
                <ul class="retry">{retry_links}</ul>
                <button type="button" data-testid="new-attempt" on:click=move |_| quiz.new_attempt()>{tr("quiz-new-attempt")}</button>
            }
            .into_any()
        };
        let grade = quiz.lti.map(|link| {
            let resend = Callback::new(move |()| quiz.send_lti_grade());
            view! { <crate::lti::LtiGrade link resend /> }
        });
        Some(view! {
            <section class="result" data-testid="result" data-passed=score.passed.to_string() aria-live="polite" tabindex="-1">
                <h2>{tr("quiz-result-title")}</h2>
                {grade}
                {body}
                {review}
            </section>
        })
    }
}

/// The questions not answered right the first time, by topic, each with its way back (and to
/// the Lab).
#[component]
fn Review(quiz: Quiz, review: Vec<TopicReview>) -> impl IntoView {
    let new_tab = crate::embed::is_active().then_some("_blank");
    let topics = review
        .into_iter()
        .map(|topic| {
            let items = topic
                .questions
                .into_iter()
                .map(|q| {
                    let lab = q.scenario.map(|id| {
                        let href = crate::i18n::link(Route::for_scenario(&id).href());
                        view! { " · "<a href=href target=new_tab rel=new_tab.map(|_| "noopener")>{tr("quiz-see-in-lab")}</a> }
                    });
                    view! {
                        <li>
                            <button type="button" class="link" on:click=move |_| quiz.go_to(q.index)>
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
}

/// The name for a passed attempt's certificate, and how its request stands.
#[component]
fn CertificateForm(quiz: Quiz) -> impl IntoView {
    let Quiz { name, issuing, lti, .. } = quiz;
    // After an LTI launch the certificate carries the name the course platform knows.
    let from_platform = move || lti.is_some_and(|link| link.learner_name().is_some());
    view! {
        <form class="name-form" on:submit=move |ev| { ev.prevent_default(); quiz.request_signed(); }>
            <label for="cert-name">{tr("quiz-name-label")}</label>
            <input id="cert-name" data-testid="cert-name" maxlength="80" required
                readonly=from_platform aria-describedby=move || from_platform().then_some("cert-name-source")
                prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) />
            {move || from_platform().then(|| view! { <p id="cert-name-source" class="muted">{tr("lti-name-from-platform")}</p> })}
            <button type="submit" class="primary" data-testid="get-certificate"
                disabled=move || issuing.with(Issuing::is_busy)
                aria-busy=move || issuing.with(Issuing::is_busy).then_some("true")>
                {tr("quiz-get-certificate")}
            </button>
        </form>
        <IssuingView quiz />
    }
}

/// A request under way, or why it failed and what can be done.
#[component]
fn IssuingView(quiz: Quiz) -> impl IntoView {
    move || match quiz.issuing.get() {
        Issuing::Idle => None,
        Issuing::Busy => Some(view! { <p class="muted" data-testid="issue-busy">{tr("issue-busy")}</p> }.into_any()),
        Issuing::Failed(outcome) => {
            let (retry, fallback) = (outcome.may_retry(), outcome.offers_integrity_only());
            let text = outcome.message().map(|m| msg(&m));
            Some(
                view! {
                    <div class="issue-problem" role="alert" data-testid="issue-problem" data-kind=outcome.kind()>
                        <p>{text}</p>
                        <div class="quiz-actions">
                            {retry.then(|| view! {
                                <button type="button" class="primary" data-testid="issue-retry"
                                    on:click=move |_| quiz.request_signed()>{tr("issue-try-again")}</button>
                            })}
                            {fallback.then(|| view! {
                                <button type="button" data-testid="integrity-only"
                                    on:click=move |_| quiz.issue_integrity_only()>{tr("issue-integrity-only")}</button>
                            })}
                        </div>
                    </div>
                }
                .into_any(),
            )
        }
    }
}
