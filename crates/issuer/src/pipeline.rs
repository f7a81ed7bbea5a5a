//! What makes issuance fast without weakening it: serials come from blocks reserved in the
//! database (one update per block), and signed credentials are written by one task that commits
//! whatever has queued up in one transaction (group commit: one disk flush for many
//! credentials). Every caller still waits for the commit of its own credential before its 201.
//! Look-ups of credentials, which never change once signed, are served from a bounded cache.

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use super::store::{NewCredential, Store, Stored};
use super::IssuerError;
use gradlab_quiz::certificate::IssuedId;

/// Serials reserved per database round trip.
const SERIAL_BLOCK: u32 = 64;
/// Most credentials committed in one transaction.
const MAX_BATCH: usize = 256;
/// Credentials kept for look-ups (a few KB each).
const CACHE_ENTRIES: usize = 4096;

/// Hands out this instance's serials from blocks reserved in the database.
#[derive(Debug, Default)]
pub struct Serials {
    block: tokio::sync::Mutex<Range<u32>>,
}

impl Serials {
    pub async fn next(&self, store: &Store) -> Result<u32, IssuerError> {
        let mut block = self.block.lock().await;
        if block.is_empty() {
            let first = store.reserve_serials(SERIAL_BLOCK).await?;
            *block = first..first.saturating_add(SERIAL_BLOCK);
        }
        let serial = block.start;
        block.start += 1;
        if serial == 0 || serial > IssuedId::MAX_SERIAL {
            return Err(IssuerError::Exhausted);
        }
        Ok(serial)
    }
}

type Pending = (NewCredential, oneshot::Sender<Result<Stored, IssuerError>>);

/// The single writer of new credentials (group commit).
#[derive(Debug, Clone)]
pub struct Writer {
    queue: mpsc::Sender<Pending>,
}

impl Writer {
    /// Starts the writer task on the current tokio runtime.
    pub fn start(store: Store) -> Self {
        let (queue, mut incoming) = mpsc::channel::<Pending>(4 * MAX_BATCH);
        tokio::spawn(async move {
            let mut batch = Vec::with_capacity(MAX_BATCH);
            while incoming.recv_many(&mut batch, MAX_BATCH).await > 0 {
                let (rows, replies): (Vec<NewCredential>, Vec<_>) = batch.drain(..).unzip();
                match store.insert(&rows).await {
                    Ok(outcomes) => {
                        for (reply, outcome) in replies.into_iter().zip(outcomes) {
                            let _ = reply.send(Ok(outcome));
                        }
                    }
                    Err(error) => {
                        for reply in replies {
                            let _ = reply.send(Err(error.clone()));
                        }
                    }
                }
            }
        });
        Self { queue }
    }

    /// Returns once the credential is committed (or found to belong to an attempt that has
    /// one already).
    pub async fn store(&self, credential: NewCredential) -> Result<Stored, IssuerError> {
        let stopped = || IssuerError::Io {
            context: "the credential writer has stopped".into(),
            detail: "the service is shutting down".into(),
        };
        let (reply, committed) = oneshot::channel();
        self.queue.send((credential, reply)).await.map_err(|_| stopped())?;
        committed.await.map_err(|_| stopped())?
    }
}

/// A credential's name in the database: (serial, nonce).
type CredentialKey = (u32, u32);

/// The cached credentials, and their keys oldest first.
#[derive(Debug, Default)]
struct CacheEntries {
    map: HashMap<CredentialKey, Arc<str>>,
    order: VecDeque<CredentialKey>,
}

/// Signed credentials by (serial, nonce), first in first out once full.
#[derive(Debug, Default)]
pub struct CredentialCache {
    entries: Mutex<CacheEntries>,
}

impl CredentialCache {
    pub fn get(&self, serial: u32, nonce: u32) -> Option<Arc<str>> {
        let entries = self.entries.lock().ok()?;
        entries.map.get(&(serial, nonce)).cloned()
    }

    pub fn put(&self, serial: u32, nonce: u32, credential: Arc<str>) {
        if let Ok(mut entries) = self.entries.lock() {
            let CacheEntries { map, order } = &mut *entries;
            if map.insert((serial, nonce), credential).is_none() {
                order.push_back((serial, nonce));
                if order.len() > CACHE_ENTRIES {
                    if let Some(oldest) = order.pop_front() {
                        map.remove(&oldest);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_stays_bounded_and_keeps_the_newest() {
        let cache = CredentialCache::default();
        for serial in 1..=(CACHE_ENTRIES as u32 + 10) {
            cache.put(serial, 7, Arc::from(format!("c{serial}")));
        }
        assert!(cache.get(1, 7).is_none());
        assert_eq!(cache.get(CACHE_ENTRIES as u32 + 10, 7).as_deref(), Some("c4106"));
        assert!(
            cache.get(CACHE_ENTRIES as u32 + 10, 8).is_none(),
            "the nonce is part of the key"
        );
        assert_eq!(cache.entries.lock().unwrap().map.len(), CACHE_ENTRIES);
    }
}
