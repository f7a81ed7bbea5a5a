//! The buttons under the question: previous, check, try again, show the answer, next, result.

use leptos::prelude::*;

use super::state::Quiz;
use crate::i18n::tr;

#[component]
pub(super) fn Navigation(quiz: Quiz) -> impl IntoView {
    let Quiz {
        bank,
        attempt,
        feedback,
        ..
    } = quiz;
    move || {
        let (index, total, complete) =
            bank.with_value(|b| attempt.with(|a| (a.current, b.questions.len(), a.is_complete(b))));
        let answered = feedback.with(Option::is_some);
        let wrong = feedback.with(|f| f.as_ref().is_some_and(|f| !f.correct));
        let hidden = feedback.with(|f| f.as_ref().is_some_and(|f| !f.answer_revealed));
        view! {
            <div class="quiz-actions">
                <button type="button" disabled=index == 0 on:click=move |_| quiz.go_to(index - 1)>{tr("quiz-previous")}</button>
                {(!answered).then(|| view! { <button type="button" class="primary" data-testid="check" on:click=move |_| quiz.check()>{tr("quiz-check")}</button> })}
                {wrong.then(|| view! { <button type="button" data-testid="try-again" on:click=move |_| quiz.try_again()>{tr("quiz-try-again")}</button> })}
                {hidden.then(|| view! { <button type="button" data-testid="show-answer" on:click=move |_| quiz.show_answer()>{tr("quiz-show-answer")}</button> })}
                {(index + 1 < total).then(|| view! { <button type="button" data-testid="next" on:click=move |_| quiz.go_to(index + 1)>{tr("quiz-next")}</button> })}
                {complete.then(|| view! { <button type="button" class="primary" data-testid="see-result" on:click=move |_| quiz.see_result()>{tr("quiz-see-result")}</button> })}
            </div>
        }
    }
}
