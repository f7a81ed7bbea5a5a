//! One learner's attempt at the quiz: shuffled option order, answers, feedback, score, and the
//! saved form that survives a reload.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::bank::{Question, QuestionBank, QuestionKind};
use gradlab_sim::rng::SeededRng;

/// An answer, with option indices in the bank's order (not the shuffled display order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Answer {
    Single(usize),
    Multiple(Vec<usize>),
    Numeric(f64),
}

/// What happened with one question so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionProgress {
    /// Whether the first answer was right; only this counts towards the score.
    pub first_try_correct: bool,
    pub tries: u32,
    pub solved: bool,
    pub last_answer: Answer,
    /// The answer that was graded for the score. Saves from before it existed lack it; such a
    /// question can still be reviewed but is not sent to an issuer (nothing unverifiable is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_answer: Option<Answer>,
}

/// What a save keeps of one question: the answers, never a verdict (grading is redone).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedAnswers {
    /// The graded first answer; saves from before it was kept lack it.
    pub first: Option<Answer>,
    pub last: Answer,
    pub tries: u32,
}

/// Feedback on one option.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionFeedback {
    pub index: usize,
    pub selected: bool,
    pub correct: bool,
    pub explanation: String,
}

/// A wrong answer reveals the right one from this try on (before it, only why the chosen
/// options are right or wrong, so that "Try again" still teaches something).
pub const REVEAL_AFTER_TRIES: u32 = 2;

/// Instant feedback on an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Feedback {
    pub correct: bool,
    /// Whether the right answer may be shown: the answer is right, the question was tried
    /// [`REVEAL_AFTER_TRIES`] times, or the learner asked ([`Feedback::revealed`]).
    pub answer_revealed: bool,
    /// Per option, in display order (empty for numeric questions).
    pub options: Vec<OptionFeedback>,
    pub explanation: String,
    pub scenario: Option<String>,
    /// For a wrong number: what the likely mistake is (when the bank foresees it), else what
    /// the number is computed from. Never the answer.
    pub hint: Option<String>,
    /// Correct options the answer left out (multiple choice), so that a learner who chose only
    /// right ones learns that the set is incomplete, without being told which is missing.
    pub missing_correct: usize,
}

impl Feedback {
    /// The options to explain: all once the answer is revealed, otherwise only those chosen
    /// (an unchosen option's verdict would give the answer away).
    pub fn shown_options(&self) -> impl Iterator<Item = &OptionFeedback> {
        self.options.iter().filter(|o| self.answer_revealed || o.selected)
    }

    /// The question's explanation, once the answer is revealed (it states the answer).
    pub fn shown_explanation(&self) -> Option<&str> {
        self.answer_revealed.then_some(self.explanation.as_str())
    }

    /// The same feedback with the right answer shown, on the learner's request.
    pub fn revealed(self) -> Self {
        Self {
            answer_revealed: true,
            ..self
        }
    }
}

/// A question the score missed, for the end screen's review.
#[derive(Debug, Clone, PartialEq)]
pub struct MissedQuestion {
    /// Index in the bank.
    pub index: usize,
    /// The Lab scenario that shows its idea.
    pub scenario: Option<String>,
}

/// The missed questions of one topic.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicReview {
    pub topic: String,
    pub questions: Vec<MissedQuestion>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    pub first_try_correct: usize,
    pub answered: usize,
    pub total: usize,
    /// Whole percent, rounded down so a certificate never overstates.
    pub percent: u8,
    pub passed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AnswerError {
    #[error("there is no question {0}")]
    NoSuchQuestion(usize),
    #[error("this answer does not fit the question")]
    WrongKind,
    #[error("option {0} does not exist")]
    NoSuchOption(usize),
    #[error("choose at least one option")]
    Empty,
    #[error("enter a number")]
    NotANumber,
}

/// Why answers sent for grading were refused; names the question.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FirstAnswerError {
    #[error("there is no question \"{0}\" in this bank")]
    UnknownQuestion(String),
    #[error("question \"{question}\": {error}")]
    Invalid { question: String, error: AnswerError },
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RestoreError {
    #[error("saved quiz progress could not be read: {0}")]
    Unreadable(String),
    #[error("saved quiz progress belongs to question bank version {saved}, this is version {current}")]
    OtherVersion { saved: u8, current: u8 },
}

impl AnswerError {
    /// The message the quiz page shows (see `assets/i18n`).
    pub fn message(&self) -> gradlab_i18n::Msg {
        use gradlab_i18n::Msg;
        match self {
            AnswerError::NoSuchQuestion(i) => Msg::new("quiz-error-no-question").arg("index", i + 1),
            AnswerError::WrongKind => Msg::new("quiz-error-wrong-kind"),
            AnswerError::NoSuchOption(i) => Msg::new("quiz-error-no-option").arg("index", i + 1),
            AnswerError::Empty => Msg::new("quiz-error-empty"),
            AnswerError::NotANumber => Msg::new("quiz-error-number"),
        }
    }
}

impl RestoreError {
    pub fn message(&self) -> gradlab_i18n::Msg {
        use gradlab_i18n::Msg;
        match self {
            RestoreError::Unreadable(detail) => Msg::new("quiz-restore-unreadable").arg("detail", detail),
            RestoreError::OtherVersion { saved, current } => Msg::new("quiz-restore-other-version")
                .arg("saved", saved)
                .arg("current", current),
        }
    }
}

/// The attempt, serializable as it is saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub bank_version: u8,
    /// Seed of this attempt's option order.
    pub seed: u64,
    /// Index of the question shown.
    pub current: usize,
    pub progress: BTreeMap<String, QuestionProgress>,
    /// Names the attempt at an issuer, which gives one attempt one credential: random, made
    /// by the browser when the attempt starts (see [`is_attempt_id`]). Saves from before it
    /// existed lack it; the page gives them one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_id: Option<String>,
}

/// Whether `text` is an attempt ID: 16 to 64 URL-safe characters (`A-Z a-z 0-9 - _`).
pub fn is_attempt_id(text: &str) -> bool {
    (16..=64).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// FNV-1a, to derive a per-question stream from its id.
fn id_hash(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Storage key of saved progress; carries the bank version so an old save is never read by a new bank.
pub fn storage_key(bank_version: u8) -> String {
    format!("gradlab.quiz.v{bank_version}")
}

impl Attempt {
    pub fn new(bank: &QuestionBank, seed: u64) -> Self {
        Self {
            bank_version: bank.version,
            seed,
            current: 0,
            progress: BTreeMap::new(),
            attempt_id: None,
        }
    }

    /// The same attempt named by `attempt_id` (ignored unless [`is_attempt_id`] holds).
    pub fn with_attempt_id(mut self, attempt_id: Option<String>) -> Self {
        self.attempt_id = attempt_id.filter(|id| is_attempt_id(id));
        self
    }

    /// Display order of a question's options: a permutation of bank indices, fixed per attempt.
    pub fn option_order(&self, question: &Question) -> Vec<usize> {
        let mut order: Vec<usize> = (0..question.options().len()).collect();
        SeededRng::derive(self.seed, id_hash(&question.id)).shuffle(&mut order);
        order
    }

    fn is_correct(question: &Question, answer: &Answer) -> Result<bool, AnswerError> {
        match (&question.kind, answer) {
            (QuestionKind::Single { options }, Answer::Single(i)) => {
                options.get(*i).map(|o| o.correct).ok_or(AnswerError::NoSuchOption(*i))
            }
            (QuestionKind::Multiple { options }, Answer::Multiple(selected)) => {
                if selected.is_empty() {
                    return Err(AnswerError::Empty);
                }
                if let Some(&bad) = selected.iter().find(|&&i| i >= options.len()) {
                    return Err(AnswerError::NoSuchOption(bad));
                }
                Ok(options
                    .iter()
                    .enumerate()
                    .all(|(i, o)| o.correct == selected.contains(&i)))
            }
            (QuestionKind::Numeric { answer, tolerance, .. }, Answer::Numeric(value)) => {
                if !value.is_finite() {
                    return Err(AnswerError::NotANumber);
                }
                Ok((value - answer).abs() <= *tolerance + 1e-9 * answer.abs())
            }
            _ => Err(AnswerError::WrongKind),
        }
    }

    /// Grades an answer to question `index`, records it and returns the feedback.
    pub fn answer(&mut self, bank: &QuestionBank, index: usize, answer: Answer) -> Result<Feedback, AnswerError> {
        let question = bank.questions.get(index).ok_or(AnswerError::NoSuchQuestion(index))?;
        let correct = Self::is_correct(question, &answer)?;
        let entry = self.progress.entry(question.id.clone()).or_insert(QuestionProgress {
            first_try_correct: correct,
            tries: 0,
            solved: false,
            last_answer: answer.clone(),
            first_answer: Some(answer.clone()),
        });
        entry.tries += 1;
        entry.solved |= correct;
        entry.last_answer = answer.clone();
        Ok(self.feedback(question, &answer, correct))
    }

    /// Feedback for a recorded answer, e.g. to show again after a reload.
    pub fn feedback_for(&self, bank: &QuestionBank, index: usize) -> Option<Feedback> {
        let question = bank.questions.get(index)?;
        let progress = self.progress.get(&question.id)?;
        let correct = Self::is_correct(question, &progress.last_answer).ok()?;
        Some(self.feedback(question, &progress.last_answer, correct))
    }

    /// The answer that [`Attempt::feedback_for`] explains: what the question's inputs show
    /// when the learner comes back to it.
    pub fn shown_answer(&self, bank: &QuestionBank, index: usize) -> Option<&Answer> {
        let question = bank.questions.get(index)?;
        self.progress.get(&question.id).map(|p| &p.last_answer)
    }

    fn feedback(&self, question: &Question, answer: &Answer, correct: bool) -> Feedback {
        let selected = |i: usize| match answer {
            Answer::Single(s) => *s == i,
            Answer::Multiple(s) => s.contains(&i),
            Answer::Numeric(_) => false,
        };
        let tries = self.progress.get(&question.id).map_or(1, |p| p.tries);
        let options = self
            .option_order(question)
            .into_iter()
            .map(|i| {
                let choice = &question.options()[i];
                OptionFeedback {
                    index: i,
                    selected: selected(i),
                    correct: choice.correct,
                    explanation: choice.explanation.clone(),
                }
            })
            .collect();
        let hint = match (&question.kind, answer) {
            (QuestionKind::Numeric { approach, hints, .. }, Answer::Numeric(value)) if !correct => Some(
                hints
                    .iter()
                    .find(|h| h.matches(*value))
                    .map_or_else(|| approach.clone(), |h| h.explanation.clone()),
            ),
            _ => None,
        };
        let missing_correct = match (&question.kind, answer) {
            (QuestionKind::Multiple { options }, Answer::Multiple(chosen)) => options
                .iter()
                .enumerate()
                .filter(|(i, o)| o.correct && !chosen.contains(i))
                .count(),
            _ => 0,
        };
        Feedback {
            correct,
            answer_revealed: correct || tries >= REVEAL_AFTER_TRIES,
            options,
            explanation: question.explanation.clone(),
            scenario: question.scenario.clone(),
            hint,
            missing_correct,
        }
    }

    pub fn progress_of(&self, question: &Question) -> Option<&QuestionProgress> {
        self.progress.get(&question.id)
    }

    pub fn score(&self, bank: &QuestionBank) -> Score {
        let total = bank.questions.len();
        let (mut first_try_correct, mut answered) = (0, 0);
        for q in &bank.questions {
            if let Some(p) = self.progress.get(&q.id) {
                answered += 1;
                first_try_correct += usize::from(p.first_try_correct);
            }
        }
        let percent = (100 * first_try_correct / total.max(1)) as u8;
        let complete = answered == total;
        Score {
            first_try_correct,
            answered,
            total,
            percent,
            passed: complete && first_try_correct as f64 >= bank.pass_threshold * total as f64 - 1e-9,
        }
    }

    /// The first answer to each question, by question id: what an issuer grades for itself.
    pub fn first_answers(&self) -> BTreeMap<String, Answer> {
        self.progress
            .iter()
            .filter_map(|(id, p)| Some((id.clone(), p.first_answer.clone()?)))
            .collect()
    }

    /// Grades first answers sent from elsewhere (an issuer never trusts a client's score): each
    /// answer is checked against the bank, and the score counts them as first tries.
    pub fn grade_first_answers(
        bank: &QuestionBank,
        answers: &BTreeMap<String, Answer>,
    ) -> Result<Score, FirstAnswerError> {
        let mut attempt = Attempt::new(bank, 0);
        for (id, answer) in answers {
            let index = bank
                .questions
                .iter()
                .position(|q| &q.id == id)
                .ok_or_else(|| FirstAnswerError::UnknownQuestion(id.clone()))?;
            attempt
                .answer(bank, index, answer.clone())
                .map_err(|error| FirstAnswerError::Invalid {
                    question: id.clone(),
                    error,
                })?;
        }
        Ok(attempt.score(bank))
    }

    pub fn is_complete(&self, bank: &QuestionBank) -> bool {
        bank.questions.iter().all(|q| self.progress.contains_key(&q.id))
    }

    /// Indices of questions whose answer is still wrong, for a retry round.
    pub fn unsolved(&self, bank: &QuestionBank) -> Vec<usize> {
        bank.questions
            .iter()
            .enumerate()
            .filter(|(_, q)| self.progress.get(&q.id).is_some_and(|p| !p.solved))
            .map(|(i, _)| i)
            .collect()
    }

    /// The questions whose first answer was wrong (what the score missed), grouped by topic in
    /// the bank's order, each with the Lab scenario that shows its idea: the end screen's review.
    pub fn missed_by_topic(&self, bank: &QuestionBank) -> Vec<TopicReview> {
        let mut topics: Vec<TopicReview> = Vec::new();
        for (index, question) in bank.questions.iter().enumerate() {
            if self.progress.get(&question.id).is_none_or(|p| p.first_try_correct) {
                continue;
            }
            let missed = MissedQuestion {
                index,
                scenario: question.scenario.clone(),
            };
            match topics.iter_mut().find(|t| t.topic == question.topic) {
                Some(topic) => topic.questions.push(missed),
                None => topics.push(TopicReview {
                    topic: question.topic.clone(),
                    questions: vec![missed],
                }),
            }
        }
        topics
    }

    pub fn save(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Restores a save; answers to questions the bank no longer has are dropped, and a current
    /// index past the end is clamped, so a save never breaks the bank it is loaded into.
    pub fn restore(bank: &QuestionBank, saved: &str) -> Result<Self, RestoreError> {
        let mut attempt: Attempt = serde_json::from_str(saved).map_err(|e| RestoreError::Unreadable(e.to_string()))?;
        if attempt.bank_version != bank.version {
            return Err(RestoreError::OtherVersion {
                saved: attempt.bank_version,
                current: bank.version,
            });
        }
        let recorded = std::mem::take(&mut attempt.progress).into_iter().map(|(id, p)| {
            let answers = RecordedAnswers {
                first: p.first_answer,
                last: p.last_answer,
                tries: p.tries,
            };
            (id, answers)
        });
        Ok(Self::from_recorded(bank, attempt.seed, attempt.current, recorded).with_attempt_id(attempt.attempt_id))
    }

    /// This attempt, made with the older bank `older`, carried into `bank`: the answers to the
    /// questions `bank` asks unchanged are kept (and graded again), the others dropped, and it
    /// opens at the first question without an answer. It is a new attempt at an issuer, so it
    /// has no attempt ID (the page gives it one): the old ID may have been certified already.
    pub fn carried_into(self, older: &QuestionBank, bank: &QuestionBank) -> Attempt {
        let recorded: Vec<(String, RecordedAnswers)> = self
            .progress
            .into_iter()
            .filter(|(id, _)| bank.asks_unchanged(older, id))
            .map(|(id, p)| {
                let answers = RecordedAnswers {
                    first: p.first_answer,
                    last: p.last_answer,
                    tries: p.tries,
                };
                (id, answers)
            })
            .collect();
        let mut attempt = Self::from_recorded(bank, self.seed, 0, recorded);
        attempt.current = bank
            .questions
            .iter()
            .position(|q| !attempt.progress.contains_key(&q.id))
            .unwrap_or(0);
        attempt
    }

    /// Takes in the answers another page (a second tab) saved for this attempt, so that neither
    /// page's answers are lost when one of them saves. `stored` is what storage holds, written
    /// before this page's next save: where both pages answered a question, its first answer is
    /// the stored one (a first answer never changes once saved), tries are the larger
    /// count, and the question counts as solved if either page solved it. The question shown
    /// here stays where it is.
    pub fn merge_stored(&mut self, stored: &Attempt) {
        for (id, theirs) in &stored.progress {
            let merged = match self.progress.get(id) {
                None => theirs.clone(),
                Some(mine) => {
                    let latest = if mine.tries >= theirs.tries { mine } else { theirs };
                    let solved = mine.solved || theirs.solved;
                    // Solved after a wrong first answer took a second try, on whichever page.
                    let least = if solved && !theirs.first_try_correct { 2 } else { 1 };
                    QuestionProgress {
                        first_try_correct: theirs.first_try_correct,
                        first_answer: theirs.first_answer.clone(),
                        tries: mine.tries.max(theirs.tries).max(least),
                        solved,
                        last_answer: if mine.solved && !theirs.solved {
                            mine.last_answer.clone()
                        } else if theirs.solved && !mine.solved {
                            theirs.last_answer.clone()
                        } else {
                            latest.last_answer.clone()
                        },
                    }
                }
            };
            self.progress.insert(id.clone(), merged);
        }
    }

    /// Rebuilds an attempt from recorded answers, grading every one with the bank: a stored
    /// "correct" flag is never trusted. Answers to questions the bank does not have, or that do
    /// not fit their question, are dropped; a current index past the end is clamped.
    pub fn from_recorded(
        bank: &QuestionBank,
        seed: u64,
        current: usize,
        recorded: impl IntoIterator<Item = (String, RecordedAnswers)>,
    ) -> Self {
        let mut attempt = Attempt::new(bank, seed);
        for (id, answers) in recorded {
            let Some(question) = bank.question(&id) else { continue };
            let Ok(solved) = Self::is_correct(question, &answers.last) else {
                continue;
            };
            // A right answer ends a question, so a question tried once was answered first with
            // its last answer, and one tried more than once was first answered wrong.
            let tries = answers.tries.max(1);
            let first = answers.first.or_else(|| (tries == 1).then(|| answers.last.clone()));
            let first_try_correct = match &first {
                Some(first) => match Self::is_correct(question, first) {
                    Ok(correct) => correct,
                    Err(_) => continue,
                },
                None => false,
            };
            attempt.progress.insert(
                id,
                QuestionProgress {
                    first_try_correct,
                    tries,
                    solved,
                    last_answer: answers.last,
                    first_answer: first,
                },
            );
        }
        attempt.current = current.min(bank.questions.len().saturating_sub(1));
        attempt
    }
}
