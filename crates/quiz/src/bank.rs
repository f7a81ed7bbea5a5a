//! The question bank: typed data loaded from `assets/quiz/bank.json`, checked for well-formedness.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The bank shipped with the app.
pub const BUNDLED_BANK: &str = include_str!("../../../assets/quiz/bank.json");
/// The same questions in Spanish: same ids, kinds, option order, correct answers and links
/// (a test checks), so progress and certificates do not depend on the language.
pub const BUNDLED_BANK_ES: &str = include_str!("../../../assets/quiz/bank.es.json");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionBank {
    /// Bumped whenever questions change; saved progress and certificates carry it.
    pub version: u8,
    /// Fraction of first-try correct answers needed to pass.
    pub pass_threshold: f64,
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub id: String,
    pub topic: String,
    pub prompt: String,
    /// Lab scenario that shows the idea (a `sim::scenario` id).
    #[serde(default)]
    pub scenario: Option<String>,
    /// Shown after any answer: the idea behind the question.
    pub explanation: String,
    #[serde(flatten)]
    pub kind: QuestionKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QuestionKind {
    /// Exactly one option is correct.
    Single { options: Vec<Choice> },
    /// One or more options are correct; the answer must select exactly those.
    Multiple { options: Vec<Choice> },
    /// A number, accepted within `tolerance`.
    Numeric {
        answer: f64,
        #[serde(default)]
        tolerance: f64,
        #[serde(default)]
        unit: String,
        /// What the number is computed from, without giving it: the feedback on a wrong
        /// number that no hint foresees.
        approach: String,
        /// Likely wrong numbers (the reciprocal, N forgotten, ...), each with what went wrong.
        #[serde(default)]
        hints: Vec<NumericHint>,
    },
}

/// A likely wrong number and what it suggests went wrong (never the right answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumericHint {
    pub value: f64,
    pub explanation: String,
}

impl NumericHint {
    /// Whether `value` is this hint's number (as the page's numbers are typed, not computed).
    pub fn matches(&self, value: f64) -> bool {
        (self.value - value).abs() <= 1e-9 * self.value.abs().max(1.0)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub text: String,
    pub correct: bool,
    /// Why this option is right or wrong.
    pub explanation: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BankError {
    #[error("the question bank is not valid JSON: {0}")]
    Parse(String),
    #[error("question \"{id}\": {problem}")]
    Malformed { id: String, problem: String },
    #[error("the bank: {0}")]
    Invalid(String),
}

impl Question {
    pub fn options(&self) -> &[Choice] {
        match &self.kind {
            QuestionKind::Single { options } | QuestionKind::Multiple { options } => options,
            QuestionKind::Numeric { .. } => &[],
        }
    }
}

impl QuestionBank {
    pub fn parse(json: &str) -> Result<Self, BankError> {
        let bank: QuestionBank = serde_json::from_str(json).map_err(|e| BankError::Parse(e.to_string()))?;
        bank.validate()?;
        Ok(bank)
    }

    pub fn bundled() -> Result<Self, BankError> {
        Self::parse(BUNDLED_BANK)
    }

    /// The bundled bank in `language`.
    pub fn bundled_in(language: gradlab_i18n::Language) -> Result<Self, BankError> {
        match language {
            gradlab_i18n::Language::English => Self::bundled(),
            gradlab_i18n::Language::Spanish => Self::parse(BUNDLED_BANK_ES),
        }
    }

    /// Whether `other` asks the same questions with the same answers, whatever the wording.
    pub fn same_questions_as(&self, other: &QuestionBank) -> Result<(), String> {
        if self.version != other.version || self.pass_threshold != other.pass_threshold {
            return Err("version or pass mark differ".into());
        }
        if self.questions.len() != other.questions.len() {
            return Err("the number of questions differs".into());
        }
        for (a, b) in self.questions.iter().zip(&other.questions) {
            let answers = |q: &Question| match &q.kind {
                QuestionKind::Single { options } | QuestionKind::Multiple { options } => {
                    (options.iter().map(|o| o.correct).collect::<Vec<_>>(), None)
                }
                QuestionKind::Numeric {
                    answer,
                    tolerance,
                    hints,
                    ..
                } => (
                    Vec::new(),
                    // The same likely mistakes, whatever the language.
                    Some((*answer, *tolerance, hints.iter().map(|h| h.value).collect::<Vec<_>>())),
                ),
            };
            let kind = |q: &Question| std::mem::discriminant(&q.kind);
            if a.id != b.id || a.scenario != b.scenario || kind(a) != kind(b) || answers(a) != answers(b) {
                return Err(format!("question \"{}\" differs", a.id));
            }
        }
        Ok(())
    }

    /// Every question well formed: unique id, text present, options with explanations, the right
    /// number of correct options, scenario links that exist.
    pub fn validate(&self) -> Result<(), BankError> {
        if self.questions.is_empty() {
            return Err(BankError::Invalid("has no questions".into()));
        }
        if !(self.pass_threshold > 0.0 && self.pass_threshold <= 1.0) {
            return Err(BankError::Invalid(format!(
                "pass_threshold must be in (0, 1], got {}",
                self.pass_threshold
            )));
        }
        if self.version == 0 || self.version >= 64 {
            return Err(BankError::Invalid(
                "version must be 1 to 63 (it is stored in 6 bits)".into(),
            ));
        }
        for (i, q) in self.questions.iter().enumerate() {
            let bad = |problem: String| BankError::Malformed {
                id: q.id.clone(),
                problem,
            };
            if q.id.trim().is_empty() {
                return Err(BankError::Invalid(format!("question {i} has no id")));
            }
            if self.questions[..i].iter().any(|o| o.id == q.id) {
                return Err(bad("id is used twice".into()));
            }
            if q.prompt.trim().is_empty() || q.explanation.trim().is_empty() || q.topic.trim().is_empty() {
                return Err(bad("prompt, topic and explanation must not be empty".into()));
            }
            if let Some(scenario) = &q.scenario {
                if !gradlab_sim::scenario::SCENARIO_IDS.contains(&scenario.as_str()) {
                    return Err(bad(format!("links to unknown scenario \"{scenario}\"")));
                }
            }
            match &q.kind {
                QuestionKind::Single { options } | QuestionKind::Multiple { options } => {
                    if options.len() < 2 {
                        return Err(bad("needs at least two options".into()));
                    }
                    if options
                        .iter()
                        .any(|o| o.text.trim().is_empty() || o.explanation.trim().is_empty())
                    {
                        return Err(bad("every option needs text and an explanation".into()));
                    }
                    let correct = options.iter().filter(|o| o.correct).count();
                    let single = matches!(q.kind, QuestionKind::Single { .. });
                    if single && correct != 1 {
                        return Err(bad(format!(
                            "single choice needs exactly one correct option, has {correct}"
                        )));
                    }
                    if !single && correct == 0 {
                        return Err(bad("multiple choice needs at least one correct option".into()));
                    }
                    for (j, o) in options.iter().enumerate() {
                        if options[..j].iter().any(|p| p.text == o.text) {
                            return Err(bad(format!("option \"{}\" appears twice", o.text)));
                        }
                    }
                }
                QuestionKind::Numeric {
                    answer,
                    tolerance,
                    approach,
                    hints,
                    ..
                } => {
                    if !(answer.is_finite() && tolerance.is_finite() && *tolerance >= 0.0) {
                        return Err(bad("numeric answer and tolerance must be finite, tolerance >= 0".into()));
                    }
                    if approach.trim().is_empty() {
                        return Err(bad("a numeric question needs an approach for wrong numbers".into()));
                    }
                    for (j, hint) in hints.iter().enumerate() {
                        if !hint.value.is_finite() || hint.explanation.trim().is_empty() {
                            return Err(bad("every hint needs a finite value and an explanation".into()));
                        }
                        if (hint.value - answer).abs() <= *tolerance + 1e-9 * answer.abs() {
                            return Err(bad(format!("hint {} is an accepted answer", hint.value)));
                        }
                        if hints[..j].iter().any(|h| h.matches(hint.value)) {
                            return Err(bad(format!("hint {} appears twice", hint.value)));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }

    /// Where the question `id` stands in the quiz (0-based).
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.questions.iter().position(|q| q.id == id)
    }

    /// The topics the quiz covers, each once, in the order the bank first names them: what a
    /// certificate says was learned.
    pub fn topics(&self) -> Vec<String> {
        let mut topics: Vec<String> = Vec::new();
        for question in &self.questions {
            if !topics.contains(&question.topic) {
                topics.push(question.topic.clone());
            }
        }
        topics
    }
}
