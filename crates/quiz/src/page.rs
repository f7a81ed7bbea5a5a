//! The quiz page's decisions, without the browser: where an attempt opens, the inputs shown
//! for a question and the answer they make, and what saving merges from another tab.

use gradlab_i18n::Msg;

use super::attempt::{storage_key, Answer, Attempt, Feedback};
use super::bank::{QuestionBank, QuestionKind};

/// What saved progress gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Restored {
    /// Nothing saved: a new attempt.
    Nothing,
    Attempt(Attempt),
    /// The save could not be read: it is kept aside, and `reason` says why.
    Unreadable {
        reason: Msg,
    },
    /// Progress saved under an older version of the bank, carried into this one
    /// ([`Attempt::carried_into`]).
    CarriedOver {
        attempt: Attempt,
        /// The version it was saved under.
        from: u8,
        /// The questions this version asks that the older one did not ask so (new or changed).
        new_questions: usize,
    },
}

impl Restored {
    /// Progress saved in this browser (`Attempt::save`), if any.
    pub fn from_local(bank: &QuestionBank, saved: Option<&str>) -> Self {
        match saved.map(|text| Attempt::restore(bank, text)) {
            None => Restored::Nothing,
            Some(Ok(attempt)) => Restored::Attempt(attempt),
            Some(Err(error)) => Restored::Unreadable {
                reason: error.message(),
            },
        }
    }
}

/// What this browser saved, read through `load` (local storage): under the bank's own key,
/// else the newest save of an older version, carried over (the page then saves it under its own
/// key, and the old save stays where it is). Returns what was restored, the key it was read
/// from (where an unreadable save is kept aside) and its text.
pub fn restore_local(bank: &QuestionBank, load: impl Fn(&str) -> Option<String>) -> (Restored, String, String) {
    let key = storage_key(bank.version);
    if let Some(saved) = load(&key) {
        return (Restored::from_local(bank, Some(&saved)), key, saved);
    }
    let older = QuestionBank::shipped_versions()
        .rev()
        .filter(|&version| version < bank.version)
        .find_map(|version| load(&storage_key(version)).map(|saved| (version, saved)));
    match older {
        None => (Restored::Nothing, key, String::new()),
        Some((version, saved)) => (
            Restored::carried_over(bank, version, &saved),
            storage_key(version),
            saved,
        ),
    }
}

impl Restored {
    /// `saved`, progress saved under the older bank version `from`, carried into `bank`; a save
    /// without a single answer is nothing to carry (a new attempt, with no notice).
    pub fn carried_over(bank: &QuestionBank, from: u8, saved: &str) -> Self {
        let older = match QuestionBank::shipped(from, gradlab_i18n::Language::English) {
            Ok(older) => older,
            Err(error) => {
                return Restored::Unreadable {
                    reason: Msg::new("quiz-restore-unreadable").arg("detail", error.to_string()),
                }
            }
        };
        match Attempt::restore(&older, saved) {
            Ok(attempt) => Self::carried(attempt, &older, bank),
            Err(error) => Restored::Unreadable {
                reason: error.message(),
            },
        }
    }

    /// `attempt`, read from a save of the older bank `older` (a browser's or an LMS's),
    /// carried into `bank`; one without a single answer is nothing to carry.
    pub fn carried(attempt: Attempt, older: &QuestionBank, bank: &QuestionBank) -> Self {
        if attempt.progress.is_empty() {
            return Restored::Nothing;
        }
        Restored::CarriedOver {
            new_questions: bank
                .questions
                .iter()
                .filter(|q| !bank.asks_unchanged(older, &q.id))
                .count(),
            attempt: attempt.carried_into(older, bank),
            from: older.version,
        }
    }
}

/// What the page says when it carried progress over from an older bank: how many answers it
/// kept and how many questions are new (or changed) since.
pub fn carried_over_notice(attempt: &Attempt, new_questions: usize) -> Msg {
    Msg::new("quiz-carried-over")
        .arg("kept", attempt.progress.len())
        .arg("new", new_questions)
}

/// What the page says about a save it could not read: `reason` (already worded) and the key
/// it is kept under, or that it could not be kept.
pub fn restore_notice(reason: &str, kept_under: Result<String, Msg>) -> Msg {
    match kept_under {
        Ok(backup) => Msg::new("quiz-restore-kept").arg("reason", reason).arg("key", backup),
        Err(_) => Msg::new("quiz-restore-lost").arg("reason", reason),
    }
}

/// Where the page opens.
#[derive(Debug, Clone, PartialEq)]
pub struct Opening {
    /// The attempt, at the question a link asked for.
    pub attempt: Attempt,
    /// A link named a question of the bank (it is now where the learner is).
    pub linked: bool,
    /// Why the save could not be read (the page keeps it aside and says so).
    pub unreadable: Option<Msg>,
    /// A link named no question of the bank: what the page says.
    pub unknown_question: Option<Msg>,
    /// Progress was carried over from an older bank: what the page says.
    pub carried_over: Option<Msg>,
}

impl Opening {
    /// The restored attempt (or a new one with `seed` and `attempt_id`), opened at the question
    /// `question` names. A restored attempt from before attempts had IDs gets `attempt_id`.
    pub fn new(
        bank: &QuestionBank,
        restored: Restored,
        question: Option<&str>,
        seed: u64,
        attempt_id: Option<String>,
    ) -> Self {
        let fresh = |id| Attempt::new(bank, seed).with_attempt_id(id);
        let mut carried_over = None;
        let (mut attempt, unreadable) = match restored {
            Restored::Nothing => (fresh(attempt_id), None),
            Restored::Attempt(attempt) if attempt.attempt_id.is_some() => (attempt, None),
            Restored::Attempt(attempt) => (attempt.with_attempt_id(attempt_id), None),
            Restored::CarriedOver {
                attempt, new_questions, ..
            } => {
                carried_over = Some(carried_over_notice(&attempt, new_questions));
                (attempt.with_attempt_id(attempt_id), None)
            }
            Restored::Unreadable { reason } => (fresh(attempt_id), Some(reason)),
        };
        let mut linked = false;
        let unknown_question = question.and_then(|id| match bank.index_of(id) {
            Some(index) => {
                attempt.current = index;
                linked = true;
                None
            }
            None => Some(Msg::new("quiz-unknown-question").quoted("value", id)),
        });
        Opening {
            attempt,
            linked,
            unreadable,
            unknown_question,
            carried_over,
        }
    }

    /// Outside an LMS, whether the page saves at once: a new attempt (nothing `saved_before`),
    /// so that a second tab opened now continues it, or a linked question, which becomes where
    /// the learner is.
    pub fn saves_locally_at_once(&self, saved_before: bool) -> bool {
        self.linked || !saved_before
    }
}

/// The inputs of a question as the learner left them: the options chosen (bank indices) and
/// the number typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    pub selection: Vec<usize>,
    pub number: Option<f64>,
}

impl Inputs {
    /// An answered question shows the answer its feedback explains, a new one empty inputs.
    pub fn showing(answer: Option<&Answer>) -> Self {
        match answer {
            Some(Answer::Single(i)) => Inputs {
                selection: vec![*i],
                number: None,
            },
            Some(Answer::Multiple(list)) => Inputs {
                selection: list.clone(),
                number: None,
            },
            Some(Answer::Numeric(x)) => Inputs {
                selection: Vec::new(),
                number: Some(*x),
            },
            None => Inputs::default(),
        }
    }
}

/// What the page shows at a question: its feedback (if answered) and its inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub feedback: Option<Feedback>,
    pub inputs: Inputs,
}

impl Shown {
    /// Question `index` of `attempt`; `revealed`: the learner asked to see its answer earlier.
    pub fn at(bank: &QuestionBank, attempt: &Attempt, index: usize, revealed: bool) -> Self {
        let feedback = attempt
            .feedback_for(bank, index)
            .map(|f| if revealed { f.revealed() } else { f });
        Shown {
            feedback,
            inputs: Inputs::showing(attempt.shown_answer(bank, index)),
        }
    }
}

/// The answer the inputs make for a question of `kind`: `None` when no option is chosen for a
/// single-choice question. A number may have a decimal comma; text that is none is NaN (which
/// grading refuses with its own message).
pub fn answer_from_inputs(kind: &QuestionKind, selection: &[usize], typed: &str) -> Option<Answer> {
    match kind {
        QuestionKind::Single { .. } => selection.first().copied().map(Answer::Single),
        QuestionKind::Multiple { .. } => Some(Answer::Multiple(selection.to_vec())),
        QuestionKind::Numeric { .. } => {
            let text = typed.trim().replace(',', ".");
            Some(Answer::Numeric(text.parse::<f64>().unwrap_or(f64::NAN)))
        }
    }
}

/// The options chosen after the learner clicks option `option`: a checkbox toggles, a radio
/// button chooses only itself.
pub fn toggle(selection: &mut Vec<usize>, option: usize, multiple: bool) {
    if !multiple {
        *selection = vec![option];
    } else if let Some(p) = selection.iter().position(|&x| x == option) {
        selection.remove(p);
    } else {
        selection.push(option);
    }
}

/// An answer as the embed's host gets it (xAPI's response form: `[,]` between choices).
pub fn response(answer: &Answer) -> String {
    match answer {
        Answer::Single(i) => i.to_string(),
        Answer::Multiple(list) => list.iter().map(usize::to_string).collect::<Vec<_>>().join("[,]"),
        Answer::Numeric(x) => x.to_string(),
    }
}

/// What is in this browser's storage now, when it is the same attempt as `attempt` (another tab
/// may have saved answers to it since): those answers are merged in before saving, never
/// overwritten.
pub fn same_attempt_saved(bank: &QuestionBank, attempt: &Attempt, stored: Option<&str>) -> Option<Attempt> {
    stored
        .and_then(|text| Attempt::restore(bank, text).ok())
        .filter(|s| s.seed == attempt.seed)
}

/// What another tab's save did to this page's attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherTab {
    /// Answers to the same attempt, merged in; `shown_changed` when they changed the question
    /// this page shows (the other tab answered it).
    Merged { shown_changed: bool },
    /// A new attempt started there, which replaces this one (its answers are saved already).
    Replaced,
}

impl OtherTab {
    /// Another tab saved `stored`; the question shown here stays shown.
    pub fn take(bank: &QuestionBank, attempt: &mut Attempt, stored: Attempt) -> Self {
        if attempt.seed == stored.seed {
            let shown = bank.questions.get(attempt.current);
            let before = shown.and_then(|q| attempt.progress_of(q)).cloned();
            attempt.merge_stored(&stored);
            let after = shown.and_then(|q| attempt.progress_of(q));
            OtherTab::Merged {
                shown_changed: before.as_ref() != after,
            }
        } else {
            *attempt = Attempt {
                current: attempt.current,
                ..stored
            };
            OtherTab::Replaced
        }
    }

    /// Whether the question shown gets the feedback and inputs the other tab's save gives it:
    /// when the other tab answered it and this page shows no feedback yet, or the attempt is
    /// another one. Otherwise what the learner is choosing here stays as it is: a save about
    /// other questions must not clear it.
    pub fn refreshes_question(self, feedback_shown: bool) -> bool {
        match self {
            OtherTab::Merged { shown_changed } => shown_changed && !feedback_shown,
            OtherTab::Replaced => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bank() -> QuestionBank {
        QuestionBank::bundled().unwrap()
    }

    fn index_of_kind(bank: &QuestionBank, numeric: bool) -> usize {
        bank.questions
            .iter()
            .position(|q| matches!(q.kind, QuestionKind::Numeric { .. }) == numeric)
            .unwrap()
    }

    /// A wrong answer to question `i` (option or number), so the question stays unsolved.
    fn some_answer(bank: &QuestionBank, i: usize) -> Answer {
        match &bank.questions[i].kind {
            QuestionKind::Single { options } => Answer::Single(options.iter().position(|o| !o.correct).unwrap()),
            QuestionKind::Multiple { options } => {
                Answer::Multiple(vec![options.iter().position(|o| !o.correct).unwrap()])
            }
            QuestionKind::Numeric { answer, .. } => Answer::Numeric(answer + 1.0),
        }
    }

    const ID: &str = "abcdefghijklmnop";

    #[test]
    fn nothing_saved_opens_a_new_attempt_with_the_given_seed_and_id() {
        let b = bank();
        let opening = Opening::new(&b, Restored::from_local(&b, None), None, 7, Some(ID.into()));
        assert_eq!(opening.attempt.seed, 7);
        assert_eq!(opening.attempt.attempt_id.as_deref(), Some(ID));
        assert!(opening.attempt.progress.is_empty());
        assert!(opening.saves_locally_at_once(false));
        assert!(!opening.saves_locally_at_once(true));
        assert_eq!(
            (opening.linked, opening.unreadable, opening.unknown_question),
            (false, None, None)
        );
    }

    #[test]
    fn a_save_is_restored_and_one_without_an_id_gets_one() {
        let b = bank();
        let mut saved = Attempt::new(&b, 3);
        saved.answer(&b, 0, some_answer(&b, 0)).unwrap();
        let opening = Opening::new(
            &b,
            Restored::from_local(&b, Some(&saved.save())),
            None,
            9,
            Some(ID.into()),
        );
        assert_eq!(opening.attempt.seed, 3);
        assert_eq!(opening.attempt.progress, saved.progress);
        assert_eq!(opening.attempt.attempt_id.as_deref(), Some(ID));

        let named = saved.with_attempt_id(Some("qrstuvwxyz012345".into()));
        let opening = Opening::new(&b, Restored::Attempt(named), None, 9, Some(ID.into()));
        assert_eq!(opening.attempt.attempt_id.as_deref(), Some("qrstuvwxyz012345"));
    }

    #[test]
    fn an_unreadable_save_opens_a_new_attempt_and_says_why() {
        let b = bank();
        let restored = Restored::from_local(&b, Some("{not json"));
        assert!(matches!(restored, Restored::Unreadable { .. }));
        let opening = Opening::new(&b, restored, None, 5, Some(ID.into()));
        assert_eq!(opening.attempt.seed, 5);
        assert!(opening.attempt.progress.is_empty());
        assert_eq!(opening.unreadable.unwrap().id, "quiz-restore-unreadable");
    }

    #[test]
    fn a_link_opens_its_question_and_an_unknown_one_is_named() {
        let b = bank();
        let id = b.questions[3].id.clone();
        let opening = Opening::new(&b, Restored::Nothing, Some(&id), 1, None);
        assert_eq!(opening.attempt.current, 3);
        assert!(opening.linked);
        assert!(opening.saves_locally_at_once(true));

        let opening = Opening::new(&b, Restored::Nothing, Some("no-such-question"), 1, None);
        assert_eq!(opening.attempt.current, 0);
        assert!(!opening.linked);
        let notice = opening.unknown_question.unwrap();
        assert_eq!(notice.id, "quiz-unknown-question");
        assert!(notice.args[0].1.contains("no-such-question"));
    }

    #[test]
    fn the_restore_notice_names_the_backup_key_or_says_it_is_lost() {
        let kept = restore_notice("Broken", Ok("gradlab.quiz.v1.unreadable".into()));
        assert_eq!(kept.id, "quiz-restore-kept");
        assert!(kept.args.contains(&("key", "gradlab.quiz.v1.unreadable".into())));
        let lost = restore_notice("Broken", Err(Msg::new("storage-save-failed")));
        assert_eq!(lost.id, "quiz-restore-lost");
        assert_eq!(lost.args, vec![("reason", "Broken".to_string())]);
    }

    #[test]
    fn inputs_show_the_answer_given_and_make_it_again() {
        let b = bank();
        for (i, q) in b.questions.iter().enumerate() {
            let answer = some_answer(&b, i);
            let inputs = Inputs::showing(Some(&answer));
            let typed = inputs
                .number
                .map(|x| x.to_string().replace('.', ","))
                .unwrap_or_default();
            assert_eq!(answer_from_inputs(&q.kind, &inputs.selection, &typed), Some(answer));
        }
        assert_eq!(Inputs::showing(None), Inputs::default());
    }

    #[test]
    fn no_option_chosen_makes_no_single_answer_and_bad_text_is_nan() {
        let b = bank();
        let single = b
            .questions
            .iter()
            .find(|q| matches!(q.kind, QuestionKind::Single { .. }))
            .unwrap();
        assert_eq!(answer_from_inputs(&single.kind, &[], ""), None);
        let numeric = &b.questions[index_of_kind(&b, true)];
        assert!(matches!(
            answer_from_inputs(&numeric.kind, &[], " 0,5 "),
            Some(Answer::Numeric(x)) if x == 0.5
        ));
        assert!(matches!(answer_from_inputs(&numeric.kind, &[], "half"), Some(Answer::Numeric(x)) if x.is_nan()));
    }

    #[test]
    fn checkboxes_toggle_and_radio_buttons_replace() {
        let mut chosen = vec![2];
        toggle(&mut chosen, 0, true);
        assert_eq!(chosen, [2, 0]);
        toggle(&mut chosen, 2, true);
        assert_eq!(chosen, [0]);
        toggle(&mut chosen, 3, false);
        assert_eq!(chosen, [3]);
    }

    #[test]
    fn responses_use_the_hosts_separator() {
        assert_eq!(response(&Answer::Single(2)), "2");
        assert_eq!(response(&Answer::Multiple(vec![0, 3])), "0[,]3");
        assert_eq!(response(&Answer::Numeric(0.25)), "0.25");
    }

    #[test]
    fn shown_feedback_keeps_an_answer_revealed_on_request() {
        let b = bank();
        let mut attempt = Attempt::new(&b, 1);
        let i = index_of_kind(&b, true);
        attempt.answer(&b, i, some_answer(&b, i)).unwrap();
        let hidden = Shown::at(&b, &attempt, i, false);
        assert!(!hidden.feedback.as_ref().unwrap().answer_revealed);
        assert_eq!(hidden.inputs, Inputs::showing(Some(&some_answer(&b, i))));
        assert!(Shown::at(&b, &attempt, i, true).feedback.unwrap().answer_revealed);
        let unanswered = Shown::at(&b, &attempt, i + 1, true);
        assert_eq!((unanswered.feedback, unanswered.inputs), (None, Inputs::default()));
    }

    #[test]
    fn another_tabs_answers_merge_and_its_new_attempt_replaces_this_one() {
        let b = bank();
        let mut here = Attempt::new(&b, 1);
        here.current = 4;
        let mut there = here.clone();
        there.answer(&b, 0, some_answer(&b, 0)).unwrap();
        assert_eq!(same_attempt_saved(&b, &here, Some(&there.save())), Some(there.clone()));
        // Question 0 answered there while this page shows question 4: the learner's choice on
        // question 4 stays.
        let merged = OtherTab::take(&b, &mut here, there.clone());
        assert_eq!(merged, OtherTab::Merged { shown_changed: false });
        assert_eq!(here.progress, there.progress);
        assert!(!merged.refreshes_question(false));
        // Question 4, the one shown here, answered there: it shows the answer unless this page
        // shows its own feedback already.
        there.answer(&b, 4, some_answer(&b, 4)).unwrap();
        let merged = OtherTab::take(&b, &mut here, there.clone());
        assert_eq!(merged, OtherTab::Merged { shown_changed: true });
        assert!(merged.refreshes_question(false));
        assert!(!merged.refreshes_question(true));
        // The same save heard twice changes nothing more.
        assert_eq!(
            OtherTab::take(&b, &mut here, there.clone()),
            OtherTab::Merged { shown_changed: false }
        );

        let other = Attempt::new(&b, 2);
        assert_eq!(same_attempt_saved(&b, &here, Some(&other.save())), None);
        assert_eq!(same_attempt_saved(&b, &here, Some("{broken")), None);
        assert_eq!(OtherTab::take(&b, &mut here, other), OtherTab::Replaced);
        assert_eq!((here.seed, here.current), (2, 4));
        assert!(here.progress.is_empty());
        assert!(OtherTab::Replaced.refreshes_question(true));
    }

    /// The right answer to question `i`.
    fn right_answer(bank: &QuestionBank, i: usize) -> Answer {
        match &bank.questions[i].kind {
            QuestionKind::Single { options } => Answer::Single(options.iter().position(|o| o.correct).unwrap()),
            QuestionKind::Multiple { options } => {
                Answer::Multiple((0..options.len()).filter(|&j| options[j].correct).collect())
            }
            QuestionKind::Numeric { answer, .. } => Answer::Numeric(*answer),
        }
    }

    /// A learner answered every question of version 1, then the quiz gained questions: the
    /// page carries the answers over (graded as before), opens at the first new question,
    /// says so, and asks for the new ones only; the old save is left where it was.
    #[test]
    fn progress_saved_under_an_older_version_is_carried_over() {
        let current = bank();
        let first = QuestionBank::shipped(1, gradlab_i18n::Language::English).unwrap();
        assert!(current.version > first.version);
        let mut old = Attempt::new(&first, 5).with_attempt_id(Some("old-attempt-id-0001".into()));
        for i in 0..first.questions.len() {
            if i % 8 == 0 {
                old.answer(&first, i, some_answer(&first, i)).unwrap();
            }
            old.answer(&first, i, right_answer(&first, i)).unwrap();
        }
        let saved = old.save();
        let load = |key: &str| (key == storage_key(1)).then(|| saved.clone());
        let (restored, key, text) = restore_local(&current, load);
        assert_eq!((key.as_str(), text.as_str()), (storage_key(1).as_str(), saved.as_str()));
        let Restored::CarriedOver {
            attempt,
            from,
            new_questions,
        } = restored.clone()
        else {
            panic!("{restored:?}")
        };
        assert_eq!(
            (from, attempt.bank_version, attempt.attempt_id.clone()),
            (1, current.version, None)
        );
        assert_eq!(
            attempt.progress, old.progress,
            "every answer of version 1 holds in version 2"
        );
        assert_eq!(
            attempt.score(&first).first_try_correct,
            old.score(&first).first_try_correct
        );
        let new: Vec<usize> = (0..current.questions.len())
            .filter(|&i| first.question(&current.questions[i].id).is_none())
            .collect();
        assert_eq!(new.len(), current.questions.len() - first.questions.len());
        assert_eq!(new_questions, new.len());
        assert_eq!(attempt.current, new[0], "it opens at the first new question");

        let opening = Opening::new(&current, restored, None, 9, Some(ID.into()));
        assert_eq!(
            opening.attempt.attempt_id.as_deref(),
            Some(ID),
            "a new attempt at the issuer"
        );
        assert_eq!(
            opening.carried_over,
            Some(
                Msg::new("quiz-carried-over")
                    .arg("kept", first.questions.len())
                    .arg("new", new.len())
            )
        );
        assert!(
            opening.saves_locally_at_once(false),
            "saved under the new version's key at once"
        );
        let mut attempt = opening.attempt;
        assert!(!attempt.score(&current).passed, "the new questions are still open");
        for &i in &new {
            attempt.answer(&current, i, right_answer(&current, i)).unwrap();
        }
        assert!(attempt.score(&current).passed);

        // A question whose answer changed is asked again; the others are kept.
        let mut changed = current.clone();
        let QuestionKind::Single { options } = &mut changed.questions[0].kind else {
            panic!("question 0 is single choice")
        };
        let right = options.iter().position(|o| o.correct).unwrap();
        options[right].correct = false;
        let other = (right + 1) % options.len();
        options[other].correct = true;
        let Restored::CarriedOver { attempt, .. } = Restored::carried_over(&changed, 1, &saved) else {
            panic!("carried over")
        };
        assert!(!attempt.progress.contains_key(&changed.questions[0].id));
        assert_eq!(attempt.progress.len(), first.questions.len() - 1);
        assert_eq!(attempt.current, 0);
        // A part-done attempt: the notice counts the new questions, not the unanswered ones.
        let mut part = Attempt::new(&first, 5);
        for i in 0..5 {
            part.answer(&first, i, right_answer(&first, i)).unwrap();
        }
        let opening = Opening::new(
            &current,
            Restored::carried_over(&current, 1, &part.save()),
            None,
            9,
            None,
        );
        assert_eq!(
            opening.carried_over,
            Some(Msg::new("quiz-carried-over").arg("kept", 5).arg("new", new.len()))
        );
        assert_eq!(opening.attempt.current, 5, "the first question without an answer");
        // An attempt of version 1 that was only opened is nothing to carry: no notice.
        let opened = Attempt::new(&first, 5).save();
        assert_eq!(Restored::carried_over(&current, 1, &opened), Restored::Nothing);

        // The version's own save wins; an unreadable old save is kept aside under its own key.
        let own = Attempt::new(&current, 3).save();
        let both = |key: &str| {
            Some(if key == storage_key(current.version) {
                own.clone()
            } else {
                saved.clone()
            })
        };
        assert_eq!(
            restore_local(&current, both).0,
            Restored::Attempt(Attempt::new(&current, 3))
        );
        let broken = |key: &str| (key == storage_key(1)).then(|| "{broken".to_string());
        let (restored, key, _) = restore_local(&current, broken);
        assert!(matches!(restored, Restored::Unreadable { .. }));
        assert_eq!(key, storage_key(1));
        assert_eq!(restore_local(&current, |_: &str| None).0, Restored::Nothing);
    }
}
