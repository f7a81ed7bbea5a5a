//! The CPU worker's wasm entry, which Trunk builds beside the app (index.html, `data-type="worker"`).

#[cfg(target_arch = "wasm32")]
fn main() {
    gradlab_cpu_worker::serve::serve_page::<gradlab_cpu_worker::WorkerLab>();
}

/// Natively there is no worker to serve; the CPU engine runs in-process there.
#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("gradlab-cpu-worker is the browser's CPU worker; build it with `trunk build`.");
}
