//! The other pages' wasm entry (`pages.html`: the quiz, the certificate, the verifier, the
//! planner, the bench page), which Trunk builds beside the Lab's.

#[cfg(target_arch = "wasm32")]
fn main() {
    gradlab::web::start_pages();
}

/// Natively there is no page to mount; point at the CLI instead.
#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("gradlab-pages is the browser app's second document; build it with `trunk build`. Natively, use the `gradlab` CLI.");
}
