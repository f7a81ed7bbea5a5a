// The race between the engines: WebGPU on a software adapter against the CPU engine, measured
// in wall-clock time on the same steps. A race is a measurement, so this file runs on its own
// after the other files: run beside another browser (two files at a time on 2 cores) the
// outcome depends on what that browser does, not on the engines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withAppAndBrowser } from '../harness.mjs';
import { openLab, pause, train, results, steps, singleSteps } from '../lab-helpers.mjs';

const app = withAppAndBrowser();

test('the Lab trains on the faster engine: SwiftShader loses to the CPU engine, which takes over at the same step', async () => {
  // The hostile pass's case: WebGPU on a software adapter trained 13 times slower than the CPU.
  const page = await openLab(app, '?view=lab&scenario=norms&spf=5');
  const badge = page.getByTestId('engine-badge');
  assert.equal(await badge.getAttribute('data-engine'), 'webgpu', 'WebGPU trains first');
  // Until the race is decided the badge says what it does, not an adapter that may not stay.
  assert.equal(await badge.getAttribute('data-choosing'), 'true');
  assert.match(await badge.textContent(), /choosing the faster engine/);
  const started = Date.now();
  await page.getByTestId('play').click();
  // The race is decided when the badge stops choosing; on a loaded machine SwiftShader's first
  // pipelines alone can take many seconds, so the bound is generous (it only catches a hang).
  await page
    .waitForFunction(() => document.querySelector('[data-testid=engine-badge]').dataset.choosing === 'false', null, {
      timeout: 90_000,
    })
    .catch(async (error) => {
      throw new Error(`the race was not decided: badge "${await badge.textContent()}" (${error.message})`);
    });
  assert.equal(await badge.getAttribute('data-engine'), 'cpu', `the CPU engine wins: ${await badge.textContent()}`);
  console.log(`# engine chosen ${Date.now() - started} ms after Play: ${await badge.textContent()}`);
  assert.match(await badge.textContent(), /CPU engine: \d+\.\d× faster than WebGPU on this machine/);
  assert.equal(await badge.getAttribute('data-choosing'), 'false');
  await pause(page);
  // Same experiment, same step: the table is what the CPU engine alone gives after as many steps.
  const n = await steps(page);
  const chosen = await results(page);
  const cpuPage = await openLab(app, '?view=lab&scenario=norms&engine=cpu');
  await singleSteps(cpuPage, n);
  assert.deepEqual(chosen.map((r) => r.loss), (await results(cpuPage)).map((r) => r.loss));
  await cpuPage.close();
  // engine=gpu keeps WebGPU however slow.
  const forced = await openLab(app, '?view=lab&scenario=norms&spf=5&engine=gpu');
  await train(forced, 25);
  assert.equal(await forced.getByTestId('engine-badge').getAttribute('data-engine'), 'webgpu');
  await forced.close();
  await page.close();
});
