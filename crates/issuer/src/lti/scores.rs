//! Assignment and Grade Services 2.0: scores posted to a line item with an OAuth 2 access token
//! (client-credentials grant, the tool's signed JWT as the client assertion: Security Framework
//! §4.1), from a queue in the database. A score is queued before the learner hears of it, and
//! the delivery loop retries with backoff until the platform accepts it, across restarts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::launch::{Platform, SCOPE_SCORE};
use super::tool_key::ToolKey;
use super::{random_token, unix_now, LtiError};
use crate::client::Client;
use crate::store::Store;

pub const SCORE_MEDIA_TYPE: &str = "application/vnd.ims.lis.v1.score+json";
const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// First retry after this many seconds, doubling up to `MAX_BACKOFF_SECS`.
pub const FIRST_BACKOFF_SECS: i64 = 5;
pub const MAX_BACKOFF_SECS: i64 = 3600;
/// After this many failed posts (about three and a half hours of backoff) a score is given up:
/// never due again, and the page tells the learner to ask the teacher.
pub const MAX_ATTEMPTS: i64 = 12;
/// The `next_attempt_at` of a score given up.
pub const GIVEN_UP: i64 = i64::MAX;

/// Scores taken from the queue at a time.
const DELIVERY_BATCH: i64 = 16;
/// How long a loop holds a score it is posting: past it (the instance died mid-post) another
/// loop may take it again.
const LEASE_SECS: i64 = 120;

/// The wait before attempt `attempts + 1` (after `attempts` failures).
pub fn backoff_secs(attempts: i64) -> i64 {
    let doublings = u32::try_from(attempts.clamp(0, 20)).unwrap_or(20);
    FIRST_BACKOFF_SECS
        .saturating_mul(1_i64 << doublings)
        .min(MAX_BACKOFF_SECS)
}

/// How a quiz result or an experiment's completion reads in the gradebook.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// The server-graded quiz: score of 100.
    Quiz { percent: u8 },
    /// An experiment done: 1 of 1, or progress only when the teacher chose ungraded.
    Completed { graded: bool },
}

/// The score's JSON (`application/vnd.ims.lis.v1.score+json`).
pub fn score_body(user_id: &str, outcome: Outcome, timestamp: &str) -> Value {
    let mut body = json!({
        "userId": user_id,
        "activityProgress": "Completed",
        "timestamp": timestamp,
    });
    match outcome {
        Outcome::Quiz { percent } => {
            body["scoreGiven"] = json!(percent);
            body["scoreMaximum"] = json!(100);
            body["gradingProgress"] = json!("FullyGraded");
        }
        Outcome::Completed { graded: true } => {
            body["scoreGiven"] = json!(1);
            body["scoreMaximum"] = json!(1);
            body["gradingProgress"] = json!("FullyGraded");
        }
        Outcome::Completed { graded: false } => {
            body["gradingProgress"] = json!("NotReady");
        }
    }
    body
}

/// The scores endpoint of a line item: its URL with `/scores` appended to the path (AGS §3.4).
pub fn scores_url(lineitem_url: &str) -> Result<String, LtiError> {
    let mut url =
        url::Url::parse(lineitem_url).map_err(|e| LtiError::Platform(format!("line item {lineitem_url}: {e}")))?;
    let path = format!("{}/scores", url.path().trim_end_matches('/'));
    url.set_path(&path);
    Ok(url.into())
}

/// Access tokens by platform, reused until a minute before they expire.
#[derive(Debug, Default)]
pub struct AccessTokens {
    tokens: Mutex<HashMap<(String, String), (String, i64)>>,
}

impl AccessTokens {
    fn cached(&self, platform: &Platform, now: i64) -> Option<String> {
        let tokens = self.tokens.lock().ok()?;
        tokens
            .get(&(platform.issuer.clone(), platform.client_id.clone()))
            .filter(|(_, expires)| *expires > now + 60)
            .map(|(token, _)| token.clone())
    }

    fn forget(&self, platform: &Platform) {
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.remove(&(platform.issuer.clone(), platform.client_id.clone()));
        }
    }

    /// A token with the score scope, from the cache or the platform's token endpoint.
    pub fn get(&self, client: &Client, key: &ToolKey, platform: &Platform) -> Result<String, LtiError> {
        let now = unix_now();
        if let Some(token) = self.cached(platform, now) {
            return Ok(token);
        }
        let assertion = key.sign(&json!({
            "iss": platform.client_id,
            "sub": platform.client_id,
            "aud": platform.auth_token_url,
            "iat": now,
            "exp": now + 300,
            "jti": random_token()?,
        }))?;
        let reply = client
            .post_form(
                &platform.auth_token_url,
                &[
                    ("grant_type", "client_credentials"),
                    ("client_assertion_type", ASSERTION_TYPE),
                    ("client_assertion", &assertion),
                    ("scope", SCOPE_SCORE),
                ],
            )
            .map_err(|e| LtiError::Platform(format!("token endpoint: {e}")))?;
        if reply.status != 200 {
            return Err(LtiError::Platform(format!(
                "token endpoint answered {}: {}",
                reply.status,
                clip(&reply.body)
            )));
        }
        let body: Value = serde_json::from_str(&reply.body)
            .map_err(|e| LtiError::Platform(format!("token endpoint sent no JSON: {e}")))?;
        let token = body["access_token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| LtiError::Platform("token endpoint sent no access_token".into()))?
            .to_string();
        // The platform's number, kept within a day (an absurd value must not overflow).
        let lifetime = body["expires_in"].as_i64().unwrap_or(3600).clamp(1, 86_400);
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.insert(
                (platform.issuer.clone(), platform.client_id.clone()),
                (token.clone(), now.saturating_add(lifetime)),
            );
        }
        Ok(token)
    }
}

fn clip(text: &str) -> String {
    text.chars().take(200).collect()
}

/// Posts one score; `Ok` once the platform accepted it (2xx).
pub fn post_score(
    client: &Client,
    key: &ToolKey,
    tokens: &AccessTokens,
    platform: &Platform,
    lineitem_url: &str,
    body: &str,
) -> Result<(), LtiError> {
    let url = scores_url(lineitem_url)?;
    for retry_with_new_token in [false, true] {
        let token = tokens.get(client, key, platform)?;
        let reply = client
            .post_bearer(&url, &token, SCORE_MEDIA_TYPE, body)
            .map_err(|e| LtiError::Platform(format!("scores endpoint: {e}")))?;
        match reply.status {
            200..=299 => return Ok(()),
            // A token the platform revoked or forgot: one new token, once.
            401 if !retry_with_new_token => tokens.forget(platform),
            status => {
                return Err(LtiError::Platform(format!(
                    "scores endpoint answered {status}: {}",
                    clip(&reply.body)
                )))
            }
        }
    }
    Err(LtiError::Platform("scores endpoint refused two access tokens".into()))
}

/// The delivery loop's shared parts: woken when a score is queued.
#[derive(Debug, Default)]
pub struct Delivery {
    pub wake: tokio::sync::Notify,
    pub tokens: AccessTokens,
}

/// Delivers due scores until the process ends; sleeps until the next is due (at most 30 s) or a
/// new score is queued.
pub async fn deliver_forever(store: Store, key: Arc<ToolKey>, delivery: Arc<Delivery>) {
    let client = Client::new();
    loop {
        let now = unix_now();
        let mut wait = 30;
        match store.due_lti_scores(now, DELIVERY_BATCH).await {
            Ok((due, next)) => {
                let full = due.len() == usize::try_from(DELIVERY_BATCH).unwrap_or(usize::MAX);
                for score in due {
                    // Taken for this loop alone (several instances may share one database).
                    match store.lease_lti_score(&score, now + LEASE_SECS).await {
                        Ok(true) => deliver_one(&store, &client, &key, &delivery, score).await,
                        Ok(false) => {}
                        Err(e) => eprintln!("gradlab issuer: LTI score {}: {e}", score.id),
                    }
                }
                if full {
                    // A backlog: the next batch at once.
                    wait = 0;
                } else if let Some(next) = next {
                    wait = (next - unix_now()).clamp(0, 30);
                }
            }
            Err(e) => eprintln!("gradlab issuer: LTI score queue: {e}"),
        }
        let wait = Duration::from_secs(u64::try_from(wait).unwrap_or(30));
        tokio::select! {
            () = tokio::time::sleep(wait) => {},
            () = delivery.wake.notified() => {},
        }
    }
}

async fn deliver_one(
    store: &Store,
    client: &Client,
    key: &Arc<ToolKey>,
    delivery: &Arc<Delivery>,
    score: super::store::QueuedScore,
) {
    let platform = match store.lti_platform(&score.issuer, Some(&score.client_id)).await {
        Ok(Some(platform)) => platform,
        Ok(None) => {
            let _ = store
                .lti_score_failed(
                    score.id,
                    "the platform's registration was removed",
                    unix_now() + MAX_BACKOFF_SECS,
                )
                .await;
            return;
        }
        Err(e) => {
            eprintln!("gradlab issuer: LTI score {}: {e}", score.id);
            return;
        }
    };
    let (client, key, delivery) = (client.clone(), Arc::clone(key), Arc::clone(delivery));
    let (lineitem, body) = (score.lineitem_url.clone(), score.body.clone());
    let posted =
        tokio::task::spawn_blocking(move || post_score(&client, &key, &delivery.tokens, &platform, &lineitem, &body))
            .await
            .unwrap_or_else(|e| Err(LtiError::Platform(format!("the delivery task failed: {e}"))));
    let now = unix_now();
    let recorded = match posted {
        Ok(()) => {
            eprintln!(
                "gradlab issuer: LTI score {} delivered to {} (attempt {})",
                score.id,
                score.lineitem_url,
                score.attempts + 1
            );
            store.lti_score_delivered(score.id, now).await
        }
        Err(e) => {
            eprintln!(
                "gradlab issuer: LTI score {} not delivered (attempt {}): {e}",
                score.id,
                score.attempts + 1
            );
            let next = if score.attempts + 1 >= MAX_ATTEMPTS {
                eprintln!(
                    "gradlab issuer: LTI score {} given up after {MAX_ATTEMPTS} attempts",
                    score.id
                );
                GIVEN_UP
            } else {
                now + backoff_secs(score.attempts)
            };
            store.lti_score_failed(score.id, &e.to_string(), next).await
        }
    };
    if let Err(e) = recorded {
        eprintln!("gradlab issuer: LTI score {}: {e}", score.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_go_to_the_line_item_path_plus_scores_keeping_its_query() {
        assert_eq!(
            scores_url("https://lms.example/api/lti/courses/7/line_items/3?type=quiz").unwrap(),
            "https://lms.example/api/lti/courses/7/line_items/3/scores?type=quiz"
        );
        assert_eq!(
            scores_url("http://127.0.0.1:9/lineitems/1/").unwrap(),
            "http://127.0.0.1:9/lineitems/1/scores"
        );
        assert!(scores_url("not a url").is_err());
    }

    #[test]
    fn the_score_body_says_what_the_gradebook_shows() {
        let quiz = score_body("u1", Outcome::Quiz { percent: 85 }, "2026-12-07T10:00:00.000Z");
        assert_eq!(quiz["scoreGiven"], 85);
        assert_eq!(quiz["scoreMaximum"], 100);
        assert_eq!(quiz["gradingProgress"], "FullyGraded");
        assert_eq!(quiz["activityProgress"], "Completed");
        assert_eq!(quiz["userId"], "u1");
        let done = score_body("u1", Outcome::Completed { graded: true }, "t");
        assert_eq!(
            (done["scoreGiven"].clone(), done["scoreMaximum"].clone()),
            (json!(1), json!(1))
        );
        let ungraded = score_body("u1", Outcome::Completed { graded: false }, "t");
        assert!(ungraded.get("scoreGiven").is_none());
        assert_eq!(ungraded["gradingProgress"], "NotReady");
    }

    #[test]
    fn retries_back_off_from_five_seconds_to_an_hour() {
        let waits: Vec<i64> = (0..12).map(backoff_secs).collect();
        assert_eq!(&waits[..5], &[5, 10, 20, 40, 80]);
        assert_eq!(waits[11], 3600);
        assert_eq!(backoff_secs(-3), 5);
        assert_eq!(backoff_secs(i64::MAX), 3600);
    }
}
