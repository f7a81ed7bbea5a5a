// The tiny-GPT page: the plays are fetched, the model is built in the CPU worker, Play trains
// the three runs side by side, Pause settles, and the learner's numbers answer the prediction:
// on lines the per-micro-batch mean drifts and the sum over the window's tokens does not; on
// fixed blocks neither does. axe-core finds no WCAG 2.2 AA violation (English and Spanish,
// desktop and phone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, screenshot, expectAccessible, artifactsDir } from '../harness.mjs';

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
  // Inside the last step: the buffers fill micro-batch by micro-batch; the fix ends exactly at
  // the full batch's gradient, the per-micro-batch mean elsewhere.
  await page.getByTestId('gpt-trace-show').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt-trace]')?.dataset.status === 'shown', null, {
    timeout: 60_000,
    polling: 100,
  });
  const traceStatus = (run) => page.getByTestId(`gpt-trace-${run}`).getAttribute('data-status');
  assert.equal(await traceStatus('window_tokens'), 'gpt-trace-filling');
  assert.equal(await traceStatus('full_batch'), 'gpt-trace-done-exact');
  assert.equal(await page.getByTestId('gpt-trace-window_tokens').locator('tbody tr').count(), 1);
  for (let k = 2; k <= 8; k++) {
    await page.getByTestId('gpt-trace-next').click();
    assert.match(await page.getByTestId('gpt-trace-phase').textContent(), new RegExp(`After micro-batch ${k} of 8`));
  }
  assert.ok(await page.getByTestId('gpt-trace-next').isDisabled());
  assert.equal(await page.getByTestId('gpt-trace-window_tokens').locator('tbody tr').count(), 8);
  assert.equal(await traceStatus('window_tokens'), 'gpt-trace-done-exact');
  assert.equal(await traceStatus('micro_batch_mean'), 'gpt-trace-done-off');
  assert.match(await page.getByTestId('gpt-trace-window_tokens').textContent(), /difference exactly 0/);
  await page.getByTestId('gpt-trace').screenshot({ path: `${artifactsDir}/gpt-trace-desktop.png` });
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
  // Why accumulate: on fixed blocks, 8 micro-batches keep exactly an eighth per pass.
  const memory = page.getByTestId('gpt-memory');
  await page.getByTestId('gpt-memory-predict-nth').check();
  await page.getByTestId('gpt-memory-measure').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt-memory]')?.dataset.status === 'measured', null, {
    timeout: 120_000,
    polling: 100,
  });
  const table = await memory.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({ n: tr.dataset.n, cells: [...tr.querySelectorAll('td')].map((td) => td.textContent) })),
  );
  assert.deepEqual(table.map((r) => r.n), ['1', '2', '4', '8', '16', '32']);
  assert.deepEqual(table.map((r) => r.cells[1]), ['2048', '1024', '512', '256', '128', '64']);
  assert.equal(table[3].cells[6], '12,5 %');
  const memoryVerdict = page.getByTestId('gpt-memory-verdict');
  assert.equal(await memoryVerdict.getAttribute('data-answer'), 'nth');
  assert.match(await memoryVerdict.textContent(), /^Correcto\. Con 8 microlotes una pasada guarda el 12,5 %/);
  // The sandbox's form, opened, on a phone in Spanish.
  await page.getByTestId('gpt-settings').locator('summary').click();
  await page.getByTestId('gpt-control-lr').fill('7');
  await page.getByTestId('gpt-settings-apply').click();
  await page.getByTestId('gpt-settings').locator('[data-control=lr] .field-error').filter({ hasText: /Elige un valor/ }).waitFor();
  await page.getByTestId('gpt-settings').screenshot({ path: `${artifactsDir}/gpt-settings-es-phone.png` });
  await expectAccessible(page, 'the tiny GPT page in Spanish on a phone');
  await screenshot(page, 'gpt-blocks-es-phone');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the learner trains a model of their own from the settings, and the link keeps it', async () => {
  // A shared link: one layer, 32 wide in 2 heads, a context of 32, N = 4; and a bad value,
  // named and ignored.
  const page = await openGpt('&engine=cpu&layers=1&width=32&heads=2&context=32&n=4&warmup=abc');
  assert.match(await page.getByTestId('url-notice').textContent(), /abc.*warmup/);
  const model = page.getByTestId('gpt-model');
  assert.match(await model.textContent(), /1 layers, 32 wide, 2 heads, context of 32 characters/);
  assert.match(await model.textContent(), /4 micro-batches of 8/);
  const settings = page.getByTestId('gpt-settings');
  assert.equal(await settings.evaluate((d) => d.open), true, 'the form is open on settings of their own');
  assert.equal(await page.getByTestId('gpt-control-n').inputValue(), '4');
  const trained = await train(page, 2);
  assert.ok(trained.steps >= 2);

  // Three heads do not divide 32: the width is marked, nothing is rebuilt.
  await page.getByTestId('gpt-control-heads').selectOption('3');
  await page.getByTestId('gpt-control-lr').fill('0.5');
  await page.getByTestId('gpt-settings-apply').click();
  const widthField = settings.locator('[data-control=width]');
  await widthField.locator('.field-error').filter({ hasText: /multiple of the 3 heads/ }).waitFor();
  assert.equal(await widthField.locator('input').getAttribute('aria-invalid'), 'true');
  assert.match(await settings.locator('[data-control=lr] .field-error').textContent(), /from 0.00001 to 0.1/);
  assert.equal((await state(page)).steps, trained.steps, 'the trained runs are still there');
  await screenshot(page, 'gpt-settings-errors');
  await settings.screenshot({ path: `${artifactsDir}/gpt-settings-form.png` });
  await expectAccessible(page, 'the tiny GPT settings with errors');

  // Fixed: the runs start again on the new model, and the address holds the settings.
  await page.getByTestId('gpt-control-width').fill('48');
  await page.getByTestId('gpt-control-lr').fill('0.002');
  await page.getByTestId('gpt-settings-apply').click();
  await page.waitForFunction(() => {
    const s = document.querySelector('[data-testid=gpt]');
    return s.dataset.status === 'ready' && s.dataset.working === 'false' && s.dataset.steps === '0';
  }, null, { timeout: 60_000, polling: 100 });
  assert.match(await model.textContent(), /1 layers, 48 wide, 3 heads, context of 32 characters/);
  const query = new URL(page.url()).searchParams;
  assert.deepEqual(
    ['layers', 'heads', 'width', 'context', 'n', 'lr', 'warmup'].map((k) => query.get(k)),
    ['1', '3', '48', '32', '4', '0.002', null],
  );
  assert.equal(query.get('view'), 'gpt');
  await train(page, 2);
  // The same link in a new tab builds the same model; Back to the preset clears the settings.
  const again = await openGpt(`&${query.toString()}`);
  assert.match(await again.getByTestId('gpt-model').textContent(), /1 layers, 48 wide, 3 heads/);
  await again.close();
  await page.getByTestId('gpt-settings-reset').click();
  await waitReady(page);
  assert.match(await model.textContent(), /2 layers, 64 wide, 4 heads, context of 64 characters/);
  assert.deepEqual([...new URL(page.url()).searchParams.keys()].sort(), ['engine', 'view']);
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** Each run's training loss per step, as the runs' list holds them. */
const losses = (page) =>
  page
    .getByTestId('gpt-runs')
    .locator('li')
    .evaluateAll((items) => Object.fromEntries(items.map((li) => [li.dataset.run, li.dataset.losses.split(',').map(Number)])));

function assertSameNumbers(a, b, what) {
  for (const run of Object.keys(b)) {
    const n = Math.min(a[run].length, b[run].length);
    assert.ok(n >= 2, `${what}: ${run} has steps to compare`);
    for (let i = 0; i < n; i++) {
      const [x, y] = [a[run][i], b[run][i]];
      assert.ok(Math.abs(x - y) <= 1e-5 * Math.abs(y), `${what}: ${run} step ${i}: ${x} vs ${y}`);
    }
  }
}

test('WebGPU trains the tiny GPT with the CPU engine numbers, and samples its weights', async () => {
  const gpu = await openGpt('&engine=gpu');
  const badge = gpu.getByTestId('engine-badge');
  assert.equal(await badge.getAttribute('data-engine'), 'webgpu');
  assert.equal(await badge.getAttribute('data-choosing'), 'false');
  await gpu.getByTestId('gpt-predict-micro_batch_mean').check();
  await train(gpu, 2);
  const verdict = gpu.getByTestId('gpt-verdict');
  assert.equal(await verdict.getAttribute('data-answer'), 'micro_batch_mean');
  // Accumulation equals the full batch exactly on WebGPU too: the fix's error is 0.
  assert.match(await verdict.textContent(), /0 for the sum \/ tokens\.$/);
  for (const run of ['full_batch', 'micro_batch_mean', 'window_tokens']) {
    assert.ok((await gpu.getByTestId(`gpt-sample-${run}`).locator('pre').textContent()).startsWith('MACBETH.\n'));
  }
  // The step-through at WebGPU's weights and its last step's examples.
  await gpu.getByTestId('gpt-trace-show').click();
  await gpu.waitForFunction(() => document.querySelector('[data-testid=gpt-trace]')?.dataset.status === 'shown', null, {
    timeout: 60_000,
    polling: 100,
  });
  assert.equal(await gpu.getByTestId('gpt-trace-full_batch').getAttribute('data-status'), 'gpt-trace-done-exact');
  const cpu = await openGpt('&engine=cpu');
  assert.match(await cpu.getByTestId('engine-badge').textContent(), /chosen in the URL/);
  await train(cpu, 2);
  assertSameNumbers(await losses(gpu), await losses(cpu), 'WebGPU against the CPU engine');
  await expectAccessible(gpu, 'the tiny GPT page on WebGPU');
  await screenshot(gpu, 'gpt-webgpu');
  assert.deepEqual(gpu.errors, []);
  assert.deepEqual(cpu.errors, []);
  await gpu.close();
  await cpu.close();
});

test('the engines race on the first steps and the faster goes on with the same numbers', async () => {
  const page = await openGpt();
  const badge = page.getByTestId('engine-badge');
  assert.equal(await badge.getAttribute('data-engine'), 'webgpu');
  assert.equal(await badge.getAttribute('data-choosing'), 'true');
  await page.getByTestId('gpt-play').click();
  await page.waitForFunction(
    () => document.querySelector('[data-testid=engine-badge]')?.dataset.choosing === 'false',
    null,
    { timeout: 180_000, polling: 100 },
  );
  const decidedAt = (await state(page)).steps;
  // Training goes on after the decision, on whichever engine won.
  await page.waitForFunction(
    (n) => Number(document.querySelector('[data-testid=gpt]')?.dataset.steps) >= n,
    decidedAt + 2,
    { timeout: 120_000, polling: 100 },
  );
  await page.getByTestId('gpt-play').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt]')?.dataset.working === 'false', null, {
    timeout: 60_000,
    polling: 100,
  });
  const engine = await badge.getAttribute('data-engine');
  // A software adapter (SwiftShader, lavapipe) loses to the CPU engine; a hardware GPU wins.
  if (engine === 'cpu') {
    assert.match(await badge.textContent(), /CPU engine: [\d.]+× faster than WebGPU on this machine/);
  } else {
    assert.equal(engine, 'webgpu');
    assert.match(await badge.textContent(), /WebGPU: /);
  }
  const cpu = await openGpt('&engine=cpu');
  await train(cpu, (await state(page)).steps);
  assertSameNumbers(await losses(page), await losses(cpu), `across the switch to ${engine}`);
  await screenshot(page, 'gpt-engine-race');
  assert.deepEqual(page.errors, []);
  await page.close();
  await cpu.close();
});
