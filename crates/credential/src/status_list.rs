//! Revocation with a W3C Bitstring Status List v1.0 (<https://www.w3.org/TR/vc-bitstring-status-list/>):
//! the issuer publishes, per list, one signed credential holding a compressed bitstring; a
//! credential's `credentialStatus` names a list and a bit, and the bit set means revoked.
//! Everyone fetches the same list, so the issuer does not learn which credential is being
//! checked.

use std::io::{Read, Write};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::{json, Value};
use thiserror::Error;

use super::CredentialError;

/// Bits per list: the specification's minimum (16 KB), large enough that a list says nothing
/// about how many credentials were issued.
pub const LIST_BITS: usize = 131_072;
/// The largest list [`Bitstring::decode`] expands (16 MB), so a small gzip bomb cannot exhaust
/// a verifier's memory.
pub const MAX_DECODED_BYTES: usize = 16 * 1024 * 1024;
/// Multibase prefix of base64url without padding.
const BASE64URL_PREFIX: char = 'u';
pub const STATUS_PURPOSE: &str = "revocation";
pub const ENTRY_TYPE: &str = "BitstringStatusListEntry";
pub const LIST_CREDENTIAL_TYPE: &str = "BitstringStatusListCredential";
pub const LIST_TYPE: &str = "BitstringStatusList";
pub const CREDENTIALS_V2_CONTEXT: &str = "https://www.w3.org/ns/credentials/v2";

/// Why a status list could not be read or changed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StatusListError {
    #[error("an encoded list starts with \"u\" (multibase base64url)")]
    NotBase64url,
    #[error("the encoded list is not valid base64url without padding")]
    BadBase64,
    #[error("the encoded list is not valid gzip")]
    BadGzip,
    #[error("the list expands to more than {max} bytes", max = MAX_DECODED_BYTES)]
    TooLarge,
    #[error("the list has {bits} bits; a status list has at least {min}", min = LIST_BITS)]
    TooShort { bits: usize },
    #[error("index {index} is outside the list of {bits} bits")]
    IndexOutOfRange { index: u64, bits: usize },
    #[error("compressing the list failed: {0}")]
    Compression(String),
}

/// The bits of one status list; bit 0 is the most significant bit of the first byte, as the
/// specification orders them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitstring {
    bytes: Vec<u8>,
}

impl Default for Bitstring {
    fn default() -> Self {
        Self::new(LIST_BITS)
    }
}

impl Bitstring {
    /// All bits clear; `bits` is raised to [`LIST_BITS`] and rounded up to whole bytes.
    pub fn new(bits: usize) -> Self {
        Self {
            bytes: vec![0; bits.max(LIST_BITS).div_ceil(8)],
        }
    }

    pub fn len_bits(&self) -> usize {
        self.bytes.len() * 8
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The byte and the mask of bit `index`.
    fn position(&self, index: u64) -> Result<(usize, u8), StatusListError> {
        let out_of_range = StatusListError::IndexOutOfRange {
            index,
            bits: self.len_bits(),
        };
        let index = usize::try_from(index).map_err(|_| out_of_range.clone())?;
        if index >= self.len_bits() {
            return Err(out_of_range);
        }
        Ok((index / 8, 0x80 >> (index % 8)))
    }

    pub fn set(&mut self, index: u64, value: bool) -> Result<(), StatusListError> {
        let (byte, mask) = self.position(index)?;
        if value {
            self.bytes[byte] |= mask;
        } else {
            self.bytes[byte] &= !mask;
        }
        Ok(())
    }

    pub fn get(&self, index: u64) -> Result<bool, StatusListError> {
        let (byte, mask) = self.position(index)?;
        Ok(self.bytes[byte] & mask != 0)
    }

    /// `encodedList`: multibase base64url (no padding) of the GZIP-compressed bits.
    pub fn encode(&self) -> Result<String, StatusListError> {
        let compression_failed = |e: std::io::Error| StatusListError::Compression(e.to_string());
        let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
        encoder.write_all(&self.bytes).map_err(compression_failed)?;
        let compressed = encoder.finish().map_err(compression_failed)?;
        Ok(format!("{BASE64URL_PREFIX}{}", URL_SAFE_NO_PAD.encode(compressed)))
    }

    /// Reads an `encodedList`, refusing anything that is not one: a wrong prefix, bad base64,
    /// bad gzip, fewer than [`LIST_BITS`] bits or more than [`MAX_DECODED_BYTES`].
    pub fn decode(encoded: &str) -> Result<Self, StatusListError> {
        let base64 = encoded
            .strip_prefix(BASE64URL_PREFIX)
            .ok_or(StatusListError::NotBase64url)?;
        let compressed = URL_SAFE_NO_PAD.decode(base64).map_err(|_| StatusListError::BadBase64)?;
        let mut bytes = Vec::new();
        // One byte more than allowed tells a list at the cap from one beyond it.
        GzDecoder::new(compressed.as_slice())
            .take(MAX_DECODED_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| StatusListError::BadGzip)?;
        if bytes.len() > MAX_DECODED_BYTES {
            return Err(StatusListError::TooLarge);
        }
        if bytes.len() * 8 < LIST_BITS {
            return Err(StatusListError::TooShort { bits: bytes.len() * 8 });
        }
        Ok(Self { bytes })
    }
}

/// Where a credential's status is: list `list_number` (from 1) and bit `index` in it, for
/// serials counted from 1. Serial 0 is not a serial; it maps to list 0, which no issuer serves,
/// so a credential made with it can never look "not revoked".
pub fn status_position(serial: u64) -> (u64, u64) {
    match serial.checked_sub(1) {
        Some(zero_based) => (zero_based / LIST_BITS as u64 + 1, zero_based % LIST_BITS as u64),
        None => (0, 0),
    }
}

/// A credential's pointer into a status list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusEntry {
    /// The URL of the status list credential (`statusListCredential`).
    pub list_url: String,
    pub index: u64,
}

impl StatusEntry {
    /// The credential's `credentialStatus`.
    pub fn to_json(&self) -> Value {
        json!({
            "id": format!("{}#{}", self.list_url, self.index),
            "type": ENTRY_TYPE,
            "statusPurpose": STATUS_PURPOSE,
            "statusListIndex": self.index.to_string(),
            "statusListCredential": self.list_url,
        })
    }

    /// Reads a `credentialStatus`; the error names the first missing or malformed member.
    pub fn from_json(status: &Value) -> Result<Self, &'static str> {
        if status.get("type").and_then(Value::as_str) != Some(ENTRY_TYPE) {
            return Err("credentialStatus.type");
        }
        if status.get("statusPurpose").and_then(Value::as_str) != Some(STATUS_PURPOSE) {
            return Err("credentialStatus.statusPurpose");
        }
        // The index is a string of decimal digits ("94567"), as the specification writes it.
        let index = status
            .get("statusListIndex")
            .and_then(Value::as_str)
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse().ok())
            .ok_or("credentialStatus.statusListIndex")?;
        let list_url = status
            .get("statusListCredential")
            .and_then(Value::as_str)
            .filter(|url| !url.is_empty())
            .ok_or("credentialStatus.statusListCredential")?;
        Ok(Self {
            list_url: list_url.to_string(),
            index,
        })
    }
}

/// The unsigned status list credential of `list_url`, issued by `issuer_did` at
/// `valid_from_rfc3339`, holding `bits`; sign it with [`super::proof::sign`].
pub fn unsigned_status_list_credential(
    list_url: &str,
    issuer_did: &str,
    valid_from_rfc3339: &str,
    bits: &Bitstring,
) -> Result<Value, CredentialError> {
    Ok(json!({
        "@context": [CREDENTIALS_V2_CONTEXT],
        "id": list_url,
        "type": ["VerifiableCredential", LIST_CREDENTIAL_TYPE],
        "issuer": issuer_did,
        "validFrom": valid_from_rfc3339,
        "credentialSubject": {
            "id": format!("{list_url}#list"),
            "type": LIST_TYPE,
            "statusPurpose": STATUS_PURPOSE,
            "encodedList": bits.encode()?,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `encodedList` of the specification's examples: 16 KB of zeros.
    const SPEC_EXAMPLE: &str = "uH4sIAAAAAAAAA-3BMQEAAADCoPVPbQwfoAAAAAAAAAAAAAAAAAAAAIC3AYbSVKsAQAAA";

    #[test]
    fn the_specification_example_is_an_empty_list_of_the_minimum_size() {
        let bits = Bitstring::decode(SPEC_EXAMPLE).unwrap();
        assert_eq!(bits.len_bits(), LIST_BITS);
        assert!(bits.as_bytes().iter().all(|b| *b == 0));
        assert_eq!(bits, Bitstring::default());
    }

    #[test]
    fn bits_round_trip_in_the_specified_order() {
        let mut bits = Bitstring::new(10);
        assert_eq!(bits.len_bits(), LIST_BITS);
        for index in [0, 7, 8, 94_567, LIST_BITS as u64 - 1] {
            bits.set(index, true).unwrap();
        }
        assert_eq!(bits.as_bytes()[0], 0b1000_0001, "bit 0 is the most significant");
        assert_eq!(bits.as_bytes()[1], 0b1000_0000);
        assert_eq!(bits.as_bytes()[LIST_BITS / 8 - 1], 0b0000_0001);
        let decoded = Bitstring::decode(&bits.encode().unwrap()).unwrap();
        assert_eq!(decoded, bits);
        assert!(decoded.get(94_567).unwrap() && !decoded.get(94_566).unwrap() && !decoded.get(1).unwrap());
        bits.set(7, false).unwrap();
        assert_eq!(bits.as_bytes()[0], 0b1000_0000);
        assert!(bits.encode().unwrap().starts_with('u'));
        let large = Bitstring::new(LIST_BITS * 2 + 3);
        assert_eq!(large.len_bits(), LIST_BITS * 2 + 8);
    }

    #[test]
    fn indexes_outside_the_list_are_errors() {
        let mut bits = Bitstring::default();
        let outside = StatusListError::IndexOutOfRange {
            index: LIST_BITS as u64,
            bits: LIST_BITS,
        };
        assert_eq!(bits.get(LIST_BITS as u64), Err(outside.clone()));
        assert_eq!(bits.set(LIST_BITS as u64, true), Err(outside));
        assert!(bits.get(u64::MAX).is_err());
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn decoding_refuses_what_is_not_a_list() {
        assert_eq!(Bitstring::decode(""), Err(StatusListError::NotBase64url));
        assert_eq!(
            Bitstring::decode(&SPEC_EXAMPLE[1..]),
            Err(StatusListError::NotBase64url)
        );
        assert_eq!(
            Bitstring::decode(&format!("z{}", &SPEC_EXAMPLE[1..])),
            Err(StatusListError::NotBase64url)
        );
        assert_eq!(Bitstring::decode("u***"), Err(StatusListError::BadBase64));
        assert_eq!(
            Bitstring::decode(&format!("{SPEC_EXAMPLE}=")),
            Err(StatusListError::BadBase64)
        );
        assert_eq!(
            Bitstring::decode(&format!("u{}", URL_SAFE_NO_PAD.encode(b"not gzip at all"))),
            Err(StatusListError::BadGzip)
        );
        let truncated = gzip(&[0; 16_384]);
        assert_eq!(
            Bitstring::decode(&format!(
                "u{}",
                URL_SAFE_NO_PAD.encode(&truncated[..truncated.len() - 9])
            )),
            Err(StatusListError::BadGzip)
        );
        assert_eq!(
            Bitstring::decode(&format!("u{}", URL_SAFE_NO_PAD.encode(gzip(&[0; 100])))),
            Err(StatusListError::TooShort { bits: 800 })
        );
        // A 16 MB + 1 list compresses to some 16 KB: refused without holding more than the cap.
        let bomb = gzip(&vec![0; MAX_DECODED_BYTES + 1]);
        assert!(bomb.len() < 100_000);
        assert_eq!(
            Bitstring::decode(&format!("u{}", URL_SAFE_NO_PAD.encode(bomb))),
            Err(StatusListError::TooLarge)
        );
        let at_cap = gzip(&vec![0; MAX_DECODED_BYTES]);
        assert_eq!(
            Bitstring::decode(&format!("u{}", URL_SAFE_NO_PAD.encode(at_cap)))
                .unwrap()
                .len_bits(),
            MAX_DECODED_BYTES * 8
        );
    }

    #[test]
    fn serials_map_to_lists_and_bits() {
        assert_eq!(status_position(1), (1, 0));
        assert_eq!(status_position(2), (1, 1));
        assert_eq!(status_position(LIST_BITS as u64), (1, LIST_BITS as u64 - 1));
        assert_eq!(status_position(LIST_BITS as u64 + 1), (2, 0));
        assert_eq!(status_position(0), (0, 0));
        assert_eq!(status_position(u64::MAX).1, (u64::MAX - 1) % LIST_BITS as u64);
    }

    #[test]
    fn entries_and_list_credentials_have_the_specified_shape() {
        let entry = StatusEntry {
            list_url: "https://example.com/api/status/3".into(),
            index: 94_567,
        };
        let json = entry.to_json();
        assert_eq!(
            json,
            json!({
                "id": "https://example.com/api/status/3#94567",
                "type": "BitstringStatusListEntry",
                "statusPurpose": "revocation",
                "statusListIndex": "94567",
                "statusListCredential": "https://example.com/api/status/3",
            })
        );
        assert_eq!(StatusEntry::from_json(&json), Ok(entry));
        for (member, value, field) in [
            ("type", json!("StatusList2021Entry"), "credentialStatus.type"),
            ("statusPurpose", json!("suspension"), "credentialStatus.statusPurpose"),
            ("statusListIndex", json!(94_567), "credentialStatus.statusListIndex"),
            ("statusListIndex", json!("-1"), "credentialStatus.statusListIndex"),
            (
                "statusListIndex",
                json!("99999999999999999999999"),
                "credentialStatus.statusListIndex",
            ),
            (
                "statusListCredential",
                json!(""),
                "credentialStatus.statusListCredential",
            ),
        ] {
            let mut changed = json.clone();
            changed[member] = value;
            assert_eq!(StatusEntry::from_json(&changed), Err(field), "{member}");
        }

        let mut bits = Bitstring::default();
        bits.set(3, true).unwrap();
        let list = unsigned_status_list_credential(
            "https://example.com/api/status/1",
            "did:web:example.com",
            "2026-01-01T00:00:00Z",
            &bits,
        )
        .unwrap();
        assert_eq!(
            list["type"],
            json!(["VerifiableCredential", "BitstringStatusListCredential"])
        );
        assert_eq!(list["id"], "https://example.com/api/status/1");
        assert_eq!(list["issuer"], "did:web:example.com");
        assert_eq!(list["credentialSubject"]["id"], "https://example.com/api/status/1#list");
        assert_eq!(list["credentialSubject"]["type"], "BitstringStatusList");
        assert_eq!(list["credentialSubject"]["statusPurpose"], "revocation");
        let encoded = list["credentialSubject"]["encodedList"].as_str().unwrap();
        assert!(Bitstring::decode(encoded).unwrap().get(3).unwrap());
    }
}
