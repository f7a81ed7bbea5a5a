// Measures how long Pause takes to take effect at the heaviest settings the Lab allows, on both
// engines: a measurement printed for the closing note, not a test (timings are not asserted).
// Usage: node pause-latency.mjs [distDir] [trials] [limitSeconds] [engines, e.g. cpu or webgpu,cpu]
import { serveTree, launchBrowser } from './harness.mjs';

const dist = process.argv[2] || undefined;
const trials = Number(process.argv[3] ?? 3);
const limit = 1000 * Number(process.argv[4] ?? 300);
const server = dist ? await serveTree({ '/': dist }) : await (await import('./harness.mjs')).serveDist();
const browser = await launchBrowser();
const heavy = '?view=lab&scenario=sandbox&hidden=256-256-256-256&batch=512&n=256&lr=0.1&spf=50';
for (const engine of (process.argv[5] ?? 'webgpu,cpu').split(',')) {
  const page = await browser.newPage();
  await page.goto(`${server.url}${heavy}${engine === 'cpu' ? '&engine=cpu' : ''}`);
  await page.waitForFunction(() => !document.querySelector('[data-testid=play]')?.disabled, null, { timeout: 120_000 });
  for (let trial = 0; trial < trials; trial++) {
    await page.getByTestId('play').click({ timeout: 120_000 });
    const before = await page.evaluate(() => Number(document.querySelector('[data-testid=lab]').dataset.steps));
    const t = Date.now();
    const stepped = await page
      .waitForFunction((n) => Number(document.querySelector('[data-testid=lab]').dataset.steps) > n, before, {
        timeout: limit,
      })
      .then(() => true, () => false);
    if (!stepped) {
      console.log(`${engine}: no step shown ${Date.now() - t} ms after play; not measured`);
      break;
    }
    const t0 = Date.now();
    await page.getByTestId('play').click({ timeout: limit });
    const paused = await page
      .waitForFunction(() => document.querySelector('[data-testid=status]').dataset.transport === 'paused', null, {
        timeout: limit,
      })
      .then(() => true, () => false);
    const ms = Date.now() - t0;
    if (!paused) {
      const status = await page.evaluate(() => {
        const s = document.querySelector('[data-testid=status]');
        return `${s.dataset.transport}: ${s.textContent} (step ${document.querySelector('[data-testid=lab]').dataset.steps})`;
      });
      console.log(`${engine}: not paused after ${ms} ms; ${status}`);
      break;
    }
    const steps = await page.evaluate(() => Number(document.querySelector('[data-testid=lab]').dataset.steps));
    console.log(`${engine}: pause took ${ms} ms (at step ${steps})`);
  }
  await page.close();
}
await browser.close();
await server.close();
