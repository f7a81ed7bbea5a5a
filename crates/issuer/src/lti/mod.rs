//! LTI 1.3 with LTI Advantage (1EdTech): course platforms (Moodle, Canvas, Open edX...) launch
//! the Lab with the learner already identified, and the server posts the score it graded itself
//! to the platform's gradebook.
//!
//! - `tool_key`: the tool's RSA key pair (0600 on disk, rotation), published at `/lti/jwks.json`;
//! - `launch`: the OIDC login initiation and the `id_token` checks, each refusal with its message;
//! - `deep_linking`: the teacher's picker and the signed `LtiDeepLinkingResponse`;
//! - `platform_keys`: the platforms' key sets, fetched and cached by `kid`;
//! - `registration`: LTI Dynamic Registration (by invitation) with a platform;
//! - `store`: registrations, deployments, logins, sessions and the score queue (SQLite and
//!   PostgreSQL, migrations/*/0003_lti.sql);
//! - `scores`: AGS score posting (access tokens by signed client assertion) and the delivery loop;
//! - `bench`: the stand-in platform and the launches of `gradlab issuer bench`;
//! - `routes`: the HTTP side (`/lti/login`, `/lti/launch`, `/lti/deep-link`, `/lti/session`,
//!   `/lti/scores`, `/lti/completion`).

pub mod bench;
pub mod deep_linking;
pub mod launch;
pub mod platform_keys;
pub mod registration;
pub mod routes;
pub mod scores;
pub mod store;
pub mod tool_key;

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};
use thiserror::Error;

/// Errors of the LTI layer (a refused launch is a `launch::Refusal`, not an error).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LtiError {
    #[error("the LTI tool key: {0}")]
    Key(String),
    #[error("the LTI platform: {0}")]
    Platform(String),
    #[error("no randomness: {0}")]
    Randomness(String),
}

/// What the LTI routes share: the tool's key, the platforms' cached keys, the score delivery.
#[derive(Debug)]
pub struct LtiState {
    pub tool_key: Arc<tool_key::ToolKey>,
    pub platform_keys: platform_keys::PlatformKeys,
    pub delivery: Arc<scores::Delivery>,
}

impl LtiState {
    pub fn new(tool_key: tool_key::ToolKey) -> Self {
        Self {
            tool_key: Arc::new(tool_key),
            platform_keys: platform_keys::PlatformKeys::default(),
            delivery: Arc::new(scores::Delivery::default()),
        }
    }
}

/// 256 random bits, URL-safe: states, nonces, session tokens, JWT ids.
pub fn random_token() -> Result<String, LtiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| LtiError::Randomness(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The SHA-256 of a session token, as stored (the token itself only ever lives in the page).
pub fn token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

pub fn unix_now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// Now, in RFC 3339 with milliseconds (AGS asks for sub-second precision in a score's timestamp).
pub fn now_rfc3339_millis() -> String {
    const FORMAT: &[time::format_description::FormatItem<'static>] =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    time::OffsetDateTime::now_utc()
        .format(FORMAT)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_string())
}
