//! The Data Integrity cryptosuite `eddsa-jcs-2022` (W3C "Data Integrity EdDSA Cryptosuites
//! v1.0", <https://www.w3.org/TR/vc-di-eddsa/#eddsa-jcs-2022>), for one proof per document.
//!
//! Signing: the proof configuration (the proof options plus the document's `@context`) and the
//! document are each canonicalized with JCS (RFC 8785) and hashed with SHA-256; the signature is
//! Ed25519 over `hash(proof configuration) || hash(document)`, written as `proofValue` =
//! multibase base58btc. JCS is chosen over RDF canonicalization because it needs no JSON-LD
//! context documents: a verifier in the browser checks a credential without fetching anything but
//! the issuer's keys.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::CredentialError;

pub const PROOF_TYPE: &str = "DataIntegrityProof";
pub const CRYPTOSUITE: &str = "eddsa-jcs-2022";
/// Credentials are signed for assertions; the DID document lists the keys allowed to make them.
pub const PROOF_PURPOSE: &str = "assertionMethod";

/// Why a proof does not verify. Each variant is one reason, so a verifier can say which.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProofError {
    #[error("the document is not a JSON object")]
    NotAnObject,
    #[error("the document has no proof")]
    NoProof,
    #[error("the proof is not a single JSON object (proof sets and chains are not supported)")]
    NotSingleProof,
    #[error("the proof has no \"{0}\" text")]
    MissingField(&'static str),
    #[error("the proof type is \"{0}\", not DataIntegrityProof")]
    WrongType(String),
    #[error("the cryptosuite is \"{0}\", not eddsa-jcs-2022")]
    WrongCryptosuite(String),
    #[error("the proof purpose is \"{0}\", not assertionMethod")]
    WrongPurpose(String),
    #[error("the proof's creation time \"{0}\" is not an RFC 3339 date and time")]
    BadCreated(String),
    #[error("the proof's @context is not the start of the document's @context")]
    ContextMismatch,
    #[error("the proofValue is not a base58btc multibase Ed25519 signature")]
    MalformedProofValue,
    #[error("the document cannot be canonicalized (JCS): {0}")]
    Canonicalization(String),
    #[error("the signature does not match the content")]
    SignatureMismatch,
}

/// RFC 8785 canonical JSON, the form that is hashed.
pub fn canonicalize(value: &Value) -> Result<String, serde_json::Error> {
    serde_json_canonicalizer::to_string(value)
}

/// `hashData` of the specification: SHA-256 of the canonical proof configuration, then SHA-256
/// of the canonical document.
pub fn hash_data(canonical_proof_config: &str, canonical_document: &str) -> [u8; 64] {
    let mut hash = [0u8; 64];
    hash[..32].copy_from_slice(&Sha256::digest(canonical_proof_config.as_bytes()));
    hash[32..].copy_from_slice(&Sha256::digest(canonical_document.as_bytes()));
    hash
}

/// The proof options of a new proof, with the document's `@context` copied in as the
/// specification asks (so that the proof stays valid inside a proof set or chain).
pub fn proof_configuration(
    unsecured: &Value,
    verification_method: &str,
    created_rfc3339: &str,
) -> Result<Map<String, Value>, CredentialError> {
    let document = unsecured.as_object().ok_or(CredentialError::NotAnObject)?;
    if !super::open_badge::is_rfc3339(created_rfc3339) {
        return Err(CredentialError::InvalidTime(created_rfc3339.to_string()));
    }
    let has_fragment = verification_method
        .split_once('#')
        .is_some_and(|(base, fragment)| base.starts_with("did:") && !fragment.is_empty());
    if !has_fragment {
        return Err(CredentialError::InvalidVerificationMethod(
            verification_method.to_string(),
        ));
    }
    let mut proof = Map::new();
    proof.insert("type".into(), PROOF_TYPE.into());
    proof.insert("cryptosuite".into(), CRYPTOSUITE.into());
    proof.insert("created".into(), created_rfc3339.into());
    proof.insert("verificationMethod".into(), verification_method.into());
    proof.insert("proofPurpose".into(), PROOF_PURPOSE.into());
    if let Some(context) = document.get("@context") {
        proof.insert("@context".into(), context.clone());
    }
    Ok(proof)
}

/// Adds an `eddsa-jcs-2022` proof to `unsecured` (a JSON object without a proof), signed by
/// `key` and naming `verification_method` (the DID URL of the key's public half).
pub fn sign(
    unsecured: Value,
    key: &SigningKey,
    verification_method: &str,
    created_rfc3339: &str,
) -> Result<Value, CredentialError> {
    if unsecured.get("proof").is_some() {
        return Err(CredentialError::AlreadySigned);
    }
    let mut proof = proof_configuration(&unsecured, verification_method, created_rfc3339)?;
    let canonical = |value: &Value| canonicalize(value).map_err(|e| CredentialError::Canonicalization(e.to_string()));
    let proof_config = canonical(&Value::Object(proof.clone()))?;
    let document = canonical(&unsecured)?;
    let signature = key.sign(&hash_data(&proof_config, &document));
    proof.insert(
        "proofValue".into(),
        format!("z{}", bs58::encode(signature.to_bytes()).into_string()).into(),
    );
    let Value::Object(mut secured) = unsecured else {
        return Err(CredentialError::NotAnObject);
    };
    secured.insert("proof".into(), Value::Object(proof));
    Ok(Value::Object(secured))
}

fn text_field<'a>(proof: &'a Map<String, Value>, name: &'static str) -> Result<&'a str, ProofError> {
    proof
        .get(name)
        .and_then(Value::as_str)
        .ok_or(ProofError::MissingField(name))
}

/// The proof of a secured document, checked to be one `eddsa-jcs-2022` assertion proof (not yet
/// its signature).
fn single_proof(secured: &Value) -> Result<&Map<String, Value>, ProofError> {
    let document = secured.as_object().ok_or(ProofError::NotAnObject)?;
    let proof = match document.get("proof") {
        None => return Err(ProofError::NoProof),
        Some(Value::Object(proof)) => proof,
        Some(_) => return Err(ProofError::NotSingleProof),
    };
    let proof_type = text_field(proof, "type")?;
    if proof_type != PROOF_TYPE {
        return Err(ProofError::WrongType(proof_type.to_string()));
    }
    let cryptosuite = text_field(proof, "cryptosuite")?;
    if cryptosuite != CRYPTOSUITE {
        return Err(ProofError::WrongCryptosuite(cryptosuite.to_string()));
    }
    let purpose = text_field(proof, "proofPurpose")?;
    if purpose != PROOF_PURPOSE {
        return Err(ProofError::WrongPurpose(purpose.to_string()));
    }
    text_field(proof, "verificationMethod")?;
    // `created` is optional in Data Integrity, but must be a date and time when present.
    if let Some(created) = proof.get("created") {
        let created = created.as_str().ok_or(ProofError::MissingField("created"))?;
        if !super::open_badge::is_rfc3339(created) {
            return Err(ProofError::BadCreated(created.to_string()));
        }
    }
    Ok(proof)
}

/// The `verificationMethod` of a document's proof: which key to fetch before [`verify`].
pub fn verification_method(secured: &Value) -> Result<&str, ProofError> {
    text_field(single_proof(secured)?, "verificationMethod")
}

/// A JSON-LD `@context` as a list (one string is a list of one).
fn context_entries(context: &Value) -> Vec<&Value> {
    match context {
        Value::Array(entries) => entries.iter().collect(),
        other => vec![other],
    }
}

/// Verifies the document's `eddsa-jcs-2022` proof with `key`, following the specification's
/// "Verify Proof" algorithm; Ok means the document is exactly what the key's holder signed.
pub fn verify(secured: &Value, key: &VerifyingKey) -> Result<(), ProofError> {
    let proof = single_proof(secured)?;
    let proof_value = text_field(proof, "proofValue")?;
    let signature_bytes = proof_value
        .strip_prefix('z')
        .and_then(|encoded| bs58::decode(encoded).into_vec().ok())
        .ok_or(ProofError::MalformedProofValue)?;
    let signature = Signature::from_slice(&signature_bytes).map_err(|_| ProofError::MalformedProofValue)?;

    let mut unsecured = secured.as_object().cloned().ok_or(ProofError::NotAnObject)?;
    unsecured.remove("proof");
    let mut proof_options = proof.clone();
    proof_options.remove("proofValue");
    if let Some(proof_context) = proof_options.get("@context") {
        let proof_entries = context_entries(proof_context);
        let document_entries = unsecured.get("@context").map(context_entries).unwrap_or_default();
        if !document_entries.starts_with(&proof_entries) {
            return Err(ProofError::ContextMismatch);
        }
        unsecured.insert("@context".into(), proof_context.clone());
    }

    let canonical = |value: &Value| canonicalize(value).map_err(|e| ProofError::Canonicalization(e.to_string()));
    let proof_config = canonical(&Value::Object(proof_options))?;
    let document = canonical(&Value::Object(unsecured))?;
    key.verify_strict(&hash_data(&proof_config, &document), &signature)
        .map_err(|_| ProofError::SignatureMismatch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[7; 32])
    }

    const METHOD: &str = "did:web:example.com#key-1";

    fn document() -> Value {
        json!({
            "@context": ["https://www.w3.org/ns/credentials/v2"],
            "type": ["VerifiableCredential"],
            "name": "Ünïcode and numbers",
            "credentialSubject": {"score": 87, "list": [3, 1, 2]},
        })
    }

    #[test]
    fn a_signed_document_verifies_and_keeps_its_content() {
        let secured = sign(document(), &key(), METHOD, "2026-01-02T03:04:05Z").unwrap();
        verify(&secured, &key().verifying_key()).unwrap();
        assert_eq!(verification_method(&secured), Ok(METHOD));
        let mut without = secured.clone();
        without.as_object_mut().unwrap().remove("proof");
        assert_eq!(without, document());
        assert_eq!(secured["proof"]["@context"], document()["@context"]);
        // Ed25519 is deterministic: signing again gives the same proof.
        assert_eq!(
            sign(document(), &key(), METHOD, "2026-01-02T03:04:05Z").unwrap(),
            secured
        );
    }

    #[test]
    fn every_reason_is_told_apart() {
        let secured = sign(document(), &key(), METHOD, "2026-01-02T03:04:05Z").unwrap();
        let public = key().verifying_key();
        let with = |path: &str, value: Value| {
            let mut changed = secured.clone();
            changed["proof"][path] = value;
            verify(&changed, &public)
        };
        assert_eq!(verify(&json!([1]), &public), Err(ProofError::NotAnObject));
        assert_eq!(verify(&document(), &public), Err(ProofError::NoProof));
        let mut set = secured.clone();
        set["proof"] = json!([secured["proof"].clone()]);
        assert_eq!(verify(&set, &public), Err(ProofError::NotSingleProof));
        assert_eq!(
            with("type", json!("Ed25519Signature2020")),
            Err(ProofError::WrongType("Ed25519Signature2020".into()))
        );
        assert_eq!(
            with("cryptosuite", json!("eddsa-rdfc-2022")),
            Err(ProofError::WrongCryptosuite("eddsa-rdfc-2022".into()))
        );
        assert_eq!(
            with("proofPurpose", json!("authentication")),
            Err(ProofError::WrongPurpose("authentication".into()))
        );
        assert_eq!(
            with("proofValue", json!(12)),
            Err(ProofError::MissingField("proofValue"))
        );
        assert_eq!(
            with("created", json!("yesterday")),
            Err(ProofError::BadCreated("yesterday".into()))
        );
        assert_eq!(with("proofValue", json!("u123")), Err(ProofError::MalformedProofValue));
        assert_eq!(with("proofValue", json!("z0OIl")), Err(ProofError::MalformedProofValue));
        assert_eq!(
            with("proofValue", json!("z2HnFSSPPB")),
            Err(ProofError::MalformedProofValue)
        );
        assert_eq!(
            with("created", json!("2026-01-02T03:04:06Z")),
            Err(ProofError::SignatureMismatch)
        );
        assert_eq!(
            with("@context", json!(["https://example.org/other"])),
            Err(ProofError::ContextMismatch)
        );
        let mut content = secured.clone();
        content["credentialSubject"]["score"] = json!(100);
        assert_eq!(verify(&content, &public), Err(ProofError::SignatureMismatch));
        let other = SigningKey::from_bytes(&[8; 32]).verifying_key();
        assert_eq!(verify(&secured, &other), Err(ProofError::SignatureMismatch));
    }

    #[test]
    fn key_order_and_white_space_do_not_matter_but_values_do() {
        let secured = sign(document(), &key(), METHOD, "2026-01-02T03:04:05Z").unwrap();
        let text = serde_json::to_string_pretty(&secured).unwrap();
        let reparsed: Value = serde_json::from_str(&text).unwrap();
        verify(&reparsed, &key().verifying_key()).unwrap();
        // The same number written differently is the same JSON number for JCS.
        let rewritten = serde_json::to_string(&secured)
            .unwrap()
            .replace("\"score\":87", "\"score\":87.0");
        let reparsed: Value = serde_json::from_str(&rewritten).unwrap();
        verify(&reparsed, &key().verifying_key()).unwrap();
    }

    #[test]
    fn signing_refuses_what_it_cannot_sign_honestly() {
        assert_eq!(
            sign(json!("text"), &key(), METHOD, "2026-01-02T03:04:05Z"),
            Err(CredentialError::NotAnObject)
        );
        let secured = sign(document(), &key(), METHOD, "2026-01-02T03:04:05Z").unwrap();
        assert_eq!(
            sign(secured, &key(), METHOD, "2026-01-02T03:04:05Z"),
            Err(CredentialError::AlreadySigned)
        );
        assert_eq!(
            sign(document(), &key(), METHOD, "2026-01-02"),
            Err(CredentialError::InvalidTime("2026-01-02".into()))
        );
        for method in ["did:web:example.com", "https://example.com#key", "did:web:example.com#"] {
            assert_eq!(
                sign(document(), &key(), method, "2026-01-02T03:04:05Z"),
                Err(CredentialError::InvalidVerificationMethod(method.into()))
            );
        }
    }
}
