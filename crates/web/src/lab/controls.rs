//! The settings form: one labelled field per control, its error next to it, everything usable
//! by keyboard. The values and their validation live in `lab_state::controls`.

use leptos::prelude::*;

use super::super::i18n::{msg, num, tr};
use gradlab_i18n::Msg;
use gradlab_lab_state::controls::{Control, InputKind, LabControls};

fn label_id(control: Control) -> String {
    format!("control-{}-label", control.key())
}

fn field_id(control: Control) -> String {
    format!("control-{}", control.key())
}

/// A choice's options: its ids, each shown by the message `<key>-<id>`.
fn options(control: Control) -> Vec<(String, String)> {
    match control.input() {
        InputKind::Choice(ids) => ids
            .into_iter()
            .map(|id| (id.to_string(), tr(&format!("{}-{id}", control.key()))))
            .collect(),
        _ => Vec::new(),
    }
}

/// One control: a select for choices, a text field for numbers and widths.
#[component]
pub(super) fn Field(
    control: Control,
    controls: RwSignal<LabControls>,
    typo: RwSignal<Option<(Control, Msg)>>,
    locked: bool,
) -> impl IntoView {
    let id = field_id(control);
    let error_id = format!("{id}-error");
    let error = move || {
        typo.with(|t| t.as_ref().filter(|(c, _)| *c == control).map(|(_, m)| m.clone()))
            .or_else(|| controls.with(|c| c.error_for(control)))
            .map(|m| crate::capitalize(&msg(&m)))
    };
    let disabled = move || locked || controls.with(|c| !c.is_editable(control));
    // A preset's fixed fields show the preset's own values (its first run's, where runs differ).
    let value = move || {
        let text = controls.with(|c| {
            if c.is_editable(control) {
                c.text_of(control)
            } else {
                c.sandbox_from(&c.lab_config()).text_of(control)
            }
        });
        // A decimal comma in Spanish; typing either a comma or a point is accepted.
        if control.input() == InputKind::Decimal {
            num(&text)
        } else {
            text
        }
    };
    let set = move |text: String| match controls.with_untracked(|c| c.with_text(control, &text)) {
        Ok(next) => {
            typo.set(None);
            controls.set(next);
        }
        Err(message) => typo.set(Some((control, message))),
    };
    let choices = options(control);
    let input = if choices.is_empty() {
        let hint = (control == Control::Hidden).then(|| tr("control-hidden-hint"));
        let mode = match control.input() {
            InputKind::Decimal => "decimal",
            InputKind::Integer => "numeric",
            InputKind::Choice(_) | InputKind::Text => "text",
        };
        view! {
            <input id=id.clone() type="text" inputmode=mode autocomplete="off" spellcheck="false"
                prop:value=value
                placeholder=hint
                aria-describedby=error_id.clone()
                aria-invalid=move || error().is_some().to_string()
                disabled=disabled
                on:input=move |ev| set(event_target_value(&ev)) />
        }
        .into_any()
    } else {
        let items = choices
            .into_iter()
            .map(|(value_id, text)| {
                let selected_id = value_id.clone();
                view! { <option value=value_id selected=move || value() == selected_id>{text}</option> }
            })
            .collect_view();
        view! {
            <select id=id.clone() aria-describedby=error_id.clone() disabled=disabled
                prop:value=value
                on:change=move |ev| set(event_target_value(&ev))>
                {items}
            </select>
        }
        .into_any()
    };
    view! {
        <div class="field" class:invalid=move || error().is_some() data-control=control.key()>
            <label id=label_id(control) for=field_id(control)>{tr(&format!("control-{}-label", control.key()))}</label>
            {input}
            <p id=error_id class="field-error" aria-live="polite">{error}</p>
        </div>
    }
}

/// The settings form. `copy_to_sandbox` opens the preset's settings in the sandbox.
#[component]
pub fn ControlsPanel(
    controls: RwSignal<LabControls>,
    typo: RwSignal<Option<(Control, Msg)>>,
    copy_to_sandbox: Callback<()>,
    /// Controls an embedding page hides or locks.
    #[prop(optional)]
    hidden: Vec<Control>,
    #[prop(optional)] locked: Vec<Control>,
) -> impl IntoView {
    let is_preset = move || controls.with(|c| !c.is_editable(Control::LearningRate));
    let fields = Control::ALL
        .into_iter()
        // The memory budget is set beside the memory bars it changes.
        .filter(|c| !matches!(c, Control::Scenario | Control::MemoryBudget) && !hidden.contains(c))
        .map(|control| {
            let locked = locked.contains(&control);
            view! { <Field control=control controls=controls typo=typo locked=locked /> }
        })
        .collect_view();
    view! {
        <section class="controls" aria-labelledby="controls-title">
            <h3 id="controls-title">{tr("controls-title")}</h3>
            <p class="muted" hidden=move || !is_preset()>
                {tr("controls-preset-note")}" "
                <button type="button" class="link-button" data-testid="copy-to-sandbox"
                    on:click=move |_| copy_to_sandbox.run(())>{tr("controls-copy-to-sandbox")}</button>
            </p>
            <div class="field-grid">{fields}</div>
        </section>
    }
}
