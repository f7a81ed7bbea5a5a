//! Certificate IDs: short, readable, typo-proof, and honest about what they prove.
//!
//! An ID is 15 symbols of Crockford's base32 (no I, L, O, U), shown as `XXXXX-XXXXX-XXXXX`:
//! 60 payload bits, then a CRC-15 over them. The CRC catches every single mistyped symbol and
//! every swap of two neighbours (both are error bursts shorter than 15 bits). The first 4
//! payload bits name the format; the rest depends on it.
//!
//! Format 1, integrity only, most significant bit first:
//! `format: 4 (= 1) | quiz_version: 6 | score_percent: 7 | day: 15 | tag: 28`
//! where `day` counts days since 2025-01-01 and `tag` is the first 28 bits of
//! SHA-256("gradlab-certificate-v1\n" + name + "\n" + score + "\n" + day + "\n" + quiz_version).
//! The app makes these without a server, so without a secret key: anyone with this code can make
//! a valid ID. What it proves is integrity: a name, score or date changed after issue no longer
//! matches it.
//!
//! Format 2, issued: `format: 4 (= 2) | serial: 28 | nonce: 28`. The ID only names a credential
//! held by the issuer service (its `serial`, counted from 1, and a random `nonce` so that IDs
//! cannot be guessed by counting); the facts and the Ed25519 signature are in the Open Badges
//! credential the issuer returns for it (see `gradlab_credential`). Such an ID proves nothing by
//! itself, so [`verify`] refuses it with [`CertificateError::CheckWithIssuer`]; [`parse_id`] tells
//! the two formats apart.

use sha2::{Digest, Sha256};
use thiserror::Error;

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// The format of integrity-only IDs, which the app makes by itself.
pub const FORMAT: u8 = 1;
/// The format of IDs that name a credential at its issuer.
pub const ISSUED_FORMAT: u8 = 2;
pub const ID_SYMBOLS: usize = 15;
const PAYLOAD_BITS: u32 = 60;
const CRC_BITS: u32 = 15;
const CRC_POLY: u16 = 0x4599; // CRC-15/CAN
const TAG_BITS: u32 = 28;
/// Width of the serial and of the nonce in a format-2 ID.
const ISSUED_FIELD_BITS: u32 = 28;
pub const MAX_NAME_CHARS: usize = 80;
/// Day 0 of the date field, as days since 1970-01-01 (2025-01-01).
const EPOCH_DAY: i64 = 20_089;

/// A certificate as the app keeps it after issuing, so a reload shows it again.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IssuedCertificate {
    pub name: String,
    pub id: String,
    /// The signed Open Badges credential, when an issuer signed it (format-2 IDs); saves from
    /// before signed certificates, and integrity-only certificates, have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<serde_json::Value>,
    /// The attempt it was issued for: that attempt shows this certificate instead of asking
    /// for a name again. Saves from before it existed lack it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_id: Option<String>,
}

impl IssuedCertificate {
    /// Whether it was issued for the attempt `attempt_id` (one attempt, one certificate); a
    /// certificate kept without an attempt belongs to none.
    pub fn is_for_attempt(&self, attempt_id: Option<&str>) -> bool {
        self.attempt_id.is_some() && self.attempt_id.as_deref() == attempt_id
    }
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

    /// The date as a reader of `language` writes it in a sentence: "6 December 2026",
    /// "6 de diciembre de 2026".
    pub fn long(self, language: gradlab_i18n::Language) -> String {
        use gradlab_i18n::Language;
        const EN: [&str; 12] = [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ];
        const ES: [&str; 12] = [
            "enero",
            "febrero",
            "marzo",
            "abril",
            "mayo",
            "junio",
            "julio",
            "agosto",
            "septiembre",
            "octubre",
            "noviembre",
            "diciembre",
        ];
        let index = (self.month.clamp(1, 12) - 1) as usize;
        match language {
            Language::English => format!("{} {} {}", self.day, EN[index], self.year),
            Language::Spanish => format!("{} de {} de {}", self.day, ES[index], self.year),
        }
    }
}

/// ISO 8601 (`2026-11-30`), as [`CivilDate::iso`].
impl std::fmt::Display for CivilDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.iso())
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
    #[error("this ID names a credential signed by its issuer: check it with the issuer, not with a name")]
    CheckWithIssuer,
    #[error("an issued ID needs a serial from 1 to {max_serial} and a nonce below {nonce_limit}", max_serial = IssuedId::MAX_SERIAL, nonce_limit = IssuedId::NONCE_MASK as u64 + 1)]
    IssuedOutOfRange,
}

impl CertificateError {
    /// The message the verification page shows (see `assets/i18n`).
    pub fn message(&self) -> gradlab_i18n::Msg {
        use gradlab_i18n::Msg;
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
            CertificateError::CheckWithIssuer => Msg::new("cert-error-issued"),
            CertificateError::IssuedOutOfRange => Msg::new("cert-error-issued-range")
                .arg("max", IssuedId::MAX_SERIAL)
                .arg("limit", u64::from(IssuedId::NONCE_MASK) + 1),
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
        Ok(display_id(payload))
    }
}

/// The 60-bit payload and its CRC as `XXXXX-XXXXX-XXXXX`.
fn display_id(payload: u64) -> String {
    let word = (u128::from(payload) << CRC_BITS) | u128::from(crc15(payload));
    let symbols: String = (0..ID_SYMBOLS)
        .rev()
        .map(|i| ALPHABET[((word >> (5 * i)) & 31) as usize] as char)
        .collect();
    format!("{}-{}-{}", &symbols[0..5], &symbols[5..10], &symbols[10..15])
}

/// An ID of format 2: it names a credential held by the issuer service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IssuedId {
    /// The issuer's counter, from 1 to [`IssuedId::MAX_SERIAL`].
    pub serial: u32,
    /// Random bits, below 2^28, so that knowing one ID does not reveal its neighbours.
    pub nonce: u32,
}

impl IssuedId {
    /// Serials have 28 bits; 0 is not one.
    pub const MAX_SERIAL: u32 = (1 << ISSUED_FIELD_BITS) - 1;
    /// The nonce bits: `random & NONCE_MASK` is a valid nonce.
    pub const NONCE_MASK: u32 = (1 << ISSUED_FIELD_BITS) - 1;

    /// The ID as people read and type it, `XXXXX-XXXXX-XXXXX`.
    pub fn encode(&self) -> Result<String, CertificateError> {
        if self.serial == 0 || self.serial > Self::MAX_SERIAL || self.nonce > Self::NONCE_MASK {
            return Err(CertificateError::IssuedOutOfRange);
        }
        let payload = (u64::from(ISSUED_FORMAT) << 56) | (u64::from(self.serial) << 28) | u64::from(self.nonce);
        Ok(display_id(payload))
    }
}

/// What an ID of either format names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParsedId {
    /// Format 1: check it with the name, offline ([`verify`]).
    IntegrityOnly(DecodedId),
    /// Format 2: fetch and check the credential from its issuer.
    Issued(IssuedId),
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

/// The payload of an ID as a person might type or paste it: any case, with or without dashes and
/// spaces, anything after a `.` ignored. Checks length, symbols and CRC; accepts any string
/// without panicking.
fn decode_payload(input: &str) -> Result<u64, CertificateError> {
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
    Ok(payload)
}

fn decode_format_one(payload: u64, today: CivilDate) -> Result<DecodedId, CertificateError> {
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
        format: FORMAT,
        quiz_version: ((payload >> 50) & 0x3F) as u8,
        score_percent,
        date,
        tag: (payload & ((1 << TAG_BITS) - 1)) as u32,
    })
}

fn decode_issued(payload: u64) -> Result<IssuedId, CertificateError> {
    let id = IssuedId {
        serial: ((payload >> 28) & u64::from(IssuedId::MAX_SERIAL)) as u32,
        nonce: (payload & u64::from(IssuedId::NONCE_MASK)) as u32,
    };
    if id.serial == 0 {
        return Err(CertificateError::IssuedOutOfRange);
    }
    Ok(id)
}

/// Parses a format-1 ID as a person might type or paste it: any case, with or without dashes and
/// spaces. A format-2 ID is refused with [`CertificateError::CheckWithIssuer`] (use
/// [`parse_id`] for both). Accepts any string without panicking.
pub fn decode(input: &str, today: CivilDate) -> Result<DecodedId, CertificateError> {
    match parse_id(input, today)? {
        ParsedId::IntegrityOnly(decoded) => Ok(decoded),
        ParsedId::Issued(_) => Err(CertificateError::CheckWithIssuer),
    }
}

/// Parses an ID of either format, as typed or pasted; `today` bounds the date of format 1.
/// Accepts any string without panicking.
pub fn parse_id(input: &str, today: CivilDate) -> Result<ParsedId, CertificateError> {
    let payload = decode_payload(input)?;
    match (payload >> 56) as u8 {
        FORMAT => decode_format_one(payload, today).map(ParsedId::IntegrityOnly),
        ISSUED_FORMAT => decode_issued(payload).map(ParsedId::Issued),
        other => Err(CertificateError::UnknownFormat(other)),
    }
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

/// A QR code as its modules: `width` x `width`, row by row, `true` for dark. Drawn on the
/// certificate card and PNG so that a printed certificate leads a phone to its share link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QrModules {
    pub width: usize,
    pub dark: Vec<bool>,
}

impl QrModules {
    pub fn is_dark(&self, x: usize, y: usize) -> bool {
        self.dark.get(y * self.width + x).copied().unwrap_or(false)
    }
}

/// The QR code of `link` (error correction M: a printed card survives a smudge); `None` for a
/// link too long for any QR version, which never happens for the app's share links.
pub fn share_qr(link: &str) -> Option<QrModules> {
    let code = qrcode::QrCode::with_error_correction_level(link.as_bytes(), qrcode::EcLevel::M).ok()?;
    Some(QrModules {
        width: code.width(),
        dark: code.to_colors().into_iter().map(|c| c == qrcode::Color::Dark).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_a_message_in_every_language_that_reads_like_the_english_error() {
        use gradlab_i18n::{Language, Localizer};
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
            CertificateError::CheckWithIssuer,
            CertificateError::IssuedOutOfRange,
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
        for typo in single_symbol_typos(&sample().id().unwrap()) {
            assert_eq!(decode(&typo, TODAY), Err(CertificateError::CheckFailed), "{typo}");
        }
    }

    /// Every ID that differs from `id` in exactly one symbol.
    fn single_symbol_typos(id: &str) -> Vec<String> {
        let symbols: Vec<char> = id.replace('-', "").chars().collect();
        let mut typos = Vec::new();
        for position in 0..symbols.len() {
            for &replacement in ALPHABET {
                let replacement = replacement as char;
                if replacement != symbols[position] {
                    let mut typo = symbols.clone();
                    typo[position] = replacement;
                    typos.push(typo.into_iter().collect());
                }
            }
        }
        typos
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

    #[test]
    fn issued_ids_round_trip_at_the_edges_of_their_fields() {
        for (serial, nonce) in [
            (1, 0),
            (2, 12_345),
            (IssuedId::MAX_SERIAL, IssuedId::NONCE_MASK),
            (4242, 7),
        ] {
            let issued = IssuedId { serial, nonce };
            let id = issued.encode().unwrap();
            assert_eq!(id.len(), ID_SYMBOLS + 2);
            assert_eq!(parse_id(&id, TODAY), Ok(ParsedId::Issued(issued)));
            let loose = format!(" {} ", id.replace('-', "").to_lowercase());
            assert_eq!(parse_id(&loose, TODAY), Ok(ParsedId::Issued(issued)));
        }
        for bad in [
            IssuedId { serial: 0, nonce: 1 },
            IssuedId {
                serial: IssuedId::MAX_SERIAL + 1,
                nonce: 1,
            },
            IssuedId {
                serial: 1,
                nonce: IssuedId::NONCE_MASK + 1,
            },
        ] {
            assert_eq!(bad.encode(), Err(CertificateError::IssuedOutOfRange), "{bad:?}");
        }
        // Serial 0 with a valid CRC is refused when read, too.
        let zero = display_id(u64::from(ISSUED_FORMAT) << 56);
        assert_eq!(parse_id(&zero, TODAY), Err(CertificateError::IssuedOutOfRange));
    }

    #[test]
    fn every_single_symbol_substitution_in_an_issued_id_is_caught() {
        let id = IssuedId {
            serial: 123_456,
            nonce: 0x0ABC_DEF1,
        }
        .encode()
        .unwrap();
        let typos = single_symbol_typos(&id);
        assert_eq!(typos.len(), 15 * 31);
        for typo in typos {
            assert_eq!(parse_id(&typo, TODAY), Err(CertificateError::CheckFailed), "{typo}");
        }
    }

    #[test]
    fn both_formats_are_told_apart_and_format_one_verifies_as_before() {
        let cert = sample();
        let id = cert.id().unwrap();
        match parse_id(&id, TODAY).unwrap() {
            ParsedId::IntegrityOnly(decoded) => assert_eq!(decoded, decode(&id, TODAY).unwrap()),
            ParsedId::Issued(issued) => panic!("format 1 read as {issued:?}"),
        }
        assert_eq!(verify(&id, "Ada Lovelace", TODAY).unwrap(), cert);
        let issued = IssuedId { serial: 7, nonce: 99 }.encode().unwrap();
        assert_eq!(decode(&issued, TODAY), Err(CertificateError::CheckWithIssuer));
        assert_eq!(
            verify(&issued, "Ada Lovelace", TODAY),
            Err(CertificateError::CheckWithIssuer)
        );
        // Formats 0 and 3..15 are still unknown.
        let unknown = display_id(3 << 56 | 1 << 28);
        assert_eq!(parse_id(&unknown, TODAY), Err(CertificateError::UnknownFormat(3)));
        // Pinned: the ID of `sample()` computed outside this code from the documented format-1 layout.
        assert_eq!(id, "21NR5-EKNNM-ECHBK");
        assert_eq!(verify("21NR5-EKNNM-ECHBK", "Ada Lovelace", TODAY).unwrap(), cert);
        assert_eq!(cert.date.to_string(), "2026-11-30");
    }

    proptest! {
        #[test]
        fn decoder_accepts_any_string_without_panicking(input in ".{0,40}") {
            let _ = decode(&input, TODAY);
            let _ = parse_id(&input, TODAY);
            let _ = verify(&input, &input, TODAY);
        }

        #[test]
        fn any_issued_id_round_trips(serial in 1u32..=IssuedId::MAX_SERIAL, nonce in 0u32..=IssuedId::NONCE_MASK) {
            let issued = IssuedId { serial, nonce };
            prop_assert_eq!(parse_id(&issued.encode().unwrap(), TODAY), Ok(ParsedId::Issued(issued)));
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

    /// The QR code reads back as the link: drawn with a quiet zone into a greyscale image, as the
    /// card draws it, and decoded by an independent reader.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn the_share_link_qr_code_reads_back_as_the_link() {
        for link in [
            "https://lab.example.org/?view=verify&id=GAL2-ABCD-EFGH-JKLM-NPQR",
            "http://127.0.0.1:8080/?view=verify&id=7K2Q-9XWM-4TRB&name=Ad%C3%A1%20L%C3%B3pez",
        ] {
            let qr = share_qr(link).unwrap();
            assert_eq!(qr.dark.len(), qr.width * qr.width);
            let (scale, quiet) = (4, 4);
            let side = (qr.width + 2 * quiet) * scale;
            let mut image = rqrr::PreparedImage::prepare_from_greyscale(side, side, |x, y| {
                let (mx, my) = (x / scale, y / scale);
                let inside = (quiet..quiet + qr.width).contains(&mx) && (quiet..quiet + qr.width).contains(&my);
                if inside && qr.is_dark(mx - quiet, my - quiet) {
                    0
                } else {
                    255
                }
            });
            let grids = image.detect_grids();
            assert_eq!(grids.len(), 1, "{link}");
            let (_, content) = grids[0].decode().unwrap();
            assert_eq!(content, link);
        }
    }

    #[test]
    fn dates_read_as_each_language_writes_them() {
        use gradlab_i18n::Language;
        let date = CivilDate {
            year: 2026,
            month: 12,
            day: 6,
        };
        assert_eq!(date.long(Language::English), "6 December 2026");
        assert_eq!(date.long(Language::Spanish), "6 de diciembre de 2026");
        assert_eq!(date.iso(), "2026-12-06", "IDs and credentials keep ISO 8601");
    }

    #[test]
    fn a_kept_certificate_belongs_only_to_its_own_attempt() {
        let kept = |attempt_id: Option<&str>| IssuedCertificate {
            name: "Ada".into(),
            id: "X".into(),
            credential: None,
            attempt_id: attempt_id.map(str::to_string),
        };
        assert!(kept(Some("a")).is_for_attempt(Some("a")));
        assert!(!kept(Some("a")).is_for_attempt(Some("b")));
        assert!(!kept(Some("a")).is_for_attempt(None));
        assert!(!kept(None).is_for_attempt(None));
    }
}
