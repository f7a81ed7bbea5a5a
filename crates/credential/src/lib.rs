//! Signed credentials: the quiz result as an Open Badges 3.0 `OpenBadgeCredential` (a W3C
//! Verifiable Credential 2.0), secured with a Data Integrity proof (`eddsa-jcs-2022`) by an
//! issuer identified by a `did:web`, revocable through a Bitstring Status List, and baked into
//! a PNG.
//!
//! This layer is pure and shared: the issuer service (native) signs with it and the browser
//! (wasm) checks with it, so both read credentials the same way. It does no I/O and has no clock
//! or randomness: callers pass the time, keys and fetched documents in.
//!
//! - [`multikey`]: Ed25519 keys as Multikey strings, and short key ids.
//! - [`proof`]: the `eddsa-jcs-2022` cryptosuite (sign and verify one proof).
//! - [`did_web`]: the issuer's DID from its public URL, and its DID document.
//! - [`status_list`]: the revocation bitstring and the status entries that point into it.
//! - [`open_badge`]: building the unsigned credential, and reading one back into a summary.
//! - [`verify`]: every check a verifier makes, in order, with a reason for each failure.
//! - [`baked_png`]: the credential inside a PNG's `iTXt` chunk.
//! - [`name`]: learner names as they may appear on a credential.

pub mod baked_png;
pub mod did_web;
pub mod multikey;
pub mod name;
pub mod open_badge;
pub mod proof;
pub mod status_list;
pub mod verify;

use thiserror::Error;

pub use did_web::DidDocument;
pub use name::{normalize_learner_name, NameError};
pub use open_badge::{unsigned_credential, CredentialInput, CredentialSummary, SummaryError};
pub use proof::ProofError;
pub use status_list::{Bitstring, StatusEntry, StatusListError};
pub use verify::{verify_credential, Status, Verification, VerifyError};

/// Why a credential or a proof could not be built. These are the issuer's mistakes (bad input,
/// a broken asset), never the learner's, so the messages are for operators and stay English.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CredentialError {
    #[error("the document to sign must be a JSON object")]
    NotAnObject,
    #[error("the document already has a proof; this issuer adds exactly one")]
    AlreadySigned,
    #[error("\"{0}\" is not an RFC 3339 date and time")]
    InvalidTime(String),
    #[error("the verification method \"{0}\" must be a DID URL with a fragment (did:...#key)")]
    InvalidVerificationMethod(String),
    #[error("the document cannot be canonicalized (JCS): {0}")]
    Canonicalization(String),
    #[error("{field}: {reason}")]
    InvalidInput { field: &'static str, reason: String },
    #[error("the quiz bank: {0}")]
    Bank(String),
    #[error("the messages: {0}")]
    Messages(String),
    #[error("the status list could not be compressed: {0}")]
    StatusList(#[from] StatusListError),
}
