//! The quiz result as an Open Badges 3.0 `OpenBadgeCredential` (1EdTech, a W3C Verifiable
//! Credential Data Model 2.0 credential), unsigned; [`super::proof::sign`] secures it. And the
//! reverse: [`CredentialSummary`] reads back the facts a person checking one wants to see.
//!
//! The texts (credential and achievement names, criteria) are written in the learner's language
//! at issue and signed as they are, so every credential carries its `inLanguage`.

use serde_json::{json, Value};
use thiserror::Error;

use super::name::normalize_learner_name;
use super::status_list::{StatusEntry, CREDENTIALS_V2_CONTEXT};
use super::CredentialError;
use gradlab_i18n::{Language, Localizer, Msg};
use gradlab_quiz::bank::{BankError, QuestionBank};
use gradlab_quiz::certificate::CivilDate;

/// The Open Badges 3.0 JSON-LD context (3.0.3, the current release of the 3.0 context).
pub const OPEN_BADGES_CONTEXT: &str = "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json";
pub const CREDENTIAL_TYPE: &str = "OpenBadgeCredential";
/// The fragment of the score's `ResultDescription` inside the achievement.
const SCORE_FRAGMENT: &str = "#score";

/// What the issuer knows when it issues: who, what score, which quiz, when, and where the
/// credential's revocation bit is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialInput {
    /// Where the credential is served, `<public url>/api/credentials/<short id>`; its `id`.
    pub credential_url: String,
    /// The issuer's public URL (its profile `url`, and the base of achievement ids).
    pub public_url: String,
    pub issuer_did: String,
    pub issuer_name: String,
    /// As typed; normalized with [`normalize_learner_name`] before it is signed.
    pub subject_name: String,
    /// `first_try_correct * 100 / total`, rounded down as the quiz does.
    pub score_percent: u8,
    pub first_try_correct: usize,
    pub total: usize,
    pub bank_version: u8,
    pub language: Language,
    pub valid_from_rfc3339: String,
    pub status: StatusEntry,
    /// The course the quiz was taken in, when a course platform launched it (LTI 1.3) and
    /// named the learner: the credential says so in its `evidence`.
    pub course: Option<CourseLaunch>,
}

/// Where an LTI launch came from: the platform that signed the learner in, and the course.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CourseLaunch {
    /// The platform's name as it gave it (`tool_platform.name`), else its issuer URL.
    pub platform_name: String,
    /// The platform's issuer URL (its identity in LTI).
    pub platform_id: String,
    /// The course's title (empty when the platform sent none).
    pub course_title: String,
}

/// Text a course platform sent (a course title, its own name) as a credential states it: in
/// quotation marks, isolated, with no control or text-direction characters (they could make
/// the signed text read differently from what it says), at most 200 characters.
fn platform_text(text: &str) -> String {
    const DIRECTION_CONTROLS: [char; 12] = [
        '\u{061C}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}',
        '\u{2067}', '\u{2068}', '\u{2069}',
    ];
    let clean: String = text
        .chars()
        .filter(|c| !c.is_control() && !DIRECTION_CONTROLS.contains(c))
        .take(200)
        .collect();
    format!("\u{2068}“{}”\u{2069}", clean.trim())
}

/// One `evidence` entry of a credential, as written (in the credential's language).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceSummary {
    pub name: String,
    pub description: String,
}

fn invalid(field: &'static str, reason: impl Into<String>) -> CredentialError {
    CredentialError::InvalidInput {
        field,
        reason: reason.into(),
    }
}

pub(super) fn is_rfc3339(text: &str) -> bool {
    parse_rfc3339(text).is_some()
}

fn parse_rfc3339(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

fn is_http_url(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")) && !text.contains(char::is_whitespace)
}

/// The id of the achievement "passed quiz version N" at this issuer.
pub fn achievement_id(public_url: &str, bank_version: u8) -> String {
    format!("{}/achievements/quiz-v{bank_version}", public_url.trim_end_matches('/'))
}

/// The unsigned `OpenBadgeCredential` for a passed quiz. Refuses input that would make a
/// credential claim something the quiz did not establish (a score that does not follow from the
/// counts, a score below the pass mark, a quiz version that never shipped).
pub fn unsigned_credential(input: &CredentialInput) -> Result<Value, CredentialError> {
    let subject_name =
        normalize_learner_name(&input.subject_name).map_err(|e| invalid("subject_name", e.to_string()))?;
    let issuer_name = input.issuer_name.trim();
    if issuer_name.is_empty() {
        return Err(invalid("issuer_name", "must not be empty"));
    }
    if !input.issuer_did.starts_with("did:") {
        return Err(invalid("issuer_did", "must be a DID (did:...)"));
    }
    for (field, url) in [
        ("credential_url", &input.credential_url),
        ("public_url", &input.public_url),
        ("status.list_url", &input.status.list_url),
    ] {
        if !is_http_url(url) {
            return Err(invalid(field, format!("\"{url}\" is not an http(s) URL")));
        }
    }
    if !is_rfc3339(&input.valid_from_rfc3339) {
        return Err(invalid("valid_from_rfc3339", "must be an RFC 3339 date and time"));
    }
    let bank = match QuestionBank::shipped(input.bank_version, Language::English) {
        Ok(bank) => bank,
        Err(BankError::UnknownVersion(version)) => {
            let versions: Vec<String> = QuestionBank::shipped_versions().map(|v| v.to_string()).collect();
            return Err(invalid(
                "bank_version",
                format!(
                    "no quiz version {version} has shipped (versions: {})",
                    versions.join(", ")
                ),
            ));
        }
        Err(e) => return Err(CredentialError::Bank(e.to_string())),
    };
    if input.total != bank.questions.len() || input.first_try_correct > input.total {
        return Err(invalid(
            "total",
            format!(
                "{} of {} first-try answers do not fit the {} questions of the quiz",
                input.first_try_correct,
                input.total,
                bank.questions.len()
            ),
        ));
    }
    let score_percent = 100 * input.first_try_correct / input.total;
    if usize::from(input.score_percent) != score_percent {
        return Err(invalid(
            "score_percent",
            format!(
                "{} % does not follow from the counts ({score_percent} %)",
                input.score_percent
            ),
        ));
    }
    if (input.first_try_correct as f64) < bank.pass_threshold * input.total as f64 - 1e-9 {
        return Err(invalid(
            "score_percent",
            "below the pass mark: there is nothing to certify",
        ));
    }
    let pass_mark_percent = (bank.pass_threshold * 100.0).round();

    let localizer = Localizer::new(input.language).map_err(|e| CredentialError::Messages(e.to_string()))?;
    let text = |msg: Msg| localizer.msg(&msg);
    let version = input.bank_version;
    let achievement = achievement_id(&input.public_url, version);
    let evidence = match &input.course {
        Some(course) => {
            let (platform, course_title) = (course.platform_name.trim(), course.course_title.trim());
            if platform.is_empty() || !is_http_url(&course.platform_id) {
                return Err(invalid(
                    "course",
                    "a course launch names its platform and its issuer URL",
                ));
            }
            let name = if course_title.is_empty() {
                text(Msg::new("badge-evidence-platform").arg("platform", platform_text(platform)))
            } else {
                text(Msg::new("badge-evidence-course").arg("course", platform_text(course_title)))
            };
            vec![json!({
                "type": ["Evidence"],
                "name": name,
                "description": text(
                    Msg::new("badge-evidence-description")
                        .arg("name", &subject_name)
                        .arg("platform", platform_text(platform))
                        .arg("url", &course.platform_id)
                ),
                "genre": "LTI 1.3 launch",
            })]
        }
        None => Vec::new(),
    };
    let mut credential = json!({
        "@context": [CREDENTIALS_V2_CONTEXT, OPEN_BADGES_CONTEXT],
        "id": input.credential_url,
        "type": ["VerifiableCredential", CREDENTIAL_TYPE],
        "name": text(Msg::new("badge-credential-name")),
        "description": text(
            Msg::new("badge-credential-description")
                .arg("name", &subject_name)
                .arg("correct", input.first_try_correct)
                .arg("total", input.total)
                .arg("score", input.score_percent)
                .arg("version", version)
        ),
        "issuer": {
            "id": input.issuer_did,
            "type": ["Profile"],
            "name": issuer_name,
            "url": input.public_url,
        },
        "validFrom": input.valid_from_rfc3339,
        "credentialSubject": {
            "type": ["AchievementSubject"],
            "identifier": [{
                "type": "IdentityObject",
                "identityHash": subject_name,
                "identityType": "name",
                "hashed": false,
            }],
            "achievement": {
                "id": achievement,
                "type": ["Achievement"],
                "achievementType": "Assessment",
                "name": text(Msg::new("badge-achievement-name").arg("version", version)),
                "description": text(Msg::new("badge-achievement-description")),
                "criteria": {
                    "narrative": text(
                        Msg::new("badge-criteria")
                            .arg("total", bank.questions.len())
                            .arg("version", version)
                            .arg("needed", pass_mark_percent)
                    ),
                },
                "version": version.to_string(),
                "inLanguage": input.language.tag(),
                "resultDescription": [{
                    "id": format!("{achievement}{SCORE_FRAGMENT}"),
                    "type": ["ResultDescription"],
                    "name": text(Msg::new("badge-result-name")),
                    "resultType": "Percent",
                    "requiredValue": pass_mark_percent.to_string(),
                }],
            },
            "result": [{
                "type": ["Result"],
                "resultDescription": format!("{achievement}{SCORE_FRAGMENT}"),
                "value": input.score_percent.to_string(),
            }],
        },
        "credentialStatus": input.status.to_json(),
    });
    if !evidence.is_empty() {
        credential["evidence"] = json!(evidence);
    }
    Ok(credential)
}

/// A credential that is not one of ours in shape; `field` is the JSON path of the first member
/// that is missing or malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("the credential's {field} is missing or malformed")]
pub struct SummaryError {
    pub field: &'static str,
}

/// What a credential states, read from its JSON (this checks shape, not the signature: see
/// [`super::verify::verify_credential`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialSummary {
    /// The credential's `id`, the URL it is served at.
    pub credential_id: String,
    pub issuer_did: String,
    pub issuer_name: String,
    pub subject_name: String,
    pub score_percent: u8,
    pub valid_from_rfc3339: String,
    /// The date of `validFrom`, as written (in its own time zone).
    pub valid_from_date: CivilDate,
    pub quiz_version: u8,
    pub achievement_name: String,
    pub status: StatusEntry,
    /// What the credential gives as evidence (a course launch), in its own words.
    pub evidence: Vec<EvidenceSummary>,
}

fn text_at<'a>(value: &'a Value, pointer: &str, field: &'static str) -> Result<&'a str, SummaryError> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|text| !text.trim().is_empty())
        .ok_or(SummaryError { field })
}

fn array_has(value: &Value, pointer: &str, wanted: &str) -> bool {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .is_some_and(|items| items.iter().any(|item| item == wanted))
}

impl CredentialSummary {
    pub fn from_json(credential: &Value) -> Result<Self, SummaryError> {
        let malformed = |field| SummaryError { field };
        if credential.pointer("/@context/0").and_then(Value::as_str) != Some(CREDENTIALS_V2_CONTEXT) {
            return Err(malformed("@context"));
        }
        if !array_has(credential, "/type", "VerifiableCredential") || !array_has(credential, "/type", CREDENTIAL_TYPE) {
            return Err(malformed("type"));
        }
        let credential_id = text_at(credential, "/id", "id")?;
        let issuer_did = text_at(credential, "/issuer/id", "issuer.id")?;
        if !issuer_did.starts_with("did:") {
            return Err(malformed("issuer.id"));
        }
        let issuer_name = text_at(credential, "/issuer/name", "issuer.name")?;
        let valid_from = text_at(credential, "/validFrom", "validFrom")?;
        let date = parse_rfc3339(valid_from).ok_or(malformed("validFrom"))?.date();
        let valid_from_date = CivilDate {
            year: date.year(),
            month: u32::from(u8::from(date.month())),
            day: u32::from(date.day()),
        };

        let subject = credential
            .get("credentialSubject")
            .ok_or(malformed("credentialSubject"))?;
        let subject_name = subject
            .get("identifier")
            .and_then(Value::as_array)
            .and_then(|identifiers| {
                identifiers.iter().find(|identity| {
                    identity.get("type").and_then(Value::as_str) == Some("IdentityObject")
                        && identity.get("identityType").and_then(Value::as_str) == Some("name")
                        && identity.get("hashed").and_then(Value::as_bool) == Some(false)
                })
            })
            .and_then(|identity| identity.get("identityHash").and_then(Value::as_str))
            // A name that is not in its signed form (extra spaces, direction controls) is refused
            // rather than shown, so that no credential can display differently from what it says.
            .filter(|name| normalize_learner_name(name).is_ok_and(|normalized| normalized == *name))
            .ok_or(malformed("credentialSubject.identifier"))?;

        let achievement_id = text_at(subject, "/achievement/id", "credentialSubject.achievement.id")?;
        let achievement_name = text_at(subject, "/achievement/name", "credentialSubject.achievement.name")?;
        let quiz_version = text_at(subject, "/achievement/version", "credentialSubject.achievement.version")?
            .parse::<u8>()
            .ok()
            .filter(|version| (1..64).contains(version))
            .ok_or(malformed("credentialSubject.achievement.version"))?;
        let score_description = format!("{achievement_id}{SCORE_FRAGMENT}");
        let score_percent = subject
            .get("result")
            .and_then(Value::as_array)
            .and_then(|results| {
                results
                    .iter()
                    .find(|result| result.get("resultDescription").and_then(Value::as_str) == Some(&score_description))
            })
            .and_then(|result| result.get("value").and_then(Value::as_str))
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u8>().ok())
            .filter(|score| *score <= 100)
            .ok_or(malformed("credentialSubject.result"))?;

        let status = credential
            .get("credentialStatus")
            .ok_or(malformed("credentialStatus"))
            .and_then(|status| StatusEntry::from_json(status).map_err(malformed))?;

        // Evidence is optional; an entry is shown only when it reads as one (a name and a
        // description, both text), never half.
        let evidence = credential
            .get("evidence")
            .and_then(Value::as_array)
            .map(|entries| {
                entries
                    .iter()
                    .filter_map(|entry| {
                        let name = entry.get("name").and_then(Value::as_str)?.trim();
                        let description = entry.get("description").and_then(Value::as_str)?.trim();
                        (!name.is_empty() && !description.is_empty()).then(|| EvidenceSummary {
                            name: name.to_string(),
                            description: description.to_string(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();

        Ok(Self {
            evidence,
            credential_id: credential_id.to_string(),
            issuer_did: issuer_did.to_string(),
            issuer_name: issuer_name.to_string(),
            subject_name: subject_name.to_string(),
            score_percent,
            valid_from_rfc3339: valid_from.to_string(),
            valid_from_date,
            quiz_version,
            achievement_name: achievement_name.to_string(),
            status,
        })
    }
}

/// A credential's input as the tests of this crate and of the verifier use it (feature
/// `test-support`, never in the app's build).
#[cfg(any(test, feature = "test-support"))]
#[allow(
    clippy::expect_used,
    reason = "test data: the bundled bank is checked by its own tests"
)]
pub mod test_support {
    use super::*;

    pub fn input(language: Language) -> CredentialInput {
        let bank = QuestionBank::bundled().expect("the bundled bank parses");
        let total = bank.questions.len();
        let first_try_correct = total - 1;
        CredentialInput {
            credential_url: "https://lab.example.org/api/credentials/2ABCD-EFGHJ-KMNPQ".into(),
            public_url: "https://lab.example.org/".into(),
            issuer_did: "did:web:lab.example.org".into(),
            issuer_name: "Gradient Accumulation Lab".into(),
            subject_name: "  Ada   Lovelace ".into(),
            score_percent: (100 * first_try_correct / total) as u8,
            first_try_correct,
            total,
            bank_version: bank.version,
            language,
            valid_from_rfc3339: "2026-11-30T23:30:00+01:00".into(),
            status: StatusEntry {
                list_url: "https://lab.example.org/api/status/1".into(),
                index: 41,
            },
            course: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::input;
    use super::*;

    #[test]
    fn the_credential_has_the_open_badges_shape() {
        let input = input(Language::English);
        let credential = unsigned_credential(&input).unwrap();
        assert_eq!(credential["@context"][0], "https://www.w3.org/ns/credentials/v2");
        assert_eq!(credential["@context"][1], OPEN_BADGES_CONTEXT);
        assert_eq!(
            credential["type"],
            json!(["VerifiableCredential", "OpenBadgeCredential"])
        );
        assert_eq!(credential["id"], input.credential_url.as_str());
        assert_eq!(credential["issuer"]["type"], json!(["Profile"]));
        assert_eq!(credential["issuer"]["id"], "did:web:lab.example.org");
        let subject = &credential["credentialSubject"];
        assert_eq!(subject["type"], json!(["AchievementSubject"]));
        assert_eq!(subject["identifier"][0]["identityHash"], "Ada Lovelace");
        assert_eq!(subject["identifier"][0]["hashed"], false);
        let achievement = &subject["achievement"];
        let version = input.bank_version;
        assert_eq!(
            achievement["id"],
            format!("https://lab.example.org/achievements/quiz-v{version}")
        );
        assert_eq!(achievement["achievementType"], "Assessment");
        assert_eq!(achievement["version"], version.to_string());
        assert_eq!(achievement["inLanguage"], "en");
        assert_eq!(achievement["resultDescription"][0]["requiredValue"], "80");
        assert_eq!(achievement["resultDescription"][0]["resultType"], "Percent");
        assert_eq!(
            subject["result"][0]["resultDescription"],
            format!("https://lab.example.org/achievements/quiz-v{version}#score")
        );
        assert_eq!(subject["result"][0]["value"], input.score_percent.to_string());
        assert_eq!(credential["credentialStatus"], input.status.to_json());
        // Every text is a real message, not a missing id.
        for text in [
            &credential["name"],
            &credential["description"],
            &achievement["name"],
            &achievement["description"],
            &achievement["criteria"]["narrative"],
            &achievement["resultDescription"][0]["name"],
        ] {
            let text = text.as_str().unwrap();
            assert!(!text.is_empty() && !text.starts_with('['), "{text}");
        }
        assert!(credential["description"].as_str().unwrap().contains("Ada Lovelace"));
    }

    #[test]
    fn texts_follow_the_language_and_facts_do_not() {
        let english = unsigned_credential(&input(Language::English)).unwrap();
        let spanish = unsigned_credential(&input(Language::Spanish)).unwrap();
        assert_ne!(english["name"], spanish["name"]);
        assert_ne!(
            english["credentialSubject"]["achievement"]["criteria"],
            spanish["credentialSubject"]["achievement"]["criteria"]
        );
        assert_eq!(spanish["credentialSubject"]["achievement"]["inLanguage"], "es");
        let en = CredentialSummary::from_json(&english).unwrap();
        let es = CredentialSummary::from_json(&spanish).unwrap();
        assert_eq!(
            (en.score_percent, en.quiz_version, &en.subject_name, en.valid_from_date),
            (es.score_percent, es.quiz_version, &es.subject_name, es.valid_from_date)
        );
    }

    #[test]
    fn dishonest_or_broken_input_is_refused_with_the_field() {
        let field_of = |change: fn(&mut CredentialInput)| {
            let mut input = input(Language::English);
            change(&mut input);
            match unsigned_credential(&input) {
                Err(CredentialError::InvalidInput { field, .. }) => field,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(field_of(|i| i.subject_name = " ".into()), "subject_name");
        assert_eq!(field_of(|i| i.subject_name = "a\u{202E}b".into()), "subject_name");
        assert_eq!(field_of(|i| i.issuer_name = "".into()), "issuer_name");
        assert_eq!(field_of(|i| i.issuer_did = "https://x".into()), "issuer_did");
        assert_eq!(field_of(|i| i.credential_url = "ftp://x".into()), "credential_url");
        assert_eq!(
            field_of(|i| i.status.list_url = "/api/status/1".into()),
            "status.list_url"
        );
        assert_eq!(
            field_of(|i| i.valid_from_rfc3339 = "2026-11-30".into()),
            "valid_from_rfc3339"
        );
        assert_eq!(field_of(|i| i.bank_version = 9), "bank_version");
        assert_eq!(field_of(|i| i.total = 0), "total");
        assert_eq!(field_of(|i| i.first_try_correct = i.total + 1), "total");
        assert_eq!(field_of(|i| i.score_percent = 100), "score_percent");
        assert_eq!(
            field_of(|i| {
                i.first_try_correct = 1;
                i.score_percent = (100 / i.total) as u8;
            }),
            "score_percent"
        );
    }

    /// A credential for an attempt at an older quiz version counts that version's questions:
    /// the issuer certifies attempts begun before an update.
    #[test]
    fn an_older_quiz_version_is_certified_with_its_own_questions() {
        let current = QuestionBank::bundled().unwrap();
        let first = QuestionBank::shipped(1, Language::English).unwrap();
        assert!(first.questions.len() < current.questions.len());
        let mut old = input(Language::English);
        old.bank_version = 1;
        old.total = first.questions.len();
        old.first_try_correct = old.total;
        old.score_percent = 100;
        let credential = unsigned_credential(&old).unwrap();
        let achievement = &credential["credentialSubject"]["achievement"];
        assert_eq!(achievement["id"], "https://lab.example.org/achievements/quiz-v1");
        assert!(achievement["criteria"]["narrative"]
            .as_str()
            .unwrap()
            .contains(&first.questions.len().to_string()));
        // The current version's count does not fit version 1.
        old.total = current.questions.len();
        old.first_try_correct = old.total;
        assert!(matches!(
            unsigned_credential(&old),
            Err(CredentialError::InvalidInput { field, .. }) if field == "total"
        ));
    }

    #[test]
    fn the_summary_reads_what_was_built() {
        let input = input(Language::Spanish);
        let summary = CredentialSummary::from_json(&unsigned_credential(&input).unwrap()).unwrap();
        assert_eq!(summary.credential_id, input.credential_url);
        assert_eq!(summary.issuer_did, input.issuer_did);
        assert_eq!(summary.issuer_name, input.issuer_name);
        assert_eq!(summary.subject_name, "Ada Lovelace");
        assert_eq!(summary.score_percent, input.score_percent);
        assert_eq!(summary.valid_from_rfc3339, input.valid_from_rfc3339);
        // The date as written (23:30 at +01:00 is still the 30th there).
        assert_eq!(summary.valid_from_date.to_string(), "2026-11-30");
        assert_eq!(summary.quiz_version, input.bank_version);
        assert_eq!(summary.status, input.status);
        assert!(!summary.achievement_name.is_empty());
        assert_eq!(summary.evidence, vec![], "no course: no evidence");
    }

    #[test]
    fn a_course_launch_is_evidence_naming_the_platform_and_the_course() {
        let course = CourseLaunch {
            platform_name: "Moodle of Example U".into(),
            platform_id: "https://moodle.example.edu".into(),
            course_title: "Fine-tuning 101".into(),
        };
        let input = CredentialInput {
            course: Some(course.clone()),
            ..input(Language::English)
        };
        let credential = unsigned_credential(&input).unwrap();
        let evidence = &credential["evidence"][0];
        assert_eq!(evidence["type"], json!(["Evidence"]));
        assert_eq!(evidence["genre"], "LTI 1.3 launch");
        let summary = CredentialSummary::from_json(&credential).unwrap();
        assert_eq!(summary.evidence.len(), 1);
        assert!(
            summary.evidence[0].name.contains("Fine-tuning 101"),
            "{:?}",
            summary.evidence
        );
        let description = &summary.evidence[0].description;
        assert!(
            description.contains("Ada Lovelace") && description.contains("Moodle of Example U"),
            "{description}"
        );
        assert!(description.contains("https://moodle.example.edu"), "{description}");
        // Without a course title the platform names it; in Spanish, in Spanish.
        let spanish = unsigned_credential(&CredentialInput {
            course: Some(CourseLaunch {
                course_title: " ".into(),
                ..course.clone()
            }),
            ..input.clone()
        })
        .unwrap();
        assert!(spanish["evidence"][0]["name"]
            .as_str()
            .unwrap()
            .contains("Moodle of Example U"));
        // A launch must name its platform.
        let nameless = CredentialInput {
            course: Some(CourseLaunch {
                platform_id: "not a url".into(),
                ..course
            }),
            ..input
        };
        assert!(matches!(
            unsigned_credential(&nameless),
            Err(CredentialError::InvalidInput { field: "course", .. })
        ));
        // Half an evidence entry is not shown.
        let mut half = credential.clone();
        half["evidence"][0].as_object_mut().unwrap().remove("description");
        assert_eq!(CredentialSummary::from_json(&half).unwrap().evidence, vec![]);
    }

    #[test]
    fn the_summary_names_the_first_bad_field() {
        let credential = unsigned_credential(&input(Language::English)).unwrap();
        let field_after = |pointer: &str, value: Value| {
            let mut changed = credential.clone();
            *changed.pointer_mut(pointer).unwrap() = value;
            CredentialSummary::from_json(&changed).unwrap_err().field
        };
        assert_eq!(
            field_after("/@context/0", json!("https://www.w3.org/2018/credentials/v1")),
            "@context"
        );
        assert_eq!(field_after("/type/1", json!("AlumniCredential")), "type");
        assert_eq!(field_after("/id", json!(7)), "id");
        assert_eq!(field_after("/issuer", json!("did:web:lab.example.org")), "issuer.id");
        assert_eq!(field_after("/issuer/id", json!("https://lab.example.org")), "issuer.id");
        assert_eq!(field_after("/issuer/name", json!(" ")), "issuer.name");
        assert_eq!(field_after("/validFrom", json!("yesterday")), "validFrom");
        assert_eq!(
            field_after("/credentialSubject/identifier/0/identityHash", json!("Ada  Lovelace")),
            "credentialSubject.identifier"
        );
        assert_eq!(
            field_after("/credentialSubject/identifier/0/hashed", json!(true)),
            "credentialSubject.identifier"
        );
        assert_eq!(
            field_after("/credentialSubject/achievement/version", json!("v1")),
            "credentialSubject.achievement.version"
        );
        assert_eq!(
            field_after("/credentialSubject/result/0/value", json!("101")),
            "credentialSubject.result"
        );
        assert_eq!(
            field_after("/credentialSubject/result/0/value", json!(87)),
            "credentialSubject.result"
        );
        assert_eq!(
            field_after("/credentialSubject/result/0/resultDescription", json!("#other")),
            "credentialSubject.result"
        );
        assert_eq!(
            field_after("/credentialStatus/statusListIndex", json!("x")),
            "credentialStatus.statusListIndex"
        );
        assert_eq!(field_after("/credentialStatus", json!(null)), "credentialStatus.type");
        assert_eq!(
            CredentialSummary::from_json(&json!({})).unwrap_err().to_string(),
            "the credential's @context is missing or malformed"
        );
    }
}
