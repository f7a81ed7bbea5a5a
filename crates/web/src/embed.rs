//! The iframe side of embedding: the page's height for the host (H5P resizer protocol, Canvas's
//! `lti.frameResize`, and our own message for `embed.js`), xAPI statements to the configured
//! origin only, and messages heard only from the parent window at that origin.

use std::cell::RefCell;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use gradlab_embed::{EmbedOptions, Statement};

struct EmbedState {
    parent_origin: Option<String>,
    last_height: i32,
}

thread_local! {
    static STATE: RefCell<Option<EmbedState>> = const { RefCell::new(None) };
}

fn parent() -> Option<web_sys::Window> {
    let window = web_sys::window()?;
    let parent = window.parent().ok().flatten()?;
    // A top-level page is its own parent: nothing to talk to.
    (!js_sys::Object::is(&parent, &window)).then_some(parent)
}

fn to_js(value: &serde_json::Value) -> JsValue {
    js_sys::JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// Posts to the parent: to the configured origin when there is one, else (height only) to any.
fn post(message: &JsValue, origin: Option<&str>) {
    if let Some(parent) = parent() {
        let _ = parent.post_message(message, origin.unwrap_or("*"));
    }
}

fn configured_origin() -> Option<String> {
    STATE.with(|s| s.borrow().as_ref().and_then(|s| s.parent_origin.clone()))
}

fn content_height() -> i32 {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
        .map_or(0, |b| b.scroll_height())
}

fn h5p(action: &str, height: i32) -> JsValue {
    let client = web_sys::window()
        .and_then(|w| w.inner_height().ok())
        .and_then(|h| h.as_f64())
        .unwrap_or(0.0);
    to_js(&serde_json::json!({
        "context": "h5p", "action": action, "scrollHeight": height, "clientHeight": client
    }))
}

/// Tells the host the content's height, in every protocol we speak.
fn announce_height(force: bool) {
    let height = content_height();
    let changed = STATE.with(|s| {
        let mut state = s.borrow_mut();
        match state.as_mut() {
            Some(state) if force || state.last_height != height => {
                state.last_height = height;
                true
            }
            _ => false,
        }
    });
    if !changed {
        return;
    }
    let origin = configured_origin();
    let origin = origin.as_deref();
    post(&h5p("prepareResize", height), origin);
    post(
        &JsValue::from_str(&serde_json::json!({ "subject": "lti.frameResize", "height": height }).to_string()),
        origin,
    );
    post(
        &to_js(&serde_json::json!({ "type": "gradlab.resize", "height": height })),
        origin,
    );
}

/// Adds one to a count the page shows on its root element, for tests to wait on: messages
/// ignored (`data-ignored-messages`), statements sent (`data-xapi-sent`) or withheld for want of
/// a configured origin (`data-xapi-withheld`).
fn count_on_root(attribute: &str) {
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let seen = root
            .get_attribute(attribute)
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0);
        let _ = root.set_attribute(attribute, &(seen + 1).to_string());
    }
}

fn on_message(event: web_sys::MessageEvent) {
    let from_parent = match (event.source(), parent()) {
        (Some(source), Some(parent)) => js_sys::Object::is(&source, &parent),
        _ => false,
    };
    let origin = event.origin();
    let allowed = configured_origin().is_none_or(|o| o == origin);
    if !from_parent || !allowed {
        count_on_root("data-ignored-messages");
        return;
    }
    let data = event.data();
    let field = |name: &str| {
        js_sys::Reflect::get(&data, &name.into())
            .ok()
            .and_then(|v| v.as_string())
    };
    match (
        field("context").as_deref(),
        field("action").as_deref(),
        field("type").as_deref(),
    ) {
        (Some("h5p"), Some("hello"), _) => announce_height(true),
        (Some("h5p"), Some("resizePrepared"), _) => post(&h5p("resize", content_height()), Some(&origin)),
        (_, _, Some("gradlab.ping")) => {
            let reply = configured_origin().unwrap_or(origin);
            post(&to_js(&serde_json::json!({ "type": "gradlab.pong" })), Some(&reply));
        }
        _ => {}
    }
}

/// Starts talking to the host page: says hello (H5P), watches the content's height and listens.
/// Once per page: the app drawn again (a language switch inside an LMS) keeps the first start.
pub fn start(options: &EmbedOptions) {
    if is_active() {
        return;
    }
    STATE.with(|s| {
        *s.borrow_mut() = Some(EmbedState {
            parent_origin: options.parent_origin.clone(),
            last_height: -1,
        })
    });
    let Some(window) = web_sys::window() else { return };
    let listener = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(on_message);
    let _ = window.add_event_listener_with_callback("message", listener.as_ref().unchecked_ref());
    // Lives as long as the page.
    listener.forget();
    let observer_callback = Closure::<dyn FnMut()>::new(|| announce_height(false));
    if let (Ok(observer), Some(body)) = (
        web_sys::ResizeObserver::new(observer_callback.as_ref().unchecked_ref()),
        window.document().and_then(|d| d.body()),
    ) {
        observer.observe(&body);
    }
    observer_callback.forget();
    // Browsers deliver resize observations only while they render the frame, and skip that for
    // off-screen cross-origin iframes; a slow timer keeps the host's height right there too.
    let poll = Closure::<dyn FnMut()>::new(|| announce_height(false));
    let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(poll.as_ref().unchecked_ref(), 500);
    poll.forget();
    post(&h5p("hello", 0), configured_origin().as_deref());
}

/// Sends an xAPI statement to the embedding page, only when its origin is configured.
pub fn report(statement: &Statement) {
    let Some(origin) = configured_origin() else {
        count_on_root("data-xapi-withheld");
        return;
    };
    post(
        &to_js(&serde_json::json!({ "type": "gradlab.xapi", "statement": statement.0 })),
        Some(&origin),
    );
    count_on_root("data-xapi-sent");
}

/// Whether the app runs embedded (and so reports what the learner does).
pub fn is_active() -> bool {
    STATE.with(|s| s.borrow().is_some())
}
