//! Deep Linking 2.0: a teacher adds the Lab from the platform's tool picker. The launch opens
//! a page of what the Lab offers (the quiz, each experiment, its other pages, or a Lab link
//! with the teacher's own settings); the choice goes back to the platform as a signed
//! `LtiDeepLinkingResponse` holding one `ltiResourceLink`, with a `lineItem` where it is graded,
//! so that the platform makes the gradebook column.

use gradlab_i18n::{Language, Localizer, Msg};
use gradlab_route::{Route, UrlParams};
use gradlab_sim::gpt::scenario::GPT_SCENARIO_IDS;
use gradlab_sim::scenario::SCENARIO_IDS;
use serde_json::{json, Value};

use super::launch::GRADING_PROGRESS_ONLY;
use super::launch::{VerifiedLaunch, CLAIM_DEPLOYMENT_ID, CLAIM_MESSAGE_TYPE, CLAIM_VERSION, CUSTOM_GRADING};

pub const CLAIM_CONTENT_ITEMS: &str = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items";
pub const CLAIM_DATA: &str = "https://purl.imsglobal.org/spec/lti-dl/claim/data";
pub const CLAIM_MSG: &str = "https://purl.imsglobal.org/spec/lti-dl/claim/msg";
/// How long a teacher may take to choose.
pub const PICKER_TTL_SECS: i64 = 3600;
/// How long the signed response is valid on its way to the platform.
const RESPONSE_TTL_SECS: i64 = 600;

/// A Deep Linking request waiting for the teacher's choice (stored, taken once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDeepLink {
    pub issuer: String,
    pub client_id: String,
    pub deployment_id: String,
    pub return_url: String,
    /// The request's opaque `data` as JSON text, sent back unchanged.
    pub data: Option<String>,
    /// Whether the platform makes a gradebook column from a link's line item.
    pub accept_lineitem: bool,
}

impl PendingDeepLink {
    /// The pending request of a verified deep-linking launch.
    pub fn of(launch: &VerifiedLaunch) -> Option<Self> {
        let settings = launch.deep_linking.as_ref()?;
        Some(Self {
            issuer: launch.issuer.clone(),
            client_id: launch.client_id.clone(),
            deployment_id: launch.deployment_id.clone(),
            return_url: settings.deep_link_return_url.clone(),
            data: settings.data.as_ref().map(Value::to_string),
            // Absent: the platform did not say; a line item it ignores does no harm.
            accept_lineitem: settings.accept_lineitem.unwrap_or(true),
        })
    }
}

/// How an experiment reaches the gradebook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grading {
    /// Completion: 1 of 1 once the learner has trained the experiment.
    Completion,
    /// No score, only the learner's progress.
    ProgressOnly,
}

/// What the teacher chose to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The quiz, graded by this server out of 100.
    Quiz,
    /// One of the Lab's experiments.
    Experiment { scenario: String, grading: Grading },
    /// A Lab link with the teacher's own settings (its query, checked to be the Lab's).
    Settings { query: String, grading: Grading },
    /// A page with no grade: the tiny GPT or the planner.
    Page(Route),
}

/// Why a choice cannot be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChoiceError {
    NothingChosen,
    /// The pasted link is not a page of the Lab served here.
    NotTheLab,
}

impl ChoiceError {
    pub fn message(&self, public_url: &str) -> Msg {
        match self {
            ChoiceError::NothingChosen => Msg::new("lti-pick-nothing"),
            ChoiceError::NotTheLab => Msg::new("lti-pick-bad-link").quoted("url", public_url),
        }
    }
}

/// The pages the picker offers besides the quiz and the experiments.
const PAGES: [Route; 2] = [Route::Gpt, Route::Plan];

impl Choice {
    /// The choice in the picker's form: `item` (`quiz`, `scenario:<id>`, `page:<view>`, or
    /// `settings` with the pasted `link`) and `grading` for an experiment.
    pub fn parse(
        item: Option<&str>,
        grading: Option<&str>,
        link: Option<&str>,
        public_url: &str,
    ) -> Result<Self, ChoiceError> {
        let grading = if grading == Some(GRADING_PROGRESS_ONLY) {
            Grading::ProgressOnly
        } else {
            Grading::Completion
        };
        match item.unwrap_or_default() {
            "quiz" => Ok(Choice::Quiz),
            "settings" => {
                let query = lab_link_query(link.unwrap_or_default(), public_url).ok_or(ChoiceError::NotTheLab)?;
                Ok(Choice::Settings { query, grading })
            }
            other => {
                if let Some(id) = other.strip_prefix("scenario:").filter(|id| SCENARIO_IDS.contains(id)) {
                    return Ok(Choice::Experiment {
                        scenario: id.to_string(),
                        grading,
                    });
                }
                other
                    .strip_prefix("page:")
                    .and_then(|view| PAGES.into_iter().find(|page| page.view() == view))
                    .map(Choice::Page)
                    .ok_or(ChoiceError::NothingChosen)
            }
        }
    }

    /// The Lab's query string this link opens.
    pub fn query(&self) -> String {
        match self {
            Choice::Quiz => "view=quiz".into(),
            Choice::Experiment { scenario, .. } => format!("view=lab&scenario={scenario}"),
            Choice::Settings { query, .. } => query.clone(),
            Choice::Page(route) => route.query().trim_start_matches('?').to_string(),
        }
    }

    /// The title of the link in the course, in the teacher's language.
    pub fn title(&self, texts: &Localizer) -> String {
        match self {
            Choice::Quiz => texts.text("quiz-title"),
            Choice::Experiment { scenario, .. } => texts.text(&format!("scenario-{scenario}-title")),
            Choice::Settings { query, .. } => match linked_scenario(query) {
                Some(id) if SCENARIO_IDS.contains(&id.as_str()) => format!(
                    "{} ({})",
                    texts.text(&format!("scenario-{id}-title")),
                    texts.text("lti-pick-own-settings")
                ),
                _ => format!("{} ({})", texts.text("app-title"), texts.text("lti-pick-own-settings")),
            },
            Choice::Page(Route::Gpt) => texts.text("gpt-title"),
            Choice::Page(_) => texts.text("plan-title"),
        }
    }

    /// The gradebook column's maximum, when this link is graded.
    pub fn score_maximum(&self) -> Option<u32> {
        match self {
            Choice::Quiz => Some(100),
            Choice::Experiment {
                grading: Grading::Completion,
                ..
            }
            | Choice::Settings {
                grading: Grading::Completion,
                ..
            } => Some(1),
            _ => None,
        }
    }

    fn progress_only(&self) -> bool {
        matches!(
            self,
            Choice::Experiment {
                grading: Grading::ProgressOnly,
                ..
            } | Choice::Settings {
                grading: Grading::ProgressOnly,
                ..
            }
        )
    }

    /// The `ltiResourceLink` content item (Deep Linking 2.0 §3.2), its line item only where the
    /// platform makes columns from them.
    pub fn content_item(&self, public_url: &str, texts: &Localizer, accept_lineitem: bool) -> Value {
        let title = self.title(texts);
        let mut item = json!({
            "type": "ltiResourceLink",
            "title": title,
            "url": format!("{public_url}/lti/launch?{}", self.query()),
        });
        if let (Some(maximum), true) = (self.score_maximum(), accept_lineitem) {
            item["lineItem"] = json!({
                "scoreMaximum": maximum,
                "label": title,
                "resourceId": self.resource_id(),
                "tag": "gradlab",
            });
        }
        if self.progress_only() {
            item["custom"] = json!({ CUSTOM_GRADING: GRADING_PROGRESS_ONLY });
        }
        item
    }

    /// The line item's resource id: what the Lab grades there.
    fn resource_id(&self) -> String {
        match self {
            Choice::Quiz => "quiz".into(),
            Choice::Experiment { scenario, .. } => scenario.clone(),
            Choice::Settings { query, .. } => linked_scenario(query).unwrap_or_else(|| "lab".into()),
            Choice::Page(route) => route.view().into(),
        }
    }
}

/// The experiment a query names (`scenario=…`), if any.
pub fn linked_scenario(query: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == "scenario")
        .map(|(_, value)| value.into_owned())
}

/// The query of a pasted Lab link: a page of the Lab served at `public_url` (`/`, `index.html`
/// or `pages.html` there) whose route is the Lab, its pairs re-encoded (a fragment is dropped:
/// the launch's fragment carries the session). The Lab reads its settings as it always does,
/// with a notice for any it cannot use.
pub fn lab_link_query(link: &str, public_url: &str) -> Option<String> {
    let link = url::Url::parse(link.trim()).ok()?;
    let base = url::Url::parse(&format!("{}/", public_url.trim_end_matches('/'))).ok()?;
    if link.origin() != base.origin() {
        return None;
    }
    let page = link.path().strip_prefix(base.path())?;
    if !["", "index.html", "pages.html"].contains(&page) {
        return None;
    }
    let pairs: Vec<(String, String)> = link.query_pairs().into_owned().collect();
    let (route, _) = Route::from_pairs(&pairs);
    if !matches!(route, Route::Lab { .. }) || UrlParams::new(&pairs).get("embed").is_some() {
        return None;
    }
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish();
    Some(if query.is_empty() { "view=lab".into() } else { query })
}

/// The signed response's claims (Deep Linking 2.0 §4.2): from this tool to the platform, the
/// chosen item (none when the teacher cancelled) and the request's `data` unchanged.
pub fn response_claims(
    request: &PendingDeepLink,
    items: Vec<Value>,
    message: Option<String>,
    nonce: &str,
    now: i64,
) -> Value {
    let mut claims = json!({
        "iss": request.client_id,
        "aud": request.issuer,
        "azp": request.client_id,
        "iat": now,
        "exp": now + RESPONSE_TTL_SECS,
        "nonce": nonce,
        CLAIM_MESSAGE_TYPE: "LtiDeepLinkingResponse",
        CLAIM_VERSION: "1.3.0",
        CLAIM_DEPLOYMENT_ID: request.deployment_id,
        CLAIM_CONTENT_ITEMS: items,
    });
    if let Some(data) = request
        .data
        .as_deref()
        .and_then(|d| serde_json::from_str::<Value>(d).ok())
    {
        claims[CLAIM_DATA] = data;
    }
    if let Some(message) = message {
        claims[CLAIM_MSG] = json!(message);
    }
    claims
}

/// An option of the picker: its form value and its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub value: String,
    pub label: String,
    /// Whether the gradebook grading choice applies to it.
    pub experiment: bool,
}

/// What the picker offers, in order: the quiz, the experiments, the other pages.
pub fn offers(texts: &Localizer) -> Vec<Offer> {
    let mut offers = vec![Offer {
        value: "quiz".into(),
        label: texts.text("lti-pick-quiz"),
        experiment: false,
    }];
    offers.extend(SCENARIO_IDS.iter().map(|id| Offer {
        value: format!("scenario:{id}"),
        label: texts.text(&format!("scenario-{id}-title")),
        experiment: true,
    }));
    offers.extend(PAGES.iter().map(|page| Offer {
        value: format!("page:{}", page.view()),
        label: Choice::Page(page.clone()).title(texts),
        experiment: false,
    }));
    debug_assert!(GPT_SCENARIO_IDS.iter().all(|id| Route::for_scenario(id) == Route::Gpt));
    offers
}

/// The teacher's language: the platform's locale, else English.
pub fn localizer(language: Option<Language>) -> Localizer {
    language
        .and_then(|language| Localizer::new(language).ok())
        .unwrap_or_else(Localizer::english)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUBLIC: &str = "https://lab.example/gradlab";

    fn parse(item: &str, grading: Option<&str>, link: Option<&str>) -> Result<Choice, ChoiceError> {
        Choice::parse(Some(item), grading, link, PUBLIC)
    }

    #[test]
    fn the_quiz_is_graded_out_of_100_and_makes_a_column() {
        let texts = Localizer::english();
        let item = parse("quiz", None, None).unwrap().content_item(PUBLIC, &texts, true);
        assert_eq!(item["type"], "ltiResourceLink");
        assert_eq!(item["url"], "https://lab.example/gradlab/lti/launch?view=quiz");
        assert_eq!(item["lineItem"]["scoreMaximum"], 100);
        assert_eq!(item["lineItem"]["resourceId"], "quiz");
        assert_eq!(item["title"], texts.text("quiz-title"));
        assert!(item.get("custom").is_none());
        // A platform that ignores line items gets none.
        let item = parse("quiz", None, None).unwrap().content_item(PUBLIC, &texts, false);
        assert!(item.get("lineItem").is_none());
    }

    #[test]
    fn an_experiment_is_completion_or_progress_only() {
        let texts = Localizer::english();
        let graded = parse("scenario:norms", None, None).unwrap();
        let item = graded.content_item(PUBLIC, &texts, true);
        assert_eq!(
            item["url"],
            "https://lab.example/gradlab/lti/launch?view=lab&scenario=norms"
        );
        assert_eq!(item["lineItem"]["scoreMaximum"], 1);
        assert_eq!(item["title"], texts.text("scenario-norms-title"));
        let ungraded = parse("scenario:norms", Some("progress"), None).unwrap();
        let item = ungraded.content_item(PUBLIC, &texts, true);
        assert!(item.get("lineItem").is_none());
        assert_eq!(item["custom"][CUSTOM_GRADING], GRADING_PROGRESS_ONLY);
        assert_eq!(parse("scenario:nope", None, None), Err(ChoiceError::NothingChosen));
        assert_eq!(parse("", None, None), Err(ChoiceError::NothingChosen));
        assert_eq!(
            parse("page:gpt", None, None)
                .unwrap()
                .content_item(PUBLIC, &texts, true)["url"],
            "https://lab.example/gradlab/lti/launch?view=gpt"
        );
        assert_eq!(parse("page:verify", None, None), Err(ChoiceError::NothingChosen));
    }

    #[test]
    fn a_pasted_link_must_be_a_lab_page_of_this_server() {
        let ok = |link: &str| lab_link_query(link, PUBLIC);
        assert_eq!(
            ok("https://lab.example/gradlab/?view=lab&scenario=norms&lr=0.05#x").as_deref(),
            Some("view=lab&scenario=norms&lr=0.05")
        );
        assert_eq!(ok("https://lab.example/gradlab/index.html?n=8").as_deref(), Some("n=8"));
        assert_eq!(ok("https://lab.example/gradlab/").as_deref(), Some("view=lab"));
        assert_eq!(ok("https://evil.example/gradlab/?view=lab"), None);
        assert_eq!(ok("https://lab.example/other/?view=lab"), None);
        assert_eq!(ok("https://lab.example/gradlab/?view=quiz"), None);
        assert_eq!(ok("https://lab.example/gradlab/?embed=lab"), None);
        assert_eq!(ok("not a link"), None);
        let texts = Localizer::english();
        let choice = parse(
            "settings",
            None,
            Some("https://lab.example/gradlab/?scenario=norms&n=8"),
        )
        .unwrap();
        assert_eq!(
            choice.title(&texts),
            format!(
                "{} ({})",
                texts.text("scenario-norms-title"),
                texts.text("lti-pick-own-settings")
            )
        );
        assert_eq!(
            choice.content_item(PUBLIC, &texts, true)["lineItem"]["resourceId"],
            "norms"
        );
        assert_eq!(
            parse("settings", None, Some("https://evil.example/")),
            Err(ChoiceError::NotTheLab)
        );
    }

    #[test]
    fn the_response_goes_from_the_tool_to_the_platform_with_the_data_unchanged() {
        let request = PendingDeepLink {
            issuer: "https://lms.example".into(),
            client_id: "lab-client".into(),
            deployment_id: "dep-1".into(),
            return_url: "https://lms.example/return".into(),
            data: Some(r#"{"opaque":[1,2]}"#.into()),
            accept_lineitem: true,
        };
        let claims = response_claims(&request, vec![json!({"type": "ltiResourceLink"})], None, "n", 1000);
        assert_eq!(claims["iss"], "lab-client");
        assert_eq!(claims["aud"], "https://lms.example");
        assert_eq!(claims[CLAIM_MESSAGE_TYPE], "LtiDeepLinkingResponse");
        assert_eq!(claims[CLAIM_DEPLOYMENT_ID], "dep-1");
        assert_eq!(claims[CLAIM_DATA], json!({"opaque": [1, 2]}));
        assert_eq!(claims[CLAIM_CONTENT_ITEMS].as_array().unwrap().len(), 1);
        assert_eq!(claims["exp"], 1000 + RESPONSE_TTL_SECS);
        let cancelled = response_claims(&PendingDeepLink { data: None, ..request }, vec![], None, "n", 1000);
        assert!(cancelled.get(CLAIM_DATA).is_none());
        assert_eq!(cancelled[CLAIM_CONTENT_ITEMS], json!([]));
    }

    #[test]
    fn every_offer_has_a_label_in_every_language() {
        for language in Language::ALL {
            let texts = Localizer::new(language).unwrap();
            for offer in offers(&texts) {
                assert!(
                    !offer.label.is_empty() && !offer.label.contains("lti-pick"),
                    "{offer:?}"
                );
            }
        }
    }
}
