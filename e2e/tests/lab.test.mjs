// The minimal Lab page: each scenario link shows that scenario; a bad URL parameter shows a notice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, screenshot } from '../harness.mjs';

const app = withAppAndBrowser();

test('a scenario link from the quiz opens that scenario', async () => {
  const page = await app.browser.newPage();
  await page.goto(`${app.server.url}?view=lab&scenario=norms`);
  assert.match(await page.getByTestId('scenario-title').textContent(), /BatchNorm vs LayerNorm/);
  const rows = page.getByTestId('demo-table').locator('tbody tr');
  assert.equal(await rows.count(), 6);
  await screenshot(page, 'lab-norms');
});

test('a malformed URL parameter falls back with a visible notice', async () => {
  const page = await app.browser.newPage();
  await page.goto(`${app.server.url}?view=lab&scenario=%3Cscript%3E`);
  assert.match(await page.getByTestId('url-notice').textContent(), /Unknown scenario/);
  assert.match(await page.getByTestId('scenario-title').textContent(), /Full batch vs accumulated/);
  await page.goto(`${app.server.url}?view=nonsense`);
  assert.match(await page.getByTestId('url-notice').textContent(), /Unknown page/);
});
