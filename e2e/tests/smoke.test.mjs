// The minimal page: it loads, trains ten CPU steps in wasm and shows their losses, and those
// losses are bit-for-bit the ones the native CLI computes.
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

test('the page mounts and shows the CPU demo table, with the same numbers as native', async () => {
  const page = await app.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.server.url);
  await page.getByRole('heading', { name: 'Gradient Accumulation Lab' }).waitFor();
  const rows = page.getByTestId('demo-table').locator('tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 3);
  const cells = await rows.evaluateAll((trs) =>
    trs.map((tr) => ({ texts: [...tr.children].map((td) => td.textContent), exact: tr.children[2].dataset.loss })),
  );
  const [full, accumulated, unscaled] = cells;
  assert.equal(full.texts[0], 'full batch');
  // loss / N matches the full batch to the digits shown; the unscaled run does not.
  assert.equal(accumulated.texts[2], full.texts[2]);
  assert.notEqual(unscaled.texts[2], full.texts[2]);
  const native = nativeLosses();
  for (const row of cells) {
    assert.equal(row.exact, native[row.texts[0]], `wasm and native disagree for ${row.texts[0]}`);
  }
  await screenshot(page, 'smoke');
  assert.deepEqual(errors, []);
});
