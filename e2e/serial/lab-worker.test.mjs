// The CPU engine in its Web Worker: the page keeps its frames while it trains, with the numbers
// of the page-thread engine. Long tasks are wall-clock time, so this file runs on its own, after
// the other files (which run two at a time on a 2-core machine and would stretch every task).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser } from '../harness.mjs';
import { openLab, results, steps, singleSteps } from '../lab-helpers.mjs';

const app = withAppAndBrowser();

test('the CPU engine trains in a Web Worker: the page stays responsive, with the numbers of the page-thread engine', async () => {
  // The hostile pass's case: on the page's thread, norms on the CPU made 88 long tasks in 10 s.
  const page = await openLab(app, '?view=lab&scenario=norms&engine=cpu');
  assert.equal(await page.getByTestId('engine-badge').getAttribute('data-cpu-thread'), 'worker');
  await page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((list) => window.longTasks.push(...list.getEntries().map((e) => e.duration)))
      .observe({ type: 'longtask' });
    window.frameCount = 0;
    const count = () => {
      window.frameCount++;
      requestAnimationFrame(count);
    };
    requestAnimationFrame(count);
  });
  const before = await steps(page);
  await page.getByTestId('play').click();
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const { longTasks, frames } = await page.evaluate(() => ({ longTasks: window.longTasks, frames: window.frameCount }));
  const trained = (await steps(page)) - before;
  console.log(`# norms on the CPU worker, 10 s: ${trained} steps, ${(frames / 10).toFixed(1)} frames/s, ` +
    `${longTasks.length} long tasks (longest ${Math.max(0, ...longTasks).toFixed(0)} ms)`);
  assert.ok(trained > 0, 'it trained');
  assert.ok(longTasks.length < 5, `long tasks: ${longTasks.join(', ')} ms`);
  assert.ok(longTasks.every((ms) => ms <= 100), `long tasks: ${longTasks.join(', ')} ms`);
  await page.close();

  // Where no worker can start (its script blocked here), the page's thread trains: same numbers.
  const inWorker = await openLab(app, '?view=lab&scenario=norms&engine=cpu');
  await singleSteps(inWorker, 5);
  const onPage = await app.browser.newPage();
  onPage.errors = [];
  onPage.on('pageerror', (e) => onPage.errors.push(e.message));
  // The worker's script, whatever build it names in its query.
  await onPage.route('**/cpu-worker.js*', (route) => route.abort());
  await onPage.goto(`${app.server.url}?view=lab&scenario=norms&engine=cpu`);
  await onPage.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false, null, {
    timeout: 60_000,
  });
  assert.equal(await onPage.getByTestId('engine-badge').getAttribute('data-cpu-thread'), 'page');
  await singleSteps(onPage, 5);
  const [a, b] = [await results(inWorker), await results(onPage)];
  assert.equal(a.length, 6, "every run of norms");
  assert.deepEqual(a, b, 'bit for bit: the same engine on another thread');
  assert.deepEqual([...inWorker.errors, ...onPage.errors], []);
  await inWorker.close();
  await onPage.close();
});
