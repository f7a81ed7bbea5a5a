//! The certificate card (printable, downloadable as PNG, with a share link) and the page that
//! shows the certificate this browser earned.

use leptos::prelude::*;

use super::browser;
use super::i18n::{msg, tr};
use crate::i18n::Msg;
use crate::quiz::bank::QuestionBank;
use crate::quiz::certificate::{self, IssuedCertificate};
use crate::route::Route;

/// Draws the certificate onto a canvas and downloads it.
fn download_png(name: &str, score: u8, date: &str, version: u8, id: &str) -> Result<(), String> {
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
    let _ = ctx.fill_text(name, 600.0, 380.0);
    ctx.set_font("30px sans-serif");
    let _ = ctx.fill_text(
        &msg(&Msg::new("cert-passed-short")
            .arg("score", score)
            .arg("date", date)
            .arg("version", version)),
        600.0,
        460.0,
    );
    ctx.set_font("bold 40px monospace");
    let _ = ctx.fill_text(id, 600.0, 600.0);
    ctx.set_font("22px sans-serif");
    ctx.set_fill_style_str("#4a5360");
    let _ = ctx.fill_text(&tr("cert-verify-hint"), 600.0, 660.0);
    browser::download_canvas_png(&canvas, &format!("certificate-{id}.png"))
}

#[component]
pub fn CertificateCard(issued: IssuedCertificate) -> impl IntoView {
    let today = browser::today();
    let status = RwSignal::new(None::<String>);
    match certificate::verify(&issued.id, &issued.name, today) {
        Err(e) => {
            let text = msg(&Msg::new("cert-stored-invalid").arg("reason", msg(&e.message())));
            view! { <p role="alert" class="error">{text}</p> }.into_any()
        }
        Ok(cert) => {
            let share = format!(
                "{}{}",
                browser::page_base(),
                Route::Verify {
                    id: issued.id.clone(),
                    name: cert.name.clone(),
                }
                .query()
            );
            let date = cert.date.iso();
            let (name, id) = (cert.name.clone(), issued.id.clone());
            let (png_date, png_name, png_id) = (date.clone(), name.clone(), id.clone());
            let (score, version) = (cert.score_percent, cert.quiz_version);
            view! {
                <article class="certificate" data-testid="certificate">
                    <p class="cert-kicker">{tr("cert-kicker")}</p>
                    <h2 class="cert-name" data-testid="cert-holder">{name}</h2>
                    <p>{msg(&Msg::new("cert-passed").arg("score", score).arg("date", &date).arg("version", version))}</p>
                    <p class="cert-id">{tr("cert-id-label")}" "<code data-testid="certificate-id">{id}</code></p>
                    <p class="share no-print">
                        <label for="share-link">{tr("cert-share-label")}</label>
                        <input id="share-link" readonly prop:value=share.clone() />
                        <a href=share.clone() data-testid="share-link">{tr("cert-open-verify")}</a>
                    </p>
                    <div class="quiz-actions no-print">
                        <button type="button" on:click=move |_| browser::print()>{tr("cert-print")}</button>
                        <button type="button" data-testid="download-png" on:click=move |_| {
                            let result = download_png(&png_name, score, &png_date, version, &png_id);
                            status.set(Some(match result {
                                Ok(()) => tr("cert-downloaded"),
                                Err(e) => msg(&Msg::new("cert-download-failed").arg("reason", e)),
                            }));
                        }>{tr("cert-download")}</button>
                    </div>
                    <p role="status" class="message no-print">{move || status.get()}</p>
                </article>
            }
            .into_any()
        }
    }
}

#[component]
pub fn CertificatePage(bank: QuestionBank) -> impl IntoView {
    let stored = browser::load(&certificate::storage_key(bank.version))
        .and_then(|s| serde_json::from_str::<IssuedCertificate>(&s).ok());
    match stored {
        Some(issued) => view! { <CertificateCard issued=issued /> }.into_any(),
        None => view! {
            <section>
                <h2>{tr("cert-none-title")}</h2>
                <p>{tr("cert-none-text")}" "<a href=super::i18n::link(Route::Quiz.query())>{tr("cert-take-quiz")}</a></p>
            </section>
        }
        .into_any(),
    }
}
