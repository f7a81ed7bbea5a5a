//! Asking the issuer for a signed certificate: the request built from the attempt's first
//! answers, and the issuer's HTTP reply mapped to what the quiz page shows. Plain Rust, tested
//! natively; the web layer only sends the body and hands back the status and the text.
//!
//! The issuer grades the answers itself (it never trusts a client's score), so the request
//! carries only what was answered first; a question without a recorded first answer is left
//! out and counts as unanswered.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::attempt::Answer;
use super::certificate::{normalize_name, Certificate, CertificateError, IssuedCertificate};
use gradlab_i18n::{Language, Msg};

/// The path of the issuance route, relative to the app's directory.
pub const ISSUE_PATH: &str = "api/credentials";

/// An HTTP reply as the browser got it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    /// `Retry-After` in seconds, when the reply had one the page could read.
    pub retry_after_secs: Option<u64>,
}

/// One answer in the wire form: an option index, a list of them (both in the bank's order), or
/// a number. A number that JSON cannot hold (never graded, so never recorded) is left out.
fn answer_value(answer: &Answer) -> Option<Value> {
    match answer {
        Answer::Single(i) => Some(json!(i)),
        Answer::Multiple(list) => Some(json!(list)),
        Answer::Numeric(x) => serde_json::Number::from_f64(*x).map(Value::Number),
    }
}

/// The body of `POST api/credentials`.
pub fn request_body(
    bank_version: u8,
    language: Language,
    name: &str,
    first_answers: &BTreeMap<String, Answer>,
    seed: u64,
    attempt_id: Option<&str>,
) -> String {
    let answers: Map<String, Value> = first_answers
        .iter()
        .filter_map(|(id, answer)| Some((id.clone(), answer_value(answer)?)))
        .collect();
    let mut body = json!({
        "bank_version": bank_version,
        "language": language.tag(),
        "name": name,
        "answers": answers,
        "seed": seed,
    });
    if let Some(attempt_id) = attempt_id {
        body["attempt_id"] = json!(attempt_id);
    }
    body.to_string()
}

/// A credential the issuer signed, as its `201 Created` reply carries it (or its `200 OK`,
/// when the attempt had one already).
#[derive(Debug, Clone, PartialEq)]
pub struct Issued {
    /// The short ID (`XXXXX-XXXXX-XXXXX`) that names the credential at the issuer.
    pub id: String,
    pub share_url: Option<String>,
    pub credential: Value,
}

/// What came of a request for a signed certificate.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Issued(Issued),
    /// The issuer's own grading says the answers do not pass (422).
    NotPassed {
        score_percent: Option<u64>,
    },
    /// The issuer refused the request as malformed (400, 413, 415); `detail` is its words.
    Refused {
        detail: String,
    },
    /// Too many requests from this address (429).
    RateLimited {
        retry_after_secs: Option<u64>,
    },
    /// No issuer answered: a network error, no such route (the app served statically), a
    /// server error, or a reply that is not the issuer's. `reason` is language-neutral
    /// (`HTTP 503`, or the browser's own error text).
    Unreachable {
        reason: String,
    },
}

fn problem_detail(body: &Value) -> Option<String> {
    body.get("detail").and_then(Value::as_str).map(str::to_string)
}

/// Seconds to wait, from the header or else from the problem's detail ("… in 12 s").
fn retry_seconds(reply: &Reply, body: &Value) -> Option<u64> {
    reply.retry_after_secs.or_else(|| {
        let detail = problem_detail(body)?;
        let before_unit = detail.rsplit_once(" s")?.0;
        before_unit.rsplit(' ').next()?.parse().ok()
    })
}

impl Outcome {
    /// Maps the reply (or the browser's error) to an outcome; any input gives one, never a panic.
    pub fn from_reply(reply: Result<Reply, String>) -> Self {
        let reply = match reply {
            Ok(reply) => reply,
            Err(reason) => return Outcome::Unreachable { reason },
        };
        let body: Value = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
        let is_problem = body.get("code").and_then(Value::as_str).is_some();
        let http = || Outcome::Unreachable {
            reason: format!("HTTP {}", reply.status),
        };
        match reply.status {
            // 200: the attempt had a credential already, which the issuer gives again.
            200 | 201 => {
                let id = body
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.trim().is_empty());
                let credential = body.get("credential").filter(|c| c.is_object());
                match (id, credential) {
                    (Some(id), Some(credential)) => Outcome::Issued(Issued {
                        id: id.to_string(),
                        share_url: body.get("share_url").and_then(Value::as_str).map(str::to_string),
                        credential: credential.clone(),
                    }),
                    _ => http(),
                }
            }
            422 if body.get("code").and_then(Value::as_str) == Some("not-passed") => Outcome::NotPassed {
                score_percent: body.get("score_percent").and_then(Value::as_u64),
            },
            400 | 413 | 415 | 422 if is_problem => Outcome::Refused {
                detail: problem_detail(&body).unwrap_or_else(|| format!("HTTP {}", reply.status)),
            },
            429 => Outcome::RateLimited {
                retry_after_secs: retry_seconds(&reply, &body),
            },
            _ => http(),
        }
    }

    /// What the page says about an outcome other than `Issued` (`None` for `Issued`).
    pub fn message(&self) -> Option<Msg> {
        Some(match self {
            Outcome::Issued(_) => return None,
            Outcome::NotPassed {
                score_percent: Some(percent),
            } => Msg::new("issue-not-passed").arg("percent", percent),
            Outcome::NotPassed { score_percent: None } => Msg::new("issue-not-passed-no-score"),
            Outcome::Refused { detail } => Msg::new("issue-refused").arg("detail", detail),
            Outcome::RateLimited {
                retry_after_secs: Some(seconds),
            } => Msg::new("issue-rate-limited").arg("seconds", seconds),
            Outcome::RateLimited { retry_after_secs: None } => Msg::new("issue-rate-limited-later"),
            Outcome::Unreachable { reason } => Msg::new("issue-unreachable").arg("reason", reason),
        })
    }

    /// Whether the same request may succeed later (the page offers "Try again").
    pub fn may_retry(&self) -> bool {
        matches!(self, Outcome::Unreachable { .. } | Outcome::RateLimited { .. })
    }

    /// Whether the page offers the integrity-only certificate instead: only when no issuer
    /// answered, never to get round the issuer's own grading.
    pub fn offers_integrity_only(&self) -> bool {
        matches!(self, Outcome::Unreachable { .. })
    }

    /// The outcome's name in the page (`data-kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Issued(_) => "issued",
            Outcome::NotPassed { .. } => "not-passed",
            Outcome::Refused { .. } => "refused",
            Outcome::RateLimited { .. } => "rate-limited",
            Outcome::Unreachable { .. } => "unreachable",
        }
    }
}

/// Where a request for a signed certificate stands.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Issuing {
    #[default]
    Idle,
    Busy,
    /// The issuer refused, or none answered; the page says why and what can be done.
    Failed(Outcome),
}

impl Issuing {
    /// Whether a request is under way (no second one is sent meanwhile).
    pub fn is_busy(&self) -> bool {
        *self == Issuing::Busy
    }

    /// The reply came: a signed credential is handed back (and the request is over); any other
    /// outcome stays for the page to explain.
    pub fn settle(&mut self, outcome: Outcome) -> Option<Issued> {
        match outcome {
            Outcome::Issued(issued) => {
                *self = Issuing::Idle;
                Some(issued)
            }
            other => {
                *self = Issuing::Failed(other);
                None
            }
        }
    }
}

/// The certificate kept for the attempt `attempt_id` once the issuer signed it; `name` is the
/// one its credential carries.
pub fn keep_signed(issued: Issued, name: String, attempt_id: Option<String>) -> IssuedCertificate {
    IssuedCertificate {
        name,
        id: issued.id,
        credential: Some(issued.credential),
        attempt_id,
    }
}

/// The app's own format-1 certificate, integrity only (for when no issuer can be reached).
pub fn integrity_only(
    certificate: &Certificate,
    attempt_id: Option<String>,
) -> Result<IssuedCertificate, CertificateError> {
    Ok(IssuedCertificate {
        id: certificate.id()?,
        name: normalize_name(&certificate.name),
        credential: None,
        attempt_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, body: &str) -> Result<Reply, String> {
        Ok(Reply {
            status,
            body: body.to_string(),
            retry_after_secs: None,
        })
    }

    #[test]
    fn the_body_carries_first_answers_in_the_wire_form() {
        let mut answers = BTreeMap::new();
        answers.insert("a".to_string(), Answer::Single(2));
        answers.insert("b".to_string(), Answer::Multiple(vec![0, 3]));
        answers.insert("c".to_string(), Answer::Numeric(512.0));
        answers.insert("d".to_string(), Answer::Numeric(f64::NAN));
        let body: Value = serde_json::from_str(&request_body(1, Language::Spanish, "Ada", &answers, 42, None)).unwrap();
        assert_eq!(
            body,
            json!({
                "bank_version": 1,
                "language": "es",
                "name": "Ada",
                "answers": { "a": 2, "b": [0, 3], "c": 512.0 },
                "seed": 42,
            })
        );
        let with_attempt: Value = serde_json::from_str(&request_body(
            1,
            Language::English,
            "Ada",
            &answers,
            42,
            Some("attempt-0123456789"),
        ))
        .unwrap();
        assert_eq!(with_attempt["attempt_id"], "attempt-0123456789");
    }

    #[test]
    fn an_attempts_earlier_credential_is_an_issued_one() {
        let outcome = Outcome::from_reply(reply(
            200,
            r#"{"id":"ABCDE-FGHJK-MNPQR","credential":{"type":["VerifiableCredential"]}}"#,
        ));
        let Outcome::Issued(issued) = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(issued.id, "ABCDE-FGHJK-MNPQR");
    }

    #[test]
    fn only_the_first_answer_is_sent() {
        use crate::attempt::Attempt;
        use crate::bank::QuestionBank;
        let bank = QuestionBank::bundled().unwrap();
        let mut attempt = Attempt::new(&bank, 9);
        attempt.answer(&bank, 0, Answer::Single(0)).unwrap();
        attempt.answer(&bank, 0, Answer::Single(1)).unwrap();
        let body: Value = serde_json::from_str(&request_body(
            bank.version,
            Language::English,
            "Ada",
            &attempt.first_answers(),
            9,
            None,
        ))
        .unwrap();
        // The first answer, not the later one.
        assert_eq!(body["answers"], json!({ bank.questions[0].id.clone(): 0 }));
    }

    #[test]
    fn created_gives_the_credential() {
        let outcome = Outcome::from_reply(reply(
            201,
            r#"{"id":"ABCDE-FGHJK-MNPQR","share_url":"http://x/?view=verify&id=ABCDE-FGHJK-MNPQR","credential":{"type":["VerifiableCredential"]}}"#,
        ));
        let Outcome::Issued(issued) = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(issued.id, "ABCDE-FGHJK-MNPQR");
        assert_eq!(
            issued.share_url.as_deref(),
            Some("http://x/?view=verify&id=ABCDE-FGHJK-MNPQR")
        );
        assert!(issued.credential.is_object());
        assert_eq!(
            Outcome::from_reply(reply(201, r#"{"id":"A"}"#)).message().unwrap().id,
            "issue-unreachable"
        );
    }

    #[test]
    fn refusals_keep_the_issuers_words() {
        let not_passed = Outcome::from_reply(reply(
            422,
            r#"{"code":"not-passed","detail":"3 of 17","score_percent":17}"#,
        ));
        assert_eq!(
            not_passed,
            Outcome::NotPassed {
                score_percent: Some(17)
            }
        );
        assert_eq!(not_passed.message().unwrap().args, vec![("percent", "17".to_string())]);
        assert!(!not_passed.may_retry() && !not_passed.offers_integrity_only());
        let malformed = Outcome::from_reply(reply(
            400,
            r#"{"code":"malformed","detail":"name: must be 1 to 80 characters","field":"name"}"#,
        ));
        assert_eq!(
            malformed,
            Outcome::Refused {
                detail: "name: must be 1 to 80 characters".into()
            }
        );
        let limited = Outcome::from_reply(reply(
            429,
            r#"{"code":"rate-limited","detail":"too many requests from this address; try again in 12 s"}"#,
        ));
        assert_eq!(
            limited,
            Outcome::RateLimited {
                retry_after_secs: Some(12)
            }
        );
        let header = Outcome::from_reply(Ok(Reply {
            status: 429,
            body: String::new(),
            retry_after_secs: Some(3),
        }));
        assert_eq!(header.message().unwrap().args, vec![("seconds", "3".to_string())]);
        assert!(header.may_retry() && !header.offers_integrity_only());
    }

    #[test]
    fn anything_else_means_no_issuer_answered() {
        for (status, body) in [
            (404, "not found"),
            (405, ""),
            (500, r#"{"code":"internal","detail":"nothing was issued; try again"}"#),
            (502, ""),
            (200, "<!DOCTYPE html>"),
            (400, "<html>bad request</html>"),
        ] {
            let outcome = Outcome::from_reply(reply(status, body));
            assert_eq!(
                outcome,
                Outcome::Unreachable {
                    reason: format!("HTTP {status}")
                },
                "{status}"
            );
            assert!(outcome.may_retry() && outcome.offers_integrity_only());
        }
        let network = Outcome::from_reply(Err("TypeError: Failed to fetch".into()));
        assert_eq!(
            network.message().unwrap().args,
            vec![("reason", "TypeError: Failed to fetch".to_string())]
        );
    }

    #[test]
    fn every_message_exists_in_every_language() {
        use gradlab_i18n::Localizer;
        let outcomes = [
            Outcome::NotPassed { score_percent: Some(1) },
            Outcome::NotPassed { score_percent: None },
            Outcome::Refused { detail: "x".into() },
            Outcome::RateLimited {
                retry_after_secs: Some(1),
            },
            Outcome::RateLimited { retry_after_secs: None },
            Outcome::Unreachable { reason: "x".into() },
        ];
        for language in Language::ALL {
            let localizer = Localizer::new(language).unwrap();
            for outcome in &outcomes {
                let message = outcome.message().unwrap();
                assert!(localizer.has(&message.id), "{} in {}", message.id, language.tag());
            }
        }
    }

    #[test]
    fn every_outcome_has_its_own_kind() {
        let outcomes = [
            Outcome::from_reply(reply(201, r#"{"id":"A","credential":{}}"#)),
            Outcome::from_reply(reply(422, r#"{"code":"not-passed"}"#)),
            Outcome::from_reply(reply(400, r#"{"code":"bad","detail":"no"}"#)),
            Outcome::from_reply(reply(429, "")),
            Outcome::from_reply(Err("offline".into())),
        ];
        let kinds: Vec<&str> = outcomes.iter().map(Outcome::kind).collect();
        assert_eq!(
            kinds,
            ["issued", "not-passed", "refused", "rate-limited", "unreachable"]
        );
    }

    #[test]
    fn issuing_ends_idle_with_a_credential_and_keeps_a_failure_to_explain() {
        let mut issuing = Issuing::Busy;
        assert!(issuing.is_busy());
        let failed = Outcome::from_reply(Err("offline".into()));
        assert_eq!(issuing.settle(failed.clone()), None);
        assert_eq!(issuing, Issuing::Failed(failed));
        assert!(!issuing.is_busy());
        let issued = issuing
            .settle(Outcome::from_reply(reply(201, r#"{"id":"A","credential":{"k":1}}"#)))
            .unwrap();
        assert_eq!(issuing, Issuing::Idle);
        let kept = keep_signed(issued, "Ada".into(), Some("attempt".into()));
        assert_eq!(kept.id, "A");
        assert_eq!(kept.credential, Some(json!({"k": 1})));
        assert_eq!(
            (kept.name.as_str(), kept.attempt_id.as_deref()),
            ("Ada", Some("attempt"))
        );
    }

    #[test]
    fn an_integrity_only_certificate_has_a_checked_id_and_the_normalized_name() {
        use super::super::certificate::{verify, CivilDate};
        let certificate = Certificate {
            name: "  Ada   Lovelace ".into(),
            score_percent: 90,
            date: CivilDate {
                year: 2026,
                month: 3,
                day: 1,
            },
            quiz_version: 1,
        };
        let kept = integrity_only(&certificate, Some("attempt".into())).unwrap();
        assert_eq!(kept.name, "Ada Lovelace");
        assert_eq!(kept.id, certificate.id().unwrap());
        assert!(verify(&kept.id, "Ada Lovelace", certificate.date).is_ok());
        assert_eq!((kept.credential, kept.attempt_id.as_deref()), (None, Some("attempt")));
        let nameless = Certificate {
            name: " ".into(),
            ..certificate
        };
        assert!(integrity_only(&nameless, None).is_err());
    }
}
