//! The certificate card (printable, downloadable as PNG, with a share link) and the page that
//! shows the certificate this browser earned. A signed certificate carries its Open Badges
//! credential: the card names the issuer, offers the credential as JSON, and bakes it into the
//! PNG; an integrity-only one (format 1) says plainly what it is.

use leptos::prelude::*;

use super::browser;
use super::i18n::{msg, tr};
use crate::credential::{baked_png, CredentialSummary};
use crate::i18n::Msg;
use crate::quiz::bank::QuestionBank;
use crate::quiz::certificate::{self, IssuedCertificate};
use crate::route::Route;

/// The certificate this browser earned, if any; a stored one that cannot be read is reported,
/// not taken for "no certificate".
pub(super) fn load_issued(quiz_version: u8) -> Result<Option<IssuedCertificate>, String> {
    let key = certificate::storage_key(quiz_version);
    let Some(saved) = browser::load(&key) else {
        return Ok(None);
    };
    serde_json::from_str(&saved).map(Some).map_err(|e| {
        // Kept aside before a new certificate can take the key, as the quiz keeps its saves.
        match browser::keep_unreadable(&key, &saved) {
            Ok(backup) => msg(&Msg::new("cert-stored-kept").arg("key", backup).arg("reason", e)),
            Err(_) => msg(&Msg::new("cert-stored-unreadable").arg("key", &key).arg("reason", e)),
        }
    })
}

/// What the certificate image shows.
struct Drawing<'a> {
    name: &'a str,
    score: u8,
    date: &'a str,
    version: u8,
    id: &'a str,
}

/// Draws the certificate onto a canvas and returns it as PNG bytes. The name is drawn as text
/// (`fillText`), never parsed as markup.
fn draw_png(d: &Drawing) -> Result<Vec<u8>, String> {
    let (canvas, ctx) = browser::offscreen_canvas(1200, 800)?;
    ctx.set_fill_style_str("#ffffff");
    ctx.fill_rect(0.0, 0.0, 1200.0, 800.0);
    ctx.set_stroke_style_str("#0b5cad");
    ctx.set_line_width(12.0);
    ctx.stroke_rect(30.0, 30.0, 1140.0, 740.0);
    ctx.set_text_align("center");
    ctx.set_fill_style_str("#1b1f24");
    ctx.set_font("bold 56px sans-serif");
    let _ = ctx.fill_text(&tr("cert-kicker"), 600.0, 170.0);
    ctx.set_font("28px sans-serif");
    let _ = ctx.fill_text(&tr("cert-quiz-name"), 600.0, 230.0);
    ctx.set_font("bold 64px serif");
    let _ = ctx.fill_text(d.name, 600.0, 380.0);
    ctx.set_font("30px sans-serif");
    let _ = ctx.fill_text(
        &msg(&Msg::new("cert-passed-short")
            .arg("score", d.score)
            .arg("date", d.date)
            .arg("version", d.version)),
        600.0,
        460.0,
    );
    ctx.set_font("bold 40px monospace");
    let _ = ctx.fill_text(d.id, 600.0, 600.0);
    ctx.set_font("22px sans-serif");
    ctx.set_fill_style_str("#4a5360");
    let _ = ctx.fill_text(&tr("cert-verify-hint"), 600.0, 660.0);
    browser::canvas_png(&canvas)
}

/// The PNG download: with the signed credential baked in when there is one.
fn download_png(drawing: &Drawing, credential: Option<&serde_json::Value>) -> Result<(), String> {
    let png = draw_png(drawing)?;
    let png = match credential {
        Some(credential) => baked_png::bake(&png, &credential.to_string()).map_err(|e| e.to_string())?,
        None => png,
    };
    browser::download_bytes(&format!("certificate-{}.png", drawing.id), "image/png", &png)
}

/// The facts a card shows, from the signed credential or from the format-1 ID and name.
struct Facts {
    name: String,
    score: u8,
    date: String,
    version: u8,
    /// Issuer name and DID, for a signed certificate.
    signed_by: Option<(String, String)>,
}

fn facts(issued: &IssuedCertificate) -> Result<Facts, String> {
    match &issued.credential {
        Some(credential) => {
            let summary = CredentialSummary::from_json(credential)
                .map_err(|e| msg(&Msg::new("cert-stored-invalid").arg("reason", e)))?;
            Ok(Facts {
                name: summary.subject_name,
                score: summary.score_percent,
                date: summary.valid_from_date.iso(),
                version: summary.quiz_version,
                signed_by: Some((summary.issuer_name, summary.issuer_did)),
            })
        }
        None => {
            let cert = certificate::verify(&issued.id, &issued.name, browser::today())
                .map_err(|e| msg(&Msg::new("cert-stored-invalid").arg("reason", msg(&e.message()))))?;
            Ok(Facts {
                name: cert.name,
                score: cert.score_percent,
                date: cert.date.iso(),
                version: cert.quiz_version,
                signed_by: None,
            })
        }
    }
}

#[component]
pub fn CertificateCard(issued: IssuedCertificate) -> impl IntoView {
    let status = RwSignal::new(None::<String>);
    let facts = match facts(&issued) {
        Ok(facts) => facts,
        Err(text) => {
            return view! { <p role="alert" class="error" data-testid="cert-stored-problem">{text}</p> }.into_any()
        }
    };
    let id = issued.id.clone();
    // A signed ID names its credential, so the link needs no name; a format-1 ID is checked with it.
    let share = match &facts.signed_by {
        Some(_) => format!("{}?view=verify&id={}", browser::page_base(), crate::route::encode(&id)),
        None => format!(
            "{}{}",
            browser::page_base(),
            Route::Verify {
                id: id.clone(),
                name: facts.name.clone(),
            }
            .query()
        ),
    };
    let signed = facts.signed_by.is_some();
    let kind = match &facts.signed_by {
        Some((issuer, did)) => view! {
            <p class="cert-kind signed">{tr("cert-signed")}</p>
            <p class="cert-issuer" data-testid="cert-issuer">
                {msg(&Msg::new("cert-signed-by").arg("issuer", issuer))}" "<code>{did.clone()}</code>
            </p>
        }
        .into_any(),
        None => {
            view! { <p class="cert-kind" data-testid="cert-integrity-only">{tr("cert-integrity-only")}</p> }.into_any()
        }
    };
    let credential = StoredValue::new(issued.credential.clone());
    let drawing = StoredValue::new((
        facts.name.clone(),
        facts.score,
        facts.date.clone(),
        facts.version,
        id.clone(),
    ));
    let download = move |_| {
        let result = drawing.with_value(|(name, score, date, version, id)| {
            let drawing = Drawing {
                name,
                score: *score,
                date,
                version: *version,
                id,
            };
            credential.with_value(|c| download_png(&drawing, c.as_ref()))
        });
        status.set(Some(match result {
            Ok(()) => tr("cert-downloaded"),
            Err(e) => msg(&Msg::new("cert-download-failed").arg("reason", e)),
        }));
    };
    let json_id = id.clone();
    let download_json = move |_| {
        let result = credential.with_value(|c| match c {
            Some(credential) => {
                let text = serde_json::to_string_pretty(credential).unwrap_or_else(|_| credential.to_string());
                browser::download_bytes(
                    &format!("certificate-{json_id}.json"),
                    "application/json",
                    text.as_bytes(),
                )
            }
            None => Ok(()),
        });
        status.set(Some(match result {
            Ok(()) => tr("cert-json-downloaded"),
            Err(e) => msg(&Msg::new("cert-download-failed").arg("reason", e)),
        }));
    };
    view! {
        <article class="certificate" data-testid="certificate" data-signed=signed.to_string()>
            <p class="cert-kicker">{tr("cert-kicker")}</p>
            <h2 class="cert-name" data-testid="cert-holder">{facts.name.clone()}</h2>
            <p>{msg(&Msg::new("cert-passed").arg("score", facts.score).arg("date", &facts.date).arg("version", facts.version))}</p>
            {kind}
            <p class="cert-id">{tr("cert-id-label")}" "<code data-testid="certificate-id">{id}</code></p>
            <p class="share no-print">
                <label for="share-link">{tr("cert-share-label")}</label>
                <input id="share-link" readonly prop:value=share.clone() />
                <a href=share.clone() data-testid="share-link">{tr("cert-open-verify")}</a>
            </p>
            <div class="quiz-actions no-print">
                <button type="button" on:click=move |_| browser::print()>{tr("cert-print")}</button>
                <button type="button" data-testid="download-png" on:click=download>{tr("cert-download")}</button>
                {signed.then(|| view! {
                    <button type="button" data-testid="download-json" on:click=download_json>{tr("cert-download-json")}</button>
                })}
            </div>
            {signed.then(|| view! { <p class="muted no-print">{tr("cert-baked-note")}</p> })}
            <p role="status" class="message no-print">{move || status.get()}</p>
        </article>
    }
    .into_any()
}

#[component]
pub fn CertificatePage(bank: QuestionBank) -> impl IntoView {
    match load_issued(bank.version) {
        Ok(Some(issued)) => view! { <CertificateCard issued=issued /> }.into_any(),
        Ok(None) => view! {
            <section>
                <h2>{tr("cert-none-title")}</h2>
                <p>{tr("cert-none-text")}" "<a href=super::i18n::link(Route::Quiz.query())>{tr("cert-take-quiz")}</a></p>
            </section>
        }
        .into_any(),
        Err(problem) => view! {
            <section>
                <h2>{tr("cert-none-title")}</h2>
                <p role="alert" class="error" data-testid="cert-stored-problem">{problem}</p>
                <p><a href=super::i18n::link(Route::Quiz.query())>{tr("cert-take-quiz")}</a></p>
            </section>
        }
        .into_any(),
    }
}
