// Linked views over the whole run: hovering a chart, focusing it and using the arrow keys, or
// dragging the history scrubber inspects one step on every chart (a crosshair), in the hovered
// chart's tooltip and in the results table; leaving returns to the live step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, screenshot, expectAccessible } from '../harness.mjs';
import { openLab, train, results } from '../lab-helpers.mjs';

const app = withAppAndBrowser();

/** The step each visible chart's crosshair marks (null where it draws none). */
async function crosshairs(page) {
  return page.locator('figure.chart:visible').evaluateAll((figures) =>
    figures.map((f) => f.querySelector('.crosshair')?.dataset.step ?? null),
  );
}

test('hovering a chart inspects a step on every chart and in the results table', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling&engine=gpu', { viewport: { width: 1280, height: 1000 } });
  await train(page, 30);
  const live = await results(page);
  const liveTitle = await page.getByTestId('results-title').textContent();
  const canvas = page.locator('[data-testid=chart-loss] canvas');
  const box = await canvas.boundingBox();
  // A third of the way along the plot: an early step.
  await canvas.hover({ position: { x: box.width * 0.35, y: box.height * 0.5 } });
  await page.waitForSelector('[data-testid=chart-loss] .crosshair');
  const marked = await crosshairs(page);
  const step = marked[0];
  assert.ok(Number(step) >= 2 && Number(step) < 30, `an early step: ${step}`);
  assert.ok(marked.length >= 3 && marked.every((s) => s === step), `every chart marks step ${step}: ${marked}`);
  const tooltip = page.locator('[data-testid=chart-loss] [data-testid=chart-tooltip]');
  assert.equal(await tooltip.getAttribute('data-step'), step);
  assert.equal(await tooltip.locator('li').count(), 3, 'one value per run');
  assert.match(await tooltip.textContent(), new RegExp(`Step ${step}.*full batch: \\d\\.\\d{4}`));
  assert.equal(await page.locator('[data-testid=chart-cosine] [data-testid=chart-tooltip]').count(), 0, 'only the hovered chart lists values');
  assert.match(await page.getByTestId('results-title').textContent(), new RegExp(`After step ${step} \\(inspecting a past step; training is at step \\d+\\)`));
  const past = await results(page);
  assert.notEqual(past[0].exactLoss ?? past[0].loss, live[0].exactLoss ?? live[0].loss, 'the table shows that step');
  await expectAccessible(page, 'Lab inspecting a step');
  await screenshot(page, 'linked-views-hover');
  // Leaving returns every view to the live step.
  await page.mouse.move(5, 5);
  await page.waitForFunction(() => document.querySelectorAll('.crosshair').length === 0);
  assert.equal(await page.getByTestId('results-title').textContent(), liveTitle);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the keyboard and the scrubber inspect steps too', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling&engine=cpu', { viewport: { width: 1280, height: 1000 } });
  await train(page, 20);
  const canvas = page.locator('[data-testid=chart-cosine] canvas');
  await canvas.focus();
  await page.keyboard.press('Home');
  assert.deepEqual([...new Set(await crosshairs(page))], ['1']);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.deepEqual([...new Set(await crosshairs(page))], ['3']);
  assert.equal(await page.locator('[data-testid=chart-cosine] [data-testid=chart-tooltip]').getAttribute('data-step'), '3');
  await page.keyboard.press('Escape');
  assert.deepEqual([...new Set(await crosshairs(page))], [null]);
  // The scrubber: drag to step 5, every chart and the table follow; "Back to the live step".
  await page.getByTestId('history-scrubber').fill('5');
  assert.deepEqual([...new Set(await crosshairs(page))], ['5']);
  assert.match(await page.getByTestId('results-title').textContent(), /^After step 5 \(inspecting/);
  assert.equal(await page.getByTestId('scrubber-step').textContent(), 'showing step 5');
  // The boundaries shown are the nearest kept snapshot at or before step 5, and say so.
  const note = await page.getByTestId('boundary-snapshot').textContent();
  const kept = Number(note.match(/the boundaries drawn after step (\d+), the nearest earlier of (\d+) kept snapshots \([\d.]+ (KiB|MiB|B)/)?.[1]);
  assert.ok(kept >= 0 && kept <= 5, note);
  assert.match(await page.locator('#boundaries-title').textContent(), new RegExp(`after step ${kept}$`));
  await screenshot(page, 'linked-views-scrubber');
  await page.getByTestId('scrubber-live').click();
  assert.deepEqual([...new Set(await crosshairs(page))], [null]);
  assert.equal(await page.getByTestId('boundary-snapshot').isVisible(), false);
  assert.match(await page.getByTestId('results-title').textContent(), /^After step \d+$/);
  assert.deepEqual(page.errors, []);
  await page.close();
});
