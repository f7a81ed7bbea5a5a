// The quiz as a learner takes it: wrong answers first, then right; a reload mid-quiz; passing;
// with no issuer reachable (a plain static server), the integrity-only certificate; and its
// share link verified in a fresh browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { withAppAndBrowser, screenshot } from '../harness.mjs';
import { bank, currentQuestion, answer, choose } from '../quiz-helpers.mjs';

const WRONG_FIRST = 2;

const app = withAppAndBrowser();

test('take the quiz, reload midway, pass, and verify the certificate elsewhere', async () => {
  const context = await app.browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${app.server.url}?view=quiz`);

  const total = bank.questions.length;
  for (let i = 0; i < total; i++) {
    const question = await currentQuestion(page);
    assert.ok(question, `question ${i + 1} is from the bank`);
    if (i < WRONG_FIRST) {
      const feedback = await answer(page, question, false);
      // Instant, explained feedback on the choice, with the right answer kept for a second try:
      // only the chosen option is explained, and the focus is on the feedback.
      assert.match(await feedback.textContent(), /Not quite/);
      assert.equal(await feedback.getAttribute('data-answer-revealed'), 'false');
      await page.waitForFunction(() => document.activeElement?.dataset.testid === 'feedback');
      if (question.options) {
        assert.equal(await feedback.locator('li').count(), 1, `${question.id}: only the chosen option`);
        assert.doesNotMatch(await feedback.textContent(), /Correct \(not chosen\)/);
        if (i === 0) await screenshot(page, 'quiz-wrong-answer');
        if (i === 1) {
          // On request, every option's verdict and the explanation.
          await page.getByTestId('show-answer').click();
          assert.equal(await feedback.getAttribute('data-answer-revealed'), 'true');
          assert.equal(await feedback.locator('li').count(), question.options.length);
          assert.ok((await feedback.textContent()).includes(question.explanation));
        }
      }
      await page.getByTestId('try-again').click();
    }
    await answer(page, question, true);
    if (i === 4) {
      // Reload mid-quiz: the same question and its feedback come back, nothing is lost.
      await page.reload();
      await page.getByTestId('feedback').waitFor();
      assert.equal((await currentQuestion(page)).id, question.id);
      assert.match(await page.getByTestId('score-line').textContent(), /5 of 17 questions answered|5 of \d+ questions answered/);
    }
    if (i + 1 < total) await page.getByTestId('next').click();
  }

  await page.getByTestId('see-result').click();
  const result = page.getByTestId('result');
  assert.equal(await result.getAttribute('data-passed'), 'true');
  await page.waitForFunction(() => document.activeElement?.dataset.testid === 'result');
  // The review names the questions missed at the first try, by topic, with the Lab beside them.
  const review = page.getByTestId('review');
  const missed = bank.questions.slice(0, WRONG_FIRST);
  for (const q of missed) assert.ok((await review.textContent()).includes(q.topic), q.topic);
  assert.equal(await review.locator('button.link').count(), WRONG_FIRST);
  assert.equal(
    await review.locator('a').count(),
    missed.filter((q) => q.scenario).length,
    'a Lab link for each missed question that has a scenario',
  );
  await screenshot(page, 'quiz-result-review');
  await page.getByTestId('cert-name').fill('Ada Lovelace');
  await page.getByTestId('get-certificate').click();
  // The plain static server has no issuer: the page says so, keeps everything, and offers the
  // app's own integrity-only certificate instead.
  const problem = page.getByTestId('issue-problem');
  await problem.waitFor();
  assert.equal(await problem.getAttribute('data-kind'), 'unreachable');
  assert.match(await problem.textContent(), /could not be reached \(HTTP 404\)\. Your answers are saved/);
  await page.getByTestId('integrity-only').click();
  const id = (await page.getByTestId('certificate-id').textContent()).trim();
  assert.match(id, /^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
  assert.equal(await page.getByTestId('issue-problem').count(), 0);
  const card = page.getByTestId('certificate');
  assert.equal(await card.getAttribute('data-signed'), 'false');
  assert.match(await card.textContent(), /integrity only/i);
  const expectedPercent = Math.floor((100 * (total - WRONG_FIRST)) / total);
  assert.match(await card.textContent(), new RegExp(`${expectedPercent} %`));
  await screenshot(page, 'quiz-certificate');

  // A PNG download of the certificate.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-png').click()]);
  assert.match(download.suggestedFilename(), /^certificate-.*\.png$/);
  const png = readFileSync(await download.path());
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.length > 10_000, 'the PNG has content');
  // The PNG is the card the page shows (and prints): the same drawing, at A4 landscape.
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [1600, 1131]);
  const shown = await card.locator('[data-testid=cert-image] img').evaluate((img) => [img.naturalWidth, img.naturalHeight]);
  assert.deepEqual(shown, [1600, 1131]);
  // What was learned and the score are in its text alternative too.
  assert.match(await card.textContent(), /What was learned: what accumulation buys, effective batch size/);

  // Printing shows the certificate and hides the site chrome and the quiz.
  await page.emulateMedia({ media: 'print' });
  assert.equal(await page.locator('.site-header').isVisible(), false);
  assert.equal(await page.getByTestId('question').isVisible(), false);
  assert.equal(await page.getByTestId('certificate').isVisible(), true);
  // The print is the image alone: no share field, no buttons.
  assert.equal(await page.getByTestId('cert-image').isVisible(), true);
  assert.equal(await page.getByTestId('download-png').isVisible(), false);
  assert.equal(await page.locator('#share-link').isVisible(), false);
  await screenshot(page, 'quiz-certificate-print');
  await page.emulateMedia({ media: 'screen' });

  // The certificate survives a reload on its own page.
  await page.goto(`${app.server.url}?view=certificate`);
  assert.equal((await page.getByTestId('certificate-id').textContent()).trim(), id);
  const shareHref = await page.getByTestId('share-link').getAttribute('href');
  assert.deepEqual(errors, []);
  await context.close();

  // Someone else opens the share link in a fresh browser context.
  const other = await app.browser.newContext();
  const checker = await other.newPage();
  await checker.goto(shareHref);
  const verdict = checker.getByTestId('verify-result');
  await verdict.waitFor();
  assert.equal(await verdict.getAttribute('data-valid'), 'true');
  assert.equal(await verdict.getAttribute('data-status'), 'integrity-only');
  assert.match(await verdict.textContent(), /Ada Lovelace passed .* with \d+ % on \d{1,2} [A-Z][a-z]+ \d{4}\./);
  assert.match(await verdict.textContent(), /integrity only/i);
  assert.match(await checker.getByTestId('trust-note').textContent(), /does not prove who issued it/);
  await screenshot(checker, 'verify-valid');

  // A changed name and a mistyped ID are rejected, each with its reason.
  await checker.getByTestId('verify-name').fill('Ada Byron');
  await checker.getByTestId('verify').click();
  assert.equal(await verdict.getAttribute('data-valid'), 'false');
  assert.equal(await verdict.getAttribute('data-status'), 'invalid');
  assert.match(await verdict.textContent(), /name does not match/);
  const typo = id.slice(0, 3) + (id[3] === 'A' ? 'B' : 'A') + id.slice(4);
  await checker.getByTestId('verify-name').fill('Ada Lovelace');
  await checker.getByTestId('verify-id').fill(typo);
  await checker.getByTestId('verify').click();
  assert.match(await verdict.textContent(), /mistyped/);
  await screenshot(checker, 'verify-typo');
  await other.close();
});

test('an unreadable saved attempt is kept aside and the quiz still opens', async () => {
  const context = await app.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${app.server.url}?view=quiz`);
  await page.evaluate((version) => localStorage.setItem(`gradlab.quiz.v${version}`, '{broken'), bank.version);
  await page.reload();
  await page.getByTestId('question').waitFor();
  assert.match(await page.getByRole('status').first().textContent(), /could not be read/);
  const kept = async () =>
    JSON.parse(await page.evaluate((version) => localStorage.getItem(`gradlab.quiz.v${version}.unreadable`), bank.version));
  assert.deepEqual((await kept()).map((k) => k.data), ['{broken']);
  assert.ok((await kept())[0].found_at_ms > Date.parse('2020-01-01'), 'kept with the time it was found');
  // A reload that finds the same damage keeps it once; a second, different corruption is kept
  // beside the first instead of replacing it.
  await page.reload();
  await page.getByTestId('question').waitFor();
  assert.equal((await kept()).length, 1);
  await page.evaluate((version) => localStorage.setItem(`gradlab.quiz.v${version}`, '{"bank_version":"x"}'), bank.version);
  await page.reload();
  await page.getByTestId('question').waitFor();
  assert.deepEqual((await kept()).map((k) => k.data), ['{broken', '{"bank_version":"x"}']);
  await context.close();
});

test('progress saved under the previous quiz version is carried over after an update', async () => {
  const first = JSON.parse(readFileSync(new URL('../../assets/quiz/shipped/bank.v1.json', import.meta.url), 'utf8'));
  assert.ok(first.version < bank.version);
  const right = (q) =>
    q.kind === 'numeric'
      ? { kind: 'numeric', value: q.answer }
      : q.kind === 'single'
        ? { kind: 'single', value: q.options.findIndex((o) => o.correct) }
        : { kind: 'multiple', value: q.options.flatMap((o, i) => (o.correct ? [i] : [])) };
  const progress = Object.fromEntries(
    first.questions.map((q) => [
      q.id,
      { first_try_correct: true, tries: 1, solved: true, last_answer: right(q), first_answer: right(q) },
    ]),
  );
  const saved = JSON.stringify({ bank_version: first.version, seed: 5, current: 3, progress, attempt_id: 'old-attempt-0000001' });
  const context = await app.browser.newContext();
  // The old save is in storage before the page's first script runs (a page opened first would
  // save a new attempt of its own, at a time that depends on the machine's load).
  await context.addInitScript(([key, value]) => {
    if (!sessionStorage.getItem('seeded')) {
      localStorage.setItem(key, value);
      sessionStorage.setItem('seeded', 'yes');
    }
  }, [`gradlab.quiz.v${first.version}`, saved]);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${app.server.url}?view=quiz`);
  await page.getByTestId('question').waitFor();
  const notice = page.getByRole('status').filter({ hasText: /updated since your last visit/ });
  await notice.waitFor();
  const added = bank.questions.filter((q) => !first.questions.some((o) => o.id === q.id));
  assert.match(await notice.textContent(), new RegExp(`kept \\(${first.questions.length}\\); new questions to answer: ${added.length}`));
  assert.equal((await currentQuestion(page)).id, added[0].id, 'it opens at the first new question');
  const total = bank.questions.length;
  assert.match(await page.getByTestId('score-line').textContent(), new RegExp(`${first.questions.length} of ${total} questions answered`));
  await screenshot(page, 'quiz-carried-over');
  // Saved under the new version at once; the old save stays where it was.
  const stored = await page.evaluate((keys) => keys.map((k) => localStorage.getItem(k)), [`gradlab.quiz.v${bank.version}`, `gradlab.quiz.v${first.version}`]);
  assert.equal(JSON.parse(stored[0]).bank_version, bank.version);
  assert.notEqual(JSON.parse(stored[0]).attempt_id, 'old-attempt-0000001', 'a new attempt at the issuer');
  assert.equal(stored[1], saved);
  for (const [i, question] of added.entries()) {
    assert.equal((await currentQuestion(page)).id, question.id);
    const feedback = await answer(page, question, true);
    if (i === 0) await screenshot(page, 'quiz-token-count-question');
    assert.match(await feedback.locator('a.lab-link').getAttribute('href'), /view=gpt/, 'its link opens the tiny GPT');
    if (i + 1 < added.length) {
      await page.getByTestId('next').click();
    }
  }
  await page.getByTestId('see-result').click();
  assert.equal(await page.getByTestId('result').getAttribute('data-passed'), 'true');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a stored certificate that cannot be read is reported and kept aside', async () => {
  const context = await app.browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${app.server.url}?view=certificate`);
  const key = `gradlab.certificate.v${bank.version}`;
  await page.evaluate((key) => localStorage.setItem(key, '{"name": 7'), key);
  for (const view of ['certificate', 'quiz']) {
    await page.goto(`${app.server.url}?view=${view}`);
    await page.getByRole('main').waitFor();
    const status = page.getByText(/certificate saved in this browser could not be read/);
    await status.waitFor();
    assert.match(await status.textContent(), new RegExp(`kept under "${key}\\.unreadable"`));
  }
  await screenshot(page, 'quiz-certificate-unreadable');
  const kept = JSON.parse(await page.evaluate((key) => localStorage.getItem(`${key}.unreadable`), key));
  assert.deepEqual(kept.map((k) => k.data), ['{"name": 7']);
  assert.deepEqual(errors, []);
  await context.close();
});

/** Two tabs of one browser on the quiz, both showing a question. */
async function twoTabsOnTheQuiz() {
  const context = await app.browser.newContext();
  const a = await context.newPage();
  const b = await context.newPage();
  for (const page of [a, b]) {
    await page.goto(`${app.server.url}?view=quiz`);
    await page.getByTestId('question').waitFor();
  }
  return { context, a, b };
}

test('another tab\'s save keeps the answer being chosen here', async () => {
  const { context, a, b } = await twoTabsOnTheQuiz();
  const total = bank.questions.length;
  // A chooses an answer to the first question but has not checked it yet.
  await a.bringToFront();
  const first = await currentQuestion(a);
  await choose(a, first, true);
  // B answers the second question; A hears of it.
  await b.bringToFront();
  await b.getByTestId('next').click();
  await answer(b, await currentQuestion(b), true);
  await a.getByTestId('score-line').filter({ hasText: new RegExp(`1 of ${total} questions answered`) }).waitFor();
  // A's choice is still there: checking it grades it.
  await a.bringToFront();
  if (first.kind === 'numeric') {
    assert.equal(await a.getByTestId('numeric-answer').inputValue(), String(first.answer));
  } else {
    assert.ok(await a.locator('label.option input:checked').count() > 0, 'the choice survived');
  }
  await a.getByTestId('check').click();
  await a.getByTestId('feedback').waitFor();
  assert.equal(await a.getByTestId('feedback').getAttribute('data-correct'), 'true');
  await context.close();
});

test('two tabs answering one attempt keep each other\'s answers', async () => {
  const { context, a, b } = await twoTabsOnTheQuiz();
  const answered = (page) => page.getByTestId('score-line').textContent();
  const total = bank.questions.length;
  // A answers the first question; B, still on it, shows A's answer without a reload. (The tab
  // acted on is brought to the front: a background tab's animation frames are throttled.)
  await a.bringToFront();
  await answer(a, await currentQuestion(a), true);
  await b.getByTestId('feedback').waitFor();
  assert.match(await answered(b), new RegExp(`1 of ${total} questions answered`));
  // B moves on (a save) without erasing A's answer, then A answers everything.
  await b.bringToFront();
  await b.getByTestId('next').click();
  await a.bringToFront();
  for (let i = 1; i < total; i++) {
    await a.getByTestId('next').click();
    await answer(a, await currentQuestion(a), i % 3 !== 0);
  }
  assert.match(await answered(a), new RegExp(`${total} of ${total} questions answered`));
  // B, which has not answered since, saves again by moving on: nothing is cut back.
  await b.bringToFront();
  await b.getByTestId('next').click();
  assert.match(await answered(b), new RegExp(`${total} of ${total} questions answered`));
  const saved = JSON.parse(await b.evaluate((version) => localStorage.getItem(`gradlab.quiz.v${version}`), bank.version));
  assert.equal(Object.keys(saved.progress).length, total);
  await context.close();

  // A tab that misses the other's storage events still merges when it saves, and the answer
  // saved first stays the first answer.
  const second = await app.browser.newContext();
  const fresh = await second.newPage();
  const stale = await second.newPage();
  await fresh.goto(`${app.server.url}?view=quiz`);
  await fresh.getByTestId('question').waitFor();
  // Registered before the app's own listener, this one hides every storage event from it.
  await stale.addInitScript(() => window.addEventListener('storage', (e) => e.stopImmediatePropagation()));
  await stale.goto(`${app.server.url}?view=quiz`);
  await stale.getByTestId('question').waitFor();
  await fresh.bringToFront();
  for (let i = 0; i < 3; i++) {
    if (i > 0) await fresh.getByTestId('next').click();
    await answer(fresh, await currentQuestion(fresh), true);
  }
  assert.match(await answered(stale), new RegExp(`\\(0 of ${total} questions answered`), 'the stale tab heard nothing');
  await stale.bringToFront();
  await answer(stale, await currentQuestion(stale), false);
  assert.match(await answered(stale), new RegExp(`First-try score: 3 of 3 answered correctly \\(3 of ${total}`));
  const merged = JSON.parse(await stale.evaluate((version) => localStorage.getItem(`gradlab.quiz.v${version}`), bank.version));
  assert.equal(Object.keys(merged.progress).length, 3);
  assert.ok(Object.values(merged.progress).every((p) => p.first_try_correct));
  await second.close();
});
