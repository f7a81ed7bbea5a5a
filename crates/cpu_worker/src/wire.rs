//! How a message crosses between the page and the worker (wasm only): its postcard bytes in a
//! `Uint8Array`, read the same way on both sides.

use wasm_bindgen::{JsCast, JsValue};

/// The bytes of a message, or `None` for anything that is not a `Uint8Array`.
pub fn bytes_of(value: &JsValue) -> Option<Vec<u8>> {
    value.dyn_ref::<js_sys::Uint8Array>().map(js_sys::Uint8Array::to_vec)
}
