//! The page's handle on the CPU engine's Web Worker: [`CpuWorker`] starts `cpu-worker.js`, which
//! loads the worker's own small wasm (`gradlab-cpu-worker`: the simulation and nothing of the
//! UI), and exchanges `gradlab_cpu_worker` messages with it. The worker trains the CPU reference
//! engine while the page's thread only draws: the page stays responsive and Pause shows within
//! a frame. The messages are postcard bytes.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use futures_channel::mpsc::{unbounded, UnboundedReceiver};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

use super::browser;
use gradlab_cpu_worker::wire::bytes_of;
use gradlab_cpu_worker::{FromWorker, ToWorker};

/// How long a starting worker may take to say it listens before the page trains on its own
/// thread instead (loading is from the browser's cache: a fraction of a second).
const START_TIMEOUT_MS: i32 = 15_000;

/// The build of the page's app (its wasm-bindgen script's hashed file name), passed to the worker
/// so that the worker's unhashed files are fetched for this build, never a cached older one.
fn app_build() -> Option<String> {
    let document = web_sys::window()?.document()?;
    let link = document.query_selector("link[rel=modulepreload][href$='.js']").ok()??;
    let href = js_sys::Reflect::get(&link, &"href".into()).ok()?.as_string()?;
    let file = href.rsplit('/').next()?.trim_end_matches(".js");
    Some(String::from(js_sys::encode_uri_component(file))).filter(|file| !file.is_empty())
}

/// The page's handle on a worker that trains the CPU engine.
pub struct CpuWorker {
    worker: web_sys::Worker,
    replies: RefCell<UnboundedReceiver<Result<FromWorker, String>>>,
    /// A request was sent whose answer has not been read (its wait was cancelled): the next
    /// answer would be that one, so this worker is not used again.
    busy: Cell<bool>,
    /// The worker reported an error (its code threw or trapped): it may never answer again.
    failed: Rc<Cell<bool>>,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

impl std::fmt::Debug for CpuWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuWorker").field("busy", &self.busy.get()).finish()
    }
}

impl Drop for CpuWorker {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

impl CpuWorker {
    /// Starts the Lab's CPU worker on its own wasm; resolves once it listens, or with why not
    /// (the Lab then trains on the page's thread, as it did before workers).
    pub async fn spawn() -> Result<Self, String> {
        Self::spawn_script("cpu-worker.js").await
    }

    /// Starts the tiny GPT's worker (its own wasm, `gradlab-gpt-worker`).
    pub async fn spawn_gpt() -> Result<Self, String> {
        Self::spawn_script("gpt-worker.js").await
    }

    async fn spawn_script(script: &str) -> Result<Self, String> {
        let build = app_build().ok_or("the page does not name the app's script")?;
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        let worker =
            web_sys::Worker::new_with_options(&format!("{script}?v={build}"), &options).map_err(browser::js_error)?;
        let (sender, receiver) = unbounded();
        let on_message = {
            let sender = sender.clone();
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
                let data = event.data();
                let reply = match bytes_of(&data) {
                    Some(bytes) => FromWorker::decode(&bytes).map_err(|e| e.to_string()),
                    // cpu-worker.js could not start the module: `{ failed: reason }`.
                    None => Err(js_sys::Reflect::get(&data, &"failed".into())
                        .map(browser::js_error)
                        .unwrap_or_else(browser::js_error)),
                };
                let _ = sender.unbounded_send(reply);
            })
        };
        // An ErrorEvent when the worker's code throws, a plain Event when its script did not load.
        let failed = Rc::new(Cell::new(false));
        let failed_flag = Rc::clone(&failed);
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
            event.prevent_default();
            failed_flag.set(true);
            let reason = js_sys::Reflect::get(&event, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
                .unwrap_or_else(|| "its script did not load".to_string());
            let _ = sender.unbounded_send(Err(format!("the CPU worker failed: {reason}")));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let this = Self {
            worker,
            replies: RefCell::new(receiver),
            busy: Cell::new(true),
            failed,
            _on_message: on_message,
            _on_error: on_error,
        };
        let started = first_of(this.next_reply(), async {
            browser::sleep_ms(START_TIMEOUT_MS).await;
            Err("the CPU worker did not start in time".to_string())
        })
        .await;
        match started? {
            FromWorker::Ready => {
                this.busy.set(false);
                Ok(this)
            }
            other => Err(format!("the CPU worker said {other:?} when it started")),
        }
    }

    /// Stops the worker at once, whatever it is doing.
    pub fn terminate(&self) {
        self.worker.terminate();
    }

    /// Whether an answer is still owed (a request whose wait was cancelled) or the worker has
    /// failed: such a worker is replaced, not asked again.
    pub fn is_busy(&self) -> bool {
        self.busy.get() || self.failed.get()
    }

    fn post(&self, message: &ToWorker) -> Result<(), String> {
        let bytes = message.encode().map_err(|e| e.to_string())?;
        self.worker
            .post_message(&js_sys::Uint8Array::from(bytes.as_slice()))
            .map_err(browser::js_error)
    }

    async fn next_reply(&self) -> Result<FromWorker, String> {
        std::future::poll_fn(|cx| match pin!(self.replies.borrow_mut().recv()).poll(cx) {
            Poll::Ready(Ok(reply)) => Poll::Ready(reply),
            Poll::Ready(Err(_)) => Poll::Ready(Err("the CPU worker is gone".to_string())),
            Poll::Pending => Poll::Pending,
        })
        .await
    }

    /// Sends `request` and waits for its answer. Whenever this is polled and `keep_going()`
    /// says no, the worker is told to stop after the step in progress (once).
    pub async fn request(&self, request: &ToWorker, keep_going: &dyn Fn() -> bool) -> Result<FromWorker, String> {
        if self.failed.get() {
            return Err("the CPU worker failed earlier".to_string());
        }
        if self.busy.get() {
            return Err("the CPU worker still owes an answer".to_string());
        }
        self.post(request)?;
        self.busy.set(true);
        let mut stop_sent = false;
        let mut reply = pin!(self.next_reply());
        let answer = std::future::poll_fn(|cx| {
            if !stop_sent && !keep_going() {
                stop_sent = true;
                if let Err(e) = self.post(&ToWorker::Stop) {
                    // The answer stays owed (busy stays set): this worker is not asked again.
                    return Poll::Ready(Err(e));
                }
            }
            reply.as_mut().poll(cx).map(Ok)
        })
        .await;
        match answer {
            Ok(reply) => {
                self.busy.set(false);
                reply
            }
            Err(e) => Err(e),
        }
    }
}

/// The output of whichever future finishes first.
async fn first_of<T>(a: impl Future<Output = T>, b: impl Future<Output = T>) -> T {
    let (mut a, mut b) = (pin!(a), pin!(b));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = a.as_mut().poll(cx) {
            return Poll::Ready(out);
        }
        b.as_mut().poll(cx)
    })
    .await
}
