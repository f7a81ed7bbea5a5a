//! The native command-line tool; all logic lives in `gradlab::cli`.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    gradlab::cli::main()
}

/// The CLI has no meaning in the browser; this lets `cargo test --target wasm32-unknown-unknown`
/// build every target.
#[cfg(target_arch = "wasm32")]
fn main() {}
