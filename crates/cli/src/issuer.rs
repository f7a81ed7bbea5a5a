//! `gradlab issuer …` (serve, revoke, rotate-key, bench) and `gradlab verify FILE`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};

use gradlab_credential::did_web::{did_document_url, DidDocument};
use gradlab_credential::verify::{verify_credential, Status, Verification};
use gradlab_i18n::Localizer;
use gradlab_issuer::bench::{self, BenchOptions};
use gradlab_issuer::client::Client;
use gradlab_issuer::config::{ServeConfig, DEFAULT_ISSUES_PER_MINUTE};
use gradlab_issuer::keys::IssuerKey;
use gradlab_issuer::lti::launch::Platform;
use gradlab_issuer::lti::tool_key::ToolKey;
use gradlab_issuer::server;
use gradlab_issuer::store::{Revocation, Store};
use gradlab_issuer::{now_rfc3339, today};
use gradlab_quiz::certificate::{parse_id, ParsedId};
use gradlab_verification::{credential_from_file, issuer_did};

#[derive(Debug, Subcommand)]
pub enum IssuerCommand {
    /// Run the issuer service: grades quiz attempts, signs Open Badges 3.0 credentials, serves
    /// them, the DID document and the status lists (and the built app with --dist).
    Serve(ServeArgs),
    /// Revoke a credential; verifiers see it from the next status-list fetch on.
    Revoke {
        /// The credential's short ID (XXXXX-XXXXX-XXXXX).
        id: String,
        #[command(flatten)]
        storage: StorageArgs,
        /// Why, kept with the record.
        #[arg(long)]
        reason: String,
    },
    /// Move the signing key aside and create a new one (old credentials keep verifying: every
    /// key that signed stays published). Restart the service afterwards.
    RotateKey {
        #[arg(long)]
        data_dir: PathBuf,
    },
    /// LTI 1.3: register course platforms (Moodle, Canvas, Open edX...) and rotate the tool's key.
    #[command(subcommand)]
    Lti(LtiCommand),
    /// Measure issuances and look-ups per second (p50 / p99) against a fresh issuer on loopback.
    Bench {
        /// PostgreSQL URL; without it, SQLite in a temporary directory.
        #[arg(long)]
        database_url: Option<String>,
        /// Client threads (they share the machine with the server).
        #[arg(long, default_value_t = 8)]
        clients: usize,
        #[arg(long, default_value_t = 2000)]
        issuances: usize,
        #[arg(long, default_value_t = 20000)]
        lookups: usize,
        /// LTI launches, each posting a quiz score to a stand-in platform (0: none).
        #[arg(long, default_value_t = 1000)]
        lti_launches: usize,
    },
}

#[derive(Debug, Subcommand)]
pub enum LtiCommand {
    /// Register a platform by hand (for platforms without Dynamic Registration), with one of
    /// its deployments; run again to add a deployment or change its URLs.
    AddPlatform {
        #[command(flatten)]
        storage: StorageArgs,
        /// The platform's issuer identifier (`iss` of its tokens).
        #[arg(long)]
        issuer: String,
        /// The client ID the platform gave this tool.
        #[arg(long)]
        client_id: String,
        #[arg(long)]
        deployment_id: String,
        /// The platform's OIDC authorization endpoint.
        #[arg(long)]
        auth_login_url: String,
        /// The platform's OAuth 2 token endpoint (for posting grades).
        #[arg(long)]
        auth_token_url: String,
        /// The platform's public key set (JWKS).
        #[arg(long)]
        keyset_url: String,
    },
    /// Make a one-use link for LTI Dynamic Registration: a platform administrator pastes it
    /// into the platform (Moodle: "Tool URL" under "Manage tools"), which registers the Lab.
    Invite {
        #[command(flatten)]
        storage: StorageArgs,
        /// The service's public URL, as given to `serve`.
        #[arg(long)]
        public_url: String,
        /// Accept the registration only from this platform (its issuer identifier).
        #[arg(long)]
        issuer: Option<String>,
        /// Days the link stays valid.
        #[arg(long, default_value_t = 7)]
        valid_days: u16,
    },
    /// List the registered platforms and their deployments.
    Platforms {
        #[command(flatten)]
        storage: StorageArgs,
    },
    /// Move the tool's RSA key aside and create a new one (the old stays published).
    RotateKey {
        #[arg(long)]
        data_dir: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct StorageArgs {
    /// The issuer's data directory (SQLite file and key).
    #[arg(long)]
    data_dir: PathBuf,
    /// postgres://… to use PostgreSQL instead of the SQLite file.
    #[arg(long)]
    database_url: Option<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port, printed on start).
    #[arg(long, default_value = "127.0.0.1:8081")]
    listen: SocketAddr,
    /// Data directory: the SQLite file (without --database-url) and the signing key.
    #[arg(long)]
    data_dir: PathBuf,
    /// Where learners reach the app and this API; gives the did:web and the share links.
    #[arg(long)]
    public_url: String,
    /// postgres://… to share one database between instances.
    #[arg(long)]
    database_url: Option<String>,
    /// An origin (scheme://host[:port]) whose pages may request issuance; repeatable.
    #[arg(long = "allowed-origin")]
    allowed_origins: Vec<String>,
    /// Load the signing key from this file instead of the data directory.
    #[arg(long)]
    key_file: Option<PathBuf>,
    /// The built app (dist/) to serve beside the API.
    #[arg(long)]
    dist: Option<PathBuf>,
    /// Issuances per minute per client address (0: no limit).
    #[arg(long, default_value_t = DEFAULT_ISSUES_PER_MINUTE)]
    issues_per_minute: u32,
    /// Take the client address from X-Forwarded-For (only behind a proxy that sets it).
    #[arg(long)]
    trust_forwarded_for: bool,
    /// The issuer's name in credentials.
    #[arg(long, default_value = "Gradient Accumulation Lab")]
    issuer_name: String,
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub fn run(command: IssuerCommand, out: &mut dyn Write) -> Result<()> {
    match command {
        IssuerCommand::Serve(args) => {
            let config = ServeConfig {
                listen: args.listen,
                data_dir: args.data_dir,
                public_url: args.public_url,
                database_url: args.database_url,
                allowed_origins: args.allowed_origins,
                key_file: args.key_file,
                dist: args.dist,
                issues_per_minute: args.issues_per_minute,
                trust_forwarded_for: args.trust_forwarded_for,
                issuer_name: args.issuer_name,
            };
            runtime()?.block_on(server::serve(config, |started| {
                // The first line says where to connect (tests read the port from it).
                let _ = writeln!(
                    out,
                    "gradlab issuer listening on http://{} as {} (key {}, {})",
                    started.address, started.did, started.key_id, started.database
                );
                let _ = out.flush();
            }))?;
        }
        IssuerCommand::Revoke { id, storage, reason } => {
            let reason = reason.trim();
            if reason.is_empty() || reason.chars().count() > 500 {
                bail!("--reason must be 1 to 500 characters");
            }
            let issued = match parse_id(&id, today())? {
                ParsedId::Issued(issued) => issued,
                ParsedId::IntegrityOnly(_) => {
                    bail!("{id} is an integrity-only certificate ID (format 1); no issuer holds it")
                }
            };
            let outcome = runtime()?.block_on(async {
                let store = Store::open(storage.database_url.as_deref(), &storage.data_dir).await?;
                let outcome = store.revoke(issued.serial, issued.nonce, reason, &now_rfc3339()).await;
                store.close().await;
                outcome
            })?;
            match outcome {
                Revocation::Revoked => writeln!(out, "revoked {id}: {reason}")?,
                Revocation::AlreadyRevoked { at } => writeln!(out, "{id} was already revoked on {at}")?,
                Revocation::Unknown => bail!("this issuer has no credential {id}"),
            }
        }
        IssuerCommand::RotateKey { data_dir } => {
            let (old, new) = IssuerKey::rotate(&data_dir)?;
            match old {
                Some(old) => writeln!(
                    out,
                    "new signing key {}; {old} moved to {}/ (restart the service to use the new key)",
                    new.key_id(),
                    gradlab_issuer::keys::RETIRED_DIR
                )?,
                None => writeln!(out, "new signing key {}", new.key_id())?,
            }
        }
        IssuerCommand::Lti(command) => run_lti(command, out)?,
        IssuerCommand::Bench {
            database_url,
            clients,
            issuances,
            lookups,
            lti_launches,
        } => {
            if !(1..=256).contains(&clients)
                || !(1..=1_000_000).contains(&issuances)
                || lookups > 10_000_000
                || lti_launches > 1_000_000
            {
                bail!("--clients 1..=256, --issuances 1..=1000000, --lookups and --lti-launches up to 10000000 and 1000000");
            }
            bench::run(
                &BenchOptions {
                    database_url,
                    clients,
                    issuances,
                    lookups,
                    lti_launches,
                },
                out,
            )?;
        }
    }
    Ok(())
}

fn checked_url(flag: &str, url: &str) -> Result<String> {
    let parsed = url::Url::parse(url.trim()).map_err(|e| anyhow!("--{flag} \"{url}\" is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        bail!("--{flag} \"{url}\" must be an http(s) URL with a host");
    }
    Ok(url.trim().to_string())
}

fn run_lti(command: LtiCommand, out: &mut dyn Write) -> Result<()> {
    match command {
        LtiCommand::AddPlatform {
            storage,
            issuer,
            client_id,
            deployment_id,
            auth_login_url,
            auth_token_url,
            keyset_url,
        } => {
            for (flag, value) in [
                ("issuer", &issuer),
                ("client-id", &client_id),
                ("deployment-id", &deployment_id),
            ] {
                if value.trim().is_empty() || value.len() > 255 {
                    bail!("--{flag} must be 1 to 255 characters");
                }
            }
            let platform = Platform {
                // An LTI issuer is a URL (Security Framework §5.1.2).
                issuer: checked_url("issuer", &issuer)?,
                client_id: client_id.trim().to_string(),
                auth_login_url: checked_url("auth-login-url", &auth_login_url)?,
                auth_token_url: checked_url("auth-token-url", &auth_token_url)?,
                keyset_url: checked_url("keyset-url", &keyset_url)?,
            };
            runtime()?.block_on(async {
                let store = Store::open(storage.database_url.as_deref(), &storage.data_dir).await?;
                let added = store
                    .add_lti_platform(&platform, Some(deployment_id.trim()), gradlab_issuer::lti::unix_now())
                    .await;
                store.close().await;
                added
            })?;
            writeln!(
                out,
                "registered LTI platform {} (client {}, deployment {})",
                platform.issuer,
                platform.client_id,
                deployment_id.trim()
            )?;
        }
        LtiCommand::Invite {
            storage,
            public_url,
            issuer,
            valid_days,
        } => {
            let public_url = checked_url("public-url", &public_url)?
                .trim_end_matches('/')
                .to_string();
            let issuer = issuer.map(|i| checked_url("issuer", &i)).transpose()?;
            if valid_days == 0 {
                bail!("--valid-days must be at least 1");
            }
            let code = gradlab_issuer::lti::random_token()?;
            let now = gradlab_issuer::lti::unix_now();
            let expires_at = now + i64::from(valid_days) * 24 * 3600;
            runtime()?.block_on(async {
                let store = Store::open(storage.database_url.as_deref(), &storage.data_dir).await?;
                let created = store
                    .create_lti_invite(
                        &gradlab_issuer::lti::token_hash(&code),
                        issuer.as_deref(),
                        now,
                        expires_at,
                    )
                    .await;
                store.close().await;
                created
            })?;
            let until = time::OffsetDateTime::from_unix_timestamp(expires_at)
                .map(|t| t.date().to_string())
                .unwrap_or_default();
            writeln!(
                out,
                "LTI Dynamic Registration link (one use, valid until {until}{}):\n{public_url}/lti/register?invite={code}",
                issuer.as_deref().map(|i| format!(", for {i} only")).unwrap_or_default()
            )?;
        }
        LtiCommand::Platforms { storage } => {
            let platforms = runtime()?.block_on(async {
                let store = Store::open(storage.database_url.as_deref(), &storage.data_dir).await?;
                let platforms = store.lti_platforms().await;
                store.close().await;
                platforms
            })?;
            if platforms.is_empty() {
                writeln!(out, "no LTI platform is registered")?;
            }
            for (platform, deployments) in platforms {
                writeln!(
                    out,
                    "{} client {} deployments {}\n  login {}\n  token {}\n  keys {}",
                    platform.issuer,
                    platform.client_id,
                    deployments.join(", "),
                    platform.auth_login_url,
                    platform.auth_token_url,
                    platform.keyset_url
                )?;
            }
        }
        LtiCommand::RotateKey { data_dir } => {
            let (old, new) = ToolKey::rotate(&data_dir)?;
            match old {
                Some(old) => writeln!(
                    out,
                    "new LTI tool key {new}; {old} stays published (restart the service)"
                )?,
                None => writeln!(out, "new LTI tool key {new}")?,
            }
        }
    }
    Ok(())
}

/// Reads a credential from a JSON file or a baked PNG (the verify page's own reader).
fn read_credential(path: &Path) -> Result<serde_json::Value> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    credential_from_file(&bytes).map_err(|reason| anyhow!("{}: {}", path.display(), Localizer::english().msg(&reason)))
}

fn fetch_json(client: &Client, url: &str) -> Result<serde_json::Value> {
    let reply = client.get(url)?;
    if reply.status != 200 {
        bail!("{url} answered HTTP {}", reply.status);
    }
    serde_json::from_str(&reply.body).with_context(|| format!("{url} did not return JSON"))
}

/// `gradlab verify FILE`: offline with --did-document (and optionally --status-list), else
/// resolving the issuer's did:web and its status list over the network.
pub fn verify(file: &Path, did_document: Option<&Path>, status_list: Option<&Path>, out: &mut dyn Write) -> Result<()> {
    let credential = read_credential(file)?;
    let issuer = issuer_did(&credential)
        .context("the credential names no issuer (issuer.id)")?
        .to_string();
    let client = Client::new();
    let (document, status) = match did_document {
        Some(path) => {
            let document: DidDocument = serde_json::from_slice(
                &std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?,
            )
            .with_context(|| format!("{} is not a DID document", path.display()))?;
            let status = match status_list {
                Some(path) => Some(read_credential(path)?),
                None => None,
            };
            (document, status)
        }
        None => {
            let url = did_document_url(&issuer).with_context(|| format!("cannot resolve the issuer {issuer}"))?;
            let document: DidDocument = serde_json::from_value(fetch_json(&client, &url)?)
                .with_context(|| format!("{url} is not a DID document"))?;
            let status = match (
                status_list,
                credential["credentialStatus"]["statusListCredential"].as_str(),
            ) {
                (Some(path), _) => Some(read_credential(path)?),
                (None, Some(url)) => Some(fetch_json(&client, url)?),
                (None, None) => None,
            };
            (document, status)
        }
    };
    let verification: Verification = verify_credential(&credential, &document, status.as_ref())?;
    let summary = &verification.summary;
    let facts = format!(
        "issued by {} ({}) to {}, score {} %, on {}, quiz version {}",
        summary.issuer_name,
        summary.issuer_did,
        summary.subject_name,
        summary.score_percent,
        summary.valid_from_date,
        summary.quiz_version
    );
    match verification.status {
        Status::Active => writeln!(out, "valid: {facts}; not revoked")?,
        Status::NotChecked => writeln!(out, "valid: {facts}; revocation not checked (no status list given)")?,
        Status::Revoked => bail!("revoked: {facts}; the issuer has revoked this credential"),
    }
    Ok(())
}
