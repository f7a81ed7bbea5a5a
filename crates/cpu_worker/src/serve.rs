//! The worker's browser side: it listens for the page's messages, trains between turns of its
//! event loop (so that a Stop is read between two steps), and answers in postcard bytes.

use std::cell::Cell;
use std::rc::Rc;

use futures_channel::mpsc::{unbounded, UnboundedSender};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::wire::bytes_of;
use crate::{FromWorker, Serve, ToWorker, Training};

/// A JavaScript error as a message for the page.
fn js_error(error: &JsValue) -> String {
    match error.dyn_ref::<js_sys::Error>() {
        Some(error) => String::from(error.to_string()),
        None => error.as_string().unwrap_or_else(|| "unknown error".to_string()),
    }
}

/// Serves the page's requests with a `S` lab, when this wasm runs in the worker it was built
/// for; anywhere else, says why not on the console.
pub fn serve_page<S: Serve + 'static>() {
    match js_sys::global().dyn_into::<web_sys::DedicatedWorkerGlobalScope>() {
        Ok(scope) => serve::<S>(scope),
        Err(_) => web_sys::console::error_1(
            &"this wasm runs only inside the worker it was built for (cpu-worker.js or gpt-worker.js)".into(),
        ),
    }
}

fn post_to_page(scope: &web_sys::DedicatedWorkerGlobalScope, answer: &FromWorker) {
    let bytes = answer
        .encode()
        .or_else(|e| FromWorker::Failed { message: e.to_string() }.encode());
    if let Ok(bytes) = bytes {
        if let Err(e) = scope.post_message(&js_sys::Uint8Array::from(bytes.as_slice())) {
            web_sys::console::warn_1(&e);
        }
    }
}

/// Gives the worker's event loop a turn (so that a Stop that arrived is read) without a
/// timer's minimum delay: a message to itself through a channel.
struct Yielder {
    channel: web_sys::MessageChannel,
}

impl Yielder {
    async fn yield_now(&self) {
        let port = self.channel.port1();
        let sender = self.channel.port2();
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            port.set_onmessage(Some(&resolve));
            let _ = sender.post_message(&JsValue::NULL);
        });
        let _ = JsFuture::from(promise).await;
    }
}

fn serve<S: Serve + 'static>(scope: web_sys::DedicatedWorkerGlobalScope) {
    let stop = Rc::new(Cell::new(false));
    let (sender, mut requests): (UnboundedSender<Result<ToWorker, String>>, _) = unbounded();
    let on_message = {
        let stop = Rc::clone(&stop);
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let request = bytes_of(&event.data())
                .ok_or_else(|| "a message that is not bytes".to_string())
                .and_then(|bytes| ToWorker::decode(&bytes).map_err(|e| e.to_string()));
            match request {
                // Read at once, between steps of the request in progress.
                Ok(ToWorker::Stop) => stop.set(true),
                other => {
                    let _ = sender.unbounded_send(other);
                }
            }
        })
    };
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker does.
    on_message.forget();
    let answers = scope.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let mut lab = S::default();
        let yielder = match web_sys::MessageChannel::new() {
            Ok(channel) => Yielder { channel },
            Err(e) => {
                post_to_page(&answers, &FromWorker::Failed { message: js_error(&e) });
                return;
            }
        };
        while let Ok(request) = requests.recv().await {
            let answer = match request {
                Err(message) => FromWorker::Failed { message },
                Ok(request) => match request.training() {
                    Some((training, steps)) => {
                        stop.set(false);
                        advance(&mut lab, training, steps, &stop, &yielder).await
                    }
                    None => lab.handle(request),
                },
            };
            post_to_page(&answers, &answer);
        }
    });
    post_to_page(&scope, &FromWorker::Ready);
}

/// Up to `steps` whole steps, the event loop given a turn between them so that a Stop is read.
async fn advance<S: Serve>(
    lab: &mut S,
    training: Training,
    steps: u64,
    stop: &Cell<bool>,
    yielder: &Yielder,
) -> FromWorker {
    let mut taken = 0;
    while taken < steps {
        match lab.step_of(training) {
            Ok(()) => taken += 1,
            Err(message) => return FromWorker::Failed { message },
        }
        if taken < steps {
            yielder.yield_now().await;
        }
        if stop.get() {
            break;
        }
    }
    lab.advanced_of(training, taken)
}
