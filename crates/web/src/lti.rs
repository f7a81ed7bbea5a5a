//! The quiz after an LTI 1.3 launch (browser side): the session token the launch put in the
//! URL's fragment is moved into this tab's storage at once (out of the address bar and of any
//! bookmark), the page names the learner and the course, and a finished attempt's answers go to
//! the server, which grades them and posts the score to the gradebook; the page shows how that
//! stands. What each reply means is `gradlab_quiz::lti`.

use std::cell::RefCell;

use leptos::prelude::*;

use crate::browser;
use crate::i18n::{msg, tr};
use gradlab_i18n::Msg;
use gradlab_quiz::lti::{
    completion_body, token_from_fragment, GradeDelivery, SessionState, COMPLETION_PATH, SCORES_PATH, SESSION_PATH,
};

/// This tab's session token: sessionStorage, so neither other tabs nor a later visit reuse it.
const TOKEN_KEY: &str = "gradlab.lti.session";

thread_local! {
    /// The launch's token for this page's life: in a platform's cross-site iframe the browser
    /// may block the frame's storage (third-party storage blocking), and the launch must work there.
    static LAUNCH_TOKEN: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Takes a launch's token out of the fragment; call before anything reads the URL. The fragment
/// is cleared once the tab's storage holds the token; where the browser blocks that storage it
/// stays (it never reaches a server), so that a reload keeps the session.
pub fn capture_launch_token() {
    let fragment = browser::fragment();
    if let Some(token) = token_from_fragment(&fragment) {
        if browser::tab_save(TOKEN_KEY, &token) {
            browser::clear_fragment();
        }
        LAUNCH_TOKEN.with(|kept| *kept.borrow_mut() = Some(token));
    }
}

fn launch_token() -> Option<String> {
    LAUNCH_TOKEN
        .with(|kept| kept.borrow().clone())
        .or_else(|| browser::tab_load(TOKEN_KEY))
}

/// Whether this page was launched from a course.
pub fn launched() -> bool {
    launch_token().is_some()
}

/// After a launch into a Lab experiment: tells the server the learner trained `scenario`, which
/// records the activity's completion in the course's gradebook (the server decides whether it
/// is the experiment the course linked).
pub fn report_completion(scenario: &str) {
    let Some(token) = launch_token() else { return };
    let body = completion_body(scenario);
    leptos::task::spawn_local(async move {
        let url = browser::api_url(COMPLETION_PATH);
        if let Err(reason) = browser::fetch_as("POST", &url, Some(&body), Some(&token)).await {
            web_sys::console::warn_1(&format!("the course did not hear of this experiment: {reason}").into());
        }
    });
}

/// The page's link to the course it was launched from.
#[derive(Clone, Copy)]
pub struct LtiLink {
    token: StoredValue<String>,
    pub session: RwSignal<SessionState>,
    pub grade: RwSignal<GradeDelivery>,
}

impl LtiLink {
    /// The link when this tab was launched from a course; asks the server who the learner is.
    pub fn open() -> Option<Self> {
        let token = launch_token()?;
        let link = Self {
            token: StoredValue::new(token),
            session: RwSignal::new(SessionState::Checking),
            grade: RwSignal::new(GradeDelivery::Idle),
        };
        leptos::task::spawn_local(async move {
            let token = link.token.get_value();
            let reply = browser::fetch_as("GET", &browser::api_url(SESSION_PATH), None, Some(&token)).await;
            link.session.set(SessionState::from_reply(reply));
        });
        Some(link)
    }

    /// The session token, for the page's requests to its own server.
    pub fn bearer(self) -> String {
        self.token.get_value()
    }

    /// The platform's name for the learner, once the session is known.
    pub fn learner_name(self) -> Option<String> {
        self.session.with(|s| match s {
            SessionState::Active(session) if !session.name.trim().is_empty() => Some(session.name.clone()),
            _ => None,
        })
    }

    /// Sends a finished attempt's answers (the issuance body; the server takes the name from the
    /// platform) and follows the score until the course has it.
    pub fn send_grade(self, body: String) {
        if matches!(
            self.grade.get_untracked(),
            GradeDelivery::Sending | GradeDelivery::Pending { .. }
        ) {
            return;
        }
        self.grade.set(GradeDelivery::Sending);
        leptos::task::spawn_local(async move {
            let token = self.token.get_value();
            let reply = browser::fetch_as("POST", &browser::api_url(SCORES_PATH), Some(&body), Some(&token)).await;
            self.grade.set(GradeDelivery::from_post_reply(reply));
            while let GradeDelivery::Pending {
                id,
                retry_in_secs,
                last_error,
                ..
            } = self.grade.get_untracked()
            {
                // Every second while the first post is under way (the server posts at once),
                // then as the retries go.
                let secs = if last_error.is_none() {
                    1
                } else {
                    retry_in_secs.clamp(1, 30)
                };
                let wait = i32::try_from(secs * 1000).unwrap_or(30_000);
                browser::sleep_ms(wait).await;
                let url = browser::api_url(&format!("{SCORES_PATH}/{id}"));
                let reply = browser::fetch_as("GET", &url, None, Some(&token)).await;
                self.grade.update(|g| *g = g.after_status_reply(reply));
            }
        });
    }
}

/// Who is signed in, from which course; or why the course link does not hold.
#[component]
pub fn LtiBanner(link: LtiLink) -> impl IntoView {
    move || {
        let (text, kind) = match link.session.get() {
            SessionState::Checking => (tr("lti-session-checking"), "checking"),
            SessionState::Active(session) => {
                let signed_in = msg(&Msg::new("lti-signed-in")
                    .quoted("name", if session.name.is_empty() { "-" } else { &session.name })
                    .quoted("course", &session.course)
                    .quoted("platform", &session.platform));
                let grading = tr(if session.graded { "lti-graded" } else { "lti-ungraded" });
                (format!("{signed_in} {grading}"), "active")
            }
            SessionState::Expired => (tr("lti-session-expired"), "expired"),
            SessionState::Unreachable(reason) => (
                msg(&Msg::new("lti-session-unreachable").quoted("reason", &reason)),
                "unreachable",
            ),
        };
        view! { <p class="lti-banner" data-testid="lti-banner" data-session=kind>{text}</p> }
    }
}

/// Where the finished attempt's grade stands.
#[component]
pub fn LtiGrade(link: LtiLink, resend: Callback<()>) -> impl IntoView {
    move || {
        let grade = link.grade.get();
        let kind = grade.kind();
        let (text, retry) = match grade {
            GradeDelivery::Idle => return None,
            GradeDelivery::Sending => (tr("lti-grade-sending"), false),
            GradeDelivery::Pending {
                score_percent,
                last_error: None,
                ..
            } => (msg(&Msg::new("lti-grade-pending").arg("percent", score_percent)), false),
            GradeDelivery::Pending {
                score_percent,
                last_error: Some(reason),
                retry_in_secs,
                ..
            } => (
                msg(&Msg::new("lti-grade-retrying")
                    .arg("percent", score_percent)
                    .quoted("reason", &reason)
                    .arg("seconds", retry_in_secs)),
                false,
            ),
            GradeDelivery::GivenUp {
                id,
                score_percent,
                attempts,
                last_error,
            } => (
                msg(&Msg::new("lti-grade-given-up")
                    .arg("percent", score_percent)
                    .arg("attempts", attempts)
                    .quoted("reason", last_error.as_deref().unwrap_or("-"))
                    .arg("id", id)),
                false,
            ),
            GradeDelivery::Delivered { score_percent } => (
                msg(&Msg::new("lti-grade-delivered").arg("percent", score_percent)),
                false,
            ),
            GradeDelivery::NotGraded { score_percent } => (
                msg(&Msg::new("lti-grade-not-graded").arg("percent", score_percent)),
                false,
            ),
            GradeDelivery::Expired => (tr("lti-grade-expired"), false),
            GradeDelivery::Failed(reason) => (msg(&Msg::new("lti-grade-failed").quoted("reason", &reason)), true),
        };
        let retry = retry.then(|| {
            view! { <button type="button" data-testid="lti-grade-retry" on:click=move |_| resend.run(())>{tr("lti-grade-try-again")}</button> }
        });
        Some(view! {
            <div class="lti-grade" role="status" data-testid="lti-grade" data-delivery=kind>
                <p>{text}</p>
                {retry}
            </div>
        })
    }
}
