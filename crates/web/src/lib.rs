//! The browser app (wasm only): a thin shell that picks the page from the URL.
//! Browser calls live in `browser`; everything the pages show comes from plain, tested types.
#![cfg(target_arch = "wasm32")]

mod bench;
mod browser;
mod certificate;
mod embed;
mod i18n;
mod lab;
mod plan;
mod quiz;
mod scorm;
mod verify;
mod worker;

use leptos::prelude::*;

use gradlab_embed::{full_app_query, EmbedOptions, EmbedTarget};
use gradlab_i18n::Msg;
use gradlab_lab_state::controls::{EngineOptions, LabControls};
use gradlab_quiz::bank::QuestionBank;
use gradlab_route::Route;
use i18n::{msg, tr};

/// The Lab's options: its controls, the engine options, and the parameters kept in its URL.
fn lab_options(pairs: &[(String, String)], notices: &mut Vec<Msg>, embed: Option<EmbedOptions>) -> lab::LabOptions {
    let (controls, control_notices) = LabControls::from_pairs(pairs);
    notices.extend(control_notices);
    let (engine, engine_notices) = EngineOptions::from_pairs(pairs);
    notices.extend(engine_notices);
    // Parameters that are not Lab controls but must survive the Lab rewriting the address bar.
    // Only a key's first value: the one every reader of the URL uses.
    let kept_query = pairs
        .iter()
        .enumerate()
        .filter(|(i, (k, _))| {
            matches!(
                k.as_str(),
                "embed" | "hide" | "lock" | "origin" | "engine" | "lang" | "simulate"
            ) && !pairs[..*i].iter().any(|(earlier, _)| earlier == k)
        })
        .map(|(_, pair)| pair)
        .map(|(k, v)| format!("&{}={}", gradlab_route::encode(k), gradlab_route::encode(v)))
        .collect();
    lab::LabOptions {
        controls,
        kept_query,
        engine: engine.engine,
        simulate_gpu_loss: engine.simulate_gpu_loss,
        embed,
    }
}

/// Draws the app again from the address: a language switch inside an LMS, where reloading
/// the SCO would end its SCORM session (the LMS refuses a second `Initialize`).
#[derive(Clone, Copy)]
struct Redraw(RwSignal<u32>);

#[component]
fn Root() -> impl IntoView {
    let redraw = Redraw(RwSignal::new(0));
    provide_context(redraw);
    move || {
        redraw.0.track();
        view! { <App /> }
    }
}

/// Switches the page's language: in place inside an LMS (the session and the learner's
/// progress, kept in the LMS, carry over), by a reload everywhere else.
fn switch_language(language: gradlab_i18n::Language, redraw: Option<Redraw>) {
    match redraw.filter(|_| scorm::version().is_some()) {
        Some(Redraw(generation)) => {
            browser::set_query_parameter("lang", language.tag());
            generation.update(|n| *n += 1);
        }
        None => browser::reload_with("lang", language.tag()),
    }
}

#[component]
fn App() -> impl IntoView {
    let redraw = use_context::<Redraw>();
    let pairs = browser::query_pairs();
    let url_lang = gradlab_route::UrlParams::new(&pairs).get("lang");
    let language_notice = i18n::choose(url_lang, &browser::preferred_languages());
    browser::set_document_language(i18n::language().tag());
    let (embed_options, embed_notices) = EmbedOptions::from_pairs(&pairs);
    let (route, route_notices) = match &embed_options {
        // An embed shows one part of the app, whatever `view` says.
        Some(options) if options.target == EmbedTarget::Quiz => {
            let (_, notices) = Route::from_pairs(&pairs);
            let duplicates = notices.into_iter().filter(|n| n.0.id == "notice-duplicate-parameter");
            let question = gradlab_route::quiz_question(&pairs);
            (Route::Quiz { question }, duplicates.collect())
        }
        Some(_) => {
            let (route, notices) = Route::from_pairs(&pairs);
            match route {
                Route::Lab { .. } => (route, notices),
                _ => (Route::Lab { scenario: None }, notices),
            }
        }
        None => Route::from_pairs(&pairs),
    };
    // On the Lab, the controls report a bad scenario themselves (with every other parameter).
    let mut notices: Vec<Msg> = route_notices
        .into_iter()
        .map(|n| n.0)
        .filter(|m| !(matches!(route, Route::Lab { .. }) && m.id == "notice-unknown-scenario"))
        .collect();
    notices.extend(embed_notices);
    notices.extend(language_notice);
    if let Some(options) = &embed_options {
        embed::start(options);
    }
    // A course platform's SCORM API, when the Lab or the quiz runs as a SCO inside one.
    let lms_notice = RwSignal::new(None::<String>);
    if matches!(route, Route::Lab { .. } | Route::Quiz { .. }) {
        scorm::start(lms_notice);
    }
    let lms_notice = move || {
        lms_notice
            .get()
            .map(|text| view! { <p class="notice error" role="alert" data-testid="lms-notice">{text}</p> })
    };
    let embedded = embed_options.is_some();
    let options = matches!(route, Route::Lab { .. }).then(|| lab_options(&pairs, &mut notices, embed_options.clone()));
    let bank = QuestionBank::bundled_in(i18n::language());
    let current = |r: &Route| match (r, &route) {
        (Route::Lab { .. }, Route::Lab { .. }) => Some("page"),
        (Route::Quiz { .. }, Route::Quiz { .. } | Route::Certificate) => Some("page"),
        (Route::Verify { .. }, Route::Verify { .. }) => Some("page"),
        (Route::Plan, Route::Plan) => Some("page"),
        _ => None,
    };
    let lab_link = Route::Lab { scenario: None };
    let verify_link = Route::Verify {
        id: String::new(),
        name: String::new(),
    };
    let full_app = format!("{}{}", browser::page_base(), full_app_query(&pairs));
    let languages = move || {
        let items = gradlab_i18n::Language::ALL
            .into_iter()
            .map(|language| {
                let current = (language == i18n::language()).then_some("true");
                view! {
                    <li><a href=format!("?lang={}", language.tag()) lang=language.tag() hreflang=language.tag()
                        aria-current=current data-lang=language.tag()
                        on:click=move |ev| {
                            ev.prevent_default();
                            switch_language(language, redraw);
                        }>{language.endonym()}</a></li>
                }
            })
            .collect_view();
        view! { <nav class="languages" aria-label=tr("nav-language")><ul>{items}</ul></nav> }
    };
    let hide_languages = embed_options
        .as_ref()
        .is_some_and(|e| e.hides_section(gradlab_embed::Section::Language));
    let nav = if embedded {
        view! {
            <header class="embed-header no-print">
                {(!hide_languages).then(languages)}
                <a href=full_app target="_blank" rel="noopener" data-testid="open-full">{tr("embed-open-full")}</a>
            </header>
        }
        .into_any()
    } else {
        view! {
        <header class="site-header no-print">
            <p class="brand">{tr("app-title")}</p>
            <nav aria-label=tr("nav-main")>
                <a href=i18n::link(lab_link.query()) aria-current=current(&lab_link)>{tr("nav-lab")}</a>
                <a href=i18n::link(Route::QUIZ.query()) aria-current=current(&Route::QUIZ)>{tr("nav-quiz")}</a>
                <a href=i18n::link(Route::Plan.query()) aria-current=current(&Route::Plan)>{tr("nav-plan")}</a>
                <a href=i18n::link(verify_link.query()) aria-current=current(&verify_link)>{tr("nav-verify")}</a>
            </nav>
            {languages()}
        </header>
        }
        .into_any()
    };
    let notices = (!notices.is_empty()).then(|| {
        let items = notices.into_iter().map(|n| view! { <li>{msg(&n)}</li> }).collect_view();
        // The live region wraps the list: a role on the <ul> itself would unmake it a list, and
        // its items would be list items outside any list (axe-core's `listitem`).
        view! { <div class="notice" role="status" data-testid="url-notice"><ul>{items}</ul></div> }
    });
    let page = match (route, bank) {
        (Route::Lab { .. }, _) => match options {
            Some(options) => view! { <lab::LabPage options=options /> }.into_any(),
            None => ().into_any(),
        },
        (Route::Verify { id, name }, _) => view! { <verify::VerifyPage id=id name=name /> }.into_any(),
        (Route::Quiz { question }, Ok(bank)) => view! { <quiz::QuizPage bank=bank question=question /> }.into_any(),
        (Route::Certificate, Ok(bank)) => view! { <certificate::CertificatePage bank=bank /> }.into_any(),
        (Route::Bench, _) => view! { <bench::BenchPage /> }.into_any(),
        (Route::Plan, _) => view! { <plan::PlanPage /> }.into_any(),
        (_, Err(e)) => {
            let text = msg(&Msg::new("quiz-load-failed").arg("reason", e.to_string()));
            view! { <p role="alert" class="error">{text}</p> }.into_any()
        }
    };
    view! {
        {nav}
        <main class="page" class:embedded=embedded>
            <h1 class="visually-hidden">{tr("app-title")}</h1>
            {notices}
            {lms_notice}
            {page}
        </main>
    }
}

/// Error messages are written as clauses; the UI shows them as sentences.
pub(crate) fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Components, exposed for the in-browser component tests.
pub mod components {
    pub use super::lab::charts::ChartCanvas;
    pub use super::lab::controls::ControlsPanel;
}

/// Mounts the app on `<body>`.
pub fn start() {
    console_error_panic_hook::set_once();
    mount_to_body(Root);
}
