//! The verification page: anyone pastes an ID (or opens a share link) and sees what it certifies.

use leptos::prelude::*;

use super::i18n::{msg, tr};
use super::{browser, capitalize};
use crate::i18n::Msg;
use crate::quiz::certificate;

#[component]
pub fn VerifyPage(id: String, name: String) -> impl IntoView {
    let id_text = RwSignal::new(id.clone());
    let name_text = RwSignal::new(name.clone());
    let check = move || certificate::verify(&id_text.get_untracked(), &name_text.get_untracked(), browser::today());
    let result = RwSignal::new((!id.is_empty()).then(check));
    let result_view = move || {
        result.get().map(|r| match r {
            Ok(cert) => view! {
                <div class="verdict valid" data-testid="verify-result" data-valid="true">
                    <h3>{tr("verify-valid")}</h3>
                    <p>{msg(&Msg::new("verify-valid-text")
                        .arg("name", &cert.name)
                        .arg("version", cert.quiz_version)
                        .arg("score", cert.score_percent)
                        .arg("date", cert.date.iso()))}</p>
                </div>
            }
            .into_any(),
            Err(e) => view! {
                <div class="verdict invalid" data-testid="verify-result" data-valid="false">
                    <h3>{tr("verify-invalid")}</h3>
                    <p>{format!("{}.", capitalize(&msg(&e.message())))}</p>
                </div>
            }
            .into_any(),
        })
    };
    view! {
        <section class="verify">
            <h2>{tr("verify-title")}</h2>
            <form on:submit=move |ev| { ev.prevent_default(); result.set(Some(check())); }>
                <label for="verify-id">{tr("verify-id-label")}</label>
                <input id="verify-id" data-testid="verify-id" autocomplete="off" spellcheck="false"
                    placeholder="XXXXX-XXXXX-XXXXX"
                    prop:value=move || id_text.get() on:input=move |ev| id_text.set(event_target_value(&ev)) />
                <label for="verify-name">{tr("verify-name-label")}</label>
                <input id="verify-name" data-testid="verify-name"
                    prop:value=move || name_text.get() on:input=move |ev| name_text.set(event_target_value(&ev)) />
                <button type="submit" class="primary" data-testid="verify">{tr("verify-button")}</button>
            </form>
            <div aria-live="polite">{result_view}</div>
            <p class="trust" data-testid="trust-note">
                {tr("verify-trust")}
            </p>
        </section>
    }
}
