// Inside one optimizer step: the step-through panel replays a traced step phase by phase with
// the numbers of the engine that trains (WebGPU and the CPU engine), from the keyboard; every
// phase is photographed, and axe-core checks the panel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, screenshot, expectAccessible } from '../harness.mjs';
import { openLab, nextPhase } from '../lab-helpers.mjs';

const app = withAppAndBrowser();

/** Opens the panel (which takes one traced step) and waits for its rows. */
async function openStepThrough(page) {
  await page.getByTestId('step-through-open').click();
  await page.waitForSelector('[data-testid=step-through] tr[data-run]', { timeout: 60_000 });
}

/** Each run's row: label, what it does, micro-batches accumulated, relative error, norm ratio. */
async function rows(page) {
  return page.getByTestId('step-through').locator('tr[data-run]').evaluateAll((trs) =>
    Object.fromEntries(
      trs.map((tr) => [
        tr.dataset.run,
        {
          activity: tr.dataset.activity,
          k: Number(tr.dataset.microBatch),
          error: tr.dataset.partialError === '' ? null : Number(tr.dataset.partialError),
          ratio: tr.dataset.normRatio === '' ? null : Number(tr.dataset.normRatio),
        },
      ]),
    ),
  );
}

for (const engine of ['gpu', 'cpu']) {
  test(`scaling on ${engine}: loss / N reaches the full-batch gradient exactly at k = N, unscaled N times it`, async () => {
    const page = await openLab(app, `?view=lab&scenario=scaling&engine=${engine}`, { viewport: { width: 1280, height: 900 } });
    await openStepThrough(page);
    const panel = page.getByTestId('step-through');
    assert.equal(await panel.getAttribute('data-step'), '0');
    assert.equal(await page.getByTestId('step-counter').textContent(), '1 / 1000', 'opening took one traced step');
    const n = 4;
    const seen = [];
    for (let phase = 0; ; phase++) {
      const now = await rows(page);
      seen.push(now);
      const scaled = now['accumulate 4, loss / 4'];
      const unscaled = now['accumulate 4, unscaled'];
      const full = now['full batch'];
      const name = await page.getByTestId('phase-name').textContent();
      if (engine === 'gpu') await screenshot(page.getByTestId('step-through'), `step-through-scaling-phase-${String(phase + 1).padStart(2, '0')}`);
      if (scaled.activity === 'backward') {
        assert.match(name, new RegExp(`micro-batch ${scaled.k}, backward`));
        assert.equal(unscaled.k, scaled.k);
        if (scaled.k < n) {
          assert.ok(scaled.error > 0.1, `after ${scaled.k} of ${n} the partial sum is not the full gradient yet: ${scaled.error}`);
        } else {
          assert.ok(scaled.error < 1e-6, `loss / N after all ${n} micro-batches: error ${scaled.error}`);
          assert.ok(Math.abs(scaled.ratio - 1) < 1e-6);
          assert.ok(Math.abs(unscaled.ratio - n) < 1e-5 * n, `unscaled reaches N times the gradient: ${unscaled.ratio}`);
          assert.ok(Math.abs(unscaled.error - (n - 1)) < 1e-5 * n);
        }
        // The full batch did its one big forward and backward at k = 1.
        assert.equal(full.k, 1);
        assert.ok(full.error < 1e-6);
      }
      if (phase === 0) {
        assert.equal(scaled.activity, 'forward');
        assert.equal(scaled.k, 0);
        assert.equal(await page.getByTestId('phase-previous').isDisabled(), true);
        // The executed line of the loop is highlighted, in step with the phase.
        assert.equal(await page.locator('[data-testid=step-code] .current').textContent(), '▶         outputs = model(x_k)');
        // The data plot highlights the items of the micro-batch being processed.
        assert.equal(await page.getByTestId('micro-batch-plot').getAttribute('data-highlighted'), '64');
        assert.match(await page.getByTestId('micro-batch-plot').textContent(), /The step's 256 items; micro-batch 1's 64 in colour/);
        assert.equal(await page.locator('[data-testid=micro-batch-plot] circle').count(), 256);
        await expectAccessible(page, 'step-through at its first phase');
      }
      if (await page.getByTestId('phase-next').isDisabled()) break;
      await nextPhase(page);
    }
    assert.equal(seen.length, 3 * n + 2, 'forward, loss and backward of each micro-batch, the update, zero_grad');
    assert.equal(seen.at(-2)['accumulate 4, loss / 4'].activity, 'optimizerstep');
    assert.match(await page.locator('[data-testid=step-code] .current').textContent(), /optimizer\.zero_grad\(\)/);
    // zero_grad has emptied the buffer: nothing to compare any more.
    assert.deepEqual([seen.at(-1)['accumulate 4, loss / 4'].activity, seen.at(-1)['accumulate 4, loss / 4'].error], ['zerograd', null]);
    // The memory timeline: four low peaks for accumulation, one tall one for the full batch.
    const polylines = await page.locator('[data-testid=memory-timeline] polyline').count();
    assert.equal(polylines, 3);
    await expectAccessible(page, 'step-through at its last phase');
    // The next optimizer step is traced and replayed from its first phase.
    await page.getByTestId('phase-next-step').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=step-through]').dataset.step === '1', null, { timeout: 60_000 });
    assert.equal(await panel.getAttribute('data-phase-index'), '0');
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

test('norms: BatchNorm used each micro-batch\'s own statistics; LayerNorm reaches the full gradient', async () => {
  const page = await openLab(app, '?view=lab&scenario=norms&engine=gpu', { viewport: { width: 1280, height: 900 } });
  await openStepThrough(page);
  // The panel starts on BatchNorm, accumulate 4.
  assert.equal(await page.getByTestId('step-run').inputValue(), '1');
  // Micro-batch 1's backward.
  for (let i = 0; i < 2; i++) await nextPhase(page);
  const table = page.getByTestId('step-batch-norm');
  assert.match(await table.locator('caption').textContent(), /micro-batch 1 against the whole batch/);
  const means = await table.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [tr.querySelector('[data-testid=bn-micro-mean]').textContent, tr.querySelector('[data-testid=bn-batch-mean]').textContent]),
  );
  assert.equal(means.length, 3);
  for (const [micro, batch] of means) assert.notEqual(micro, batch, 'a micro-batch mean is not the batch mean');
  await screenshot(page.getByTestId('step-through'), 'step-through-norms-batch-norm');
  // At the optimizer step the buffer holds the gradient applied (zero_grad empties it after).
  while ((await rows(page))['BatchNorm, accumulate 4'].activity !== 'optimizerstep') await nextPhase(page);
  const last = await rows(page);
  assert.ok(last['BatchNorm, accumulate 4'].error > 0.01, `BatchNorm misses: ${last['BatchNorm, accumulate 4'].error}`);
  assert.ok(last['LayerNorm, accumulate 4'].error < 1e-5, `LayerNorm matches: ${last['LayerNorm, accumulate 4'].error}`);
  assert.ok(last['GroupNorm, accumulate 4'].error < 1e-5);
  await page.close();
});

test('step-through at phone width, in Spanish: readable, nothing wider than the screen', async () => {
  const page = await openLab(app, '?view=lab&scenario=pitfalls&engine=gpu&lang=es', { viewport: { width: 390, height: 844 } });
  await openStepThrough(page);
  for (let i = 0; i < 3; i++) await nextPhase(page);
  assert.match(await page.getByTestId('phase-name').textContent(), /Fase 4 de \d+: microlote 2, pasada hacia delante/);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
  await expectAccessible(page, 'step-through at 390 px in Spanish');
  await screenshot(page.getByTestId('step-through'), 'step-through-phone-es');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('at 1366 and 1920 px the phase table fits its box, with the same column widths in every phase', async () => {
  for (const width of [1366, 1920]) {
    const page = await openLab(app, '?view=lab&scenario=norms&engine=cpu', { viewport: { width, height: 900 } });
    await openStepThrough(page);
    let widths;
    for (let phase = 0; phase < 6; phase++) {
      const now = await page.evaluate(() => {
        const table = document.querySelector('.step-table');
        const box = table.closest('.table-scroll');
        return {
          fits: table.scrollWidth <= box.clientWidth,
          table: table.scrollWidth,
          box: box.clientWidth,
          columns: [...table.querySelectorAll('thead th')].map((th) => Math.round(th.getBoundingClientRect().width)),
        };
      });
      assert.ok(now.fits, `${width} px, phase ${phase + 1}: the table is ${now.table} px wide in a ${now.box} px box`);
      if (widths) assert.deepEqual(now.columns, widths, `${width} px, phase ${phase + 1}: the columns keep their widths`);
      widths = now.columns;
      await nextPhase(page);
    }
    assert.deepEqual(page.errors, []);
    await page.close();
  }
});
