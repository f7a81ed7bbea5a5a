//! The page's localizer, chosen once per page load: the `lang` URL parameter, else the
//! browser's preferred languages, else English.

use std::cell::{Cell, RefCell};

use gradlab_i18n::{Language, Localizer, Msg};

thread_local! {
    static LOCALIZER: RefCell<Localizer> = RefCell::new(Localizer::english());
    /// Whether the language came from the URL, so that links keep it.
    static FROM_URL: Cell<bool> = const { Cell::new(false) };
}

/// Sets the page's language; a problem with the URL's `lang` comes back as a notice.
pub fn choose(url_lang: Option<&str>, preferred: &[String]) -> Option<Msg> {
    let (language, notice) = match url_lang.map(|tag| (tag, Language::from_tag(tag))) {
        Some((_, Some(language))) => {
            FROM_URL.with(|f| f.set(true));
            (language, None)
        }
        Some((tag, None)) => (
            Language::negotiate(preferred.iter().map(String::as_str)),
            Some(gradlab_route::bad_parameter("lang", tag)),
        ),
        None => (Language::negotiate(preferred.iter().map(String::as_str)), None),
    };
    if let Ok(localizer) = Localizer::new(language) {
        LOCALIZER.with(|l| *l.borrow_mut() = localizer);
    }
    notice
}

pub fn language() -> Language {
    LOCALIZER.with(|l| l.borrow().language())
}

/// The text of message `id`.
pub fn tr(id: &str) -> String {
    LOCALIZER.with(|l| l.borrow().text(id))
}

/// The text of a message with arguments.
pub fn msg(message: &Msg) -> String {
    LOCALIZER.with(|l| l.borrow().msg(message))
}

/// A number written the page's way (a decimal comma in Spanish); see `Localizer::number`.
pub fn num(text: &str) -> String {
    LOCALIZER.with(|l| l.borrow().number(text))
}

/// A link to another page of the app that keeps a language chosen in the URL.
pub fn link(query: String) -> String {
    if FROM_URL.with(Cell::get) {
        let separator = if query.contains('?') { '&' } else { '?' };
        format!("{query}{separator}lang={}", language().tag())
    } else {
        query
    }
}
