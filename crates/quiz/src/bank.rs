//! The question bank: typed data loaded from `assets/quiz/bank.json`, checked for well-formedness.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The bank shipped with the app.
pub const BUNDLED_BANK: &str = include_str!("../../../assets/quiz/bank.json");
/// The same questions in Spanish: same ids, kinds, option order, correct answers and links
/// (a test checks), so progress and certificates do not depend on the language.
pub const BUNDLED_BANK_ES: &str = include_str!("../../../assets/quiz/bank.es.json");

/// Every version of the bank the app has shipped, oldest first, in English and Spanish; the last
/// is the bundled bank. An issuer grades and certifies each (a learner may finish an attempt
/// begun before an update), and progress saved under an older one is carried over. A shipped
/// version's files never change: credentials name it.
const SHIPPED: [(u8, &str, &str); 2] = [
    (
        1,
        include_str!("../../../assets/quiz/shipped/bank.v1.json"),
        include_str!("../../../assets/quiz/shipped/bank.v1.es.json"),
    ),
    (2, BUNDLED_BANK, BUNDLED_BANK_ES),
];

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

/// Every shipped version of the bank, parsed once (in English: grading does not depend on the
/// language): what an issuer grades and certifies with.
#[derive(Debug, Clone, PartialEq)]
pub struct ShippedBanks {
    /// Oldest first; never empty (the last is the bundled bank).
    banks: Vec<QuestionBank>,
}

impl ShippedBanks {
    pub fn load() -> Result<Self, BankError> {
        let banks = QuestionBank::shipped_versions()
            .map(|version| QuestionBank::shipped(version, gradlab_i18n::Language::English))
            .collect::<Result<Vec<_>, _>>()?;
        if banks.is_empty() {
            return Err(BankError::Invalid("no version has shipped".into()));
        }
        Ok(Self { banks })
    }

    /// The version `version`, if it shipped.
    pub fn get(&self, version: u8) -> Option<&QuestionBank> {
        self.banks.iter().find(|bank| bank.version == version)
    }

    /// The bundled bank, the one the app asks today.
    pub fn current(&self) -> &QuestionBank {
        &self.banks[self.banks.len() - 1]
    }

    pub fn versions(&self) -> Vec<u8> {
        self.banks.iter().map(|bank| bank.version).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BankError {
    #[error("the question bank is not valid JSON: {0}")]
    Parse(String),
    #[error("question \"{id}\": {problem}")]
    Malformed { id: String, problem: String },
    #[error("the bank: {0}")]
    Invalid(String),
    #[error("no question bank version {0} has shipped")]
    UnknownVersion(u8),
}

impl Question {
    /// The same question in any wording: the kind, the Lab link, which options are right (in
    /// order), and for a number the answer, tolerance and foreseen mistakes.
    fn same_question_as(&self, other: &Question) -> bool {
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
                Some((*answer, *tolerance, hints.iter().map(|h| h.value).collect::<Vec<_>>())),
            ),
        };
        let kind = |q: &Question| std::mem::discriminant(&q.kind);
        self.scenario == other.scenario && kind(self) == kind(other) && answers(self) == answers(other)
    }

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

    /// The version `version` as it shipped, in `language`.
    pub fn shipped(version: u8, language: gradlab_i18n::Language) -> Result<Self, BankError> {
        let (_, english, spanish) = SHIPPED
            .iter()
            .find(|(v, _, _)| *v == version)
            .ok_or(BankError::UnknownVersion(version))?;
        let bank = match language {
            gradlab_i18n::Language::English => Self::parse(english)?,
            gradlab_i18n::Language::Spanish => Self::parse(spanish)?,
        };
        if bank.version != version {
            return Err(BankError::Invalid(format!(
                "the file shipped as version {version} says version {}",
                bank.version
            )));
        }
        Ok(bank)
    }

    /// The versions that have shipped, oldest first (the last is the bundled bank's).
    pub fn shipped_versions() -> impl DoubleEndedIterator<Item = u8> {
        SHIPPED.iter().map(|(version, _, _)| *version)
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
            if a.id != b.id || !a.same_question_as(b) {
                return Err(format!("question \"{}\" differs", a.id));
            }
        }
        Ok(())
    }

    /// Whether this bank asks the question `id` of `older` unchanged (the same kind, options and
    /// answers, whatever the wording): an answer given to it there holds here.
    pub fn asks_unchanged(&self, older: &QuestionBank, id: &str) -> bool {
        match (self.question(id), older.question(id)) {
            (Some(here), Some(there)) => here.same_question_as(there),
            _ => false,
        }
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
                let known = gradlab_sim::scenario::SCENARIO_IDS
                    .iter()
                    .chain(&gradlab_sim::gpt::scenario::GPT_SCENARIO_IDS)
                    .any(|id| id == scenario);
                if !known {
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

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_i18n::Language;
    use sha2::{Digest, Sha256};

    /// A shipped version's files never change: credentials and saved progress name it. Each
    /// file's SHA-256 as it shipped (version 1: the bank of commit 0f6ed1a).
    const SHIPPED_SHA256: [(u8, &str, &str); 1] = [(
        1,
        "42d09270175503549857fbb1479287fcc831f8b7b9961ce486895a32ee69bb10",
        "42520a8d1a1634049e1b43f41444b365b88ef148babd7278798ea3f236623920",
    )];

    fn hex(text: &str) -> String {
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn shipped_versions_are_frozen_and_the_last_is_the_bundled_bank() {
        for (version, english, spanish) in SHIPPED_SHA256 {
            let (_, en, es) = SHIPPED.iter().find(|(v, _, _)| *v == version).unwrap();
            assert_eq!(
                (hex(en).as_str(), hex(es).as_str()),
                (english, spanish),
                "version {version} changed"
            );
        }
        let versions: Vec<u8> = QuestionBank::shipped_versions().collect();
        assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
        assert_eq!(versions.last().copied(), Some(QuestionBank::bundled().unwrap().version));
        // Every released version but the current one is frozen above.
        assert_eq!(SHIPPED_SHA256.len(), versions.len() - 1);
        for version in versions {
            let english = QuestionBank::shipped(version, Language::English).unwrap();
            for language in Language::ALL {
                let bank = QuestionBank::shipped(version, language).unwrap();
                assert_eq!(bank.version, version);
                english.same_questions_as(&bank).unwrap();
            }
        }
        assert_eq!(
            QuestionBank::shipped(99, Language::English),
            Err(BankError::UnknownVersion(99))
        );
        let banks = ShippedBanks::load().unwrap();
        assert_eq!(banks.current(), &QuestionBank::bundled().unwrap());
        assert_eq!(banks.get(1).map(|b| b.questions.len()), Some(17));
        assert_eq!(banks.get(99), None);
    }

    /// Each update keeps the questions it does not mean to change, so that carried-over
    /// progress keeps their answers (a reworded question is the same question).
    #[test]
    fn the_current_bank_asks_every_question_of_version_1_unchanged() {
        let current = QuestionBank::bundled().unwrap();
        let first = QuestionBank::shipped(1, Language::English).unwrap();
        for question in &first.questions {
            assert!(current.asks_unchanged(&first, &question.id), "{}", question.id);
        }
        let mut changed = current.clone();
        if let QuestionKind::Numeric { answer, .. } = &mut changed.questions[1].kind {
            *answer += 1.0;
        }
        assert!(!changed.asks_unchanged(&first, &first.questions[1].id));
        assert!(
            !current.asks_unchanged(&first, "lm-token-weight"),
            "not asked in version 1"
        );
    }

    /// A version adds its questions after the older ones: an LMS numbers its interactions by
    /// place in the quiz (interaction n is question n + 1), so a course that updates its package
    /// keeps each recorded interaction on the same question.
    #[test]
    fn each_version_keeps_the_questions_of_the_one_before_in_their_places() {
        let versions: Vec<u8> = QuestionBank::shipped_versions().collect();
        for pair in versions.windows(2) {
            let older = QuestionBank::shipped(pair[0], Language::English).unwrap();
            let newer = QuestionBank::shipped(pair[1], Language::English).unwrap();
            let ids = |bank: &QuestionBank| bank.questions.iter().map(|q| q.id.clone()).collect::<Vec<_>>();
            assert_eq!(
                ids(&newer)[..older.questions.len()],
                ids(&older)[..],
                "version {} reorders version {}",
                pair[1],
                pair[0]
            );
        }
    }
}
