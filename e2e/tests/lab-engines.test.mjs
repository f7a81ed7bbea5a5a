// The engines behind the Lab: the CPU fallback where WebGPU is missing, the switch to the CPU
// when the GPU device is lost mid-run, the same numbers on both and the time to the first step
// (Pause at the heaviest settings is measured on its own: serial/pause-latency.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { withAppAndBrowser, launchBrowser, screenshot } from '../harness.mjs';
import { openLab, train, results, steps, singleSteps } from '../lab-helpers.mjs';

const app = withAppAndBrowser();
let withoutWebGpu;
before(async () => {
  withoutWebGpu = await launchBrowser({ webgpu: false });
});
after(async () => {
  await withoutWebGpu?.close();
});

function close(a, b, tolerance) {
  return Math.abs(a - b) <= tolerance * Math.max(Math.abs(a), Math.abs(b), 1e-30);
}

test('without WebGPU the lab says so once and trains on the CPU with the same numbers', async () => {
  const cpuPage = await openLab(app, '?view=lab&scenario=norms', {}, withoutWebGpu);
  const badge = cpuPage.getByTestId('engine-badge');
  assert.equal(await badge.getAttribute('data-engine'), 'cpu');
  assert.match(await badge.textContent(), /CPU fallback: (this browser has no WebGPU|the browser offers no WebGPU adapter)$/);
  const notice = cpuPage.getByTestId('engine-notice');
  assert.match(await notice.textContent(), /WebGPU is not available here/);
  await singleSteps(cpuPage, 5);
  const cpu = await results(cpuPage);
  await train(cpuPage, 10);
  assert.equal(await cpuPage.getByTestId('engine-notice').count(), 1, 'said once');
  await screenshot(cpuPage, 'lab-cpu-fallback');

  const gpuPage = await openLab(app, '?view=lab&scenario=norms&engine=gpu');
  assert.equal(await gpuPage.getByTestId('engine-badge').getAttribute('data-engine'), 'webgpu');
  assert.ok(await gpuPage.getByTestId('engine-notice').isHidden());
  await singleSteps(gpuPage, 5);
  const gpu = await results(gpuPage);
  assert.equal(gpu.length, cpu.length);
  for (let i = 0; i < gpu.length; i++) {
    assert.equal(gpu[i].run, cpu[i].run);
    assert.ok(close(gpu[i].exactLoss, cpu[i].exactLoss, 1e-5), `${gpu[i].run}: ${gpu[i].exactLoss} vs ${cpu[i].exactLoss}`);
  }
  await cpuPage.close();
  await gpuPage.close();
});

test('when the GPU device is lost the lab continues on the CPU from the same step', async () => {
  const page = await openLab(app, '?view=lab&scenario=scaling&spf=2&simulate=gpu-loss&engine=gpu');
  assert.equal(await page.getByTestId('engine-badge').getAttribute('data-engine'), 'webgpu');
  await train(page, 12);
  assert.equal(await page.getByTestId('engine-badge').getAttribute('data-engine'), 'cpu');
  assert.match(await page.getByTestId('engine-notice').textContent(), /WebGPU stopped .*continues there with the same numbers/);
  const n = await steps(page);
  const lost = await results(page);
  await screenshot(page, 'lab-device-lost');
  // The same steps on the CPU engine from the start give the same table.
  const cpuPage = await openLab(app, `?view=lab&scenario=scaling&engine=cpu`);
  assert.match(await cpuPage.getByTestId('engine-badge').textContent(), /chosen in the URL/);
  await singleSteps(cpuPage, n);
  const cpu = await results(cpuPage);
  assert.deepEqual(lost.map((r) => r.loss), cpu.map((r) => r.loss));
  await page.close();
  await cpuPage.close();
});

test('time from navigation to the first trained step (reported, not asserted)', async () => {
  for (const [name, browser] of [
    ['webgpu', app.browser],
    ['cpu', withoutWebGpu],
  ]) {
    const page = await openLab(app, `?view=lab&scenario=scaling&spf=1${name === 'webgpu' ? '&engine=gpu' : ''}`, {}, browser);
    await page.getByTestId('play').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=lab]').dataset.firstStepMs);
    const ms = Number(await page.getByTestId('lab').getAttribute('data-first-step-ms'));
    console.log(`# time to first trained step (${name}): ${ms.toFixed(0)} ms after navigation`);
    assert.ok(ms > 0);
    await page.close();
  }
});

test('a run that diverges says where on both engines, never agrees, and the others go on', async () => {
  // The hostile pass's case: on WebGPU every run showed NaN, a gradient norm of 0 and "agree".
  const query = '?view=lab&scenario=sandbox&activation=gelu&lr=10&batch=256&n=256&spf=5';
  for (const [engine, q] of [['webgpu', `${query}&engine=gpu`], ['cpu', `${query}&engine=cpu`]]) {
    const page = await openLab(app, q);
    assert.equal(await page.getByTestId('engine-badge').getAttribute('data-engine'), engine);
    await singleSteps(page, 8);
    const rows = await page.getByTestId('results-table').locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        run: tr.dataset.run,
        diverged: tr.dataset.diverged === 'true',
        loss: Number(tr.dataset.loss),
        text: tr.textContent,
      })),
    );
    const unscaled = rows.find((r) => /unscaled/.test(r.run));
    assert.ok(unscaled.diverged, `${engine}: the unscaled run diverged: ${JSON.stringify(rows)}`);
    assert.match(unscaled.text, /Diverged at step \d+: a loss, gradient or parameter became NaN or infinite/);
    assert.doesNotMatch(unscaled.text, /NaN\s*$|0\.0000/, 'no NaN or zero shown as a value');
    for (const row of rows.filter((r) => !r.diverged)) {
      assert.ok(Number.isFinite(row.loss), `${engine}: ${row.run} shows a finite loss`);
      assert.doesNotMatch(row.text, /NaN|inf/);
    }
    const agreement = page.getByTestId('agreement');
    if (rows.slice(0, 2).some((r) => r.diverged)) {
      assert.equal(await agreement.getAttribute('data-agreement'), 'results-no-agreement');
      assert.doesNotMatch(await agreement.textContent(), /agree to the 6 digits/);
    }
    assert.equal(await steps(page), 8, `${engine}: the runs that did not diverge went on`);
    // The CSV carries the divergence too.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('download-csv').click(),
    ]);
    const csv = await readFile(await download.path(), 'utf8');
    const lines = csv.trim().split('\n');
    assert.ok(lines[0].endsWith(',status'));
    const unscaledRows = lines.filter((l) => l.includes('unscaled'));
    assert.ok(unscaledRows.at(-1).endsWith(',diverged'), unscaledRows.at(-1));
    assert.ok(unscaledRows.slice(0, -1).every((l) => l.endsWith(',trained')));
    await screenshot(page, `lab-diverged-${engine}`);
    assert.deepEqual(page.errors, []);
    await page.close();
  }
});

