//! The LTI tables (schema in migrations/*/0003_lti.sql), through the same `Store` and the same
//! queries on SQLite and PostgreSQL.

use sqlx::Row;

use super::deep_linking::PendingDeepLink;
use super::launch::{PendingLogin, Platform, VerifiedLaunch};
use crate::store::{db_error, Store};
use crate::IssuerError;

/// A launched learner's session, found by its token's hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub issuer: String,
    pub client_id: String,
    pub subject: String,
    pub name: String,
    pub platform_name: String,
    pub context_title: String,
    pub target: String,
    pub lineitem_url: Option<String>,
    /// The teacher left the linked experiment ungraded: completion is posted as progress only.
    pub progress_only: bool,
    pub expires_at: i64,
}

/// A score waiting for its platform, or delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedScore {
    pub id: i64,
    pub issuer: String,
    pub client_id: String,
    pub lineitem_url: String,
    pub body: String,
    pub attempts: i64,
    pub next_attempt_at: i64,
    pub delivered_at: Option<i64>,
    pub last_error: Option<String>,
}

fn platform_of(row: &sqlx::any::AnyRow) -> Result<Platform, sqlx::Error> {
    Ok(Platform {
        issuer: row.try_get(0)?,
        client_id: row.try_get(1)?,
        auth_login_url: row.try_get(2)?,
        auth_token_url: row.try_get(3)?,
        keyset_url: row.try_get(4)?,
    })
}

fn score_of(row: &sqlx::any::AnyRow) -> Result<QueuedScore, sqlx::Error> {
    Ok(QueuedScore {
        id: row.try_get(0)?,
        issuer: row.try_get(1)?,
        client_id: row.try_get(2)?,
        lineitem_url: row.try_get(3)?,
        body: row.try_get(4)?,
        attempts: row.try_get(5)?,
        next_attempt_at: row.try_get(6)?,
        delivered_at: row.try_get(7)?,
        last_error: row.try_get(8)?,
    })
}

/// The columns `score_of` reads, in its order (a macro, so that queries stay literals).
macro_rules! score_columns {
    () => {
        "id, issuer, client_id, lineitem_url, body, attempts, next_attempt_at, delivered_at, last_error"
    };
}

impl Store {
    /// Publishes the tool's public keys (idempotent).
    pub async fn register_lti_tool_keys(&self, keys: &[(String, String)], now: i64) -> Result<(), IssuerError> {
        for (kid, jwk) in keys {
            sqlx::query(
                "INSERT INTO lti_tool_keys (kid, jwk, registered_at) VALUES ($1, $2, $3) ON CONFLICT (kid) DO NOTHING",
            )
            .bind(kid)
            .bind(jwk)
            .bind(now)
            .execute(&self.writer)
            .await
            .map_err(db_error("cannot publish the LTI tool key"))?;
        }
        Ok(())
    }

    /// Every tool key published by any instance, newest first (as JWK JSON).
    pub async fn lti_tool_keys(&self) -> Result<Vec<String>, IssuerError> {
        let error = db_error("cannot read the LTI tool keys");
        sqlx::query("SELECT jwk FROM lti_tool_keys ORDER BY registered_at DESC, kid")
            .fetch_all(&self.reader)
            .await
            .map_err(&error)?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(&error)
    }

    /// Registers a platform (or updates its URLs) and its deployment, in one transaction.
    pub async fn add_lti_platform(
        &self,
        platform: &Platform,
        deployment_id: Option<&str>,
        now: i64,
    ) -> Result<(), IssuerError> {
        let error = db_error("cannot register the LTI platform");
        let mut transaction = self.writer.begin().await.map_err(&error)?;
        sqlx::query(
            "INSERT INTO lti_platforms (issuer, client_id, auth_login_url, auth_token_url, keyset_url, registered_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (issuer, client_id) DO UPDATE SET \
             auth_login_url = excluded.auth_login_url, auth_token_url = excluded.auth_token_url, keyset_url = excluded.keyset_url",
        )
        .bind(&platform.issuer)
        .bind(&platform.client_id)
        .bind(&platform.auth_login_url)
        .bind(&platform.auth_token_url)
        .bind(&platform.keyset_url)
        .bind(now)
        .execute(&mut *transaction)
        .await
        .map_err(&error)?;
        if let Some(deployment_id) = deployment_id {
            sqlx::query(
                "INSERT INTO lti_deployments (issuer, client_id, deployment_id) VALUES ($1, $2, $3) \
                 ON CONFLICT (issuer, client_id, deployment_id) DO NOTHING",
            )
            .bind(&platform.issuer)
            .bind(&platform.client_id)
            .bind(deployment_id)
            .execute(&mut *transaction)
            .await
            .map_err(&error)?;
        }
        transaction.commit().await.map_err(&error)
    }

    /// Records an invitation to register (its code's hash), optionally for one issuer.
    pub async fn create_lti_invite(
        &self,
        code_sha256: &str,
        issuer: Option<&str>,
        now: i64,
        expires_at: i64,
    ) -> Result<(), IssuerError> {
        sqlx::query("INSERT INTO lti_invites (code_sha256, issuer, created_at, expires_at) VALUES ($1, $2, $3, $4)")
            .bind(code_sha256)
            .bind(issuer)
            .bind(now)
            .bind(expires_at)
            .execute(&self.writer)
            .await
            .map_err(db_error("cannot record the invitation"))?;
        Ok(())
    }

    /// Takes an invitation for a registration, once, while it is valid: `Some(issuer it names)`.
    pub async fn take_lti_invite(&self, code_sha256: &str, now: i64) -> Result<Option<Option<String>>, IssuerError> {
        let error = db_error("cannot read the invitation");
        let row = sqlx::query(
            "UPDATE lti_invites SET used_at = $1 WHERE code_sha256 = $2 AND used_at IS NULL AND expires_at > $1 \
             RETURNING issuer",
        )
        .bind(now)
        .bind(code_sha256)
        .fetch_optional(&self.writer)
        .await
        .map_err(&error)?;
        row.map(|row| row.try_get::<Option<String>, _>(0))
            .transpose()
            .map_err(&error)
    }

    /// Gives back an invitation whose registration failed, so that the administrator can retry.
    pub async fn release_lti_invite(&self, code_sha256: &str) -> Result<(), IssuerError> {
        sqlx::query("UPDATE lti_invites SET used_at = NULL WHERE code_sha256 = $1")
            .bind(code_sha256)
            .execute(&self.writer)
            .await
            .map_err(db_error("cannot give the invitation back"))?;
        Ok(())
    }

    /// Every registered platform, with its deployments.
    pub async fn lti_platforms(&self) -> Result<Vec<(Platform, Vec<String>)>, IssuerError> {
        let error = db_error("cannot read the LTI platforms");
        let rows = sqlx::query(
            "SELECT issuer, client_id, auth_login_url, auth_token_url, keyset_url FROM lti_platforms ORDER BY issuer, client_id",
        )
        .fetch_all(&self.reader)
        .await
        .map_err(&error)?;
        let mut platforms = Vec::with_capacity(rows.len());
        for row in &rows {
            let platform = platform_of(row).map_err(&error)?;
            let deployments = self.lti_deployments(&platform.issuer, &platform.client_id).await?;
            platforms.push((platform, deployments));
        }
        Ok(platforms)
    }

    /// The platform a login names: by issuer and client id, or by issuer alone when the platform
    /// sent no client id and only one registration has that issuer.
    pub async fn lti_platform(&self, issuer: &str, client_id: Option<&str>) -> Result<Option<Platform>, IssuerError> {
        let error = db_error("cannot read the LTI platform");
        let rows = sqlx::query(
            "SELECT issuer, client_id, auth_login_url, auth_token_url, keyset_url FROM lti_platforms \
             WHERE issuer = $1 AND ($2 = '' OR client_id = $2)",
        )
        .bind(issuer)
        .bind(client_id.unwrap_or(""))
        .fetch_all(&self.reader)
        .await
        .map_err(&error)?;
        match rows.as_slice() {
            [one] => Ok(Some(platform_of(one).map_err(&error)?)),
            _ => Ok(None),
        }
    }

    /// The deployment ids registered for a platform.
    pub async fn lti_deployments(&self, issuer: &str, client_id: &str) -> Result<Vec<String>, IssuerError> {
        let error = db_error("cannot read the LTI deployments");
        sqlx::query(
            "SELECT deployment_id FROM lti_deployments WHERE issuer = $1 AND client_id = $2 ORDER BY deployment_id",
        )
        .bind(issuer)
        .bind(client_id)
        .fetch_all(&self.reader)
        .await
        .map_err(&error)?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()
        .map_err(&error)
    }

    /// Records a login initiation's state and nonce (and forgets logins older than an hour: a
    /// launch of one is refused as unknown instead of replayed, refused all the same).
    pub async fn begin_lti_login(&self, state: &str, login: &PendingLogin, now: i64) -> Result<(), IssuerError> {
        let error = db_error("cannot record the LTI login");
        sqlx::query("DELETE FROM lti_logins WHERE created_at < $1")
            .bind(now - 3600)
            .execute(&self.writer)
            .await
            .map_err(&error)?;
        sqlx::query(
            "INSERT INTO lti_logins (state, nonce, issuer, client_id, target_link_uri, storage_target, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(state)
        .bind(&login.nonce)
        .bind(&login.issuer)
        .bind(&login.client_id)
        .bind(&login.target_link_uri)
        .bind(login.storage_target.as_deref())
        .bind(now)
        .execute(&self.writer)
        .await
        .map_err(&error)?;
        Ok(())
    }

    /// Takes a login for its launch, once: `Ok(Err(true))` when it was already taken, `Ok(Err(false))`
    /// when there is no such login or it is older than `max_age`.
    pub async fn take_lti_login(
        &self,
        state: &str,
        now: i64,
        max_age: i64,
    ) -> Result<Result<PendingLogin, bool>, IssuerError> {
        let error = db_error("cannot read the LTI login");
        let taken = sqlx::query(
            "UPDATE lti_logins SET used_at = $1 WHERE state = $2 AND used_at IS NULL AND created_at >= $3 \
             RETURNING nonce, issuer, client_id, target_link_uri, storage_target",
        )
        .bind(now)
        .bind(state)
        .bind(now - max_age)
        .fetch_optional(&self.writer)
        .await
        .map_err(&error)?;
        if let Some(row) = taken {
            return Ok(Ok(PendingLogin {
                nonce: row.try_get(0).map_err(&error)?,
                issuer: row.try_get(1).map_err(&error)?,
                client_id: row.try_get(2).map_err(&error)?,
                target_link_uri: row.try_get(3).map_err(&error)?,
                storage_target: row.try_get(4).map_err(&error)?,
            }));
        }
        let used = sqlx::query("SELECT COUNT(*) FROM lti_logins WHERE state = $1 AND used_at IS NOT NULL")
            .bind(state)
            .fetch_one(&self.writer)
            .await
            .map_err(&error)?;
        let used: i64 = used.try_get(0).map_err(&error)?;
        Ok(Err(used > 0))
    }

    /// Records a teacher's Deep Linking request under the picker token's hash (and forgets
    /// requests past their time).
    pub async fn begin_lti_deep_link(
        &self,
        token_sha256: &str,
        request: &PendingDeepLink,
        now: i64,
        expires_at: i64,
    ) -> Result<(), IssuerError> {
        let error = db_error("cannot record the deep-linking request");
        sqlx::query("DELETE FROM lti_deep_links WHERE expires_at <= $1")
            .bind(now)
            .execute(&self.writer)
            .await
            .map_err(&error)?;
        sqlx::query(
            "INSERT INTO lti_deep_links (token_sha256, issuer, client_id, deployment_id, return_url, data, \
             accept_lineitem, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(token_sha256)
        .bind(&request.issuer)
        .bind(&request.client_id)
        .bind(&request.deployment_id)
        .bind(&request.return_url)
        .bind(request.data.as_deref())
        .bind(i64::from(request.accept_lineitem))
        .bind(now)
        .bind(expires_at)
        .execute(&self.writer)
        .await
        .map_err(&error)?;
        Ok(())
    }

    /// Takes a Deep Linking request for its answer, once, while it has not expired.
    pub async fn take_lti_deep_link(
        &self,
        token_sha256: &str,
        now: i64,
    ) -> Result<Option<PendingDeepLink>, IssuerError> {
        let error = db_error("cannot read the deep-linking request");
        let row = sqlx::query(
            "UPDATE lti_deep_links SET used_at = $1 WHERE token_sha256 = $2 AND used_at IS NULL AND expires_at > $1 \
             RETURNING issuer, client_id, deployment_id, return_url, data, accept_lineitem",
        )
        .bind(now)
        .bind(token_sha256)
        .fetch_optional(&self.writer)
        .await
        .map_err(&error)?;
        row.map(|row| {
            Ok(PendingDeepLink {
                issuer: row.try_get(0)?,
                client_id: row.try_get(1)?,
                deployment_id: row.try_get(2)?,
                return_url: row.try_get(3)?,
                data: row.try_get(4)?,
                accept_lineitem: row.try_get::<i64, _>(5)? != 0,
            })
        })
        .transpose()
        .map_err(&error)
    }

    /// Stores a verified launch under its session token's hash; with `binding`, the session is
    /// unusable until [`Store::bind_lti_session`] is shown that value.
    pub async fn start_lti_session(
        &self,
        token_sha256: &str,
        launch: &VerifiedLaunch,
        target: &str,
        binding: Option<&str>,
        now: i64,
        expires_at: i64,
    ) -> Result<(), IssuerError> {
        sqlx::query(
            "INSERT INTO lti_sessions (token_sha256, issuer, client_id, deployment_id, subject, name, platform_name, \
             context_id, context_title, resource_link_id, target, lineitem_url, progress_only, binding, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        )
        .bind(token_sha256)
        .bind(&launch.issuer)
        .bind(&launch.client_id)
        .bind(&launch.deployment_id)
        .bind(&launch.subject)
        .bind(&launch.name)
        .bind(&launch.platform_name)
        .bind(&launch.context_id)
        .bind(&launch.context_title)
        .bind(&launch.resource_link_id)
        .bind(target)
        .bind(launch.lineitem_url.as_deref())
        .bind(i64::from(launch.progress_only))
        .bind(binding)
        .bind(now)
        .bind(expires_at)
        .execute(&self.writer)
        .await
        .map_err(db_error("cannot record the LTI session"))?;
        // Expired sessions go (their scores stay in the queue until delivered).
        sqlx::query("DELETE FROM lti_sessions WHERE expires_at <= $1")
            .bind(now)
            .execute(&self.writer)
            .await
            .map_err(db_error("cannot forget expired LTI sessions"))?;
        Ok(())
    }

    /// The session of a token hash, while it has not expired.
    pub async fn lti_session(&self, token_sha256: &str, now: i64) -> Result<Option<Session>, IssuerError> {
        let error = db_error("cannot read the LTI session");
        let row = sqlx::query(
            "SELECT issuer, client_id, subject, name, platform_name, context_title, target, lineitem_url, expires_at, \
             progress_only \
             FROM lti_sessions WHERE token_sha256 = $1 AND expires_at > $2 AND binding IS NULL",
        )
        .bind(token_sha256)
        .bind(now)
        .fetch_optional(&self.writer)
        .await
        .map_err(&error)?;
        row.map(|row| {
            Ok(Session {
                issuer: row.try_get(0)?,
                client_id: row.try_get(1)?,
                subject: row.try_get(2)?,
                name: row.try_get(3)?,
                platform_name: row.try_get(4)?,
                context_title: row.try_get(5)?,
                target: row.try_get(6)?,
                lineitem_url: row.try_get(7)?,
                expires_at: row.try_get(8)?,
                progress_only: row.try_get::<i64, _>(9)? != 0,
            })
        })
        .transpose()
        .map_err(&error)
    }

    /// Binds a session to this browser: the page showed the value the platform's storage kept
    /// for the login. Returns the session's target (the page to open), or `None` when the value
    /// is wrong, the session is bound already, unknown or expired.
    pub async fn bind_lti_session(
        &self,
        token_sha256: &str,
        shown: &str,
        now: i64,
    ) -> Result<Option<String>, IssuerError> {
        let error = db_error("cannot bind the LTI session");
        let row = sqlx::query(
            "UPDATE lti_sessions SET binding = NULL WHERE token_sha256 = $1 AND binding = $2 AND expires_at > $3 \
             RETURNING target",
        )
        .bind(token_sha256)
        .bind(shown)
        .bind(now)
        .fetch_optional(&self.writer)
        .await
        .map_err(&error)?;
        row.map(|row| row.try_get::<String, _>(0)).transpose().map_err(&error)
    }

    /// Queues a score for delivery; returns its id. The score is durable once this returns.
    pub async fn queue_lti_score(
        &self,
        session: &Session,
        session_sha256: &str,
        lineitem_url: &str,
        body: &str,
        now: i64,
    ) -> Result<i64, IssuerError> {
        let error = db_error("cannot queue the score");
        // A newer grade of the same session replaces one not yet delivered: the gradebook gets
        // the latest, and one session cannot pile posts onto a platform.
        sqlx::query("DELETE FROM lti_scores WHERE session_sha256 = $1 AND lineitem_url = $2 AND delivered_at IS NULL")
            .bind(session_sha256)
            .bind(lineitem_url)
            .execute(&self.writer)
            .await
            .map_err(&error)?;
        let row = sqlx::query(
            "INSERT INTO lti_scores (issuer, client_id, lineitem_url, body, session_sha256, created_at, attempts, next_attempt_at) \
             VALUES ($1, $2, $3, $4, $5, $6, 0, $6) RETURNING id",
        )
        .bind(&session.issuer)
        .bind(&session.client_id)
        .bind(lineitem_url)
        .bind(body)
        .bind(session_sha256)
        .bind(now)
        .fetch_one(&self.writer)
        .await
        .map_err(&error)?;
        row.try_get(0).map_err(&error)
    }

    /// A queued score, if it belongs to the session.
    pub async fn lti_score(&self, id: i64, session_sha256: &str) -> Result<Option<QueuedScore>, IssuerError> {
        let error = db_error("cannot read the score");
        let row = sqlx::query(concat!(
            "SELECT ",
            score_columns!(),
            " FROM lti_scores WHERE id = $1 AND session_sha256 = $2"
        ))
        .bind(id)
        .bind(session_sha256)
        .fetch_optional(&self.writer)
        .await
        .map_err(&error)?;
        row.map(|row| score_of(&row)).transpose().map_err(&error)
    }

    /// Undelivered scores due by `now`, oldest first; and when the next one falls due.
    pub async fn due_lti_scores(&self, now: i64, limit: i64) -> Result<(Vec<QueuedScore>, Option<i64>), IssuerError> {
        let error = db_error("cannot read the score queue");
        let rows = sqlx::query(concat!(
            "SELECT ",
            score_columns!(),
            " FROM lti_scores WHERE delivered_at IS NULL AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2"
        ))
        .bind(now)
        .bind(limit)
        .fetch_all(&self.writer)
        .await
        .map_err(&error)?;
        let scores = rows
            .iter()
            .map(score_of)
            .collect::<Result<Vec<_>, _>>()
            .map_err(&error)?;
        let next = sqlx::query(
            "SELECT MIN(next_attempt_at) FROM lti_scores WHERE delivered_at IS NULL AND next_attempt_at > $1",
        )
        .bind(now)
        .fetch_one(&self.writer)
        .await
        .map_err(&error)?;
        let next: Option<i64> = next.try_get(0).map_err(&error)?;
        Ok((scores, next))
    }

    /// Takes a due score for one delivery loop: moves its next attempt to `lease_until`, only if
    /// no other loop took it since it was read. `true` when this loop has it.
    pub async fn lease_lti_score(&self, score: &QueuedScore, lease_until: i64) -> Result<bool, IssuerError> {
        let taken = sqlx::query(
            "UPDATE lti_scores SET next_attempt_at = $1 WHERE id = $2 AND next_attempt_at = $3 AND delivered_at IS NULL",
        )
        .bind(lease_until)
        .bind(score.id)
        .bind(score.next_attempt_at)
        .execute(&self.writer)
        .await
        .map_err(db_error("cannot take the score for delivery"))?
        .rows_affected();
        Ok(taken == 1)
    }

    pub async fn lti_score_delivered(&self, id: i64, now: i64) -> Result<(), IssuerError> {
        sqlx::query(
            "UPDATE lti_scores SET delivered_at = $1, attempts = attempts + 1, last_error = NULL WHERE id = $2 AND delivered_at IS NULL",
        )
        .bind(now)
        .bind(id)
        .execute(&self.writer)
        .await
        .map_err(db_error("cannot record the score's delivery"))?;
        Ok(())
    }

    pub async fn lti_score_failed(&self, id: i64, error_text: &str, next_attempt_at: i64) -> Result<(), IssuerError> {
        sqlx::query(
            "UPDATE lti_scores SET attempts = attempts + 1, last_error = $1, next_attempt_at = $2 WHERE id = $3 AND delivered_at IS NULL",
        )
        .bind(error_text)
        .bind(next_attempt_at)
        .bind(id)
        .execute(&self.writer)
        .await
        .map_err(db_error("cannot record the score's failed delivery"))?;
        Ok(())
    }
}
