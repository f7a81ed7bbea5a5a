// The benchmark page: the canonical workload and the tiny GPT's on the CPU engine (wasm) and on
// WebGPU, with the figures as JSON in #bench-result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withAppAndBrowser, artifactsDir, expectAccessible } from '../harness.mjs';

const app = withAppAndBrowser();

test('the bench page measures CPU and WebGPU engines, the MLP and the tiny GPT', { timeout: 300_000 }, async () => {
  const page = await app.browser.newPage();
  await page.goto(`${app.server.url}?view=bench`);
  const result = page.locator('#bench-result[data-done="true"]');
  await result.waitFor({ timeout: 280_000 });
  const report = JSON.parse(await result.textContent());
  // Every page is checked with axe-core; this one with its figures shown.
  await expectAccessible(page, 'bench page with its figures');
  await mkdir(artifactsDir, { recursive: true });
  await writeFile(join(artifactsDir, 'bench.json'), JSON.stringify(report, null, 2));
  console.log(JSON.stringify(report, null, 2));
  assert.equal(report.gpu_error, null, `WebGPU ran: ${report.gpu_error}`);
  const engines = new Set(report.figures.map((f) => f.engine));
  assert.ok(engines.has('cpu-wasm-f32') && engines.has('webgpu-f32'));
  assert.equal(report.figures.length, 6);
  for (const f of report.figures) assert.ok(f.steps_per_second > 0, JSON.stringify(f));
  // Fused kernels: the dispatches of one canonical training step, as the native test holds them.
  for (const f of report.figures.filter((f) => f.engine === 'webgpu-f32')) {
    assert.equal(f.dispatches_per_step, f.regime === 'full 256' ? 6 : 15, JSON.stringify(f));
  }
  // The engine the Lab would choose, by its race's rule, for each regime: the faster one.
  assert.equal(report.lab_would_choose.length, 2);
  for (const choice of report.lab_would_choose) {
    const ms = (engine) => report.figures.find((f) => f.regime === choice.regime && f.engine === engine
      && f.readback !== 'loss read back every step').ms_per_step;
    const [cpu, gpu] = [ms('cpu-wasm-f32'), ms('webgpu-f32')];
    const expected = gpu / cpu >= 1.2 ? 'cpu-wasm-f32' : 'webgpu-f32';
    assert.equal(choice.engine, expected, JSON.stringify({ choice, cpu, gpu }));
    const times = expected === 'cpu-wasm-f32' ? gpu / cpu : cpu / gpu;
    assert.ok(Math.abs(choice.times - times) < 1e-9 * times, JSON.stringify({ choice, times }));
  }
  // The tiny GPT's workload in tokens per second, each case on both engines (the CLI's
  // `gradlab bench` prints the native figures of the same cases).
  const gpt = report.tiny_gpt;
  assert.deepEqual(gpt.errors, []);
  assert.match(gpt.workload, /2 layers x 64, 4 heads, context 64; Shakespeare, batch 32/);
  for (const engine of ['cpu-wasm-f32', 'webgpu-f32']) {
    const cases = gpt.figures.filter((f) => f.engine === engine).map((f) => `${f.examples} ${f.regime}`);
    assert.deepEqual(cases, ['blocks full batch', 'blocks 8 x 4', 'lines full batch', 'lines 8 x 4'], engine);
  }
  for (const f of gpt.figures) assert.ok(f.tokens_per_second > 0 && f.steps >= 1, JSON.stringify(f));
});
