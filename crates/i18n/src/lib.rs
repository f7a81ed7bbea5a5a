//! The one localization layer: every string a learner reads is a Fluent message in
//! `assets/i18n/<language>.ftl`, looked up by id. Plain state types return [`Msg`] values (an id
//! and its arguments) and the UI turns them into text with a [`Localizer`], so the state layer
//! stays language-free and testable.

use std::borrow::Cow;

use fluent_bundle::{FluentArgs, FluentBundle, FluentResource};
use thiserror::Error;

/// A language the app is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    Spanish,
}

impl Language {
    pub const ALL: [Language; 2] = [Language::English, Language::Spanish];

    /// BCP 47 tag, as used in the URL and `<html lang>`.
    pub fn tag(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::Spanish => "es",
        }
    }

    /// The language's own name, as the switcher shows it.
    /// Whether numbers are written with a decimal comma (`0,5`) rather than a point.
    pub fn decimal_comma(self) -> bool {
        matches!(self, Language::Spanish)
    }

    pub fn endonym(self) -> &'static str {
        match self {
            Language::English => "English",
            Language::Spanish => "Español",
        }
    }

    /// The language of a BCP 47 tag by its primary subtag (`es-419` is Spanish), if we have it.
    pub fn from_tag(tag: &str) -> Option<Self> {
        let primary = tag
            .trim()
            .split(['-', '_'])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        Self::ALL.into_iter().find(|l| l.tag() == primary)
    }

    /// The first of the browser's preferred languages that we have; English otherwise.
    pub fn negotiate<'a>(preferred: impl IntoIterator<Item = &'a str>) -> Self {
        preferred
            .into_iter()
            .find_map(Self::from_tag)
            .unwrap_or(Language::English)
    }

    /// The Fluent source of this language, bundled into the binary.
    pub fn source(self) -> &'static str {
        match self {
            Language::English => include_str!("../../../assets/i18n/en.ftl"),
            Language::Spanish => include_str!("../../../assets/i18n/es.ftl"),
        }
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum I18nError {
    #[error("the {language} messages do not parse: {detail}")]
    Parse { language: &'static str, detail: String },
    #[error("the {language} messages define \"{id}\" twice")]
    Duplicate { language: &'static str, id: String },
}

/// A message to show: its id and named arguments, already formatted as text so that numbers
/// keep the precision the caller chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    pub id: Cow<'static, str>,
    pub args: Vec<(&'static str, String)>,
}

impl Msg {
    pub fn new(id: impl Into<Cow<'static, str>>) -> Self {
        Self {
            id: id.into(),
            args: Vec::new(),
        }
    }

    pub fn arg(mut self, name: &'static str, value: impl ToString) -> Self {
        self.args.push((name, value.to_string()));
        self
    }

    /// An argument that quotes text from outside the app (a URL parameter, a typed value):
    /// at most [`QUOTED_CHARS`] characters, wrapped in Unicode first-strong isolate marks so that
    /// right-to-left or override characters in it cannot reorder the message around it (the
    /// bundle's own isolation is off, see [`Localizer::new`]).
    pub fn quoted(self, name: &'static str, value: &str) -> Self {
        let mut text: String = value.chars().take(QUOTED_CHARS).collect();
        if value.chars().nth(QUOTED_CHARS).is_some() {
            text.push('…');
        }
        self.arg(name, format!("\u{2068}{text}\u{2069}"))
    }
}

/// How much of an outside value a message quotes.
pub const QUOTED_CHARS: usize = 40;

/// Formats messages of one language.
pub struct Localizer {
    language: Language,
    bundle: FluentBundle<FluentResource>,
}

impl std::fmt::Debug for Localizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Localizer").field("language", &self.language).finish()
    }
}

impl Localizer {
    pub fn new(language: Language) -> Result<Self, I18nError> {
        let resource =
            FluentResource::try_new(language.source().to_string()).map_err(|(_, errors)| I18nError::Parse {
                language: language.tag(),
                detail: errors.first().map(|e| e.to_string()).unwrap_or_default(),
            })?;
        let tag = language.tag().parse().map_err(|_| I18nError::Parse {
            language: language.tag(),
            detail: "bad language tag".into(),
        })?;
        let mut bundle = FluentBundle::new(vec![tag]);
        // Isolation marks around every number would end up in copied numbers; text from outside
        // the app is isolated where it is quoted instead (`Msg::quoted`).
        bundle.set_use_isolating(false);
        bundle.add_resource(resource).map_err(|errors| I18nError::Duplicate {
            language: language.tag(),
            id: errors.first().map(|e| format!("{e:?}")).unwrap_or_default(),
        })?;
        Ok(Self { language, bundle })
    }

    /// English, which always parses (a test checks it); used where no choice has been made yet.
    pub fn english() -> Self {
        match Self::new(Language::English) {
            Ok(localizer) => localizer,
            // Unreachable while the bundled file parses; an empty bundle shows ids instead of text.
            Err(_) => Self {
                language: Language::English,
                bundle: FluentBundle::new(Vec::new()),
            },
        }
    }

    pub fn language(&self) -> Language {
        self.language
    }

    pub fn has(&self, id: &str) -> bool {
        self.bundle.has_message(id)
    }

    /// The text of message `id` without arguments.
    pub fn text(&self, id: &str) -> String {
        self.format(id, &[])
    }

    /// The text of a [`Msg`].
    pub fn msg(&self, msg: &Msg) -> String {
        self.format(&msg.id, &msg.args)
    }

    /// A number as Rust formats it (`0.5476`, `2.3e-7`, `77.2 %`, a list `0.1, 0.2`) written
    /// the way this language writes numbers: Spanish uses a decimal comma, and separates a list
    /// of decimals with semicolons. Anything that is not a number is returned unchanged, so
    /// labels and quoted input never change.
    pub fn number(&self, text: &str) -> String {
        if !self.language.decimal_comma() {
            return text.to_string();
        }
        let pieces: Vec<&str> = text.split(", ").collect();
        let numeric = |piece: &str| {
            piece
                .split(' ')
                .next()
                .is_some_and(|first| first.parse::<f64>().is_ok_and(f64::is_finite))
        };
        if !pieces.iter().all(|p| numeric(p)) {
            return text.to_string();
        }
        pieces
            .iter()
            .map(|piece| match piece.split_once(' ') {
                Some((number, unit)) => format!("{} {unit}", number.replace('.', ",")),
                None => piece.replace('.', ","),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn format(&self, id: &str, args: &[(&'static str, String)]) -> String {
        let Some(pattern) = self.bundle.get_message(id).and_then(|m| m.value()) else {
            // A missing message shows its id, which a test prevents from shipping.
            return format!("[{id}]");
        };
        let mut fluent_args = FluentArgs::new();
        for (name, value) in args {
            fluent_args.set(*name, self.number(value));
        }
        let mut errors = Vec::new();
        self.bundle
            .format_pattern(pattern, Some(&fluent_args), &mut errors)
            .into_owned()
    }
}

/// The message ids a Fluent source defines, in file order.
pub fn message_ids(source: &str) -> Vec<String> {
    let resource = match FluentResource::try_new(source.to_string()) {
        Ok(r) => r,
        Err((r, _)) => r,
    };
    resource
        .entries()
        .filter_map(|entry| match entry {
            fluent_syntax::ast::Entry::Message(m) => Some(m.id.name.to_string()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spanish_writes_numbers_with_a_decimal_comma_and_leaves_the_rest() {
        let es = Localizer::new(Language::Spanish).expect("Spanish loads");
        let en = Localizer::english();
        for (text, spanish) in [
            ("0.547622", "0,547622"),
            ("2.3e-7", "2,3e-7"),
            ("3.00e0", "3,00e0"),
            ("3.0 × 10⁻⁶", "3,0 × 10⁻⁶"),
            ("77.2 %", "77,2 %"),
            ("1.5 MiB", "1,5 MiB"),
            ("0.0049, 0.0017, 0.0039", "0,0049; 0,0017; 0,0039"),
            ("42", "42"),
            ("accumulate 4, loss / 4", "accumulate 4, loss / 4"),
            ("v1.2.3", "v1.2.3"),
            ("NaN", "NaN"),
            ("\u{2068}0.5\u{2069}", "\u{2068}0.5\u{2069}"),
        ] {
            assert_eq!(es.number(text), spanish, "{text}");
            assert_eq!(en.number(text), text);
        }
        // Arguments of messages go through it: the ratio reads "×4,00" in Spanish.
        let ratio = Msg::new("results-grad-ratio").arg("ratio", "4.00");
        assert!(es.msg(&ratio).contains("4,00"), "{}", es.msg(&ratio));
        assert!(en.msg(&ratio).contains("4.00"));
    }

    #[test]
    fn quoted_text_is_isolated_and_bounded() {
        let localizer = Localizer::new(Language::English).expect("English loads");
        let hostile = "\u{202E}gpj.exe";
        let text = localizer.msg(
            &Msg::new("notice-bad-parameter")
                .quoted("value", hostile)
                .arg("parameter", "lr"),
        );
        // The override is contained: the isolate closes before the rest of the sentence.
        assert!(text.contains("\u{2068}\u{202E}gpj.exe\u{2069}"), "{text:?}");
        assert!(
            text.ends_with("is not a valid value for lr; using the default."),
            "{text:?}"
        );
        let long = Msg::new("notice-bad-parameter").quoted("value", &"y".repeat(10_000));
        assert_eq!(long.args[0].1.chars().count(), QUOTED_CHARS + 3);
    }

    #[test]
    fn every_language_parses_without_duplicates() {
        for language in Language::ALL {
            let localizer = Localizer::new(language).unwrap();
            let ids = message_ids(language.source());
            assert!(ids.len() > 50, "{}", ids.len());
            let mut sorted = ids.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), ids.len(), "duplicate ids in {}", language.tag());
            assert!(ids.iter().all(|id| localizer.has(id)));
        }
    }

    #[test]
    fn languages_are_negotiated_from_tags() {
        assert_eq!(Language::from_tag("es-419"), Some(Language::Spanish));
        assert_eq!(Language::from_tag("EN_gb"), Some(Language::English));
        assert_eq!(Language::from_tag("fr"), None);
        assert_eq!(Language::negotiate(["fr-FR", "es-ES", "en"]), Language::Spanish);
        assert_eq!(Language::negotiate(["de"]), Language::English);
        let es = Localizer::new(Language::Spanish).unwrap();
        assert_eq!(
            es.msg(&Msg::new("control-error-not-divisible").arg("batch", 100).arg("n", 3)),
            "B = 100 no es divisible entre N = 3: los microlotes tendrían tamaños distintos"
        );
    }

    #[test]
    fn arguments_are_substituted_and_missing_ids_are_visible() {
        let en = Localizer::english();
        let text = en.msg(&Msg::new("control-error-not-divisible").arg("batch", 100).arg("n", 3));
        assert_eq!(
            text,
            "B = 100 is not divisible by N = 3: micro-batches would differ in size"
        );
        assert_eq!(en.text("no-such-message"), "[no-such-message]");
    }
}
