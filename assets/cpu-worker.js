// The CPU engine's Web Worker. It loads the worker's own small wasm (gradlab-cpu-worker: the
// simulation and nothing of the UI; crates/cpu_worker), which then serves the page's requests.
// The page names its build in `?v=`: the worker's files have fixed names, and the query keeps a
// cached copy of another build from being paired with this page.
const build = self.location.search;
import(`./gradlab-cpu-worker.js${build}`)
  .then(({ default: init }) => init({ module_or_path: new URL(`./gradlab-cpu-worker_bg.wasm${build}`, self.location.href) }))
  .catch((error) => self.postMessage({ failed: String(error) }));
