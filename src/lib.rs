//! Gradient Accumulation Lab.
//!
//! Layers, each depending only on those above it in this list (see ARCHITECTURE.md):
//! - [`sim`]: the simulation core (data, model, CPU reference, regimes, metrics, lab). Pure Rust.
//! - [`gpu`]: WGSL kernels through wgpu (depends on `sim` only).
//! - [`quiz`], [`route`], [`lab_state`]: plain state of the app's pages, tested natively.
//! - [`credential`]: signed Open Badges 3.0 credentials (Data Integrity `eddsa-jcs-2022`,
//!   `did:web`, Bitstring Status List, baked PNGs), pure and shared by the issuer and the browser.
//! - [`verification`]: what the verify page checks and concludes (either ID format, files),
//!   over a fetch function the browser passes in; tested natively.
//! - [`scorm`]: SCORM 1.2 / 2004 data model values, `suspend_data`, and (natively) content
//!   packages with their manifest.
//! - [`plot`]: charts drawn with plotters against any `DrawingBackend`.
//! - `issuer` (native only): the certificate issuer service (axum, sqlx).
//! - `cli` (native only): the `gradlab` command's logic.
//! - `web` (wasm only): the Leptos app.

pub mod credential;
pub mod embed;
pub mod gpu;
pub mod i18n;
pub mod lab_state;
pub mod plot;
pub mod quiz;
pub mod route;
pub mod scorm;
pub mod sim;
pub mod verification;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(not(target_arch = "wasm32"))]
pub mod issuer;

#[cfg(target_arch = "wasm32")]
pub mod web;
