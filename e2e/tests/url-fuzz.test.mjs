// Hostile URL parameters, as a fuzzer or a mistyped link sends them: every parameter the app
// reads with empty, huge, negative, NaN, infinite, right-to-left and HTML values. The page must
// not throw or panic, must not run anything the URL carries, and must say what it ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, screenshot, expectAccessible } from '../harness.mjs';

const app = withAppAndBrowser();

const HOSTILE = {
  huge: 'x'.repeat(10_000),
  negative: '-1',
  nan: 'NaN',
  infinite: 'inf',
  unicode: '\u202Eevil\u0000\uD83D\uDE00',
  html: '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>',
};

// Every parameter a page reads, with the page it applies to. Each hostile value above is
// invalid for each of them, so each must be named in a notice.
const PARAMETERS = {
  view: '',
  scenario: 'view=lab&engine=cpu',
  dataset: 'view=lab&scenario=sandbox&engine=cpu',
  hidden: 'view=lab&scenario=sandbox&engine=cpu',
  activation: 'view=lab&scenario=sandbox&engine=cpu',
  norm: 'view=lab&scenario=sandbox&engine=cpu',
  optimizer: 'view=lab&scenario=sandbox&engine=cpu',
  lr: 'view=lab&scenario=sandbox&engine=cpu',
  batch: 'view=lab&scenario=sandbox&engine=cpu',
  n: 'view=lab&scenario=sandbox&engine=cpu',
  seed: 'view=lab&engine=cpu',
  spf: 'view=lab&engine=cpu',
  engine: 'view=lab',
  simulate: 'view=lab&engine=cpu',
  lang: 'view=quiz',
  embed: 'engine=cpu',
  hide: 'embed=lab&engine=cpu',
  lock: 'embed=lab&engine=cpu',
  origin: 'embed=quiz',
};

async function load(page, query) {
  page.problems = [];
  await page.goto(`${app.server.url}?${query}`);
  await page.locator('main').first().waitFor();
  // The app renders its notices with the page; one more frame lets effects settle.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  return page;
}

async function assertHarmless(page, what) {
  assert.deepEqual(page.problems, [], `${what}: no page error or panic`);
  assert.equal(await page.evaluate(() => window.__pwned), undefined, `${what}: nothing from the URL ran`);
  assert.equal(await page.locator('img[src=x], main script').count(), 0, `${what}: no markup from the URL`);
}

async function newWatchedPage() {
  const page = await app.browser.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && /panicked|RuntimeError|unreachable/.test(m.text())) page.problems.push(m.text());
  });
  return page;
}

test('every parameter with every hostile value: no error, nothing executed, a notice naming it', async () => {
  const page = await newWatchedPage();
  let loads = 0;
  for (const [parameter, base] of Object.entries(PARAMETERS)) {
    for (const [kind, value] of Object.entries(HOSTILE)) {
      const query = `${base}${base ? '&' : ''}${parameter}=${encodeURIComponent(value)}`;
      const what = `${parameter}=${kind}`;
      await load(page, query);
      loads += 1;
      await assertHarmless(page, what);
      const notice = page.getByTestId('url-notice');
      assert.equal(await notice.count(), 1, `${what}: a notice`);
      const text = await notice.textContent();
      assert.ok(text.includes(parameter) || /Unknown page|Unknown scenario|Página|Escenario/.test(text), `${what}: ${text.slice(0, 200)}`);
      assert.ok(text.length < 2_000, `${what}: the notice quotes a bounded excerpt (${text.length} chars)`);
    }
    // An empty value is never an error either.
    await load(page, `${base}${base ? '&' : ''}${parameter}=`);
    await assertHarmless(page, `${parameter}=(empty)`);
  }
  await load(page, `view=lab&engine=cpu&scenario=${encodeURIComponent(HOSTILE.html)}`);
  await screenshot(page, 'url-fuzz-html-scenario');
  assert.ok(loads >= 100, `${loads} hostile URLs`);
  await page.close();
});

test('verify links with hostile IDs and names show a result, never run them', async () => {
  const page = await newWatchedPage();
  for (const [kind, value] of Object.entries(HOSTILE)) {
    for (const parameter of ['id', 'name']) {
      await load(page, `view=verify&${parameter}=${encodeURIComponent(value)}`);
      await assertHarmless(page, `verify ${parameter}=${kind}`);
    }
  }
  await page.close();
});

test('a key given twice keeps its first value and says so', async () => {
  const page = await newWatchedPage();
  await load(page, 'view=lab&scenario=sandbox&engine=cpu&lr=0.05&lr=2');
  await assertHarmless(page, 'duplicate lr');
  assert.match(await page.getByTestId('url-notice').textContent(), /\u2068lr\u2069 is given 2 times in the link; using the first value, "\u20680.05\u2069"/);
  // The notices are a list inside a live region, which axe-core checks as such.
  await expectAccessible(page, 'a link with a notice');
  await page.waitForFunction(() => new URL(location.href).searchParams.getAll('lr').length === 1);
  const lr = new URL(await page.evaluate(() => location.href)).searchParams.getAll('lr');
  assert.deepEqual(lr, ['0.05'], 'the rewritten address keeps the first value only');
  await page.close();
});

test('a preset drops the settings it fixes, with a notice, and the address loses them', async () => {
  const page = await newWatchedPage();
  await load(page, 'view=lab&scenario=norms&engine=cpu&lr=2&batch=128&seed=9');
  await assertHarmless(page, 'preset with sandbox settings');
  assert.match(await page.getByTestId('url-notice').textContent(), /norms scenario fixes lr, batch/);
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('lr'));
  const params = new URL(await page.evaluate(() => location.href)).searchParams;
  assert.equal(params.get('seed'), '9');
  assert.equal(params.get('batch'), null);
  await page.close();
});
