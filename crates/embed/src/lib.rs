//! Embedding in course pages, as plain data: which part of the app an iframe shows and which
//! controls it hides or locks (from the URL), which origin may talk to it, and the xAPI
//! statements it reports. The web layer only posts and receives the messages.

use serde::Serialize;
use serde_json::{json, Value};

use gradlab_i18n::Msg;
use gradlab_lab_state::controls::Control;
use gradlab_plot::Metric;
use gradlab_route::{bad_parameter, UrlParams};

/// What an embedded iframe shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedTarget {
    /// One Lab experiment (the `scenario` parameter), without the site's navigation.
    Lab,
    Quiz,
}

/// Parts of the Lab page an embed can hide besides single controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The scenario menu: the learner stays on the chosen experiment.
    Menu,
    /// The whole settings panel.
    Settings,
    Boundaries,
    /// The language switch (the course page chose the language with `lang`).
    Language,
    /// The results table and its agreement line.
    Table,
    /// The experiment's explanation (its title and what to notice stay).
    Explanation,
    /// The step-through of one optimizer step (closed until the learner opens it).
    StepThrough,
    /// One chart, by its slug (`hide=cosine,grad-norm`).
    Chart(Metric),
}

impl Section {
    pub const ALL: [Section; 14] = [
        Section::Menu,
        Section::Settings,
        Section::Boundaries,
        Section::Language,
        Section::Table,
        Section::Explanation,
        Section::StepThrough,
        Section::Chart(Metric::ALL[0]),
        Section::Chart(Metric::ALL[1]),
        Section::Chart(Metric::ALL[2]),
        Section::Chart(Metric::ALL[3]),
        Section::Chart(Metric::ALL[4]),
        Section::Chart(Metric::ALL[5]),
        Section::Chart(Metric::ALL[6]),
    ];

    pub fn key(self) -> &'static str {
        match self {
            Section::Menu => "menu",
            Section::Settings => "settings",
            Section::Boundaries => "boundaries",
            Section::Language => "language",
            Section::Table => "table",
            Section::Explanation => "explanation",
            Section::StepThrough => "step-through",
            Section::Chart(metric) => metric.slug(),
        }
    }
}

/// How the app runs inside a course page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedOptions {
    pub target: EmbedTarget,
    pub hidden_controls: Vec<Control>,
    pub hidden_sections: Vec<Section>,
    pub locked_controls: Vec<Control>,
    /// The embedding page's origin: statements go only there, and only its messages are heard.
    pub parent_origin: Option<String>,
}

impl EmbedOptions {
    pub fn hides(&self, control: Control) -> bool {
        self.hidden_controls.contains(&control)
    }

    pub fn locks(&self, control: Control) -> bool {
        self.locked_controls.contains(&control)
    }

    pub fn hides_section(&self, section: Section) -> bool {
        self.hidden_sections.contains(&section)
    }

    /// Reads `embed`, `hide`, `lock` and `origin` (`origin` with `parse`); `None` when the page
    /// is not embedded. Bad values are skipped with a notice each.
    pub fn from_pairs(pairs: &[(String, String)], parse: UrlParser) -> (Option<Self>, Vec<Msg>) {
        let params = UrlParams::new(pairs);
        let get = |key: &str| params.get(key);
        let mut notices = Vec::new();
        let bad = |notices: &mut Vec<Msg>, parameter: &'static str, value: &str| {
            notices.push(bad_parameter(parameter, value))
        };
        let target = match get("embed") {
            None => return (None, notices),
            Some("lab" | "" | "1") => EmbedTarget::Lab,
            Some("quiz") => EmbedTarget::Quiz,
            Some(other) => {
                bad(&mut notices, "embed", other);
                EmbedTarget::Lab
            }
        };
        let mut options = Self {
            target,
            hidden_controls: Vec::new(),
            hidden_sections: Vec::new(),
            locked_controls: Vec::new(),
            parent_origin: None,
        };
        for item in get("hide")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            if let Some(control) = Control::ALL.into_iter().find(|c| c.key() == item) {
                options.hidden_controls.push(control);
            } else if let Some(section) = Section::ALL.into_iter().find(|s| s.key() == item) {
                options.hidden_sections.push(section);
            } else {
                bad(&mut notices, "hide", item);
            }
        }
        for item in get("lock")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            match Control::ALL.into_iter().find(|c| c.key() == item) {
                Some(control) => options.locked_controls.push(control),
                None => bad(&mut notices, "lock", item),
            }
        }
        if let Some(origin) = get("origin") {
            match normalize_origin(origin, parse) {
                Some(origin) => options.parent_origin = Some(origin),
                None => bad(&mut notices, "origin", origin),
            }
        }
        // An embed shows its one part whatever `view` says; a link that asks for another page
        // is told so rather than silently shown something else.
        let shown = match target {
            EmbedTarget::Lab => "lab",
            EmbedTarget::Quiz => "quiz",
        };
        if let Some(view) = get("view").filter(|view| *view != shown) {
            notices.push(
                Msg::new("notice-embed-overrides-view")
                    .quoted("view", view)
                    .arg("embed", shown),
            );
        }
        (Some(options), notices)
    }
}

/// A URL as a WHATWG URL parser reads it, with the parts an origin check needs, each spelled as
/// the browser's `URL` spells it (`protocol` with its colon; an empty string for what is absent).
/// The app fills it with the browser's own parser, the tests with the `url` crate (the same
/// standard), so that no URL parser ships in the wasm twice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedUrl {
    pub protocol: String,
    pub username: String,
    pub password: String,
    pub hostname: String,
    pub pathname: String,
    pub search: String,
    pub hash: String,
    /// The origin as the parser serializes it (lower-case host, punycode, default port dropped).
    pub origin: String,
}

/// A WHATWG URL parser: `None` for text that is not a URL.
pub type UrlParser = fn(&str) -> Option<ParsedUrl>;

/// `scheme://host[:port]` of an http(s) origin, as the browser serializes it (lower-case host,
/// default port dropped), or `None` for anything else: paths, queries, credentials, other
/// schemes, `*`, `null`, or a host that is not one (`http://..`).
pub fn normalize_origin(text: &str, parse: UrlParser) -> Option<String> {
    let url = parse(text.trim())?;
    let only_an_origin = matches!(url.protocol.as_str(), "http:" | "https:")
        && url.username.is_empty()
        && url.password.is_empty()
        && url.pathname == "/"
        && url.search.is_empty()
        && url.hash.is_empty();
    // The URL standard accepts domains with empty labels (`..`); they name no host. An IP
    // address passes: its parts are neither empty nor hyphenated. A `%` is in no host the
    // standard accepts (Chromium's parser escapes a space in a host instead of refusing it).
    let names_a_host = url
        .hostname
        .trim_end_matches('.')
        .split('.')
        .all(|label| !label.is_empty() && !label.starts_with('-') && !label.ends_with('-') && !label.contains('%'));
    (only_an_origin && names_a_host).then_some(url.origin)
}

/// The query of the full app for the same experiment: the embed parameters removed.
pub fn full_app_query(pairs: &[(String, String)]) -> String {
    let kept: Vec<String> = pairs
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "embed" | "hide" | "lock" | "origin"))
        .map(|(k, v)| format!("{}={}", gradlab_route::encode(k), gradlab_route::encode(v)))
        .collect();
    if kept.is_empty() {
        String::new()
    } else {
        format!("?{}", kept.join("&"))
    }
}

/// The activity IRI of a part of the app (the host page may rewrite it).
pub const ACTIVITY_BASE: &str = "https://gradient-accumulation-lab.example/activities";

fn verb(name: &str) -> Value {
    json!({ "id": format!("http://adlnet.gov/expapi/verbs/{name}"), "display": { "en-US": name } })
}

/// ISO 8601 duration of whole and tenth seconds, as xAPI wants it (`PT1M2.5S`).
pub fn iso_duration(seconds: f64) -> String {
    let tenths = (seconds.max(0.0) * 10.0).round() as u64;
    let (minutes, tenths) = (tenths / 600, tenths % 600);
    let (hours, minutes) = (minutes / 60, minutes % 60);
    let secs = format!("{}", tenths as f64 / 10.0);
    match (hours, minutes) {
        (0, 0) => format!("PT{secs}S"),
        (0, m) => format!("PT{m}M{secs}S"),
        (h, m) => format!("PT{h}H{m}M{secs}S"),
    }
}

/// An xAPI statement without actor: the learning platform that receives it knows the learner.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Statement(pub Value);

/// An activity named in `language` (a BCP 47 tag: the name's language map key).
fn activity(path: &str, name: &str, language: &str, kind: &str) -> Value {
    json!({
        "objectType": "Activity",
        "id": format!("{ACTIVITY_BASE}/{path}"),
        "definition": { "name": { language: name }, "type": format!("http://adlnet.gov/expapi/activities/{kind}") }
    })
}

/// A learner trained a Lab experiment far enough to see what it shows.
pub fn experienced_scenario(scenario: &str, title: &str, language: &str, steps: u64, seconds: f64) -> Statement {
    Statement(json!({
        "verb": verb("experienced"),
        "object": activity(&format!("lab/{scenario}"), title, language, "simulation"),
        "result": { "completion": true, "duration": iso_duration(seconds),
                    "extensions": { format!("{ACTIVITY_BASE}/extensions/steps"): steps } }
    }))
}

/// The first answer to a quiz question (only first answers count towards the score).
pub fn answered_question(question_id: &str, prompt: &str, language: &str, correct: bool, response: &str) -> Statement {
    Statement(json!({
        "verb": verb("answered"),
        "object": activity(&format!("quiz/{question_id}"), prompt, language, "cmi.interaction"),
        "result": { "success": correct, "response": response }
    }))
}

/// The quiz finished: `completed`, then `passed` or `failed`, both with the score.
pub fn quiz_result(correct: usize, total: usize, passed: bool, seconds: f64) -> [Statement; 2] {
    let scaled = if total == 0 { 0.0 } else { correct as f64 / total as f64 };
    let result = json!({
        "score": { "raw": correct, "min": 0, "max": total, "scaled": (scaled * 1000.0).round() / 1000.0 },
        "success": passed,
        "completion": true,
        "duration": iso_duration(seconds)
    });
    let object = activity("quiz", "Gradient accumulation quiz", "en-US", "assessment");
    [
        Statement(json!({ "verb": verb("completed"), "object": object, "result": result })),
        Statement(
            json!({ "verb": verb(if passed { "passed" } else { "failed" }), "object": object, "result": result }),
        ),
    ]
}

/// Cases of the origin check that hold for every WHATWG URL parser it runs over: the `url`
/// crate's in this crate's tests, the browser's in the in-browser tests (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
pub mod test_support {
    /// What `origin=` was given, and the origin it names (`None`: refused).
    pub const ORIGINS: &[(&str, Option<&str>)] = &[
        ("http://127.0.0.1:8080", Some("http://127.0.0.1:8080")),
        ("https://Course.Example.org/", Some("https://course.example.org")),
        ("https://lms.example:443", Some("https://lms.example")),
        ("http://[::1]:3000", Some("http://[::1]:3000")),
        ("https://xn--bcher-kva.example", Some("https://xn--bcher-kva.example")),
        ("https://bücher.example", Some("https://xn--bcher-kva.example")),
        ("  https://lms.example  ", Some("https://lms.example")),
        ("*", None),
        ("javascript:alert(1)", None),
        ("https://a.example/path", None),
        ("ftp://x", None),
        ("https://", None),
        ("null", None),
        ("http://..", None),
        ("http://.", None),
        ("https://a..b", None),
        ("https://-a.example", None),
        ("https://user:pw@a.example", None),
        ("https://a.example?x=1", None),
        ("https://a.example#top", None),
        ("https://a.example:99999", None),
        ("http://exa mple.org", None),
        ("http://exa%20mple.org", None),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// The `url` crate read as the browser's `URL` reads (`search` and `hash` empty when absent
    /// or empty, `protocol` with its colon).
    fn parse(text: &str) -> Option<ParsedUrl> {
        let url = url::Url::parse(text).ok()?;
        let prefixed = |prefix: &str, part: Option<&str>| {
            part.filter(|p| !p.is_empty())
                .map(|p| format!("{prefix}{p}"))
                .unwrap_or_default()
        };
        Some(ParsedUrl {
            protocol: format!("{}:", url.scheme()),
            username: url.username().to_string(),
            password: url.password().unwrap_or_default().to_string(),
            hostname: match url.host()? {
                url::Host::Domain(domain) => domain.to_string(),
                url::Host::Ipv4(ip) => ip.to_string(),
                url::Host::Ipv6(ip) => format!("[{ip}]"),
            },
            pathname: url.path().to_string(),
            search: prefixed("?", url.query()),
            hash: prefixed("#", url.fragment()),
            origin: url.origin().ascii_serialization(),
        })
    }

    #[test]
    fn embed_parameters_are_read_and_bad_ones_reported() {
        assert_eq!(
            EmbedOptions::from_pairs(&pairs(&[("view", "lab")]), parse),
            (None, vec![])
        );
        let (options, notices) = EmbedOptions::from_pairs(
            &pairs(&[
                ("embed", "lab"),
                ("hide", "seed,spf,menu,bogus"),
                ("lock", "lr, n"),
                ("origin", "https://Course.Example.org/"),
            ]),
            parse,
        );
        let options = options.unwrap();
        assert_eq!(options.target, EmbedTarget::Lab);
        assert!(options.hides(Control::Seed) && options.hides(Control::StepsPerFrame));
        assert!(options.hides_section(Section::Menu) && !options.hides_section(Section::Settings));
        assert!(options.locks(Control::LearningRate) && options.locks(Control::MicroBatches));
        assert_eq!(options.parent_origin.as_deref(), Some("https://course.example.org"));
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].args[0].1, "\u{2068}bogus\u{2069}", "quoted and isolated");
        let (options, notices) = EmbedOptions::from_pairs(&pairs(&[("embed", "quiz"), ("origin", "*")]), parse);
        assert_eq!(options.unwrap().parent_origin, None, "a wildcard is never an origin");
        assert_eq!(notices.len(), 1);
    }

    #[test]
    fn an_embed_can_hide_the_language_switch_the_table_the_step_through_and_any_chart() {
        let (options, notices) = EmbedOptions::from_pairs(
            &pairs(&[
                ("embed", "lab"),
                (
                    "hide",
                    "language,table,explanation,step-through,cosine,clip-factor,grad-norm,chart",
                ),
            ]),
            parse,
        );
        let options = options.unwrap();
        for section in [
            Section::Language,
            Section::Table,
            Section::Explanation,
            Section::StepThrough,
            Section::Chart(Metric::GradCosine),
            Section::Chart(Metric::ClipFactor),
            Section::Chart(Metric::GradNorm),
        ] {
            assert!(options.hides_section(section), "{section:?}");
        }
        assert!(!options.hides_section(Section::Chart(Metric::TrainLoss)));
        assert_eq!(
            notices,
            vec![Msg::new("notice-bad-parameter")
                .quoted("value", "chart")
                .arg("parameter", "hide")]
        );
        // Every chart has a key, and no two sections share one.
        let mut keys: Vec<&str> = Section::ALL.iter().map(|s| s.key()).collect();
        assert!(Metric::ALL.iter().all(|m| keys.contains(&m.slug())));
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Section::ALL.len());
    }

    #[test]
    fn an_embed_says_when_it_overrides_the_view() {
        let (_, notices) = EmbedOptions::from_pairs(&pairs(&[("embed", "quiz"), ("view", "certificate")]), parse);
        assert_eq!(
            notices,
            vec![Msg::new("notice-embed-overrides-view")
                .quoted("view", "certificate")
                .arg("embed", "quiz")]
        );
        let (_, notices) = EmbedOptions::from_pairs(&pairs(&[("embed", "lab"), ("view", "lab")]), parse);
        assert!(notices.is_empty(), "the view it shows anyway is no conflict");
        let (_, notices) = EmbedOptions::from_pairs(&pairs(&[("embed", "quiz")]), parse);
        assert!(notices.is_empty());
    }

    #[test]
    fn origins_are_normalized_or_refused() {
        for (given, origin) in test_support::ORIGINS {
            assert_eq!(normalize_origin(given, parse).as_deref(), *origin, "{given}");
        }
    }

    #[test]
    fn the_full_app_link_drops_only_embed_parameters() {
        let query = full_app_query(&pairs(&[
            ("embed", "lab"),
            ("scenario", "norms"),
            ("hide", "menu"),
            ("lr", "0.5"),
        ]));
        assert_eq!(query, "?scenario=norms&lr=0.5");
    }

    #[test]
    fn statements_carry_the_xapi_fields() {
        assert_eq!(iso_duration(62.54), "PT1M2.5S");
        assert_eq!(iso_duration(3.0), "PT3S");
        assert_eq!(iso_duration(3723.0), "PT1H2M3S");
        let [completed, passed] = quiz_result(14, 17, true, 95.0);
        assert_eq!(completed.0["verb"]["id"], "http://adlnet.gov/expapi/verbs/completed");
        assert_eq!(passed.0["verb"]["id"], "http://adlnet.gov/expapi/verbs/passed");
        assert_eq!(passed.0["result"]["score"]["raw"], 14);
        assert_eq!(passed.0["result"]["score"]["max"], 17);
        assert_eq!(passed.0["result"]["score"]["scaled"], 0.824);
        assert_eq!(passed.0["result"]["success"], true);
        assert_eq!(passed.0["result"]["duration"], "PT1M35S");
        let [_, failed] = quiz_result(3, 17, false, 10.0);
        assert_eq!(failed.0["verb"]["display"]["en-US"], "failed");
        let answered = answered_question("q1", "¿Por qué?", "es", false, "b");
        assert_eq!(answered.0["object"]["definition"]["name"]["es"], "¿Por qué?");
        assert_eq!(answered.0["result"]["success"], false);
        assert_eq!(answered.0["object"]["id"], format!("{ACTIVITY_BASE}/quiz/q1"));
        let experienced = experienced_scenario("norms", "Norms", "en", 50, 12.0);
        assert_eq!(experienced.0["verb"]["display"]["en-US"], "experienced");
        assert_eq!(experienced.0["result"]["completion"], true);
    }
}
