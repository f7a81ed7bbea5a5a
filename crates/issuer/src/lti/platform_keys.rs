//! The platforms' public keys (their JWKS), fetched from the registered key set URL and cached
//! by `kid`; an unknown `kid` (a platform that rotated) fetches the set again, at most once every
//! few seconds per URL, so forged tokens with random kids cannot make the tool hammer a platform.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::DecodingKey;

use super::launch::Refusal;
use crate::client::Client;

const REFETCH_AFTER: Duration = Duration::from_secs(5);
/// A known key is trusted this long, then the set is fetched again: a key the platform withdrew
/// stops verifying within the hour.
const KEEP_FOR: Duration = Duration::from_secs(3600);

#[derive(Debug, Default)]
pub struct PlatformKeys {
    sets: Mutex<HashMap<String, (JwkSet, Instant)>>,
}

impl PlatformKeys {
    fn cached(&self, keyset_url: &str, kid: &str) -> Result<Option<DecodingKey>, Refusal> {
        let sets = self
            .sets
            .lock()
            .map_err(|_| Refusal::KeysetUnavailable("the key cache is poisoned".into()))?;
        let Some((set, fetched)) = sets.get(keyset_url) else {
            return Ok(None);
        };
        if fetched.elapsed() > KEEP_FOR {
            return Ok(None);
        }
        set.find(kid)
            .map(|jwk| DecodingKey::from_jwk(jwk).map_err(|e| Refusal::UnknownKey(format!("kid {kid}: {e}"))))
            .transpose()
    }

    fn fetched_recently(&self, keyset_url: &str) -> bool {
        self.sets
            .lock()
            .ok()
            .and_then(|sets| sets.get(keyset_url).map(|(_, at)| at.elapsed() < REFETCH_AFTER))
            .unwrap_or(false)
    }

    /// The key that signed a token, from the cache or the platform (blocking: call it off the
    /// async runtime's threads).
    pub fn key(&self, client: &Client, keyset_url: &str, kid: &str) -> Result<DecodingKey, Refusal> {
        if let Some(key) = self.cached(keyset_url, kid)? {
            return Ok(key);
        }
        if self.fetched_recently(keyset_url) {
            return Err(Refusal::UnknownKey(format!("kid {kid} is not in {keyset_url}")));
        }
        let reply = client
            .get(keyset_url)
            .map_err(|e| Refusal::KeysetUnavailable(e.to_string()))?;
        if reply.status != 200 {
            return Err(Refusal::KeysetUnavailable(format!(
                "{keyset_url} answered {}",
                reply.status
            )));
        }
        let set: serde_json::Value = serde_json::from_str(&reply.body)
            .map_err(|e| Refusal::KeysetUnavailable(format!("{keyset_url} is not JSON: {e}")))?;
        let keys = set["keys"]
            .as_array()
            .ok_or_else(|| Refusal::KeysetUnavailable(format!("{keyset_url} has no \"keys\"")))?;
        // Key by key: one key of a kind this tool does not read leaves the others usable.
        let set = JwkSet {
            keys: keys
                .iter()
                .filter_map(|k| serde_json::from_value(k.clone()).ok())
                .collect(),
        };
        if let Ok(mut sets) = self.sets.lock() {
            sets.insert(keyset_url.to_string(), (set, Instant::now()));
        }
        self.cached(keyset_url, kid)?
            .ok_or_else(|| Refusal::UnknownKey(format!("kid {kid} is not in {keyset_url}")))
    }
}
