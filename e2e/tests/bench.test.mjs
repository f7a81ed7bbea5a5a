// The benchmark page: the canonical workload on the CPU engine (wasm) and on WebGPU, with the
// figures as JSON in #bench-result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withAppAndBrowser, artifactsDir } from '../harness.mjs';

const app = withAppAndBrowser();

test('the bench page measures CPU and WebGPU engines', { timeout: 240_000 }, async () => {
  const page = await app.browser.newPage();
  await page.goto(`${app.server.url}?view=bench`);
  const result = page.locator('#bench-result[data-done="true"]');
  await result.waitFor({ timeout: 220_000 });
  const report = JSON.parse(await result.textContent());
  await mkdir(artifactsDir, { recursive: true });
  await writeFile(join(artifactsDir, 'bench.json'), JSON.stringify(report, null, 2));
  console.log(JSON.stringify(report, null, 2));
  assert.equal(report.gpu_error, null, `WebGPU ran: ${report.gpu_error}`);
  const engines = new Set(report.figures.map((f) => f.engine));
  assert.ok(engines.has('cpu-wasm-f32') && engines.has('webgpu-f32'));
  assert.equal(report.figures.length, 6);
  for (const f of report.figures) assert.ok(f.steps_per_second > 0, JSON.stringify(f));
});
