//! Start-up and shutdown of `gradlab issuer serve`: open the database (schema included), load
//! or create the key, publish its public half, listen, and stop cleanly on Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tower_http::services::{ServeDir, ServeFile};

use super::api::{router, IssuerState};
use super::config::{normalize_origin, normalize_public_url, ServeConfig};
use super::keys::IssuerKey;
use super::lti::tool_key::ToolKey;
use super::lti::LtiState;
use super::pipeline::{CredentialCache, Serials, Writer};
use super::store::Store;
use super::{now_rfc3339, IssuerError};
use gradlab_credential::did_web::{did_document_url, did_from_public_url};
use gradlab_quiz::bank::ShippedBanks;

/// What a started instance tells its operator (and the tests) in its first line.
#[derive(Debug, Clone)]
pub struct Started {
    pub address: SocketAddr,
    pub did: String,
    pub key_id: String,
    pub database: String,
}

/// Builds the shared state: database with schema, key (published), DID.
pub async fn prepare(config: &ServeConfig) -> Result<(Arc<IssuerState>, Vec<String>), IssuerError> {
    let public_url = normalize_public_url(&config.public_url)?;
    let did = did_from_public_url(&public_url).map_err(|e| IssuerError::Config(format!("--public-url: {e}")))?;
    // Verifiers resolve did:web over HTTPS (plain HTTP only for a local host): a public URL they
    // would not reach the same way gives credentials that nobody can verify.
    let document_url = did_document_url(&did).map_err(|e| IssuerError::Config(format!("--public-url: {e}")))?;
    let scheme = |url: &str| url.split("://").next().unwrap_or_default().to_string();
    if scheme(&document_url) != scheme(&public_url) {
        return Err(IssuerError::Config(format!(
            "--public-url {public_url}: verifiers will fetch the DID document from {document_url}; use {}:// (plain http only for localhost)",
            scheme(&document_url)
        )));
    }
    let origins = config
        .allowed_origins
        .iter()
        .map(|o| normalize_origin(o))
        .collect::<Result<Vec<_>, _>>()?;
    let banks = ShippedBanks::load().map_err(|e| IssuerError::Config(format!("the bundled quiz banks: {e}")))?;
    let key = IssuerKey::load_or_create(&config.data_dir, config.key_file.as_deref())?;
    let tool_key = ToolKey::load_or_create(&config.data_dir).map_err(|e| IssuerError::Config(e.to_string()))?;
    let store = Store::open(config.database_url.as_deref(), &config.data_dir).await?;
    store
        .register_key(key.key_id(), &key.public_key_multibase(), &now_rfc3339())
        .await?;
    store
        .register_lti_tool_keys(&tool_key.published(), super::lti::unix_now())
        .await?;
    let state = IssuerState {
        writer: Writer::start(store.clone()),
        serials: Serials::default(),
        cache: CredentialCache::default(),
        store,
        key,
        did,
        public_url,
        issuer_name: config.issuer_name.clone(),
        banks,
        limiter: IssuerState::rate_limiter(config.issues_per_minute),
        trust_forwarded_for: config.trust_forwarded_for,
        lti: LtiState::new(tool_key),
    };
    Ok((Arc::new(state), origins))
}

/// The whole application: the API, and the built app when `dist` is given.
pub fn application(state: Arc<IssuerState>, origins: &[String], dist: Option<&std::path::Path>) -> Router {
    let api = router(state, origins);
    match dist {
        // A file's gzip twin (`app_bg.wasm.gz`, written by the release build) goes out to every
        // browser that accepts gzip: the Lab's wasm is a third of its size.
        Some(dist) => api.fallback_service(
            ServeDir::new(dist)
                .precompressed_gzip()
                .fallback(ServeFile::new(dist.join("index.html")).precompressed_gzip()),
        ),
        None => api.fallback(super::api::no_such_route),
    }
}

/// Serves until Ctrl-C or SIGTERM; `on_ready` runs once the socket listens.
pub async fn serve(config: ServeConfig, on_ready: impl FnOnce(&Started)) -> Result<(), IssuerError> {
    serve_until(config, on_ready, shutdown_signal()).await
}

/// Serves until `shutdown` completes (in-process users: the bench, tests).
pub async fn serve_until(
    config: ServeConfig,
    on_ready: impl FnOnce(&Started),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), IssuerError> {
    if let Some(dist) = &config.dist {
        if !dist.join("index.html").is_file() {
            return Err(IssuerError::Config(format!(
                "--dist {} has no index.html (build the app with `trunk build --release` first)",
                dist.display()
            )));
        }
    }
    let (state, origins) = prepare(&config).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| IssuerError::Io {
            context: format!("cannot listen on {}", config.listen),
            detail: e.to_string(),
        })?;
    let address = listener.local_addr().map_err(|e| IssuerError::Io {
        context: "no local address".into(),
        detail: e.to_string(),
    })?;
    on_ready(&Started {
        address,
        did: state.did.clone(),
        key_id: state.key.key_id().to_string(),
        database: state.store.description().to_string(),
    });
    // The rate limiter keeps one entry per client address; forget the idle ones.
    let pruned = Arc::clone(&state);
    let pruning = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(60)).await;
            if let Some(limiter) = &pruned.limiter {
                limiter.retain_recent();
                limiter.shrink_to_fit();
            }
        }
    });
    // Scores waiting for a course platform (some perhaps from before a restart) go out from here.
    let delivering = tokio::spawn(super::lti::scores::deliver_forever(
        state.store.clone(),
        Arc::clone(&state.lti.tool_key),
        Arc::clone(&state.lti.delivery),
    ));
    let app = application(Arc::clone(&state), &origins, config.dist.as_deref());
    let result = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| IssuerError::Io {
            context: "the server stopped".into(),
            detail: e.to_string(),
        });
    pruning.abort();
    delivering.abort();
    state.store.close().await;
    result
}

async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}
