// The planner page: a micro-batch and accumulation steps for a model and a device's memory, as
// `gradlab plan` computes them; bad input is named, nothing fitting says what would, and
// axe-core finds no WCAG 2.2 AA violation (English and Spanish, desktop and phone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { withAppAndBrowser, screenshot, expectAccessible, repoRoot } from '../harness.mjs';

const app = withAppAndBrowser();
const gradlab = join(repoRoot, 'target', 'debug', 'gradlab');

async function openPlan(query, viewport = { width: 1366, height: 900 }) {
  const page = await app.browser.newPage({ viewport });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(`${app.server.url}?view=plan${query}`);
  await page.getByTestId('plan-result').waitFor();
  return page;
}

const planned = (page) =>
  page.getByTestId('plan-result').evaluate((p) => ({
    micro: Number(p.dataset.microBatch),
    steps: Number(p.dataset.steps),
    effective: Number(p.dataset.effective),
  }));

test('the page plans what the CLI plans, and a smaller card means more accumulation steps', async () => {
  const page = await openPlan('');
  const first = await planned(page);
  const cli = JSON.parse(
    execFileSync(gradlab, ['plan', '--model', 'llama-3.1-8b', '--method', 'lora', '--lora-rank', '16', '--checkpointing', 'layer',
      '--seq-len', '2048', '--memory-gib', '24', '--target-batch', '256', '--format', 'json'], { encoding: 'utf8' }),
  );
  assert.deepEqual(first, { micro: cli.micro_batch, steps: cli.accumulation_steps, effective: cli.effective_batch });
  await expectAccessible(page, 'the planner');
  await screenshot(page, 'plan-8b-lora-24gib');

  // A smaller model on an 80 GiB card: a larger micro-batch, fewer steps, the same effective batch.
  await page.getByTestId('plan-model').selectOption({ label: 'GPT-2 (124M)' });
  await page.getByTestId('plan-method').selectOption({ label: 'full fine-tuning' });
  await page.getByTestId('plan-seq-len').fill('1024');
  await page.getByTestId('plan-memory-preset').selectOption('80');
  await page.waitForFunction(() => document.querySelector('[data-testid=plan-result]')?.dataset.microBatch !== '1');
  const roomy = await planned(page);
  await page.getByTestId('plan-memory-preset').selectOption('8');
  await page.waitForFunction((m) => document.querySelector('[data-testid=plan-result]')?.dataset.microBatch !== String(m), roomy.micro);
  const tight = await planned(page);
  assert.ok(tight.micro < roomy.micro && tight.steps > roomy.steps, `${JSON.stringify(roomy)} -> ${JSON.stringify(tight)}`);
  assert.ok(tight.effective >= 256 && roomy.effective >= 256);
  assert.match(await page.getByTestId('plan-hf').textContent(), new RegExp(`"gradient_accumulation_steps": ${tight.steps}`));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('bad input names its field, nothing fitting says what would, in Spanish on a phone too', async () => {
  const page = await openPlan('&lang=es', { width: 390, height: 844 });
  await page.getByTestId('plan-memory').fill('0');
  await page.getByTestId('plan-error').waitFor();
  assert.equal(await page.getByTestId('plan-error').getAttribute('data-field'), 'memory');
  await page.getByTestId('plan-memory').fill('24');
  await page.getByTestId('plan-seq-len').fill('-5');
  assert.equal(await page.getByTestId('plan-error').getAttribute('data-field'), 'seq_len');
  await page.getByTestId('plan-seq-len').fill('2048');
  await page.getByTestId('plan-method').selectOption({ label: 'ajuste fino completo' });
  await page.getByTestId('plan-checkpointing').uncheck();
  await page.getByTestId('plan-nothing-fits').waitFor();
  assert.match(await page.getByTestId('plan-nothing-fits').textContent(), /No cabe nada/);
  assert.match(await page.getByTestId('plan-together').textContent(), /recomputación de activaciones \+ QLoRA/);
  assert.equal(await page.getByTestId('plan-bar').getAttribute('data-fits'), 'false');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
  await expectAccessible(page, 'the planner in Spanish at 390 px');
  await screenshot(page, 'plan-es-phone-nothing-fits');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the Lab's own network is planned exactly on the engine chosen, and custom dimensions count as the model", async () => {
  const page = await openPlan('');
  await page.getByTestId('plan-model').selectOption({ label: "The Lab's MLP (2-64-64-3)" });
  await page.getByTestId('plan-lab-note').waitFor();
  assert.equal(await page.getByTestId('plan-memory').inputValue(), '128 KiB');
  assert.equal(await page.getByTestId('plan-method').isVisible(), false, 'the engines fix the method');
  const cli = (engine) =>
    JSON.parse(
      execFileSync(gradlab, ['plan', '--model', 'lab-mlp', '--engine', engine, '--optimizer', 'sgd-plain', '--seq-len', '1',
        '--memory-kib', '128', '--target-batch', '256', '--format', 'json'], { encoding: 'utf8' }),
    );
  const webgpu = cli('webgpu');
  assert.deepEqual(await planned(page), { micro: webgpu.micro_batch, steps: webgpu.accumulation_steps, effective: webgpu.effective_batch });
  assert.match(await page.getByTestId('plan-total').textContent(), new RegExp(`\\(${webgpu.memory_bytes.total} B\\) of 128\\.0 KiB`));
  await page.getByTestId('plan-engine').selectOption({ label: 'CPU (WebAssembly)' });
  const cpu = cli('cpu');
  await page.waitForFunction((s) => document.querySelector('[data-testid=plan-result]')?.dataset.steps === String(s), cpu.accumulation_steps);
  assert.ok(cpu.accumulation_steps > webgpu.accumulation_steps, 'the CPU engine holds more per micro-batch here');
  await expectAccessible(page, "the planner on the Lab's network");
  await screenshot(page, 'plan-lab-mlp');

  // Custom dimensions start as GPT-2's and count its 124,439,808 parameters.
  await page.getByTestId('plan-model').selectOption({ label: 'custom dimensions' });
  await page.getByTestId('plan-custom').waitFor();
  await page.getByTestId('plan-seq-len').waitFor();
  assert.equal(await page.getByTestId('plan-seq-len').inputValue(), '2048', 'a language model again');
  await page.getByTestId('plan-seq-len').fill('1024');
  await page.getByTestId('plan-result').waitFor();
  assert.match(await page.locator('.plan-result').textContent(), /124,439,808 parameters/);
  await page.getByTestId('plan-heads').fill('7');
  await page.getByTestId('plan-error').waitFor();
  assert.equal(await page.getByTestId('plan-error').getAttribute('data-field'), 'heads');
  await expectAccessible(page, 'the planner with custom dimensions');
  assert.deepEqual(page.errors, []);
  await page.close();
});
