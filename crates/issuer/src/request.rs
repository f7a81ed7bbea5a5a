//! The issuance request, parsed from untrusted bytes into checked types ("parse, don't
//! validate"): every refusal names the field, and nothing here can panic on any input.

use std::collections::BTreeMap;

use serde_json::Value;

use gradlab_credential::normalize_learner_name;
use gradlab_i18n::Language;
use gradlab_quiz::attempt::{is_attempt_id, Answer};
use gradlab_quiz::bank::{QuestionBank, QuestionKind, ShippedBanks};

/// Largest request body accepted (a full quiz's answers and a name are well under 2 KB).
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// What the browser sends: the bank version, the language, the learner's name and first answers.
#[derive(Debug, Clone, PartialEq)]
pub struct IssueRequest {
    pub bank_version: u8,
    pub language: Language,
    pub name: String,
    pub answers: BTreeMap<String, Answer>,
    /// The attempt's seed (its option order), which the app sends; accepted, never needed to grade.
    pub seed: Option<u64>,
    /// The attempt these answers come from (random, made by the browser when the attempt
    /// starts): one attempt gets one credential, so a second request with it gets the first.
    pub attempt_id: Option<String>,
    /// The course platform and course of an LTI launch (from the session, never the body).
    pub course: Option<gradlab_credential::open_badge::CourseLaunch>,
}

/// A refused request: which field, and why, in words for the developer of a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    pub field: String,
    pub problem: String,
}

fn refuse(field: impl Into<String>, problem: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        problem: problem.into(),
    }
}

const FIELDS: [&str; 6] = ["bank_version", "language", "name", "answers", "seed", "attempt_id"];

impl IssueRequest {
    /// Parses a request body against the bank version it names, one of those the server grades.
    pub fn parse(body: &[u8], banks: &ShippedBanks) -> Result<Self, FieldError> {
        let value: Value = serde_json::from_slice(body).map_err(|e| refuse("body", format!("not valid JSON ({e})")))?;
        let Value::Object(object) = value else {
            return Err(refuse("body", "must be a JSON object"));
        };
        if let Some(unknown) = object.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(refuse(
                clip(unknown),
                format!("unknown field; the fields are {}", FIELDS.join(", ")),
            ));
        }
        let required = |name: &str| object.get(name).ok_or_else(|| refuse(name, "is required"));

        let bank_version = required("bank_version")?
            .as_u64()
            .and_then(|v| u8::try_from(v).ok())
            .ok_or_else(|| refuse("bank_version", "must be a small whole number"))?;
        let bank = banks.get(bank_version).ok_or_else(|| {
            let versions: Vec<String> = banks.versions().iter().map(u8::to_string).collect();
            refuse(
                "bank_version",
                format!(
                    "this issuer grades question bank versions {}, not {bank_version}",
                    versions.join(", ")
                ),
            )
        })?;
        let language = required("language")?
            .as_str()
            .and_then(Language::from_tag)
            .ok_or_else(|| {
                let tags: Vec<&str> = Language::ALL.iter().map(|l| l.tag()).collect();
                refuse("language", format!("must be one of {}", tags.join(", ")))
            })?;
        let name = required("name")?
            .as_str()
            .ok_or_else(|| refuse("name", "must be a string"))
            .and_then(|raw| normalize_learner_name(raw).map_err(|e| refuse("name", e.to_string())))?;
        let seed = match object.get("seed") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .ok_or_else(|| refuse("seed", "must be a whole number >= 0"))?,
            ),
        };
        let attempt_id = match object.get("attempt_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(id)) if is_attempt_id(id) => Some(id.clone()),
            Some(_) => {
                return Err(refuse(
                    "attempt_id",
                    "must be 16 to 64 characters from A-Z, a-z, 0-9, - and _",
                ))
            }
        };
        let Value::Object(raw_answers) = required("answers")? else {
            return Err(refuse("answers", "must be an object from question id to answer"));
        };
        let mut answers = BTreeMap::new();
        for (id, raw) in raw_answers {
            let field = format!("answers.{}", clip(id));
            let question = bank
                .question(id)
                .ok_or_else(|| refuse(&field, "no question has this id in the bank"))?;
            let answer = match (&question.kind, raw) {
                (QuestionKind::Single { .. }, Value::Number(n)) => Answer::Single(
                    index(n).ok_or_else(|| refuse(&field, "must be the index of one option, in the bank's order"))?,
                ),
                (QuestionKind::Multiple { .. }, Value::Array(items)) => Answer::Multiple(
                    items
                        .iter()
                        .map(|item| item.as_number().and_then(index))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| refuse(&field, "must be a list of option indices, in the bank's order"))?,
                ),
                (QuestionKind::Numeric { .. }, Value::Number(n)) => Answer::Numeric(
                    n.as_f64()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| refuse(&field, "must be a finite number"))?,
                ),
                (QuestionKind::Single { .. }, _) => return Err(refuse(&field, "must be one option index")),
                (QuestionKind::Multiple { .. }, _) => return Err(refuse(&field, "must be a list of option indices")),
                (QuestionKind::Numeric { .. }, _) => return Err(refuse(&field, "must be a number")),
            };
            answers.insert(id.clone(), answer);
        }
        Ok(Self {
            bank_version,
            language,
            name,
            answers,
            seed,
            attempt_id,
            course: None,
        })
    }
}

/// A request body that passes: the bank's right answers (examples, the bench, tests).
pub fn passing_request_body(bank: &QuestionBank, name: &str) -> String {
    let answers: serde_json::Map<String, Value> = bank
        .questions
        .iter()
        .map(|q| {
            let answer = match &q.kind {
                QuestionKind::Single { options } => {
                    serde_json::json!(options.iter().position(|o| o.correct).unwrap_or_default())
                }
                QuestionKind::Multiple { options } => serde_json::json!(options
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| o.correct)
                    .map(|(i, _)| i)
                    .collect::<Vec<_>>()),
                QuestionKind::Numeric { answer, .. } => serde_json::json!(answer),
            };
            (q.id.clone(), answer)
        })
        .collect();
    serde_json::json!({"bank_version": bank.version, "language": "en", "name": name, "answers": answers}).to_string()
}

fn index(n: &serde_json::Number) -> Option<usize> {
    n.as_u64().and_then(|v| usize::try_from(v).ok()).filter(|&v| v < 1024)
}

/// Field names echoed back are cut short: a hostile key can be megabytes long.
fn clip(text: &str) -> String {
    let mut clipped: String = text.chars().take(64).collect();
    if clipped.len() < text.len() {
        clipped.push('…');
    }
    clipped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bank() -> QuestionBank {
        QuestionBank::bundled().unwrap()
    }

    fn banks() -> ShippedBanks {
        ShippedBanks::load().unwrap()
    }

    fn field_of(body: &str) -> String {
        IssueRequest::parse(body.as_bytes(), &banks()).unwrap_err().field
    }

    #[test]
    fn a_well_formed_request_parses_into_typed_answers() {
        let bank = bank();
        let ids: Vec<&str> = bank.questions.iter().map(|q| q.id.as_str()).collect();
        let mut answers = serde_json::Map::new();
        for q in &bank.questions {
            let v = match q.kind {
                QuestionKind::Single { .. } => serde_json::json!(0),
                QuestionKind::Multiple { .. } => serde_json::json!([0, 1]),
                QuestionKind::Numeric { .. } => serde_json::json!(2.5),
            };
            answers.insert(q.id.clone(), v);
        }
        let body = serde_json::json!({"bank_version": bank.version, "language": "es", "name": "  Ada \t Lovelace ", "answers": answers, "seed": 7});
        let request = IssueRequest::parse(body.to_string().as_bytes(), &banks()).unwrap();
        assert_eq!(request.name, "Ada Lovelace");
        assert_eq!(request.language, Language::Spanish);
        assert_eq!(request.answers.len(), ids.len());
        assert_eq!(request.seed, Some(7));
        assert_eq!(request.attempt_id, None);
    }

    #[test]
    fn an_attempt_id_is_16_to_64_url_safe_characters() {
        let bank = bank();
        let with = |id: Value| {
            let mut body: Value = serde_json::from_str(&passing_request_body(&bank, "Ada")).unwrap();
            body["attempt_id"] = id;
            IssueRequest::parse(body.to_string().as_bytes(), &banks())
        };
        let id = "Ab-_0123456789xyz";
        assert_eq!(with(id.into()).unwrap().attempt_id.as_deref(), Some(id));
        assert_eq!(with(Value::Null).unwrap().attempt_id, None);
        assert!(with("x".repeat(64).into()).is_ok());
        for bad in [
            serde_json::json!("x".repeat(15)),
            serde_json::json!("x".repeat(65)),
            serde_json::json!("has space in it 123"),
            serde_json::json!("slash/slash/slash/"),
            serde_json::json!("ñññññññññññññññññ"),
            serde_json::json!(12345678901234567u64),
        ] {
            assert_eq!(with(bad.clone()).unwrap_err().field, "attempt_id", "{bad}");
        }
    }

    /// An attempt begun before the quiz gained questions is graded by the version it was asked
    /// in: its answers are whole there, and the new questions are unknown to it.
    #[test]
    fn each_shipped_version_is_parsed_with_its_own_questions() {
        let banks = banks();
        assert!(banks.versions().len() >= 2, "{:?}", banks.versions());
        for version in banks.versions() {
            let bank = banks.get(version).unwrap();
            let request = IssueRequest::parse(passing_request_body(bank, "Ada").as_bytes(), &banks).unwrap();
            assert_eq!(request.bank_version, version);
            assert_eq!(request.answers.len(), bank.questions.len());
        }
        let (old, new) = (banks.get(1).unwrap(), banks.current());
        let added = new.questions.iter().find(|q| old.question(&q.id).is_none()).unwrap();
        let body =
            serde_json::json!({"bank_version": 1, "language": "en", "name": "A", "answers": {added.id.clone(): 0}});
        assert_eq!(
            IssueRequest::parse(body.to_string().as_bytes(), &banks)
                .unwrap_err()
                .field,
            format!("answers.{}", added.id)
        );
    }

    #[test]
    fn each_bad_field_is_named() {
        assert_eq!(field_of("[]"), "body");
        assert_eq!(field_of("{"), "body");
        assert_eq!(
            field_of(r#"{"bank_version":1,"language":"en","name":"A","answers":{},"score":100}"#),
            "score"
        );
        assert_eq!(field_of(r#"{"language":"en","name":"A","answers":{}}"#), "bank_version");
        assert_eq!(
            field_of(r#"{"bank_version":99,"language":"en","name":"A","answers":{}}"#),
            "bank_version"
        );
        assert_eq!(
            field_of(r#"{"bank_version":1,"language":"fr","name":"A","answers":{}}"#),
            "language"
        );
        assert_eq!(
            field_of(r#"{"bank_version":1,"language":"en","name":"","answers":{}}"#),
            "name"
        );
        assert_eq!(
            field_of(r#"{"bank_version":1,"language":"en","name":"A\u0007","answers":{}}"#),
            "name"
        );
        assert_eq!(
            field_of(r#"{"bank_version":1,"language":"en","name":"A","answers":[]}"#),
            "answers"
        );
        assert_eq!(
            field_of(r#"{"bank_version":1,"language":"en","name":"A","answers":{"nope":1}}"#),
            "answers.nope"
        );
        let long = "x".repeat(100_000);
        let field = field_of(&format!(r#"{{"{long}":1}}"#));
        assert!(field.chars().count() <= 65, "a long key is clipped");
    }

    #[test]
    fn answers_of_the_wrong_shape_name_their_question() {
        let bank = bank();
        for q in &bank.questions {
            let wrong = match q.kind {
                QuestionKind::Single { .. } => "[1]",
                QuestionKind::Multiple { .. } => "1",
                QuestionKind::Numeric { .. } => "\"3\"",
            };
            let body = format!(
                r#"{{"bank_version":{},"language":"en","name":"A","answers":{{"{}":{wrong}}}}}"#,
                bank.version, q.id
            );
            assert_eq!(field_of(&body), format!("answers.{}", q.id));
        }
    }
}
