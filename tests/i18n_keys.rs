//! Every message id the code uses exists in every language, and the languages define the same
//! ids. Ids written literally (`tr("...")`, `Msg::new("...")`) are found in the sources; ids
//! built from data (scenarios, run labels, options) are checked by the unit tests beside them.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails loudly")]

use std::collections::BTreeSet;
use std::path::Path;

use gradlab::i18n::{message_ids, Language, Localizer};

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Literal ids after `tr("` and `Msg::new("` in the sources.
fn literal_ids() -> BTreeSet<String> {
    let mut files = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    rust_files(root.join("src").as_path(), &mut files);
    rust_files(root.join("crates").as_path(), &mut files);
    let mut ids = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for marker in ["tr(\"", "Msg::new(\""] {
            for (start, _) in text.match_indices(marker) {
                // `tr(` only as a whole name: `attr("identifier")` names an XML attribute.
                let before = text[..start].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let rest = &text[start + marker.len()..];
                let id: String = rest.chars().take_while(|c| *c != '"').collect();
                if !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                    ids.insert(id);
                }
            }
        }
    }
    ids
}

#[test]
fn every_id_used_in_the_code_exists_in_every_language() {
    let used = literal_ids();
    assert!(
        used.len() > 60,
        "found only {} ids: is the scan still right?",
        used.len()
    );
    for language in Language::ALL {
        let localizer = Localizer::new(language).unwrap();
        let missing: Vec<_> = used
            .iter()
            .filter(|id| !localizer.has(id) && *id != "no-such-message")
            .collect();
        assert!(missing.is_empty(), "missing in {}: {missing:?}", language.tag());
    }
}

#[test]
fn every_language_defines_the_same_ids() {
    let reference: BTreeSet<String> = message_ids(Language::English.source()).into_iter().collect();
    for language in Language::ALL {
        let ids: BTreeSet<String> = message_ids(language.source()).into_iter().collect();
        let missing: Vec<_> = reference.difference(&ids).collect();
        let extra: Vec<_> = ids.difference(&reference).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{}: missing {missing:?}, extra {extra:?}",
            language.tag()
        );
    }
}

/// The tiny-GPT page names its runs, formulas, predictions, parts and charts by id.
#[test]
fn the_tiny_gpt_pages_built_ids_exist_in_every_language() {
    use gradlab::lab_state::gpt_view::{GptChart, MemoryPrediction, Prediction};
    use gradlab::sim::gpt::lab::Reduction;
    let mut ids = Vec::new();
    ids.extend(
        MemoryPrediction::ALL
            .iter()
            .map(|p| format!("gpt-memory-predict-{}", p.id())),
    );
    for reduction in Reduction::ALL {
        ids.push(format!("gpt-run-{}", reduction.id()));
        ids.push(format!("gpt-formula-{}", reduction.id()));
    }
    ids.extend(Prediction::ALL.iter().map(|p| format!("gpt-predict-{}", p.id())));
    ids.extend(GptChart::ALL.iter().map(|c| format!("gpt-chart-{}", c.slug())));
    for part in ["lines", "blocks"] {
        ids.push(format!("gpt-part-{part}"));
        ids.push(format!("gpt-predict-question-{part}"));
    }
    for language in Language::ALL {
        let localizer = Localizer::new(language).expect("messages parse");
        for id in &ids {
            assert!(localizer.has(id), "{}: missing {id}", language.tag());
        }
    }
}

#[test]
fn option_labels_exist_for_every_choice() {
    use gradlab::lab_state::controls::{Control, InputKind};
    let en = Localizer::english();
    // Each control's label, and each option of a choice, named as the form asks for them.
    let mut ids = Vec::new();
    for control in Control::ALL {
        ids.push(format!("control-{}-label", control.key()));
        if let InputKind::Choice(options) = control.input() {
            ids.extend(options.iter().map(|id| format!("{}-{id}", control.key())));
        }
    }
    assert!(
        ids.contains(&"norm-group".to_string()),
        "the choices are listed: {ids:?}"
    );
    for id in ids {
        assert!(en.has(&id), "missing {id}");
    }
}

#[test]
fn quiz_errors_read_in_english_as_their_error_text() {
    use gradlab::quiz::attempt::{AnswerError, RestoreError};
    let en = Localizer::english();
    for error in [
        AnswerError::NoSuchQuestion(2),
        AnswerError::WrongKind,
        AnswerError::NoSuchOption(4),
        AnswerError::Empty,
        AnswerError::NotANumber,
    ] {
        // The English text is the error's own text, with positions counted from 1 for people.
        let shown = en.msg(&error.message());
        assert!(!shown.starts_with('['), "{error:?}: {shown}");
    }
    for error in [
        RestoreError::Unreadable("bad json".into()),
        RestoreError::OtherVersion { saved: 1, current: 2 },
    ] {
        assert_eq!(en.msg(&error.message()), error.to_string());
    }
}

/// Learners read numbers in sentences as plain decimals or powers of ten (10⁻⁷), never in
/// e-notation (1e-7), and the Spanish texts say "microlote" throughout, not "micro-lote".
#[test]
fn messages_write_numbers_and_terms_the_same_way_in_every_language() {
    for language in Language::ALL {
        for line in language.source().lines().filter(|l| !l.trim_start().starts_with('#')) {
            let chars: Vec<char> = line.chars().collect();
            let e_notation = chars
                .windows(3)
                .any(|w| w[0].is_ascii_digit() && w[1] == 'e' && (w[2].is_ascii_digit() || w[2] == '-'));
            assert!(!e_notation, "{}: e-notation in: {line}", language.tag());
        }
    }
    let spanish = Language::Spanish.source();
    assert!(!spanish.contains("micro-lote"), "Spanish writes \"microlote\"");
    for english_term in [" forward ", " backward ", "el forward", "el backward"] {
        assert!(
            !spanish
                .lines()
                .filter(|l| !l.starts_with("code-"))
                .any(|l| l.contains(english_term)),
            "Spanish leaves \"{english_term}\" in English"
        );
    }
}
