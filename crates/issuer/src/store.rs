//! Where issued credentials live: one SQLite file under the data directory by default, or a
//! PostgreSQL database shared by several stateless instances. Both run the very same queries
//! through sqlx's `Any` driver; only the schema files differ (identity columns).

use std::path::Path;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::AnyPool;
use sqlx::Row;

use super::IssuerError;

/// The embedded schema of each database kind.
static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

/// The SQLite file's name inside the data directory.
pub const SQLITE_FILE: &str = "issuer.sqlite3";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A signed credential and what it was issued for, as one row.
#[derive(Debug, Clone)]
pub struct NewCredential {
    pub serial: u32,
    pub nonce: u32,
    pub issued_at: String,
    pub name: String,
    pub language: String,
    pub bank_version: u8,
    pub score_percent: u8,
    pub answers_json: String,
    pub key_id: String,
    pub credential_json: String,
    /// The attempt the answers came from, when the client named it (one credential each).
    pub attempt_id: Option<String>,
}

/// What storing a new credential did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    Inserted,
    /// Its attempt already has a credential (issued in between); nothing was stored.
    AttemptTaken,
}

/// The credential an attempt got: its name in the database and the signed JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptCredential {
    pub serial: u32,
    pub nonce: u32,
    pub credential_json: String,
}

/// A stored, signed credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCredential {
    pub credential_json: String,
    pub revoked_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revocation {
    Revoked,
    AlreadyRevoked { at: String },
    Unknown,
}

/// The database, with separate pools for writing and reading: SQLite allows one writer at a
/// time, so its writes go through one connection (no lock contention, no busy retries) while
/// reads run in parallel on others (WAL). PostgreSQL uses one pool for both.
#[derive(Debug, Clone)]
pub struct Store {
    pub(crate) writer: AnyPool,
    pub(crate) reader: AnyPool,
    backend: Backend,
    description: String,
}

pub(crate) fn db_error(context: &'static str) -> impl Fn(sqlx::Error) -> IssuerError {
    move |source| IssuerError::Database {
        context,
        detail: source.to_string(),
    }
}

/// SQLite connections: WAL (readers never block the writer), FULL synchronous commits (a
/// credential whose 201 went out survives even a power cut), and a busy timeout as a safety
/// net for other processes (the revoke command) writing at the same time.
fn sqlite_options(max_connections: u32) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(max_connections)
        .after_connect(|connection, _| {
            Box::pin(async move {
                use sqlx::Executor;
                connection
                    .execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;")
                    .await?;
                Ok(())
            })
        })
}

impl Store {
    /// Opens (and creates, with its schema) the database: `database_url` when given
    /// (`postgres://…`), else the SQLite file in `data_dir`.
    pub async fn open(database_url: Option<&str>, data_dir: &Path) -> Result<Self, IssuerError> {
        sqlx::any::install_default_drivers();
        let store = match database_url {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                let pool = AnyPoolOptions::new()
                    .max_connections(16)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect(url)
                    .await
                    .map_err(db_error("cannot connect to PostgreSQL"))?;
                Store {
                    writer: pool.clone(),
                    reader: pool,
                    backend: Backend::Postgres,
                    description: format!("PostgreSQL at {}", redact_url(url)),
                }
            }
            Some(url) => {
                return Err(IssuerError::Config(format!(
                    "--database-url must start with postgres:// (got \"{}\"); leave it out to use SQLite in the data directory",
                    redact_url(url)
                )))
            }
            None => {
                std::fs::create_dir_all(data_dir).map_err(|e| IssuerError::Io {
                    context: format!("cannot create the data directory {}", data_dir.display()),
                    detail: e.to_string(),
                })?;
                let path = data_dir.join(SQLITE_FILE);
                let url = format!("sqlite://{}?mode=rwc", path.display());
                let writer = sqlite_options(1)
                    .connect(&url)
                    .await
                    .map_err(db_error("cannot open the SQLite database"))?;
                let reader = sqlite_options(4)
                    .connect(&url)
                    .await
                    .map_err(db_error("cannot open the SQLite database"))?;
                Store {
                    writer,
                    reader,
                    backend: Backend::Sqlite,
                    description: format!("SQLite at {}", path.display()),
                }
            }
        };
        let migrator = match store.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator.run(&store.writer).await.map_err(|e| IssuerError::Database {
            context: "cannot create or update the schema",
            detail: e.to_string(),
        })?;
        Ok(store)
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Where the data lives, for the start-up line (passwords removed).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Publishes a public key (idempotent): every key that ever signed stays listed, so
    /// credentials signed before a rotation keep verifying.
    pub async fn register_key(&self, key_id: &str, public_key_multibase: &str, at: &str) -> Result<(), IssuerError> {
        sqlx::query(
            "INSERT INTO issuer_keys (key_id, public_key_multibase, registered_at) VALUES ($1, $2, $3) ON CONFLICT (key_id) DO NOTHING",
        )
        .bind(key_id)
        .bind(public_key_multibase)
        .bind(at)
        .execute(&self.writer)
        .await
        .map_err(db_error("cannot register the signing key"))?;
        Ok(())
    }

    /// Whether no credential was ever stored and no key published (the bench needs this).
    pub async fn is_empty(&self) -> Result<bool, IssuerError> {
        let row = sqlx::query("SELECT (SELECT COUNT(*) FROM credentials) + (SELECT COUNT(*) FROM issuer_keys)")
            .fetch_one(&self.reader)
            .await
            .map_err(db_error("cannot count the stored rows"))?;
        let rows: i64 = row.try_get(0).map_err(db_error("cannot count the stored rows"))?;
        Ok(rows == 0)
    }

    /// Every published key, oldest first: (key id, public key multibase).
    pub async fn keys(&self) -> Result<Vec<(String, String)>, IssuerError> {
        let rows = sqlx::query("SELECT key_id, public_key_multibase FROM issuer_keys ORDER BY registered_at, key_id")
            .fetch_all(&self.reader)
            .await
            .map_err(db_error("cannot read the published keys"))?;
        rows.iter()
            .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(db_error("cannot read the published keys"))
    }

    /// Takes the next `count` serials for this instance (one row update, so several
    /// instances on one database never share a serial); returns the first.
    pub async fn reserve_serials(&self, count: u32) -> Result<u32, IssuerError> {
        let row = sqlx::query(
            "UPDATE issuer_counters SET next_value = next_value + $1 WHERE name = 'serial' RETURNING next_value",
        )
        .bind(i64::from(count))
        .fetch_one(&self.writer)
        .await
        .map_err(db_error("cannot reserve serials"))?;
        let next: i64 = row.try_get(0).map_err(db_error("cannot reserve serials"))?;
        u32::try_from(next - i64::from(count)).map_err(|_| IssuerError::Exhausted)
    }

    /// Stores signed credentials in one transaction (one commit, so one disk flush, for a whole
    /// batch); they are durable once this returns, before any 201 goes out. A credential whose
    /// attempt already has one (stored earlier or earlier in the batch) is not stored.
    pub async fn insert(&self, credentials: &[NewCredential]) -> Result<Vec<Stored>, IssuerError> {
        let mut transaction = self
            .writer
            .begin()
            .await
            .map_err(db_error("cannot store the credential"))?;
        let mut outcomes = Vec::with_capacity(credentials.len());
        for new in credentials {
            let inserted = sqlx::query(
                "INSERT INTO credentials (serial, nonce, issued_at, name, language, bank_version, score_percent, answers, key_id, credential, attempt_id) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
                 ON CONFLICT (attempt_id) WHERE attempt_id IS NOT NULL DO NOTHING",
            )
            .bind(i64::from(new.serial))
            .bind(i64::from(new.nonce))
            .bind(&new.issued_at)
            .bind(&new.name)
            .bind(&new.language)
            .bind(i64::from(new.bank_version))
            .bind(i64::from(new.score_percent))
            .bind(&new.answers_json)
            .bind(&new.key_id)
            .bind(&new.credential_json)
            .bind(new.attempt_id.as_deref())
            .execute(&mut *transaction)
            .await
            .map_err(db_error("cannot store the credential"))?
            .rows_affected();
            outcomes.push(if inserted == 1 {
                Stored::Inserted
            } else {
                Stored::AttemptTaken
            });
        }
        transaction
            .commit()
            .await
            .map_err(db_error("cannot store the credential"))?;
        Ok(outcomes)
    }

    /// The credential issued for an attempt, if any.
    pub async fn credential_for_attempt(&self, attempt_id: &str) -> Result<Option<AttemptCredential>, IssuerError> {
        let row = sqlx::query("SELECT serial, nonce, credential FROM credentials WHERE attempt_id = $1")
            .bind(attempt_id)
            .fetch_optional(&self.writer)
            .await
            .map_err(db_error("cannot read the attempt's credential"))?;
        row.map(|row| {
            let serial: i64 = row.try_get(0)?;
            let nonce: i64 = row.try_get(1)?;
            Ok(AttemptCredential {
                serial: u32::try_from(serial).unwrap_or_default(),
                nonce: u32::try_from(nonce).unwrap_or_default(),
                credential_json: row.try_get(2)?,
            })
        })
        .transpose()
        .map_err(db_error("cannot read the attempt's credential"))
    }

    /// The signed credential named by (serial, nonce); `None` when unknown or never signed.
    pub async fn credential(&self, serial: u32, nonce: u32) -> Result<Option<StoredCredential>, IssuerError> {
        let row = sqlx::query("SELECT credential, revoked_at FROM credentials WHERE serial = $1 AND nonce = $2")
            .bind(i64::from(serial))
            .bind(i64::from(nonce))
            .fetch_optional(&self.reader)
            .await
            .map_err(db_error("cannot read the credential"))?;
        row.map(|row| {
            Ok(StoredCredential {
                credential_json: row.try_get(0)?,
                revoked_at: row.try_get(1)?,
            })
        })
        .transpose()
        .map_err(db_error("cannot read the credential"))
    }

    /// Marks a credential revoked; the status list shows it from the next request on.
    pub async fn revoke(&self, serial: u32, nonce: u32, reason: &str, at: &str) -> Result<Revocation, IssuerError> {
        let changed = sqlx::query(
            "UPDATE credentials SET revoked_at = $1, revocation_reason = $2 \
             WHERE serial = $3 AND nonce = $4 AND revoked_at IS NULL",
        )
        .bind(at)
        .bind(reason)
        .bind(i64::from(serial))
        .bind(i64::from(nonce))
        .execute(&self.writer)
        .await
        .map_err(db_error("cannot revoke the credential"))?
        .rows_affected();
        if changed == 1 {
            return Ok(Revocation::Revoked);
        }
        Ok(match self.credential(serial, nonce).await? {
            Some(StoredCredential {
                revoked_at: Some(at), ..
            }) => Revocation::AlreadyRevoked { at },
            _ => Revocation::Unknown,
        })
    }

    /// Revoked serials in `first..=last`, for one status list.
    pub async fn revoked_serials(&self, first: u64, last: u64) -> Result<Vec<u64>, IssuerError> {
        let (first, last) = (
            i64::try_from(first).unwrap_or(i64::MAX),
            i64::try_from(last).unwrap_or(i64::MAX),
        );
        let rows = sqlx::query(
            "SELECT serial FROM credentials WHERE revoked_at IS NOT NULL AND serial >= $1 AND serial <= $2",
        )
        .bind(first)
        .bind(last)
        .fetch_all(&self.reader)
        .await
        .map_err(db_error("cannot read the revocations"))?;
        rows.iter()
            .map(|row| row.try_get::<i64, _>(0).map(|s| s.unsigned_abs()))
            .collect::<Result<_, _>>()
            .map_err(db_error("cannot read the revocations"))
    }

    pub async fn close(&self) {
        self.writer.close().await;
        self.reader.close().await;
    }
}

/// A database URL without its password, safe for logs and errors.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end && url[scheme_end + 3..at].contains(':') => {
            let user = url[scheme_end + 3..at].split(':').next().unwrap_or_default();
            format!("{}{}:***{}", &url[..scheme_end + 3], user, &url[at..])
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn passwords_never_reach_logs() {
        assert_eq!(
            redact_url("postgres://app:s3cret@db:5432/gradlab"),
            "postgres://app:***@db:5432/gradlab"
        );
        assert_eq!(redact_url("postgres://db/gradlab"), "postgres://db/gradlab");
        assert_eq!(redact_url("postgres://app@db/gradlab"), "postgres://app@db/gradlab");
    }
}
