//! The tiny GPT's sandbox: the settings a learner chooses on its page ([`GptSettings`]: how the
//! text is cut, the model, N, the learning rate and its warm-up), each a control with its URL
//! parameter, its checks and a message for the form, so that a shared link trains the same model
//! and a bad value never blocks the page.

use crate::controls::ControlValue;
use gradlab_i18n::Msg;
use gradlab_route::{bad_parameter, UrlParams};
use gradlab_sim::gpt::lab::GptLabConfig;
use gradlab_sim::gpt::scenario::GptSettings;
use gradlab_sim::gpt::spec::LIMITS;
use gradlab_sim::gpt::text::ExampleKind;

/// The peak learning rates the form accepts: AdamW on this model learns from about 1e-4 and
/// diverges visibly well before 0.1, both worth seeing.
pub const LEARNING_RATE_RANGE: (f64, f64) = (1e-5, 0.1);
/// The longest warm-up the form accepts, in optimizer steps (the cosine decays over 2,000).
pub const MAX_WARMUP_STEPS: u32 = 1_000;

/// One control of the settings form, in the form's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GptControl {
    Data,
    Layers,
    Width,
    Heads,
    Context,
    MicroBatches,
    LearningRate,
    Warmup,
}

impl GptControl {
    /// The form's order, which is also the order a link is read in (the heads before the width
    /// that must be their multiple).
    pub const ALL: [GptControl; 8] = [
        GptControl::Data,
        GptControl::Layers,
        GptControl::Heads,
        GptControl::Width,
        GptControl::Context,
        GptControl::MicroBatches,
        GptControl::LearningRate,
        GptControl::Warmup,
    ];

    /// The URL parameter, and the suffix of the control's message ids (`gpt-control-{key}`).
    pub fn key(self) -> &'static str {
        match self {
            GptControl::Data => "data",
            GptControl::Layers => "layers",
            GptControl::Width => "width",
            GptControl::Heads => "heads",
            GptControl::Context => "context",
            GptControl::MicroBatches => "n",
            GptControl::LearningRate => "lr",
            GptControl::Warmup => "warmup",
        }
    }

    /// The values a menu offers, for the controls that are chosen rather than typed.
    pub fn choices(self) -> Option<Vec<String>> {
        let whole = |range: std::ops::RangeInclusive<usize>| range.map(|v| v.to_string()).collect();
        match self {
            GptControl::Data => Some(ExampleKind::ALL.iter().map(|k| k.id().to_string()).collect()),
            GptControl::Layers => Some(whole(limit("layers"))),
            GptControl::Heads => Some(whole(limit("heads"))),
            GptControl::MicroBatches => {
                let batch = GptLabConfig::default().batch;
                Some(
                    (1..=batch)
                        .filter(|n| batch.is_multiple_of(*n))
                        .map(|n| n.to_string())
                        .collect(),
                )
            }
            GptControl::Width | GptControl::Context | GptControl::LearningRate | GptControl::Warmup => None,
        }
    }

    /// The value as the form shows it and the URL holds it.
    pub fn text_of(self, settings: &GptSettings) -> String {
        match self {
            GptControl::Data => settings.examples.id().to_string(),
            GptControl::Layers => settings.model.layers.to_string(),
            GptControl::Width => settings.model.embedding.to_string(),
            GptControl::Heads => settings.model.heads.to_string(),
            GptControl::Context => settings.model.context.to_string(),
            GptControl::MicroBatches => settings.micro_batches.to_string(),
            GptControl::LearningRate => settings.learning_rate.to_string(),
            GptControl::Warmup => settings.warmup_steps.to_string(),
        }
    }

    /// `settings` with this control set from `text`, or why this value cannot be used (its own
    /// range; rules between controls are [`errors`]).
    pub fn set(self, settings: &GptSettings, text: &str) -> Result<GptSettings, Msg> {
        let text = text.trim();
        let mut next = *settings;
        let whole = |name: &str| -> Result<usize, Msg> {
            let range = limit(name);
            text.parse::<usize>()
                .ok()
                .filter(|v| range.contains(v))
                .ok_or_else(|| range_error(*range.start() as f64, *range.end() as f64))
        };
        match self {
            GptControl::Data => {
                next.examples = ExampleKind::from_id(text).ok_or_else(|| Msg::new("gpt-control-error-choice"))?;
            }
            GptControl::Layers => next.model.layers = whole("layers")?,
            GptControl::Width => next.model.embedding = whole("embedding")?,
            GptControl::Heads => next.model.heads = whole("heads")?,
            GptControl::Context => next.model.context = whole("context")?,
            GptControl::MicroBatches => {
                let offered = self.choices().unwrap_or_default();
                if !offered.iter().any(|c| c == text) {
                    return Err(Msg::new("gpt-control-error-divides")
                        .arg("batch", GptLabConfig::default().batch)
                        .arg("choices", offered.join(", ")));
                }
                next.micro_batches = text.parse().map_err(|_| Msg::new("gpt-control-error-choice"))?;
            }
            GptControl::LearningRate => {
                let (low, high) = LEARNING_RATE_RANGE;
                // The Lab's reader of decimals: a decimal comma is read as a point.
                next.learning_rate = <f64 as ControlValue>::parse(text)
                    .ok()
                    .filter(|v| (low..=high).contains(v))
                    .ok_or_else(|| range_error(low, high))?;
            }
            GptControl::Warmup => {
                next.warmup_steps = text
                    .parse::<u32>()
                    .ok()
                    .filter(|v| *v <= MAX_WARMUP_STEPS)
                    .ok_or_else(|| range_error(0.0, f64::from(MAX_WARMUP_STEPS)))?;
            }
        }
        Ok(next)
    }
}

/// The controls of the page's settings form, in its order: all but the cut of the text, which
/// the page sets apart (its Examples radio, effective at once).
pub const FORM_CONTROLS: [GptControl; 7] = [
    GptControl::Layers,
    GptControl::Heads,
    GptControl::Width,
    GptControl::Context,
    GptControl::MicroBatches,
    GptControl::LearningRate,
    GptControl::Warmup,
];

/// `base` with each control set from the text the form holds for it, in order, or every
/// problem beside its control: a value's own, then the rules between controls for those whose
/// own value was fine.
pub fn from_texts(base: &GptSettings, texts: &[(GptControl, String)]) -> Result<GptSettings, Vec<(GptControl, Msg)>> {
    let mut settings = *base;
    let mut problems = Vec::new();
    for (control, text) in texts {
        match control.set(&settings, text) {
            Ok(next) => settings = next,
            Err(problem) => problems.push((*control, problem)),
        }
    }
    for (control, problem) in errors(&settings) {
        if !problems.iter().any(|(c, _)| *c == control) {
            problems.push((control, problem));
        }
    }
    if problems.is_empty() {
        Ok(settings)
    } else {
        Err(problems)
    }
}

/// The range the Lab offers for one of the model's sizes (`gpt::spec::LIMITS`).
fn limit(name: &str) -> std::ops::RangeInclusive<usize> {
    LIMITS
        .iter()
        .find(|(field, _, _)| *field == name)
        .map_or(1..=1, |(_, low, high)| *low..=*high)
}

fn range_error(low: f64, high: f64) -> Msg {
    Msg::new("gpt-control-error-range").arg("low", low).arg("high", high)
}

/// What breaks a rule between controls, by the control the form marks: a width the heads do
/// not divide, or anything else the experiment refuses (named by its field).
pub fn errors(settings: &GptSettings) -> Vec<(GptControl, Msg)> {
    if !settings.model.embedding.is_multiple_of(settings.model.heads.max(1)) {
        return vec![(
            GptControl::Width,
            Msg::new("gpt-control-error-width-heads").arg("heads", settings.model.heads),
        )];
    }
    match settings.config() {
        Ok(_) => Vec::new(),
        Err(error) => {
            let control = GptControl::ALL
                .into_iter()
                .find(|c| error.field.ends_with(field_of(*c)))
                .unwrap_or(GptControl::Data);
            vec![(
                control,
                Msg::new("gpt-control-error-other").arg("reason", error.message),
            )]
        }
    }
}

/// The experiment's name for the field a control sets (`GptSettings::config`'s errors).
fn field_of(control: GptControl) -> &'static str {
    match control {
        GptControl::Data => "examples",
        GptControl::Layers => "layers",
        GptControl::Width => "embedding",
        GptControl::Heads => "heads",
        GptControl::Context => "context",
        GptControl::MicroBatches => "micro_batches",
        GptControl::LearningRate => "learning_rate",
        GptControl::Warmup => "warmup_steps",
    }
}

/// The settings a link asks for. A missing parameter keeps the preset's value; a value a
/// control refuses keeps it too, with a notice naming it; settings that break a rule between
/// controls fall back to the preset's altogether, with a notice, so a link never blocks the page.
pub fn from_pairs(pairs: &[(String, String)]) -> (GptSettings, Vec<Msg>) {
    let params = UrlParams::new(pairs);
    let mut settings = GptSettings::default();
    let mut notices = Vec::new();
    for control in GptControl::ALL {
        let Some(value) = params.get(control.key()) else {
            continue;
        };
        match control.set(&settings, value) {
            Ok(next) => settings = next,
            Err(_) => notices.push(bad_parameter(control.key(), value)),
        }
    }
    if !errors(&settings).is_empty() {
        notices.push(Msg::new("notice-bad-combination"));
        settings = GptSettings::default();
    }
    (settings, notices)
}

/// Each parameter of `settings` for the URL: `Some(value)` where it differs from the preset,
/// `None` where the link leaves it out (the preset's own link stays short).
pub fn url_parameters(settings: &GptSettings) -> Vec<(&'static str, Option<String>)> {
    let preset = GptSettings::default();
    GptControl::ALL
        .into_iter()
        .map(|control| {
            let text = control.text_of(settings);
            let changed = text != control.text_of(&preset);
            (control.key(), changed.then_some(text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_i18n::Localizer;

    fn pairs(query: &str) -> Vec<(String, String)> {
        query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_link_without_settings_trains_the_preset() {
        let (settings, notices) = from_pairs(&pairs("view=gpt&engine=cpu"));
        assert_eq!((settings, notices), (GptSettings::default(), Vec::new()));
        assert!(url_parameters(&settings).iter().all(|(_, value)| value.is_none()));
    }

    /// Every setting survives the round trip through the URL, and only the changed ones are
    /// written.
    #[test]
    fn chosen_settings_round_trip_through_the_url() {
        let query = "data=blocks&layers=1&heads=3&width=48&context=32&n=4&lr=0.001&warmup=10";
        let (settings, notices) = from_pairs(&pairs(query));
        assert_eq!(notices, Vec::new());
        assert_eq!(settings.examples, ExampleKind::Blocks);
        assert_eq!(
            (
                settings.model.layers,
                settings.model.heads,
                settings.model.embedding,
                settings.model.context
            ),
            (1, 3, 48, 32)
        );
        assert_eq!(
            (settings.micro_batches, settings.learning_rate, settings.warmup_steps),
            (4, 1e-3, 10)
        );
        let written: Vec<(String, String)> = url_parameters(&settings)
            .into_iter()
            .filter_map(|(key, value)| Some((key.to_string(), value?)))
            .collect();
        assert_eq!(written.len(), GptControl::ALL.len());
        assert_eq!(from_pairs(&written).0, settings);
        let only_n = GptSettings {
            micro_batches: 16,
            ..GptSettings::default()
        };
        let changed: Vec<_> = url_parameters(&only_n)
            .into_iter()
            .filter(|(_, v)| v.is_some())
            .collect();
        assert_eq!(changed, vec![("n", Some("16".to_string()))]);
    }

    /// A bad value is named and keeps the preset's; a combination no value was refused for
    /// (a width its heads do not divide) falls back to the preset, so the page always trains.
    #[test]
    fn bad_values_are_named_and_never_block_the_page() {
        for (query, parameter) in [
            ("layers=9", "layers"),
            ("layers=two", "layers"),
            ("width=8", "width"),
            ("context=1000", "context"),
            ("n=3", "n"),
            ("n=64", "n"),
            ("lr=0", "lr"),
            ("lr=NaN", "lr"),
            ("lr=1", "lr"),
            ("lr=0,5", "lr"),
            ("warmup=-1", "warmup"),
            ("warmup=5000", "warmup"),
            ("data=paragraphs", "data"),
        ] {
            let (settings, notices) = from_pairs(&pairs(query));
            assert_eq!(settings, GptSettings::default(), "{query}");
            assert_eq!(
                notices,
                vec![bad_parameter(parameter, query.split_once('=').unwrap().1)],
                "{query}"
            );
        }
        let (settings, notices) = from_pairs(&pairs("heads=3&width=64&layers=1"));
        assert_eq!(settings, GptSettings::default());
        assert_eq!(notices, vec![Msg::new("notice-bad-combination")]);
    }

    /// The form's messages: each control's own range, and the rule between width and heads,
    /// marked on the width.
    #[test]
    fn the_form_says_what_is_wrong_next_to_the_control() {
        let english = Localizer::english();
        let preset = GptSettings::default();
        let error = GptControl::Context.set(&preset, "8").unwrap_err();
        assert_eq!(english.msg(&error), "Choose a value from 16 to 128.");
        let error = GptControl::MicroBatches.set(&preset, "3").unwrap_err();
        assert_eq!(
            english.msg(&error),
            "N must divide the batch of 32 examples: 1, 2, 4, 8, 16, 32."
        );
        let three_heads = GptControl::Heads.set(&preset, "3").unwrap();
        let marked = errors(&three_heads);
        assert_eq!(marked.len(), 1);
        assert_eq!(marked[0].0, GptControl::Width);
        assert_eq!(
            english.msg(&marked[0].1),
            "The width must be a multiple of the 3 heads."
        );
        // A decimal comma, as the Spanish page writes numbers, is read as a point.
        assert_eq!(
            GptControl::LearningRate.set(&preset, "0,002").unwrap().learning_rate,
            0.002
        );
        let fixed = GptControl::Width.set(&three_heads, "48").unwrap();
        assert!(errors(&fixed).is_empty());
        assert_eq!(fixed.config().unwrap().model.head_size(), 16);
        for control in GptControl::ALL {
            assert!(
                english.has(&format!("gpt-control-{}", control.key())),
                "{}",
                control.key()
            );
        }
    }

    /// The form's texts: every problem at once, each beside its control, and the settings
    /// once none is left.
    #[test]
    fn the_forms_texts_give_the_settings_or_every_problem() {
        let preset = GptSettings::default();
        let texts = |pairs: &[(GptControl, &str)]| -> Vec<(GptControl, String)> {
            pairs.iter().map(|(c, t)| (*c, t.to_string())).collect()
        };
        let problems = from_texts(
            &preset,
            &texts(&[
                (GptControl::Heads, "3"),
                (GptControl::Width, "32"),
                (GptControl::LearningRate, "0.5"),
            ]),
        )
        .unwrap_err();
        let marked: Vec<GptControl> = problems.iter().map(|(c, _)| *c).collect();
        assert_eq!(marked, [GptControl::LearningRate, GptControl::Width]);
        let settings = from_texts(
            &preset,
            &texts(&[
                (GptControl::Heads, "3"),
                (GptControl::Width, "48"),
                (GptControl::LearningRate, "0,002"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (settings.model.heads, settings.model.embedding, settings.learning_rate),
            (3, 48, 0.002)
        );
        assert!(!FORM_CONTROLS.contains(&GptControl::Data));
        assert_eq!(FORM_CONTROLS.len() + 1, GptControl::ALL.len());
    }

    #[test]
    fn menus_offer_exactly_what_the_controls_accept() {
        let preset = GptSettings::default();
        for control in GptControl::ALL {
            if let Some(choices) = control.choices() {
                for choice in &choices {
                    assert!(control.set(&preset, choice).is_ok(), "{} {choice}", control.key());
                }
            }
        }
        assert_eq!(
            GptControl::MicroBatches.choices().unwrap(),
            ["1", "2", "4", "8", "16", "32"]
        );
        assert_eq!(GptControl::Data.choices().unwrap(), ["lines", "blocks"]);
    }
}
