//! The verification page: anyone pastes an ID, opens a share link, or drops a credential file
//! (JSON, or a certificate PNG with the credential baked in) and sees what was checked. Signed
//! credentials are checked here, in the browser, with the same Rust verifier the CLI uses; the
//! page only fetches (`verification` decides).

use std::future::Future;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::browser;
use super::certificate::{certificate_image, CheckedFacts};
use super::i18n::{msg, tr};
use gradlab_credential::proof::CRYPTOSUITE;
use gradlab_credential::verify::Status;
use gradlab_i18n::Msg;
use gradlab_quiz::issuance::Reply;
use gradlab_verification::{self as verification, IdKind, Report, Verdict};

/// What was checked: an ID as typed, or a file by its name.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    Id(String),
    File(String),
}

/// The browser's GET, as the checks want it.
async fn get(url: String) -> Result<Reply, String> {
    browser::fetch("GET", &url, None).await
}

/// The page's state: the latest result, whether a check is running, and which check is the
/// latest (an older one that finishes later is dropped).
#[derive(Debug, Clone, Copy)]
struct Checks {
    result: RwSignal<Option<(Report, Source)>>,
    checking: RwSignal<Option<Source>>,
    generation: StoredValue<u64>,
}

impl Checks {
    fn show(self, report: Report, source: Source) {
        self.generation.update_value(|g| *g += 1);
        self.checking.set(None);
        self.result.set(Some((report, source)));
    }

    fn run(self, source: Source, task: impl Future<Output = Report> + 'static) {
        self.generation.update_value(|g| *g += 1);
        let generation = self.generation.get_value();
        self.result.set(None);
        self.checking.set(Some(source.clone()));
        leptos::task::spawn_local(async move {
            let report = task.await;
            if self.generation.get_value() == generation {
                self.checking.set(None);
                self.result.set(Some((report, source)));
            }
        });
    }

    fn check_file(self, file: web_sys::File) {
        let name = file.name();
        self.run(Source::File(name), async move {
            match browser::read_file(&file).await {
                Err(reason) => verification::file_problem(Msg::new("verify-file-unreadable").arg("reason", reason)),
                Ok(bytes) => match verification::credential_from_file(&bytes) {
                    Err(reason) => verification::file_problem(reason),
                    Ok(credential) => verification::check_credential(&credential, get).await,
                },
            }
        });
    }
}

fn checked_view(report: &Report) -> impl IntoView {
    let checked = report.checked.as_ref().map(|c| {
        let s = &c.summary;
        let status = match c.status {
            Status::Active => "verify-checked-active",
            Status::Revoked => "verify-checked-revoked",
            Status::NotChecked => "verify-checked-status-unknown",
        };
        view! {
            <ul class="checks">
                <li>{msg(&Msg::new("verify-checked-signature").arg("suite", CRYPTOSUITE).arg("key", &c.key))}</li>
                <li data-testid="verify-issuer">{msg(&Msg::new("verify-checked-issuer").arg("issuer", &s.issuer_name).arg("did", &s.issuer_did))}</li>
                <li data-testid="verify-subject">{msg(&Msg::new("verify-valid-text")
                    .arg("name", &s.subject_name)
                    .arg("version", s.quiz_version)
                    .arg("score", s.score_percent)
                    .arg("date", s.valid_from_date.long(super::i18n::language())))}</li>
                {s.evidence.iter().map(|e| view! {
                    <li data-testid="verify-evidence">{format!("{}: {}", e.name, e.description)}</li>
                }).collect::<Vec<_>>()}
                <li>{tr(status)}</li>
            </ul>
        }
    });
    let integrity = report.integrity_only.as_ref().map(|cert| {
        view! {
            <p data-testid="verify-subject">{msg(&Msg::new("verify-valid-text")
                .arg("name", &cert.name)
                .arg("version", cert.quiz_version)
                .arg("score", cert.score_percent)
                .arg("date", cert.date.long(super::i18n::language())))}</p>
            <p>{tr("verify-integrity-only-note")}</p>
        }
    });
    let reason = report
        .reason
        .as_ref()
        .map(|r| view! { <p data-testid="verify-reason">{format!("{}.", super::capitalize(&msg(r)))}</p> });
    (checked, integrity, reason)
}

/// What an employer looks for first, for a certificate that checks out: who, what score, when,
/// issued by whom, and the certificate itself.
fn facts_view(report: &Report, source: &Source) -> Option<impl IntoView> {
    if !report.verdict.is_valid() {
        return None;
    }
    let language = super::i18n::language();
    let id = match source {
        Source::Id(id) => id.clone(),
        Source::File(_) => String::new(),
    };
    let facts = match (&report.checked, &report.integrity_only) {
        (Some(c), _) => CheckedFacts {
            name: c.summary.subject_name.clone(),
            score: c.summary.score_percent,
            date: c.summary.valid_from_date.long(language),
            version: c.summary.quiz_version,
            id: if id.is_empty() {
                c.summary
                    .credential_id
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string()
            } else {
                id
            },
            issuer: msg(&Msg::new("cert-issued-signed")
                .arg("issuer", &c.summary.issuer_name)
                .arg("did", &c.summary.issuer_did)),
        },
        (None, Some(cert)) => CheckedFacts {
            name: cert.name.clone(),
            score: cert.score_percent,
            date: cert.date.long(language),
            version: cert.quiz_version,
            id,
            issuer: tr("cert-issued-integrity"),
        },
        (None, None) => return None,
    };
    let image = certificate_image(&facts).ok();
    let alt = msg(&Msg::new("verify-image-alt").arg("name", &facts.name));
    Some(view! {
        <div class="verify-facts" data-testid="verify-facts">
            <dl>
                <dt>{tr("verify-fact-name")}</dt><dd class="verify-name" data-testid="verify-fact-name">{facts.name.clone()}</dd>
                <dt>{tr("verify-fact-score")}</dt><dd data-testid="verify-fact-score">{format!("{} %", facts.score)}</dd>
                <dt>{tr("verify-fact-date")}</dt><dd data-testid="verify-fact-date">{facts.date.clone()}</dd>
                <dt>{tr("verify-fact-issuer")}</dt><dd data-testid="verify-fact-issuer">{facts.issuer.clone()}</dd>
            </dl>
            {image.map(|src| view! { <img class="verify-image" data-testid="verify-image" src=src alt=alt width="1600" height="1131" /> })}
        </div>
    })
}

fn result_view(report: Report, source: Source) -> impl IntoView {
    let verdict = report.verdict;
    let class = match verdict {
        Verdict::Valid | Verdict::IntegrityOnly => "verdict valid",
        Verdict::UnknownIssuer | Verdict::Unreachable => "verdict caution",
        Verdict::Revoked | Verdict::Tampered | Verdict::UnknownId | Verdict::Invalid => "verdict invalid",
    };
    let (source_kind, checked_what) = match &source {
        Source::Id(id) => ("id", msg(&Msg::new("verify-checked-id").arg("id", id))),
        Source::File(name) => ("file", msg(&Msg::new("verify-checked-file").arg("file", name))),
    };
    let source_id = match &source {
        Source::Id(id) => id.clone(),
        Source::File(name) => name.clone(),
    };
    view! {
        <div class=class data-testid="verify-result" data-valid=verdict.is_valid().to_string()
            data-status=verdict.tag() data-source=source_kind data-checked=source_id>
            <h3>{msg(&verdict.title())}</h3>
            {facts_view(&report, &source)}
            <h4>{tr("verify-what-was-checked")}</h4>
            <p class="muted">{checked_what}</p>
            {checked_view(&report)}
        </div>
    }
}

#[component]
pub fn VerifyPage(id: String, name: String) -> impl IntoView {
    let id_text = RwSignal::new(id.clone());
    let name_text = RwSignal::new(name);
    let dragging = RwSignal::new(false);
    let checks = Checks {
        result: RwSignal::new(None),
        checking: RwSignal::new(None),
        generation: StoredValue::new(0),
    };
    let check_id = move || {
        let input = id_text.get_untracked().trim().to_string();
        let today = browser::today();
        match verification::classify(&input, today) {
            IdKind::Issued(issued) => match verification::credential_path(&issued) {
                Some(path) => {
                    let url = browser::api_url(&path);
                    let shown = issued.encode().unwrap_or(input);
                    checks.run(Source::Id(shown), async move {
                        verification::check_issued_id(&url, get).await
                    });
                }
                None => checks.show(verification::check_integrity_only(&input, "", today), Source::Id(input)),
            },
            IdKind::Empty | IdKind::IntegrityOnly | IdKind::Invalid(_) => {
                let report = verification::check_integrity_only(&input, &name_text.get_untracked(), today);
                checks.show(report, Source::Id(input));
            }
        }
    };
    if !id.trim().is_empty() {
        check_id();
    }
    // The name only matters for an integrity-only ID; a signed one names its credential.
    let needs_name = move || {
        !matches!(
            verification::classify(&id_text.get(), browser::today()),
            IdKind::Issued(_)
        )
    };
    let on_choose = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else {
            return;
        };
        if let Some(file) = input.files().and_then(|files| files.get(0)) {
            checks.check_file(file);
        }
        // Choosing the same file again (after editing it) checks it again.
        input.set_value("");
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        if let Some(file) = ev
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|files| files.get(0))
        {
            checks.check_file(file);
        }
    };
    let status_view = move || {
        let checking = checks.checking.get().map(|source| {
            let what = match source {
                Source::Id(id) => msg(&Msg::new("verify-checked-id").arg("id", id)),
                Source::File(name) => msg(&Msg::new("verify-checked-file").arg("file", name)),
            };
            view! { <p class="verdict pending" data-testid="verify-checking">{tr("verify-checking")}" "{what}</p> }
        });
        let result = checks.result.get().map(|(report, source)| result_view(report, source));
        (checking, result)
    };
    view! {
        <section class="verify">
            <h2>{tr("verify-title")}</h2>
            // The result leads (a share link opens straight onto it); the form checks another.
            <div aria-live="polite">{status_view}</div>
            <form on:submit=move |ev| { ev.prevent_default(); check_id(); }>
                <label for="verify-id">{tr("verify-id-label")}</label>
                <input id="verify-id" data-testid="verify-id" autocomplete="off" spellcheck="false"
                    placeholder="XXXXX-XXXXX-XXXXX"
                    prop:value=move || id_text.get() on:input=move |ev| id_text.set(event_target_value(&ev)) />
                <Show when=needs_name>
                    <label for="verify-name">{tr("verify-name-label")}</label>
                    <input id="verify-name" data-testid="verify-name" aria-describedby="verify-name-hint"
                        prop:value=move || name_text.get() on:input=move |ev| name_text.set(event_target_value(&ev)) />
                    <p id="verify-name-hint" class="muted">{tr("verify-name-hint")}</p>
                </Show>
                <button type="submit" class="primary" data-testid="verify">{tr("verify-button")}</button>
            </form>
            <div class="drop-zone" class:dragging=move || dragging.get() data-testid="verify-drop"
                on:dragover=move |ev: leptos::ev::DragEvent| { ev.prevent_default(); dragging.set(true); }
                on:dragleave=move |_| dragging.set(false)
                on:drop=on_drop>
                <label for="verify-file">{tr("verify-file-label")}</label>
                <input id="verify-file" type="file" data-testid="verify-file"
                    accept=".json,.png,application/json,application/ld+json,image/png"
                    aria-describedby="verify-file-hint" on:change=on_choose />
                <p id="verify-file-hint" class="muted">{tr("verify-file-hint")}</p>
            </div>
            <p class="trust" data-testid="trust-note">
                {tr("verify-trust")}
            </p>
        </section>
    }
}
