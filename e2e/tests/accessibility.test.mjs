// axe-core's WCAG 2.2 A/AA rules on every page and state a learner, an author or a checker
// meets: each Lab experiment before and after training (English and Spanish, on the CPU
// engine so that it is quick), the Lab while playing, the quiz at its first question, after a
// wrong answer, mid-way and finished, the certificate, the verify page and an embedded Lab and
// quiz. Plus the focus indicator's contrast (WCAG 1.4.11), which axe does not check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, expectAccessible, screenshot } from '../harness.mjs';
import { openLab } from '../lab-helpers.mjs';
import { bank, currentQuestion, answer } from '../quiz-helpers.mjs';

const app = withAppAndBrowser();
const EXPERIMENTS = ['scaling', 'scaling_adam', 'norms', 'variable_length', 'pitfalls', 'memory', 'sandbox'];

async function singleSteps(page, n) {
  for (let i = 1; i <= n; i++) {
    await page.getByTestId('step').click();
    await page.waitForFunction((k) => Number(document.querySelector('[data-testid=lab]').dataset.steps) >= k, i);
  }
}

for (const lang of ['en', 'es']) {
  test(`every Lab experiment, before and after training, has no WCAG 2.2 AA violation (${lang})`, async () => {
    for (const experiment of EXPERIMENTS) {
      const page = await openLab(app, `?view=lab&scenario=${experiment}&engine=cpu&lang=${lang}`);
      await expectAccessible(page, `${experiment} (${lang}), idle`);
      await singleSteps(page, 3);
      await expectAccessible(page, `${experiment} (${lang}), after 3 steps`);
      assert.deepEqual(page.errors, []);
      await page.close();
    }
  });
}

test('the Lab while training and while pausing has no WCAG 2.2 AA violation', async () => {
  const page = await openLab(app, '?view=lab&scenario=sandbox&hidden=256-256&batch=512&n=64&engine=cpu');
  await page.getByTestId('play').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=status]').dataset.working === 'true');
  await expectAccessible(page, 'Lab playing');
  await page.getByTestId('play').click();
  await expectAccessible(page, 'Lab pausing');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the quiz at every stage, the certificate and the verify page have no WCAG 2.2 AA violation', async () => {
  const context = await app.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${app.server.url}?view=quiz`);
  await page.getByTestId('question').waitFor();
  await expectAccessible(page, 'quiz, first question');
  for (let i = 0; i < bank.questions.length; i++) {
    const question = await currentQuestion(page);
    if (i === 0) {
      await answer(page, question, false);
      await expectAccessible(page, 'quiz, feedback on a wrong answer');
      await page.getByTestId('try-again').click();
    }
    await answer(page, question, true);
    if (i === 8) await expectAccessible(page, 'quiz, mid-way with feedback');
    if (i + 1 < bank.questions.length) await page.getByTestId('next').click();
  }
  await page.getByTestId('see-result').click();
  await page.getByTestId('result').waitFor();
  await expectAccessible(page, 'quiz, result');
  await page.getByTestId('cert-name').fill('Ada Lovelace');
  await page.getByTestId('get-certificate').click();
  await page.getByTestId('integrity-only').click();
  await page.getByTestId('certificate').waitFor();
  await expectAccessible(page, 'certificate');
  // The same certificate in Spanish: the card, its topics and its text alternative.
  await page.goto(`${app.server.url}?view=certificate&lang=es`);
  await page.getByTestId('certificate').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=cert-image] img')?.complete);
  assert.match(await page.getByTestId('certificate').textContent(), /Lo aprendido: qué aporta la acumulación/);
  await expectAccessible(page, 'certificate (es)');
  await screenshot(page, 'certificate-es');
  await page.goto(`${app.server.url}?view=verify&id=NOT-A-REAL-ID`);
  await page.getByTestId('verify-result').waitFor();
  await expectAccessible(page, 'verify page, an unreadable ID');
  await context.close();
});

test('an embedded Lab and quiz have no WCAG 2.2 AA violation', async () => {
  for (const query of ['?embed=lab&scenario=norms&engine=cpu&hide=settings', '?embed=lab&scenario=pitfalls&engine=cpu', '?embed=quiz']) {
    const page = await app.browser.newPage({ viewport: { width: 700, height: 900 } });
    await page.goto(`${app.server.url}${query}`);
    // Checked once the page is ready: the Lab's Play enabled, the quiz's question shown.
    await page.locator(query.includes('embed=quiz') ? '[data-testid=question]' : '[data-testid=play]:enabled').waitFor();
    await expectAccessible(page, `embed ${query}`);
    // Everything folded, unfolded; a run switched off.
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
    if ((await page.locator('[data-run-toggle="1"]').count()) > 0) await page.locator('[data-run-toggle="1"]').click();
    await expectAccessible(page, `embed ${query}, unfolded`);
    await page.close();
  }
  // A phone: the Lab's stacked layout and its cards.
  const phone = await app.browser.newPage({ viewport: { width: 390, height: 844 } });
  await phone.goto(`${app.server.url}?view=lab&scenario=norms&engine=cpu&spf=5`);
  await phone.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false, null, { timeout: 60_000 });
  await phone.getByTestId('step').click();
  await phone.waitForFunction(() => Number(document.querySelector('[data-testid=lab]').dataset.steps) >= 1);
  await expectAccessible(phone, 'the Lab on a phone');
  await phone.close();
});

/** WCAG relative luminance of an `rgb(r, g, b)` colour. */
function luminance(rgb) {
  const [r, g, b] = rgb.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

test('the keyboard focus indicator has at least 3:1 contrast with the page (WCAG 1.4.11)', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling&engine=cpu');
  // Tab until a button has focus (focus-visible: the keyboard's ring).
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(() => document.activeElement?.dataset?.testid === 'play')) break;
  }
  const { outline, background } = await page.evaluate(() => ({
    outline: getComputedStyle(document.activeElement).outlineColor,
    background: getComputedStyle(document.documentElement).backgroundColor,
  }));
  const [light, dark] = [luminance(background), luminance(outline)].sort((a, b) => b - a);
  const contrast = (light + 0.05) / (dark + 0.05);
  assert.ok(contrast >= 3, `focus ring ${outline} on ${background}: ${contrast.toFixed(2)}:1`);
  await page.close();
});
