//! The quiz and certificates: plain, tested Rust with no UI (the web layer renders it).

pub mod attempt;
pub mod bank;
pub mod certificate;
pub mod issuance;
pub mod lti;
pub mod page;
pub mod saves;

#[cfg(test)]
mod tests {
    use super::attempt::{storage_key, Answer, Attempt, RestoreError};
    use super::bank::{QuestionBank, QuestionKind};

    fn bank() -> QuestionBank {
        QuestionBank::bundled().unwrap()
    }

    /// The right answer to question `i`.
    fn right(bank: &QuestionBank, i: usize) -> Answer {
        match &bank.questions[i].kind {
            QuestionKind::Single { options } => Answer::Single(options.iter().position(|o| o.correct).unwrap()),
            QuestionKind::Multiple { options } => {
                Answer::Multiple((0..options.len()).filter(|&j| options[j].correct).collect())
            }
            QuestionKind::Numeric { answer, .. } => Answer::Numeric(*answer),
        }
    }

    fn wrong(bank: &QuestionBank, i: usize) -> Answer {
        match &bank.questions[i].kind {
            QuestionKind::Single { options } => Answer::Single(options.iter().position(|o| !o.correct).unwrap()),
            QuestionKind::Multiple { options } => {
                Answer::Multiple(vec![options.iter().position(|o| !o.correct).unwrap()])
            }
            QuestionKind::Numeric { answer, .. } => Answer::Numeric(answer + 1.0),
        }
    }

    /// The page prints the "select all that apply" hint under every multiple-choice prompt; a
    /// prompt that says it too printed it twice.
    #[test]
    fn no_prompt_repeats_the_pages_select_all_hint() {
        use gradlab_i18n::{Language, Localizer};
        for language in Language::ALL {
            let hint = Localizer::new(language)
                .unwrap()
                .msg(&gradlab_i18n::Msg::new("quiz-select-all"));
            let hint = hint.trim_end_matches('.').to_lowercase();
            for question in QuestionBank::bundled_in(language).unwrap().questions {
                assert!(
                    !question.prompt.to_lowercase().contains(&hint),
                    "{} in {} says \"{hint}\" itself",
                    question.id,
                    language.tag()
                );
            }
        }
    }

    #[test]
    fn every_language_asks_the_same_questions_in_its_own_words() {
        use gradlab_i18n::Language;
        let english = bank();
        for language in Language::ALL {
            let translated = QuestionBank::bundled_in(language).unwrap();
            english.same_questions_as(&translated).unwrap();
            if language != Language::English {
                for (a, b) in english.questions.iter().zip(&translated.questions) {
                    assert_ne!(a.prompt, b.prompt, "{} untranslated in {}", a.id, language.tag());
                    assert_ne!(
                        a.explanation,
                        b.explanation,
                        "{} untranslated in {}",
                        a.id,
                        language.tag()
                    );
                    for (x, y) in a.options().iter().zip(b.options()) {
                        assert!(!y.text.is_empty() && !y.explanation.is_empty());
                        // Names of layers (LayerNorm) read the same in every language.
                        assert!(
                            x.explanation != y.explanation,
                            "{}: option explanation untranslated",
                            a.id
                        );
                    }
                }
            }
        }
        let mut changed = bank();
        if let QuestionKind::Numeric { answer, .. } = &mut changed.questions[1].kind {
            *answer += 1.0;
        }
        assert!(
            english.same_questions_as(&changed).is_err(),
            "a changed answer is caught"
        );
    }

    #[test]
    fn bundled_bank_is_well_formed_and_covers_the_topics() {
        let bank = bank();
        assert!(bank.questions.len() >= 15);
        let topics: std::collections::BTreeSet<&str> = bank.questions.iter().map(|q| q.topic.as_str()).collect();
        for topic in [
            "what accumulation buys",
            "effective batch size",
            "when to step and zero",
            "loss scaling",
            "normalization layers",
            "variable-size micro-batches",
            "gradient clipping",
            "learning-rate schedules",
            "reading the Lab",
            "language models: counting tokens",
        ] {
            assert!(topics.contains(topic), "no question on {topic}");
        }
        let kinds = |f: fn(&QuestionKind) -> bool| bank.questions.iter().filter(|q| f(&q.kind)).count();
        assert!(kinds(|k| matches!(k, QuestionKind::Single { .. })) >= 3);
        assert!(kinds(|k| matches!(k, QuestionKind::Multiple { .. })) >= 2);
        assert!(kinds(|k| matches!(k, QuestionKind::Numeric { .. })) >= 2);
    }

    #[test]
    fn malformed_banks_are_rejected_with_the_question() {
        let mut broken = bank();
        if let QuestionKind::Single { options } = &mut broken.questions[0].kind {
            options[1].correct = true;
        }
        let err = broken.validate().unwrap_err().to_string();
        assert!(
            err.contains("what-it-buys") && err.contains("exactly one correct"),
            "{err}"
        );
        let mut dup = bank();
        dup.questions[1].id = dup.questions[0].id.clone();
        assert!(dup.validate().unwrap_err().to_string().contains("twice"));
        let mut link = bank();
        link.questions[0].scenario = Some("nowhere".into());
        assert!(link.validate().unwrap_err().to_string().contains("unknown scenario"));
        assert!(QuestionBank::parse("{").is_err());
    }

    #[test]
    fn grading_gives_feedback_for_every_option() {
        let bank = bank();
        let mut attempt = Attempt::new(&bank, 1);
        let feedback = attempt.answer(&bank, 0, wrong(&bank, 0)).unwrap();
        assert!(!feedback.correct);
        assert_eq!(feedback.options.len(), bank.questions[0].options().len());
        assert!(feedback.options.iter().all(|o| !o.explanation.is_empty()));
        assert_eq!(feedback.options.iter().filter(|o| o.selected).count(), 1);
        let retry = attempt.answer(&bank, 0, right(&bank, 0)).unwrap();
        assert!(retry.correct);
        let progress = attempt.progress_of(&bank.questions[0]).unwrap();
        assert!(!progress.first_try_correct && progress.solved && progress.tries == 2);
    }

    /// The hostile pass's case: the right option was revealed at the first wrong answer, so
    /// "Try again" taught nothing.
    #[test]
    fn a_first_wrong_answer_explains_the_choice_and_keeps_the_answer_hidden() {
        let bank = bank();
        let mut attempt = Attempt::new(&bank, 1);
        let first = attempt.answer(&bank, 0, wrong(&bank, 0)).unwrap();
        assert!(!first.answer_revealed);
        let shown: Vec<_> = first.shown_options().collect();
        assert_eq!(shown.len(), 1, "only the chosen option");
        assert!(shown[0].selected && !shown[0].correct && !shown[0].explanation.is_empty());
        assert_eq!(first.shown_explanation(), None, "the explanation states the answer");
        // On request, everything.
        let asked = first.clone().revealed();
        assert_eq!(asked.shown_options().count(), bank.questions[0].options().len());
        assert_eq!(asked.shown_explanation(), Some(bank.questions[0].explanation.as_str()));
        // A second wrong answer reveals it too; so does a right one.
        let second = attempt.answer(&bank, 0, wrong(&bank, 0)).unwrap();
        assert!(second.answer_revealed && second.shown_options().count() == bank.questions[0].options().len());
        let mut fresh = Attempt::new(&bank, 1);
        assert!(fresh.answer(&bank, 0, right(&bank, 0)).unwrap().answer_revealed);
        // After a reload, the same: the tries are saved.
        let restored = Attempt::restore(&bank, &attempt.save()).unwrap();
        assert!(restored.feedback_for(&bank, 0).unwrap().answer_revealed);
        let mut once = Attempt::new(&bank, 1);
        once.answer(&bank, 0, wrong(&bank, 0)).unwrap();
        let restored = Attempt::restore(&bank, &once.save()).unwrap();
        assert!(!restored.feedback_for(&bank, 0).unwrap().answer_revealed);
    }

    #[test]
    fn the_review_lists_missed_questions_by_topic_with_their_scenarios() {
        let bank = bank();
        let mut attempt = Attempt::new(&bank, 1);
        for i in 0..bank.questions.len() {
            let first_right = i % 3 != 0;
            let answer = if first_right { right(&bank, i) } else { wrong(&bank, i) };
            attempt.answer(&bank, i, answer).unwrap();
        }
        let review = attempt.missed_by_topic(&bank);
        let missed: Vec<usize> = review
            .iter()
            .flat_map(|t| t.questions.iter().map(|q| q.index))
            .collect();
        let mut sorted = missed.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..bank.questions.len()).step_by(3).collect::<Vec<_>>());
        for topic in &review {
            assert!(!topic.questions.is_empty());
            for q in &topic.questions {
                assert_eq!(bank.questions[q.index].topic, topic.topic);
                assert_eq!(q.scenario, bank.questions[q.index].scenario);
            }
        }
        let topics: Vec<&str> = review.iter().map(|t| t.topic.as_str()).collect();
        let unique: std::collections::BTreeSet<&str> = topics.iter().copied().collect();
        assert_eq!(topics.len(), unique.len(), "one group per topic");
        assert!(
            review.iter().flat_map(|t| &t.questions).any(|q| q.scenario.is_some()),
            "missed questions link to the Lab"
        );
        assert!(Attempt::new(&bank, 1).missed_by_topic(&bank).is_empty());
    }

    /// The hostile pass's case: the question said BatchNorm's error was "about 0.1" where the
    /// Lab showed 0.3 to 0.8. The numbers the question quotes are checked against the preset.
    #[test]
    fn the_question_that_quotes_the_lab_quotes_what_the_lab_shows() {
        use gradlab_sim::lab::CpuLab;
        use gradlab_sim::scenario::Scenario;
        let bank = bank();
        let question = bank.question("read-relative-error").unwrap();
        for quote in [
            "starts near 0.1",
            "often 0.3 or more",
            "around 1e-7 or exactly 0",
            "error of 0.3",
        ] {
            assert!(question.prompt.contains(quote), "the prompt quotes \"{quote}\"");
        }
        // The Spanish question quotes the same numbers, with decimal commas.
        let spanish = QuestionBank::bundled_in(gradlab_i18n::Language::Spanish).unwrap();
        let pregunta = spanish.question("read-relative-error").unwrap();
        for quote in [
            "cerca de 0,1",
            "0,3 o más",
            "1e-7 o es exactamente 0",
            "error relativo de 0,3",
        ] {
            assert!(pregunta.prompt.contains(quote), "the Spanish prompt quotes \"{quote}\"");
        }
        let scenario = Scenario::by_id(question.scenario.as_deref().unwrap()).unwrap();
        let mut lab = CpuLab::<f32>::cpu(scenario.config).unwrap();
        lab.run(200, |_| {}).unwrap();
        let errors = |norm: &str| -> Vec<f64> {
            let run = lab
                .runs()
                .iter()
                .find(|r| r.spec.regime.micro_batches > 1 && r.spec.label.starts_with(norm))
                .unwrap();
            run.history.iter().map(|r| r.grad_relative_error.unwrap()).collect()
        };
        let batch_norm = errors("BatchNorm");
        let start = batch_norm[..5].iter().sum::<f64>() / 5.0;
        assert!((0.05..=0.2).contains(&start), "starts near 0.1: {start}");
        let later = &batch_norm[20..];
        let high = later.iter().filter(|&&e| e >= 0.3).count();
        assert!(3 * high >= later.len(), "often 0.3 or more: {high} of {}", later.len());
        // Exactly 0 on the CPU engine; the GPU-vs-CPU tests hold WebGPU to about 1e-7.
        assert!(errors("LayerNorm").iter().all(|&e| e == 0.0));
    }

    /// The token-count questions quote what the tiny GPT's runs compute: the weight a token
    /// gets under each reduction (`Reduction::token_weight`, the same function the page and the
    /// export show), so the bank's numbers cannot drift from the Lab's.
    #[test]
    fn the_token_count_questions_agree_with_the_gpt_labs_weights() {
        use gradlab_sim::gpt::lab::Reduction;
        let bank = bank();
        let question = bank.question("lm-token-weight").unwrap();
        let QuestionKind::Numeric { answer, hints, .. } = &question.kind else {
            panic!("lm-token-weight is numeric")
        };
        for quote in ["2 micro-batches", "10 non-padding tokens", "the second 40"] {
            assert!(question.prompt.contains(quote), "the prompt says \"{quote}\"");
        }
        let (short, long, n) = (10, 40, 2);
        let weight = |tokens| Reduction::MicroBatchMean.token_weight(tokens, short + long, n);
        assert_eq!(*answer, weight(short) / weight(long));
        // The foreseen mistakes: the ratio upside down, the full batch's equal weights, and the
        // short token against the full batch.
        let full = Reduction::FullBatch.token_weight(short, short + long, n);
        let expected = [weight(long) / weight(short), full / full, weight(short) / full];
        for (hint, value) in hints.iter().zip(expected) {
            assert!(hint.matches(value), "hint {} vs {value}", hint.value);
        }
        assert_eq!(hints.len(), expected.len());
        // With equal counts (fixed blocks) the per-micro-batch mean weighs every token as the
        // full batch does, as lm-fixed-blocks answers.
        let fixed = bank.question("lm-fixed-blocks").unwrap();
        assert!(fixed.options()[0].correct && fixed.options()[0].text.starts_with("Yes, exactly"));
        let block = 65;
        assert_eq!(
            Reduction::MicroBatchMean.token_weight(block, n * block, n),
            Reduction::FullBatch.token_weight(block, n * block, n)
        );
    }

    #[test]
    fn the_topics_are_listed_once_each_in_both_languages() {
        let topics = bank().topics();
        assert_eq!(topics.len(), 10);
        assert_eq!(topics[0], "what accumulation buys");
        let spanish = QuestionBank::bundled_in(gradlab_i18n::Language::Spanish)
            .unwrap()
            .topics();
        assert_eq!(spanish.len(), topics.len());
        assert_eq!(spanish[0], "qué aporta la acumulación");
    }

    /// Going back to an answered question shows the answer its feedback explains (the last
    /// one), also after a save and a restore; a question not answered yet shows none.
    #[test]
    fn an_answered_question_shows_the_answer_its_feedback_explains() {
        let bank = bank();
        let mut attempt = Attempt::new(&bank, 11);
        assert_eq!(attempt.shown_answer(&bank, 0), None);
        attempt.answer(&bank, 0, wrong(&bank, 0)).unwrap();
        assert_eq!(attempt.shown_answer(&bank, 0), Some(&wrong(&bank, 0)));
        attempt.answer(&bank, 0, right(&bank, 0)).unwrap();
        assert_eq!(attempt.shown_answer(&bank, 0), Some(&right(&bank, 0)));
        let restored = Attempt::restore(&bank, &attempt.save()).unwrap();
        assert_eq!(restored.shown_answer(&bank, 0), Some(&right(&bank, 0)));
        assert!(restored.feedback_for(&bank, 0).unwrap().correct);
        assert_eq!(restored.shown_answer(&bank, 1), None);
        assert_eq!(restored.shown_answer(&bank, bank.questions.len()), None);
    }

    /// A wrong number gets the hint its likely mistake calls for, else what the number is
    /// computed from; neither gives the answer away.
    #[test]
    fn a_wrong_number_is_explained_without_giving_the_answer() {
        for language in gradlab_i18n::Language::ALL {
            let bank = QuestionBank::bundled_in(language).unwrap();
            let index = bank.index_of("memory-ratio").unwrap();
            let QuestionKind::Numeric {
                approach,
                hints,
                answer,
                ..
            } = &bank.questions[index].kind
            else {
                panic!("memory-ratio is numeric")
            };
            let mut attempt = Attempt::new(&bank, 3);
            let feedback = attempt.answer(&bank, index, Answer::Numeric(256.0)).unwrap();
            assert!(!feedback.correct && !feedback.answer_revealed);
            let hint = feedback.hint.clone().unwrap();
            assert_eq!(&hint, &hints.iter().find(|h| h.value == 256.0).unwrap().explanation);
            assert!(hint.contains("256"), "it names the mistake: {hint}");
            let unforeseen = attempt.answer(&bank, index, Answer::Numeric(77.0)).unwrap();
            assert_eq!(unforeseen.hint.as_deref(), Some(approach.as_str()));
            let right = attempt.answer(&bank, index, Answer::Numeric(*answer)).unwrap();
            assert_eq!(right.hint, None);
            for question in &bank.questions {
                if let QuestionKind::Numeric {
                    approach,
                    hints,
                    answer,
                    ..
                } = &question.kind
                {
                    let answer = answer.to_string();
                    for text in hints.iter().map(|h| &h.explanation).chain([approach]) {
                        let numbers: Vec<&str> = text
                            .split(|c: char| !c.is_ascii_digit() && c != '.')
                            .filter(|n| !n.is_empty())
                            .collect();
                        assert!(
                            !numbers.contains(&answer.as_str()),
                            "{} ({}): a hint gives the answer {answer}: {text}",
                            question.id,
                            language.tag()
                        );
                    }
                }
            }
        }
    }

    /// Choosing some of the right options and none of the wrong ones says how many are missing,
    /// without naming them.
    #[test]
    fn a_right_but_incomplete_choice_says_how_many_are_missing() {
        let bank = bank();
        let (index, correct) = bank
            .questions
            .iter()
            .enumerate()
            .find_map(|(i, q)| match &q.kind {
                QuestionKind::Multiple { options } if options.iter().filter(|o| o.correct).count() >= 2 => Some((
                    i,
                    (0..options.len()).filter(|&j| options[j].correct).collect::<Vec<_>>(),
                )),
                _ => None,
            })
            .expect("a question with two correct options");
        let mut attempt = Attempt::new(&bank, 5);
        let feedback = attempt
            .answer(&bank, index, Answer::Multiple(vec![correct[0]]))
            .unwrap();
        assert!(!feedback.correct);
        assert_eq!(feedback.missing_correct, correct.len() - 1);
        assert!(!feedback.answer_revealed, "the missing options stay unnamed");
        assert_eq!(
            feedback.shown_options().count(),
            1,
            "only the chosen option is explained"
        );
        let complete = attempt.answer(&bank, index, Answer::Multiple(correct.clone())).unwrap();
        assert_eq!(complete.missing_correct, 0);
    }

    #[test]
    fn multiple_choice_needs_exactly_the_correct_set() {
        let bank = bank();
        let i = bank
            .questions
            .iter()
            .position(|q| matches!(q.kind, QuestionKind::Multiple { .. }))
            .unwrap();
        let mut attempt = Attempt::new(&bank, 2);
        let Answer::Multiple(all_right) = right(&bank, i) else {
            unreachable!()
        };
        let partial = Answer::Multiple(all_right[..1].to_vec());
        assert!(!attempt.answer(&bank, i, partial).unwrap().correct);
        let every = Answer::Multiple((0..bank.questions[i].options().len()).collect());
        assert!(!attempt.answer(&bank, i, every).unwrap().correct);
        assert!(attempt.answer(&bank, i, Answer::Multiple(all_right)).unwrap().correct);
        assert!(attempt.answer(&bank, i, Answer::Multiple(vec![])).is_err());
        assert!(attempt.answer(&bank, i, Answer::Multiple(vec![99])).is_err());
        assert!(attempt.answer(&bank, i, Answer::Numeric(1.0)).is_err());
    }

    #[test]
    fn numeric_answers_use_the_tolerance() {
        let bank = bank();
        let i = bank.questions.iter().position(|q| q.id == "effective-batch").unwrap();
        let mut attempt = Attempt::new(&bank, 3);
        assert!(attempt.answer(&bank, i, Answer::Numeric(512.0)).unwrap().correct);
        assert!(!attempt.answer(&bank, i, Answer::Numeric(128.0)).unwrap().correct);
        assert!(attempt.answer(&bank, i, Answer::Numeric(f64::NAN)).is_err());
    }

    #[test]
    fn option_order_is_a_seeded_permutation() {
        let bank = bank();
        let q = &bank.questions[0];
        let a = Attempt::new(&bank, 10).option_order(q);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..q.options().len()).collect::<Vec<_>>());
        assert_eq!(a, Attempt::new(&bank, 10).option_order(q));
        let differs = (11..40).any(|seed| Attempt::new(&bank, seed).option_order(q) != a);
        assert!(differs, "other seeds shuffle differently");
    }

    #[test]
    fn score_counts_first_tries_and_passes_at_the_threshold() {
        let bank = bank();
        let n = bank.questions.len();
        let allowed_misses = n - (bank.pass_threshold * n as f64).ceil() as usize;
        let mut attempt = Attempt::new(&bank, 4);
        for i in 0..n {
            if i < allowed_misses {
                attempt.answer(&bank, i, wrong(&bank, i)).unwrap();
            }
            attempt.answer(&bank, i, right(&bank, i)).unwrap();
        }
        let score = attempt.score(&bank);
        assert_eq!(score.first_try_correct, n - allowed_misses);
        assert!(score.passed, "{score:?}");
        assert!(attempt.unsolved(&bank).is_empty());
        let mut failing = Attempt::new(&bank, 5);
        for i in 0..n {
            let answer = if i <= allowed_misses {
                wrong(&bank, i)
            } else {
                right(&bank, i)
            };
            failing.answer(&bank, i, answer).unwrap();
        }
        assert!(!failing.score(&bank).passed);
        assert_eq!(failing.unsolved(&bank).len(), allowed_misses + 1);
        let mut incomplete = Attempt::new(&bank, 6);
        incomplete.answer(&bank, 0, right(&bank, 0)).unwrap();
        assert!(!incomplete.score(&bank).passed);
    }

    #[test]
    fn save_and_restore_round_trip_and_survive_bank_changes() {
        let bank = bank();
        let mut attempt = Attempt::new(&bank, 7);
        attempt.answer(&bank, 0, wrong(&bank, 0)).unwrap();
        attempt.answer(&bank, 1, right(&bank, 1)).unwrap();
        attempt.current = 2;
        let saved = attempt.save();
        assert_eq!(Attempt::restore(&bank, &saved).unwrap(), attempt);
        assert_eq!(attempt.feedback_for(&bank, 0).map(|f| f.correct), Some(false));
        // A bank without question 0 keeps the rest of the progress.
        let mut smaller = bank.clone();
        smaller.questions.remove(0);
        let restored = Attempt::restore(&smaller, &saved).unwrap();
        assert_eq!(restored.progress.len(), 1);
        assert!(restored.current < smaller.questions.len());
        // Another version, or garbage, is refused with a reason instead of breaking.
        let mut newer = bank.clone();
        newer.version = bank.version + 1;
        assert_eq!(
            Attempt::restore(&newer, &saved),
            Err(RestoreError::OtherVersion {
                saved: bank.version,
                current: newer.version
            })
        );
        assert!(matches!(
            Attempt::restore(&bank, "not json"),
            Err(RestoreError::Unreadable(_))
        ));
        assert_ne!(storage_key(1), storage_key(2));
    }

    #[test]
    fn an_issuer_grades_the_first_answers_exactly_as_the_page_scored_them() {
        use super::attempt::FirstAnswerError;
        let bank = bank();
        let mut attempt = Attempt::new(&bank, 11);
        for i in 0..bank.questions.len() {
            if i % 5 == 0 {
                attempt.answer(&bank, i, wrong(&bank, i)).unwrap();
            }
            attempt.answer(&bank, i, right(&bank, i)).unwrap();
        }
        let first = attempt.first_answers();
        assert_eq!(first.len(), bank.questions.len());
        // A retry never replaces the answer that counted.
        assert_eq!(first[&bank.questions[0].id], wrong(&bank, 0));
        let graded = Attempt::grade_first_answers(&bank, &first).unwrap();
        assert_eq!(graded, attempt.score(&bank));
        assert!(graded.first_try_correct < bank.questions.len());

        // Saves from before first answers were recorded: a question tried once was first
        // answered with its last answer; one tried more often was first answered wrongly, and
        // sends nothing to an issuer.
        let mut old = attempt.clone();
        for q in bank.questions.iter().take(3) {
            old.progress.get_mut(&q.id).unwrap().first_answer = None;
        }
        let tried_again = bank.questions[..3]
            .iter()
            .filter(|q| old.progress[&q.id].tries > 1)
            .count();
        assert_eq!(tried_again, 1, "question 1 was answered wrongly first");
        let restored = Attempt::restore(&bank, &old.save()).unwrap();
        assert_eq!(restored.first_answers().len(), bank.questions.len() - tried_again);
        assert_eq!(restored.score(&bank), attempt.score(&bank));
        assert!(
            !Attempt::grade_first_answers(&bank, &restored.first_answers())
                .unwrap()
                .passed
        );

        // A save edited to claim first-try successes is graded again from its answers.
        let mut forged = attempt.clone();
        for progress in forged.progress.values_mut() {
            progress.first_try_correct = true;
            progress.solved = true;
        }
        let restored = Attempt::restore(&bank, &forged.save()).unwrap();
        assert_eq!(restored.score(&bank), attempt.score(&bank));
        let mut all_wrong = Attempt::new(&bank, 11);
        for i in 0..bank.questions.len() {
            all_wrong.answer(&bank, i, wrong(&bank, i)).unwrap();
        }
        for progress in all_wrong.progress.values_mut() {
            progress.first_try_correct = true;
        }
        let restored = Attempt::restore(&bank, &all_wrong.save()).unwrap();
        assert_eq!(restored.score(&bank).first_try_correct, 0);
        assert!(!restored.score(&bank).passed);

        let mut unknown = first.clone();
        unknown.insert("no-such-question".into(), Answer::Single(0));
        assert_eq!(
            Attempt::grade_first_answers(&bank, &unknown),
            Err(FirstAnswerError::UnknownQuestion("no-such-question".into()))
        );
        let mut out_of_range = first;
        let single = bank
            .questions
            .iter()
            .find(|q| matches!(q.kind, QuestionKind::Single { .. }))
            .unwrap();
        out_of_range.insert(single.id.clone(), Answer::Single(99));
        assert!(matches!(
            Attempt::grade_first_answers(&bank, &out_of_range),
            Err(FirstAnswerError::Invalid { .. })
        ));
    }

    #[test]
    fn two_pages_saving_one_attempt_keep_both_pages_answers() {
        let bank = bank();
        let n = bank.questions.len();
        let opened = Attempt::new(&bank, 21);
        // Tab A answers everything; tab B, opened at the same time, answers question 0 later.
        let mut a = opened.clone();
        for i in 0..n {
            a.answer(&bank, i, if i == 1 { wrong(&bank, i) } else { right(&bank, i) })
                .unwrap();
        }
        let mut stale_b = opened.clone();
        stale_b.answer(&bank, 0, wrong(&bank, 0)).unwrap();
        stale_b.answer(&bank, 1, right(&bank, 1)).unwrap();
        stale_b.current = 1;
        let stored = Attempt::restore(&bank, &a.save()).unwrap();
        stale_b.merge_stored(&stored);
        assert_eq!(stale_b.progress.len(), n, "B's save no longer cuts A's progress");
        assert_eq!(stale_b.current, 1, "B stays on its question");
        // First answers saved first stay: A's right answer to 0, A's wrong one to 1.
        let first = stale_b.first_answers();
        assert_eq!(first[&bank.questions[0].id], right(&bank, 0));
        assert_eq!(first[&bank.questions[1].id], wrong(&bank, 1));
        assert_eq!(stale_b.score(&bank), a.score(&bank));
        let q1 = &stale_b.progress[&bank.questions[1].id];
        assert!(q1.solved && !q1.first_try_correct && q1.tries == 2);
        assert_eq!(q1.last_answer, right(&bank, 1), "the solving answer is the one shown");
        // What B saves now restores to the merged attempt.
        assert_eq!(Attempt::restore(&bank, &stale_b.save()).unwrap(), stale_b);

        // And the other way round: A merging B's answer keeps its own first answers.
        let mut b_only = opened.clone();
        b_only.answer(&bank, 0, wrong(&bank, 0)).unwrap();
        let mut fresh_a = opened;
        fresh_a.answer(&bank, 2, right(&bank, 2)).unwrap();
        fresh_a.merge_stored(&b_only);
        assert_eq!(fresh_a.progress.len(), 2);
        assert_eq!(fresh_a.first_answers()[&bank.questions[0].id], wrong(&bank, 0));
    }
}
