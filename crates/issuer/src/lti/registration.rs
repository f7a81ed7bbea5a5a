//! LTI Dynamic Registration 1.0: a platform administrator pastes the Lab's registration link
//! (made by `gradlab issuer lti invite`, one use, expiring) into the platform; the platform
//! opens it with `openid_configuration` and `registration_token`; the Lab reads the platform's
//! OpenID configuration, checks it, registers itself at the platform's registration endpoint
//! (OpenID Connect Dynamic Client Registration with the LTI tool configuration), and stores the
//! client id and deployment the platform answers with.

use serde::Deserialize;
use serde_json::{json, Value};

use super::launch::{Platform, SCOPE_SCORE};
use crate::client::Client;

pub const CLAIM_PLATFORM_CONFIGURATION: &str = "https://purl.imsglobal.org/spec/lti-platform-configuration";
pub const CLAIM_TOOL_CONFIGURATION: &str = "https://purl.imsglobal.org/spec/lti-tool-configuration";
/// How long an invitation to register stays usable unless the command says otherwise.
pub const INVITE_TTL_SECS: i64 = 7 * 24 * 3600;

/// Why a registration did not happen: for the administrator who started it (on the page) and
/// the Lab's operator (in the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistrationError {
    /// No invitation, or a used, expired or mistyped one.
    Invite,
    MissingParameter(&'static str),
    /// The platform's configuration could not be fetched or read.
    Configuration(String),
    /// The configuration is of another issuer, or lacks what LTI needs.
    Invalid(String),
    /// The invitation names another platform.
    OtherPlatform {
        invited: String,
        issuer: String,
    },
    /// The platform refused or garbled the registration.
    Refused(String),
}

impl RegistrationError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Invite => "invite",
            Self::MissingParameter(_) => "missing-parameter",
            Self::Configuration(_) => "configuration-unavailable",
            Self::Invalid(_) => "configuration-invalid",
            Self::OtherPlatform { .. } => "other-platform",
            Self::Refused(_) => "registration-refused",
        }
    }

    /// What the administrator reads on the page.
    pub fn message(&self) -> String {
        match self {
            Self::Invite => "This registration link is not valid: it was used already, it expired, or it was mistyped. Ask the Lab's operator for a new one (gradlab issuer lti invite).".into(),
            Self::MissingParameter(name) => format!("The platform opened the registration link without \"{name}\": start the registration from the platform's Dynamic Registration screen."),
            Self::Configuration(detail) => format!("The Lab could not read the platform's OpenID configuration: {detail}."),
            Self::Invalid(detail) => format!("The platform's OpenID configuration cannot be used for LTI 1.3: {detail}."),
            Self::OtherPlatform { invited, issuer } => format!("This registration link was made for {invited}, but the platform is {issuer}. Ask the Lab's operator for a link for this platform."),
            Self::Refused(detail) => format!("The platform did not accept the Lab's registration: {detail}."),
        }
    }
}

/// The platform's OpenID configuration: the members LTI Dynamic Registration §3.4 requires.
#[derive(Debug, Clone, Deserialize)]
pub struct PlatformConfiguration {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    pub registration_endpoint: String,
    #[serde(default)]
    pub id_token_signing_alg_values_supported: Vec<String>,
    #[serde(default)]
    pub scopes_supported: Vec<String>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti-platform-configuration", default)]
    pub lti: Option<LtiPlatformConfiguration>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct LtiPlatformConfiguration {
    #[serde(default)]
    pub product_family_code: Option<String>,
    #[serde(default)]
    pub messages_supported: Vec<SupportedMessage>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SupportedMessage {
    #[serde(rename = "type")]
    pub kind: String,
}

fn http_url(what: &str, text: &str) -> Result<url::Url, RegistrationError> {
    let url = url::Url::parse(text).map_err(|_| RegistrationError::Invalid(format!("{what} {text:?} is not a URL")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(RegistrationError::Invalid(format!(
            "{what} {text:?} is not an http(s) URL"
        )));
    }
    Ok(url)
}

impl PlatformConfiguration {
    /// Reads and checks a configuration fetched from `configuration_url`: its issuer's host is
    /// that URL's (the spec's rule: a configuration speaks only for its own domain), its
    /// endpoints are URLs, and it signs with RS256.
    pub fn parse(text: &str, configuration_url: &str) -> Result<Self, RegistrationError> {
        let config: Self = serde_json::from_str(text)
            .map_err(|e| RegistrationError::Configuration(format!("it is not a platform configuration ({e})")))?;
        let issuer = http_url("issuer", &config.issuer)?;
        let fetched = http_url("openid_configuration", configuration_url)?;
        if fetched.host_str() != issuer.host_str() {
            return Err(RegistrationError::Invalid(format!(
                "its issuer {} does not match where it was fetched ({configuration_url})",
                config.issuer
            )));
        }
        http_url("authorization_endpoint", &config.authorization_endpoint)?;
        http_url("token_endpoint", &config.token_endpoint)?;
        http_url("jwks_uri", &config.jwks_uri)?;
        // The registration goes to the platform that answered, nowhere else.
        if http_url("registration_endpoint", &config.registration_endpoint)?.host_str() != fetched.host_str() {
            return Err(RegistrationError::Invalid(format!(
                "its registration_endpoint {} is not on {}",
                config.registration_endpoint,
                fetched.host_str().unwrap_or_default()
            )));
        }
        if !config
            .id_token_signing_alg_values_supported
            .iter()
            .any(|a| a == "RS256")
        {
            return Err(RegistrationError::Invalid(
                "it does not sign id_tokens with RS256".into(),
            ));
        }
        if let Some(lti) = &config.lti {
            if !lti.messages_supported.is_empty()
                && !lti
                    .messages_supported
                    .iter()
                    .any(|m| m.kind == "LtiResourceLinkRequest")
            {
                return Err(RegistrationError::Invalid("it does not launch resource links".into()));
            }
        }
        Ok(config)
    }

    /// Whether the platform offers Deep Linking (then the tool asks for the picker placement).
    pub fn deep_linking(&self) -> bool {
        self.lti
            .as_ref()
            .is_some_and(|lti| lti.messages_supported.iter().any(|m| m.kind == "LtiDeepLinkingRequest"))
    }

    /// A name for the platform: its product family (`moodle`, `canvas`), else its issuer.
    pub fn product(&self) -> String {
        self.lti
            .as_ref()
            .and_then(|lti| lti.product_family_code.clone())
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| self.issuer.clone())
    }
}

/// The Lab's client registration (OpenID Connect Dynamic Client Registration with the LTI tool
/// configuration of LTI Dynamic Registration §3.5).
pub fn registration_request(public_url: &str, config: &PlatformConfiguration) -> Value {
    let launch = format!("{public_url}/lti/launch");
    let domain = url::Url::parse(public_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    let mut messages = vec![json!({"type": "LtiResourceLinkRequest", "target_link_uri": launch})];
    if config.deep_linking() {
        messages.push(json!({
            "type": "LtiDeepLinkingRequest",
            "target_link_uri": launch,
            "label": "Gradient Accumulation Lab",
        }));
    }
    // Only the scopes the Lab uses (posting scores), where the platform lists what it offers.
    let scopes: Vec<&str> = [SCOPE_SCORE]
        .into_iter()
        .filter(|s| config.scopes_supported.is_empty() || config.scopes_supported.iter().any(|o| o == s))
        .collect();
    json!({
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": format!("{public_url}/lti/login"),
        "redirect_uris": [launch],
        "client_name": "Gradient Accumulation Lab",
        "jwks_uri": format!("{public_url}/lti/jwks.json"),
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": scopes.join(" "),
        CLAIM_TOOL_CONFIGURATION: {
            "domain": domain,
            "target_link_uri": launch,
            "claims": ["iss", "sub", "name", "given_name", "family_name"],
            "messages": messages,
            "description": "An interactive lab on gradient accumulation, with a quiz graded by the Lab's server.",
        },
    })
}

/// What the platform answered: the client id, and the deployment it made (if it said).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    pub platform: Platform,
    pub deployment_id: Option<String>,
    pub product: String,
}

/// Reads the platform's answer to the registration.
pub fn registered(reply: &str, config: &PlatformConfiguration) -> Result<Registered, RegistrationError> {
    let value: Value =
        serde_json::from_str(reply).map_err(|_| RegistrationError::Refused("its answer is not JSON".into()))?;
    let client_id = value
        .get("client_id")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|id| (1..=255).contains(&id.len()))
        .ok_or_else(|| RegistrationError::Refused("its answer has no client_id".into()))?;
    let deployment_id = value
        .pointer(&format!(
            "/{}/deployment_id",
            CLAIM_TOOL_CONFIGURATION.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|id| (1..=255).contains(&id.len()))
        .map(str::to_string);
    Ok(Registered {
        platform: Platform {
            issuer: config.issuer.clone(),
            client_id: client_id.to_string(),
            auth_login_url: config.authorization_endpoint.clone(),
            auth_token_url: config.token_endpoint.clone(),
            keyset_url: config.jwks_uri.clone(),
        },
        deployment_id,
        product: config.product(),
    })
}

/// Checks the configuration's address against the invitation's platform (if it names one),
/// fetches and checks the configuration, and registers. Blocking: run it off the async
/// runtime, with a client that follows no redirect (an answer from elsewhere is refused).
pub fn register(
    client: &Client,
    configuration_url: &str,
    registration_token: Option<&str>,
    invited_issuer: Option<&str>,
    public_url: &str,
) -> Result<Registered, RegistrationError> {
    let fetched = http_url("openid_configuration", configuration_url)?;
    // An invitation for one platform fetches nothing from anywhere else.
    if let Some(invited) = invited_issuer {
        let invited_host = url::Url::parse(invited)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string));
        if invited_host.as_deref() != fetched.host_str() {
            return Err(RegistrationError::OtherPlatform {
                invited: invited.to_string(),
                issuer: fetched.host_str().unwrap_or_default().to_string(),
            });
        }
    }
    let reply = client
        .get(configuration_url)
        .map_err(|e| RegistrationError::Configuration(e.to_string()))?;
    if reply.status != 200 {
        return Err(RegistrationError::Configuration(format!(
            "{configuration_url} answered {}",
            reply.status
        )));
    }
    let config = PlatformConfiguration::parse(&reply.body, configuration_url)?;
    if let Some(invited) = invited_issuer {
        if invited.trim_end_matches('/') != config.issuer.trim_end_matches('/') {
            return Err(RegistrationError::OtherPlatform {
                invited: invited.to_string(),
                issuer: config.issuer,
            });
        }
    }
    let body = registration_request(public_url, &config).to_string();
    let reply = match registration_token {
        Some(token) => client.post_bearer(&config.registration_endpoint, token, "application/json", &body),
        None => client.post_json(&config.registration_endpoint, &body),
    }
    .map_err(|e| RegistrationError::Refused(e.to_string()))?;
    // Its status only: the page must not become a window onto what an address answers.
    if !(200..300).contains(&reply.status) {
        return Err(RegistrationError::Refused(format!(
            "{} answered {}",
            config.registration_endpoint, reply.status
        )));
    }
    registered(&reply.body, &config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configuration() -> Value {
        json!({
            "issuer": "https://lms.example",
            "authorization_endpoint": "https://lms.example/auth",
            "token_endpoint": "https://lms.example/token",
            "jwks_uri": "https://lms.example/jwks",
            "registration_endpoint": "https://lms.example/register",
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", SCOPE_SCORE, "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"],
            CLAIM_PLATFORM_CONFIGURATION: {
                "product_family_code": "moodle",
                "messages_supported": [{"type": "LtiResourceLinkRequest"}, {"type": "LtiDeepLinkingRequest"}],
            },
        })
    }

    const AT: &str = "https://lms.example/.well-known/openid-configuration";

    fn parse(edit: impl FnOnce(&mut Value)) -> Result<PlatformConfiguration, RegistrationError> {
        let mut config = configuration();
        edit(&mut config);
        PlatformConfiguration::parse(&config.to_string(), AT)
    }

    #[test]
    fn a_configuration_speaks_only_for_its_own_issuer_and_needs_rs256() {
        let config = parse(|_| {}).unwrap();
        assert!(config.deep_linking());
        assert_eq!(config.product(), "moodle");
        assert!(matches!(
            PlatformConfiguration::parse(
                &configuration().to_string(),
                "https://evil.example/.well-known/openid-configuration"
            ),
            Err(RegistrationError::Invalid(_))
        ));
        assert!(matches!(
            parse(|c| c["id_token_signing_alg_values_supported"] = json!(["HS256"])),
            Err(RegistrationError::Invalid(_))
        ));
        assert!(matches!(
            parse(|c| c["jwks_uri"] = json!("not a url")),
            Err(RegistrationError::Invalid(_))
        ));
        assert!(matches!(
            parse(|c| c["registration_endpoint"] = json!("http://169.254.169.254/latest")),
            Err(RegistrationError::Invalid(_))
        ));
        assert!(matches!(
            parse(|c| {
                c.as_object_mut().unwrap().remove("registration_endpoint");
            }),
            Err(RegistrationError::Configuration(_))
        ));
        assert!(matches!(
            PlatformConfiguration::parse("<html>", AT),
            Err(RegistrationError::Configuration(_))
        ));
    }

    #[test]
    fn the_request_registers_the_launch_the_picker_and_only_the_score_scope() {
        let config = parse(|_| {}).unwrap();
        let request = registration_request("https://lab.example/gradlab", &config);
        assert_eq!(request["initiate_login_uri"], "https://lab.example/gradlab/lti/login");
        assert_eq!(
            request["redirect_uris"],
            json!(["https://lab.example/gradlab/lti/launch"])
        );
        assert_eq!(request["jwks_uri"], "https://lab.example/gradlab/lti/jwks.json");
        assert_eq!(request["token_endpoint_auth_method"], "private_key_jwt");
        assert_eq!(request["scope"], SCOPE_SCORE);
        let tool = &request[CLAIM_TOOL_CONFIGURATION];
        assert_eq!(tool["domain"], "lab.example");
        let kinds: Vec<&str> = tool["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["LtiResourceLinkRequest", "LtiDeepLinkingRequest"]);
        // No picker where the platform has no Deep Linking.
        let plain = parse(|c| {
            c[CLAIM_PLATFORM_CONFIGURATION]["messages_supported"] = json!([{"type": "LtiResourceLinkRequest"}])
        })
        .unwrap();
        assert_eq!(
            registration_request("https://lab.example", &plain)[CLAIM_TOOL_CONFIGURATION]["messages"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn the_answer_gives_the_client_and_perhaps_the_deployment() {
        let config = parse(|_| {}).unwrap();
        let answer = json!({"client_id": "abc", CLAIM_TOOL_CONFIGURATION: {"deployment_id": "7"}}).to_string();
        let registered = registered(&answer, &config).unwrap();
        assert_eq!(registered.platform.client_id, "abc");
        assert_eq!(registered.platform.auth_login_url, "https://lms.example/auth");
        assert_eq!(registered.platform.keyset_url, "https://lms.example/jwks");
        assert_eq!(registered.deployment_id.as_deref(), Some("7"));
        assert_eq!(registered_of(json!({"client_id": "abc"})).deployment_id, None);
        assert!(matches!(
            super::registered("{}", &config),
            Err(RegistrationError::Refused(_))
        ));
        assert!(matches!(
            super::registered("nope", &config),
            Err(RegistrationError::Refused(_))
        ));
    }

    fn registered_of(answer: Value) -> Registered {
        registered(&answer.to_string(), &parse(|_| {}).unwrap()).unwrap()
    }

    #[test]
    fn every_failure_has_a_code_of_its_own_and_a_sentence() {
        let errors = [
            RegistrationError::Invite,
            RegistrationError::MissingParameter("openid_configuration"),
            RegistrationError::Configuration("x".into()),
            RegistrationError::Invalid("x".into()),
            RegistrationError::OtherPlatform {
                invited: "a".into(),
                issuer: "b".into(),
            },
            RegistrationError::Refused("x".into()),
        ];
        let codes: std::collections::HashSet<&str> = errors.iter().map(RegistrationError::code).collect();
        assert_eq!(codes.len(), errors.len());
        assert!(errors.iter().all(|e| e.message().ends_with('.')));
    }
}
