//! Certificate IDs: short, readable, typo-proof, and honest about what they prove.
//!
//! An ID is 15 symbols of Crockford's base32 (no I, L, O, U), shown as `XXXXX-XXXXX-XXXXX`:
//! 60 payload bits, then a CRC-15 over them. The CRC catches every single mistyped symbol and
//! every swap of two neighbours (both are error bursts shorter than 15 bits).
//!
//! Payload (format 1), most significant bit first:
//! `format: 4 | quiz_version: 6 | score_percent: 7 | day: 15 | tag: 28`
//! where `day` counts days since 2025-01-01 and `tag` is the first 28 bits of
//! SHA-256("gradlab-certificate-v1\n" + name + "\n" + score + "\n" + day + "\n" + quiz_version).
//!
//! Trust: there is no server, so no secret key. Anyone with this code can make a valid ID; what
//! the ID proves is integrity: a name, score or date changed after issue no longer matches it.
//! A later issuer service can sign IDs with Ed25519 by appending `.` and the base32 signature
//! (format 2 and up); format-1 IDs keep verifying as they do now.

use sha2::{Digest, Sha256};
use thiserror::Error;

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
pub const FORMAT: u8 = 1;
pub const ID_SYMBOLS: usize = 15;
const PAYLOAD_BITS: u32 = 60;
const CRC_BITS: u32 = 15;
const CRC_POLY: u16 = 0x4599; // CRC-15/CAN
const TAG_BITS: u32 = 28;
pub const MAX_NAME_CHARS: usize = 80;
/// Day 0 of the date field, as days since 1970-01-01 (2025-01-01).
const EPOCH_DAY: i64 = 20_089;

/// A certificate as the app keeps it after issuing, so a reload shows it again.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IssuedCertificate {
    pub name: String,
    pub id: String,
}

pub fn storage_key(quiz_version: u8) -> String {
    format!("gradlab.certificate.v{quiz_version}")
}

/// What a certificate states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certificate {
    pub name: String,
    pub score_percent: u8,
    pub date: CivilDate,
    pub quiz_version: u8,
}

/// A calendar date (proleptic Gregorian).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CivilDate {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

impl CivilDate {
    /// Days since 1970-01-01 (Howard Hinnant's algorithm).
    pub fn to_days(self) -> i64 {
        let y = i64::from(self.year) - i64::from(self.month <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(self.month);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    pub fn from_days(days: i64) -> Self {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Self { year, month, day }
    }

    pub fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Why an ID or certificate was refused; each message is meant for the person checking it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CertificateError {
    #[error("a certificate ID has {ID_SYMBOLS} characters (not counting dashes); this one has {0}")]
    WrongLength(usize),
    #[error("\"{character}\" at position {position} is not used in certificate IDs")]
    InvalidCharacter { character: char, position: usize },
    #[error("the check characters do not match: a character was mistyped or changed")]
    CheckFailed,
    #[error("this ID uses format {0}, which this version of the app does not know")]
    UnknownFormat(u8),
    #[error("the ID holds an impossible score of {0} %")]
    ImpossibleScore(u8),
    #[error("the ID's date {0} is in the future")]
    FutureDate(String),
    #[error("the name does not match this certificate (or the ID was altered)")]
    NameMismatch,
    #[error("the name must be 1 to {MAX_NAME_CHARS} characters")]
    InvalidName,
    #[error("the date must be between 2025-01-01 and 2114")]
    DateOutOfRange,
}

impl CertificateError {
    /// The message the verification page shows (see `assets/i18n`).
    pub fn message(&self) -> crate::i18n::Msg {
        use crate::i18n::Msg;
        match self {
            CertificateError::WrongLength(n) => Msg::new("cert-error-length").arg("expected", ID_SYMBOLS).arg("got", n),
            CertificateError::InvalidCharacter { character, position } => Msg::new("cert-error-character")
                .arg("character", character)
                .arg("position", position),
            CertificateError::CheckFailed => Msg::new("cert-error-check"),
            CertificateError::UnknownFormat(f) => Msg::new("cert-error-format").arg("format", f),
            CertificateError::ImpossibleScore(s) => Msg::new("cert-error-score").arg("score", s),
            CertificateError::FutureDate(d) => Msg::new("cert-error-future").arg("date", d),
            CertificateError::NameMismatch => Msg::new("cert-error-name-mismatch"),
            CertificateError::InvalidName => Msg::new("cert-error-name").arg("max", MAX_NAME_CHARS),
            CertificateError::DateOutOfRange => Msg::new("cert-error-date"),
        }
    }
}

/// The fields an ID carries, before the name is checked against its tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedId {
    pub format: u8,
    pub quiz_version: u8,
    pub score_percent: u8,
    pub date: CivilDate,
    tag: u32,
}

/// Trims and collapses inner white space, so "Ada  Lovelace " and "Ada Lovelace" are one name.
pub fn normalize_name(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn tag(name: &str, score: u8, day: u16, quiz_version: u8) -> u32 {
    let mut hasher = Sha256::new();
    hasher.update(format!("gradlab-certificate-v1\n{name}\n{score}\n{day}\n{quiz_version}").as_bytes());
    let digest = hasher.finalize();
    let top = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
    top >> (32 - TAG_BITS)
}

fn crc15(payload: u64) -> u16 {
    let mut crc: u16 = 0;
    for i in (0..PAYLOAD_BITS).rev() {
        let bit = ((payload >> i) & 1) as u16;
        let top = (crc >> 14) & 1;
        crc = (crc << 1) & 0x7FFF;
        if top ^ bit == 1 {
            crc ^= CRC_POLY;
        }
    }
    crc
}

impl Certificate {
    /// Encodes the certificate as an ID, after checking its fields.
    pub fn id(&self) -> Result<String, CertificateError> {
        let name = normalize_name(&self.name);
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return Err(CertificateError::InvalidName);
        }
        if self.score_percent > 100 {
            return Err(CertificateError::ImpossibleScore(self.score_percent));
        }
        let day = self.date.to_days() - EPOCH_DAY;
        let day = u16::try_from(day)
            .ok()
            .filter(|d| *d < (1 << 15))
            .ok_or(CertificateError::DateOutOfRange)?;
        let quiz_version = self.quiz_version & 0x3F;
        let payload = (u64::from(FORMAT) << 56)
            | (u64::from(quiz_version) << 50)
            | (u64::from(self.score_percent) << 43)
            | (u64::from(day) << 28)
            | u64::from(tag(&name, self.score_percent, day, quiz_version));
        let word = (u128::from(payload) << CRC_BITS) | u128::from(crc15(payload));
        let symbols: String = (0..ID_SYMBOLS)
            .rev()
            .map(|i| ALPHABET[((word >> (5 * i)) & 31) as usize] as char)
            .collect();
        Ok(format!("{}-{}-{}", &symbols[0..5], &symbols[5..10], &symbols[10..15]))
    }
}

/// Maps one typed character to its symbol value; Crockford's aliases (O→0, I/L→1) are accepted.
fn symbol_value(c: char) -> Option<u8> {
    let c = match c.to_ascii_uppercase() {
        'O' => '0',
        'I' | 'L' => '1',
        other => other,
    };
    ALPHABET.iter().position(|&a| a as char == c).map(|p| p as u8)
}

/// Parses an ID as a person might type or paste it: any case, with or without dashes and spaces.
/// Accepts any string without panicking.
pub fn decode(input: &str, today: CivilDate) -> Result<DecodedId, CertificateError> {
    let core = input.trim().split('.').next().unwrap_or_default();
    let symbols: Vec<(usize, char)> = core
        .chars()
        .enumerate()
        .filter(|(_, c)| !matches!(c, '-' | ' ' | '\u{2013}' | '\u{2014}'))
        .collect();
    if symbols.len() != ID_SYMBOLS {
        return Err(CertificateError::WrongLength(symbols.len()));
    }
    let mut word: u128 = 0;
    for &(position, character) in &symbols {
        let value = symbol_value(character).ok_or(CertificateError::InvalidCharacter {
            character,
            position: position + 1,
        })?;
        word = (word << 5) | u128::from(value);
    }
    let payload = (word >> CRC_BITS) as u64;
    if crc15(payload) != (word & 0x7FFF) as u16 {
        return Err(CertificateError::CheckFailed);
    }
    let format = (payload >> 56) as u8;
    if format != FORMAT {
        return Err(CertificateError::UnknownFormat(format));
    }
    let score_percent = ((payload >> 43) & 0x7F) as u8;
    if score_percent > 100 {
        return Err(CertificateError::ImpossibleScore(score_percent));
    }
    let day = ((payload >> 28) & 0x7FFF) as i64;
    let date = CivilDate::from_days(EPOCH_DAY + day);
    if date > today {
        return Err(CertificateError::FutureDate(date.iso()));
    }
    Ok(DecodedId {
        format,
        quiz_version: ((payload >> 50) & 0x3F) as u8,
        score_percent,
        date,
        tag: (payload & ((1 << TAG_BITS) - 1)) as u32,
    })
}

/// Checks an ID against the name it was issued to, and returns what it certifies.
pub fn verify(id: &str, name: &str, today: CivilDate) -> Result<Certificate, CertificateError> {
    let decoded = decode(id, today)?;
    let name = normalize_name(name);
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(CertificateError::InvalidName);
    }
    let day = (decoded.date.to_days() - EPOCH_DAY) as u16;
    if tag(&name, decoded.score_percent, day, decoded.quiz_version) != decoded.tag {
        return Err(CertificateError::NameMismatch);
    }
    Ok(Certificate {
        name,
        score_percent: decoded.score_percent,
        date: decoded.date,
        quiz_version: decoded.quiz_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_a_message_in_every_language_that_reads_like_the_english_error() {
        use crate::i18n::{Language, Localizer};
        let errors = [
            CertificateError::WrongLength(3),
            CertificateError::InvalidCharacter {
                character: 'U',
                position: 4,
            },
            CertificateError::CheckFailed,
            CertificateError::UnknownFormat(9),
            CertificateError::ImpossibleScore(120),
            CertificateError::FutureDate("2099-01-01".into()),
            CertificateError::NameMismatch,
            CertificateError::InvalidName,
            CertificateError::DateOutOfRange,
        ];
        let en = Localizer::english();
        for error in &errors {
            assert_eq!(
                en.msg(&error.message()),
                error.to_string(),
                "English message of {error:?}"
            );
        }
        for language in Language::ALL {
            let localizer = Localizer::new(language).unwrap();
            for error in &errors {
                assert!(localizer.has(&error.message().id), "{:?} in {}", error, language.tag());
            }
        }
    }
    use proptest::prelude::*;

    const TODAY: CivilDate = CivilDate {
        year: 2026,
        month: 12,
        day: 2,
    };

    fn sample() -> Certificate {
        Certificate {
            name: "Ada Lovelace".into(),
            score_percent: 87,
            date: CivilDate {
                year: 2026,
                month: 11,
                day: 30,
            },
            quiz_version: 1,
        }
    }

    #[test]
    fn dates_round_trip_through_day_numbers() {
        assert_eq!(
            CivilDate {
                year: 1970,
                month: 1,
                day: 1
            }
            .to_days(),
            0
        );
        assert_eq!(
            CivilDate {
                year: 2025,
                month: 1,
                day: 1
            }
            .to_days(),
            EPOCH_DAY
        );
        for days in (-1000..60_000).step_by(37) {
            assert_eq!(CivilDate::from_days(days).to_days(), days);
        }
        assert_eq!(CivilDate::from_days(EPOCH_DAY + 59).iso(), "2025-03-01");
    }

    #[test]
    fn round_trip() {
        let cert = sample();
        let id = cert.id().unwrap();
        assert_eq!(id.len(), ID_SYMBOLS + 2);
        assert!(id.chars().all(|c| c == '-' || ALPHABET.contains(&(c as u8))));
        assert_eq!(verify(&id, "Ada Lovelace", TODAY).unwrap(), cert);
        // Typed loosely: lower case, no dashes, spaces around, name spacing.
        let loose = id.replace('-', "").to_lowercase();
        assert_eq!(verify(&format!("  {loose} "), " Ada   Lovelace", TODAY).unwrap(), cert);
    }

    #[test]
    fn every_single_character_typo_is_detected() {
        let id = sample().id().unwrap().replace('-', "");
        let symbols: Vec<char> = id.chars().collect();
        for position in 0..symbols.len() {
            for &replacement in ALPHABET {
                let replacement = replacement as char;
                if replacement == symbols[position] {
                    continue;
                }
                let mut typo = symbols.clone();
                typo[position] = replacement;
                let typo: String = typo.into_iter().collect();
                assert_eq!(decode(&typo, TODAY), Err(CertificateError::CheckFailed), "{typo}");
            }
        }
    }

    #[test]
    fn swapped_neighbours_are_detected() {
        let id = sample().id().unwrap().replace('-', "");
        let symbols: Vec<char> = id.chars().collect();
        for i in 0..symbols.len() - 1 {
            if symbols[i] == symbols[i + 1] {
                continue;
            }
            let mut swapped = symbols.clone();
            swapped.swap(i, i + 1);
            let swapped: String = swapped.into_iter().collect();
            assert!(decode(&swapped, TODAY).is_err(), "{swapped}");
        }
    }

    #[test]
    fn tampered_fields_are_rejected() {
        let cert = sample();
        let id = cert.id().unwrap();
        assert_eq!(verify(&id, "Ada Byron", TODAY), Err(CertificateError::NameMismatch));
        // A forger who re-encodes another score with a valid CRC still fails the tag check.
        let decoded = decode(&id, TODAY).unwrap();
        let forged_payload = (u64::from(FORMAT) << 56)
            | (u64::from(decoded.quiz_version) << 50)
            | (100u64 << 43)
            | (((decoded.date.to_days() - EPOCH_DAY) as u64) << 28)
            | u64::from(decoded.tag);
        let word = (u128::from(forged_payload) << CRC_BITS) | u128::from(crc15(forged_payload));
        let forged: String = (0..ID_SYMBOLS)
            .rev()
            .map(|i| ALPHABET[((word >> (5 * i)) & 31) as usize] as char)
            .collect();
        assert_eq!(decode(&forged, TODAY).unwrap().score_percent, 100);
        assert_eq!(
            verify(&forged, "Ada Lovelace", TODAY),
            Err(CertificateError::NameMismatch)
        );
    }

    #[test]
    fn clear_reasons_for_bad_input() {
        assert_eq!(decode("", TODAY), Err(CertificateError::WrongLength(0)));
        assert_eq!(decode("ABC", TODAY), Err(CertificateError::WrongLength(3)));
        assert_eq!(
            decode("ABCDE-FGHJK-MNPQU", TODAY),
            Err(CertificateError::InvalidCharacter {
                character: 'U',
                position: 17
            })
        );
        let future = Certificate {
            date: CivilDate {
                year: 2027,
                month: 1,
                day: 1,
            },
            ..sample()
        };
        assert!(matches!(
            decode(&future.id().unwrap(), TODAY),
            Err(CertificateError::FutureDate(_))
        ));
        assert_eq!(
            Certificate {
                score_percent: 101,
                ..sample()
            }
            .id(),
            Err(CertificateError::ImpossibleScore(101))
        );
        assert_eq!(
            Certificate {
                name: "   ".into(),
                ..sample()
            }
            .id(),
            Err(CertificateError::InvalidName)
        );
    }

    #[test]
    fn a_signature_suffix_does_not_change_format_one_verification() {
        let id = sample().id().unwrap();
        assert!(verify(&format!("{id}.SIGNATUREPART"), "Ada Lovelace", TODAY).is_ok());
    }

    proptest! {
        #[test]
        fn decoder_accepts_any_string_without_panicking(input in ".{0,40}") {
            let _ = decode(&input, TODAY);
            let _ = verify(&input, &input, TODAY);
        }

        #[test]
        fn any_certificate_round_trips(
            name in "[A-Za-z][A-Za-z .'-]{0,30}",
            score in 0u8..=100,
            days in 0i64..700,
            version in 1u8..60,
        ) {
            let cert = Certificate {
                name: normalize_name(&name),
                score_percent: score,
                date: CivilDate::from_days(EPOCH_DAY + days),
                quiz_version: version,
            };
            let id = cert.id().unwrap();
            prop_assert_eq!(verify(&id, &name, TODAY).unwrap(), cert);
        }
    }
}
