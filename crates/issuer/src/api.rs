//! The HTTP interface. Issuance (`POST /api/credentials`) grades the first answers itself and
//! signs only on a pass; the read-only routes (credentials, status lists, the DID document)
//! are open to every origin, since anyone may verify. Every error is `application/problem+json`
//! (RFC 9457) with a stable `code` and, for bad input, the `field`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use governor::{clock::Clock, DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::{json, Value};
use tower_http::cors::{AllowOrigin, CorsLayer};

use super::keys::IssuerKey;
use super::pipeline::{CredentialCache, Serials, Writer};
use super::request::{IssueRequest, MAX_BODY_BYTES};
use super::store::{AttemptCredential, NewCredential, Store, Stored};
use super::{now_rfc3339, today, IssuerError};
use gradlab_credential::did_web::DidDocument;
use gradlab_credential::normalize_learner_name;
use gradlab_credential::open_badge::{unsigned_credential, CourseLaunch, CredentialInput};
use gradlab_credential::status_list::{
    status_position, unsigned_status_list_credential, Bitstring, StatusEntry, LIST_BITS,
};
use gradlab_credential::{multikey, proof};
use gradlab_quiz::attempt::Attempt;
use gradlab_quiz::bank::ShippedBanks;
use gradlab_quiz::certificate::{parse_id, IssuedId, ParsedId};

/// Everything a request handler needs; shared by all requests of one instance.
#[derive(Debug)]
pub struct IssuerState {
    pub store: Store,
    pub key: IssuerKey,
    pub did: String,
    pub public_url: String,
    pub issuer_name: String,
    /// Every version of the quiz that has shipped: an attempt is graded and certified by the
    /// version it was asked in.
    pub banks: ShippedBanks,
    pub limiter: Option<DefaultKeyedRateLimiter<IpAddr>>,
    pub trust_forwarded_for: bool,
    pub serials: Serials,
    pub writer: Writer,
    pub cache: CredentialCache,
    pub lti: super::lti::LtiState,
}

impl IssuerState {
    pub fn rate_limiter(issues_per_minute: u32) -> Option<DefaultKeyedRateLimiter<IpAddr>> {
        NonZeroU32::new(issues_per_minute).map(|rate| {
            // A burst of a few lets a learner retry after a network error without waiting.
            let burst = NonZeroU32::new(issues_per_minute.min(5)).unwrap_or(rate);
            RateLimiter::keyed(Quota::per_minute(rate).allow_burst(burst))
        })
    }

    /// The verification method that signs new credentials.
    pub fn verification_method(&self) -> String {
        format!("{}#{}", self.did, self.key.key_id())
    }

    pub fn share_url(&self, short_id: &str) -> String {
        format!("{}/?view=verify&id={short_id}", self.public_url)
    }

    pub fn status_list_url(&self, list: u64) -> String {
        format!("{}/api/status/{list}", self.public_url)
    }
}

/// An RFC 9457 problem: what went wrong, for the developer of a client.
#[derive(Debug)]
pub struct Problem {
    status: StatusCode,
    code: &'static str,
    title: &'static str,
    detail: String,
    extra: serde_json::Map<String, Value>,
}

impl Problem {
    fn new(status: StatusCode, code: &'static str, title: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            code,
            title,
            detail: detail.into(),
            extra: serde_json::Map::new(),
        }
    }

    fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.to_string(), value.into());
        self
    }

    fn internal(error: &IssuerError) -> Self {
        // Logged once here; the client learns only that it may retry.
        eprintln!("gradlab issuer: error: {error}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "The issuer could not complete the request",
            "nothing was issued; try again",
        )
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let mut body = serde_json::Map::new();
        body.insert("type".into(), "about:blank".into());
        body.insert("title".into(), self.title.into());
        body.insert("status".into(), self.status.as_u16().into());
        body.insert("code".into(), self.code.into());
        body.insert("detail".into(), self.detail.into());
        body.extend(self.extra);
        (
            self.status,
            [(header::CONTENT_TYPE, "application/problem+json")],
            Value::Object(body).to_string(),
        )
            .into_response()
    }
}

fn json_response(status: StatusCode, body: String, cache: &'static str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, cache),
        ],
        body,
    )
        .into_response()
}

/// The routes; `allowed_origins` may POST from other pages (an empty list: same origin only).
pub fn router(state: Arc<IssuerState>, allowed_origins: &[String]) -> Router {
    let open_cors = CorsLayer::new()
        .allow_origin(tower_http::cors::Any)
        .allow_methods([Method::GET]);
    let reads = Router::new()
        .route("/api/credentials/{id}", get(credential))
        .route("/api/status/{list}", get(status_list))
        .route("/.well-known/did.json", get(did_document))
        // With a path in --public-url (did:web:host:path), verifiers fetch <public url>/did.json,
        // which a proxy that strips the path delivers here.
        .route("/did.json", get(did_document))
        .route("/api/health", get(health))
        .layer(open_cors);
    let mut issue_route = Router::new().route("/api/credentials", post(issue));
    if !allowed_origins.is_empty() {
        let origins: Vec<HeaderValue> = allowed_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        issue_route = issue_route.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods([Method::POST])
                .allow_headers([header::CONTENT_TYPE]),
        );
    }
    reads
        .merge(issue_route)
        // Platforms and launched pages reach these; they take no CORS (same origin or browser navigation).
        .merge(super::lti::routes::router())
        // Unknown API paths stay problem+json even when the app is served beside the API.
        .route("/api/{*rest}", any(no_such_route))
        .with_state(state)
}

pub async fn no_such_route() -> Problem {
    Problem::new(StatusCode::NOT_FOUND, "not-found", "Not found", "no such route")
}

/// The client's address for rate limiting: with a trusted proxy, the last `X-Forwarded-For`
/// entry (the one the proxy appended; the ones before it are whatever the client wrote).
/// IPv6 clients are keyed by their /64, which one client typically holds whole.
fn client_address(state: &IssuerState, request: &Request) -> IpAddr {
    let forwarded = state
        .trust_forwarded_for
        .then(|| {
            request
                .headers()
                .get_all("x-forwarded-for")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .next_back()
                .and_then(|v| v.trim().parse::<IpAddr>().ok())
        })
        .flatten();
    let address = forwarded.unwrap_or_else(|| {
        request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip())
    });
    match address {
        IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(std::net::Ipv6Addr::from(prefix))
        }
        v4 => v4,
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

async fn issue(State(state): State<Arc<IssuerState>>, request: Request) -> Result<Response, Problem> {
    if let Some(limiter) = &state.limiter {
        if let Err(not_until) = limiter.check_key(&client_address(&state, &request)) {
            let wait = not_until.wait_time_from(governor::clock::DefaultClock::default().now());
            let seconds = wait.as_secs() + 1;
            let mut response = Problem::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate-limited",
                "Too many issuance requests",
                format!("too many requests from this address; try again in {seconds} s"),
            )
            .into_response();
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            return Ok(response);
        }
    }
    // After an LTI launch the certificate names whom the course platform authenticated.
    let lti_session = match super::lti::routes::bearer_session(&state, request.headers()).await {
        Ok(session) => session,
        Err(refusal) => return Ok(refusal),
    };
    if !is_json(request.headers()) {
        return Err(Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "The body must be JSON",
            "send Content-Type: application/json",
        ));
    }
    let body = axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            Problem::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too-large",
                "The request body is too large",
                format!("at most {MAX_BODY_BYTES} bytes"),
            )
        })?;
    let mut request = IssueRequest::parse(&body, &state.banks).map_err(|e| {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "malformed",
            "The request is malformed",
            e.to_string(),
        )
        .with("field", e.field.clone())
    })?;
    // The platform's name when it sent one (a launch without a name keeps the typed one).
    if let Some(session) = lti_session {
        if let Ok(name) = normalize_learner_name(&session.name) {
            request.name = name;
        }
        // The credential names the platform that signed the learner in, and the course (an
        // LTI issuer is an https URL; a registration by hand that gave another keeps the
        // credential, without the evidence).
        let issuer_url = url::Url::parse(&session.issuer).is_ok_and(|u| matches!(u.scheme(), "https" | "http"));
        if issuer_url && !session.platform_name.trim().is_empty() {
            request.course = Some(CourseLaunch {
                platform_name: session.platform_name,
                platform_id: session.issuer,
                course_title: session.context_title,
            });
        }
    }
    // One attempt, one credential: an attempt that has one gets it again, whatever name or
    // answers this request carries.
    if let Some(earlier) = attempt_credential(&state, request.attempt_id.as_deref()).await? {
        return issued_response(&state, StatusCode::OK, &earlier);
    }
    let bank = state
        .banks
        .get(request.bank_version)
        .ok_or_else(|| Problem::internal(&IssuerError::Config("a parsed request names no shipped bank".into())))?;
    let score = Attempt::grade_first_answers(bank, &request.answers).map_err(|e| {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "malformed",
            "The request is malformed",
            e.to_string(),
        )
        .with("field", "answers")
    })?;
    if !score.passed {
        let needed = (bank.pass_threshold * 100.0).round();
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not-passed",
            "These answers do not pass the quiz",
            format!(
                "{} of {} questions answered, {} right at the first try ({} %); {needed} % of all questions are needed",
                score.answered, score.total, score.first_try_correct, score.percent
            ),
        )
        .with("score_percent", score.percent)
        .with("first_try_correct", score.first_try_correct)
        .with("answered", score.answered)
        .with("total", score.total)
        .with("needed_percent", needed));
    }
    let issuance = issue_credential(&state, &request, score.percent, score.first_try_correct, score.total)
        .await
        .map_err(|e| Problem::internal(&e))?;
    match issuance {
        Issuance::New(issued) => issued_response(&state, StatusCode::CREATED, &issued),
        // Another request of the same attempt was stored first: its credential is the one.
        Issuance::AttemptTaken => {
            let earlier = attempt_credential(&state, request.attempt_id.as_deref())
                .await?
                .ok_or_else(|| {
                    Problem::internal(&IssuerError::Signing(
                        "the attempt's credential was not found after a conflict".into(),
                    ))
                })?;
            issued_response(&state, StatusCode::OK, &earlier)
        }
    }
}

/// The credential an attempt already has, if it names one and has one.
async fn attempt_credential(state: &IssuerState, attempt_id: Option<&str>) -> Result<Option<Issued>, Problem> {
    let Some(attempt_id) = attempt_id else { return Ok(None) };
    let earlier = state
        .store
        .credential_for_attempt(attempt_id)
        .await
        .map_err(|e| Problem::internal(&e))?;
    earlier.map(earlier_issued).transpose()
}

/// The answer to an issuance: 201 for a new credential, 200 for the attempt's earlier one.
fn issued_response(state: &IssuerState, status: StatusCode, issued: &Issued) -> Result<Response, Problem> {
    let body = json!({
        "id": issued.short_id,
        "share_url": state.share_url(&issued.short_id),
        "credential": issued.credential,
    });
    let mut response = json_response(status, body.to_string(), "no-store");
    if let Ok(location) = HeaderValue::from_str(&format!("/api/credentials/{}", issued.short_id)) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

/// A stored credential as an issuance answer.
fn earlier_issued(earlier: AttemptCredential) -> Result<Issued, Problem> {
    let internal = |detail: String| Problem::internal(&IssuerError::Signing(detail));
    let short_id = IssuedId {
        serial: earlier.serial,
        nonce: earlier.nonce,
    }
    .encode()
    .map_err(|e| internal(format!("a stored credential has no short ID: {e}")))?;
    let credential = serde_json::from_str(&earlier.credential_json)
        .map_err(|e| internal(format!("a stored credential is not JSON: {e}")))?;
    Ok(Issued { short_id, credential })
}

/// What an issuance did.
#[derive(Debug, Clone)]
pub enum Issuance {
    New(Issued),
    /// The request's attempt got a credential from another request meanwhile.
    AttemptTaken,
}

/// A signed credential and the short ID that names it.
#[derive(Debug, Clone)]
pub struct Issued {
    pub short_id: String,
    pub credential: Value,
}

/// Takes a serial, signs, stores: the credential is durable before this returns.
pub async fn issue_credential(
    state: &IssuerState,
    request: &IssueRequest,
    score_percent: u8,
    first_try_correct: usize,
    total: usize,
) -> Result<Issuance, IssuerError> {
    let mut nonce_bytes = [0u8; 4];
    getrandom::fill(&mut nonce_bytes).map_err(|e| IssuerError::Io {
        context: "no randomness for the credential's ID".into(),
        detail: e.to_string(),
    })?;
    let nonce = u32::from_le_bytes(nonce_bytes) & IssuedId::NONCE_MASK;
    let serial = state.serials.next(&state.store).await?;
    let short_id = IssuedId { serial, nonce }
        .encode()
        .map_err(|_| IssuerError::Exhausted)?;
    let issued_at = now_rfc3339();
    let (list, index) = status_position(u64::from(serial));
    let unsigned = unsigned_credential(&CredentialInput {
        credential_url: format!("{}/api/credentials/{short_id}", state.public_url),
        public_url: state.public_url.clone(),
        issuer_did: state.did.clone(),
        issuer_name: state.issuer_name.clone(),
        subject_name: request.name.clone(),
        score_percent,
        first_try_correct,
        total,
        bank_version: request.bank_version,
        language: request.language,
        valid_from_rfc3339: issued_at.clone(),
        status: StatusEntry {
            list_url: state.status_list_url(list),
            index,
        },
        course: request.course.clone(),
    })
    .map_err(|e| IssuerError::Signing(e.to_string()))?;
    let credential = proof::sign(
        unsigned,
        state.key.signing_key(),
        &state.verification_method(),
        &issued_at,
    )
    .map_err(|e| IssuerError::Signing(e.to_string()))?;
    let credential_json: Arc<str> = Arc::from(credential.to_string());
    let stored = state
        .writer
        .store(NewCredential {
            serial,
            nonce,
            issued_at,
            name: request.name.clone(),
            language: request.language.tag().to_string(),
            bank_version: request.bank_version,
            score_percent,
            answers_json: serde_json::to_string(&request.answers).unwrap_or_default(),
            key_id: state.key.key_id().to_string(),
            credential_json: credential_json.to_string(),
            attempt_id: request.attempt_id.clone(),
        })
        .await?;
    if stored == Stored::AttemptTaken {
        return Ok(Issuance::AttemptTaken);
    }
    state.cache.put(serial, nonce, credential_json);
    Ok(Issuance::New(Issued { short_id, credential }))
}

fn not_found(detail: impl Into<String>) -> Problem {
    Problem::new(StatusCode::NOT_FOUND, "not-found", "No such credential", detail)
}

async fn credential(State(state): State<Arc<IssuerState>>, Path(id): Path<String>) -> Result<Response, Problem> {
    let id = match parse_id(&id, today()) {
        Ok(ParsedId::Issued(id)) => id,
        Ok(ParsedId::IntegrityOnly(_)) => {
            return Err(not_found(
                "this is an integrity-only certificate ID (format 1): no issuer holds it; check it with the name on the verify page",
            ))
        }
        Err(e) => {
            return Err(Problem::new(StatusCode::BAD_REQUEST, "malformed", "Not a certificate ID", e.to_string())
                .with("field", "id"))
        }
    };
    // A signed credential never changes (revocation lives in the status list), so it is cached.
    let credential = match state.cache.get(id.serial, id.nonce) {
        Some(credential) => credential,
        None => {
            let stored = state
                .store
                .credential(id.serial, id.nonce)
                .await
                .map_err(|e| Problem::internal(&e))?
                .ok_or_else(|| not_found("this issuer has no credential with this ID"))?;
            let credential: Arc<str> = Arc::from(stored.credential_json);
            state.cache.put(id.serial, id.nonce, Arc::clone(&credential));
            credential
        }
    };
    Ok(json_response(
        StatusCode::OK,
        credential.to_string(),
        "public, max-age=300",
    ))
}

async fn status_list(State(state): State<Arc<IssuerState>>, Path(list): Path<String>) -> Result<Response, Problem> {
    let max_list = (u64::from(IssuedId::MAX_SERIAL) - 1) / LIST_BITS as u64 + 1;
    let list: u64 = list
        .parse()
        .ok()
        .filter(|l| (1..=max_list).contains(l))
        .ok_or_else(|| {
            Problem::new(
                StatusCode::NOT_FOUND,
                "not-found",
                "No such status list",
                "no such status list",
            )
        })?;
    let first = (list - 1) * LIST_BITS as u64 + 1;
    let last = list * LIST_BITS as u64;
    let revoked = state
        .store
        .revoked_serials(first, last)
        .await
        .map_err(|e| Problem::internal(&e))?;
    let mut bits = Bitstring::new(LIST_BITS);
    let sign_error = |e: String| Problem::internal(&IssuerError::Signing(e));
    for serial in revoked {
        let (_, index) = status_position(serial);
        bits.set(index, true).map_err(|e| sign_error(e.to_string()))?;
    }
    let now = now_rfc3339();
    let unsigned = unsigned_status_list_credential(&state.status_list_url(list), &state.did, &now, &bits)
        .map_err(|e| sign_error(e.to_string()))?;
    let signed = proof::sign(unsigned, state.key.signing_key(), &state.verification_method(), &now)
        .map_err(|e| sign_error(e.to_string()))?;
    // Revocation must show at once: verifiers always fetch the current list.
    Ok(json_response(StatusCode::OK, signed.to_string(), "no-cache"))
}

async fn did_document(State(state): State<Arc<IssuerState>>) -> Result<Response, Problem> {
    let keys = state.store.keys().await.map_err(|e| Problem::internal(&e))?;
    let keys: Vec<_> = keys
        .iter()
        .filter_map(|(_, public)| multikey::parse_public_key_multibase(public).ok())
        .collect();
    let document = DidDocument::new(&state.did, &keys);
    let body = serde_json::to_string(&document).map_err(|e| Problem::internal(&IssuerError::Signing(e.to_string())))?;
    Ok(json_response(StatusCode::OK, body, "no-cache"))
}

async fn health(State(state): State<Arc<IssuerState>>) -> Response {
    let body = json!({
        "status": "ok",
        "issuer": state.did,
        "name": state.issuer_name,
        "key_id": state.key.key_id(),
        "bank_version": state.banks.current().version,
        "bank_versions": state.banks.versions(),
    });
    json_response(StatusCode::OK, body.to_string(), "no-store")
}

/// For the property test: a request with a body, as the router receives it.
pub fn post_request(body: Vec<u8>, content_type: &str) -> Request {
    let mut request = Request::new(Body::from(body));
    *request.method_mut() = Method::POST;
    *request.uri_mut() = axum::http::Uri::from_static("/api/credentials");
    if let Ok(value) = HeaderValue::from_str(content_type) {
        request.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    request
}
