//! The LTI routes. A platform's browser traffic (login initiation, launch) gets HTML: the
//! authentication redirect, the hand-off to the Lab, or a page that says in words why a launch
//! was refused (and a log line for the administrator). The page's own calls (`/lti/session`,
//! `/lti/scores`) are JSON, authorized by the session token the launch handed to the page in
//! the URL's fragment: no cookie, so a launch works in an iframe whose third-party cookies the
//! browser blocks.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use serde_json::{json, Value};

use super::deep_linking::{self, linked_scenario, Choice, PendingDeepLink, PICKER_TTL_SECS};
use super::launch::{token_key_id, verify_launch, LoginInitiation, PendingLogin, Refusal, LOGIN_TTL_SECS};
use super::registration::{self, RegistrationError};
use super::scores::{score_body, Outcome};
use super::store::Session;
use super::{now_rfc3339_millis, random_token, token_hash, unix_now};
use crate::api::IssuerState;
use crate::client::Client;
use crate::request::{IssueRequest, MAX_BODY_BYTES};
use crate::IssuerError;
use gradlab_quiz::attempt::Attempt;

/// How long a launched page may post its result.
pub const SESSION_TTL_SECS: i64 = 4 * 3600;

pub fn router() -> Router<Arc<IssuerState>> {
    Router::new()
        .route("/lti/jwks.json", get(jwks))
        .route("/lti/login", get(login_get).post(login_post))
        .route("/lti/launch", post(launch))
        .route("/lti/deep-link", post(deep_link_chosen))
        .route("/lti/bind", post(bind))
        .route("/lti/register", get(register))
        .route("/lti/session", get(session))
        .route("/lti/scores", post(post_scores))
        .route("/lti/scores/{id}", get(score_status))
        .route("/lti/completion", post(post_completion))
        .layer(axum::middleware::from_fn(in_the_learners_language))
}

/// Every instance's tool keys (they share the database), so a platform verifies an assertion
/// whichever instance signed it.
async fn jwks(State(state): State<Arc<IssuerState>>) -> Response {
    let keys: Vec<Value> = match state.store.lti_tool_keys().await {
        Ok(keys) => keys.iter().filter_map(|k| serde_json::from_str(k).ok()).collect(),
        Err(e) => {
            eprintln!("gradlab issuer: LTI: {e}");
            return problem(StatusCode::INTERNAL_SERVER_ERROR, "internal", "try again");
        }
    };
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        json!({ "keys": keys }).to_string(),
    )
        .into_response()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn html_page(status: StatusCode, title: &str, body: &str) -> Response {
    html_page_in("en", status, title, body)
}

fn html_page_in(language: &str, status: StatusCode, title: &str, body: &str) -> Response {
    let page = format!(
        "<!doctype html><html lang=\"{language}\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>body{{font:1rem/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}}\
         code{{background:#eee;padding:0 .2rem}}fieldset{{border:1px solid #767676;border-radius:.3rem;margin:0 0 1rem;padding:.5rem 1rem}}\
         legend{{font-weight:600;padding:0 .3rem}}label.choice{{display:block;padding:.25rem 0}}input[type=url]{{width:100%;box-sizing:border-box;font:inherit;padding:.3rem}}\
         .help{{color:#4a4a4a;margin:.25rem 0 0}}.error{{color:#a4000f;font-weight:600}}\
         button{{font:inherit;padding:.4rem 1rem;border:1px solid #1a4f8b;border-radius:.3rem;background:#1a4f8b;color:#fff;cursor:pointer}}\
         button[value=cancel]{{background:#fff;color:#1a4f8b}}:focus-visible{{outline:3px solid #1a4f8b;outline-offset:2px}}</style></head><body><main>{body}</main></body></html>",
        title = escape(title)
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        page,
    )
        .into_response()
}

/// A refusal's page, kept on its response so that [`in_the_learners_language`] can write it
/// again in the language the browser asks for.
#[derive(Debug, Clone)]
struct RefusalPage(Refusal);

/// A refused login or launch: the learner's sentence on a page, the administrator's detail in the log.
fn refused(refusal: &Refusal) -> Response {
    // Debug-quoted: the detail holds what the request said (an issuer, a kid), and a line break
    // in it must not forge a log line.
    eprintln!(
        "gradlab issuer: LTI launch refused ({}): {:?}",
        refusal.code(),
        refusal.admin_detail()
    );
    let mut response = refusal_page(refusal, gradlab_i18n::Language::English);
    response.extensions_mut().insert(RefusalPage(refusal.clone()));
    response
}

fn refusal_page(refusal: &Refusal, language: gradlab_i18n::Language) -> Response {
    let status = match refusal {
        Refusal::KeysetUnavailable(_) => StatusCode::BAD_GATEWAY,
        Refusal::UnknownPlatform { .. } | Refusal::UnknownDeployment(_) => StatusCode::FORBIDDEN,
        Refusal::MissingParameter(_) | Refusal::Malformed(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::UNAUTHORIZED,
    };
    let texts = deep_linking::localizer(Some(language));
    let body = format!(
        "<h1>{title}</h1><p id=\"lti-refusal\" data-code=\"{code}\">{message}</p>\
         <p>{reference} <code>{code}</code>.</p>",
        title = escape(&texts.text("lti-refused-title")),
        code = refusal.code(),
        message = escape(&texts.msg(&refusal.learner_msg())),
        reference = escape(&texts.text("lti-refused-reference")),
    );
    html_page_in(language.tag(), status, &texts.text("lti-refused-title"), &body)
}

/// Writes a refusal's page in the browser's language (`Accept-Language`): the login and launch
/// come before anything of the platform can be trusted, so the browser's wish is what there is.
async fn in_the_learners_language(request: Request, next: axum::middleware::Next) -> Response {
    let language = request
        .headers()
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .map(|v| gradlab_i18n::Language::negotiate(v.split(',').map(|t| t.split(';').next().unwrap_or_default())))
        .unwrap_or(gradlab_i18n::Language::English);
    let response = next.run(request).await;
    match response.extensions().get::<RefusalPage>() {
        Some(RefusalPage(refusal)) if language != gradlab_i18n::Language::English => refusal_page(refusal, language),
        _ => response,
    }
}

fn internal(error: &IssuerError) -> Response {
    eprintln!("gradlab issuer: LTI: {error}");
    html_page(
        StatusCode::INTERNAL_SERVER_ERROR,
        "The Lab could not open",
        "<h1>The Lab could not open from your course</h1><p>Something went wrong on the Lab's server. Go back to your course and try again in a minute.</p>",
    )
}

async fn login_get(State(state): State<Arc<IssuerState>>, Query(params): Query<HashMap<String, String>>) -> Response {
    login(&state, &params).await
}

async fn login_post(State(state): State<Arc<IssuerState>>, Form(params): Form<HashMap<String, String>>) -> Response {
    login(&state, &params).await
}

fn launch_url(state: &IssuerState) -> String {
    format!("{}/lti/launch", state.public_url)
}

/// OIDC login initiation: remember a state and a nonce, send the browser to the platform.
async fn login(state: &IssuerState, params: &HashMap<String, String>) -> Response {
    let initiation = match LoginInitiation::parse(params) {
        Ok(initiation) => initiation,
        Err(refusal) => return refused(&refusal),
    };
    // The Lab's launch URL, with a query naming what to open: anything else is not this tool.
    let ours = launch_url(state);
    let target = &initiation.target_link_uri;
    if !(target == &ours || target.starts_with(&format!("{ours}?"))) {
        return refused(&Refusal::TargetMismatch(format!(
            "target_link_uri {target} is not {ours}"
        )));
    }
    let platform = match state
        .store
        .lti_platform(&initiation.issuer, initiation.client_id.as_deref())
        .await
    {
        Ok(Some(platform)) => platform,
        Ok(None) => {
            return refused(&Refusal::UnknownPlatform {
                issuer: initiation.issuer.clone(),
                client_id: initiation.client_id.clone(),
            })
        }
        Err(e) => return internal(&e),
    };
    let (Ok(login_state), Ok(nonce)) = (random_token(), random_token()) else {
        return internal(&IssuerError::Signing("no randomness for the login".into()));
    };
    let pending = PendingLogin {
        nonce,
        issuer: platform.issuer.clone(),
        client_id: platform.client_id.clone(),
        target_link_uri: initiation.target_link_uri.clone(),
        storage_target: initiation.storage_target.clone(),
    };
    if let Err(e) = state.store.begin_lti_login(&login_state, &pending, unix_now()).await {
        return internal(&e);
    }
    match initiation.authentication_url(&platform, &ours, &login_state, &pending.nonce) {
        Ok(url) if pending.storage_target.is_some() => storage_page(
            StorageStep::Put { next: &url },
            pending.storage_target.as_deref().unwrap_or("_parent"),
            &platform.auth_login_url,
            &login_state,
        ),
        Ok(url) => match HeaderValue::from_str(&url) {
            Ok(location) => (StatusCode::FOUND, [(header::LOCATION, location)]).into_response(),
            Err(_) => refused(&Refusal::Misconfigured(format!("the platform's login URL {url}"))),
        },
        Err(refusal) => refused(&refusal),
    }
}

/// The page a launch opens: the query of the target link (`view=quiz` when it names none),
/// re-encoded pair by pair; a fragment is dropped (the page's fragment carries the session).
pub fn app_query(target_link_uri: &str) -> String {
    let pairs: Vec<(String, String)> = url::Url::parse(target_link_uri)
        .map(|url| url.query_pairs().into_owned().collect())
        .unwrap_or_default();
    if pairs.is_empty() {
        return "view=quiz".to_string();
    }
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// The platform's language for the page, unless the target link names one.
fn with_language(query: String, language: Option<gradlab_i18n::Language>) -> String {
    let named = url::form_urlencoded::parse(query.as_bytes()).any(|(key, _)| key == "lang");
    match language {
        Some(language) if !named => format!("{query}&lang={}", language.tag()),
        _ => query,
    }
}

/// The launch: verify the `id_token`, start a session, hand the page its token.
async fn launch(State(state): State<Arc<IssuerState>>, Form(form): Form<HashMap<String, String>>) -> Response {
    let (Some(id_token), Some(login_state)) = (form.get("id_token"), form.get("state")) else {
        let missing = if form.contains_key("id_token") {
            "state"
        } else {
            "id_token"
        };
        return refused(&Refusal::MissingParameter(missing));
    };
    let now = unix_now();
    let pending = match state.store.take_lti_login(login_state, now, LOGIN_TTL_SECS).await {
        Ok(Ok(pending)) => pending,
        Ok(Err(true)) => return refused(&Refusal::Replayed),
        Ok(Err(false)) => return refused(&Refusal::UnknownLogin),
        Err(e) => return internal(&e),
    };
    let kid = match token_key_id(id_token) {
        Ok(kid) => kid,
        Err(refusal) => return refused(&refusal),
    };
    let platform = match state
        .store
        .lti_platform(&pending.issuer, Some(&pending.client_id))
        .await
    {
        Ok(Some(platform)) => platform,
        Ok(None) => {
            return refused(&Refusal::UnknownPlatform {
                issuer: pending.issuer.clone(),
                client_id: Some(pending.client_id.clone()),
            })
        }
        Err(e) => return internal(&e),
    };
    let deployments = match state.store.lti_deployments(&platform.issuer, &platform.client_id).await {
        Ok(deployments) => deployments,
        Err(e) => return internal(&e),
    };
    let lookup = Arc::clone(&state);
    let keyset_url = platform.keyset_url.clone();
    let key = tokio::task::spawn_blocking(move || lookup.lti.platform_keys.key(&Client::new(), &keyset_url, &kid))
        .await
        .unwrap_or_else(|e| Err(Refusal::KeysetUnavailable(format!("the key lookup failed: {e}"))));
    let key = match key {
        Ok(key) => key,
        Err(refusal) => return refused(&refusal),
    };
    let verified = match verify_launch(id_token, &key, &pending, now, |id| deployments.iter().any(|d| d == id)) {
        Ok(verified) => verified,
        Err(refusal) => return refused(&refusal),
    };
    let Ok(token) = random_token() else {
        return internal(&IssuerError::Signing("no randomness for the session".into()));
    };
    if let Some(request) = PendingDeepLink::of(&verified) {
        if let Err(e) = state
            .store
            .begin_lti_deep_link(&token_hash(&token), &request, now, now + PICKER_TTL_SECS)
            .await
        {
            return internal(&e);
        }
        return picker(&token, verified.language, request.accept_lineitem, None);
    }
    let query = with_language(app_query(&verified.target_link_uri), verified.language);
    // Through the platform's storage, the session waits until the page shows the state kept
    // there for this login, in this browser.
    let binding = pending.storage_target.as_ref().map(|_| login_state.as_str());
    if let Err(e) = state
        .store
        .start_lti_session(
            &token_hash(&token),
            &verified,
            &query,
            binding,
            now,
            now + SESSION_TTL_SECS,
        )
        .await
    {
        return internal(&e);
    }
    if let Some(target) = &pending.storage_target {
        return storage_page(
            StorageStep::Get { token: &token },
            target,
            &platform.auth_login_url,
            login_state,
        );
    }
    app_redirect(&state, &query, &token)
}

/// The hand-off to the Lab's page, the session token in the fragment (never sent to a server).
fn app_redirect(state: &IssuerState, query: &str, token: &str) -> Response {
    let location = format!("{}/?{query}#lti={token}", state.public_url);
    match HeaderValue::from_str(&location) {
        Ok(location) => (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response(),
        Err(_) => refused(&Refusal::TargetMismatch(format!("cannot redirect to ?{query}"))),
    }
}

/// What a page of the platform's postMessage storage does: keep the login's state before the
/// authentication request, or read it back after the launch and show it to `/lti/bind`.
enum StorageStep<'a> {
    Put { next: &'a str },
    Get { token: &'a str },
}

/// A value as a JavaScript literal inside a `<script>`: JSON, with `<`, `>` and `&` escaped so
/// that no value can close the script.
fn js_literal(value: &str) -> String {
    Value::from(value)
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// LTI client-side OIDC with postMessage storage: the page talks to the platform's storage
/// frame (`lti_storage_target`) at the platform's origin, since a cookie cannot be trusted in
/// the platform's iframe. The message is sent again every second until answered (the same id:
/// a platform whose storage frame is still loading answers the next one), for 20 s at most.
/// It keeps the state (`lti.put_data`) and goes on to the platform's
/// authentication, or reads the state back (`lti.get_data`) and posts it to `/lti/bind` (a
/// key the storage does not have posts nothing, and the server refuses the launch).
fn storage_page(step: StorageStep<'_>, target: &str, platform_url: &str, login_state: &str) -> Response {
    let Ok(origin) = url::Url::parse(platform_url).map(|u| u.origin().ascii_serialization()) else {
        return refused(&Refusal::Misconfigured(format!(
            "the platform's login URL {platform_url}"
        )));
    };
    let unavailable = "Your course platform did not answer the Lab's sign-in check. Go back to your course and open the activity again; if it persists, ask your teacher or the course's administrator.";
    let (subject, after) = match step {
        StorageStep::Put { next } => (
            "lti.put_data",
            format!("window.location.replace({})", js_literal(next)),
        ),
        StorageStep::Get { token } => (
            "lti.get_data",
            format!(
                "const f=document.createElement('form');f.method='post';f.action='bind';\
                 for(const [k,v] of [['token',{}],['value',String(e.data.value??'')]]){{const i=document.createElement('input');i.type='hidden';i.name=k;i.value=v;f.appendChild(i)}}\
                 document.body.appendChild(f);f.submit()",
                js_literal(token)
            ),
        ),
    };
    let body = format!(
        "<h1>Opening the Lab</h1><p id=\"lti-storage\" data-step=\"{subject}\">Checking your sign-in with your course…</p>\
         <script>(()=>{{const key='state_'+{state},target={target},origin={origin},subject={subject_js};\
         const p=document.getElementById('lti-storage');\
         const fail=()=>{{p.id='lti-refusal';p.dataset.code='storage-unavailable';p.textContent={unavailable}}};\
         const frame=target==='_parent'?window.parent:(window.parent.frames[target]||(window.opener&&window.opener.frames[target]));\
         if(!frame||frame===window){{fail();return}}\
         const id='gradlab-'+Array.from(crypto.getRandomValues(new Uint8Array(12)),b=>b.toString(16).padStart(2,'0')).join('');\
         const message={{subject,message_id:id,key}};if(subject==='lti.put_data')message.value={state};\
         let answered=false;const send=()=>{{if(!answered)frame.postMessage(message,origin)}};\
         const resend=setInterval(send,1000);const timer=setTimeout(()=>{{clearInterval(resend);if(!answered)fail()}},20000);\
         window.addEventListener('message',(e)=>{{if(answered||e.origin!==origin||!e.data||e.data.message_id!==id)return;\
         answered=true;clearInterval(resend);clearTimeout(timer);\
         if(e.data.subject!==subject+'.response'||(e.data.error&&subject==='lti.put_data')){{fail();return}}{after}}});\
         send()}})()</script>",
        state = js_literal(login_state),
        target = js_literal(target),
        origin = js_literal(&origin),
        subject_js = js_literal(subject),
        unavailable = js_literal(unavailable),
    );
    html_page(StatusCode::OK, "Opening the Lab", &body)
}

/// Whether a request comes from a page of this service: the browser's `Sec-Fetch-Site` says
/// same-origin, or (browsers without it) its `Origin` is the public URL's.
fn from_own_page(headers: &HeaderMap, public_url: &str) -> bool {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = header("sec-fetch-site") {
        return site == "same-origin";
    }
    let ours = url::Url::parse(public_url).map(|u| u.origin().ascii_serialization());
    matches!((header("origin"), ours), (Some(origin), Ok(ours)) if origin == ours)
}

/// The launch page showed what the platform's storage kept for its login: if it is the login's
/// state, the session is bound to this browser and the Lab opens; otherwise it is refused.
async fn bind(
    State(state): State<Arc<IssuerState>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    // Only the Lab's own launch page may bind: a form on another site that posts a token and
    // its state here (both known to whoever started that launch) would open the launcher's
    // session in the victim's browser.
    if !from_own_page(&headers, &state.public_url) {
        return refused(&Refusal::OtherBrowser);
    }
    let Some(token) = form.get("token") else {
        return refused(&Refusal::MissingParameter("token"));
    };
    let Some(value) = form.get("value") else {
        return refused(&Refusal::MissingParameter("value"));
    };
    match state
        .store
        .bind_lti_session(&token_hash(token), value, unix_now())
        .await
    {
        Ok(Some(query)) => app_redirect(&state, &query, token),
        Ok(None) => refused(&Refusal::OtherBrowser),
        Err(e) => internal(&e),
    }
}

/// The teacher's picker after a Deep Linking launch: the quiz, the experiments (graded by
/// completion or progress only), the other pages, or a Lab link with their own settings. The
/// form carries the picker's token (no cookie: it works in the platform's iframe).
fn picker(token: &str, language: Option<gradlab_i18n::Language>, columns: bool, error: Option<&str>) -> Response {
    let texts = deep_linking::localizer(language);
    let t = |id: &str| escape(&texts.text(id));
    let mut items = String::new();
    let mut group = |legend: &str, offers: &[deep_linking::Offer]| {
        items.push_str(&format!("<fieldset><legend>{legend}</legend>"));
        for offer in offers {
            items.push_str(&format!(
                "<label class=\"choice\"><input type=\"radio\" name=\"item\" value=\"{value}\" required> {label}</label>",
                value = escape(&offer.value),
                label = escape(&offer.label)
            ));
        }
        items.push_str("</fieldset>");
    };
    let offers = deep_linking::offers(&texts);
    let (experiments, others): (Vec<_>, Vec<_>) = offers.into_iter().partition(|o| o.experiment);
    let (quiz, pages): (Vec<_>, Vec<_>) = others.into_iter().partition(|o| o.value == "quiz");
    group(&t("lti-pick-graded-quiz"), &quiz);
    group(&t("lti-pick-experiments"), &experiments);
    group(&t("lti-pick-pages"), &pages);
    let error = error
        .map(|e| {
            format!(
                "<p id=\"lti-pick-error\" role=\"alert\" class=\"error\">{}</p>",
                escape(e)
            )
        })
        .unwrap_or_default();
    let columns_note = if columns {
        String::new()
    } else {
        format!("<p>{}</p>", t("lti-pick-no-lineitem"))
    };
    let body = format!(
        "<h1>{title}</h1><p>{intro}</p>{columns_note}{error}\
         <form method=\"post\" action=\"deep-link\" id=\"lti-picker\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\"><input type=\"hidden\" name=\"lang\" value=\"{lang}\">\
         <input type=\"hidden\" name=\"columns\" value=\"{columns}\">{items}\
         <fieldset><legend>{own}</legend><label class=\"choice\"><input type=\"radio\" name=\"item\" value=\"settings\" required> {own_choice}</label>\
         <label for=\"link\">{link_label}</label><input type=\"url\" id=\"link\" name=\"link\" aria-describedby=\"link-help\">\
         <p id=\"link-help\" class=\"help\">{link_help}</p></fieldset>\
         <fieldset><legend>{grading}</legend>\
         <label class=\"choice\"><input type=\"radio\" name=\"grading\" value=\"completion\" checked> {completion}</label>\
         <label class=\"choice\"><input type=\"radio\" name=\"grading\" value=\"progress\"> {progress}</label></fieldset>\
         <p><button type=\"submit\" name=\"action\" value=\"add\">{add}</button> \
         <button type=\"submit\" name=\"action\" value=\"cancel\" formnovalidate>{cancel}</button></p></form>",
        title = t("lti-pick-title"),
        intro = t("lti-pick-intro"),
        token = escape(token),
        lang = texts.language().tag(),
        columns = u8::from(columns),
        own = t("lti-pick-own-legend"),
        own_choice = t("lti-pick-own-choice"),
        link_label = t("lti-pick-link-label"),
        link_help = t("lti-pick-link-help"),
        grading = t("lti-pick-grading"),
        completion = t("lti-pick-completion"),
        progress = t("lti-pick-progress"),
        add = t("lti-pick-add"),
        cancel = t("lti-pick-cancel"),
    );
    let status = if error.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    html_page_in(texts.language().tag(), status, &texts.text("lti-pick-title"), &body)
}

/// The picker's choice: signed into an `LtiDeepLinkingResponse` and posted back to the
/// platform by the teacher's browser (an empty one when they cancelled).
async fn deep_link_chosen(
    State(state): State<Arc<IssuerState>>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let field = |name: &str| form.get(name).map(String::as_str);
    let language = field("lang").and_then(gradlab_i18n::Language::from_tag);
    let Some(token) = field("token").filter(|t| !t.is_empty()) else {
        return refused(&Refusal::MissingParameter("token"));
    };
    let cancelled = field("action") == Some("cancel");
    let choice = if cancelled {
        None
    } else {
        match Choice::parse(field("item"), field("grading"), field("link"), &state.public_url) {
            Ok(choice) => Some(choice),
            Err(e) => {
                let message = deep_linking::localizer(language).msg(&e.message(&state.public_url));
                return picker(token, language, field("columns") != Some("0"), Some(&message));
            }
        }
    };
    // Made after the await: a Localizer is not Send.
    let taken = state.store.take_lti_deep_link(&token_hash(token), unix_now()).await;
    let texts = deep_linking::localizer(language);
    let request = match taken {
        Ok(Some(request)) => request,
        Ok(None) => {
            return html_page_in(
                texts.language().tag(),
                StatusCode::GONE,
                &texts.text("lti-pick-title"),
                &format!(
                    "<h1>{}</h1><p id=\"lti-refusal\" data-code=\"picker-used\">{}</p>",
                    escape(&texts.text("lti-pick-title")),
                    escape(&texts.text("lti-pick-gone"))
                ),
            )
        }
        Err(e) => return internal(&e),
    };
    let items: Vec<Value> = choice
        .iter()
        .map(|c| c.content_item(&state.public_url, &texts, request.accept_lineitem))
        .collect();
    let Ok(nonce) = random_token() else {
        return internal(&IssuerError::Signing("no randomness for the response".into()));
    };
    let message = choice.as_ref().map(|c| c.title(&texts));
    let claims = deep_linking::response_claims(&request, items, message, &nonce, unix_now());
    let jwt = match state.lti.tool_key.sign(&claims) {
        Ok(jwt) => jwt,
        Err(e) => return internal(&IssuerError::Signing(e.to_string())),
    };
    eprintln!(
        "gradlab issuer: LTI deep link for {} ({}): {}",
        request.issuer,
        request.deployment_id,
        choice.as_ref().map_or_else(|| "cancelled".to_string(), Choice::query)
    );
    let body = format!(
        "<h1>{title}</h1><form method=\"post\" action=\"{url}\" id=\"lti-return\">\
         <input type=\"hidden\" name=\"JWT\" value=\"{jwt}\"><p>{sending}</p>\
         <noscript><button type=\"submit\">{next}</button></noscript></form>\
         <script>document.getElementById('lti-return').submit()</script>",
        title = escape(&texts.text("lti-pick-title")),
        url = escape(&request.return_url),
        jwt = escape(&jwt),
        sending = escape(&texts.text("lti-pick-sending")),
        next = escape(&texts.text("lti-pick-continue")),
    );
    html_page_in(
        texts.language().tag(),
        StatusCode::OK,
        &texts.text("lti-pick-title"),
        &body,
    )
}

/// A registration that did not happen: the administrator's page and the operator's log line.
fn registration_failed(error: &RegistrationError) -> Response {
    eprintln!(
        "gradlab issuer: LTI registration refused ({}): {:?}",
        error.code(),
        error.message()
    );
    let status = match error {
        RegistrationError::Invite => StatusCode::FORBIDDEN,
        RegistrationError::MissingParameter(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::BAD_GATEWAY,
    };
    html_page(
        status,
        "The Lab was not registered",
        &format!(
            "<h1>The Lab was not registered</h1><p id=\"lti-registration-error\" data-code=\"{code}\">{message}</p>\
             <p>Reference for the Lab's operator: <code>{code}</code>.</p>",
            code = error.code(),
            message = escape(&error.message())
        ),
    )
}

/// LTI Dynamic Registration, opened by the platform with the operator's invitation: the
/// invitation is taken (given back if the registration fails), the platform's configuration
/// read, the Lab registered there and the answer stored. The page then asks the platform to
/// close it (`org.imsglobal.lti.close`).
async fn register(State(state): State<Arc<IssuerState>>, Query(params): Query<HashMap<String, String>>) -> Response {
    let param = |name: &str| params.get(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let Some(invite) = param("invite") else {
        return registration_failed(&RegistrationError::Invite);
    };
    let Some(configuration_url) = param("openid_configuration") else {
        return registration_failed(&RegistrationError::MissingParameter("openid_configuration"));
    };
    let registration_token = param("registration_token");
    let invite_hash = token_hash(&invite);
    let invited_issuer = match state.store.take_lti_invite(&invite_hash, unix_now()).await {
        Ok(Some(issuer)) => issuer,
        Ok(None) => return registration_failed(&RegistrationError::Invite),
        Err(e) => return internal(&e),
    };
    let public_url = state.public_url.clone();
    let registered = tokio::task::spawn_blocking(move || {
        registration::register(
            &Client::without_redirects(),
            &configuration_url,
            registration_token.as_deref(),
            invited_issuer.as_deref(),
            &public_url,
        )
    })
    .await
    .unwrap_or_else(|e| Err(RegistrationError::Refused(format!("the registration stopped: {e}"))));
    let registered = match registered {
        Ok(registered) => registered,
        Err(error) => {
            if let Err(e) = state.store.release_lti_invite(&invite_hash).await {
                eprintln!("gradlab issuer: LTI: {e}");
            }
            return registration_failed(&error);
        }
    };
    let deployment = registered.deployment_id.as_deref();
    if let Err(e) = state
        .store
        .add_lti_platform(&registered.platform, deployment, unix_now())
        .await
    {
        return internal(&e);
    }
    let platform = &registered.platform;
    eprintln!(
        "gradlab issuer: LTI platform {} registered by Dynamic Registration (client {}, deployment {})",
        platform.issuer,
        platform.client_id,
        deployment.unwrap_or("none yet")
    );
    let no_deployment = if deployment.is_none() {
        format!(
            "<p>The platform named no deployment, so launches are refused until one is added: \
             <code>gradlab issuer lti add-platform --issuer {} --client-id {} --deployment-id …</code> with the URLs of \
             <code>gradlab issuer lti platforms</code>.</p>",
            escape(&platform.issuer),
            escape(&platform.client_id)
        )
    } else {
        String::new()
    };
    let body = format!(
        "<h1>The Lab is registered</h1><p id=\"lti-registered\" data-client-id=\"{client}\">Registered with {product} \
         (<code>{issuer}</code>): client <code>{client}</code>, deployment <code>{deployment}</code>. Teachers can now add the Lab \
         to their courses.</p>{no_deployment}<p><button type=\"button\" id=\"lti-close\">Close</button></p>\
         <script>function closeRegistration(){{(window.opener||window.parent).postMessage({{subject:'org.imsglobal.lti.close'}},'*')}}\
         document.getElementById('lti-close').addEventListener('click',closeRegistration);closeRegistration()</script>",
        product = escape(&registered.product),
        issuer = escape(&platform.issuer),
        client = escape(&platform.client_id),
        deployment = escape(deployment.unwrap_or("none yet")),
    );
    html_page(StatusCode::OK, "The Lab is registered", &body)
}

fn problem(status: StatusCode, code: &str, detail: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/problem+json")],
        json!({"type": "about:blank", "status": status.as_u16(), "code": code, "title": detail, "detail": detail})
            .to_string(),
    )
        .into_response()
}

fn json_reply(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// The session a request's bearer token opens, with the token's hash; or the 401 to send.
async fn authorized(state: &IssuerState, headers: &HeaderMap) -> Result<(Session, String), Response> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            problem(
                StatusCode::UNAUTHORIZED,
                "no-session",
                "send the launch's session token as Authorization: Bearer",
            )
        })?;
    let hash = token_hash(token);
    match state.store.lti_session(&hash, unix_now()).await {
        Ok(Some(session)) => Ok((session, hash)),
        Ok(None) => Err(problem(
            StatusCode::UNAUTHORIZED,
            "session-expired",
            "this course session has expired or is unknown: open the activity from your course again",
        )),
        Err(e) => {
            eprintln!("gradlab issuer: LTI: {e}");
            Err(problem(StatusCode::INTERNAL_SERVER_ERROR, "internal", "try again"))
        }
    }
}

/// The LTI session of a request that carries a bearer token: `Ok(None)` without one, `Err` with
/// the 401 to send for an unknown or expired one (never silently ignored).
pub async fn bearer_session(state: &IssuerState, headers: &HeaderMap) -> Result<Option<Session>, Response> {
    if !headers.contains_key(header::AUTHORIZATION) {
        return Ok(None);
    }
    authorized(state, headers).await.map(|(session, _)| Some(session))
}

async fn session(State(state): State<Arc<IssuerState>>, headers: HeaderMap) -> Response {
    match authorized(&state, &headers).await {
        Ok((session, _)) => json_reply(
            StatusCode::OK,
            &json!({
                "name": session.name,
                "platform": session.platform_name,
                "course": session.context_title,
                "target": session.target,
                "graded": session.lineitem_url.is_some(),
                "expires_at": session.expires_at,
            }),
        ),
        Err(response) => response,
    }
}

/// Queues a session's outcome for its line item (durable once this returns) and wakes the
/// delivery loop; returns the score's id.
async fn queue_score(
    state: &IssuerState,
    session: &Session,
    hash: &str,
    lineitem: &str,
    outcome: Outcome,
) -> Result<i64, IssuerError> {
    let body = score_body(&session.subject, outcome, &now_rfc3339_millis());
    let id = state
        .store
        .queue_lti_score(session, hash, lineitem, &body.to_string(), unix_now())
        .await?;
    state.lti.delivery.wake.notify_one();
    Ok(id)
}

/// The quiz's answers from a launched page: graded here, the score queued for the gradebook.
async fn post_scores(State(state): State<Arc<IssuerState>>, request: Request) -> Response {
    let (session, hash) = match authorized(&state, request.headers()).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES).await else {
        return problem(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            "the request body is too large",
        );
    };
    // The learner is whom the platform named, whatever name the body carries (the issuance
    // parser wants one).
    let mut value: Value = match serde_json::from_slice(&body) {
        Ok(Value::Object(object)) => Value::Object(object),
        _ => return problem(StatusCode::BAD_REQUEST, "malformed", "body: must be a JSON object"),
    };
    value["name"] = json!(if session.name.trim().is_empty() {
        "Learner"
    } else {
        session.name.as_str()
    });
    let parsed = match IssueRequest::parse(value.to_string().as_bytes(), &state.banks) {
        Ok(parsed) => parsed,
        Err(e) => return problem(StatusCode::BAD_REQUEST, "malformed", &e.to_string()),
    };
    let Some(bank) = state.banks.get(parsed.bank_version) else {
        return problem(StatusCode::BAD_REQUEST, "malformed", "bank_version: not graded here");
    };
    let score = match Attempt::grade_first_answers(bank, &parsed.answers) {
        Ok(score) => score,
        Err(e) => return problem(StatusCode::BAD_REQUEST, "malformed", &format!("answers: {e}")),
    };
    let graded = json!({
        "score_percent": score.percent,
        "passed": score.passed,
        "answered": score.answered,
        "total": score.total,
    });
    let Some(lineitem) = session.lineitem_url.clone() else {
        let mut reply = graded;
        reply["delivery"] = json!("not-graded");
        return json_reply(StatusCode::OK, &reply);
    };
    match queue_score(
        &state,
        &session,
        &hash,
        &lineitem,
        Outcome::Quiz { percent: score.percent },
    )
    .await
    {
        Ok(id) => {
            eprintln!("gradlab issuer: LTI score {id} queued for {lineitem}");
            let mut reply = graded;
            reply["id"] = json!(id);
            reply["delivery"] = json!("pending");
            json_reply(StatusCode::ACCEPTED, &reply)
        }
        Err(e) => {
            eprintln!("gradlab issuer: LTI: {e}");
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the score was not recorded; try again",
            )
        }
    }
}

/// Whether a session's page is the Lab (an experiment), as the app routes its query.
fn links_the_lab(target_query: &str) -> bool {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(target_query.as_bytes())
        .into_owned()
        .collect();
    matches!(
        gradlab_route::Route::from_pairs(&pairs).0,
        gradlab_route::Route::Lab { .. }
    )
}

/// A Lab experiment trained far enough after a launch into it: its completion to the gradebook
/// (1 of 1), when the course linked this experiment (or the Lab without naming one).
async fn post_completion(State(state): State<Arc<IssuerState>>, request: Request) -> Response {
    let (session, hash) = match authorized(&state, request.headers()).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let Ok(body) = axum::body::to_bytes(request.into_body(), 1024).await else {
        return problem(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            "the request body is too large",
        );
    };
    let scenario = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("scenario").and_then(Value::as_str).map(str::to_string))
        .filter(|s| (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    let Some(scenario) = scenario else {
        return problem(
            StatusCode::BAD_REQUEST,
            "malformed",
            "scenario: an experiment id is required",
        );
    };
    // Only a link to the Lab counts an experiment: a quiz link's line item holds the quiz's
    // score, which a completion must never overwrite.
    if !links_the_lab(&session.target) {
        return json_reply(StatusCode::OK, &json!({"delivery": "not-an-experiment"}));
    }
    if linked_scenario(&session.target).is_some_and(|linked| linked != scenario) {
        return json_reply(StatusCode::OK, &json!({"delivery": "other-experiment"}));
    }
    let Some(lineitem) = session.lineitem_url.clone() else {
        return json_reply(StatusCode::OK, &json!({"delivery": "not-graded"}));
    };
    let outcome = Outcome::Completed {
        graded: !session.progress_only,
    };
    match queue_score(&state, &session, &hash, &lineitem, outcome).await {
        Ok(id) => {
            eprintln!("gradlab issuer: LTI completion of {scenario} ({id}) queued for {lineitem}");
            json_reply(StatusCode::ACCEPTED, &json!({"id": id, "delivery": "pending"}))
        }
        Err(e) => {
            eprintln!("gradlab issuer: LTI: {e}");
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the completion was not recorded; try again",
            )
        }
    }
}

/// What a learner is told of a failed delivery: the platform's status, never its reply's text.
fn public_reason(error: &str) -> String {
    match error.split_once("answered ") {
        Some((_, rest)) => format!(
            "the course platform answered {}",
            rest.chars().take(3).collect::<String>()
        ),
        None => "the course platform could not be reached".to_string(),
    }
}

/// Whether a queued score has reached the course.
async fn score_status(State(state): State<Arc<IssuerState>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (_, hash) = match authorized(&state, &headers).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let Ok(id) = id.parse::<i64>() else {
        return problem(StatusCode::NOT_FOUND, "not-found", "no such score");
    };
    match state.store.lti_score(id, &hash).await {
        Ok(Some(score)) => json_reply(
            StatusCode::OK,
            &json!({
                "id": score.id,
                "delivery": match (score.delivered_at, score.next_attempt_at) {
                    (Some(_), _) => "delivered",
                    (None, super::scores::GIVEN_UP) => "given-up",
                    (None, _) => "pending",
                },
                "attempts": score.attempts,
                "last_error": score.last_error.as_deref().map(public_reason),
                "retry_in_secs": if score.delivered_at.is_some() || score.next_attempt_at == super::scores::GIVEN_UP {
                    0
                } else {
                    (score.next_attempt_at - unix_now()).max(0)
                },
            }),
        ),
        Ok(None) => problem(StatusCode::NOT_FOUND, "not-found", "no such score in this session"),
        Err(e) => {
            eprintln!("gradlab issuer: LTI: {e}");
            problem(StatusCode::INTERNAL_SERVER_ERROR, "internal", "try again")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_opened_is_the_target_links_query_and_never_its_fragment() {
        assert_eq!(app_query("https://lab.example/lti/launch"), "view=quiz");
        assert_eq!(app_query("https://lab.example/lti/launch?"), "view=quiz");
        assert_eq!(
            app_query("https://lab.example/lti/launch?view=lab&scenario=norms"),
            "view=lab&scenario=norms"
        );
        // A teacher's tool URL cannot plant a session token in learners' pages.
        assert_eq!(
            app_query("https://lab.example/lti/launch?view=quiz#lti=planted"),
            "view=quiz"
        );
        assert_eq!(app_query("https://lab.example/lti/launch?a=%23lti%3Dx"), "a=%23lti%3Dx");
    }

    #[test]
    fn the_page_speaks_the_platforms_language_unless_the_link_chose_one() {
        use gradlab_i18n::Language;
        assert_eq!(
            with_language("view=quiz".into(), Some(Language::Spanish)),
            "view=quiz&lang=es"
        );
        assert_eq!(
            with_language("view=quiz&lang=en".into(), Some(Language::Spanish)),
            "view=quiz&lang=en"
        );
        assert_eq!(with_language("view=quiz".into(), None), "view=quiz");
    }

    #[test]
    fn only_a_link_to_the_lab_takes_a_completion() {
        assert!(links_the_lab("view=lab&scenario=norms"));
        assert!(links_the_lab("n=8&lang=es"), "the Lab is the app's default page");
        assert!(!links_the_lab("view=quiz"));
        assert!(!links_the_lab("view=quiz&lang=es"));
        assert!(!links_the_lab("view=gpt"));
    }

    #[test]
    fn a_completion_counts_for_the_experiment_the_course_linked() {
        assert_eq!(linked_scenario("view=lab&scenario=norms").as_deref(), Some("norms"));
        assert_eq!(linked_scenario("view=lab"), None);
        assert_eq!(linked_scenario("view=quiz"), None);
    }

    #[test]
    fn only_the_labs_own_page_may_bind_a_session() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, HeaderValue::from_static(value));
            }
            map
        };
        let ours = "https://lab.example/gradlab";
        assert!(from_own_page(&headers(&[("sec-fetch-site", "same-origin")]), ours));
        assert!(!from_own_page(
            &headers(&[("sec-fetch-site", "cross-site"), ("origin", "https://lab.example")]),
            ours
        ));
        assert!(from_own_page(&headers(&[("origin", "https://lab.example")]), ours));
        assert!(!from_own_page(&headers(&[("origin", "https://evil.example")]), ours));
        assert!(!from_own_page(&headers(&[]), ours), "neither header: refused");
    }

    #[test]
    fn a_value_in_a_script_cannot_close_it() {
        assert_eq!(js_literal("abc"), "\"abc\"");
        let hostile = js_literal("</script><script>alert(1)</script>&\"'");
        assert!(
            !hostile.contains('<') && !hostile.contains('>') && !hostile.contains('&'),
            "{hostile}"
        );
        assert_eq!(
            serde_json::from_str::<String>(&hostile).unwrap(),
            "</script><script>alert(1)</script>&\"'"
        );
    }

    #[test]
    fn a_learner_reads_the_platforms_status_never_its_reply() {
        assert_eq!(
            public_reason("the LTI platform: scores endpoint answered 503: <html>secret</html>"),
            "the course platform answered 503"
        );
        assert_eq!(
            public_reason("the LTI platform: token endpoint: connection refused"),
            "the course platform could not be reached"
        );
    }
}
