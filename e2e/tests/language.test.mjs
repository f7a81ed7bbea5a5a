// English and Spanish: chosen from the browser's language, switchable in the page, kept in the
// URL across reloads and links, for the Lab, the quiz bank and the shell.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { withAppAndBrowser, screenshot } from '../harness.mjs';
import { openLab, train, results, address } from '../lab-helpers.mjs';

const app = withAppAndBrowser();

test('switching to Spanish changes the visible text and survives a reload', async () => {
  const page = await openLab(app, '?view=lab&scenario=norms&spf=5');
  assert.equal(await page.getByTestId('play').textContent(), 'Play');
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
  await page.locator('[data-lang=es]').first().click();
  await page.waitForFunction(() => document.documentElement.lang === 'es');
  await page.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false);
  assert.equal(await page.getByTestId('play').textContent(), 'Reproducir');
  assert.match(await page.getByTestId('scenario-title').textContent(), /BatchNorm frente a LayerNorm/);
  assert.equal((await address(page)).searchParams.get('lang'), 'es');
  assert.equal((await address(page)).searchParams.get('scenario'), 'norms', 'the experiment is kept');
  await train(page, 5);
  const rows = await results(page);
  assert.equal(rows[1].run, 'BatchNorm, acumular 4');
  assert.match(await page.getByTestId('status').textContent(), /En pausa en el paso/);
  // Spanish numbers: a decimal comma in the table, the charts' words and the agreement line;
  // the CSV stays machine-readable.
  assert.match(rows[0].loss, /^\d+,\d{6}$/, rows[0].loss);
  assert.match(rows[0].cosine, /^\d,\d{6}$/, rows[0].cosine);
  assert.doesNotMatch(await page.getByTestId('results-table').textContent(), /\d\.\d/);
  assert.match(await page.getByTestId('chart-loss-summary').textContent(), /\d,\d/);
  assert.doesNotMatch(await page.getByTestId('chart-loss-summary').textContent(), /\d\.\d/);
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-csv').click()]);
  const lines = (await readFile(await csv.path(), 'utf8')).trim().split('\n');
  assert.match(lines[1], /^"?BatchNorm, lote completo"?,1,\d\.\d+e-?\d+,/, lines[1]);
  await screenshot(page, 'lab-spanish');
  await page.reload();
  await page.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false);
  assert.equal(await page.getByTestId('play').textContent(), 'Reproducir');
  // Links to the other pages keep the language: the quiz comes in Spanish.
  await page.getByRole('link', { name: 'Cuestionario', exact: true }).click();
  await page.getByTestId('question').waitFor();
  assert.match(await page.locator('h2').first().textContent(), /Cuestionario: acumulación de gradientes/);
  assert.match(await page.getByTestId('question-prompt').textContent(), /microlotes|lote|GPU|gradientes/);
  assert.equal((await address(page)).searchParams.get('lang'), 'es');
  await page.getByRole('link', { name: 'English', exact: true }).click();
  await page.getByTestId('question').waitFor();
  assert.match(await page.locator('h2').first().textContent(), /Quiz: gradient accumulation/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the browser language picks Spanish; an unknown lang falls back with a notice', async () => {
  const context = await app.browser.newContext({ locale: 'es-ES' });
  const page = await context.newPage();
  await page.goto(`${app.server.url}?view=quiz`);
  await page.getByTestId('question').waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'es');
  assert.match(await page.getByTestId('score-line').textContent(), /Nota al primer intento/);
  await screenshot(page, 'quiz-spanish');
  await page.goto(`${app.server.url}?view=verify&lang=xx`);
  assert.match(await page.getByTestId('url-notice').textContent(), /«\u2068xx\u2069» no es un valor válido para lang/);
  assert.match(await page.getByTestId('trust-note').textContent(), /no tiene servidor/);
  await context.close();
});
