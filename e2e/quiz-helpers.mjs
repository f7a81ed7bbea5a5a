// Helpers of the quiz tests: the bundled bank, the question on screen, and answering it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './harness.mjs';

export const bank = JSON.parse(readFileSync(join(repoRoot, 'assets', 'quiz', 'bank.json'), 'utf8'));


export async function currentQuestion(page) {
  const id = await page.getByTestId('question').getAttribute('data-question-id');
  return bank.questions.find((q) => q.id === id);
}

/**
 * Gives an answer to the question on screen without checking it. `dispatch` clicks by
 * dispatching the event on the element, for pages inside an iframe whose host keeps resizing it
 * (pointer clicks can miss there).
 */
export async function choose(page, question, right, { dispatch = false } = {}) {
  const click = (locator) => (dispatch ? locator.dispatchEvent('click') : locator.click());
  if (question.kind === 'numeric') {
    await page.getByTestId('numeric-answer').fill(String(right ? question.answer : question.answer + 7));
  } else {
    const chosen = question.options.filter((o) => o.correct === right);
    const picks = question.kind === 'multiple' && right ? chosen : chosen.slice(0, 1);
    for (const option of picks) {
      await click(page.locator('label.option', { hasText: option.text }));
    }
  }
}

/** Answers the question on screen and checks it: the feedback grades it as `right` says. */
export async function answer(page, question, right, { dispatch = false } = {}) {
  await choose(page, question, right, { dispatch });
  await (dispatch ? page.getByTestId('check').dispatchEvent('click') : page.getByTestId('check').click());
  const feedback = page.getByTestId('feedback');
  await feedback.waitFor();
  assert.equal(await feedback.getAttribute('data-correct'), String(right), `${question.id}: graded as expected`);
  return feedback;
}


/** Answers every question (the first `wrongFirst` wrong at the first try) and opens the result. */
export async function passTheQuiz(page, wrongFirst = 1) {
  await page.getByTestId('question').waitFor();
  const total = bank.questions.length;
  for (let i = 0; i < total; i++) {
    const question = await currentQuestion(page);
    if (i < wrongFirst) {
      await answer(page, question, false);
      await page.getByTestId('try-again').click();
    }
    await answer(page, question, true);
    if (i + 1 < total) await page.getByTestId('next').click();
  }
  await page.getByTestId('see-result').click();
  assert.equal(await page.getByTestId('result').getAttribute('data-passed'), 'true');
  return Math.floor((100 * (total - wrongFirst)) / total);
}

