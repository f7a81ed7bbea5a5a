//! The verification page: anyone pastes an ID (or opens a share link) and sees what it certifies.

use leptos::prelude::*;

use super::{browser, capitalize};
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
                    <h3>"Valid certificate"</h3>
                    <p>{format!(
                        "{} passed the Gradient Accumulation Lab quiz (version {}) with {} % on {}.",
                        cert.name, cert.quiz_version, cert.score_percent, cert.date.iso()
                    )}</p>
                </div>
            }
            .into_any(),
            Err(e) => view! {
                <div class="verdict invalid" data-testid="verify-result" data-valid="false">
                    <h3>"Not valid"</h3>
                    <p>{format!("{}.", capitalize(&e.to_string()))}</p>
                </div>
            }
            .into_any(),
        })
    };
    view! {
        <section class="verify">
            <h2>"Verify a certificate"</h2>
            <form on:submit=move |ev| { ev.prevent_default(); result.set(Some(check())); }>
                <label for="verify-id">"Certificate ID"</label>
                <input id="verify-id" data-testid="verify-id" autocomplete="off" spellcheck="false"
                    placeholder="XXXXX-XXXXX-XXXXX"
                    prop:value=move || id_text.get() on:input=move |ev| id_text.set(event_target_value(&ev)) />
                <label for="verify-name">"Name on the certificate"</label>
                <input id="verify-name" data-testid="verify-name"
                    prop:value=move || name_text.get() on:input=move |ev| name_text.set(event_target_value(&ev)) />
                <button type="submit" class="primary" data-testid="verify">"Verify"</button>
            </form>
            <div aria-live="polite">{result_view}</div>
            <p class="trust" data-testid="trust-note">
                "What this check means: this app has no server, so it cannot keep a signing key secret. "
                "A valid ID proves integrity: the name, score, date and quiz version are exactly those it was "
                "issued with, and a typo or an edit is detected. It does not prove who issued it: anyone with "
                "this app's code could make a valid ID."
            </p>
        </section>
    }
}
