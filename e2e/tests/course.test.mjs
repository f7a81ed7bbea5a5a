// The presets as a course: predict, then observe (the answer revealed with the number the
// learner's own run measured), the progress strip and the way on to the next experiment, the
// closing summary and the quiz; progress survives a reload and unreadable progress is kept aside.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser, screenshot, expectAccessible, PRESETS } from '../harness.mjs';
import { openLab, train } from '../lab-helpers.mjs';

// A learner new to the course: no progress saved.
const app = withAppAndBrowser({ courseSkipped: false });

// Phrases of each experiment's answer: none may be on the page before the learner predicts.
const GIVEAWAYS = {
  scaling: ['too large', '4 times', 'oscillat'],
  scaling_adam: ['cancel', 'stays close'],
  norms: ['differ', 'gives the full-batch gradient'],
  variable_length: ['weighs', 'every token the same weight', 'matches'],
  pitfalls: ['pile up', 'grow'],
  memory: ['a quarter', 'falls with', 'KiB'],
};

/** The page's text outside the prediction's own question and choices. */
const textOutsideQuestion = (page) =>
  page.evaluate(() => {
    const question = document.querySelector('[data-testid=prediction]')?.innerText ?? '';
    return document.body.innerText.replace(question, '');
  });

test('a first visit says what accumulation is and starts the course; the introduction, once dismissed, stays away', async () => {
  const page = await openLab(app, '?view=lab&scenario=memory&engine=cpu', { until: 'prediction', viewport: { width: 1366, height: 900 } });
  const intro = page.getByTestId('intro');
  assert.match(await intro.textContent(), /adds up the gradients of several small micro-batches before one optimizer step/);
  await expectAccessible(page, 'the first visit');
  await page.getByTestId('intro-start').click();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('scenario') === 'scaling');
  assert.equal(await page.getByTestId('course-position').textContent(), 'Experiment 1 of 6');
  assert.equal(await intro.count(), 0);
  await page.reload();
  await page.getByTestId('predict-lock').waitFor();
  assert.equal(await page.getByTestId('intro').count(), 0, 'dismissed for good');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('before predicting, no experiment gives its answer away, and Play waits for a prediction or "Just show me"', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling&engine=cpu', { until: 'prediction', viewport: { width: 1366, height: 900 } });
  for (const id of PRESETS) {
    await page.locator(`[data-course-step=${id}]`).click();
    await page.waitForFunction((want) => new URL(location.href).searchParams.get('scenario') === want, id);
    await page.getByTestId('predict-lock').waitFor();
    assert.equal(await page.getByTestId('explanation').getAttribute('data-answer-open'), 'false', id);
    const text = (await textOutsideQuestion(page)).toLowerCase();
    for (const phrase of GIVEAWAYS[id]) {
      assert.ok(!text.includes(phrase.toLowerCase()), `${id}: "${phrase}" is on the page before the prediction`);
    }
    assert.ok(await page.getByTestId('play').isDisabled(), `${id}: Play waits for the prediction`);
    assert.ok(await page.getByTestId('step').isDisabled(), `${id}: so does Step`);
    assert.ok(await page.getByTestId('play-gate').isVisible(), `${id}: and says why`);
  }
  await expectAccessible(page, 'a preset before the prediction');
  await screenshot(page, 'course-before-prediction');
  // "Just show me": the explanation and the notice appear, Play opens, and the ✓ follows 30 steps.
  await page.getByTestId('predict-skip').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false);
  assert.equal(await page.getByTestId('explanation').getAttribute('data-answer-open'), 'true');
  assert.match(await page.getByTestId('what-to-notice').textContent(), /the memory falls with N/);
  assert.ok(!(await page.getByTestId('play-gate').isVisible()));
  assert.match(await page.getByTestId('predict-skipped').textContent(), /without predicting/);
  await train(page, 30);
  await page.getByTestId('predict-verdict').waitFor();
  assert.match(await page.getByTestId('predict-verdict').textContent(), /The answer: a quarter\./);
  assert.match(await page.locator('[data-course-step=memory]').textContent(), /^6✓/);
  const saved = JSON.parse(await page.evaluate(() => localStorage.getItem('gradlab.course')));
  assert.deepEqual(saved.skipped, ['memory']);
  assert.deepEqual(saved.predictions, {}, 'a skip is not a prediction');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('scaling: predict, train, see the answer measured in the run, go on to the next experiment', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling&engine=cpu', { until: 'prediction', viewport: { width: 1280, height: 1000 } });
  assert.equal(await page.getByTestId('course-position').textContent(), 'Experiment 1 of 6');
  assert.match(await page.getByTestId('prediction').textContent(), /Its gradient will be … the full batch's/);
  assert.ok(await page.getByTestId('predict-lock').isDisabled(), 'nothing chosen yet');
  await page.getByLabel('the same as').check();
  await page.getByTestId('predict-lock').click();
  assert.match(await page.getByTestId('predict-locked').textContent(), /Your prediction: the same as/);
  assert.equal(await page.getByTestId('predict-locked').getAttribute('data-after-watching'), 'false');
  assert.match(await page.getByTestId('predict-wait').textContent(), /Train 30 steps/);
  // The explanation with its answer shows once the prediction is locked.
  assert.match(await page.getByTestId('explanation').textContent(), /4 times too large/);
  await page.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false);
  await expectAccessible(page, 'prediction locked in');
  await train(page, 30);
  await page.getByTestId('predict-verdict').waitFor();
  assert.equal(await page.getByTestId('predict-verdict').getAttribute('data-correct'), 'false');
  assert.match(await page.getByTestId('predict-verdict').textContent(), /Not quite: the answer is 4 times\./);
  const measured = await page.getByTestId('predict-measured').textContent();
  const ratio = Number(measured.match(/unscaled gradient at ([\d.]+) times/)?.[1]);
  assert.ok(Math.abs(ratio - 4) < 0.01, measured);
  await screenshot(page, 'course-scaling-revealed');
  await page.getByTestId('course-next').click();
  assert.match(await page.getByTestId('scenario-title').textContent(), /Adam/);
  assert.equal(await page.getByTestId('course-position').textContent(), 'Experiment 2 of 6');
  assert.equal(await page.getByTestId('predict-lock').isVisible(), true, 'a new question');
  assert.ok(await page.getByTestId('play').isDisabled(), 'Play waits for the new prediction');
  // The next experiment is not observed by the steps the last one trained.
  assert.equal(await page.locator('[data-course-step=scaling_adam]').textContent(), '2' + 'The same with Adam');
  // A step is a real link too (opened in a new tab, it names the Lab's document and the preset).
  assert.equal(await page.locator('[data-course-step=scaling_adam]').getAttribute('href'),
    'index.html?view=lab&scenario=scaling_adam');
  // Progress is kept apart from the URL: a reload shows what was observed and predicted.
  await page.goto(`${app.server.url}?view=lab&scenario=scaling&engine=cpu`);
  await page.getByTestId('predict-verdict').waitFor();
  assert.match(await page.locator('[data-course-step=scaling]').textContent(), /^1✓/);
  assert.match(await page.getByTestId('predict-locked').textContent(), /Your prediction: the same as/);
  // The quiz opens at its question on the same topic.
  await page.getByTestId('predict-quiz').click();
  await page.getByTestId('question').waitFor();
  assert.match(page.url(), /[?&]view=quiz&question=unscaled-sgd/);
  assert.equal(await page.getByTestId('question').getAttribute('data-question-id'), 'unscaled-sgd');
  assert.match(await page.getByTestId('question-prompt').textContent(), /forget to divide the loss by 4/);
  // A link to a question the quiz does not have opens the quiz where the learner left it, and says so.
  await page.goto(`${app.server.url}?view=quiz&question=no-such-question`);
  await page.getByTestId('question').waitFor();
  assert.match(await page.locator('.quiz .message').textContent(), /The quiz has no question "\u2068no-such-question\u2069"; it opens where you left it\./);
  assert.equal(await page.getByTestId('question').getAttribute('data-question-id'), 'unscaled-sgd', 'where the learner left it');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the last experiment closes with a summary and the quiz; unreadable progress is kept aside', async () => {
  const page = await openLab(app, '?view=lab&scenario=memory&engine=cpu', { until: 'prediction', viewport: { width: 1280, height: 1000 } });
  await page.evaluate(() => localStorage.setItem('gradlab.course', '{"predictions":{"scaling":99}}'));
  await page.reload();
  await page.getByTestId('predict-lock').waitFor();
  assert.match(await page.getByTestId('course').textContent(), /could not be read; it is kept aside under gradlab\.course\.unreadable/);
  const kept = await page.evaluate(() => localStorage.getItem('gradlab.course.unreadable'));
  assert.match(kept, /scaling\\":99/);
  await page.getByLabel('a quarter').check();
  await page.getByTestId('predict-lock').click();
  await train(page, 30);
  await page.getByTestId('course-summary').waitFor();
  assert.equal(await page.getByTestId('predict-verdict').getAttribute('data-correct'), 'true');
  assert.match(await page.getByTestId('predict-measured').textContent(), /for 4 micro-batches against .* for the full batch, 0\.2\d of it/);
  assert.equal(await page.getByTestId('course-summary').getByRole('link', { name: 'Take the quiz' }).getAttribute('href'), 'pages.html?view=quiz');
  assert.equal(await page.getByTestId('course-plan').getAttribute('href'), 'pages.html?view=plan');
  assert.equal(await page.getByTestId('course-summary').locator('h4').textContent(), 'The end of the course (1 of 6 experiments observed)');
  await expectAccessible(page, 'course summary');
  await screenshot(page, 'course-summary');
  assert.deepEqual(page.errors, []);
  await page.close();
});
