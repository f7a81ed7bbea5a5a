//! The SCO side of SCORM (wasm only): finds the LMS's API object on an ancestor or opener
//! window, initializes, writes the values `gradlab_scorm` computes, and finishes when the page
//! is left. Outside an LMS nothing is found and nothing happens.
//!
//! A failing call is shown once in the page (until a later save works again); nothing the
//! learner did is dropped: a save sends every element whose value the LMS has not committed
//! yet (what changed, and whatever a failed call left unsent) and commits, so progress reaches
//! the LMS as it happens and nothing waits for the last commit.
//!
//! Leaving: the session time and exit mode are set and committed, and the session is always
//! terminated, even when that commit fails. Browsers refuse a synchronous request while a page
//! is dismissed, so the last commit usually fails there; `Terminate` / `LMSFinish` still
//! reaches the LMS's API, which persists what was set (scorm-again sends it with a beacon).

use std::cell::RefCell;

use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::browser;
use super::i18n::msg;
use gradlab_i18n::Msg;
use gradlab_scorm::data_model::{exit_elements, CommittedValues, Element};
use gradlab_scorm::ScormVersion;

struct Session {
    api: JsValue,
    version: ScormVersion,
    started_ms: f64,
    /// Whether the learner is done with this SCO (the LMS may close the attempt on exit).
    finished: bool,
    terminated: bool,
    /// What the LMS has committed: a save sends only what differs.
    committed: CommittedValues,
    /// Where a failing call is reported; set by the page shell.
    notice: RwSignal<Option<String>>,
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// How far up the window tree an LMS's API is looked for (the SCORM run-time's own bound is 7
/// for 1.2 and 500 for 2004; LMS players nest a few frames at most).
const MAX_ANCESTORS: usize = 16;

/// The API object on `window`, if it has one; a cross-origin window throws on access and so
/// has none for us.
fn api_on(window: &JsValue) -> Option<(JsValue, ScormVersion)> {
    [ScormVersion::Scorm2004, ScormVersion::Scorm12]
        .into_iter()
        .find_map(|version| {
            let api = js_sys::Reflect::get(window, &version.api_object().into()).ok()?;
            api.is_object().then_some((api, version))
        })
}

/// Looks on the window's ancestors, then on its opener's (an LMS that launches SCOs in a new
/// window).
fn find_api() -> Option<(JsValue, ScormVersion)> {
    let own = web_sys::window()?;
    let search_up = |start: web_sys::Window| {
        let mut current = start;
        for _ in 0..MAX_ANCESTORS {
            if let Some(found) = api_on(current.as_ref()) {
                return Some(found);
            }
            let parent = current.parent().ok().flatten()?;
            if js_sys::Object::is(parent.as_ref(), current.as_ref()) {
                return None;
            }
            current = parent;
        }
        None
    };
    search_up(own.clone()).or_else(|| {
        let opener = own.opener().ok().filter(|o| o.is_object())?;
        // `window.opener` is a window of another realm, so `instanceof Window` (what
        // `dyn_into` checks) is false for it although it is one.
        search_up(opener.unchecked_into::<web_sys::Window>())
    })
}

/// A failed call: which, and the LMS's own error code and text.
struct Problem {
    call: String,
    code: String,
    text: String,
}

impl Problem {
    /// The LMS's error code and text, as far as it gave them.
    fn detail(&self) -> String {
        [self.code.as_str(), self.text.as_str()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Session {
    fn call(&self, function: &str, args: &[&str]) -> Result<JsValue, String> {
        let f = js_sys::Reflect::get(&self.api, &function.into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .ok_or_else(|| format!("the LMS's API has no {function}"))?;
        let result = match args {
            [] => f.call1(&self.api, &JsValue::from_str("")),
            [a] => f.call1(&self.api, &JsValue::from_str(a)),
            [a, b, ..] => f.call2(&self.api, &JsValue::from_str(a), &JsValue::from_str(b)),
        };
        result.map_err(|e| {
            js_sys::Reflect::get(&e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
                .unwrap_or_else(|| format!("{e:?}"))
        })
    }

    /// A call that answers "true" or "false"; on "false" the LMS's last error explains it.
    fn checked(&self, function: &str, args: &[&str]) -> Result<(), Problem> {
        let describe = || match args.first() {
            Some(element) if !element.is_empty() => format!("{function}({element})"),
            _ => function.to_string(),
        };
        let answer = self.call(function, args).map_err(|text| Problem {
            call: describe(),
            code: String::new(),
            text,
        })?;
        let ok = answer.as_bool().unwrap_or(false) || answer.as_string().as_deref() == Some("true");
        if ok {
            return Ok(());
        }
        let functions = self.version.functions();
        let code = self
            .call(functions.get_last_error, &[])
            .ok()
            .and_then(|c| c.as_string().or_else(|| c.as_f64().map(|n| n.to_string())))
            .unwrap_or_default();
        let text = self
            .call(functions.get_error_string, &[&code])
            .ok()
            .and_then(|t| t.as_string())
            .unwrap_or_default();
        Err(Problem {
            call: describe(),
            code,
            text,
        })
    }

    fn get(&self, element: &str) -> Option<String> {
        self.call(self.version.functions().get_value, &[element])
            .ok()
            .and_then(|v| v.as_string())
    }

    /// Sets the elements whose value the LMS has not committed and commits them; nothing to
    /// send, nothing is called. After a failure nothing counts as committed, so the next save
    /// sends those elements again.
    fn write(&mut self, elements: &[Element]) -> Result<(), Problem> {
        let functions = self.version.functions();
        let changed = self.committed.uncommitted(elements);
        if changed.is_empty() {
            return Ok(());
        }
        for (name, value) in &changed {
            self.checked(functions.set_value, &[name, value])?;
        }
        self.checked(functions.commit, &[])?;
        self.committed.record(changed);
        Ok(())
    }

    /// Shows the first failure; a later success takes the notice away.
    fn report(&self, outcome: Result<(), Problem>) {
        match outcome {
            Ok(()) => {
                if self.notice.try_get_untracked().flatten().is_some() {
                    self.notice.set(None);
                }
            }
            Err(problem) => {
                if self.notice.try_get_untracked().flatten().is_none() {
                    self.notice.set(Some(msg(&Msg::new("scorm-call-failed")
                        .arg("call", problem.call.clone())
                        .arg("detail", problem.detail()))));
                }
            }
        }
    }
}

/// Looks for an LMS and, when there is one, initializes the session and arranges to finish
/// it when the page goes away. Returns whether the page runs inside an LMS.
///
/// The session lives as long as the page: when the app is drawn again (a language switch
/// inside an LMS, which must not reload the SCO), the session started first goes on and only
/// reports to the new page's notice.
pub fn start(notice: RwSignal<Option<String>>) -> bool {
    let carried = SESSION.with(|s| {
        s.borrow_mut().as_mut().map(|session| {
            let shown = session.notice.try_get_untracked().flatten();
            session.notice = notice;
            shown
        })
    });
    if let Some(shown) = carried {
        notice.set(shown);
        return true;
    }
    let Some((api, version)) = find_api() else { return false };
    let session = Session {
        api,
        version,
        started_ms: browser::now_ms(),
        finished: false,
        terminated: false,
        committed: CommittedValues::default(),
        notice,
    };
    if let Err(problem) = session.checked(version.functions().initialize, &[]) {
        // Nothing will reach the course: the page says so (its progress stays in this browser).
        let detail = problem.detail();
        notice.set(Some(msg(&Msg::new("scorm-not-tracked")
            .arg("call", problem.call)
            .arg("detail", detail))));
        return false;
    }
    SESSION.with(|s| *s.borrow_mut() = Some(session));
    if let Some(window) = web_sys::window() {
        let on_leave = Closure::<dyn FnMut()>::new(finish);
        let _ = window.add_event_listener_with_callback("pagehide", on_leave.as_ref().unchecked_ref());
        let _ = window.add_event_listener_with_callback("beforeunload", on_leave.as_ref().unchecked_ref());
        // Lives as long as the page.
        on_leave.forget();
    }
    true
}

/// The SCORM version of the LMS the page runs in, if any.
pub fn version() -> Option<ScormVersion> {
    SESSION.with(|s| s.borrow().as_ref().map(|s| s.version))
}

/// Reads an element (`None` outside an LMS or when the LMS does not answer).
pub fn get(element: &str) -> Option<String> {
    SESSION.with(|s| s.borrow().as_ref().and_then(|s| s.get(element)))
}

/// Writes every element and commits; a failure is reported once and the next save writes
/// everything again.
pub fn save(elements: &[Element], finished: bool) {
    SESSION.with(|s| {
        if let Some(session) = s.borrow_mut().as_mut() {
            if session.terminated {
                return;
            }
            session.finished = finished;
            let outcome = session.write(elements);
            session.report(outcome);
        }
    });
}

/// Writes the session time and how the learner left, commits, and terminates (once), whether
/// or not the commit worked: a commit refused while the page is dismissed must not keep the LMS
/// from hearing that the learner left (with SCORM 2004, an LMS that never hears `Terminate`
/// starts a new attempt next time and drops the saved progress).
fn finish() {
    SESSION.with(|s| {
        if let Some(session) = s.borrow_mut().as_mut() {
            if session.terminated {
                return;
            }
            session.terminated = true;
            let seconds = (browser::now_ms() - session.started_ms) / 1000.0;
            let elements = exit_elements(session.version, seconds, session.finished);
            let written = session.write(&elements);
            let terminated = session.checked(session.version.functions().terminate, &[]);
            session.report(written.and(terminated));
        }
    });
}
