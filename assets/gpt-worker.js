// The tiny GPT's Web Worker (pages.html?view=gpt), as cpu-worker.js is the Lab's: it loads its
// own wasm (gradlab-gpt-worker: the transformer and nothing of the UI or the MLP's engine;
// crates/cpu_worker), which then serves the page's requests.
// The page names its build in `?v=`: the worker's files have fixed names, and the query keeps a
// cached copy of another build from being paired with this page.
const build = self.location.search;
import(`./gradlab-gpt-worker.js${build}`)
  .then(({ default: init }) => init({ module_or_path: new URL(`./gradlab-gpt-worker_bg.wasm${build}`, self.location.href) }))
  .catch((error) => self.postMessage({ failed: String(error) }));
