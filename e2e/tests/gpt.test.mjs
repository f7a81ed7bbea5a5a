// The tiny-GPT page: the plays are fetched, the model is built in the CPU worker, Play trains
// the three runs side by side, Pause settles, and the learner's numbers answer the prediction:
// on lines the per-micro-batch mean drifts and the sum over the window's tokens does not; on
// fixed blocks neither does. axe-core finds no WCAG 2.2 AA violation (English and Spanish,
// desktop and phone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, screenshot, expectAccessible } from '../harness.mjs';

const app = withAppAndBrowser();

const state = (page) =>
  page.getByTestId('gpt').evaluate((s) => ({
    status: s.dataset.status,
    steps: Number(s.dataset.steps),
    working: s.dataset.working,
    part: s.dataset.part,
  }));

async function openGpt(query = '', viewport = { width: 1366, height: 900 }) {
  const page = await app.browser.newPage({ viewport });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(`${app.server.url}?view=gpt${query}`);
  await waitReady(page);
  return page;
}

/** Built, idle, and showing the part asked for. */
async function waitReady(page, part = 'lines') {
  await page.waitForFunction(
    (part) => {
      const s = document.querySelector('[data-testid=gpt]');
      return s && s.dataset.status === 'ready' && s.dataset.working === 'false' && s.dataset.part === part;
    },
    part,
    { timeout: 60_000, polling: 100 },
  );
}

/** Plays until at least `steps` steps, then pauses and waits until the page has settled. */
async function train(page, steps) {
  const before = (await state(page)).steps;
  await page.getByTestId('gpt-play').click();
  await page.waitForFunction(
    (n) => Number(document.querySelector('[data-testid=gpt]')?.dataset.steps) >= n,
    before + steps,
    { timeout: 120_000, polling: 100 },
  );
  await page.getByTestId('gpt-play').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt]')?.dataset.working === 'false', null, {
    timeout: 60_000,
    polling: 100,
  });
  return state(page);
}

test('on lines the per-micro-batch mean drifts and the sum over the window does not', async () => {
  const page = await openGpt();
  assert.match(await page.getByTestId('gpt-model').textContent(), /113408 parameters/);
  await page.getByTestId('gpt-predict-micro_batch_mean').check();
  const settled = await train(page, 4);
  assert.ok(settled.steps >= 4, JSON.stringify(settled));
  // Paused means paused: the counter stays where it settled.
  assert.equal((await state(page)).steps, settled.steps);
  const verdict = page.getByTestId('gpt-verdict');
  assert.equal(await verdict.getAttribute('data-answer'), 'micro_batch_mean');
  assert.match(await verdict.textContent(), /^Right\./);
  assert.match(await verdict.textContent(), /for the sum \/ tokens/);
  assert.match(await verdict.textContent(), /0 for the sum \/ tokens\.$/);
  // The last step's micro-batches: 8 rows, token counts that differ, padding above them.
  const rows = await page.getByTestId('gpt-window').locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
  );
  assert.equal(rows.length, 8);
  const tokens = rows.map((r) => Number(r[1]));
  assert.ok(new Set(tokens).size > 1, `token counts ${tokens}`);
  assert.ok(rows.every((r) => Number(r[2]) >= Number(r[1])), JSON.stringify(rows));
  for (const run of ['full_batch', 'micro_batch_mean', 'window_tokens']) {
    assert.ok((await page.getByTestId(`gpt-sample-${run}`).locator('pre').textContent()).startsWith('MACBETH.\n'));
  }
  await expectAccessible(page, 'the tiny GPT page');
  await screenshot(page, 'gpt-lines-desktop');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('on fixed blocks all three agree, in Spanish on a phone', async () => {
  const page = await openGpt('&lang=es', { width: 390, height: 844 });
  await page.getByTestId('gpt-part-blocks').check();
  await waitReady(page, 'blocks');
  await page.getByTestId('gpt-predict-none').check();
  await train(page, 2);
  const verdict = page.getByTestId('gpt-verdict');
  assert.equal(await verdict.getAttribute('data-answer'), 'none');
  assert.match(await verdict.textContent(), /^Correcto\./);
  const rows = await page.getByTestId('gpt-window').locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
  );
  assert.ok(rows.every((r) => r[1] === rows[0][1] && r[2] === r[1]), JSON.stringify(rows));
  await expectAccessible(page, 'the tiny GPT page in Spanish on a phone');
  await screenshot(page, 'gpt-blocks-es-phone');
  assert.deepEqual(page.errors, []);
  await page.close();
});
