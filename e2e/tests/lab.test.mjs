// The interactive Lab as a learner uses it: every scenario trained with play and pause on
// WebGPU, what each one shows, settings and their validation, the URL, downloads, keyboard use,
// a phone-width screen, and a hidden tab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { withAppAndBrowser, screenshot } from '../harness.mjs';
import { openLab, train, results, steps, address } from '../lab-helpers.mjs';

const app = withAppAndBrowser();

test('scaling: loss / N equals the full batch, the unscaled run does not', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling&spf=5&engine=gpu');
  assert.equal(await page.getByTestId('engine-badge').getAttribute('data-engine'), 'webgpu');
  await train(page, 40);
  const [full, scaled, unscaled] = await results(page);
  assert.equal(full.run, 'full batch');
  assert.equal(scaled.loss, full.loss, 'same loss to the 6 digits shown');
  assert.notEqual(unscaled.loss, full.loss);
  assert.ok(Math.abs(unscaled.gradError - 3) < 1e-3, `unscaled gradient is 4x: error ${unscaled.gradError}`);
  // The line names the pair it compares and says equal (to the bit, or up to float rounding).
  assert.match(
    await page.getByTestId('agreement').textContent(),
    /^full batch and accumulate 4, loss \/ 4: (the same loss, to the last bit|equal up to float rounding)/,
  );
  assert.match(await page.getByTestId('results-table').locator('tbody tr').nth(2).textContent(), /gradient ×4\.00 the full batch's/);
  assert.match(await page.getByTestId('ratio-note').textContent(), /relative error of N − 1 with a cosine of 1 means a gradient N times/);
  // Each chart's text alternative says what the curves show, as training goes.
  const summary = await page.getByTestId('chart-loss-summary').textContent();
  assert.match(summary, /These runs lie on top of each other: full batch, accumulate 4, loss \/ 4\./);
  // The loss as the results table writes it (6 decimals): one value, one form, everywhere.
  assert.match(summary, /accumulate 4, unscaled: \d\.\d{6} at step \d+, (rising|falling|going up and down|flat) over the last steps\./);
  const unscaledRow = (await results(page)).find((r) => r.run === 'accumulate 4, unscaled');
  assert.ok(summary.includes(`accumulate 4, unscaled: ${unscaledRow.loss} at step`), `${summary} / ${unscaledRow.loss}`);
  assert.equal(
    await page.locator('[data-testid=chart-loss] canvas').getAttribute('aria-describedby'),
    'chart-loss-summary',
  );
  await screenshot(page, 'lab-scaling');
  await page.close();
});

test('scaling with Adam: the unscaled run stays close', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling_adam&spf=5');
  await train(page, 30);
  const [full, scaled, unscaled] = await results(page);
  assert.equal(scaled.loss, full.loss);
  assert.ok(Math.abs(unscaled.exactLoss - full.exactLoss) / full.exactLoss < 0.05, `${unscaled.loss} vs ${full.loss}`);
  await screenshot(page, 'lab-scaling-adam');
  await page.close();
});

test('norms: BatchNorm mismatches, LayerNorm and GroupNorm match, running stats once per micro-batch', async () => {
  const page = await openLab(app, '?view=lab&scenario=norms&spf=5');
  await train(page, 20);
  const byRun = Object.fromEntries((await results(page)).map((r) => [r.run, r]));
  const bn = byRun['BatchNorm, accumulate 4'].gradError;
  const ln = byRun['LayerNorm, accumulate 4'].gradError;
  const gn = byRun['GroupNorm, accumulate 4'].gradError;
  assert.ok(bn > 1e-3, `BatchNorm error ${bn}`);
  assert.ok(ln < 1e-5 && gn < 1e-5, `LayerNorm ${ln}, GroupNorm ${gn}`);
  assert.ok(bn > 100 * Math.max(ln, gn, 1e-12));
  const stats = await page.getByTestId('running-stats').textContent();
  assert.match(stats, /BatchNorm, accumulate 4: \d+ updates in \d+ steps \(4 per step\)/);
  assert.match(stats, /BatchNorm, full batch: \d+ updates in \d+ steps \(1 per step\)/);
  await screenshot(page, 'lab-norms');
  await page.close();
});

test('variable length: a mean of means is wrong, the total item count is right', async () => {
  const page = await openLab(app, '?view=lab&scenario=variable_length&spf=5');
  await train(page, 20);
  const [, meanOfMeans, totalTokens] = await results(page);
  assert.ok(meanOfMeans.gradError > 1e-3, `mean of means ${meanOfMeans.gradError}`);
  assert.ok(totalTokens.gradError < 1e-5, `total tokens ${totalTokens.gradError}`);
  await screenshot(page, 'lab-variable-length');
  await page.close();
});

test('pitfalls: each misplaced call departs from the correct run, and the charts show how', async () => {
  const page = await openLab(app, '?view=lab&scenario=pitfalls&spf=5');
  await train(page, 30);
  const [correct, ...pitfalls] = await results(page);
  // Clipping shortens the correct run's gradient and never turns it.
  assert.equal(correct.cosine, '1.000000');
  assert.equal(pitfalls.length, 5);
  for (const run of pitfalls) {
    assert.ok(
      run.loss !== correct.loss || Math.abs(run.gradError - correct.gradError) > 1e-4,
      `${run.run} looks like the correct run`,
    );
  }
  // Clipping every micro-batch turns the gradient; without clipping a forgotten zero_grad's
  // norm grows (its cosine is also below 1).
  // Read from the whole history (the CSV), not at whatever step Pause landed on: at a step where
  // no micro-batch's partial sum exceeds the limit, clipping every micro-batch does not act
  // and its cosine is exactly 1.
  const byName = Object.fromEntries(pitfalls.map((r) => [r.run, r]));
  assert.ok(Number(byName['zero_grad forgotten, no clipping'].cosine) < 0.99);
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-csv').click()]);
  const [header, ...lines] = (await readFile(await csv.path(), 'utf8')).trim().split('\n');
  const column = (name) => header.split(',').indexOf(name);
  const history = (run) =>
    lines
      .map((line) => line.match(/^("(?:[^"]|"")*"|[^,]*),(.*)$/))
      .filter((m) => m[1].replace(/^"|"$/g, '').replaceAll('""', '"') === run)
      .map((m) => [m[1], ...m[2].split(',')]);
  const cosine = column('grad_cosine');
  const clipRows = history('clip every micro-batch');
  assert.ok(clipRows.length >= 30, `${clipRows.length} steps of clip every micro-batch`);
  assert.ok(clipRows.some((r) => Number(r[cosine]) < 1), 'clipping every micro-batch turned the gradient at some step');
  // As the table shows it (6 decimals): clipping never turns the correct run's gradient.
  for (const row of history('correct accumulation')) assert.ok(Math.abs(1 - Number(row[cosine])) < 5e-7, `correct run at step ${row[1]}: ${row[cosine]}`);
  // The scheduler pitfall gets its learning-rate chart and clipping its clipping-factor chart
  // (a constant learning rate and no clipping get neither).
  await page.getByTestId('chart-learning-rate').waitFor();
  await page.getByTestId('chart-clip-factor').waitFor();
  assert.match(await page.getByTestId('chart-clip-factor-summary').textContent(), /clip every micro-batch/);
  await screenshot(page, 'lab-pitfalls');
  await page.close();
  const scaling = await openLab(app, '?view=lab&scenario=scaling');
  assert.equal(await scaling.getByTestId('chart-learning-rate').count(), 0);
  assert.equal(await scaling.getByTestId('chart-clip-factor').count(), 0);
  await scaling.close();
});

test('the legend toggles runs on and off on every chart, kept in the URL', async () => {
  const page = await openLab(app, '?view=lab&scenario=norms&spf=5');
  await train(page, 5);
  const trained = await steps(page);
  const toggle = page.locator('[data-run-toggle="2"]');
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
  assert.match(await page.getByTestId('chart-grad-norm-summary').textContent(), /LayerNorm, full batch/);
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
  await page.waitForFunction(() => !document.querySelector('[data-testid=chart-grad-norm-summary]').textContent.includes('LayerNorm, full batch'));
  assert.doesNotMatch(await page.getByTestId('chart-loss-summary').textContent(), /LayerNorm, full batch/);
  assert.equal((await address(page)).searchParams.get('runs_off'), '2');
  // Not restarted: the count did not go back (a step that Pause let finish may still land).
  assert.ok((await steps(page)) >= trained, 'switching a run off does not restart training');
  // Kept across a reload; the table still lists every run.
  await page.reload();
  await page.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false);
  assert.equal(await page.locator('[data-run-toggle="2"]').getAttribute('aria-pressed'), 'false');
  // Another experiment shows all its runs.
  await page.locator('.scenario-menu a[data-scenario=scaling]').click();
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('runs_off'));
  await page.close();
});

test('memory: the GPU engine holds one micro-batch of activations', async () => {
  const page = await openLab(app, '?view=lab&scenario=memory&spf=5&engine=gpu');
  await train(page, 10);
  const bars = page.getByTestId('memory-bars');
  assert.match(await bars.textContent(), /WebGPU engine allocated/);
  const bytes = await bars.locator('li').evaluateAll((lis) => lis.map((li) => Number(li.dataset.value)));
  assert.equal(bytes.length, 4);
  assert.ok(Math.abs(bytes[1] / bytes[0] - 0.25) < 0.01, `4 micro-batches: ${bytes}`);
  assert.ok(Math.abs(bytes[2] / bytes[0] - 1 / 16) < 0.01, `16 micro-batches: ${bytes}`);
  // The default budget's run: the planner's 7 micro-batches of at most 37 examples, and the
  // planner's exact figure for them (`gradlab plan --model lab-mlp --engine webgpu`).
  assert.equal(bytes[3], 67472);
  const [full, four, , budget] = await results(page);
  assert.equal(four.loss, full.loss);
  assert.equal(budget.run, 'fits the budget: accumulate 7');
  assert.equal(budget.loss, full.loss);
  // The other side of the trade, by the GPU's timestamps: every run timed.
  const times = page.getByTestId('step-time-bars');
  assert.match(await times.textContent(), /GPU's own clock \(WebGPU timestamp queries\)/);
  const ms = await times.locator('li').evaluateAll((lis) => lis.map((li) => Number(li.dataset.value)));
  assert.equal(ms.length, 4);
  assert.ok(ms.every((t) => t > 0), `GPU ms per optimizer step: ${ms}`);
  await times.scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-memory');
  await page.close();
});

test('memory: the CPU engine times each run\'s optimizer step by its own clock', async () => {
  const page = await openLab(app, '?view=lab&scenario=memory&spf=5&engine=cpu');
  await train(page, 10);
  const times = page.getByTestId('step-time-bars');
  await times.locator('li[data-value]').nth(2).waitFor();
  assert.match(await times.textContent(), /CPU engine's own clock \(WebAssembly, in a Web Worker\): the mean of each run's last 20 steps/);
  assert.match(await times.textContent(), /the time per optimizer step does not/);
  const rows = await times.locator('li').evaluateAll((lis) => lis.map((li) => [li.textContent, Number(li.dataset.value)]));
  assert.equal(rows.length, 4);
  for (const [text, ms] of rows) {
    assert.ok(ms > 0, `${text}: ${ms}`);
    assert.match(text, /^(full batch|accumulate \d+|fits the budget: accumulate \d+): \d+\.\d\d ms$/);
  }
  await times.scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-memory-cpu-times');
  await page.close();
});

test('memory: a lower budget makes the planner pick more micro-batches, and the gradient stays the full batch\'s', async () => {
  const page = await openLab(app, '?view=lab&scenario=memory&spf=5&engine=cpu');
  const budget = page.locator('#control-budget');
  const plan = page.getByTestId('memory-budget-plan');
  assert.equal(await budget.inputValue(), '128');
  assert.match(await plan.textContent(), /^The planner picks N = 7: micro-batches of at most 37 examples\./);
  const lastRun = () => page.getByTestId('memory-bars').locator('li').nth(3).textContent();
  assert.match(await lastRun(), /^fits the budget: accumulate 7: /);
  await budget.fill('64');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('budget') === '64');
  assert.match(await plan.textContent(), /^The planner picks N = 43: micro-batches of at most 6 examples\./);
  await page.waitForFunction(
    () => document.querySelectorAll('[data-testid=memory-bars] li')[3]?.textContent.startsWith('fits the budget: accumulate 43: '),
  );
  await train(page, 6);
  const [full, , , planned] = await results(page);
  assert.equal(planned.loss, full.loss, 'the same loss');
  assert.ok(planned.gradError < 1e-6, `the full batch's gradient: relative error ${planned.gradError}`);
  // Nothing fits below what one example needs: said beside the field, and Play waits.
  await budget.fill('20');
  await page.locator('[data-control=budget] .field-error').filter({ hasText: /^Nothing fits: one example needs .* of the 20.0 KiB/ }).waitFor();
  assert.equal(await page.getByTestId('play').isDisabled(), true);
  await budget.fill('512');
  await page.waitForFunction(() => /N = 1:/.test(document.querySelector('[data-testid=memory-budget-plan]').textContent));
  await page.getByTestId('memory-budget').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-memory-budget');
  await page.close();
});

test('sandbox: invalid settings are explained next to the control and cannot start a run', async () => {
  const page = await openLab(app, '?view=lab&scenario=sandbox');
  await page.getByLabel('Batch size B').fill('100');
  await page.getByLabel('Micro-batches N').fill('3');
  const error = page.locator('#control-n-error');
  assert.match(await error.textContent(), /B = 100 is not divisible by N = 3/);
  assert.equal(await page.getByLabel('Micro-batches N').getAttribute('aria-invalid'), 'true');
  assert.ok(await page.getByTestId('play').isDisabled());
  await page.getByLabel('Learning rate').fill('fast');
  assert.match(await page.locator('#control-lr-error').textContent(), /Enter a number/);
  await screenshot(page, 'lab-sandbox-invalid');
  await page.getByLabel('Learning rate').fill('0.2');
  await page.getByLabel('Micro-batches N').fill('4');
  await page.getByTestId('play').waitFor({ state: 'visible' });
  await page.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false);
  assert.equal(await error.textContent(), '');
  // Every setting is in the URL: a reload reproduces the experiment.
  await page.getByLabel('Optimizer', { exact: true }).selectOption('adam');
  await page.getByLabel('Hidden widths').fill('32-16');
  const url = await address(page);
  assert.equal(url.searchParams.get('batch'), '100');
  assert.equal(url.searchParams.get('n'), '4');
  assert.equal(url.searchParams.get('optimizer'), 'adam');
  assert.equal(url.searchParams.get('hidden'), '32-16');
  await page.reload();
  await page.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false);
  assert.equal(await page.getByLabel('Batch size B').inputValue(), '100');
  assert.equal(await page.getByLabel('Optimizer', { exact: true }).inputValue(), 'adam');
  assert.equal(await page.getByLabel('Learning rate').inputValue(), '0.2');
  await train(page, 10);
  const [full, scaled] = await results(page);
  assert.equal(scaled.loss, full.loss);
  await page.close();
});

test('a preset can be copied into the sandbox', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling_adam');
  assert.ok(await page.getByLabel('Learning rate').isDisabled());
  await page.getByTestId('copy-to-sandbox').click();
  assert.match(await page.getByTestId('scenario-title').textContent(), /Sandbox/);
  assert.ok(!(await page.getByLabel('Learning rate').isDisabled()));
  assert.equal(await page.getByLabel('Learning rate').inputValue(), '0.01');
  assert.equal((await address(page)).searchParams.get('scenario'), 'sandbox');
  await page.close();
});

test('malformed URL parameters fall back with a visible notice', async () => {
  const page = await openLab(app, '?view=lab&scenario=%3Cscript%3E&lr=abc&n=7&engine=quantum');
  const notice = await page.getByTestId('url-notice').textContent();
  assert.match(notice, /"\u2068<script>\u2069" is not a valid value for scenario/);
  assert.match(notice, /"\u2068abc\u2069" is not a valid value for lr/);
  assert.match(notice, /"\u2068quantum\u2069" is not a valid value for engine/);
  assert.match(await page.getByTestId('scenario-title').textContent(), /Full batch vs accumulated/);
  await train(page, 2);
  await screenshot(page, 'lab-bad-url');
  await page.goto(`${app.server.url}?view=nonsense`);
  assert.match(await page.getByTestId('url-notice').textContent(), /Unknown page/);
  await page.close();
});

test('plots download as PNG and the metrics as CSV', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling&spf=5');
  await train(page, 10);
  const [png] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('chart-loss').getByRole('button', { name: /Download PNG/ }).click(),
  ]);
  assert.equal(png.suggestedFilename(), 'gradlab-loss.png');
  const image = await readFile(await png.path());
  assert.deepEqual([...image.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10]);
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-csv').click()]);
  assert.equal(csv.suggestedFilename(), 'gradlab-scaling-metrics.csv');
  const lines = (await readFile(await csv.path(), 'utf8')).trim().split('\n');
  assert.match(lines[0], /^run,step,train_loss/);
  const n = await steps(page);
  assert.equal(lines.length, 1 + 3 * n);
  await page.close();
});

test('keyboard only: Tab reaches every control and Enter trains', async () => {
  const page = await openLab(app, '?view=lab&scenario=sandbox');
  const reached = new Set();
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => {
      const el = document.activeElement;
      return el?.id || el?.dataset?.testid || el?.dataset?.scenario || el?.textContent?.trim().slice(0, 30) || el?.tagName;
    });
    reached.add(id);
  }
  for (const key of ['dataset', 'hidden', 'activation', 'norm', 'optimizer', 'lr', 'batch', 'n', 'seed', 'spf']) {
    assert.ok(reached.has(`control-${key}`), `control ${key} not reached: ${[...reached]}`);
  }
  for (const id of ['play', 'step', 'reset', 'scaling', 'norms', 'memory', 'sandbox']) {
    assert.ok(reached.has(id), `${id} not reached: ${[...reached]}`);
  }
  // Operate by keyboard: a select changes with the arrow keys, the step button with Enter.
  await page.focus('#control-optimizer');
  await page.keyboard.press('ArrowDown');
  assert.equal((await address(page)).searchParams.get('optimizer'), 'momentum');
  await page.waitForFunction(() => document.querySelector('[data-testid=step]')?.disabled === false);
  await page.focus('[data-testid=step]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=lab]').dataset.steps) === 1);
  assert.match(await page.getByTestId('status').textContent(), /Paused at step 1/);
  await page.close();
});

test('phone width: Play on the first screen, every result column visible, the charts readable', async () => {
  const page = await openLab(app, '?view=lab&scenario=norms&spf=5', { viewport: { width: 390, height: 844 } });
  const play = await page.getByTestId('play').boundingBox();
  assert.ok(play.y + play.height <= 844, `Play ends at ${play.y + play.height}px, below the first screen`);
  await train(page, 10);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
  // One card per run: nothing scrolls sideways, and the gradient error is on screen, labelled.
  const region = page.locator('.results .table-scroll');
  assert.ok(await region.evaluate((r) => r.scrollWidth <= r.clientWidth), 'the results scroll sideways');
  const cell = page.locator('[data-testid=results-table] tbody tr').nth(1).locator('td').nth(1);
  const box = await cell.boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, `gradient error cell at ${box.x}..${box.x + box.width}`);
  assert.equal(await cell.getAttribute('data-label'), 'error vs full batch (same weights)');
  const width = await page.getByTestId('chart-loss').locator('canvas').evaluate((c) => c.width);
  assert.ok(width >= 300 && width <= 390, `chart canvas ${width}px wide`);
  await screenshot(page, 'lab-phone');
  await page.close();
});

test('training pauses while the tab is hidden and resumes when visible', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling&spf=1');
  await page.getByTestId('play').click();
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=lab]').dataset.steps) >= 3);
  await page.evaluate(() => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  // The page holds at a step while hidden (the step in flight, if any, finished) and shows it;
  // read together, the count shown is that step, and training still holds.
  await page.locator('[data-testid=status][data-held-at-step]').waitFor({ state: 'attached' });
  const held = await page.evaluate(() => ({
    at: Number(document.querySelector('[data-testid=status]').dataset.heldAtStep),
    shown: Number(document.querySelector('[data-testid=lab]').dataset.steps),
  }));
  assert.equal(held.shown, held.at, 'the view shows the step training holds at');
  const hiddenAt = held.at;
  await page.evaluate(() => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=lab]').dataset.steps) > n + 2, hiddenAt);
  await page.close();
});

test('text contrast meets WCAG 2.2 AA on every Lab page element', async () => {
  for (const scenario of ['scaling', 'memory', 'sandbox']) {
    const page = await openLab(app, `?view=lab&scenario=${scenario}&spf=5`);
    await train(page, 5);
    const { failures, checked } = await page.evaluate(() => {
      const parse = (c) => {
        const m = c.match(/rgba?\(([^)]+)\)/);
        if (!m) return null;
        const [r, g, b, a = 1] = m[1].split(',').map(Number);
        return { r, g, b, a };
      };
      const lum = ({ r, g, b }) => {
        const ch = (v) => {
          v /= 255;
          return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
        };
        return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b);
      };
      const background = (el) => {
        for (let e = el; e; e = e.parentElement) {
          const c = parse(getComputedStyle(e).backgroundColor);
          if (c && c.a > 0.5) return c;
        }
        return { r: 255, g: 255, b: 255, a: 1 };
      };
      const out = [];
      let checked = 0;
      for (const el of document.querySelectorAll('body *')) {
        const text = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent.trim()).join('');
        if (!text || el.closest('[hidden]') || el.disabled || el.closest(':disabled')) continue;
        const style = getComputedStyle(el);
        if (style.visibility === 'hidden' || style.display === 'none' || Number(style.opacity) < 1) continue;
        const fg = parse(style.color);
        const bg = background(el);
        const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
        const ratio = (hi + 0.05) / (lo + 0.05);
        const size = parseFloat(style.fontSize);
        const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
        checked += 1;
        if (ratio < (large ? 3 : 4.5)) out.push(`${text.slice(0, 40)}: ${ratio.toFixed(2)}`);
      }
      return { failures: out, checked };
    });
    assert.ok(checked > 50, `only ${checked} text elements checked`);
    assert.deepEqual(failures, [], `low contrast on ${scenario}`);
    await page.close();
  }
});
