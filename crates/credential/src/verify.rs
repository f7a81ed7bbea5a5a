//! Every check a verifier makes on one of our credentials, pure: the caller fetches the issuer's
//! DID document (and, to check revocation, the status list credential) and passes them in, so the
//! browser, the CLI and the tests run exactly the same checks.
//!
//! Order: the credential must read as an Open Badge; its issuer must be the DID document's
//! subject and its key one of the document's assertion keys; the proof must verify; then, when a
//! status list is given, it must be the issuer's own signed list named by the credential, and its
//! bit decides revoked or active.

use serde_json::Value;
use thiserror::Error;

use super::did_web::DidDocument;
use super::open_badge::CredentialSummary;
use super::proof::{self, ProofError};
use super::status_list::{Bitstring, StatusListError, LIST_CREDENTIAL_TYPE, STATUS_PURPOSE};

/// Whether the issuer has revoked the credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Active,
    Revoked,
    /// No status list was given, so revocation was not checked.
    NotChecked,
}

/// A credential that passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    pub summary: CredentialSummary,
    /// The key that signed it (a DID URL in the issuer's document).
    pub verification_method: String,
    pub status: Status,
}

/// What is wrong with a status list credential (kept as the source of
/// [`VerifyError::StatusListInvalid`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StatusListProblem {
    #[error("its {0} is missing or malformed")]
    Malformed(&'static str),
    #[error("it is issued by {0}, not by the credential's issuer")]
    OtherIssuer(String),
    #[error("it is signed with {0}, which is not an assertion key of the issuer")]
    UnknownKey(String),
    #[error("its proof: {0}")]
    Proof(ProofError),
    #[error("its list: {0}")]
    List(StatusListError),
}

/// Why a credential is not valid. Each reason has its own message for the person checking.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    #[error("this is not a readable Open Badge credential: its {field} is missing or malformed")]
    Malformed { field: &'static str },
    #[error("the credential names the issuer {issuer}, but the DID document given is that of {did}")]
    UnknownIssuer { issuer: String, did: String },
    #[error("the credential was signed with {verification_method}, which its issuer does not list as a signing key")]
    UnknownKey { verification_method: String },
    #[error("the credential has no signature")]
    Unsigned,
    #[error("the credential's signature is not an eddsa-jcs-2022 Data Integrity proof of an assertion")]
    UnsupportedProof(#[source] ProofError),
    #[error("the credential's signature is malformed")]
    MalformedProof(#[source] ProofError),
    #[error("the signature does not match the content: the credential was changed after it was signed")]
    Tampered,
    #[error("the status list given is {url}, but the credential's status is kept in {expected}")]
    StatusListMismatch { url: String, expected: String },
    #[error("the status list is not a valid revocation list signed by the credential's issuer")]
    StatusListInvalid(#[source] StatusListProblem),
    #[error("the credential's status index {index} is outside its status list")]
    StatusIndexOutOfRange { index: u64 },
}

impl VerifyError {
    /// The message the verification page shows (see `assets/i18n`).
    pub fn message(&self) -> gradlab_i18n::Msg {
        use gradlab_i18n::Msg;
        match self {
            VerifyError::Malformed { field } => Msg::new("verify-error-malformed").arg("field", field),
            VerifyError::UnknownIssuer { issuer, did } => Msg::new("verify-error-unknown-issuer")
                .arg("issuer", issuer)
                .arg("did", did),
            VerifyError::UnknownKey { verification_method } => {
                Msg::new("verify-error-unknown-key").arg("key", verification_method)
            }
            VerifyError::Unsigned => Msg::new("verify-error-unsigned"),
            VerifyError::UnsupportedProof(_) => Msg::new("verify-error-unsupported-proof"),
            VerifyError::MalformedProof(_) => Msg::new("verify-error-malformed-proof"),
            VerifyError::Tampered => Msg::new("verify-error-tampered"),
            VerifyError::StatusListMismatch { url, expected } => Msg::new("verify-error-status-mismatch")
                .arg("url", url)
                .arg("expected", expected),
            VerifyError::StatusListInvalid(_) => Msg::new("verify-error-status-invalid"),
            VerifyError::StatusIndexOutOfRange { index } => Msg::new("verify-error-status-index").arg("index", index),
        }
    }
}

impl From<ProofError> for VerifyError {
    fn from(error: ProofError) -> Self {
        match error {
            ProofError::NoProof => VerifyError::Unsigned,
            ProofError::SignatureMismatch | ProofError::ContextMismatch => VerifyError::Tampered,
            ProofError::NotSingleProof
            | ProofError::WrongType(_)
            | ProofError::WrongCryptosuite(_)
            | ProofError::WrongPurpose(_) => VerifyError::UnsupportedProof(error),
            ProofError::NotAnObject
            | ProofError::MissingField(_)
            | ProofError::BadCreated(_)
            | ProofError::MalformedProofValue
            | ProofError::Canonicalization(_) => VerifyError::MalformedProof(error),
        }
    }
}

/// Why no key was found for a document's proof.
enum KeyProblem<'a> {
    /// The proof is missing or not one we can read.
    Proof(ProofError),
    /// The proof names this verification method, which the DID document does not list for
    /// assertions.
    NotListed(&'a str),
}

/// The signing key of `document`'s proof, if the DID document lists it for assertions.
fn assertion_key_of<'a>(
    document: &'a Value,
    did_document: &DidDocument,
) -> Result<(&'a str, ed25519_dalek::VerifyingKey), KeyProblem<'a>> {
    let method = proof::verification_method(document).map_err(KeyProblem::Proof)?;
    let in_document = method.starts_with(&format!("{}#", did_document.id));
    match did_document.find_assertion_key(method) {
        Some(key) if in_document => Ok((method, key)),
        _ => Err(KeyProblem::NotListed(method)),
    }
}

/// Checks `credential` against its issuer's `did_document` and, when given, the issuer's
/// current `status_list_credential`; returns what it states and whether it is revoked.
pub fn verify_credential(
    credential: &Value,
    did_document: &DidDocument,
    status_list_credential: Option<&Value>,
) -> Result<Verification, VerifyError> {
    let summary = CredentialSummary::from_json(credential).map_err(|e| VerifyError::Malformed { field: e.field })?;
    if summary.issuer_did != did_document.id {
        return Err(VerifyError::UnknownIssuer {
            issuer: summary.issuer_did,
            did: did_document.id.clone(),
        });
    }
    let (verification_method, key) = assertion_key_of(credential, did_document).map_err(|e| match e {
        KeyProblem::Proof(proof_error) => VerifyError::from(proof_error),
        KeyProblem::NotListed(method) => VerifyError::UnknownKey {
            verification_method: method.to_string(),
        },
    })?;
    proof::verify(credential, &key)?;
    let verification_method = verification_method.to_string();
    let status = match status_list_credential {
        None => Status::NotChecked,
        Some(list) => {
            let bits = check_status_list(list, &summary.status.list_url, did_document)?;
            match bits.get(summary.status.index) {
                Ok(true) => Status::Revoked,
                Ok(false) => Status::Active,
                Err(_) => {
                    return Err(VerifyError::StatusIndexOutOfRange {
                        index: summary.status.index,
                    })
                }
            }
        }
    };
    Ok(Verification {
        summary,
        verification_method,
        status,
    })
}

/// The bits of a status list credential, after checking that it is the list `expected_url`,
/// issued and signed by the DID document's subject, for revocation.
fn check_status_list(list: &Value, expected_url: &str, did_document: &DidDocument) -> Result<Bitstring, VerifyError> {
    let invalid = VerifyError::StatusListInvalid;
    let url = list.get("id").and_then(Value::as_str).unwrap_or_default();
    if url != expected_url {
        return Err(VerifyError::StatusListMismatch {
            url: url.to_string(),
            expected: expected_url.to_string(),
        });
    }
    let is_list = list
        .get("type")
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t == LIST_CREDENTIAL_TYPE));
    if !is_list {
        return Err(invalid(StatusListProblem::Malformed("type")));
    }
    let issuer = list
        .get("issuer")
        .and_then(|issuer| issuer.as_str().or_else(|| issuer.get("id").and_then(Value::as_str)))
        .ok_or(invalid(StatusListProblem::Malformed("issuer")))?;
    if issuer != did_document.id {
        return Err(invalid(StatusListProblem::OtherIssuer(issuer.to_string())));
    }
    let (_, key) = assertion_key_of(list, did_document).map_err(|e| {
        invalid(match e {
            KeyProblem::Proof(proof_error) => StatusListProblem::Proof(proof_error),
            KeyProblem::NotListed(method) => StatusListProblem::UnknownKey(method.to_string()),
        })
    })?;
    proof::verify(list, &key).map_err(|e| invalid(StatusListProblem::Proof(e)))?;
    let subject = list
        .get("credentialSubject")
        .ok_or(invalid(StatusListProblem::Malformed("credentialSubject")))?;
    if subject.get("statusPurpose").and_then(Value::as_str) != Some(STATUS_PURPOSE) {
        return Err(invalid(StatusListProblem::Malformed("credentialSubject.statusPurpose")));
    }
    let encoded = subject
        .get("encodedList")
        .and_then(Value::as_str)
        .ok_or(invalid(StatusListProblem::Malformed("credentialSubject.encodedList")))?;
    Bitstring::decode(encoded).map_err(|e| invalid(StatusListProblem::List(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multikey;
    use crate::open_badge::{test_support::input, unsigned_credential};
    use crate::status_list::unsigned_status_list_credential;
    use ed25519_dalek::SigningKey;
    use gradlab_i18n::Language;
    use serde_json::json;

    const DID: &str = "did:web:lab.example.org";
    const NOW: &str = "2026-11-30T23:30:00+01:00";

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[42; 32])
    }

    fn method(key: &SigningKey) -> String {
        format!("{DID}#{}", multikey::key_id(&key.verifying_key()))
    }

    fn document() -> DidDocument {
        DidDocument::new(DID, &[key().verifying_key()])
    }

    fn signed() -> Value {
        let unsigned = unsigned_credential(&input(Language::English)).unwrap();
        proof::sign(unsigned, &key(), &method(&key()), NOW).unwrap()
    }

    fn list(revoked: &[u64]) -> Value {
        let mut bits = Bitstring::default();
        for index in revoked {
            bits.set(*index, true).unwrap();
        }
        let unsigned =
            unsigned_status_list_credential("https://lab.example.org/api/status/1", DID, NOW, &bits).unwrap();
        proof::sign(unsigned, &key(), &method(&key()), NOW).unwrap()
    }

    #[test]
    fn a_good_credential_verifies_with_and_without_its_status() {
        let credential = signed();
        let verification = verify_credential(&credential, &document(), None).unwrap();
        assert_eq!(verification.status, Status::NotChecked);
        assert_eq!(verification.verification_method, method(&key()));
        assert_eq!(verification.summary.subject_name, "Ada Lovelace");
        assert_eq!(
            verify_credential(&credential, &document(), Some(&list(&[40, 42])))
                .unwrap()
                .status,
            Status::Active
        );
        assert_eq!(
            verify_credential(&credential, &document(), Some(&list(&[41])))
                .unwrap()
                .status,
            Status::Revoked
        );
    }

    #[test]
    fn each_failure_has_its_reason() {
        let credential = signed();
        let document = document();
        let fails = |credential: &Value, document: &DidDocument, list: Option<&Value>| {
            verify_credential(credential, document, list).unwrap_err()
        };

        let mut malformed = credential.clone();
        malformed["credentialSubject"]["result"][0]["value"] = json!("x");
        assert_eq!(
            fails(&malformed, &document, None),
            VerifyError::Malformed {
                field: "credentialSubject.result"
            }
        );

        let other_document = DidDocument::new("did:web:other.example", &[key().verifying_key()]);
        assert!(matches!(
            fails(&credential, &other_document, None),
            VerifyError::UnknownIssuer { .. }
        ));

        let stranger = SigningKey::from_bytes(&[9; 32]);
        let unsigned = unsigned_credential(&input(Language::English)).unwrap();
        let by_stranger = proof::sign(unsigned.clone(), &stranger, &method(&stranger), NOW).unwrap();
        assert_eq!(
            fails(&by_stranger, &document, None),
            VerifyError::UnknownKey {
                verification_method: method(&stranger)
            }
        );
        // Our key, named under another DID: still not a key of this issuer.
        let elsewhere = format!("did:web:other.example#{}", multikey::key_id(&key().verifying_key()));
        let misnamed = proof::sign(unsigned.clone(), &key(), &elsewhere, NOW).unwrap();
        assert!(matches!(
            fails(&misnamed, &document, None),
            VerifyError::UnknownKey { .. }
        ));

        assert_eq!(fails(&unsigned, &document, None), VerifyError::Unsigned);
        let mut rdfc = credential.clone();
        rdfc["proof"]["cryptosuite"] = json!("eddsa-rdfc-2022");
        assert!(matches!(
            fails(&rdfc, &document, None),
            VerifyError::UnsupportedProof(_)
        ));
        let mut broken = credential.clone();
        broken["proof"]["proofValue"] = json!("not base58");
        assert!(matches!(
            fails(&broken, &document, None),
            VerifyError::MalformedProof(_)
        ));

        let mut raised = credential.clone();
        raised["credentialSubject"]["result"][0]["value"] = json!("100");
        assert_eq!(fails(&raised, &document, None), VerifyError::Tampered);
        let mut renamed = credential.clone();
        renamed["credentialSubject"]["identifier"][0]["identityHash"] = json!("Ada Byron");
        assert_eq!(fails(&renamed, &document, None), VerifyError::Tampered);

        // Status lists: another list, a list by someone else, a forged list, a short index.
        let mut other_list = list(&[]);
        other_list["id"] = json!("https://lab.example.org/api/status/2");
        assert!(matches!(
            fails(&credential, &document, Some(&other_list)),
            VerifyError::StatusListMismatch { .. }
        ));
        let foreign = proof::sign(
            unsigned_status_list_credential(
                "https://lab.example.org/api/status/1",
                "did:web:other.example",
                NOW,
                &Bitstring::default(),
            )
            .unwrap(),
            &key(),
            &method(&key()),
            NOW,
        )
        .unwrap();
        assert!(matches!(
            fails(&credential, &document, Some(&foreign)),
            VerifyError::StatusListInvalid(StatusListProblem::OtherIssuer(_))
        ));
        let mut forged = list(&[41]);
        forged["credentialSubject"]["encodedList"] = list(&[])["credentialSubject"]["encodedList"].clone();
        assert_eq!(
            fails(&credential, &document, Some(&forged)),
            VerifyError::StatusListInvalid(StatusListProblem::Proof(ProofError::SignatureMismatch))
        );
        let mut unsigned_list = list(&[]);
        unsigned_list.as_object_mut().unwrap().remove("proof");
        assert_eq!(
            fails(&credential, &document, Some(&unsigned_list)),
            VerifyError::StatusListInvalid(StatusListProblem::Proof(ProofError::NoProof))
        );
        let mut far = unsigned_credential(&input(Language::English)).unwrap();
        far["credentialStatus"]["statusListIndex"] = json!("131072");
        let far = proof::sign(far, &key(), &method(&key()), NOW).unwrap();
        assert_eq!(
            fails(&far, &document, Some(&list(&[]))),
            VerifyError::StatusIndexOutOfRange { index: 131_072 }
        );
    }

    #[test]
    fn every_error_has_a_message_in_every_language_that_reads_like_the_english_error() {
        use gradlab_i18n::Localizer;
        let errors = [
            VerifyError::Malformed { field: "validFrom" },
            VerifyError::UnknownIssuer {
                issuer: "did:web:a".into(),
                did: "did:web:b".into(),
            },
            VerifyError::UnknownKey {
                verification_method: "did:web:a#key-1".into(),
            },
            VerifyError::Unsigned,
            VerifyError::UnsupportedProof(ProofError::WrongType("X".into())),
            VerifyError::MalformedProof(ProofError::MalformedProofValue),
            VerifyError::Tampered,
            VerifyError::StatusListMismatch {
                url: "https://a/1".into(),
                expected: "https://a/2".into(),
            },
            VerifyError::StatusListInvalid(StatusListProblem::Malformed("type")),
            VerifyError::StatusIndexOutOfRange { index: 7 },
        ];
        let en = Localizer::english();
        let mut ids = std::collections::BTreeSet::new();
        for error in &errors {
            assert_eq!(
                en.msg(&error.message()),
                error.to_string(),
                "English message of {error:?}"
            );
            ids.insert(error.message().id);
        }
        assert_eq!(ids.len(), errors.len(), "every reason has its own message");
        for language in Language::ALL {
            let localizer = Localizer::new(language).unwrap();
            for error in &errors {
                assert!(localizer.has(&error.message().id), "{error:?} in {}", language.tag());
            }
        }
    }
}
