//! The credential layer against the specification's published eddsa-jcs-2022 test vectors
//! (`tests/vectors/eddsa-jcs-2022/`, see its README), and untrusted input of every kind fed to the
//! functions a verifier runs on it: none may panic.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

use std::path::Path;

use ed25519_dalek::{SigningKey, VerifyingKey};
use gradlab::credential::baked_png;
use gradlab::credential::did_web::DidDocument;
use gradlab::credential::multikey;
use gradlab::credential::open_badge::{unsigned_credential, CredentialInput};
use gradlab::credential::proof::{self, ProofError};
use gradlab::credential::status_list::{unsigned_status_list_credential, Bitstring, StatusEntry};
use gradlab::credential::verify::{verify_credential, Status};
use gradlab::i18n::Language;
use gradlab::quiz::bank::QuestionBank;
use gradlab::quiz::certificate::{parse_id, CivilDate};
use proptest::prelude::*;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

fn vector(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/eddsa-jcs-2022")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn vector_json(name: &str) -> Value {
    serde_json::from_str(&vector(name)).unwrap()
}

fn vector_text(name: &str) -> String {
    vector(name).trim_end().to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn vector_keys() -> (SigningKey, VerifyingKey) {
    let pair = vector_json("keyPair.json");
    let secret = multikey::parse_secret_key_multibase(pair["privateKeyMultibase"].as_str().unwrap()).unwrap();
    let public = multikey::parse_public_key_multibase(pair["publicKeyMultibase"].as_str().unwrap()).unwrap();
    assert_eq!(secret.verifying_key(), public, "the vector's key pair belongs together");
    (secret, public)
}

/// The proof options of the vector: its verification method and creation time.
fn vector_options() -> (String, String) {
    let config = vector_json("proofConfigJCS.json");
    (
        config["verificationMethod"].as_str().unwrap().to_string(),
        config["created"].as_str().unwrap().to_string(),
    )
}

#[test]
fn canonical_forms_and_hashes_match_the_specification() {
    let unsigned = vector_json("unsigned.json");
    let (method, created) = vector_options();
    let config = Value::Object(proof::proof_configuration(&unsigned, &method, &created).unwrap());
    assert_eq!(config, vector_json("proofConfigJCS.json"));

    let canonical_config = proof::canonicalize(&config).unwrap();
    let canonical_document = proof::canonicalize(&unsigned).unwrap();
    assert_eq!(canonical_config, vector_text("proofCanonJCS.txt"));
    assert_eq!(canonical_document, vector_text("canonDocJCS.txt"));
    assert_eq!(
        hex(&Sha256::digest(canonical_config.as_bytes())),
        vector_text("proofHashJCS.txt")
    );
    assert_eq!(
        hex(&Sha256::digest(canonical_document.as_bytes())),
        vector_text("docHashJCS.txt")
    );
    assert_eq!(
        hex(&proof::hash_data(&canonical_config, &canonical_document)),
        vector_text("combinedHashJCS.txt")
    );
}

#[test]
fn the_signature_and_the_signed_document_match_the_specification_byte_for_byte() {
    let (secret, _) = vector_keys();
    let (method, created) = vector_options();
    let secured = proof::sign(vector_json("unsigned.json"), &secret, &method, &created).unwrap();
    let proof_value = secured["proof"]["proofValue"].as_str().unwrap();
    assert_eq!(proof_value, vector_text("sigBTC58JCS.txt"));
    let signature = bs58::decode(&proof_value[1..]).into_vec().unwrap();
    assert_eq!(hex(&signature), vector_text("sigHexJCS.txt"));
    assert_eq!(secured, vector_json("signedJCS.json"));
}

/// Every JSON pointer to a scalar inside `value`.
fn leaf_pointers(value: &Value, prefix: String, out: &mut Vec<String>) {
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                leaf_pointers(
                    member,
                    format!("{prefix}/{}", key.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                leaf_pointers(item, format!("{prefix}/{i}"), out);
            }
        }
        _ => out.push(prefix),
    }
}

#[test]
fn the_specification_signed_document_verifies_and_any_one_change_is_caught() {
    let (_, public) = vector_keys();
    let signed = vector_json("signedJCS.json");
    proof::verify(&signed, &public).unwrap();
    assert_eq!(proof::verification_method(&signed).unwrap(), vector_options().0);

    let mut pointers = Vec::new();
    leaf_pointers(&signed, String::new(), &mut pointers);
    assert!(pointers.len() > 15, "{pointers:?}");
    for pointer in &pointers {
        let mut changed = signed.clone();
        let leaf = changed.pointer_mut(pointer).unwrap();
        *leaf = match leaf {
            Value::String(text) => Value::String(format!("{text}x")),
            _ => json!("changed"),
        };
        let result = proof::verify(&changed, &public);
        assert!(result.is_err(), "{pointer} changed and still verifies");
    }
    // A change anywhere in the content is the signature not matching, named as such.
    let mut renamed = signed.clone();
    renamed["credentialSubject"]["alumniOf"] = json!("The School of Forgeries");
    assert_eq!(proof::verify(&renamed, &public), Err(ProofError::SignatureMismatch));
    let mut added = signed.clone();
    added["credentialSubject"]["honours"] = json!(true);
    assert_eq!(proof::verify(&added, &public), Err(ProofError::SignatureMismatch));
    let mut removed = signed.clone();
    removed.as_object_mut().unwrap().remove("description");
    assert_eq!(proof::verify(&removed, &public), Err(ProofError::SignatureMismatch));
    // Another key does not verify it either.
    let stranger = SigningKey::from_bytes(&[5; 32]).verifying_key();
    assert_eq!(proof::verify(&signed, &stranger), Err(ProofError::SignatureMismatch));
}

#[test]
fn the_specification_context_rule_allows_a_longer_document_context_only() {
    let (_, public) = vector_keys();
    let signed = vector_json("signedJCS.json");
    // The proof's @context must be the start of the document's: a document whose context was
    // reordered is refused before the signature is even checked.
    let mut reordered = signed.clone();
    let context = reordered["@context"].as_array_mut().unwrap();
    context.reverse();
    assert_eq!(proof::verify(&reordered, &public), Err(ProofError::ContextMismatch));
    let mut dropped = signed.clone();
    dropped.as_object_mut().unwrap().remove("@context");
    assert_eq!(proof::verify(&dropped, &public), Err(ProofError::ContextMismatch));
    // Appending a context is allowed by the specification: the proof's own @context is what was
    // signed, and it replaces the document's for verification.
    let mut extended = signed.clone();
    extended["@context"]
        .as_array_mut()
        .unwrap()
        .push(json!("https://example.org/more/v1"));
    proof::verify(&extended, &public).unwrap();
}

// ---- our own credentials, end to end ----

const DID: &str = "did:web:lab.example.org";
const NOW: &str = "2026-12-01T09:00:00Z";

fn issuer_key() -> SigningKey {
    SigningKey::from_bytes(&[11; 32])
}

fn method() -> String {
    format!("{DID}#{}", multikey::key_id(&issuer_key().verifying_key()))
}

fn issued(index: u64) -> Value {
    let bank = QuestionBank::bundled().unwrap();
    let total = bank.questions.len();
    let unsigned = unsigned_credential(&CredentialInput {
        credential_url: "https://lab.example.org/api/credentials/2ABCD-EFGHJ-KMNPQ".into(),
        public_url: "https://lab.example.org".into(),
        issuer_did: DID.into(),
        issuer_name: "Gradient Accumulation Lab".into(),
        subject_name: "Grace Hopper".into(),
        score_percent: 100,
        first_try_correct: total,
        total,
        bank_version: bank.version,
        language: Language::Spanish,
        valid_from_rfc3339: NOW.into(),
        status: StatusEntry {
            list_url: "https://lab.example.org/api/status/1".into(),
            index,
        },
        course: None,
    })
    .unwrap();
    proof::sign(unsigned, &issuer_key(), &method(), NOW).unwrap()
}

fn status_list(revoked: &[u64]) -> Value {
    let mut bits = Bitstring::default();
    for index in revoked {
        bits.set(*index, true).unwrap();
    }
    let unsigned = unsigned_status_list_credential("https://lab.example.org/api/status/1", DID, NOW, &bits).unwrap();
    proof::sign(unsigned, &issuer_key(), &method(), NOW).unwrap()
}

fn did_document() -> DidDocument {
    let old_key = SigningKey::from_bytes(&[10; 32]).verifying_key();
    let served = serde_json::to_string(&DidDocument::new(DID, &[old_key, issuer_key().verifying_key()])).unwrap();
    serde_json::from_str(&served).unwrap()
}

#[test]
fn issue_bake_extract_and_verify() {
    let credential = issued(7);
    let png = {
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, 2, 2);
        encoder.set_color(png::ColorType::Rgb);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[255; 12]).unwrap();
        writer.finish().unwrap();
        bytes
    };
    let baked = baked_png::bake(&png, &serde_json::to_string_pretty(&credential).unwrap()).unwrap();
    let carried: Value = serde_json::from_str(&baked_png::extract(&baked).unwrap().unwrap()).unwrap();
    let verification = verify_credential(&carried, &did_document(), Some(&status_list(&[3, 8]))).unwrap();
    assert_eq!(verification.status, Status::Active);
    assert_eq!(verification.summary.subject_name, "Grace Hopper");
    assert_eq!(verification.summary.score_percent, 100);
    assert_eq!(
        verification.summary.valid_from_date,
        CivilDate {
            year: 2026,
            month: 12,
            day: 1
        }
    );
    assert_eq!(
        verify_credential(&carried, &did_document(), Some(&status_list(&[7])))
            .unwrap()
            .status,
        Status::Revoked
    );
}

// ---- untrusted input never panics ----

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("did:web:lab.example.org"),
            Just("DataIntegrityProof"),
            Just("eddsa-jcs-2022"),
            Just("assertionMethod"),
            Just("https://www.w3.org/ns/credentials/v2"),
            Just("OpenBadgeCredential"),
            Just("z2HnFSSPPBzR36zdDgK8PbEHeXbR56YF24jwMpt3R1eHXQzJDMWS93FCzpvJpwTWd3GAVFuUfjoJdcnTMuVor51aX"),
        ]
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("proof".to_string()),
                    Just("type".to_string()),
                    Just("issuer".to_string()),
                    Just("credentialSubject".to_string()),
                    Just("credentialStatus".to_string()),
                    Just("@context".to_string()),
                    "[a-zA-Z@]{1,8}",
                ],
                inner,
                0..6
            )
            .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// A copy of `value` with the scalar at the `choice`-th leaf (modulo their count) replaced.
fn with_leaf_replaced(value: &Value, choice: usize, replacement: Value) -> Value {
    let mut pointers = Vec::new();
    leaf_pointers(value, String::new(), &mut pointers);
    let mut changed = value.clone();
    if let Some(pointer) = pointers.get(choice % pointers.len().max(1)) {
        if let Some(leaf) = changed.pointer_mut(pointer) {
            *leaf = replacement;
        }
    }
    changed
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_json_is_refused_without_panicking(credential in arbitrary_json(), list in arbitrary_json()) {
        let document = did_document();
        prop_assert!(verify_credential(&credential, &document, Some(&list)).is_err());
        prop_assert!(verify_credential(&credential, &document, None).is_err());
        let _ = proof::verify(&credential, &issuer_key().verifying_key());
        let _ = serde_json::from_value::<DidDocument>(credential);
    }

    #[test]
    fn one_changed_value_never_verifies(choice in any::<usize>(), replacement in arbitrary_json()) {
        let credential = issued(7);
        let changed = with_leaf_replaced(&credential, choice, replacement);
        prop_assume!(changed != credential);
        prop_assert!(verify_credential(&changed, &did_document(), None).is_err());
        // And a changed status list is refused, never read as "active".
        let list = status_list(&[7]);
        let changed_list = with_leaf_replaced(&list, choice, json!("x"));
        prop_assume!(changed_list != list);
        prop_assert!(verify_credential(&credential, &did_document(), Some(&changed_list)).is_err());
    }

    #[test]
    fn any_encoded_list_is_refused_or_read(text in ".{0,64}", bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = Bitstring::decode(&text);
        use base64::Engine;
        let _ = Bitstring::decode(&format!("u{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes)));
        // A gzip header followed by garbage.
        let mut gzip = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
        gzip.extend_from_slice(&bytes);
        let _ = Bitstring::decode(&format!("u{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&gzip)));
    }

    #[test]
    fn any_bytes_are_refused_or_read_as_png(bytes in prop::collection::vec(any::<u8>(), 0..256), flip in any::<usize>(), value in any::<u8>()) {
        let _ = baked_png::extract(&bytes);
        let _ = baked_png::bake(&bytes, "{}");
        let baked = {
            let mut png_bytes = Vec::new();
            let mut encoder = png::Encoder::new(&mut png_bytes, 3, 2);
            encoder.set_color(png::ColorType::Grayscale);
            let mut writer = encoder.write_header().unwrap();
            writer.write_image_data(&[1, 2, 3, 4, 5, 6]).unwrap();
            writer.finish().unwrap();
            baked_png::bake(&png_bytes, r#"{"a":1}"#).unwrap()
        };
        let mut corrupted = baked.clone();
        let position = flip % corrupted.len();
        corrupted[position] = value;
        let _ = baked_png::extract(&corrupted);
        let _ = baked_png::bake(&corrupted, "{}");
        let _ = baked_png::extract(&baked[..flip % baked.len()]);
    }

    #[test]
    fn any_id_text_is_refused_or_parsed(input in ".{0,40}") {
        let today = CivilDate { year: 2026, month: 12, day: 1 };
        let _ = parse_id(&input, today);
    }
}
