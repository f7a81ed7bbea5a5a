//! What a check said about the question shown.

use leptos::prelude::*;

use super::state::Quiz;
use crate::i18n::{msg, tr};
use gradlab_i18n::Msg;
use gradlab_quiz::attempt::Feedback;
use gradlab_route::Route;

#[component]
pub(super) fn FeedbackView(quiz: Quiz) -> impl IntoView {
    let Quiz {
        bank,
        attempt,
        feedback,
        ..
    } = quiz;
    move || {
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
            let href = crate::i18n::link(Route::for_scenario(&id).href());
            // Embedded (and so inside an LMS) the Lab opens beside the quiz: leaving the frame
            // would end the quiz's session.
            let new_tab = crate::embed::is_active().then_some("_blank");
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
    }
}
