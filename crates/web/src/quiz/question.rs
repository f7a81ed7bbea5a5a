//! The question shown: its counter, prompt and inputs.

use leptos::prelude::*;

use super::state::Quiz;
use crate::i18n::{msg, tr};
use gradlab_i18n::Msg;
use gradlab_quiz::bank::QuestionKind;
use gradlab_quiz::page;

#[component]
pub(super) fn QuestionView(quiz: Quiz) -> impl IntoView {
    let Quiz {
        bank,
        attempt,
        feedback,
        selection,
        numeric,
        ..
    } = quiz;
    move || {
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
                                        on:change=move |_| selection.update(|s| page::toggle(s, i, multiple))
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
    }
}
