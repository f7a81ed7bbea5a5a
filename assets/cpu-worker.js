// The CPU engine's Web Worker. The Lab page sends the URL of the app's own wasm-bindgen module
// and its compiled WebAssembly.Module; the same Rust code starts here, sees that it runs in a
// worker and serves the page's requests (src/web/worker.rs). Nothing is fetched or compiled twice.
self.onmessage = async (event) => {
  self.onmessage = null;
  try {
    const { script, module } = event.data;
    const { default: init } = await import(script);
    await init({ module_or_path: module });
  } catch (error) {
    self.postMessage({ failed: String(error) });
  }
};
