//! The OIDC third-party login and the launch (LTI Core 1.3 §5.1, Security Framework 1.0 §5.1):
//! what the login initiation must carry, the authentication request the tool sends back, and
//! the checks of the platform's `id_token`. Nothing of a token is read before its signature,
//! issuer, audience and times verify. Each refusal has a stable code, a sentence a learner can
//! act on, and a detail for the administrator's log.

use std::collections::HashMap;

use gradlab_i18n::{Language, Localizer, Msg};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;

/// How far a platform's clock may differ from ours (`exp`, `iat`, `nbf`).
pub const LEEWAY_SECS: u64 = 60;
/// How long a login may take between initiation and launch.
pub const LOGIN_TTL_SECS: i64 = 600;
/// Oldest `iat` accepted: platforms sign the token right before the form post.
pub const MAX_TOKEN_AGE_SECS: i64 = 3600;

pub const CLAIM_MESSAGE_TYPE: &str = "https://purl.imsglobal.org/spec/lti/claim/message_type";
pub const CLAIM_VERSION: &str = "https://purl.imsglobal.org/spec/lti/claim/version";
pub const CLAIM_DEPLOYMENT_ID: &str = "https://purl.imsglobal.org/spec/lti/claim/deployment_id";
pub const CLAIM_TARGET_LINK_URI: &str = "https://purl.imsglobal.org/spec/lti/claim/target_link_uri";
pub const CLAIM_RESOURCE_LINK: &str = "https://purl.imsglobal.org/spec/lti/claim/resource_link";
pub const CLAIM_CONTEXT: &str = "https://purl.imsglobal.org/spec/lti/claim/context";
pub const CLAIM_TOOL_PLATFORM: &str = "https://purl.imsglobal.org/spec/lti/claim/tool_platform";
pub const CLAIM_AGS_ENDPOINT: &str = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint";
pub const CLAIM_DEEP_LINKING_SETTINGS: &str = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings";
pub const CLAIM_CUSTOM: &str = "https://purl.imsglobal.org/spec/lti/claim/custom";
pub const SCOPE_SCORE: &str = "https://purl.imsglobal.org/spec/lti-ags/scope/score";
/// The custom parameter a deep link sets on an experiment the teacher chose to leave ungraded:
/// its completion reaches the gradebook as progress only.
pub const CUSTOM_GRADING: &str = "gradlab_grading";
pub const GRADING_PROGRESS_ONLY: &str = "progress";

/// A platform this tool is registered with (manually or by Dynamic Registration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    pub issuer: String,
    pub client_id: String,
    pub auth_login_url: String,
    pub auth_token_url: String,
    pub keyset_url: String,
}

/// The login initiation's parameters (GET query or POST form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginInitiation {
    pub issuer: String,
    pub login_hint: String,
    pub target_link_uri: String,
    pub lti_message_hint: Option<String>,
    pub client_id: Option<String>,
    pub deployment_id: Option<String>,
    /// `lti_storage_target`: the frame of the platform's page that keeps the state for the
    /// tool (LTI client-side postMessage storage), where third-party cookies are blocked.
    pub storage_target: Option<String>,
}

/// A storage target names a frame: `_parent`, or a frame name the page can look up.
fn is_frame_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl LoginInitiation {
    pub fn parse(params: &HashMap<String, String>) -> Result<Self, Refusal> {
        let required = |name: &'static str| {
            params
                .get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .ok_or(Refusal::MissingParameter(name))
        };
        let optional = |name: &str| params.get(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        Ok(Self {
            issuer: required("iss")?,
            login_hint: required("login_hint")?,
            target_link_uri: required("target_link_uri")?,
            lti_message_hint: optional("lti_message_hint"),
            client_id: optional("client_id"),
            deployment_id: optional("lti_deployment_id"),
            storage_target: match optional("lti_storage_target") {
                Some(name) if !is_frame_name(&name) => {
                    return Err(Refusal::Malformed(format!(
                        "lti_storage_target {name:?} is not a frame name"
                    )))
                }
                other => other,
            },
        })
    }

    /// The authentication request (OIDC implicit flow, form post) the browser is sent to.
    pub fn authentication_url(
        &self,
        platform: &Platform,
        redirect_uri: &str,
        state: &str,
        nonce: &str,
    ) -> Result<String, Refusal> {
        let mut url = url::Url::parse(&platform.auth_login_url).map_err(|e| {
            Refusal::Misconfigured(format!("the platform's login URL {}: {e}", platform.auth_login_url))
        })?;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("scope", "openid")
                .append_pair("response_type", "id_token")
                .append_pair("response_mode", "form_post")
                .append_pair("prompt", "none")
                .append_pair("client_id", &platform.client_id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("login_hint", &self.login_hint)
                .append_pair("state", state)
                .append_pair("nonce", nonce);
            if let Some(hint) = &self.lti_message_hint {
                query.append_pair("lti_message_hint", hint);
            }
        }
        Ok(url.into())
    }
}

/// Why a login or launch was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    MissingParameter(&'static str),
    UnknownPlatform {
        issuer: String,
        client_id: Option<String>,
    },
    /// The state names no login of this tool, or one that took too long.
    UnknownLogin,
    /// The login's state and nonce were already used by a launch.
    Replayed,
    Malformed(String),
    UnknownKey(String),
    KeysetUnavailable(String),
    BadSignature,
    Expired,
    NotYetValid,
    WrongIssuer,
    WrongAudience,
    NonceMismatch,
    UnknownDeployment(String),
    UnsupportedMessage(String),
    WrongVersion(String),
    TargetMismatch(String),
    Misconfigured(String),
    /// The platform's storage in this browser did not hold the login's state: the launch was
    /// started elsewhere (login CSRF) or the storage was lost.
    OtherBrowser,
}

impl Refusal {
    pub fn code(&self) -> &'static str {
        match self {
            Self::MissingParameter(_) => "missing-parameter",
            Self::UnknownPlatform { .. } => "unknown-platform",
            Self::UnknownLogin => "unknown-login",
            Self::Replayed => "replayed",
            Self::Malformed(_) => "malformed-token",
            Self::UnknownKey(_) => "unknown-key",
            Self::KeysetUnavailable(_) => "keyset-unavailable",
            Self::BadSignature => "bad-signature",
            Self::Expired => "expired",
            Self::NotYetValid => "not-yet-valid",
            Self::WrongIssuer => "wrong-issuer",
            Self::WrongAudience => "wrong-audience",
            Self::NonceMismatch => "nonce-mismatch",
            Self::UnknownDeployment(_) => "unknown-deployment",
            Self::UnsupportedMessage(_) => "unsupported-message",
            Self::WrongVersion(_) => "wrong-version",
            Self::TargetMismatch(_) => "target-mismatch",
            Self::Misconfigured(_) => "misconfigured",
            Self::OtherBrowser => "other-browser",
        }
    }

    /// What the learner reads, and what to do about it (messages `lti-refused-*`; values from
    /// the request are quoted: isolated and bounded).
    pub fn learner_msg(&self) -> Msg {
        let id = match self {
            // The same sentence: the learner cannot tell an unknown key from a bad signature.
            Self::UnknownKey(_) => "lti-refused-bad-signature".to_string(),
            other => format!("lti-refused-{}", other.code()),
        };
        let msg = Msg::new(id);
        match self {
            Self::MissingParameter(name) => msg.quoted("name", name),
            Self::UnknownPlatform { issuer, .. } => msg.quoted("issuer", issuer),
            Self::UnknownDeployment(id) => msg.quoted("id", id),
            Self::UnsupportedMessage(kind) => msg.quoted("kind", kind),
            Self::WrongVersion(version) => msg.quoted("version", version),
            _ => msg,
        }
    }

    /// The learner's sentence in English (logs and tests).
    pub fn learner_message(&self) -> String {
        Localizer::english().msg(&self.learner_msg())
    }

    /// What the administrator's log line adds (never a token or a secret).
    pub fn admin_detail(&self) -> String {
        match self {
            Self::UnknownPlatform { issuer, client_id } => {
                format!(
                    "no registration for issuer {issuer} client_id {}",
                    client_id.as_deref().unwrap_or("(none sent)")
                )
            }
            Self::Malformed(detail)
            | Self::UnknownKey(detail)
            | Self::KeysetUnavailable(detail)
            | Self::UnknownDeployment(detail)
            | Self::UnsupportedMessage(detail)
            | Self::WrongVersion(detail)
            | Self::TargetMismatch(detail)
            | Self::Misconfigured(detail) => detail.clone(),
            other => other.code().to_string(),
        }
    }
}

/// The login a launch answers (from the database, taken once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingLogin {
    pub nonce: String,
    pub issuer: String,
    pub client_id: String,
    pub target_link_uri: String,
    /// The platform's postMessage storage frame, when the login initiation named one.
    pub storage_target: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct Named {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    label: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct AgsEndpoint {
    #[serde(default)]
    scope: Vec<String>,
    #[serde(default)]
    lineitem: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct IdToken {
    /// A string or an array (jsonwebtoken has checked that it names this tool).
    aud: Value,
    #[serde(default)]
    azp: Option<String>,
    exp: i64,
    iat: i64,
    #[serde(default)]
    nbf: Option<i64>,
    nonce: String,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    given_name: Option<String>,
    #[serde(default)]
    family_name: Option<String>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/message_type")]
    message_type: String,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/version")]
    version: String,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/deployment_id")]
    deployment_id: String,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/target_link_uri", default)]
    target_link_uri: Option<String>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/resource_link", default)]
    resource_link: Option<Named>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/context", default)]
    context: Option<Named>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/tool_platform", default)]
    tool_platform: Option<Named>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint", default)]
    ags: Option<AgsEndpoint>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/launch_presentation", default)]
    launch_presentation: Option<LaunchPresentation>,
    #[serde(
        rename = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings",
        default
    )]
    deep_linking_settings: Option<DeepLinkingSettings>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/custom", default)]
    custom: Option<serde_json::Map<String, Value>>,
}

/// A Deep Linking request's settings (Deep Linking 2.0 §4.4.1): where the chosen links go back
/// to, and what the platform accepts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct DeepLinkingSettings {
    pub deep_link_return_url: String,
    #[serde(default)]
    pub accept_types: Vec<String>,
    #[serde(default)]
    pub accept_multiple: Option<bool>,
    /// False: the platform ignores line items in the links (no gradebook column is made).
    #[serde(default)]
    pub accept_lineitem: Option<bool>,
    /// Opaque to the tool, sent back as it came.
    #[serde(default)]
    pub data: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct LaunchPresentation {
    #[serde(default)]
    locale: Option<String>,
}

/// A launch that verified: who, from where, and what to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedLaunch {
    pub issuer: String,
    pub client_id: String,
    pub deployment_id: String,
    pub subject: String,
    /// The learner's name as the platform sent it (empty when it sent none).
    pub name: String,
    pub platform_name: String,
    pub context_id: String,
    pub context_title: String,
    pub resource_link_id: String,
    pub target_link_uri: String,
    /// The line item scores go to, when the platform granted the score scope.
    pub lineitem_url: Option<String>,
    /// The Lab's language for the platform's locale (`es-ES` → Spanish), when the Lab has it.
    pub language: Option<Language>,
    /// The teacher left this experiment ungraded (custom `gradlab_grading=progress`): its
    /// completion is posted as progress, without a score.
    pub progress_only: bool,
    /// A Deep Linking request (a teacher choosing what to add), not a learner's launch.
    pub deep_linking: Option<DeepLinkingSettings>,
}

/// The header's key id, before anything else of the token is looked at.
pub fn token_key_id(id_token: &str) -> Result<String, Refusal> {
    let header = jsonwebtoken::decode_header(id_token).map_err(|e| Refusal::Malformed(format!("header: {e}")))?;
    if header.alg != Algorithm::RS256 {
        return Err(Refusal::Malformed(format!(
            "alg {:?}, only RS256 is accepted",
            header.alg
        )));
    }
    header
        .kid
        .ok_or_else(|| Refusal::Malformed("the header names no kid".into()))
}

/// Verifies an `id_token` against the platform's key and the login it answers. `deployment_known`
/// says whether a deployment id is registered for the platform.
pub fn verify_launch(
    id_token: &str,
    key: &DecodingKey,
    login: &PendingLogin,
    now_unix: i64,
    deployment_known: impl Fn(&str) -> bool,
) -> Result<VerifiedLaunch, Refusal> {
    let mut validation = Validation::new(Algorithm::RS256);
    validation.leeway = LEEWAY_SECS;
    validation.set_issuer(&[login.issuer.as_str()]);
    validation.set_audience(&[login.client_id.as_str()]);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    // Times are checked below against `now_unix`, one clock for every time claim.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    let data = jsonwebtoken::decode::<Value>(id_token, key, &validation).map_err(|e| match e.kind() {
        ErrorKind::InvalidSignature | ErrorKind::InvalidRsaKey(_) => Refusal::BadSignature,
        ErrorKind::ExpiredSignature => Refusal::Expired,
        ErrorKind::ImmatureSignature => Refusal::NotYetValid,
        ErrorKind::InvalidIssuer => Refusal::WrongIssuer,
        ErrorKind::InvalidAudience => Refusal::WrongAudience,
        _ => Refusal::Malformed(e.to_string()),
    })?;
    let token: IdToken = serde_json::from_value(data.claims).map_err(|e| Refusal::Malformed(format!("claims: {e}")))?;
    let leeway = i64::try_from(LEEWAY_SECS).unwrap_or(60);
    if token.exp < now_unix - leeway {
        return Err(Refusal::Expired);
    }
    if token.nbf.is_some_and(|nbf| nbf > now_unix + leeway) || token.iat > now_unix + leeway {
        return Err(Refusal::NotYetValid);
    }
    if token.iat < now_unix - MAX_TOKEN_AGE_SECS {
        return Err(Refusal::Expired);
    }
    // With several audiences the authorized party must be this tool (OIDC Core §2).
    let several = token.aud.as_array().is_some_and(|list| list.len() > 1);
    match &token.azp {
        Some(azp) if azp != &login.client_id => return Err(Refusal::WrongAudience),
        None if several => return Err(Refusal::WrongAudience),
        _ => {}
    }
    if token.nonce != login.nonce {
        return Err(Refusal::NonceMismatch);
    }
    if token.version != "1.3.0" {
        return Err(Refusal::WrongVersion(token.version));
    }
    let deep_linking = match token.message_type.as_str() {
        "LtiResourceLinkRequest" => None,
        "LtiDeepLinkingRequest" => {
            let settings = token
                .deep_linking_settings
                .clone()
                .ok_or_else(|| Refusal::Malformed(format!("no {CLAIM_DEEP_LINKING_SETTINGS}")))?;
            // The return URL becomes a form's action in the teacher's browser: http(s) only.
            let scheme = url::Url::parse(&settings.deep_link_return_url).map(|u| u.scheme().to_string());
            if !matches!(scheme.as_deref(), Ok("https" | "http")) {
                return Err(Refusal::Malformed(format!(
                    "deep_link_return_url {:?} is not a URL",
                    settings.deep_link_return_url
                )));
            }
            if !settings.accept_types.iter().any(|t| t == "ltiResourceLink") {
                return Err(Refusal::UnsupportedMessage(format!(
                    "LtiDeepLinkingRequest accepting only {:?}, not ltiResourceLink",
                    settings.accept_types
                )));
            }
            Some(settings)
        }
        _ => return Err(Refusal::UnsupportedMessage(token.message_type)),
    };
    if !deployment_known(&token.deployment_id) {
        return Err(Refusal::UnknownDeployment(token.deployment_id));
    }
    let target = token.target_link_uri.clone().unwrap_or_default();
    if target != login.target_link_uri {
        return Err(Refusal::TargetMismatch(format!(
            "target_link_uri {target} differs from the login's {}",
            login.target_link_uri
        )));
    }
    // A deep-linking request comes before any resource link exists.
    let resource_link = match (&deep_linking, token.resource_link.as_ref().and_then(|r| r.id.clone())) {
        (_, Some(id)) => id,
        (Some(_), None) => String::new(),
        (None, None) => return Err(Refusal::Malformed(format!("no {CLAIM_RESOURCE_LINK} id"))),
    };
    let progress_only = token
        .custom
        .as_ref()
        .and_then(|custom| custom.get(CUSTOM_GRADING))
        .and_then(Value::as_str)
        == Some(GRADING_PROGRESS_ONLY);
    let subject = token
        .sub
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Refusal::Malformed("no sub: anonymous launches cannot be graded".into()))?;
    let name = token.name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| {
        [token.given_name.as_deref(), token.family_name.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ")
    });
    let context = token.context.clone().unwrap_or_default();
    let platform_name = token
        .tool_platform
        .as_ref()
        .and_then(|p| p.name.clone())
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| login.issuer.clone());
    let lineitem_url = token
        .ags
        .as_ref()
        .filter(|ags| ags.scope.iter().any(|s| s == SCOPE_SCORE))
        .and_then(|ags| ags.lineitem.clone());
    Ok(VerifiedLaunch {
        issuer: login.issuer.clone(),
        client_id: login.client_id.clone(),
        deployment_id: token.deployment_id,
        subject,
        name: name.trim().to_string(),
        platform_name,
        context_id: context.id.unwrap_or_default(),
        context_title: context.title.or(context.label).unwrap_or_default(),
        resource_link_id: resource_link,
        target_link_uri: target,
        lineitem_url,
        language: token
            .launch_presentation
            .and_then(|p| p.locale)
            .and_then(|locale| Language::from_tag(&locale)),
        progress_only,
        deep_linking,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lti::tool_key::ToolKey;
    use serde_json::json;

    const NOW: i64 = 1_800_000_000;

    fn login() -> PendingLogin {
        PendingLogin {
            nonce: "n-1".into(),
            issuer: "https://lms.example".into(),
            client_id: "lab-client".into(),
            target_link_uri: "https://lab.example/lti/launch?view=quiz".into(),
            storage_target: None,
        }
    }

    fn claims() -> Value {
        json!({
            "iss": "https://lms.example",
            "aud": "lab-client",
            "azp": "lab-client",
            "sub": "learner-7",
            "name": "Ada Lovelace",
            "iat": NOW - 5,
            "exp": NOW + 300,
            "nonce": "n-1",
            CLAIM_MESSAGE_TYPE: "LtiResourceLinkRequest",
            CLAIM_VERSION: "1.3.0",
            CLAIM_DEPLOYMENT_ID: "dep-1",
            CLAIM_TARGET_LINK_URI: "https://lab.example/lti/launch?view=quiz",
            CLAIM_RESOURCE_LINK: {"id": "link-1", "title": "The quiz"},
            CLAIM_CONTEXT: {"id": "course-9", "title": "Fine-tuning 101"},
            CLAIM_TOOL_PLATFORM: {"name": "Moodle of Example U"},
            CLAIM_AGS_ENDPOINT: {"scope": [SCOPE_SCORE], "lineitem": "https://lms.example/lineitems/4"},
            "https://purl.imsglobal.org/spec/lti/claim/launch_presentation": {"locale": "es-ES", "document_target": "iframe"},
        })
    }

    struct Keys {
        platform: ToolKey,
        other: ToolKey,
        _dirs: (tempfile::TempDir, tempfile::TempDir),
    }

    fn keys() -> &'static Keys {
        static KEYS: std::sync::OnceLock<Keys> = std::sync::OnceLock::new();
        KEYS.get_or_init(|| {
            let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            Keys {
                platform: ToolKey::load_or_create(a.path()).unwrap(),
                other: ToolKey::load_or_create(b.path()).unwrap(),
                _dirs: (a, b),
            }
        })
    }

    fn decoding(key: &ToolKey) -> DecodingKey {
        let jwk = &key.jwks()["keys"][0];
        DecodingKey::from_rsa_components(jwk["n"].as_str().unwrap(), jwk["e"].as_str().unwrap()).unwrap()
    }

    fn verify_with(claims: &Value, signer: &ToolKey) -> Result<VerifiedLaunch, Refusal> {
        let token = signer.sign(claims).unwrap();
        verify_launch(&token, &decoding(&keys().platform), &login(), NOW, |d| d == "dep-1")
    }

    fn changed(edit: impl FnOnce(&mut Value)) -> Result<VerifiedLaunch, Refusal> {
        let mut claims = claims();
        edit(&mut claims);
        verify_with(&claims, &keys().platform)
    }

    #[test]
    fn a_good_launch_names_the_learner_the_course_and_the_line_item() {
        let launch = changed(|_| {}).unwrap();
        assert_eq!(launch.subject, "learner-7");
        assert_eq!(launch.name, "Ada Lovelace");
        assert_eq!(launch.platform_name, "Moodle of Example U");
        assert_eq!(launch.context_title, "Fine-tuning 101");
        assert_eq!(launch.resource_link_id, "link-1");
        assert_eq!(launch.deployment_id, "dep-1");
        assert_eq!(launch.lineitem_url.as_deref(), Some("https://lms.example/lineitems/4"));
        assert_eq!(launch.language, Some(Language::Spanish));
        // Given and family names when the platform sends no full name; no line item without the score scope.
        let launch = changed(|c| {
            c.as_object_mut().unwrap().remove("name");
            c["given_name"] = json!("Grace");
            c["family_name"] = json!("Hopper");
            c[CLAIM_AGS_ENDPOINT]["scope"] = json!(["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"]);
            c["aud"] = json!(["lab-client", "another"]);
        })
        .unwrap();
        assert_eq!(launch.name, "Grace Hopper");
        assert_eq!(launch.lineitem_url, None);
        // A blank platform name is the issuer's.
        let launch = changed(|c| c[CLAIM_TOOL_PLATFORM]["name"] = json!("  ")).unwrap();
        assert_eq!(launch.platform_name, "https://lms.example");
    }

    #[test]
    fn a_deep_linking_request_needs_its_settings_and_no_resource_link() {
        let request = |edit: fn(&mut Value)| {
            changed(|c| {
                c.as_object_mut().unwrap().remove(CLAIM_RESOURCE_LINK);
                c[CLAIM_MESSAGE_TYPE] = json!("LtiDeepLinkingRequest");
                c[CLAIM_DEEP_LINKING_SETTINGS] = json!({
                    "deep_link_return_url": "https://lms.example/deep-link-return",
                    "accept_types": ["link", "ltiResourceLink"],
                    "accept_lineitem": true,
                    "data": "opaque-7",
                });
                edit(c);
            })
        };
        let launch = request(|_| {}).unwrap();
        let settings = launch.deep_linking.unwrap();
        assert_eq!(settings.deep_link_return_url, "https://lms.example/deep-link-return");
        assert_eq!(settings.data, Some(json!("opaque-7")));
        assert_eq!(settings.accept_lineitem, Some(true));
        assert_eq!(launch.resource_link_id, "");
        assert!(matches!(
            request(|c| {
                c.as_object_mut().unwrap().remove(CLAIM_DEEP_LINKING_SETTINGS);
            })
            .unwrap_err(),
            Refusal::Malformed(_)
        ));
        assert!(matches!(
            request(|c| c[CLAIM_DEEP_LINKING_SETTINGS]["accept_types"] = json!(["file"])).unwrap_err(),
            Refusal::UnsupportedMessage(_)
        ));
        assert!(matches!(
            request(|c| c[CLAIM_DEEP_LINKING_SETTINGS]["deep_link_return_url"] = json!("not a url")).unwrap_err(),
            Refusal::Malformed(_)
        ));
        assert!(matches!(
            request(|c| c[CLAIM_DEEP_LINKING_SETTINGS]["deep_link_return_url"] = json!("javascript:alert(1)"))
                .unwrap_err(),
            Refusal::Malformed(_)
        ));
        // A learner's launch is no deep-linking request, whatever settings it carries.
        assert_eq!(changed(|_| {}).unwrap().deep_linking, None);
    }

    #[test]
    fn an_experiment_left_ungraded_says_so_in_its_custom_parameter() {
        assert!(!changed(|_| {}).unwrap().progress_only);
        assert!(
            changed(|c| c[CLAIM_CUSTOM] = json!({CUSTOM_GRADING: GRADING_PROGRESS_ONLY}))
                .unwrap()
                .progress_only
        );
        assert!(
            !changed(|c| c[CLAIM_CUSTOM] = json!({CUSTOM_GRADING: "score"}))
                .unwrap()
                .progress_only
        );
    }

    #[test]
    fn every_failure_is_refused_with_its_own_reason() {
        assert_eq!(
            verify_with(&claims(), &keys().other).unwrap_err(),
            Refusal::BadSignature
        );
        assert_eq!(changed(|c| c["exp"] = json!(NOW - 120)).unwrap_err(), Refusal::Expired);
        assert_eq!(
            changed(|c| c["iat"] = json!(NOW - 2 * MAX_TOKEN_AGE_SECS)).unwrap_err(),
            Refusal::Expired
        );
        assert_eq!(
            changed(|c| c["iat"] = json!(NOW + 600)).unwrap_err(),
            Refusal::NotYetValid
        );
        assert_eq!(
            changed(|c| c["nbf"] = json!(NOW + 600)).unwrap_err(),
            Refusal::NotYetValid
        );
        assert_eq!(
            changed(|c| c["iss"] = json!("https://evil.example")).unwrap_err(),
            Refusal::WrongIssuer
        );
        assert_eq!(
            changed(|c| c["aud"] = json!("someone-else")).unwrap_err(),
            Refusal::WrongAudience
        );
        assert_eq!(
            changed(|c| c["azp"] = json!("someone-else")).unwrap_err(),
            Refusal::WrongAudience
        );
        let no_azp = changed(|c| {
            c.as_object_mut().unwrap().remove("azp");
            c["aud"] = json!(["lab-client", "another"]);
        });
        assert_eq!(no_azp.unwrap_err(), Refusal::WrongAudience);
        assert_eq!(
            changed(|c| c["nonce"] = json!("n-2")).unwrap_err(),
            Refusal::NonceMismatch
        );
        assert_eq!(
            changed(|c| c[CLAIM_DEPLOYMENT_ID] = json!("dep-x")).unwrap_err(),
            Refusal::UnknownDeployment("dep-x".into())
        );
        assert_eq!(
            changed(|c| c[CLAIM_VERSION] = json!("1.1")).unwrap_err(),
            Refusal::WrongVersion("1.1".into())
        );
        assert_eq!(
            changed(|c| c[CLAIM_MESSAGE_TYPE] = json!("LtiSubmissionReviewRequest")).unwrap_err(),
            Refusal::UnsupportedMessage("LtiSubmissionReviewRequest".into())
        );
        assert!(matches!(
            changed(|c| c[CLAIM_TARGET_LINK_URI] = json!("https://lab.example/lti/launch?view=lab")).unwrap_err(),
            Refusal::TargetMismatch(_)
        ));
        assert!(matches!(
            changed(|c| {
                c.as_object_mut().unwrap().remove("sub");
            })
            .unwrap_err(),
            Refusal::Malformed(_)
        ));
        assert!(matches!(
            changed(|c| {
                c.as_object_mut().unwrap().remove(CLAIM_RESOURCE_LINK);
            })
            .unwrap_err(),
            Refusal::Malformed(_)
        ));
        // Every refusal reads as a sentence and has a code of its own.
        let refusals = every_refusal();
        let codes: std::collections::HashSet<&str> = refusals.iter().map(Refusal::code).collect();
        assert_eq!(codes.len(), refusals.len());
        assert!(refusals.iter().all(|r| r.learner_message().ends_with('.')));
    }

    /// One refusal of each kind.
    fn every_refusal() -> Vec<Refusal> {
        vec![
            Refusal::MissingParameter("iss"),
            Refusal::UnknownPlatform {
                issuer: "https://lms.example".into(),
                client_id: None,
            },
            Refusal::UnknownLogin,
            Refusal::Replayed,
            Refusal::Malformed("x".into()),
            Refusal::UnknownKey("k".into()),
            Refusal::KeysetUnavailable("x".into()),
            Refusal::BadSignature,
            Refusal::Expired,
            Refusal::NotYetValid,
            Refusal::WrongIssuer,
            Refusal::WrongAudience,
            Refusal::NonceMismatch,
            Refusal::UnknownDeployment("d-7".into()),
            Refusal::UnsupportedMessage("LtiSubmissionReviewRequest".into()),
            Refusal::WrongVersion("1.1".into()),
            Refusal::TargetMismatch("x".into()),
            Refusal::Misconfigured("x".into()),
            Refusal::OtherBrowser,
        ]
    }

    #[test]
    fn every_refusal_reads_as_a_sentence_in_every_language() {
        let every = every_refusal();
        for language in Language::ALL {
            let texts = Localizer::new(language).unwrap();
            for refusal in &every {
                let text = texts.msg(&refusal.learner_msg());
                assert!(
                    !text.contains("lti-") && text.ends_with('.'),
                    "{language:?} {refusal:?}: {text}"
                );
            }
            assert!(texts
                .msg(&Refusal::UnknownDeployment("d-7".into()).learner_msg())
                .contains("d-7"));
        }
    }

    #[test]
    fn the_header_must_name_an_rs256_key() {
        let token = keys().platform.sign(&claims()).unwrap();
        assert_eq!(token_key_id(&token).unwrap(), keys().platform.kid());
        let hs256 = jsonwebtoken::encode(
            &jsonwebtoken::Header::default(),
            &claims(),
            &jsonwebtoken::EncodingKey::from_secret(b"shared"),
        )
        .unwrap();
        assert!(matches!(token_key_id(&hs256), Err(Refusal::Malformed(_))));
        assert!(matches!(token_key_id("not.a.token"), Err(Refusal::Malformed(_))));
    }

    #[test]
    fn the_login_needs_its_parameters_and_sends_an_oidc_request_back() {
        let params: HashMap<String, String> = [
            ("iss", "https://lms.example"),
            ("login_hint", "u7"),
            ("target_link_uri", "https://lab.example/lti/launch"),
            ("lti_message_hint", "link-1"),
            ("client_id", "lab-client"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let initiation = LoginInitiation::parse(&params).unwrap();
        let platform = Platform {
            issuer: "https://lms.example".into(),
            client_id: "lab-client".into(),
            auth_login_url: "https://lms.example/auth?x=1".into(),
            auth_token_url: "https://lms.example/token".into(),
            keyset_url: "https://lms.example/jwks".into(),
        };
        let url = url::Url::parse(
            &initiation
                .authentication_url(&platform, "https://lab.example/lti/launch", "s-1", "n-1")
                .unwrap(),
        )
        .unwrap();
        let query: HashMap<String, String> = url.query_pairs().into_owned().collect();
        for (key, value) in [
            ("x", "1"),
            ("scope", "openid"),
            ("response_type", "id_token"),
            ("response_mode", "form_post"),
            ("prompt", "none"),
            ("client_id", "lab-client"),
            ("redirect_uri", "https://lab.example/lti/launch"),
            ("login_hint", "u7"),
            ("lti_message_hint", "link-1"),
            ("state", "s-1"),
            ("nonce", "n-1"),
        ] {
            assert_eq!(query.get(key).map(String::as_str), Some(value), "{key}");
        }
        for missing in ["iss", "login_hint", "target_link_uri"] {
            let mut partial = params.clone();
            partial.insert(missing.to_string(), "  ".to_string());
            assert_eq!(
                LoginInitiation::parse(&partial).unwrap_err(),
                Refusal::MissingParameter(missing)
            );
        }
    }
}
