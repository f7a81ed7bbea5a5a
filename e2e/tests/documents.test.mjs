// The app's two documents: index.html holds the Lab, pages.html every other page, each with its
// own wasm. Any URL of either document may name any page (certificates, course pages and SCORM
// packages link index.html?view=...); the inline document router moves it, query and fragment
// kept, before any wasm loads, by the same rule as the app's own route (a key's first value,
// trimmed; an embed shows the quiz or the Lab whatever `view` says). The app then shows the
// page itself, never "this page is in the other document".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser } from '../harness.mjs';

const app = withAppAndBrowser();

// [what is asked for, the document that holds it, the page it shows (main[data-page])]
const CASES = [
  ['?view=verify&id=2ABCD-EFGHJ-KMNPQ#checks', 'pages.html', 'verify'],
  ['index.html?view=quiz', 'pages.html', 'quiz'],
  ['?view=%20plan%20', 'pages.html', 'plan'],
  ['?view=certificate', 'pages.html', 'certificate'],
  ['?view=quiz&view=lab', 'pages.html', 'quiz'],
  ['?view=lab&view=quiz', 'index.html', 'lab'],
  ['pages.html?view=lab&scenario=norms', 'index.html', 'lab'],
  ['pages.html', 'index.html', 'lab'],
  ['pages.html?view=no-such-page', 'index.html', 'lab'],
  ['?embed=quiz&view=lab', 'pages.html', 'quiz'],
  ['?embed=lab&view=quiz', 'index.html', 'lab'],
  ['?embed=nonsense&view=quiz', 'index.html', 'lab'],
  ['?bench', 'pages.html', 'bench'],
  ['?view=gpt', 'pages.html', 'gpt'],
];

for (const [asked, document, shown] of CASES) {
  test(`${asked} opens ${shown} in ${document}, loading only that document's wasm`, async () => {
    const page = await app.browser.newPage();
    const wasm = [];
    page.on('request', (request) => {
      const file = new URL(request.url()).pathname.split('/').pop();
      if (file.endsWith('.wasm')) wasm.push(file);
    });
    try {
      await page.goto(`${app.server.url}${asked}`);
      await page.locator(`main[data-page="${shown}"]`).waitFor();
      const url = new URL(page.url());
      // The site's folder serves index.html.
      assert.equal(url.pathname === '/' ? '/index.html' : url.pathname, `/${document}`);
      // The query and fragment arrive unchanged (the Lab then writes its settings in the query).
      const original = new URL(asked, app.server.url);
      if (document === 'pages.html') assert.equal(url.search, original.search);
      assert.equal(url.hash, original.hash);
      const own = document === 'index.html' ? 'gradlab-web-' : 'gradlab-pages-';
      const other = document === 'index.html' ? 'gradlab-pages-' : 'gradlab-web-';
      assert.ok(wasm.some((file) => file.startsWith(own)), `loaded ${wasm.join(', ')}`);
      assert.ok(!wasm.some((file) => file.startsWith(other)), `loaded ${wasm.join(', ')}`);
    } finally {
      await page.close();
    }
  });
}

test('the Lab links the other pages in their document, and they link back', async () => {
  const page = await app.browser.newPage();
  try {
    await page.goto(`${app.server.url}`);
    await page.locator('main[data-page="lab"]').waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.getByRole('link', { name: 'Quiz' }).getAttribute('href'), 'pages.html?view=quiz');
    await nav.getByRole('link', { name: 'Plan' }).click();
    await page.locator('main[data-page="plan"]').waitFor();
    assert.equal(new URL(page.url()).pathname, '/pages.html');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Lab' }).click();
    await page.locator('main[data-page="lab"]').waitFor();
    assert.equal(new URL(page.url()).pathname, '/index.html');
  } finally {
    await page.close();
  }
});
