// Embedding in a course page on another origin: the iframe sizes itself (our embed.js, the H5P
// resizer protocol and Canvas's lti.frameResize), xAPI statements reach the configured origin
// when the quiz is completed, and messages from a foreign origin are ignored.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withAppAndBrowser, servePages, screenshot, repoRoot, expectAccessible } from '../harness.mjs';
import { bank, currentQuestion, answer } from '../quiz-helpers.mjs';
import { nextPhase, pause } from '../lab-helpers.mjs';

const app = withAppAndBrowser();
let host;
let foreign;
/** The host server's pages, filled per test (a real server: Chromium treats intercepted pages as public). */
const hostPages = {};

/** A course page with three iframes, one per resize protocol, and a log of what arrives. */
function hostPage(appUrl, origin, foreignUrl) {
  const src = (query) => `${appUrl}?${query}&origin=${encodeURIComponent(origin)}`;
  return `<!DOCTYPE html><html><head><title>Course</title><script src="${appUrl}embed.js"></script></head><body>
  <iframe id="ours" data-gradlab style="width:900px;height:150px" src="${src('embed=lab&scenario=norms&hide=menu,seed&lock=spf')}"></iframe>
  <iframe id="h5p" style="width:700px;height:150px" src="${src('embed=quiz')}"></iframe>
  <iframe id="canvas" style="width:700px;height:150px" src="${src('embed=lab&scenario=scaling&hide=settings,boundaries')}"></iframe>
  <iframe id="foreign" style="width:10px;height:10px" src="${foreignUrl}"></iframe>
  <script>
    window.statements = []; window.pongs = 0;
    document.addEventListener('gradlab:xapi', (e) => statements.push(e.detail));
    const h5p = document.getElementById('h5p'), canvas = document.getElementById('canvas');
    window.addEventListener('message', (event) => {
      const data = event.data;
      if (event.source === h5p.contentWindow && data && data.context === 'h5p') {
        // What h5p-resizer.js does.
        const reply = (action) => h5p.contentWindow.postMessage({ context: 'h5p', action }, event.origin);
        if (data.action === 'hello') reply('hello');
        if (data.action === 'prepareResize') { h5p.style.height = data.clientHeight + 'px'; reply('resizePrepared'); }
        if (data.action === 'resize') h5p.style.height = data.scrollHeight + 'px';
        return;
      }
      if (event.source === canvas.contentWindow && typeof data === 'string') {
        // What Canvas does with lti.frameResize.
        const message = JSON.parse(data);
        if (message.subject === 'lti.frameResize') canvas.style.height = message.height + 'px';
        return;
      }
      if (data && data.type === 'gradlab.pong') window.pongs += 1;
      if (data && data.type === 'gradlab.xapi' && event.source !== document.getElementById('ours').contentWindow) statements.push(data.statement);
    });
  </script></body></html>`;
}

const FOREIGN_PAGE = `<!DOCTYPE html><html><body><script>
  window.attack = () => { for (const f of [parent.frames[0], parent.frames[1], parent.frames[2]]) f.postMessage({ type: 'gradlab.ping' }, '*'); };
</script></body></html>`;

before(async () => {
  foreign = await servePages({ '/foreign.html': FOREIGN_PAGE }, '127.0.0.3');
  host = await servePages(hostPages, '127.0.0.2');
});
after(async () => {
  await host?.close();
  await foreign?.close();
});

async function openHost() {
  const page = await app.browser.newPage({ viewport: { width: 1000, height: 900 } });
  hostPages['/course.html'] = hostPage(app.server.url, host.origin, `${foreign.url}foreign.html`);
  await page.goto(`${host.url}course.html`);
  return page;
}

const frameOf = (page, id) => page.frameLocator(`#${id}`);
// The iframe's content box (its border is the browser's default).
const heightOf = (page, id) => page.locator(`#${id}`).evaluate((f) => f.clientHeight);

test('the iframe sizes itself with embed.js, the H5P protocol and lti.frameResize', async () => {
  const page = await openHost();
  for (const id of ['ours', 'h5p', 'canvas']) {
    await page
      .waitForFunction((frame) => document.getElementById(frame).clientHeight > 300, id, { timeout: 30_000 })
      .catch((e) => {
        throw new Error(`${id} never grew: ${e.message}`);
      });
    // The content may still be growing (charts, boundaries): the iframe must catch up with it.
    let inner = 0;
    let outer = -1;
    for (let tries = 0; tries < 40 && Math.abs(outer - inner) > 2; tries++) {
      if (tries > 0) await page.waitForTimeout(250);
      inner = await frameOf(page, id).locator('body').evaluate((b) => b.scrollHeight);
      outer = await heightOf(page, id);
    }
    assert.ok(Math.abs(outer - inner) <= 2, `${id}: iframe ${outer}px for content ${inner}px`);
  }
  // No site chrome, one link to the full app without the embed parameters.
  const lab = frameOf(page, 'ours');
  assert.equal(await lab.locator('.site-header').count(), 0);
  const full = await lab.getByTestId('open-full').getAttribute('href');
  assert.match(full, /scenario=norms/);
  assert.doesNotMatch(full, /embed=|origin=|hide=/);
  // Hidden and locked controls, hidden menu.
  assert.equal(await lab.locator('#control-seed').count(), 0);
  assert.ok(await lab.locator('#control-spf').isDisabled());
  assert.ok(await lab.getByTestId('scenario-select').isHidden());
  // Without hide=menu the experiment list is there, as one line.
  assert.ok(await frameOf(page, 'canvas').getByTestId('scenario-select').isVisible());
  // The content grows: the iframe follows.
  const before = await heightOf(page, 'canvas');
  // Chromium pauses animation frames in off-screen cross-origin iframes, so training (like a
  // hidden tab) waits until the learner scrolls the Lab into view.
  await page.locator('#canvas').scrollIntoViewIfNeeded();
  await frameOf(page, 'canvas').getByTestId('play').click();
  await page.waitForFunction((h) => document.getElementById('canvas').clientHeight > h + 50, before);
  await screenshot(page, 'embed-host');
  await frameOf(page, 'canvas').getByTestId('play').dispatchEvent('click');
  await page.close();
});

test('completing the quiz sends xAPI statements to the configured origin only', async () => {
  const page = await openHost();
  const quiz = page.frame({ url: /embed=quiz/ });
  await page.locator('#h5p').scrollIntoViewIfNeeded();
  await quiz.getByTestId('question').waitFor();
  for (let i = 0; i < bank.questions.length; i++) {
    const question = await currentQuestion(quiz);
    await answer(quiz, question, i !== 0, { dispatch: true });
    if (i === 0) {
      await quiz.getByTestId('try-again').dispatchEvent('click');
      await answer(quiz, question, true, { dispatch: true });
    }
    if (i + 1 < bank.questions.length) {
      // The iframe resizes as feedback appears, which can move the button under the pointer:
      // dispatch the click on the element itself.
      await quiz.getByTestId('next').dispatchEvent('click');
      await quiz.waitForFunction(
        (previous) => document.querySelector('[data-testid=question]')?.dataset.questionId !== previous,
        question.id,
        { polling: 50, timeout: 10_000 },
      ).catch(async (e) => {
        const shown = await quiz.locator('body').innerText();
        throw new Error(`${e.message} after ${question.id}:\n${shown.slice(0, 1500)}`);
      });
    }
  }
  await page.waitForFunction((n) => window.statements.length >= n + 2, bank.questions.length, { timeout: 5000 }).catch(async (e) => {
    throw new Error(`${e.message}: ${JSON.stringify(await page.evaluate(() => window.statements.map((s) => s.verb.display['en-US'])))}`);
  });
  const statements = await page.evaluate(() => window.statements);
  const verbs = statements.map((s) => s.verb.display['en-US']);
  assert.equal(verbs.filter((v) => v === 'answered').length, bank.questions.length, 'one per first answer');
  const first = statements.find((s) => s.verb.display['en-US'] === 'answered');
  assert.equal(first.result.success, false, 'the first answer was wrong, and only it counts');
  assert.match(first.object.id, /\/quiz\//);
  const completed = statements.find((s) => s.verb.id === 'http://adlnet.gov/expapi/verbs/completed');
  const passed = statements.find((s) => s.verb.id === 'http://adlnet.gov/expapi/verbs/passed');
  assert.ok(completed && passed, verbs.join(','));
  const total = bank.questions.length;
  assert.deepEqual(passed.result.score, { raw: total - 1, min: 0, max: total, scaled: Math.round(((total - 1) / total) * 1000) / 1000 });
  assert.equal(passed.result.success, true);
  assert.equal(passed.result.completion, true);
  assert.match(passed.result.duration, /^PT(\d+H)?(\d+M)?[\d.]+S$/);
  await page.close();
});

test('a scenario trained far enough is reported as experienced', async () => {
  const page = await openHost();
  const lab = page.frame({ url: /scenario=scaling/ });
  await page.locator('#canvas').scrollIntoViewIfNeeded();
  await lab.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false, null, { polling: 100 });
  // Training needs animation frames, which the browser gives only to an iframe in view.
  await lab.getByTestId('play').dispatchEvent('click');
  await page.locator('#canvas').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => window.statements.some((s) => s.verb.display['en-US'] === 'experienced'), null, {
    timeout: 60_000,
  });
  const statement = await page.evaluate(() => window.statements.find((s) => s.verb.display['en-US'] === 'experienced'));
  assert.match(statement.object.id, /\/lab\/scaling$/);
  assert.equal(statement.result.completion, true);
  // Another experiment from the embed's list has trained nothing yet: it is not reported with
  // the steps of the one before (whose view stays until the engine has rebuilt).
  await lab.getByTestId('scenario-select').selectOption('norms');
  await lab.waitForFunction(
    () => document.querySelector('[data-testid=scenario-title]').textContent.includes('Norm') &&
      document.querySelector('[data-testid=lab]').dataset.steps === '0' &&
      document.querySelector('[data-testid=play]').disabled === false,
    null,
    { polling: 50, timeout: 60_000 },
  );
  // Every statement the embed has sent by now (it counts them as it posts) has reached the host:
  // the switch's own statement, had there been one, among them.
  const sent = Number(await lab.locator('html').getAttribute('data-xapi-sent'));
  await page.waitForFunction(
    (n) => window.statements.filter((s) => s.object.id.includes('/lab/')).length >= n,
    sent,
  );
  const reported = await page.evaluate(() =>
    window.statements.filter((s) => s.verb.display['en-US'] === 'experienced').map((s) => s.object.id));
  assert.equal(reported.length, 1, `only scaling is reported: ${reported.join(', ')}`);
  await page.close();
});

/** Opens an embedded Lab at `width` px (as a course page's iframe would be), trains `steps` and returns the page. */
async function embeddedLab(query, width, steps = 20) {
  const page = await app.browser.newPage({ viewport: { width, height: 900 } });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(`${app.server.url}?${query}`);
  await page.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false, null, { timeout: 60_000 });
  await page.getByTestId('play').click();
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=lab]').dataset.steps) >= n, steps, { timeout: 60_000 });
  await pause(page);
  return page;
}

const contentHeight = (page) => page.evaluate(() => document.documentElement.scrollHeight);

test('an embedded experiment is compact at 700 px and never cut', async () => {
  // The hostile pass's case: hide=settings grew the iframe to 3,781 px and cut the table.
  for (const [query, limit] of [
    ['embed=lab&scenario=scaling&hide=settings', 1200],
    ['embed=lab&scenario=scaling', 1260],
  ]) {
    const page = await embeddedLab(query, 700);
    const height = await contentHeight(page);
    assert.ok(height <= limit, `${query}: ${height}px tall at 700px wide (at most ${limit})`);
    const cut = await page.evaluate(() => {
      const overflowing = (el) => el.scrollWidth > el.clientWidth + 1;
      return [document.documentElement, document.querySelector('.results .table-scroll')]
        .filter(overflowing)
        .map((el) => `${el.className || el.tagName}: ${el.scrollWidth} > ${el.clientWidth}`);
    });
    assert.deepEqual(cut, [], `${query}: content wider than its box`);
    // Folded, not gone: the other charts and the boundaries open with one click, drawn.
    await page.getByTestId('more-charts').locator('summary').click();
    await page.getByTestId('chart-cosine').waitFor();
    const canvasWidth = await page.getByTestId('chart-cosine').locator('canvas').evaluate((c) => c.width);
    assert.ok(canvasWidth > 250, `an unfolded chart is drawn at its width (${canvasWidth}px)`);
    await screenshot(page, `embed-compact-${query.includes('hide') ? 'no-settings' : 'default'}`);
    assert.deepEqual(page.errors, []);
    await page.close();
  }
});

test('an embedded experiment opens its step-through in place, at 700 px', async () => {
  const page = await embeddedLab('embed=lab&scenario=scaling', 700, 5);
  await page.getByTestId('step-through-open').click();
  const rows = page.getByTestId('step-through').locator('tr[data-run]');
  await rows.first().waitFor({ timeout: 60_000 });
  for (let i = 0; i < 12; i++) await nextPhase(page, { by: 'click' });
  const k = await rows.evaluateAll((trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.run, Number(tr.dataset.microBatch)])));
  assert.equal(k['accumulate 4, loss / 4'], 4, JSON.stringify(k));
  assert.equal(k['full batch'], 1);
  const cut = await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
  assert.equal(cut, false, 'nothing wider than the iframe');
  await expectAccessible(page, 'embedded step-through');
  await page.getByTestId('step-through').scrollIntoViewIfNeeded();
  await screenshot(page, 'embed-step-through');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('hide= removes the menu, the language switch, the table, the explanation, the step-through and any chart', async () => {
  const page = await embeddedLab('embed=lab&scenario=pitfalls&hide=menu,language,table,explanation,step-through,loss,grad-norm', 700, 5);
  assert.equal(await page.getByTestId('step-through').count(), 0);
  assert.ok(await page.getByTestId('scenario-select').isHidden());
  assert.equal(await page.locator('.languages').count(), 0);
  assert.ok(await page.getByTestId('results-table').isHidden());
  assert.equal(await page.locator('details.about').count(), 1);
  assert.ok(await page.locator('details.about').isHidden());
  assert.equal(await page.getByTestId('chart-loss').count(), 0);
  assert.equal(await page.getByTestId('chart-grad-norm').count(), 0);
  // The key chart that is left is shown; the others wait under "More charts".
  assert.ok(await page.getByTestId('chart-cosine').isVisible());
  await page.getByTestId('more-charts').locator('summary').click();
  assert.ok(await page.getByTestId('chart-clip-factor').isVisible());
  assert.equal(await page.getByTestId('open-full').count(), 1, 'the way to the full app stays');
  await screenshot(page, 'embed-hidden-parts');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('messages from a foreign origin are ignored; the host is answered', async () => {
  const page = await openHost();
  const lab = frameOf(page, 'ours');
  // Every embedded frame listens before the foreign page pings them all.
  await lab.getByTestId('lab').waitFor();
  await frameOf(page, 'canvas').getByTestId('lab').waitFor();
  await frameOf(page, 'h5p').getByTestId('question').waitFor();
  await page.frame({ url: /foreign\.html/ }).evaluate(() => window.attack());
  // Each embedded frame has handled the foreign ping, and ignored it (a frame counts what it
  // ignores instead of answering): no answer to it can still be on its way.
  for (const id of ['ours', 'h5p', 'canvas']) {
    await frameOf(page, id).locator('html[data-ignored-messages="1"]').waitFor({ state: 'attached' });
  }
  await page.evaluate(() => document.getElementById('ours').contentWindow.postMessage({ type: 'gradlab.ping' }, '*'));
  await page.waitForFunction(() => window.pongs >= 1);
  assert.equal(await page.evaluate(() => window.pongs), 1, 'only the host was answered');
  assert.equal(await lab.locator('html').getAttribute('data-ignored-messages'), '1');
  await page.close();
});

test('the example host page for course authors is served and embeds the app', async () => {
  const example = await readFile(join(repoRoot, 'docs', 'embed-example.html'), 'utf8');
  const page = await app.browser.newPage();
  hostPages['/embed-example.html'] = example;
  await page.goto(`${host.url}embed-example.html?app=${encodeURIComponent(app.server.url)}`);
  await page.frameLocator('#lab').getByTestId('lab').waitFor();
  await page.frameLocator('#quiz').getByTestId('question').waitFor();
  await page.waitForFunction(() => document.getElementById('lab').getBoundingClientRect().height > 400);
  await page.close();
});

test('without a configured origin no statement leaves the iframe', async () => {
  hostPages['/no-origin.html'] = `<!DOCTYPE html><html><body>
    <iframe id="quiz" style="width:700px;height:700px" src="${app.server.url}?embed=quiz"></iframe>
    <script>window.received = []; window.addEventListener('message', (e) => { if (e.data && e.data.type) received.push(e.data.type); });</script>
  </body></html>`;
  const page = await app.browser.newPage();
  await page.goto(`${host.url}no-origin.html`);
  const quiz = page.frame({ url: /embed=quiz/ });
  await quiz.getByTestId('question').waitFor();
  await answer(quiz, await currentQuestion(quiz), true);
  await page.waitForFunction(() => window.received.includes('gradlab.resize'));
  // The answer's statement was made and withheld (the quiz counts what it withholds), and none
  // was sent.
  await quiz.locator('html[data-xapi-withheld]').waitFor({ state: 'attached' });
  assert.equal(await quiz.locator('html').getAttribute('data-xapi-sent'), null);
  const types = await page.evaluate(() => window.received);
  assert.ok(!types.includes('gradlab.xapi'), `statements sent without an origin: ${types}`);
  await page.close();
});
