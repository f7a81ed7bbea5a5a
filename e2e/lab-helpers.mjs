// Helpers of the Lab tests: open the Lab, train with play and pause, read the results table.
import assert from 'node:assert/strict';

/**
 * Opens the Lab with `query` in a new page and waits until a run can start, or, with
 * `until: 'prediction'`, until the course asks its prediction (Play waits for it).
 */
export async function openLab(app, query, { until = 'play', ...options } = {}, browser = app.browser) {
  const page = await browser.newPage(options);
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(`${app.server.url}${query}`);
  if (until === 'prediction') {
    await page.getByTestId('predict-lock').waitFor();
    return page;
  }
  await page.waitForFunction(() => {
    const play = document.querySelector('[data-testid=play]');
    return play && !play.disabled;
  }, null, { timeout: 60_000 });
  return page;
}

export async function steps(page) {
  return Number(await page.getByTestId('lab').getAttribute('data-steps'));
}

/** Presses play, waits for at least `atLeast` steps, presses pause and waits until it has settled. */
export async function train(page, atLeast) {
  await page.getByTestId('play').click();
  await page.waitForFunction(
    (n) => Number(document.querySelector('[data-testid=lab]').dataset.steps) >= n,
    atLeast,
    { timeout: 120_000 },
  );
  await pause(page);
  assert.deepEqual(page.errors ?? [], []);
}

/**
 * Presses pause and waits until the numbers have settled. Waiting for "not working" alone is
 * not enough: between two steps the engine is not working, the Pause may not be applied yet
 * and the table may still show an earlier step than the engine took.
 */
export async function pause(page) {
  await page.getByTestId('play').click();
  // Polled on a timer, not on animation frames, which a loaded machine may throttle; a timeout
  // says what the page showed.
  await waitWithState(page, () => document.querySelector('[data-testid=status]').dataset.transport === 'paused');
  // The step begun before the pause finishes first ("Pausing…"); the numbers settle after it.
  await waitWithState(page, () => document.querySelector('[data-testid=status]').dataset.working === 'false', 120_000);
}

async function waitWithState(page, predicate, timeout = 60_000) {
  try {
    await page.waitForFunction(predicate, null, { timeout, polling: 100 });
  } catch (error) {
    const state = await page
      .evaluate(() => {
        const status = document.querySelector('[data-testid=status]');
        return `status "${status?.textContent}" ${JSON.stringify(status?.dataset)}, button "${document.querySelector('[data-testid=play]')?.textContent}", steps ${document.querySelector('[data-testid=lab]')?.dataset.steps}, hidden ${document.hidden}`;
      })
      .catch((e) => `unreadable: ${e.message}`);
    throw new Error(`${error.message}\nthe page showed: ${state}`);
  }
}

/** The results table's rows as the page shows them, with the exact values it carries. */
export async function results(page) {
  return page.getByTestId('results-table').locator('tbody tr').evaluateAll((rows) =>
    rows.map((tr) => ({
      run: tr.dataset.run,
      loss: tr.children[1].textContent,
      cosine: tr.children[3].textContent,
      exactLoss: Number(tr.dataset.loss),
      gradError: tr.dataset.gradError === undefined ? NaN : Number(tr.dataset.gradError),
    })),
  );
}

/** The address bar as the page sees it (Playwright's page.url() can lag behind replaceState). */
export async function address(page) {
  return new URL(await page.evaluate(() => location.href));
}

/** The heaviest settings the Lab's controls allow (widest, deepest, largest batch, most micro-batches). */
export const HEAVIEST = '?view=lab&scenario=sandbox&hidden=256-256-256-256&batch=512&n=256&lr=0.1&spf=50';

/**
 * Presses play, waits for a step in flight and lets the engine work on it `workMs` more, then
 * clicks Pause with raw input (no waiting for
 * the page to be idle) and measures, in the page, when the status first says paused. Returns
 * the milliseconds from the click to that moment, the steps shown then, the steps once the
 * engine has settled (the step in flight at the click may still finish; none may start), how
 * long the first step took to start and how long the last one took to finish after the click.
 */
export async function measurePause(page, workMs) {
  const play = page.getByTestId('play');
  const box = await play.boundingBox();
  await page.evaluate(() => {
    const status = document.querySelector('[data-testid=status]');
    const lab = document.querySelector('[data-testid=lab]');
    window.pauseShown = undefined;
    new MutationObserver((_, observer) => {
      if (status.dataset.transport === 'paused') {
        window.pauseShown = {
          at: performance.timeOrigin + performance.now(),
          steps: Number(lab.dataset.steps),
          working: status.dataset.working === 'true',
          text: status.textContent,
        };
        observer.disconnect();
      }
    }).observe(status, { attributes: true, attributeFilter: ['data-transport'] });
  });
  await play.click();
  await page.waitForFunction(() => document.querySelector('[data-testid=status]').dataset.transport === 'running');
  // A step in flight (not only the decision boundaries drawn before the first one).
  const playedAt = Date.now();
  await page.waitForFunction(() => document.querySelector('[data-testid=status]').dataset.working === 'true', null, {
    timeout: 300_000,
  });
  const startMs = Date.now() - playedAt;
  await new Promise((resolve) => setTimeout(resolve, workMs));
  const clickedAt = Date.now();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  const shown = await page.waitForFunction(() => window.pauseShown, null, { timeout: 120_000 }).then((h) => h.jsonValue());
  // Settled: the engine no longer works on the step that was in flight at the click.
  const settledAt = Date.now();
  await page.waitForFunction(() => document.querySelector('[data-testid=status]').dataset.working === 'false', null, {
    timeout: 300_000,
  });
  const settled = await steps(page);
  const finishMs = Date.now() - settledAt;
  return { ms: shown.at - clickedAt, stepsAtPause: shown.steps, statusAtPause: shown.text, workingAtPause: shown.working, stepsSettled: settled, startMs, finishMs };
}

/** Takes `n` single steps. */
export async function singleSteps(page, n) {
  for (let i = 1; i <= n; i++) {
    await page.getByTestId('step').click();
    await page.waitForFunction((k) => Number(document.querySelector('[data-testid=lab]').dataset.steps) >= k, i);
    await page.waitForFunction(() => document.querySelector('[data-testid=step]')?.disabled === false);
  }
}

/**
 * Moves the step-through to its next phase and waits until it shows it: with the keyboard (the
 * button keeps focus) or by a click.
 */
export async function nextPhase(page, { by = 'keyboard' } = {}) {
  const before = await page.getByTestId('step-through').getAttribute('data-phase-index');
  if (by === 'keyboard') {
    await page.getByTestId('phase-next').focus();
    await page.keyboard.press('Enter');
  } else {
    await page.getByTestId('phase-next').click();
  }
  await page.waitForFunction(
    (b) => document.querySelector('[data-testid=step-through]').dataset.phaseIndex !== b,
    before,
  );
}
