//! The Lab's wasm entry (`index.html`), which Trunk builds: mounts the Lab.

#[cfg(target_arch = "wasm32")]
fn main() {
    gradlab::web::start_lab();
}

/// Natively there is no page to mount; point at the CLI instead.
#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("gradlab-web is the browser app; build it with `trunk serve`. Natively, use the `gradlab` CLI.");
}
