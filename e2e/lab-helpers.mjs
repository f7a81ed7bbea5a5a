// Helpers of the Lab tests: open the Lab, train with play and pause, read the results table.
import assert from 'node:assert/strict';

/** Opens the Lab with `query` in a new page and waits until a run can start. */
export async function openLab(app, query, options = {}, browser = app.browser) {
  const page = await browser.newPage(options);
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(`${app.server.url}${query}`);
  await page.waitForFunction(() => {
    const play = document.querySelector('[data-testid=play]');
    return play && !play.disabled;
  }, null, { timeout: 60_000 });
  return page;
}

export async function steps(page) {
  return Number(await page.getByTestId('lab').getAttribute('data-steps'));
}

/** Presses play, waits for at least `atLeast` steps, presses pause and waits for the pause. */
export async function train(page, atLeast) {
  await page.getByTestId('play').click();
  await page.waitForFunction(
    (n) => Number(document.querySelector('[data-testid=lab]').dataset.steps) >= n,
    atLeast,
    { timeout: 120_000 },
  );
  await page.getByTestId('play').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=status]').dataset.transport === 'paused');
  assert.deepEqual(page.errors ?? [], []);
}

/** The results table's rows as the page shows them, with the exact values it carries. */
export async function results(page) {
  return page.getByTestId('results-table').locator('tbody tr').evaluateAll((rows) =>
    rows.map((tr) => ({
      run: tr.dataset.run,
      loss: tr.children[1].textContent,
      exactLoss: Number(tr.dataset.loss),
      gradError: tr.dataset.gradError === undefined ? NaN : Number(tr.dataset.gradError),
    })),
  );
}

/** The address bar as the page sees it (Playwright's page.url() can lag behind replaceState). */
export async function address(page) {
  return new URL(await page.evaluate(() => location.href));
}
