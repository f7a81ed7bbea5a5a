//! The certificate card (printable, downloadable as PNG, with a share link) and the page that
//! shows the certificate this browser earned. A signed certificate carries its Open Badges
//! credential: the card names the issuer, offers the credential as JSON, and bakes it into the
//! PNG; an integrity-only one (format 1) says plainly what it is.

use leptos::prelude::*;

use super::browser;
use super::i18n::{msg, tr};
use gradlab_credential::{baked_png, CredentialSummary};
use gradlab_i18n::Msg;
use gradlab_quiz::bank::QuestionBank;
use gradlab_quiz::certificate::{self, IssuedCertificate};
use gradlab_route::Route;

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

/// The newest certificate this browser earned, with its quiz version: this version's, else an
/// older one's (an update of the quiz never hides a certificate already earned, nor does a
/// stored certificate that cannot be read hide an older one that can; that problem is reported
/// only when no certificate can be shown).
fn load_newest_issued() -> Result<Option<(u8, IssuedCertificate)>, String> {
    let mut problem = None;
    for version in QuestionBank::shipped_versions().rev() {
        match load_issued(version) {
            Ok(Some(issued)) => return Ok(Some((version, issued))),
            Ok(None) => {}
            Err(unreadable) => {
                problem.get_or_insert(unreadable);
            }
        }
    }
    problem.map_or(Ok(None), Err)
}

/// What a certificate of quiz version `version` says was learned, in the page's language.
fn topics_of(version: u8) -> Vec<String> {
    QuestionBank::shipped(version, super::i18n::language())
        .map(|bank| bank.topics())
        .unwrap_or_default()
}

/// What the certificate image shows.
struct Drawing<'a> {
    name: &'a str,
    score: u8,
    date: &'a str,
    version: u8,
    id: &'a str,
    /// The quiz's topics: what was learned.
    topics: &'a [String],
    /// Who issued it, in words (signed by an issuer, or an integrity-only ID).
    issuer: &'a str,
    share: &'a str,
}

/// The certificate's size: A4 landscape at about 190 dpi, so print and PNG are the same image.
const CARD: (f64, f64) = (1600.0, 1131.0);
const ACCENT: &str = "#0b5cad";
const INK: &str = "#1b1f24";
const MUTED: &str = "#4a5360";

/// The largest font size from `start` down that keeps `text` within `width` pixels.
fn fit_font(ctx: &web_sys::CanvasRenderingContext2d, text: &str, width: f64, start: f64, weight: &str, family: &str) {
    let mut size = start;
    loop {
        ctx.set_font(&format!("{weight} {size}px {family}"));
        let fits = ctx.measure_text(text).map(|m| m.width() <= width).unwrap_or(true);
        if fits || size <= 12.0 {
            return;
        }
        size -= 2.0;
    }
}

/// `text` broken into lines of at most `width` pixels in the context's current font.
fn wrap(ctx: &web_sys::CanvasRenderingContext2d, text: &str, width: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        let fits = ctx.measure_text(&candidate).map(|m| m.width() <= width).unwrap_or(true);
        if fits || line.is_empty() {
            line = candidate;
        } else {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Draws the certificate: a header band, the holder, the score and date, what was learned, who
/// issued it, the ID and a QR code of the share link. The name is drawn as text (`fillText`),
/// never parsed as markup.
fn draw_card(d: &Drawing) -> Result<web_sys::HtmlCanvasElement, String> {
    let (w, h) = CARD;
    let (canvas, ctx) = browser::offscreen_canvas(w as u32, h as u32)?;
    ctx.set_fill_style_str("#ffffff");
    ctx.fill_rect(0.0, 0.0, w, h);
    ctx.set_stroke_style_str(ACCENT);
    ctx.set_line_width(10.0);
    ctx.stroke_rect(24.0, 24.0, w - 48.0, h - 48.0);
    // Header band: the app's name and what this is.
    ctx.set_fill_style_str(ACCENT);
    ctx.fill_rect(44.0, 44.0, w - 88.0, 112.0);
    ctx.set_fill_style_str("#ffffff");
    ctx.set_text_align("left");
    ctx.set_font("bold 40px sans-serif");
    let _ = ctx.fill_text(&tr("app-title"), 90.0, 114.0);
    ctx.set_text_align("right");
    ctx.set_font("28px sans-serif");
    let _ = ctx.fill_text(&tr("cert-kicker").to_uppercase(), w - 90.0, 112.0);
    // The holder and the result, left column.
    let left = 90.0;
    let column = 1040.0;
    ctx.set_text_align("left");
    ctx.set_fill_style_str(MUTED);
    ctx.set_font("28px sans-serif");
    let _ = ctx.fill_text(&tr("cert-certifies"), left, 250.0);
    ctx.set_fill_style_str(INK);
    fit_font(&ctx, d.name, column, 76.0, "bold", "serif");
    let _ = ctx.fill_text(d.name, left, 345.0);
    ctx.set_fill_style_str("#c9d0d9");
    ctx.fill_rect(left, 372.0, column, 2.0);
    ctx.set_fill_style_str(INK);
    ctx.set_font("30px sans-serif");
    let passed = msg(&Msg::new("cert-passed")
        .arg("score", d.score)
        .arg("date", d.date)
        .arg("version", d.version));
    let mut y = 428.0;
    for line in wrap(&ctx, &passed, column) {
        let _ = ctx.fill_text(&line, left, y);
        y += 42.0;
    }
    y += 34.0;
    ctx.set_fill_style_str(ACCENT);
    ctx.set_font("bold 28px sans-serif");
    let _ = ctx.fill_text(&tr("cert-learned"), left, y);
    y += 44.0;
    ctx.set_fill_style_str(INK);
    ctx.set_font("26px sans-serif");
    for line in wrap(&ctx, &d.topics.join("  ·  "), column) {
        let _ = ctx.fill_text(&line, left, y);
        y += 38.0;
    }
    // The QR code of the share link, right column, on a white quiet zone.
    if let Some(qr) = certificate::share_qr(d.share) {
        let side = 300.0;
        let (qx, qy) = (w - 90.0 - side, 210.0);
        let module = (side / (qr.width + 8) as f64).floor();
        let offset = (side - module * qr.width as f64) / 2.0;
        ctx.set_fill_style_str(INK);
        for my in 0..qr.width {
            for mx in 0..qr.width {
                if qr.is_dark(mx, my) {
                    ctx.fill_rect(
                        qx + offset + mx as f64 * module,
                        qy + offset + my as f64 * module,
                        module,
                        module,
                    );
                }
            }
        }
        ctx.set_text_align("center");
        ctx.set_fill_style_str(MUTED);
        ctx.set_font("22px sans-serif");
        let _ = ctx.fill_text(&tr("cert-scan"), qx + side / 2.0, qy + side + 32.0);
        // The score, large, under the code.
        ctx.set_font("24px sans-serif");
        let _ = ctx.fill_text(&tr("cert-score"), qx + side / 2.0, qy + side + 120.0);
        ctx.set_fill_style_str(ACCENT);
        ctx.set_font("bold 84px sans-serif");
        let _ = ctx.fill_text(&format!("{} %", d.score), qx + side / 2.0, qy + side + 210.0);
        ctx.set_text_align("left");
    }
    // Who issued it, the ID and the link, along the bottom.
    ctx.set_fill_style_str("#c9d0d9");
    ctx.fill_rect(left, 880.0, w - 180.0, 2.0);
    ctx.set_fill_style_str(MUTED);
    ctx.set_font("24px sans-serif");
    let mut y = 925.0;
    for line in wrap(&ctx, d.issuer, w - 180.0).into_iter().take(2) {
        let _ = ctx.fill_text(&line, left, y);
        y += 34.0;
    }
    ctx.set_fill_style_str(INK);
    ctx.set_font("24px sans-serif");
    let label = tr("cert-id-label");
    let _ = ctx.fill_text(&label, left, 1018.0);
    let label_width = ctx.measure_text(&label).map(|m| m.width()).unwrap_or(200.0);
    ctx.set_font("bold 38px monospace");
    let _ = ctx.fill_text(d.id, left + label_width + 16.0, 1020.0);
    ctx.set_fill_style_str(MUTED);
    fit_font(&ctx, d.share, w - 180.0, 20.0, "", "sans-serif");
    let _ = ctx.fill_text(d.share, left, 1064.0);
    Ok(canvas)
}

fn draw_png(d: &Drawing) -> Result<Vec<u8>, String> {
    browser::canvas_png(&draw_card(d)?)
}

/// What a checked certificate states, as the verify page shows it.
#[derive(Debug, Clone)]
pub struct CheckedFacts {
    pub name: String,
    pub score: u8,
    /// As the page's language writes it.
    pub date: String,
    pub version: u8,
    pub id: String,
    /// Who issued it, in words.
    pub issuer: String,
}

/// The certificate image of checked facts, as a PNG data URL (the same drawing as the card's;
/// the topics are those of the quiz version it names, when that version has shipped).
pub fn certificate_image(facts: &CheckedFacts) -> Result<String, String> {
    let topics = topics_of(facts.version);
    let share = format!(
        "{}?view=verify&id={}",
        browser::app_base(),
        gradlab_route::encode(&facts.id)
    );
    let canvas = draw_card(&Drawing {
        name: &facts.name,
        score: facts.score,
        date: &facts.date,
        version: facts.version,
        id: &facts.id,
        topics: &topics,
        issuer: &facts.issuer,
        share: &share,
    })?;
    canvas.to_data_url().map_err(browser::js_error)
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
                date: summary.valid_from_date.long(super::i18n::language()),
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
                date: cert.date.long(super::i18n::language()),
                version: cert.quiz_version,
                signed_by: None,
            })
        }
    }
}

#[component]
pub fn CertificateCard(issued: IssuedCertificate, topics: Vec<String>) -> impl IntoView {
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
        Some(_) => format!("{}?view=verify&id={}", browser::app_base(), gradlab_route::encode(&id)),
        None => format!(
            "{}{}",
            browser::app_base(),
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
    let topics_text = topics.join(", ");
    let issuer_line = match &facts.signed_by {
        Some((issuer, did)) => msg(&Msg::new("cert-issued-signed").arg("issuer", issuer).arg("did", did)),
        None => tr("cert-issued-integrity"),
    };
    let card = StoredValue::new((
        facts.name.clone(),
        facts.score,
        facts.date.clone(),
        facts.version,
        id.clone(),
        topics,
        issuer_line,
        share.clone(),
    ));
    let with_drawing = move |f: &dyn Fn(&Drawing) -> Result<(), String>| {
        card.with_value(|(name, score, date, version, id, topics, issuer, share)| {
            f(&Drawing {
                name,
                score: *score,
                date,
                version: *version,
                id,
                topics,
                issuer,
                share,
            })
        })
    };
    // The card on the page is the same image as the PNG and the print.
    let image = RwSignal::new(None::<String>);
    let _ = with_drawing(&|d| {
        let url = draw_card(d)?
            .to_data_url()
            .map_err(|_| "could not encode the image".to_string())?;
        image.set(Some(url));
        Ok(())
    });
    let download = move |_| {
        let result = with_drawing(&|d| credential.with_value(|c| download_png(d, c.as_ref())));
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
            <figure class="cert-image" data-testid="cert-image">
                <img src=move || image.get() alt="" width="1600" height="1131" />
            </figure>
            // What the image shows, as text for screen readers (the image is its visual form).
            <div class="visually-hidden">
                <p>{tr("cert-kicker")}</p>
                <h2 data-testid="cert-holder">{facts.name.clone()}</h2>
                <p>{msg(&Msg::new("cert-passed").arg("score", facts.score).arg("date", &facts.date).arg("version", facts.version))}</p>
                <p>{tr("cert-learned")}": "{topics_text}</p>
            </div>
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
pub fn CertificatePage() -> impl IntoView {
    match load_newest_issued() {
        Ok(Some((version, issued))) => view! { <CertificateCard issued=issued topics=topics_of(version) /> }.into_any(),
        Ok(None) => view! {
            <section>
                <h2>{tr("cert-none-title")}</h2>
                <p>{tr("cert-none-text")}" "<a href=super::i18n::link(Route::QUIZ.href())>{tr("cert-take-quiz")}</a></p>
            </section>
        }
        .into_any(),
        Err(problem) => view! {
            <section>
                <h2>{tr("cert-none-title")}</h2>
                <p role="alert" class="error" data-testid="cert-stored-problem">{problem}</p>
                <p><a href=super::i18n::link(Route::QUIZ.href())>{tr("cert-take-quiz")}</a></p>
            </section>
        }
        .into_any(),
    }
}
