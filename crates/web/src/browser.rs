//! The few browser calls the app needs, in one place: storage, URL, clock, randomness, printing,
//! downloads, files and HTTP. Every failure comes back as a message for the UI; nothing here
//! panics, and nothing blocks (HTTP and files are awaited).

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use gradlab_quiz::certificate::CivilDate;
use gradlab_quiz::issuance::Reply;

fn window() -> Result<web_sys::Window, String> {
    web_sys::window().ok_or_else(|| "no browser window".to_string())
}

fn storage() -> Result<web_sys::Storage, gradlab_i18n::Msg> {
    let blocked = || gradlab_i18n::Msg::new("storage-blocked");
    window()
        .map_err(|_| blocked())?
        .local_storage()
        .map_err(|_| blocked())?
        .ok_or_else(blocked)
}

pub fn load(key: &str) -> Option<String> {
    storage().ok()?.get_item(key).ok()?
}

pub fn save(key: &str, value: &str) -> Result<(), gradlab_i18n::Msg> {
    storage()?
        .set_item(key, value)
        .map_err(|_| gradlab_i18n::Msg::new("storage-save-failed"))
}

/// Keeps `data`, which could not be read from `key`, in the bounded list of unreadable saves of
/// that key (never replacing one kept earlier); returns the key it is kept under.
pub fn keep_unreadable(key: &str, data: &str) -> Result<String, gradlab_i18n::Msg> {
    let backup = gradlab_quiz::saves::backup_key(key);
    let kept = gradlab_quiz::saves::keep(load(&backup).as_deref(), data, js_sys::Date::now());
    save(&backup, &kept).map(|()| backup)
}

/// Calls `changed` with the new value each time another page of this site writes `key` (the
/// `storage` event never fires in the page that wrote); `None` when it was removed. Dropping the
/// listener is up to the caller (`remove` on the handle, e.g. in `on_cleanup`).
pub fn on_storage_change(
    key: String,
    changed: impl Fn(Option<String>) + 'static,
) -> leptos::prelude::WindowListenerHandle {
    leptos::prelude::window_event_listener(leptos::ev::storage, move |event| {
        if event.key().as_deref() == Some(key.as_str()) {
            changed(event.new_value());
        }
    })
}

/// This tab's own storage (sessionStorage): what must not outlive the tab or reach other tabs.
fn tab_storage() -> Option<web_sys::Storage> {
    window().ok()?.session_storage().ok()?
}

pub fn tab_load(key: &str) -> Option<String> {
    tab_storage()?.get_item(key).ok()?
}

/// Whether the value was kept (a cross-site frame whose browser blocks its storage keeps none).
pub fn tab_save(key: &str, value: &str) -> bool {
    tab_storage().is_some_and(|storage| storage.set_item(key, value).is_ok())
}

/// The URL's fragment without `#` (empty when none).
pub fn fragment() -> String {
    window()
        .ok()
        .and_then(|w| w.location().hash().ok())
        .map(|h| h.trim_start_matches('#').to_string())
        .unwrap_or_default()
}

/// Removes the fragment from the address bar (history entry replaced, nothing reloaded).
pub fn clear_fragment() {
    let Ok(w) = window() else { return };
    let (Ok(path), Ok(search)) = (w.location().pathname(), w.location().search()) else {
        return;
    };
    if let Ok(history) = w.history() {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&format!("{path}{search}")));
    }
}

/// Decoded query parameters of the current URL.
pub fn query_pairs() -> Vec<(String, String)> {
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&query_string()) else {
        return Vec::new();
    };
    let mut pairs = Vec::new();
    if let Ok(Some(iterator)) = js_sys::try_iter(&params) {
        for entry in iterator.flatten() {
            let entry: js_sys::Array = entry.unchecked_into();
            if let (Some(key), Some(value)) = (entry.get(0).as_string(), entry.get(1).as_string()) {
                pairs.push((key, value));
            }
        }
    }
    pairs
}

/// `origin + folder` of the app (the page's path without its document's file name), to build
/// share links that reach either document: a share link outlives the file that made it.
pub fn app_base() -> String {
    window()
        .ok()
        .and_then(|w| {
            let location = w.location();
            let path = location.pathname().ok()?;
            let folder = match path.rsplit_once('/') {
                Some((folder, file)) if file.ends_with(".html") => format!("{folder}/"),
                _ => path,
            };
            Some(format!("{}{folder}", location.origin().ok()?))
        })
        .unwrap_or_default()
}

/// The browser's own WHATWG URL parser (`new URL(text)`), read as the embed options read a URL.
pub fn parse_url(text: &str) -> Option<gradlab_embed::ParsedUrl> {
    let url = web_sys::Url::new(text).ok()?;
    Some(gradlab_embed::ParsedUrl {
        protocol: url.protocol(),
        username: url.username(),
        password: url.password(),
        hostname: url.hostname(),
        pathname: url.pathname(),
        search: url.search(),
        hash: url.hash(),
        origin: url.origin(),
    })
}

/// The page's query string with its `?` (empty when there is none).
pub fn query_string() -> String {
    window()
        .ok()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

pub fn today() -> CivilDate {
    let now = js_sys::Date::new_0();
    CivilDate {
        year: now.get_full_year() as i32,
        month: now.get_month() + 1,
        day: now.get_date(),
    }
}

/// A new attempt's ID: 128 bits from the browser's cryptographic generator, base64url (22
/// characters). `None` where the browser has none (then the attempt has no ID, as before).
pub fn random_attempt_id() -> Option<String> {
    use base64::Engine;
    let mut bytes = [0u8; 16];
    window()
        .ok()?
        .crypto()
        .ok()?
        .get_random_values_with_u8_array(&mut bytes)
        .ok()?;
    Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

pub fn random_seed() -> u64 {
    (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64
}

pub fn print() {
    if let Ok(w) = window() {
        let _ = w.print();
    }
}

/// Starts the download of `url` (a data or object URL) as `file_name`, through a link that is
/// never shown.
fn download_url(url: &str, file_name: &str) -> Result<(), String> {
    let document = window()?.document().ok_or("no document")?;
    let anchor: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(|_| "could not create a link".to_string())?
        .unchecked_into();
    anchor.set_href(url);
    anchor.set_download(file_name);
    anchor.click();
    Ok(())
}

/// Saves a canvas's content as a PNG download.
pub fn download_canvas_png(canvas: &web_sys::HtmlCanvasElement, file_name: &str) -> Result<(), String> {
    let url = canvas
        .to_data_url()
        .map_err(|_| "could not encode the image".to_string())?;
    download_url(&url, file_name)
}

/// A canvas element not attached to the page.
pub fn offscreen_canvas(
    width: u32,
    height: u32,
) -> Result<(web_sys::HtmlCanvasElement, web_sys::CanvasRenderingContext2d), String> {
    let document = window()?.document().ok_or("no document")?;
    let canvas: web_sys::HtmlCanvasElement = document
        .create_element("canvas")
        .map_err(|_| "could not create a canvas".to_string())?
        .unchecked_into();
    canvas.set_width(width);
    canvas.set_height(height);
    let context = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .ok_or("no 2D canvas context")?
        .unchecked_into::<web_sys::CanvasRenderingContext2d>();
    Ok((canvas, context))
}

/// Replaces the query string of the address bar without reloading (the Lab's state lives there).
pub fn replace_query(query: &str) {
    if let Ok(w) = window() {
        if let Ok(history) = w.history() {
            let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(query));
        }
    }
}

/// Milliseconds since navigation started.
pub fn now_ms() -> f64 {
    window()
        .ok()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

/// Whether `navigator.gpu` exists; wgpu is only asked for an adapter when it does.
pub fn has_webgpu() -> bool {
    window()
        .ok()
        .and_then(|w| js_sys::Reflect::get(&w.navigator(), &"gpu".into()).ok())
        .is_some_and(|gpu| !gpu.is_undefined() && !gpu.is_null())
}

async fn wait_for(register: impl FnOnce(&web_sys::Window, &js_sys::Function)) {
    let Ok(w) = window() else { return };
    let mut register = Some(register);
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Some(register) = register.take() {
            register(&w, &resolve);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// Resolves at the next animation frame: never while the tab is hidden, which is what stops the
/// frame loop there.
pub async fn next_frame() {
    wait_for(|w, resolve| {
        let _ = w.request_animation_frame(resolve);
    })
    .await;
}

/// Whether the tab is hidden (training waits then).
pub fn is_hidden() -> bool {
    window().ok().and_then(|w| w.document()).is_some_and(|d| d.hidden())
}

/// Returns at once in a visible tab; in a hidden one, when it becomes visible again.
pub async fn until_visible() {
    let Ok(document) = window().and_then(|w| w.document().ok_or_else(String::new)) else {
        return;
    };
    while document.hidden() {
        let target = document.clone();
        wait_for(move |_, resolve| {
            let options = web_sys::AddEventListenerOptions::new();
            options.set_once(true);
            let _ = target.add_event_listener_with_callback_and_add_event_listener_options(
                "visibilitychange",
                resolve,
                &options,
            );
        })
        .await;
    }
}

/// Lets the browser handle input and paint before work continues (a zero timeout).
pub async fn yield_now() {
    wait_for(|w, resolve| {
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(resolve, 0);
    })
    .await;
}

/// Saves `text` as a download named `file_name`.
pub fn download_text(file_name: &str, mime: &str, text: &str) -> Result<(), String> {
    let url = format!(
        "data:{mime};charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(text))
    );
    download_url(&url, file_name)
}

/// The browser's preferred languages, most preferred first.
pub fn preferred_languages() -> Vec<String> {
    window()
        .ok()
        .map(|w| w.navigator().languages().iter().filter_map(|v| v.as_string()).collect())
        .unwrap_or_default()
}

/// Sets `<html lang>`, so screen readers pronounce the page right.
pub fn set_document_language(tag: &str) {
    if let Some(root) = window()
        .ok()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("lang", tag);
    }
}

/// Reloads the page with one query parameter set, keeping the others as they are now.
pub fn reload_with(key: &str, value: &str) {
    if let (Ok(w), Some(search)) = (window(), search_with(key, value)) {
        let _ = w.location().set_search(&search);
    }
}

/// Sets one parameter of the address without loading the page again (a reload would end a
/// SCORM session).
pub fn set_query_parameter(key: &str, value: &str) {
    if let Some(search) = search_with(key, value) {
        replace_query(&format!("?{search}"));
    }
}

/// Sets (`Some`) or removes (`None`) parameters of the address without loading the page again,
/// keeping the others as they are.
pub fn set_query_parameters(parameters: &[(&str, Option<String>)]) {
    let Ok(w) = window() else { return };
    let search = w.location().search().unwrap_or_default();
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return;
    };
    for (key, value) in parameters {
        match value {
            Some(value) => params.set(key, value),
            None => params.delete(key),
        }
    }
    replace_query(&format!("?{}", String::from(params.to_string())));
}

/// The page's query with `key` set to `value`.
fn search_with(key: &str, value: &str) -> Option<String> {
    let search = window().ok()?.location().search().unwrap_or_default();
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    params.set(key, value);
    Some(String::from(params.to_string()))
}

/// The text of a JavaScript error (`TypeError: Failed to fetch`), for the UI.
/// A thrown JS value as text: an Error's own text, a string as it is.
pub fn js_error(value: JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return String::from(error.to_string());
    }
    value.as_string().unwrap_or_else(|| "unknown error".to_string())
}

/// Resolves `path` against the page's own address, so an app served from a sub-folder reaches
/// the API beside it (`api/credentials` on `https://host/lab/?view=quiz` is
/// `https://host/lab/api/credentials`).
pub fn api_url(path: &str) -> String {
    window()
        .ok()
        .and_then(|w| w.location().href().ok())
        .and_then(|href| web_sys::Url::new_with_base(path, &href).ok())
        .map_or_else(|| path.to_string(), |url| url.href())
}

/// An HTTP request: `GET` without a body, or a JSON body. Resolves to the status and the body
/// text of whatever reply came (an error status is a reply, not an error); a network failure,
/// a refused CORS request or an unreadable body comes back as the browser's error text.
pub async fn fetch(method: &str, url: &str, json_body: Option<&str>) -> Result<Reply, String> {
    fetch_as(method, url, json_body, None).await
}

/// `fetch` with `Authorization: Bearer` (the LTI session's token, which never lives in a cookie).
pub async fn fetch_as(method: &str, url: &str, json_body: Option<&str>, bearer: Option<&str>) -> Result<Reply, String> {
    let w = window()?;
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    init.set_mode(web_sys::RequestMode::Cors);
    let headers = web_sys::Headers::new().map_err(js_error)?;
    if let Some(token) = bearer {
        headers
            .set("Authorization", &format!("Bearer {token}"))
            .map_err(js_error)?;
    }
    if let Some(body) = json_body {
        headers.set("Content-Type", "application/json").map_err(js_error)?;
        init.set_body(&JsValue::from_str(body));
    }
    init.set_headers(&headers);
    let request = web_sys::Request::new_with_str_and_init(url, &init).map_err(js_error)?;
    let response: web_sys::Response = JsFuture::from(w.fetch_with_request(&request))
        .await
        .map_err(js_error)?
        .dyn_into()
        .map_err(|_| "the browser returned no response".to_string())?;
    let text = JsFuture::from(response.text().map_err(js_error)?)
        .await
        .map_err(js_error)?
        .as_string()
        .unwrap_or_default();
    let retry_after_secs = response
        .headers()
        .get("retry-after")
        .ok()
        .flatten()
        .and_then(|value| value.trim().parse().ok());
    Ok(Reply {
        status: response.status(),
        body: text,
        retry_after_secs,
    })
}

/// The bytes of a file the user chose or dropped.
pub async fn read_file(file: &web_sys::File) -> Result<Vec<u8>, String> {
    let buffer = JsFuture::from(file.array_buffer()).await.map_err(js_error)?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// Resolves after `ms` milliseconds (a timeout; never blocks).
pub async fn sleep_ms(ms: i32) {
    wait_for(|w, resolve| {
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(resolve, ms);
    })
    .await;
}

/// Saves `bytes` as a download named `file_name`: a Blob behind an object URL, revoked once the
/// download has started.
pub fn download_bytes(file_name: &str, mime: &str, bytes: &[u8]) -> Result<(), String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options).map_err(js_error)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(js_error)?;
    let started = download_url(&url, file_name);
    wasm_bindgen_futures::spawn_local(async move {
        sleep_ms(10_000).await;
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    started
}

/// The PNG bytes of a canvas's content.
pub fn canvas_png(canvas: &web_sys::HtmlCanvasElement) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    let url = canvas
        .to_data_url()
        .map_err(|_| "could not encode the image".to_string())?;
    let data = url
        .strip_prefix("data:image/png;base64,")
        .ok_or_else(|| "the canvas did not give a PNG".to_string())?;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("could not decode the image ({e})"))
}

/// Moves keyboard focus (and so the view) to the element `selector` names once the page has
/// drawn it: it appears in the same update that asks for it.
pub fn focus_when_drawn(selector: &'static str) {
    let Ok(w) = window() else { return };
    let focus = wasm_bindgen::closure::Closure::once_into_js(move || {
        let element = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.query_selector(selector).ok().flatten())
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
        if let Some(element) = element {
            let _ = element.focus();
        }
    });
    let _ = w.request_animation_frame(focus.unchecked_ref());
}
