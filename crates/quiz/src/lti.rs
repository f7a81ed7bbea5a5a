//! The quiz after an LTI 1.3 launch from a course platform: the session the launch handed to
//! the page (its token arrives in the URL's fragment, `#lti=…`, and lives only in the page), and
//! where the learner's grade stands on its way to the course's gradebook. The server grades the
//! answers itself and posts the score; the page sends the answers and asks how delivery goes.
//! Plain Rust, tested natively; the web layer does the fetching.

use serde_json::Value;

use super::issuance::Reply;

/// Where the page posts the answers and asks about the session (relative to the app).
pub const SESSION_PATH: &str = "lti/session";
pub const SCORES_PATH: &str = "lti/scores";
/// Where a Lab page launched into an experiment reports that the learner trained it.
pub const COMPLETION_PATH: &str = "lti/completion";

/// The body of a completion report.
pub fn completion_body(scenario: &str) -> String {
    serde_json::json!({ "scenario": scenario }).to_string()
}

/// The session token from a launch's fragment (`#lti=TOKEN`, perhaps among other fragment
/// parameters); `None` when the fragment carries none or a token of unexpected form.
pub fn token_from_fragment(fragment: &str) -> Option<String> {
    fragment
        .trim_start_matches('#')
        .split('&')
        .find_map(|pair| pair.strip_prefix("lti="))
        .filter(|token| (16..=128).contains(&token.len()))
        .filter(|token| {
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map(str::to_string)
}

/// Who the platform says the learner is, and where from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LtiSession {
    pub name: String,
    pub platform: String,
    pub course: String,
    /// Whether the course asked for a grade (the launch carried a line item).
    pub graded: bool,
}

/// What the page knows of its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionState {
    Checking,
    Active(LtiSession),
    /// The session expired or was never known: the learner opens the activity again.
    Expired,
    Unreachable(String),
}

impl SessionState {
    pub fn from_reply(reply: Result<Reply, String>) -> Self {
        let reply = match reply {
            Ok(reply) => reply,
            Err(reason) => return Self::Unreachable(reason),
        };
        let body: Value = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
        let text = |key: &str| body.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        match reply.status {
            200 => Self::Active(LtiSession {
                name: text("name"),
                platform: text("platform"),
                course: text("course"),
                graded: body.get("graded").and_then(Value::as_bool).unwrap_or(false),
            }),
            401 => Self::Expired,
            status => Self::Unreachable(format!("HTTP {status}")),
        }
    }
}

/// Where the grade stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GradeDelivery {
    /// Nothing sent yet (the quiz is not finished).
    Idle,
    Sending,
    /// The server graded the answers and holds the score for the course.
    Pending {
        id: i64,
        score_percent: u64,
        attempts: u64,
        last_error: Option<String>,
        retry_in_secs: u64,
    },
    Delivered {
        score_percent: u64,
    },
    /// The platform refused the score every time for hours: the server keeps it, the teacher
    /// needs to look (the id is the reference).
    GivenUp {
        id: i64,
        score_percent: u64,
        attempts: u64,
        last_error: Option<String>,
    },
    /// The course asked for no grade; the server graded for the learner only.
    NotGraded {
        score_percent: u64,
    },
    /// The session ended; the answers stay saved, a new launch can send them.
    Expired,
    /// The request did not reach the server or was refused; the learner may try again.
    Failed(String),
}

fn problem_detail(body: &Value, status: u16) -> String {
    body.get("detail")
        .and_then(Value::as_str)
        .map_or_else(|| format!("HTTP {status}"), str::to_string)
}

impl GradeDelivery {
    /// The reply to posting the answers.
    pub fn from_post_reply(reply: Result<Reply, String>) -> Self {
        let reply = match reply {
            Ok(reply) => reply,
            Err(reason) => return Self::Failed(reason),
        };
        let body: Value = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
        let score_percent = body.get("score_percent").and_then(Value::as_u64);
        match (reply.status, score_percent) {
            (202, Some(score_percent)) => match body.get("id").and_then(Value::as_i64) {
                Some(id) => Self::Pending {
                    id,
                    score_percent,
                    attempts: 0,
                    last_error: None,
                    retry_in_secs: 0,
                },
                None => Self::Failed(format!("HTTP {}", reply.status)),
            },
            (200, Some(score_percent)) => Self::NotGraded { score_percent },
            (401, _) => Self::Expired,
            (status, _) => Self::Failed(problem_detail(&body, status)),
        }
    }

    /// The reply to asking about a pending score (`self` is the pending state asked about).
    pub fn after_status_reply(&self, reply: Result<Reply, String>) -> Self {
        let Self::Pending { id, score_percent, .. } = self else {
            return self.clone();
        };
        let (id, score_percent) = (*id, *score_percent);
        let still = |attempts, last_error, retry_in_secs| Self::Pending {
            id,
            score_percent,
            attempts,
            last_error,
            retry_in_secs,
        };
        let reply = match reply {
            // The score is safe on the server; only the question failed: keep asking.
            Err(reason) => return still(0, Some(reason), 0),
            Ok(reply) => reply,
        };
        let body: Value = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
        match reply.status {
            200 if body.get("delivery").and_then(Value::as_str) == Some("delivered") => {
                Self::Delivered { score_percent }
            }
            200 if body.get("delivery").and_then(Value::as_str) == Some("given-up") => Self::GivenUp {
                id,
                score_percent,
                attempts: body.get("attempts").and_then(Value::as_u64).unwrap_or(0),
                last_error: body.get("last_error").and_then(Value::as_str).map(str::to_string),
            },
            200 => still(
                body.get("attempts").and_then(Value::as_u64).unwrap_or(0),
                body.get("last_error").and_then(Value::as_str).map(str::to_string),
                body.get("retry_in_secs").and_then(Value::as_u64).unwrap_or(0),
            ),
            401 => Self::Expired,
            status => still(0, Some(problem_detail(&body, status)), 0),
        }
    }

    /// Whether the page should ask again about the score.
    pub fn awaits_delivery(&self) -> bool {
        matches!(self, Self::Pending { .. })
    }

    /// A name for tests and styles (`data-delivery`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Sending => "sending",
            Self::Pending { .. } => "pending",
            Self::Delivered { .. } => "delivered",
            Self::GivenUp { .. } => "given-up",
            Self::NotGraded { .. } => "not-graded",
            Self::Expired => "expired",
            Self::Failed(_) => "failed",
        }
    }
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
    fn the_token_comes_only_from_a_well_formed_fragment() {
        let token = "abcdefghijklmnopqrstuvwxyz012345-_AB";
        assert_eq!(token_from_fragment(&format!("#lti={token}")).as_deref(), Some(token));
        assert_eq!(token_from_fragment(&format!("x=1&lti={token}")).as_deref(), Some(token));
        for bad in [
            "",
            "#",
            "#lti=",
            "#lti=short",
            "#lti=has space in it and more",
            "#lti=<script>alert(1)</script>x",
        ] {
            assert_eq!(token_from_fragment(bad), None, "{bad}");
        }
        assert_eq!(token_from_fragment(&format!("#lti={}", "a".repeat(129))), None);
    }

    #[test]
    fn the_session_reply_names_the_learner_or_says_it_expired() {
        let active = SessionState::from_reply(reply(
            200,
            r#"{"name":"Ada","platform":"Moodle","course":"Fine-tuning","graded":true}"#,
        ));
        assert_eq!(
            active,
            SessionState::Active(LtiSession {
                name: "Ada".into(),
                platform: "Moodle".into(),
                course: "Fine-tuning".into(),
                graded: true
            })
        );
        assert_eq!(SessionState::from_reply(reply(401, "{}")), SessionState::Expired);
        assert_eq!(
            SessionState::from_reply(Err("Failed to fetch".into())),
            SessionState::Unreachable("Failed to fetch".into())
        );
        assert_eq!(
            SessionState::from_reply(reply(502, "")),
            SessionState::Unreachable("HTTP 502".into())
        );
    }

    #[test]
    fn a_grade_goes_from_pending_to_delivered_and_keeps_its_score_on_the_way() {
        let pending = GradeDelivery::from_post_reply(reply(202, r#"{"id":7,"score_percent":85,"delivery":"pending"}"#));
        assert!(matches!(
            pending,
            GradeDelivery::Pending {
                id: 7,
                score_percent: 85,
                ..
            }
        ));
        assert!(pending.awaits_delivery());
        let retrying = pending.after_status_reply(reply(
            200,
            r#"{"id":7,"delivery":"pending","attempts":2,"last_error":"scores endpoint answered 503","retry_in_secs":20}"#,
        ));
        assert_eq!(
            retrying,
            GradeDelivery::Pending {
                id: 7,
                score_percent: 85,
                attempts: 2,
                last_error: Some("scores endpoint answered 503".into()),
                retry_in_secs: 20
            }
        );
        // A failed question leaves the score pending: it is safe on the server.
        assert!(retrying.after_status_reply(Err("offline".into())).awaits_delivery());
        let delivered = retrying.after_status_reply(reply(200, r#"{"id":7,"delivery":"delivered","attempts":3}"#));
        assert_eq!(delivered, GradeDelivery::Delivered { score_percent: 85 });
        assert!(!delivered.awaits_delivery());
        assert_eq!(delivered.after_status_reply(reply(500, "")), delivered);
        let given_up = retrying.after_status_reply(reply(
            200,
            r#"{"id":7,"delivery":"given-up","attempts":12,"last_error":"the course platform answered 404"}"#,
        ));
        assert_eq!(
            given_up,
            GradeDelivery::GivenUp {
                id: 7,
                score_percent: 85,
                attempts: 12,
                last_error: Some("the course platform answered 404".into())
            }
        );
        assert!(!given_up.awaits_delivery());
    }

    #[test]
    fn the_post_reply_says_ungraded_expired_or_why_it_failed() {
        assert_eq!(
            GradeDelivery::from_post_reply(reply(200, r#"{"score_percent":60,"delivery":"not-graded"}"#)),
            GradeDelivery::NotGraded { score_percent: 60 }
        );
        assert_eq!(GradeDelivery::from_post_reply(reply(401, "{}")), GradeDelivery::Expired);
        assert_eq!(
            GradeDelivery::from_post_reply(reply(400, r#"{"detail":"answers: unknown question"}"#)),
            GradeDelivery::Failed("answers: unknown question".into())
        );
        assert_eq!(
            GradeDelivery::from_post_reply(Err("offline".into())),
            GradeDelivery::Failed("offline".into())
        );
        assert_eq!(
            GradeDelivery::from_post_reply(reply(202, "{}")),
            GradeDelivery::Failed("HTTP 202".into())
        );
    }
}
