// The app loads, the Lab trains ten CPU steps in wasm, and the losses it shows are bit for bit
// the ones the native CLI computes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { withAppAndBrowser, screenshot, repoRoot } from '../harness.mjs';

const app = withAppAndBrowser();

/** Step-10 losses of the scaling scenario from the native CLI, keyed by run label. */
function nativeLosses() {
  const binary = process.env.GRADLAB_BIN ?? join(repoRoot, 'target', 'debug', 'gradlab');
  assert.ok(existsSync(binary), `native CLI not built at ${binary} (cargo build --bin gradlab)`);
  const csv = execFileSync(binary, ['run', '--scenario', 'scaling', '--steps', '10', '--format', 'csv', '--quiet'], {
    encoding: 'utf8',
  });
  const losses = {};
  for (const line of csv.trim().split('\n').slice(1)) {
    const label = line.startsWith('"') ? line.slice(1, line.indexOf('"', 1)) : line.split(',')[0];
    const rest = line.slice(line.startsWith('"') ? line.indexOf('"', 1) + 2 : label.length + 1).split(',');
    if (rest[0] === '10') losses[label] = rest[1];
  }
  return losses;
}

test('the Lab trains on the CPU engine in wasm with the same numbers as native', async () => {
  const page = await app.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${app.server.url}?engine=cpu`);
  await page.getByRole('heading', { name: 'Gradient Accumulation Lab' }).waitFor();
  await page.waitForFunction(() => !document.querySelector('[data-testid=step]')?.disabled);
  for (let i = 1; i <= 10; i++) {
    await page.getByTestId('step').click();
    await page.waitForFunction((k) => Number(document.querySelector('[data-testid=lab]').dataset.steps) >= k, i);
    await page.waitForFunction(() => document.querySelector('[data-testid=step]')?.disabled === false);
  }
  const rows = await page
    .getByTestId('results-table')
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => ({ run: tr.dataset.run, shown: tr.children[1].textContent, exact: tr.dataset.loss })));
  assert.equal(rows.length, 3);
  const [full, accumulated, unscaled] = rows;
  assert.equal(full.run, 'full batch');
  // loss / N matches the full batch to the digits shown; the unscaled run does not.
  assert.equal(accumulated.shown, full.shown);
  assert.notEqual(unscaled.shown, full.shown);
  const native = nativeLosses();
  for (const row of rows) {
    assert.equal(row.exact, native[row.run], `wasm and native disagree for ${row.run}`);
  }
  await screenshot(page, 'smoke');
  assert.deepEqual(errors, []);
});
