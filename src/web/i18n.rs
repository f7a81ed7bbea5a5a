//! The page's localizer: one per page load (the language is part of the URL).

use std::cell::RefCell;

use crate::i18n::{Localizer, Msg};

thread_local! {
    static LOCALIZER: RefCell<Localizer> = RefCell::new(Localizer::english());
}

/// The text of message `id`.
pub fn tr(id: &str) -> String {
    LOCALIZER.with(|l| l.borrow().text(id))
}

/// The text of a message with arguments.
pub fn msg(message: &Msg) -> String {
    LOCALIZER.with(|l| l.borrow().msg(message))
}
