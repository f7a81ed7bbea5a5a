//! Gradient Accumulation Lab: the app, assembled from its layers.
//!
//! Each layer is a crate under `crates/` (see ARCHITECTURE.md), and Cargo enforces which layer
//! may use which. This crate re-exports them under their layers' names for the two binaries
//! (`gradlab`, `gradlab-web`) and the integration tests in `tests/`:
//! - [`sim`]: the simulation core (data, model, CPU reference, regimes, metrics, lab). Pure Rust.
//! - [`gpu`]: WGSL kernels through wgpu (depends on `sim` only).
//! - [`quiz`], [`route`], [`lab_state`]: plain state of the app's pages, tested natively.
//! - [`credential`]: signed Open Badges 3.0 credentials, pure and shared by the issuer and the browser.
//! - [`verification`]: what the verify page checks and concludes, over a fetch function.
//! - [`scorm`]: SCORM 1.2 / 2004 data model values, `suspend_data`, and (natively) packages.
//! - [`plot`]: charts drawn with plotters against any `DrawingBackend`.
//! - `issuer` (native only): the certificate issuer service (axum, sqlx).
//! - `cli` (native only): the `gradlab` command's logic.
//! - `web` (wasm only): the Leptos app.

pub use gradlab_cpu_worker as cpu_worker;
pub use gradlab_credential as credential;
pub use gradlab_embed as embed;
pub use gradlab_gpu as gpu;
pub use gradlab_i18n as i18n;
pub use gradlab_lab_state as lab_state;
pub use gradlab_plot as plot;
pub use gradlab_quiz as quiz;
pub use gradlab_route as route;
pub use gradlab_scorm as scorm;
pub use gradlab_sim as sim;
pub use gradlab_verification as verification;

#[cfg(not(target_arch = "wasm32"))]
pub use gradlab_cli as cli;
#[cfg(not(target_arch = "wasm32"))]
pub use gradlab_issuer as issuer;

#[cfg(target_arch = "wasm32")]
pub use gradlab_web as web;
