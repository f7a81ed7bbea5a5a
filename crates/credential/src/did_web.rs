//! `did:web` (W3C CCG, <https://w3c-ccg.github.io/did-method-web/>): the issuer's identifier is
//! its web address, and its public keys are a JSON document served there. Anyone can resolve it
//! with one HTTPS request, and the issuer can rotate keys by publishing a new document.
//!
//! `https://example.com` is `did:web:example.com` (document at
//! `https://example.com/.well-known/did.json`); `https://example.com:3000/user/alice` is
//! `did:web:example.com%3A3000:user:alice` (document at
//! `https://example.com:3000/user/alice/did.json`).

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Deserializer, Serialize};
use thiserror::Error;

use super::multikey;

pub const DID_WEB_PREFIX: &str = "did:web:";
pub const DID_CONTEXT: &str = "https://www.w3.org/ns/did/v1";
pub const MULTIKEY_CONTEXT: &str = "https://w3id.org/security/multikey/v1";
pub const MULTIKEY_TYPE: &str = "Multikey";
/// The older name of the same key format (also `publicKeyMultibase` with the 0xed01 header),
/// still served by many DID documents.
const ED25519_2020_TYPE: &str = "Ed25519VerificationKey2020";

/// Why a URL or DID was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DidWebError {
    #[error("\"{0}\" is not an http:// or https:// URL")]
    NotHttp(String),
    #[error("the URL has no host")]
    NoHost,
    #[error("\"{0}\" is not a host name, IPv4 address or [IPv6] address with an optional port")]
    BadHost(String),
    #[error("a did:web URL has no user name, query or fragment")]
    ExtraUrlParts,
    #[error("the path segment \"{0}\" may only use letters, digits and - . _ ~")]
    BadPathSegment(String),
    #[error("\"{0}\" is not a did:web DID")]
    NotDidWeb(String),
}

/// Characters that stand for themselves in URLs and DIDs (RFC 3986 "unreserved").
fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

/// `host[:port]`: a DNS name or IPv4 address, or an IPv6 address in brackets; the port digits.
fn check_authority(authority: &str) -> Result<(), DidWebError> {
    let bad = || DidWebError::BadHost(authority.to_string());
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (address, after) = rest.split_once(']').ok_or_else(bad)?;
        if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.') {
            return Err(bad());
        }
        match after {
            "" => (address, None),
            _ => (address, Some(after.strip_prefix(':').ok_or_else(bad)?)),
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let host_ok = authority.starts_with('[')
        || (!host.is_empty()
            && host
                .split('.')
                .all(|label| !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')));
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit()));
    if host_ok && port_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

fn percent_encode(text: &str) -> String {
    text.chars()
        .map(|c| {
            if is_unreserved(c) {
                c.to_string()
            } else {
                format!("%{:02X}", c as u32)
            }
        })
        .collect()
}

/// Decodes `%XX` escapes of ASCII characters; anything else is left as it is and then refused by
/// the caller's checks.
fn percent_decode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(position) = rest.find('%') {
        out.push_str(&rest[..position]);
        let escaped = rest
            .get(position + 1..position + 3)
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) if byte.is_ascii() => {
                out.push(char::from(byte));
                rest = &rest[position + 3..];
            }
            _ => {
                out.push('%');
                rest = &rest[position + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `did:web` of a public URL: host (lower case) and port, with the port's colon written
/// `%3A`, then the path segments joined by `:`. A trailing slash is ignored.
pub fn did_from_public_url(url: &str) -> Result<String, DidWebError> {
    let url = url.trim();
    let scheme_end = url.find("://").ok_or_else(|| DidWebError::NotHttp(url.to_string()))?;
    if !matches!(url[..scheme_end].to_ascii_lowercase().as_str(), "http" | "https") {
        return Err(DidWebError::NotHttp(url.to_string()));
    }
    let rest = &url[scheme_end + 3..];
    if rest.contains(['?', '#', '@']) {
        return Err(DidWebError::ExtraUrlParts);
    }
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return Err(DidWebError::NoHost);
    }
    let authority = authority.to_ascii_lowercase();
    check_authority(&authority)?;
    let mut did = format!("{DID_WEB_PREFIX}{}", percent_encode(&authority));
    for segment in path
        .strip_suffix('/')
        .unwrap_or(path)
        .split('/')
        .filter(|_| !path.is_empty())
    {
        if segment.is_empty() || segment == "." || segment == ".." || !segment.chars().all(is_unreserved) {
            return Err(DidWebError::BadPathSegment(segment.to_string()));
        }
        did.push(':');
        did.push_str(segment);
    }
    Ok(did)
}

/// Hosts where the DID document is fetched over plain http, so that an issuer on a developer's
/// machine can be resolved; everywhere else did:web requires https.
fn is_local(authority: &str) -> bool {
    let host = if authority.starts_with('[') {
        authority.split(']').next().map(|h| format!("{h}]")).unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default().to_string()
    };
    // 127.0.0.0/8, written as four decimal octets (not a DNS name that starts with "127.").
    let loopback_v4 = host.strip_prefix("127.").is_some_and(|rest| {
        let octets: Vec<&str> = rest.split('.').collect();
        octets.len() == 3 && octets.iter().all(|octet| octet.parse::<u8>().is_ok())
    });
    host == "localhost" || host == "[::1]" || loopback_v4
}

/// Where the DID document of a `did:web` lives (the inverse of [`did_from_public_url`]).
pub fn did_document_url(did: &str) -> Result<String, DidWebError> {
    let not_did_web = || DidWebError::NotDidWeb(did.to_string());
    let specific = did.strip_prefix(DID_WEB_PREFIX).ok_or_else(not_did_web)?;
    if specific.contains(['/', '?', '#']) {
        return Err(not_did_web());
    }
    let mut segments = specific.split(':');
    let authority = percent_decode(segments.next().unwrap_or_default()).to_ascii_lowercase();
    if authority.is_empty() {
        return Err(not_did_web());
    }
    check_authority(&authority)?;
    let scheme = if is_local(&authority) { "http" } else { "https" };
    let path: Vec<String> = segments.map(percent_decode).collect();
    for segment in &path {
        if segment.is_empty() || segment == "." || segment == ".." || !segment.chars().all(is_unreserved) {
            return Err(DidWebError::BadPathSegment(segment.clone()));
        }
    }
    Ok(if path.is_empty() {
        format!("{scheme}://{authority}/.well-known/did.json")
    } else {
        format!("{scheme}://{authority}/{}/did.json", path.join("/"))
    })
}

/// One public key of a DID document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerificationMethod {
    pub id: String,
    #[serde(rename = "type")]
    pub method_type: String,
    pub controller: String,
    /// Absent for key formats other than Multikey (JWK, ...), which this app does not use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key_multibase: Option<String>,
}

/// An entry of `assertionMethod`: usually a reference to a verification method, but DID
/// documents may also embed one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MethodReference {
    Id(String),
    Embedded(VerificationMethod),
}

/// The DID document an issuer serves: its keys, and which of them may sign credentials.
/// Unknown members (`service`, `authentication`, ...) are ignored when reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidDocument {
    #[serde(rename = "@context", deserialize_with = "one_or_many")]
    pub context: Vec<String>,
    pub id: String,
    #[serde(default)]
    pub verification_method: Vec<VerificationMethod>,
    #[serde(default)]
    pub assertion_method: Vec<MethodReference>,
}

/// JSON-LD allows one context as a plain string.
fn one_or_many<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(context) => vec![context],
        OneOrMany::Many(contexts) => contexts,
    })
}

impl DidDocument {
    /// The document of `did` with `keys` as Multikeys, each allowed to sign credentials (keys
    /// retired after a rotation stay listed, so that what they signed keeps verifying).
    pub fn new(did: &str, keys: &[VerifyingKey]) -> Self {
        let verification_method: Vec<VerificationMethod> = keys
            .iter()
            .map(|key| VerificationMethod {
                id: format!("{did}#{}", multikey::key_id(key)),
                method_type: MULTIKEY_TYPE.into(),
                controller: did.into(),
                public_key_multibase: Some(multikey::public_key_multibase(key)),
            })
            .collect();
        Self {
            context: vec![DID_CONTEXT.into(), MULTIKEY_CONTEXT.into()],
            id: did.into(),
            assertion_method: verification_method
                .iter()
                .map(|method| MethodReference::Id(method.id.clone()))
                .collect(),
            verification_method,
        }
    }

    /// `#fragment` relative to this document, else the id as written.
    fn absolute(&self, id: &str) -> String {
        if id.starts_with('#') {
            format!("{}{id}", self.id)
        } else {
            id.to_string()
        }
    }

    /// The public key of `verification_method` (a DID URL such as `did:web:...#key-...`), only
    /// if this document lists it under `assertionMethod` as an Ed25519 Multikey it controls.
    pub fn find_assertion_key(&self, verification_method: &str) -> Option<VerifyingKey> {
        let wanted = self.absolute(verification_method);
        let method = self.assertion_method.iter().find_map(|entry| match entry {
            MethodReference::Id(id) if self.absolute(id) == wanted => self
                .verification_method
                .iter()
                .find(|method| self.absolute(&method.id) == wanted),
            MethodReference::Embedded(method) if self.absolute(&method.id) == wanted => Some(method),
            _ => None,
        })?;
        let usable_type = method.method_type == MULTIKEY_TYPE || method.method_type == ED25519_2020_TYPE;
        if !usable_type || method.controller != self.id {
            return None;
        }
        multikey::parse_public_key_multibase(method.public_key_multibase.as_deref()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::SigningKey;

    #[test]
    fn the_specification_examples() {
        assert_eq!(
            did_from_public_url("https://w3c-ccg.github.io").unwrap(),
            "did:web:w3c-ccg.github.io"
        );
        assert_eq!(
            did_document_url("did:web:w3c-ccg.github.io").unwrap(),
            "https://w3c-ccg.github.io/.well-known/did.json"
        );
        assert_eq!(
            did_from_public_url("https://w3c-ccg.github.io/user/alice").unwrap(),
            "did:web:w3c-ccg.github.io:user:alice"
        );
        assert_eq!(
            did_document_url("did:web:w3c-ccg.github.io:user:alice").unwrap(),
            "https://w3c-ccg.github.io/user/alice/did.json"
        );
        assert_eq!(
            did_from_public_url("https://example.com:3000").unwrap(),
            "did:web:example.com%3A3000"
        );
        assert_eq!(
            did_document_url("did:web:example.com%3A3000").unwrap(),
            "https://example.com:3000/.well-known/did.json"
        );
    }

    #[test]
    fn urls_are_read_loosely_and_round_trip() {
        assert_eq!(
            did_from_public_url(" HTTPS://Example.COM/Badges/ ").unwrap(),
            "did:web:example.com:Badges"
        );
        assert_eq!(
            did_from_public_url("https://example.com/").unwrap(),
            "did:web:example.com"
        );
        for (url, did, document) in [
            (
                "http://localhost:8080",
                "did:web:localhost%3A8080",
                "http://localhost:8080/.well-known/did.json",
            ),
            (
                "http://127.0.0.1:3000/lab",
                "did:web:127.0.0.1%3A3000:lab",
                "http://127.0.0.1:3000/lab/did.json",
            ),
            (
                "http://[::1]:8080",
                "did:web:%5B%3A%3A1%5D%3A8080",
                "http://[::1]:8080/.well-known/did.json",
            ),
            (
                "https://badges.example.org/a/b_c/d~e",
                "did:web:badges.example.org:a:b_c:d~e",
                "https://badges.example.org/a/b_c/d~e/did.json",
            ),
        ] {
            assert_eq!(did_from_public_url(url).unwrap(), did, "{url}");
            assert_eq!(did_document_url(did).unwrap(), document, "{did}");
        }
        // Only local hosts get http; a name that merely starts like one does not.
        assert_eq!(
            did_document_url("did:web:127.example.com").unwrap(),
            "https://127.example.com/.well-known/did.json"
        );
        assert_eq!(
            did_document_url("did:web:127.evil.example").unwrap(),
            "https://127.evil.example/.well-known/did.json"
        );
        assert_eq!(
            did_document_url("did:web:127.1.2.3%3A8443").unwrap(),
            "http://127.1.2.3:8443/.well-known/did.json"
        );
        assert_eq!(
            did_document_url("did:web:localhost.example.com").unwrap(),
            "https://localhost.example.com/.well-known/did.json"
        );
    }

    #[test]
    fn what_is_not_a_did_web_is_refused() {
        for url in [
            "ftp://example.com",
            "example.com",
            "file:///etc/passwd",
            "mailto:a@example.com",
        ] {
            assert!(
                matches!(did_from_public_url(url), Err(DidWebError::NotHttp(_))),
                "{url}"
            );
        }
        assert_eq!(did_from_public_url("https://"), Err(DidWebError::NoHost));
        assert_eq!(did_from_public_url("https:///path"), Err(DidWebError::NoHost));
        assert_eq!(
            did_from_public_url("https://user@example.com"),
            Err(DidWebError::ExtraUrlParts)
        );
        assert_eq!(
            did_from_public_url("https://example.com/?a=1"),
            Err(DidWebError::ExtraUrlParts)
        );
        assert!(matches!(
            did_from_public_url("https://exa mple.com"),
            Err(DidWebError::BadHost(_))
        ));
        assert!(matches!(
            did_from_public_url("https://example.com:x"),
            Err(DidWebError::BadHost(_))
        ));
        assert!(matches!(
            did_from_public_url("https://a..b"),
            Err(DidWebError::BadHost(_))
        ));
        assert!(matches!(
            did_from_public_url("https://example.com/a b"),
            Err(DidWebError::BadPathSegment(_))
        ));
        assert!(matches!(
            did_from_public_url("https://example.com/a//b"),
            Err(DidWebError::BadPathSegment(_))
        ));
        assert!(matches!(
            did_from_public_url("https://example.com/a/../b"),
            Err(DidWebError::BadPathSegment(_))
        ));
        for did in [
            "did:key:z6Mk",
            "did:web:",
            "did:web:example.com/x",
            "did:web:example.com#key",
        ] {
            assert!(did_document_url(did).is_err(), "{did}");
        }
        assert!(matches!(
            did_document_url("did:web:example.com:..:etc"),
            Err(DidWebError::BadPathSegment(_))
        ));
        assert!(matches!(
            did_document_url("did:web:example.com:a%2Fb"),
            Err(DidWebError::BadPathSegment(_))
        ));
        assert!(matches!(
            did_document_url("did:web:evil.com%2F@example.com"),
            Err(DidWebError::BadHost(_))
        ));
    }

    #[test]
    fn documents_list_their_keys_for_assertions_only() {
        let did = "did:web:example.com";
        let first = SigningKey::from_bytes(&[1; 32]).verifying_key();
        let second = SigningKey::from_bytes(&[2; 32]).verifying_key();
        let document = DidDocument::new(did, &[first, second]);
        let json = serde_json::to_value(&document).unwrap();
        assert_eq!(json["@context"][0], DID_CONTEXT);
        assert_eq!(json["@context"][1], MULTIKEY_CONTEXT);
        assert_eq!(json["verificationMethod"][0]["type"], "Multikey");
        assert_eq!(json["verificationMethod"][0]["controller"], did);
        assert_eq!(
            json["verificationMethod"][1]["publicKeyMultibase"],
            multikey::public_key_multibase(&second)
        );
        let first_id = format!("{did}#{}", multikey::key_id(&first));
        assert_eq!(json["verificationMethod"][0]["id"], first_id.as_str());
        assert_eq!(json["assertionMethod"][0], first_id.as_str());
        let read: DidDocument = serde_json::from_value(json).unwrap();
        assert_eq!(read, document);

        assert_eq!(document.find_assertion_key(&first_id), Some(first));
        let second_id = format!("{did}#{}", multikey::key_id(&second));
        assert_eq!(document.find_assertion_key(&second_id), Some(second));
        assert_eq!(
            document.find_assertion_key(&format!("#{}", multikey::key_id(&first))),
            Some(first)
        );
        assert_eq!(
            document.find_assertion_key("did:web:example.com#key-000000000000"),
            None
        );
        assert_eq!(
            document.find_assertion_key(&format!("did:web:other.com#{}", multikey::key_id(&first))),
            None
        );

        // A key that is listed but not for assertions, or controlled by someone else, does not count.
        let mut authentication_only = document.clone();
        authentication_only.assertion_method.remove(0);
        assert_eq!(authentication_only.find_assertion_key(&first_id), None);
        let mut foreign = document.clone();
        foreign.verification_method[0].controller = "did:web:other.com".into();
        assert_eq!(foreign.find_assertion_key(&first_id), None);
    }

    #[test]
    fn other_issuers_documents_are_read() {
        let key = SigningKey::from_bytes(&[3; 32]).verifying_key();
        let multibase = multikey::public_key_multibase(&key);
        let json = serde_json::json!({
            "@context": "https://www.w3.org/ns/did/v1",
            "id": "did:web:example.org",
            "verificationMethod": [
                {"id": "#jwk", "type": "JsonWebKey2020", "controller": "did:web:example.org",
                 "publicKeyJwk": {"kty": "OKP"}},
            ],
            "authentication": ["#jwk"],
            "assertionMethod": [
                "#jwk",
                {"id": "did:web:example.org#embedded", "type": "Ed25519VerificationKey2020",
                 "controller": "did:web:example.org", "publicKeyMultibase": multibase},
            ],
            "service": [],
        });
        let document: DidDocument = serde_json::from_value(json).unwrap();
        assert_eq!(document.context, vec![DID_CONTEXT.to_string()]);
        assert_eq!(document.find_assertion_key("did:web:example.org#embedded"), Some(key));
        assert_eq!(document.find_assertion_key("did:web:example.org#jwk"), None);
    }
}
