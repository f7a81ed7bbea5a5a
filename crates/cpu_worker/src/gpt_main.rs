//! The tiny GPT's worker's wasm entry, which Trunk builds beside the app (index.html,
//! `data-type="worker"`): the tiny-GPT page's engine, apart from the Lab's.

#[cfg(target_arch = "wasm32")]
fn main() {
    gradlab_cpu_worker::serve::serve_page::<gradlab_cpu_worker::gpt::GptWorkerLab>();
}

/// Natively there is no worker to serve; the CPU engine runs in-process there.
#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("gradlab-gpt-worker is the browser's tiny-GPT worker; build it with `trunk build`.");
}
