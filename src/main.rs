//! The web entry point that Trunk builds: set up the panic hook and mount the app.

#[cfg(target_arch = "wasm32")]
fn main() {
    gradlab::web::start();
}

/// Natively there is no page to mount; point at the CLI instead.
#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("gradlab-web is the browser app; build it with `trunk serve`. Natively, use the `gradlab` CLI.");
}
