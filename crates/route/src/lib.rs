//! Which page the app shows, parsed from the URL's query parameters. Plain Rust, tested natively;
//! the web layer only hands over the decoded pairs.

use gradlab_i18n::Msg;
use gradlab_sim::gpt::scenario::GPT_SCENARIO_IDS;
use gradlab_sim::scenario::SCENARIO_IDS;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The Lab, optionally on one scenario.
    Lab {
        scenario: Option<String>,
    },
    /// The quiz, optionally opened at one question (a bank id, checked by the quiz page).
    Quiz {
        question: Option<String>,
    },
    Certificate,
    /// The benchmark page: CPU (wasm) and WebGPU engines on the canonical workload.
    Bench,
    /// The memory planner: a micro-batch and N for a model and a device's memory.
    Plan,
    /// The tiny GPT on Shakespeare: the token-count experiment.
    Gpt,
    /// Verify a certificate: both fields may be pre-filled from a share link.
    Verify {
        id: String,
        name: String,
    },
}

/// The two HTML documents of the app, each with its own wasm, so that a learner's first visit
/// (the Lab) loads none of the other pages' code. A URL of either document can name any page:
/// the document that does not hold it hands over to the one that does before its wasm loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// `index.html`: the Lab, with its course and step-through.
    Lab,
    /// `pages.html`: the quiz, the certificate, the verifier, the planner and the bench page.
    Pages,
}

impl Document {
    /// The document's file, beside the other one.
    pub fn file(self) -> &'static str {
        match self {
            Document::Lab => "index.html",
            Document::Pages => "pages.html",
        }
    }
}

/// A page's decoded URL parameters as every reader takes them (the route, the Lab's controls
/// and engine options, the embed options, the language): a key's first value, trimmed (the
/// route tells the learner about the others); [`bad_parameter`] is the notice for a value that
/// cannot be used.
#[derive(Debug, Clone, Copy)]
pub struct UrlParams<'a>(&'a [(String, String)]);

impl<'a> UrlParams<'a> {
    pub fn new(pairs: &'a [(String, String)]) -> Self {
        Self(pairs)
    }

    /// The first value of `key`, trimmed.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.trim())
    }
}

/// The notice for a parameter whose value cannot be used: the setting keeps its default.
pub fn bad_parameter(parameter: &str, value: &str) -> Msg {
    Msg::new("notice-bad-parameter")
        .quoted("value", value)
        .arg("parameter", parameter)
}

/// A URL parameter that was ignored, with why; shown to the user, never fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice(pub Msg);

const MAX_PARAM_CHARS: usize = 200;

/// The free experiment of the Lab, beside the presets.
pub const SANDBOX: &str = "sandbox";

impl Route {
    /// The quiz where the learner left it.
    pub const QUIZ: Route = Route::Quiz { question: None };

    pub fn from_pairs(pairs: &[(String, String)]) -> (Route, Vec<Notice>) {
        let mut notices = duplicate_notices(pairs);
        let params = UrlParams::new(pairs);
        let get = |key: &str| params.get(key);
        let clipped = |value: Option<&str>| {
            value
                .unwrap_or_default()
                .chars()
                .take(MAX_PARAM_CHARS)
                .collect::<String>()
        };
        let default_view = if get("bench").is_some() { "bench" } else { "lab" };
        let route = match get("view").unwrap_or(default_view) {
            "quiz" => Route::Quiz {
                question: quiz_question(pairs),
            },
            "certificate" => Route::Certificate,
            "bench" => Route::Bench,
            "plan" => Route::Plan,
            "gpt" => Route::Gpt,
            "verify" => Route::Verify {
                id: clipped(get("id")),
                name: clipped(get("name")),
            },
            other => {
                if other != "lab" {
                    notices.push(Notice(Msg::new("notice-unknown-page").quoted("value", other)));
                }
                let scenario = match get("scenario") {
                    Some(id) if SCENARIO_IDS.contains(&id) || id == SANDBOX => Some(id.to_string()),
                    Some(id) => {
                        notices.push(Notice(Msg::new("notice-unknown-scenario").quoted("value", id)));
                        None
                    }
                    None => None,
                };
                Route::Lab { scenario }
            }
        };
        (route, notices)
    }

    /// The page that shows the preset `scenario` links to (a quiz question's or a prediction's
    /// Lab link): the tiny GPT's page for its experiments, else the Lab on that preset.
    pub fn for_scenario(scenario: &str) -> Route {
        if GPT_SCENARIO_IDS.contains(&scenario) {
            Route::Gpt
        } else {
            Route::Lab {
                scenario: Some(scenario.to_string()),
            }
        }
    }

    /// The document that shows this route.
    pub fn document(&self) -> Document {
        match self {
            Route::Lab { .. } => Document::Lab,
            Route::Quiz { .. }
            | Route::Certificate
            | Route::Bench
            | Route::Plan
            | Route::Gpt
            | Route::Verify { .. } => Document::Pages,
        }
    }

    /// A link to this route from either document: its document's file and [`Route::query`].
    pub fn href(&self) -> String {
        format!("{}{}", self.document().file(), self.query())
    }

    /// The page's name in `view=`.
    pub fn view(&self) -> &'static str {
        match self {
            Route::Lab { .. } => "lab",
            Route::Quiz { .. } => "quiz",
            Route::Certificate => "certificate",
            Route::Bench => "bench",
            Route::Plan => "plan",
            Route::Gpt => "gpt",
            Route::Verify { .. } => "verify",
        }
    }

    /// The query string that leads to this route.
    pub fn query(&self) -> String {
        let view = self.view();
        match self {
            Route::Lab { scenario: Some(id) } => format!("?view={view}&scenario={id}"),
            Route::Quiz { question: Some(id) } => format!("?view={view}&question={}", encode(id)),
            Route::Verify { id, name } => format!("?view={view}&id={}&name={}", encode(id), encode(name)),
            _ => format!("?view={view}"),
        }
    }
}

/// The quiz question a link asks for (`question=`), clipped like every parameter; read apart
/// for an embedded quiz, which ignores `view`.
pub fn quiz_question(pairs: &[(String, String)]) -> Option<String> {
    UrlParams::new(pairs)
        .get("question")
        .map(|v| v.chars().take(MAX_PARAM_CHARS).collect())
}

/// A notice per key given more than once: every reader of the URL takes the first value, and
/// the learner is told which one that was.
fn duplicate_notices(pairs: &[(String, String)]) -> Vec<Notice> {
    let mut notices = Vec::new();
    for (i, (key, value)) in pairs.iter().enumerate() {
        let count = pairs.iter().filter(|(k, _)| k == key).count();
        let first = !pairs[..i].iter().any(|(k, _)| k == key);
        if count > 1 && first {
            notices.push(Notice(
                Msg::new("notice-duplicate-parameter")
                    .quoted("parameter", key)
                    .arg("count", count)
                    .quoted("value", value),
            ));
        }
    }
    notices
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn every_page_but_the_lab_lives_in_the_pages_document() {
        assert_eq!(Route::Lab { scenario: None }.document(), Document::Lab);
        for route in [
            Route::QUIZ,
            Route::Certificate,
            Route::Bench,
            Route::Plan,
            Route::Gpt,
            Route::Verify {
                id: String::new(),
                name: String::new(),
            },
        ] {
            assert_eq!(route.document(), Document::Pages, "{route:?}");
            assert_eq!(route.href(), format!("pages.html{}", route.query()));
        }
        assert_eq!(
            Route::Lab {
                scenario: Some("norms".into())
            }
            .href(),
            "index.html?view=lab&scenario=norms"
        );
    }

    /// A quiz question's Lab link opens the page that shows its preset, with no notice: the
    /// tiny GPT's experiments live on their own page, not in the Lab.
    #[test]
    fn a_presets_link_opens_the_page_that_shows_it() {
        assert_eq!(Route::for_scenario("tiny_gpt_tokens"), Route::Gpt);
        for id in SCENARIO_IDS.iter().chain(&GPT_SCENARIO_IDS) {
            let route = Route::for_scenario(id);
            let query = route.query();
            let decoded: Vec<(&str, &str)> = query
                .trim_start_matches('?')
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .collect();
            let (parsed, notices) = Route::from_pairs(&pairs(&decoded));
            assert_eq!((parsed, notices), (route, Vec::new()), "{id}");
        }
    }

    #[test]
    fn parses_each_view() {
        assert_eq!(Route::from_pairs(&[]).0, Route::Lab { scenario: None });
        assert_eq!(Route::from_pairs(&pairs(&[("view", "quiz")])).0, Route::QUIZ);
        let deep = Route::Quiz {
            question: Some("unscaled-sgd".into()),
        };
        assert_eq!(deep.query(), "?view=quiz&question=unscaled-sgd");
        assert_eq!(
            Route::from_pairs(&pairs(&[("view", "quiz"), ("question", "unscaled-sgd")])).0,
            deep
        );
        let long = "q".repeat(10_000);
        assert_eq!(
            quiz_question(&pairs(&[("embed", "quiz"), ("question", &long)])).map(|q| q.len()),
            Some(MAX_PARAM_CHARS)
        );
        assert_eq!(Route::from_pairs(&pairs(&[("bench", "")])).0, Route::Bench);
        assert_eq!(Route::from_pairs(&pairs(&[("view", "bench")])).0, Route::Bench);
        assert_eq!(Route::from_pairs(&pairs(&[("view", "gpt")])).0, Route::Gpt);
        assert_eq!(Route::from_pairs(&pairs(&[("view", "plan")])).0, Route::Plan);
        assert_eq!(Route::Plan.query(), "?view=plan");
        let (route, notices) = Route::from_pairs(&pairs(&[("view", "verify"), ("id", "AB"), ("name", "Ada")]));
        assert_eq!(
            route,
            Route::Verify {
                id: "AB".into(),
                name: "Ada".into()
            }
        );
        assert!(notices.is_empty());
        let (route, _) = Route::from_pairs(&pairs(&[("scenario", "norms")]));
        assert_eq!(
            route,
            Route::Lab {
                scenario: Some("norms".into())
            }
        );
    }

    #[test]
    fn bad_parameters_fall_back_with_a_notice() {
        let (route, notices) = Route::from_pairs(&pairs(&[("view", "<script>"), ("scenario", "nope")]));
        assert_eq!(route, Route::Lab { scenario: None });
        assert_eq!(notices.len(), 2);
        let long = "x".repeat(10_000);
        let (route, _) = Route::from_pairs(&pairs(&[("view", "verify"), ("id", &long)]));
        let Route::Verify { id, .. } = route else { panic!() };
        assert_eq!(id.len(), MAX_PARAM_CHARS);
    }

    #[test]
    fn a_key_given_twice_keeps_its_first_value_and_says_so() {
        let (route, notices) = Route::from_pairs(&pairs(&[
            ("view", "quiz"),
            ("view", "bench"),
            ("lr", "0.1"),
            ("view", "lab"),
            ("lr", "2"),
        ]));
        assert_eq!(route, Route::QUIZ);
        let ids: Vec<_> = notices.iter().map(|n| (n.0.id.as_ref(), n.0.args.clone())).collect();
        assert_eq!(
            ids,
            vec![
                (
                    "notice-duplicate-parameter",
                    vec![
                        ("parameter", "\u{2068}view\u{2069}".to_string()),
                        ("count", "3".to_string()),
                        ("value", "\u{2068}quiz\u{2069}".to_string())
                    ]
                ),
                (
                    "notice-duplicate-parameter",
                    vec![
                        ("parameter", "\u{2068}lr\u{2069}".to_string()),
                        ("count", "2".to_string()),
                        ("value", "\u{2068}0.1\u{2069}".to_string())
                    ]
                ),
            ]
        );
    }

    #[test]
    fn share_links_encode_names() {
        let route = Route::Verify {
            id: "ABCDE-FGHJK-MNPQR".into(),
            name: "José & Ana".into(),
        };
        assert_eq!(
            route.query(),
            "?view=verify&id=ABCDE-FGHJK-MNPQR&name=Jos%C3%A9%20%26%20Ana"
        );
    }
}
