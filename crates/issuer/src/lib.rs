//! The issuer service (native only): grades a quiz attempt itself with the quiz core, signs an
//! Open Badges 3.0 credential (`gradlab_credential`), keeps it in SQLite or PostgreSQL, and serves
//! it, the issuer's DID document and the revocation status lists over HTTP. It knows nothing of
//! the UI, wgpu or the browser.
//!
//! - `config`: the validated settings of `gradlab issuer serve`;
//! - `keys`: the Ed25519 signing key on disk (0600), rotation;
//! - `pipeline`: serial blocks, the group-commit writer, the look-up cache;
//! - `store`: the database (same queries on both kinds), schema in `migrations/`;
//! - `request`: the issuance request parsed from untrusted bytes;
//! - `api`: the HTTP routes, problem+json errors, CORS, body limit, rate limit;
//! - `server`: start-up (schema, key, listener) and graceful shutdown;
//! - `lti`: LTI 1.3 Advantage (launch from a course platform, scores to its gradebook);
//! - `bench`: the load generator of `gradlab issuer bench`; `client`: a blocking HTTP client.
#![cfg(not(target_arch = "wasm32"))]

pub mod api;
pub mod bench;
pub mod client;
pub mod config;
pub mod keys;
pub mod lti;
pub mod pipeline;
pub mod request;
pub mod server;
pub mod store;

use thiserror::Error;

/// Errors of the issuer layer. None carries secret material: key problems name the file only.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IssuerError {
    #[error("invalid setting: {0}")]
    Config(String),
    #[error("{context}: {detail}")]
    Database { context: &'static str, detail: String },
    #[error("{context}: {detail}")]
    Io { context: String, detail: String },
    #[error("could not sign the credential: {0}")]
    Signing(String),
    #[error("this issuer has used up its serial numbers")]
    Exhausted,
}

/// The current time as RFC 3339 in UTC, to the second (`validFrom`, proof `created`).
pub fn now_rfc3339() -> String {
    const FORMAT: &[time::format_description::FormatItem<'static>] =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::OffsetDateTime::now_utc()
        .format(FORMAT)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string())
}

/// Today's date, for the short-ID parser's future-date check of format-1 IDs.
pub fn today() -> gradlab_quiz::certificate::CivilDate {
    let now = time::OffsetDateTime::now_utc();
    gradlab_quiz::certificate::CivilDate {
        year: now.year(),
        month: u32::from(u8::from(now.month())),
        day: u32::from(now.day()),
    }
}
