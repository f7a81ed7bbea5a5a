// Measures how long Pause takes to take effect at the heaviest settings the Lab allows, on both
// engines: a measurement printed for the closing note, not a test (timings are not asserted).
// Usage: node pause-latency.mjs [distDir] [trials] [ms of training before the click] [engines, e.g. cpu or webgpu,cpu]
import { serveTree, launchBrowser } from './harness.mjs';
import { HEAVIEST, measurePause } from './lab-helpers.mjs';

const dist = process.argv[2] || undefined;
const trials = Number(process.argv[3] ?? 3);
const workMs = Number(process.argv[4] ?? 1500);
const server = dist ? await serveTree({ '/': dist }) : await (await import('./harness.mjs')).serveDist();
const browser = await launchBrowser();
for (const engine of (process.argv[5] ?? 'webgpu,cpu').split(',')) {
  const page = await browser.newPage();
  await page.goto(`${server.url}${HEAVIEST}${engine === 'cpu' ? '&engine=cpu' : ''}`);
  await page.waitForFunction(() => !document.querySelector('[data-testid=play]')?.disabled, null, { timeout: 120_000 });
  for (let trial = 0; trial < trials; trial++) {
    const { ms, stepsAtPause, stepsSettled, startMs, finishMs } = await measurePause(page, workMs);
    console.log(`${engine}: pause shown ${Math.round(ms)} ms after the click (step ${stepsAtPause}, settled at ${stepsSettled} ${finishMs} ms later; a step began ${startMs} ms after play)`);
  }
  await page.close();
}
await browser.close();
await server.close();
