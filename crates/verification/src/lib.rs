//! What the verify page checks and what it concludes, as plain Rust over a fetch function: an
//! ID of either format, or a credential from a file (JSON, or a PNG with the credential baked
//! in). The browser passes its `fetch`; the native tests pass a table of replies, so every
//! verdict is tested without a browser.
//!
//! A format-2 ID names a credential at the issuer that serves this page: fetch it, resolve its
//! issuer's `did:web`, fetch the DID document and the status list the credential names, and run
//! [`verify_credential`]. A format-1 ID is checked offline with the name (integrity only).

use std::future::Future;

use serde_json::Value;

use gradlab_credential::baked_png;
use gradlab_credential::did_web::{did_document_url, DidDocument};
use gradlab_credential::verify::{verify_credential, Status, VerifyError};
use gradlab_credential::CredentialSummary;
use gradlab_i18n::Msg;
use gradlab_quiz::certificate::{self, Certificate, CertificateError, CivilDate, IssuedId, ParsedId};
use gradlab_quiz::issuance::Reply;

/// The conclusion, as the page's `data-status` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Signed by a key its issuer lists, not revoked.
    Valid,
    /// Signed, but the issuer has revoked it.
    Revoked,
    /// The signature does not match the content.
    Tampered,
    /// The issuer's DID document could not be fetched or read, or does not list the key.
    UnknownIssuer,
    /// The issuer has no credential with this ID.
    UnknownId,
    /// The issuer (or its status list) could not be reached.
    Unreachable,
    /// A valid format-1 ID: proves integrity, not issuer.
    IntegrityOnly,
    /// Not a certificate: a malformed ID or file, a wrong name, an unsupported proof.
    Invalid,
}

impl Verdict {
    pub fn tag(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Revoked => "revoked",
            Verdict::Tampered => "tampered",
            Verdict::UnknownIssuer => "unknown-issuer",
            Verdict::UnknownId => "unknown-id",
            Verdict::Unreachable => "unreachable",
            Verdict::IntegrityOnly => "integrity-only",
            Verdict::Invalid => "invalid",
        }
    }

    /// Whether the certificate holds (a format-1 ID holds, for what it proves).
    pub fn is_valid(self) -> bool {
        matches!(self, Verdict::Valid | Verdict::IntegrityOnly)
    }

    /// The verdict's heading.
    pub fn title(self) -> Msg {
        Msg::new(match self {
            Verdict::Valid => "verify-status-valid",
            Verdict::Revoked => "verify-status-revoked",
            Verdict::Tampered => "verify-status-tampered",
            Verdict::UnknownIssuer => "verify-status-unknown-issuer",
            Verdict::UnknownId => "verify-status-unknown-id",
            Verdict::Unreachable => "verify-status-unreachable",
            Verdict::IntegrityOnly => "verify-status-integrity-only",
            Verdict::Invalid => "verify-status-invalid",
        })
    }
}

/// A credential whose signature verified with a key its issuer lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub summary: CredentialSummary,
    /// The key that signed it (a DID URL in the issuer's document).
    pub key: String,
    pub status: Status,
}

/// The outcome of one check, with what the page states about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub verdict: Verdict,
    /// What a verified signature vouches for (valid, revoked, or revocation unknown).
    pub checked: Option<Checked>,
    /// What a valid format-1 ID states.
    pub integrity_only: Option<Certificate>,
    /// Why, when the verdict is not "valid".
    pub reason: Option<Msg>,
}

impl Report {
    fn failed(verdict: Verdict, reason: Msg) -> Self {
        Self {
            verdict,
            checked: None,
            integrity_only: None,
            reason: Some(reason),
        }
    }

    fn invalid_id(error: &CertificateError) -> Self {
        Self::failed(Verdict::Invalid, error.message())
    }
}

/// A file that is not a credential, with why (see [`credential_from_file`]).
pub fn file_problem(reason: Msg) -> Report {
    Report::failed(Verdict::Invalid, reason)
}

/// What an ID typed so far is, so the page can ask for the name only where it matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdKind {
    Empty,
    IntegrityOnly,
    Issued(IssuedId),
    Invalid(CertificateError),
}

pub fn classify(input: &str, today: CivilDate) -> IdKind {
    if input.trim().is_empty() {
        return IdKind::Empty;
    }
    match certificate::parse_id(input, today) {
        Ok(ParsedId::IntegrityOnly(_)) => IdKind::IntegrityOnly,
        Ok(ParsedId::Issued(id)) => IdKind::Issued(id),
        Err(error) => IdKind::Invalid(error),
    }
}

/// The issuer's route of an issued ID, relative to the app's directory.
pub fn credential_path(id: &IssuedId) -> Option<String> {
    Some(format!("api/credentials/{}", id.encode().ok()?))
}

/// A format-1 ID with the name it was issued to, checked offline.
pub fn check_integrity_only(id: &str, name: &str, today: CivilDate) -> Report {
    match certificate::verify(id, name, today) {
        Ok(cert) => Report {
            verdict: Verdict::IntegrityOnly,
            checked: None,
            integrity_only: Some(cert),
            reason: None,
        },
        Err(error) => Report::invalid_id(&error),
    }
}

/// A JSON document fetched from `url`, or why not.
enum Fetched {
    Json(Value),
    NotFound,
    Failed(String),
}

async fn fetch_json<F, Fut>(get: &F, url: &str) -> Fetched
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Reply, String>>,
{
    match get(url.to_string()).await {
        Err(reason) => Fetched::Failed(reason),
        Ok(reply) if reply.status == 200 => match serde_json::from_str(&reply.body) {
            Ok(value) => Fetched::Json(value),
            Err(_) => Fetched::Failed(format!("HTTP 200, not JSON ({url})")),
        },
        Ok(reply) if reply.status == 404 => Fetched::NotFound,
        Ok(reply) => Fetched::Failed(format!("HTTP {}", reply.status)),
    }
}

/// An issued ID: its credential is fetched from `credential_url` (this page's issuer), then
/// checked as [`check_credential`] does.
pub async fn check_issued_id<F, Fut>(credential_url: &str, get: F) -> Report
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Reply, String>>,
{
    match fetch_json(&get, credential_url).await {
        Fetched::Json(credential) => check_credential(&credential, get).await,
        Fetched::NotFound => Report::failed(Verdict::UnknownId, Msg::new("verify-reason-unknown-id")),
        Fetched::Failed(reason) => Report::failed(
            Verdict::Unreachable,
            Msg::new("verify-reason-unreachable").arg("reason", reason),
        ),
    }
}

/// The issuer's DID as the credential names it (`issuer.id`, or `issuer` as a string).
pub fn issuer_did(credential: &Value) -> Option<&str> {
    let issuer = credential.get("issuer")?;
    issuer.as_str().or_else(|| issuer.get("id").and_then(Value::as_str))
}

fn verdict_of_error(error: &VerifyError) -> Verdict {
    match error {
        VerifyError::Tampered => Verdict::Tampered,
        VerifyError::UnknownIssuer { .. } | VerifyError::UnknownKey { .. } => Verdict::UnknownIssuer,
        VerifyError::Malformed { .. }
        | VerifyError::Unsigned
        | VerifyError::UnsupportedProof(_)
        | VerifyError::MalformedProof(_)
        | VerifyError::StatusListMismatch { .. }
        | VerifyError::StatusListInvalid(_)
        | VerifyError::StatusIndexOutOfRange { .. } => Verdict::Invalid,
    }
}

/// A credential (fetched by ID, or read from a file): its issuer's DID document and status list
/// are fetched online, and every check of [`verify_credential`] runs here.
pub async fn check_credential<F, Fut>(credential: &Value, get: F) -> Report
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Reply, String>>,
{
    let Some(did) = issuer_did(credential) else {
        return Report::failed(
            Verdict::Invalid,
            VerifyError::Malformed { field: "issuer.id" }.message(),
        );
    };
    let unknown_issuer = |reason: String| {
        Report::failed(
            Verdict::UnknownIssuer,
            Msg::new("verify-reason-did").arg("did", did).arg("reason", reason),
        )
    };
    let url = match did_document_url(did) {
        Ok(url) => url,
        Err(error) => return unknown_issuer(error.to_string()),
    };
    let document: DidDocument = match fetch_json(&get, &url).await {
        Fetched::Json(value) => match serde_json::from_value(value) {
            Ok(document) => document,
            Err(error) => return unknown_issuer(format!("{url}: {error}")),
        },
        Fetched::NotFound => return unknown_issuer(format!("{url}: HTTP 404")),
        Fetched::Failed(reason) => return unknown_issuer(format!("{url}: {reason}")),
    };
    // The signature first, without the status: a tampered credential is tampered whether or not
    // its status list can be reached.
    let signed = match verify_credential(credential, &document, None) {
        Ok(verification) => verification,
        Err(error) => return Report::failed(verdict_of_error(&error), error.message()),
    };
    let list_url = signed.summary.status.list_url.clone();
    let unchecked = |reason: String| Report {
        verdict: Verdict::Unreachable,
        checked: Some(Checked {
            summary: signed.summary.clone(),
            key: signed.verification_method.clone(),
            status: Status::NotChecked,
        }),
        integrity_only: None,
        reason: Some(Msg::new("verify-reason-status-unreachable").arg("reason", reason)),
    };
    let list = match fetch_json(&get, &list_url).await {
        Fetched::Json(list) => list,
        Fetched::NotFound => return unchecked(format!("{list_url}: HTTP 404")),
        Fetched::Failed(reason) => return unchecked(format!("{list_url}: {reason}")),
    };
    match verify_credential(credential, &document, Some(&list)) {
        Ok(verification) => Report {
            verdict: match verification.status {
                Status::Revoked => Verdict::Revoked,
                Status::Active | Status::NotChecked => Verdict::Valid,
            },
            reason: (verification.status == Status::Revoked).then(|| Msg::new("verify-reason-revoked")),
            checked: Some(Checked {
                summary: verification.summary,
                key: verification.verification_method,
                status: verification.status,
            }),
            integrity_only: None,
        },
        Err(error) => Report {
            verdict: verdict_of_error(&error),
            checked: None,
            integrity_only: None,
            reason: Some(error.message()),
        },
    }
}

/// The credential in a file: a PNG with one baked in, or the JSON itself; else why not.
pub fn credential_from_file(bytes: &[u8]) -> Result<Value, Msg> {
    const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    let text = if bytes.starts_with(PNG_SIGNATURE) {
        match baked_png::extract(bytes) {
            Ok(Some(text)) => text,
            Ok(None) => return Err(Msg::new("verify-file-not-baked")),
            Err(error) => return Err(Msg::new("verify-file-unreadable").arg("reason", error)),
        }
    } else {
        String::from_utf8(bytes.to_vec()).map_err(|_| Msg::new("verify-file-not-credential"))?
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(value) if value.is_object() => Ok(value),
        _ => Err(Msg::new("verify-file-not-credential")),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    use ed25519_dalek::SigningKey;
    use serde_json::json;

    use super::*;
    use gradlab_credential::open_badge::{test_support::input, unsigned_credential};
    use gradlab_credential::status_list::{unsigned_status_list_credential, Bitstring};
    use gradlab_credential::{multikey, proof};
    use gradlab_i18n::{Language, Localizer};

    const DID: &str = "did:web:lab.example.org";
    const DID_URL: &str = "https://lab.example.org/.well-known/did.json";
    const CREDENTIAL_URL: &str = "https://lab.example.org/api/credentials/X";
    const NOW: &str = "2026-11-30T23:30:00+01:00";
    const TODAY: CivilDate = CivilDate {
        year: 2026,
        month: 12,
        day: 2,
    };

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[42; 32])
    }

    fn method() -> String {
        format!("{DID}#{}", multikey::key_id(&key().verifying_key()))
    }

    fn credential() -> Value {
        proof::sign(
            unsigned_credential(&input(Language::English)).unwrap(),
            &key(),
            &method(),
            NOW,
        )
        .unwrap()
    }

    fn list_url(credential: &Value) -> String {
        CredentialSummary::from_json(credential).unwrap().status.list_url
    }

    fn status_list(credential: &Value, revoked: bool) -> Value {
        let summary = CredentialSummary::from_json(credential).unwrap();
        let mut bits = Bitstring::default();
        bits.set(summary.status.index, revoked).unwrap();
        let unsigned = unsigned_status_list_credential(&summary.status.list_url, DID, NOW, &bits).unwrap();
        proof::sign(unsigned, &key(), &method(), NOW).unwrap()
    }

    /// Replies by URL; a URL not in the table is a network error. Records what was asked.
    struct Web {
        replies: BTreeMap<String, Result<Reply, String>>,
        asked: RefCell<Vec<String>>,
    }

    impl Web {
        fn new() -> Self {
            Self {
                replies: BTreeMap::new(),
                asked: RefCell::new(Vec::new()),
            }
        }

        fn serve(mut self, url: &str, status: u16, body: &Value) -> Self {
            self.replies.insert(
                url.to_string(),
                Ok(Reply {
                    status,
                    body: body.to_string(),
                    retry_after_secs: None,
                }),
            );
            self
        }

        /// An issuer that is up, holding `credential`.
        fn issuer(credential: &Value, revoked: bool) -> Self {
            Self::new()
                .serve(CREDENTIAL_URL, 200, credential)
                .serve(DID_URL, 200, &json!(DidDocument::new(DID, &[key().verifying_key()])))
                .serve(&list_url(credential), 200, &status_list(credential, revoked))
        }

        fn get(&self) -> impl Fn(String) -> std::future::Ready<Result<Reply, String>> + '_ {
            move |url: String| {
                self.asked.borrow_mut().push(url.clone());
                std::future::ready(
                    self.replies
                        .get(&url)
                        .cloned()
                        .unwrap_or_else(|| Err("TypeError: Failed to fetch".into())),
                )
            }
        }

        fn check_id(&self) -> Report {
            pollster::block_on(check_issued_id(CREDENTIAL_URL, self.get()))
        }
    }

    #[test]
    fn a_good_credential_is_valid_and_says_what_was_checked() {
        let credential = credential();
        let web = Web::issuer(&credential, false);
        let report = web.check_id();
        assert_eq!(report.verdict, Verdict::Valid, "{report:?}");
        assert!(report.verdict.is_valid() && report.reason.is_none());
        let checked = report.checked.unwrap();
        assert_eq!(checked.key, method());
        assert_eq!(checked.status, Status::Active);
        assert_eq!(checked.summary.issuer_did, DID);
        assert_eq!(checked.summary.subject_name, "Ada Lovelace");
        assert_eq!(
            *web.asked.borrow(),
            vec![CREDENTIAL_URL.to_string(), DID_URL.to_string(), list_url(&credential)]
        );
    }

    #[test]
    fn revoked_tampered_and_unknown_are_told_apart() {
        let credential = credential();
        let revoked = Web::issuer(&credential, true).check_id();
        assert_eq!(revoked.verdict, Verdict::Revoked);
        assert!(!revoked.verdict.is_valid());
        assert_eq!(revoked.checked.unwrap().status, Status::Revoked);

        let mut raised = credential.clone();
        raised["credentialSubject"]["result"][0]["value"] = json!("100");
        let tampered = Web::issuer(&raised, false).check_id();
        assert_eq!(tampered.verdict, Verdict::Tampered, "{tampered:?}");
        assert!(tampered.checked.is_none());

        let unknown_id = Web::new()
            .serve(CREDENTIAL_URL, 404, &json!({"code": "not-found"}))
            .check_id();
        assert_eq!(unknown_id.verdict, Verdict::UnknownId);

        let down = Web::new().check_id();
        assert_eq!(down.verdict, Verdict::Unreachable);
        assert_eq!(
            down.reason.unwrap().args,
            vec![("reason", "TypeError: Failed to fetch".to_string())]
        );
        let failing = Web::new().serve(CREDENTIAL_URL, 503, &json!({})).check_id();
        assert_eq!(failing.reason.unwrap().args, vec![("reason", "HTTP 503".to_string())]);
    }

    #[test]
    fn an_issuer_that_cannot_be_resolved_or_does_not_list_the_key_is_unknown() {
        let credential = credential();
        let no_document = Web::new().serve(CREDENTIAL_URL, 200, &credential).check_id();
        assert_eq!(no_document.verdict, Verdict::UnknownIssuer);
        let other_key = SigningKey::from_bytes(&[7; 32]).verifying_key();
        let rotated_away = Web::issuer(&credential, false)
            .serve(DID_URL, 200, &json!(DidDocument::new(DID, &[other_key])))
            .check_id();
        assert_eq!(rotated_away.verdict, Verdict::UnknownIssuer);
        let mut not_web = credential.clone();
        not_web["issuer"]["id"] = json!("did:key:z6Mk");
        let report = pollster::block_on(check_credential(&not_web, Web::new().get()));
        assert_eq!(report.verdict, Verdict::UnknownIssuer);
    }

    #[test]
    fn a_good_signature_without_its_status_list_is_not_called_valid() {
        let credential = credential();
        let web = Web::issuer(&credential, false).serve(&list_url(&credential), 502, &json!({}));
        let report = web.check_id();
        assert_eq!(report.verdict, Verdict::Unreachable);
        assert_eq!(report.checked.unwrap().status, Status::NotChecked);
        assert_eq!(report.reason.unwrap().id, "verify-reason-status-unreachable");
    }

    #[test]
    fn files_are_json_or_baked_png() {
        let credential = credential();
        let text = credential.to_string();
        assert_eq!(credential_from_file(text.as_bytes()).unwrap(), credential);
        let png = tiny_png();
        let baked = baked_png::bake(&png, &text).unwrap();
        assert_eq!(credential_from_file(&baked).unwrap(), credential);
        for (bytes, id) in [
            (png.as_slice(), "verify-file-not-baked"),
            (b"\x89PNG\r\n\x1a\nbroken".as_slice(), "verify-file-unreadable"),
            (b"[1, 2]".as_slice(), "verify-file-not-credential"),
            (b"\xff\xfe".as_slice(), "verify-file-not-credential"),
        ] {
            let reason = credential_from_file(bytes).unwrap_err();
            assert_eq!(reason.id, id);
            assert_eq!(file_problem(reason).verdict, Verdict::Invalid);
        }
        let from_file = pollster::block_on(check_credential(&credential, Web::issuer(&credential, false).get()));
        assert_eq!(from_file.verdict, Verdict::Valid);
    }

    fn tiny_png() -> Vec<u8> {
        let mut bytes = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut bytes, 2, 2);
            encoder.set_color(png::ColorType::Rgba);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder.write_header().unwrap();
            writer.write_image_data(&[255; 16]).unwrap();
        }
        bytes
    }

    #[test]
    fn ids_of_both_formats() {
        let cert = Certificate {
            name: "Ada Lovelace".into(),
            score_percent: 88,
            date: CivilDate {
                year: 2026,
                month: 11,
                day: 30,
            },
            quiz_version: 1,
        };
        let format_one = cert.id().unwrap();
        assert_eq!(classify(&format_one, TODAY), IdKind::IntegrityOnly);
        let report = check_integrity_only(&format_one, "Ada Lovelace", TODAY);
        assert_eq!(report.verdict, Verdict::IntegrityOnly);
        assert!(report.verdict.is_valid());
        assert_eq!(report.integrity_only, Some(cert));
        let wrong_name = check_integrity_only(&format_one, "Ada Byron", TODAY);
        assert_eq!(wrong_name.verdict, Verdict::Invalid);
        assert_eq!(wrong_name.reason.unwrap().id, "cert-error-name-mismatch");

        let issued = IssuedId {
            serial: 7,
            nonce: 12345,
        };
        let text = issued.encode().unwrap();
        assert_eq!(classify(&text.to_lowercase(), TODAY), IdKind::Issued(issued));
        assert_eq!(credential_path(&issued).unwrap(), format!("api/credentials/{text}"));
        assert_eq!(classify("  ", TODAY), IdKind::Empty);
        assert!(matches!(classify("ABC", TODAY), IdKind::Invalid(_)));
    }

    #[test]
    fn every_verdict_and_reason_has_a_message_in_every_language() {
        let verdicts = [
            Verdict::Valid,
            Verdict::Revoked,
            Verdict::Tampered,
            Verdict::UnknownIssuer,
            Verdict::UnknownId,
            Verdict::Unreachable,
            Verdict::IntegrityOnly,
            Verdict::Invalid,
        ];
        let tags: std::collections::BTreeSet<&str> = verdicts.iter().map(|v| v.tag()).collect();
        assert_eq!(tags.len(), verdicts.len());
        for language in Language::ALL {
            let localizer = Localizer::new(language).unwrap();
            for verdict in verdicts {
                assert!(
                    localizer.has(&verdict.title().id),
                    "{:?} in {}",
                    verdict,
                    language.tag()
                );
            }
        }
    }
}
