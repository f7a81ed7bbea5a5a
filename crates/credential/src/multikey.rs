//! Ed25519 keys as Multikey strings (W3C Controlled Identifiers, "Multikey"): multibase
//! base58btc (`z` prefix) of a multicodec header and the raw key bytes. The public form goes into
//! the DID document; the secret form is how the issuer stores its key, as the vc-di-eddsa test
//! vectors write it.

use ed25519_dalek::{SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};
use thiserror::Error;

/// Multicodec `ed25519-pub` (0xed) as an unsigned varint.
const ED25519_PUBLIC_HEADER: [u8; 2] = [0xed, 0x01];
/// Multicodec `ed25519-priv` (0x1300) as an unsigned varint.
const ED25519_SECRET_HEADER: [u8; 2] = [0x80, 0x26];
/// Multibase prefix of base58btc.
const BASE58BTC_PREFIX: char = 'z';
const KEY_BYTES: usize = 32;

/// Why a Multikey string was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MultikeyError {
    #[error("a Multikey starts with \"z\" (multibase base58btc)")]
    NotBase58btc,
    #[error("the Multikey is not valid base58")]
    BadBase58,
    #[error("the Multikey is not an Ed25519 {expected} key (wrong multicodec header)")]
    WrongKeyType { expected: &'static str },
    #[error("an Ed25519 key has 32 bytes; this one has {0}")]
    WrongLength(usize),
    #[error("the bytes are not an Ed25519 public key")]
    NotOnCurve,
}

fn encode(header: [u8; 2], key: &[u8; KEY_BYTES]) -> String {
    let mut bytes = Vec::with_capacity(header.len() + KEY_BYTES);
    bytes.extend_from_slice(&header);
    bytes.extend_from_slice(key);
    format!("{BASE58BTC_PREFIX}{}", bs58::encode(bytes).into_string())
}

fn decode(text: &str, header: [u8; 2], expected: &'static str) -> Result<[u8; KEY_BYTES], MultikeyError> {
    let encoded = text.strip_prefix(BASE58BTC_PREFIX).ok_or(MultikeyError::NotBase58btc)?;
    let bytes = bs58::decode(encoded).into_vec().map_err(|_| MultikeyError::BadBase58)?;
    let key = bytes
        .strip_prefix(&header)
        .ok_or(MultikeyError::WrongKeyType { expected })?;
    key.try_into().map_err(|_| MultikeyError::WrongLength(key.len()))
}

/// `publicKeyMultibase` of a DID document: "z" + base58btc(0xed 0x01 + 32 key bytes).
pub fn public_key_multibase(key: &VerifyingKey) -> String {
    encode(ED25519_PUBLIC_HEADER, key.as_bytes())
}

pub fn parse_public_key_multibase(text: &str) -> Result<VerifyingKey, MultikeyError> {
    let bytes = decode(text, ED25519_PUBLIC_HEADER, "public")?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| MultikeyError::NotOnCurve)
}

/// The secret key: "z" + base58btc(0x80 0x26 + 32 secret bytes). Whoever holds it can sign as
/// the issuer; it never leaves the issuer's data directory.
pub fn secret_key_multibase(key: &SigningKey) -> String {
    encode(ED25519_SECRET_HEADER, key.as_bytes())
}

pub fn parse_secret_key_multibase(text: &str) -> Result<SigningKey, MultikeyError> {
    decode(text, ED25519_SECRET_HEADER, "secret").map(|bytes| SigningKey::from_bytes(&bytes))
}

/// A short name of a public key for the DID URL fragment (`did:web:...#key-0123456789ab`):
/// derived from the key, so the same key always gets the same id and a rotated key a new one.
pub fn key_id(key: &VerifyingKey) -> String {
    let digest = Sha256::digest(key.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("key-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `TestVectors/keyPair.json` of the vc-di-eddsa specification.
    const VECTOR_PUBLIC: &str = "z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2";
    const VECTOR_SECRET: &str = "z3u2en7t5LR2WtQH5PfFqMqwVHBeXouLzo6haApm8XHqvjxq";

    #[test]
    fn the_specification_key_pair_round_trips_and_belongs_together() {
        let secret = parse_secret_key_multibase(VECTOR_SECRET).unwrap();
        let public = parse_public_key_multibase(VECTOR_PUBLIC).unwrap();
        assert_eq!(secret.verifying_key(), public);
        assert_eq!(secret_key_multibase(&secret), VECTOR_SECRET);
        assert_eq!(public_key_multibase(&public), VECTOR_PUBLIC);
        // Every Ed25519 Multikey starts so, which is how people recognise them.
        assert!(VECTOR_PUBLIC.starts_with("z6Mk"));
    }

    #[test]
    fn key_ids_are_short_stable_and_distinct() {
        let a = SigningKey::from_bytes(&[1; 32]).verifying_key();
        let b = SigningKey::from_bytes(&[2; 32]).verifying_key();
        assert_eq!(key_id(&a), key_id(&a));
        assert_ne!(key_id(&a), key_id(&b));
        assert_eq!(key_id(&a).len(), "key-".len() + 12);
        assert!(key_id(&a)[4..]
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn wrong_strings_say_what_is_wrong() {
        assert_eq!(
            parse_public_key_multibase("u6MkrJVnaZkeFzdQ"),
            Err(MultikeyError::NotBase58btc)
        );
        assert_eq!(parse_public_key_multibase("z0OIl"), Err(MultikeyError::BadBase58));
        assert_eq!(
            parse_public_key_multibase(VECTOR_SECRET),
            Err(MultikeyError::WrongKeyType { expected: "public" })
        );
        assert!(matches!(
            parse_secret_key_multibase(VECTOR_PUBLIC),
            Err(MultikeyError::WrongKeyType { expected: "secret" })
        ));
        let short = format!("z{}", bs58::encode([0xed, 0x01, 1, 2, 3]).into_string());
        assert_eq!(parse_public_key_multibase(&short), Err(MultikeyError::WrongLength(3)));
        assert_eq!(parse_public_key_multibase(""), Err(MultikeyError::NotBase58btc));
    }
}
