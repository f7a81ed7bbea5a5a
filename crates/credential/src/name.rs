//! Learner names as they appear on a credential. A signed name is shown by every verifier, so it
//! must have one spelling (NFC, single spaces) and must not be able to hide or reorder the text
//! around it.

use thiserror::Error;
use unicode_normalization::UnicodeNormalization;

/// The longest name, in characters after NFC (the same limit as certificate IDs).
pub const MAX_NAME_CHARS: usize = gradlab_quiz::certificate::MAX_NAME_CHARS;

/// Which rule a name broke.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NameError {
    #[error("the name is empty")]
    Empty,
    #[error("the name has {chars} characters; at most {max} are allowed", max = MAX_NAME_CHARS)]
    TooLong { chars: usize },
    #[error("the name contains the control character U+{code_point:04X}")]
    ControlCharacter { code_point: u32 },
    #[error("the name contains the text-direction control U+{code_point:04X}, which could reorder the text around it")]
    DirectionControl { code_point: u32 },
}

impl NameError {
    /// The message a form shows (see `assets/i18n`).
    pub fn message(&self) -> gradlab_i18n::Msg {
        use gradlab_i18n::Msg;
        match self {
            NameError::Empty => Msg::new("badge-name-error-empty"),
            NameError::TooLong { chars } => Msg::new("badge-name-error-too-long")
                .arg("chars", chars)
                .arg("max", MAX_NAME_CHARS),
            NameError::ControlCharacter { code_point } => {
                Msg::new("badge-name-error-control").arg("code", format!("{code_point:04X}"))
            }
            NameError::DirectionControl { code_point } => {
                Msg::new("badge-name-error-direction").arg("code", format!("{code_point:04X}"))
            }
        }
    }
}

/// Embeddings, overrides and isolates: the bidirectional controls that change the order in
/// which the text after them is displayed.
fn is_direction_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The name as it is signed: Unicode NFC, trimmed, each run of white space (tabs and line breaks
/// included) made one space, 1 to [`MAX_NAME_CHARS`] characters, no other control characters
/// (category Cc) and no bidirectional embedding, override or isolate controls.
pub fn normalize_learner_name(input: &str) -> Result<String, NameError> {
    let composed: String = input.nfc().collect();
    let name = composed.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(NameError::ControlCharacter { code_point: c.into() });
    }
    if let Some(c) = name.chars().find(|c| is_direction_control(*c)) {
        return Err(NameError::DirectionControl { code_point: c.into() });
    }
    match name.chars().count() {
        0 => Err(NameError::Empty),
        chars if chars > MAX_NAME_CHARS => Err(NameError::TooLong { chars }),
        _ => Ok(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_get_one_spelling() {
        assert_eq!(normalize_learner_name("  Ada \t Lovelace\n").unwrap(), "Ada Lovelace");
        // "e" + combining acute composes to one character: both spellings sign the same name.
        let decomposed = "Jose\u{0301} Martí";
        assert_eq!(normalize_learner_name(decomposed).unwrap(), "José Martí");
        assert_eq!(normalize_learner_name(decomposed).unwrap().chars().count(), 10);
        assert_eq!(normalize_learner_name("李\u{00A0}小龙").unwrap(), "李 小龙");
    }

    #[test]
    fn each_rule_names_itself() {
        assert_eq!(normalize_learner_name(""), Err(NameError::Empty));
        assert_eq!(normalize_learner_name(" \t\n "), Err(NameError::Empty));
        assert_eq!(
            normalize_learner_name("Ada\u{0007}"),
            Err(NameError::ControlCharacter { code_point: 7 })
        );
        // NEL is white space as well as a control character: it becomes a space.
        assert_eq!(normalize_learner_name("Ada\u{0085}x").unwrap(), "Ada x");
        assert_eq!(
            normalize_learner_name("Ada\u{007F}"),
            Err(NameError::ControlCharacter { code_point: 0x7F })
        );
        for control in [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2069}',
        ] {
            assert_eq!(
                normalize_learner_name(&format!("evil{control}gpj.exe")),
                Err(NameError::DirectionControl {
                    code_point: control.into()
                })
            );
        }
        let eighty = "é".repeat(MAX_NAME_CHARS);
        assert_eq!(normalize_learner_name(&eighty).unwrap(), eighty);
        // 81 characters after NFC, though 162 code points before it.
        let long = "e\u{0301}".repeat(MAX_NAME_CHARS + 1);
        assert_eq!(
            normalize_learner_name(&long),
            Err(NameError::TooLong {
                chars: MAX_NAME_CHARS + 1
            })
        );
    }

    #[test]
    fn every_error_reads_the_same_in_its_message() {
        use gradlab_i18n::{Language, Localizer};
        let errors = [
            NameError::Empty,
            NameError::TooLong { chars: 81 },
            NameError::ControlCharacter { code_point: 7 },
            NameError::DirectionControl { code_point: 0x202E },
        ];
        let en = Localizer::english();
        for error in &errors {
            assert_eq!(en.msg(&error.message()), error.to_string());
        }
        for language in Language::ALL {
            let localizer = Localizer::new(language).unwrap();
            for error in &errors {
                assert!(localizer.has(&error.message().id), "{error:?} in {}", language.tag());
            }
        }
    }
}
