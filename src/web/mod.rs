//! The browser app (wasm only): a thin shell that picks the page from the URL.
//! Browser calls live in `browser`; everything the pages show comes from plain, tested types.

mod bench;
mod browser;
mod certificate;
mod lab;
mod quiz;
mod verify;

use leptos::prelude::*;

use crate::quiz::bank::QuestionBank;
use crate::route::Route;

#[component]
fn App() -> impl IntoView {
    let (route, notices) = Route::from_pairs(&browser::query_pairs());
    let bank = QuestionBank::bundled();
    let current = |r: &Route| match (r, &route) {
        (Route::Lab { .. }, Route::Lab { .. }) => Some("page"),
        (Route::Quiz, Route::Quiz | Route::Certificate) => Some("page"),
        (Route::Verify { .. }, Route::Verify { .. }) => Some("page"),
        _ => None,
    };
    let lab_link = Route::Lab { scenario: None };
    let verify_link = Route::Verify {
        id: String::new(),
        name: String::new(),
    };
    let nav = view! {
        <header class="site-header no-print">
            <p class="brand">"Gradient Accumulation Lab"</p>
            <nav aria-label="Main">
                <a href=lab_link.query() aria-current=current(&lab_link)>"Lab"</a>
                <a href=Route::Quiz.query() aria-current=current(&Route::Quiz)>"Quiz"</a>
                <a href=verify_link.query() aria-current=current(&verify_link)>"Verify a certificate"</a>
            </nav>
        </header>
    };
    let notices = (!notices.is_empty()).then(|| {
        let items = notices.into_iter().map(|n| view! { <li>{n.0}</li> }).collect_view();
        view! { <ul class="notice" role="status" data-testid="url-notice">{items}</ul> }
    });
    let page = match (route, bank) {
        (Route::Lab { scenario }, _) => view! { <lab::LabPage scenario=scenario /> }.into_any(),
        (Route::Verify { id, name }, _) => view! { <verify::VerifyPage id=id name=name /> }.into_any(),
        (Route::Quiz, Ok(bank)) => view! { <quiz::QuizPage bank=bank /> }.into_any(),
        (Route::Certificate, Ok(bank)) => view! { <certificate::CertificatePage bank=bank /> }.into_any(),
        (Route::Bench, _) => view! { <bench::BenchPage /> }.into_any(),
        (_, Err(e)) => {
            view! { <p role="alert" class="error">{format!("The quiz could not be loaded: {e}")}</p> }.into_any()
        }
    };
    view! {
        {nav}
        <main class="page">
            <h1 class="visually-hidden">"Gradient Accumulation Lab"</h1>
            {notices}
            {page}
        </main>
    }
}

/// Error messages are written as clauses; the UI shows them as sentences.
fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Mounts the app on `<body>`.
pub fn start() {
    console_error_panic_hook::set_once();
    mount_to_body(App);
}
