//! The browser app (wasm only): a thin shell that picks the page from the URL.
//! Browser calls live in `browser`; everything the pages show comes from plain, tested types.
//!
//! The app is two documents, each with its own wasm (`gradlab_route::Document`): [`start_lab`]
//! mounts the Lab (`index.html`, the first visit) and [`start_pages`] every other page
//! (`pages.html`). Each entry names only its own pages, so the linker leaves the others' code
//! (the quiz, the verifier, the certificate's PNG and QR code, ...) out of the Lab's wasm.
#![cfg(target_arch = "wasm32")]

mod bench;
mod browser;
mod certificate;
mod embed;
mod gpt;
mod i18n;
mod lab;
mod lti;
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
use gradlab_route::{Document, Notice, Route};
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

/// What a document shows for a route it holds (the route, and the Lab's options on the Lab).
type PageView = fn(Route, Option<lab::LabOptions>) -> AnyView;

#[component]
fn Root(document: Document, page_view: PageView) -> impl IntoView {
    let redraw = Redraw(RwSignal::new(0));
    provide_context(redraw);
    move || {
        redraw.0.track();
        view! { <App document=document page_view=page_view /> }
    }
}

/// The page a URL asks for: an embed shows one part of the app, whatever `view` says.
fn page_route(pairs: &[(String, String)], embed_options: Option<&EmbedOptions>) -> (Route, Vec<Notice>) {
    match embed_options {
        Some(options) if options.target == EmbedTarget::Quiz => {
            let (_, notices) = Route::from_pairs(pairs);
            let duplicates = notices.into_iter().filter(|n| n.0.id == "notice-duplicate-parameter");
            let question = gradlab_route::quiz_question(pairs);
            (Route::Quiz { question }, duplicates.collect())
        }
        Some(_) => {
            let (route, notices) = Route::from_pairs(pairs);
            match route {
                Route::Lab { .. } => (route, notices),
                _ => (Route::Lab { scenario: None }, notices),
            }
        }
        None => Route::from_pairs(pairs),
    }
}

/// The Lab's document shows the Lab.
fn lab_document_page(route: Route, options: Option<lab::LabOptions>) -> AnyView {
    match (route, options) {
        (Route::Lab { .. }, Some(options)) => view! { <lab::LabPage options=options /> }.into_any(),
        _ => ().into_any(),
    }
}

/// The other document shows every other page.
fn pages_document_page(route: Route, _: Option<lab::LabOptions>) -> AnyView {
    let bank = || QuestionBank::bundled_in(i18n::language());
    let bank_failed = |e: gradlab_quiz::bank::BankError| {
        let text = msg(&Msg::new("quiz-load-failed").arg("reason", e.to_string()));
        view! { <p role="alert" class="error">{text}</p> }.into_any()
    };
    match route {
        Route::Verify { id, name } => view! { <verify::VerifyPage id=id name=name /> }.into_any(),
        Route::Quiz { question } => match bank() {
            Ok(bank) => view! { <quiz::QuizPage bank=bank question=question /> }.into_any(),
            Err(e) => bank_failed(e),
        },
        Route::Certificate => view! { <certificate::CertificatePage /> }.into_any(),
        Route::Bench => view! { <bench::BenchPage /> }.into_any(),
        Route::Plan => view! { <plan::PlanPage /> }.into_any(),
        Route::Gpt => view! { <gpt::GptPage /> }.into_any(),
        Route::Lab { .. } => ().into_any(),
    }
}

/// A route the other document holds. Its inline router (assets/document-router.js) moves there
/// before this wasm loads; should it not have, the learner gets the link rather than a loop.
#[component]
fn OtherDocument(route: Route) -> impl IntoView {
    let href = format!("{}{}", route.document().file(), browser::query_string());
    view! {
        <p class="notice" data-testid="other-document"><a href=href>{tr("other-document-open")}</a></p>
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
fn App(document: Document, page_view: PageView) -> impl IntoView {
    let redraw = use_context::<Redraw>();
    let pairs = browser::query_pairs();
    let url_lang = gradlab_route::UrlParams::new(&pairs).get("lang");
    let language_notice = i18n::choose(url_lang, &browser::preferred_languages());
    browser::set_document_language(i18n::language().tag());
    let (embed_options, embed_notices) = EmbedOptions::from_pairs(&pairs, parse_url);
    let (route, route_notices) = page_route(&pairs, embed_options.as_ref());
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
    // The tiny GPT's page races its engines as the Lab does, and reads `engine` as it does; its
    // settings (`gpt_controls`) are read again by the page, which trains them.
    if matches!(route, Route::Gpt) {
        notices.extend(EngineOptions::from_pairs(&pairs).1);
        notices.extend(gradlab_lab_state::gpt_controls::from_pairs(&pairs).1);
    }
    let current = |r: &Route| match (r, &route) {
        (Route::Lab { .. }, Route::Lab { .. }) => Some("page"),
        (Route::Quiz { .. }, Route::Quiz { .. } | Route::Certificate) => Some("page"),
        (Route::Verify { .. }, Route::Verify { .. }) => Some("page"),
        (Route::Plan, Route::Plan) => Some("page"),
        (Route::Gpt, Route::Gpt) => Some("page"),
        _ => None,
    };
    let lab_link = Route::Lab { scenario: None };
    let verify_link = Route::Verify {
        id: String::new(),
        name: String::new(),
    };
    let full_app = format!("{}{}", browser::app_base(), full_app_query(&pairs));
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
                <a href=i18n::link(lab_link.href()) aria-current=current(&lab_link)>{tr("nav-lab")}</a>
                <a href=i18n::link(Route::Gpt.href()) aria-current=current(&Route::Gpt)>{tr("nav-gpt")}</a>
                <a href=i18n::link(Route::QUIZ.href()) aria-current=current(&Route::QUIZ)>{tr("nav-quiz")}</a>
                <a href=i18n::link(Route::Plan.href()) aria-current=current(&Route::Plan)>{tr("nav-plan")}</a>
                <a href=i18n::link(verify_link.href()) aria-current=current(&verify_link)>{tr("nav-verify")}</a>
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
    // What the page shows, for tests and host pages to wait on: the route's view, or that the
    // route belongs to the other document.
    let shown = if route.document() == document {
        route.view()
    } else {
        "other-document"
    };
    let page = if route.document() == document {
        page_view(route, options)
    } else {
        view! { <OtherDocument route=route /> }.into_any()
    };
    view! {
        {nav}
        <main class="page" class:embedded=embedded data-page=shown>
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

/// The browser's URL parser, exposed for the in-browser tests of the embed's origin check.
pub use browser::parse_url;

/// Components, exposed for the in-browser component tests.
pub mod components {
    pub use super::lab::charts::ChartCanvas;
    pub use super::lab::controls::ControlsPanel;
}

/// Mounts the Lab's document (`index.html`) on `<body>`.
pub fn start_lab() {
    console_error_panic_hook::set_once();
    // A launch from a course platform may open an experiment: its session leaves the URL too.
    lti::capture_launch_token();
    mount_to_body(|| view! { <Root document=Document::Lab page_view=lab_document_page /> });
}

/// Mounts the other pages' document (`pages.html`) on `<body>`.
pub fn start_pages() {
    console_error_panic_hook::set_once();
    // A launch from a course platform hands its session over in the fragment: into this tab's
    // storage before anything reads or shares the URL.
    lti::capture_launch_token();
    mount_to_body(|| view! { <Root document=Document::Pages page_view=pages_document_page /> });
}
