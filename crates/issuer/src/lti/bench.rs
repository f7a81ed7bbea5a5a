//! The LTI part of `gradlab issuer bench`: launches (login initiation, then the signed launch)
//! and scores (the page's post, then the delivery to the platform) per second on loopback.
//!
//! The platform here is a stand-in served by this process, so that the figures are the tool's:
//! it publishes a key set, signs each launch's `id_token` (in the client thread, counted in the
//! launch's latency as a real platform's signing would be), hands out an access token without
//! checking the assertion, and accepts every score. The real platform implementation the tests
//! run (`lti1p3platform`) would measure its own Python speed instead.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use serde_json::json;

use super::launch::{
    Platform, CLAIM_AGS_ENDPOINT, CLAIM_DEPLOYMENT_ID, CLAIM_MESSAGE_TYPE, CLAIM_RESOURCE_LINK, CLAIM_TARGET_LINK_URI,
    CLAIM_VERSION, SCOPE_SCORE,
};
use super::tool_key::ToolKey;
use super::unix_now;
use crate::client::Client;
use crate::store::Store;
use crate::IssuerError;

const CLIENT_ID: &str = "bench-client";
const DEPLOYMENT_ID: &str = "bench-deployment";

/// The stand-in platform: its address, its signing key and how many scores it received.
#[derive(Debug)]
pub struct BenchPlatform {
    pub url: String,
    pub key: ToolKey,
    pub scores: Arc<AtomicUsize>,
}

impl BenchPlatform {
    /// Serves the platform's routes on a loopback port of the current runtime.
    pub async fn start(dir: &Path) -> Result<Self, IssuerError> {
        let key = ToolKey::load_or_create(dir).map_err(|e| IssuerError::Config(e.to_string()))?;
        let jwks = key.jwks().to_string();
        let scores = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&scores);
        let app = Router::new()
            .route("/jwks", get(move || async move { jwks }))
            .route(
                "/token",
                post(|| async { r#"{"access_token":"bench","token_type":"bearer","expires_in":3600}"# }),
            )
            .route(
                "/lineitems/1/scores",
                post(move || async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    ""
                }),
            );
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .map_err(|e| IssuerError::Io {
                context: "the bench platform cannot listen".into(),
                detail: e.to_string(),
            })?;
        let address = listener.local_addr().map_err(|e| IssuerError::Io {
            context: "the bench platform has no address".into(),
            detail: e.to_string(),
        })?;
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            url: format!("http://{address}"),
            key,
            scores,
        })
    }

    pub fn registration(&self) -> Platform {
        Platform {
            issuer: self.url.clone(),
            client_id: CLIENT_ID.into(),
            auth_login_url: format!("{}/auth", self.url),
            auth_token_url: format!("{}/token", self.url),
            keyset_url: format!("{}/jwks", self.url),
        }
    }

    /// Registers this platform with the tool's database.
    pub async fn register(&self, store: &Store) -> Result<(), IssuerError> {
        store
            .add_lti_platform(&self.registration(), Some(DEPLOYMENT_ID), unix_now())
            .await
    }
}

fn query_of(url: &str) -> HashMap<String, String> {
    url::Url::parse(url)
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

/// One learner's launch, as a browser and the platform make it: returns the session token.
pub fn launch(
    client: &Client,
    tool: &str,
    public_url: &str,
    platform: &BenchPlatform,
    learner: usize,
) -> Option<String> {
    let target = format!("{public_url}/lti/launch");
    let login = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("iss", &platform.url)
        .append_pair("login_hint", &format!("learner-{learner}"))
        .append_pair("target_link_uri", &target)
        .append_pair("client_id", CLIENT_ID)
        .finish();
    let reply = client.get(&format!("{tool}/lti/login?{login}")).ok()?;
    let authentication = query_of(reply.location.as_deref()?);
    let now = unix_now();
    let id_token = platform
        .key
        .sign(&json!({
            "iss": platform.url,
            "aud": CLIENT_ID,
            "azp": CLIENT_ID,
            "sub": format!("learner-{learner}"),
            "name": format!("Learner {learner}"),
            "iat": now,
            "exp": now + 300,
            "nonce": authentication.get("nonce")?,
            CLAIM_MESSAGE_TYPE: "LtiResourceLinkRequest",
            CLAIM_VERSION: "1.3.0",
            CLAIM_DEPLOYMENT_ID: DEPLOYMENT_ID,
            CLAIM_TARGET_LINK_URI: target,
            CLAIM_RESOURCE_LINK: {"id": "quiz"},
            CLAIM_AGS_ENDPOINT: {"scope": [SCOPE_SCORE], "lineitem": format!("{}/lineitems/1", platform.url)},
        }))
        .ok()?;
    let reply = client
        .post_form(
            &format!("{tool}/lti/launch"),
            &[("id_token", &id_token), ("state", authentication.get("state")?)],
        )
        .ok()?;
    if reply.status != 303 {
        return None;
    }
    reply.location?.split_once("#lti=").map(|(_, token)| token.to_string())
}

/// Waits until the platform has `expected` scores; the seconds it took, or `None` after `limit`.
pub fn wait_for_scores(platform: &BenchPlatform, expected: usize, limit: Duration) -> Option<f64> {
    let started = std::time::SystemTime::now();
    loop {
        let elapsed = started.elapsed().unwrap_or_default();
        if platform.scores.load(Ordering::SeqCst) >= expected {
            return Some(elapsed.as_secs_f64());
        }
        if elapsed > limit {
            return None;
        }
        // Polls the counter; the delivery itself runs in the server's loop meanwhile.
        std::thread::sleep(Duration::from_millis(5));
    }
}
