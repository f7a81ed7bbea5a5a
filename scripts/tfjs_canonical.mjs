/**
 * TensorFlow.js (wasm backend, 1 thread) on the canonical workload, for side-by-side figures with `gradlab bench`.
 *
 * Not part of the project's build or tests: install TF.js outside the repository and run it by hand,
 *   npm i --prefix /tmp/tfjs -E @tensorflow/tfjs@4.22.0 @tensorflow/tfjs-backend-wasm@4.22.0
 *   node scripts/tfjs_canonical.mjs --tfjs /tmp/tfjs/node_modules [--seconds 2]
 * (the e2e dependencies installed, `npm ci --prefix e2e`) right before or after `gradlab bench`
 * and the bench page on the same (idle) machine, and compare ratios. It runs TF.js in headless
 * Chromium, the browser the bench page runs in, through the e2e harness (e2e/harness.mjs).
 *
 * Workload as in crates/cli/src/bench.rs: 3-class spiral, 300 points per class, MLP 2-64-64-3 ReLU,
 * float32, SGD lr 0.1, B = 256 as one full batch and as 4 micro-batches of 64 with loss / 4,
 * training only (forward, backward, gradients summed over the micro-batches, optimizer step),
 * one thread; each variant is timed for a fixed time after 5 warm-up steps.
 */

import { mkdtemp, copyFile, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { launchBrowser, serveTree } from '../e2e/harness.mjs';

/** The files the page loads, from the node_modules folder given: [package dist path, name served]. */
const FILES = [
  ['@tensorflow/tfjs/dist/tf.min.js', 'tf.min.js'],
  ['@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.min.js', 'tf-backend-wasm.min.js'],
  ['@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm', 'tfjs-backend-wasm.wasm'],
  ['@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm', 'tfjs-backend-wasm-simd.wasm'],
  ['@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm', 'tfjs-backend-wasm-threaded-simd.wasm'],
];

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><link rel="icon" href="data:,"><title>tfjs canonical</title></head>
<body>
<script src="tf.min.js"></script>
<script src="tf-backend-wasm.min.js"></script>
</body>
</html>
`;

/** Forces the wasm backend with 1 thread; runs in the page. */
async function setUp() {
  const tf = window.tf;
  tf.wasm.setWasmPaths(new URL('./', location.href).href);
  tf.wasm.setThreadsCount(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('the wasm backend did not initialize');
  await tf.ready();
  return {
    tfjs: tf.version.tfjs,
    backend: tf.getBackend(),
    threads: tf.wasm.getThreadsCount(),
    simd: await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'),
    multithread: await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT'),
  };
}

/** Trains one variant for a fixed time and returns { steps, seconds }; runs in the page. */
async function timeSteps({ microBatches, seconds }) {
  const tf = window.tf;

  // Deterministic inputs (mulberry32, Box-Muller): the figures do not depend on the values.
  function rng(seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  function randn(next) {
    return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  }
  function spiral(pointsPerClass, classes, next) {
    const inputs = [];
    const labels = [];
    for (let c = 0; c < classes; c++) {
      for (let i = 0; i < pointsPerClass; i++) {
        const r = i / (pointsPerClass - 1);
        const t = c * 4 + (4 * i) / (pointsPerClass - 1) + 0.2 * randn(next);
        inputs.push([r * Math.sin(t), r * Math.cos(t)]);
        labels.push(c);
      }
    }
    return { inputs, labels };
  }
  function randperm(n, next) {
    const index = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [index[i], index[j]] = [index[j], index[i]];
    }
    return index;
  }

  const { inputs, labels } = spiral(300, 3, rng(1));
  const batch = 256;
  const size = batch / microBatches;
  // Batches (and their micro-batches) prepared up front, as the Rust bench prepares its own:
  // timing measures training.
  const batches = [];
  for (let b = 0; b < 8; b++) {
    const index = randperm(inputs.length, rng(100 + b)).slice(0, batch);
    const micro = [];
    for (let k = 0; k < microBatches; k++) {
      const rows = index.slice(k * size, (k + 1) * size);
      micro.push([
        tf.tensor2d(rows.map((i) => inputs[i]), [size, 2], 'float32'),
        tf.tidy(() => tf.oneHot(tf.tensor1d(rows.map((i) => labels[i]), 'int32'), 3).toFloat()),
      ]);
    }
    batches.push(micro);
  }

  // torch.nn.Linear's initialisation: weights and biases uniform in +-1/sqrt(fan_in).
  let seed = 0;
  function linear(fanIn, fanOut) {
    const bound = 1 / Math.sqrt(fanIn);
    return [[fanIn, fanOut], [fanOut]].map((shape) => {
      const init = tf.randomUniform(shape, -bound, bound, 'float32', seed++);
      const variable = tf.variable(init);
      init.dispose();
      return variable;
    });
  }
  const [w1, b1] = linear(2, 64);
  const [w2, b2] = linear(64, 64);
  const [w3, b3] = linear(64, 3);
  const optimizer = tf.train.sgd(0.1);

  function model(x) {
    const h1 = tf.fused.matMul({ a: x, b: w1, bias: b1, activation: 'relu' });
    const h2 = tf.fused.matMul({ a: h1, b: w2, bias: b2, activation: 'relu' });
    return tf.fused.matMul({ a: h2, b: w3, bias: b3 });
  }

  function step(s) {
    const micro = batches[s % batches.length];
    tf.tidy(() => {
      let sum = null;
      for (const [x, y] of micro) {
        const { grads } = tf.variableGrads(() =>
          tf.losses.softmaxCrossEntropy(y, model(x)).div(microBatches),
        );
        sum = sum === null ? grads : Object.fromEntries(Object.keys(sum).map((n) => [n, sum[n].add(grads[n])]));
      }
      optimizer.applyGradients(sum);
    });
  }

  for (let s = 0; s < 5; s++) step(s);
  await b3.data();
  const tensors = tf.memory().numTensors;
  const budget = seconds * 1000;
  let steps = 0;
  const start = performance.now();
  while (performance.now() - start < budget) {
    step(steps);
    steps += 1;
  }
  await b3.data(); // the last step's update is really done
  const elapsed = (performance.now() - start) / 1000;
  const leaked = tf.memory().numTensors - tensors;

  optimizer.dispose();
  for (const v of [w1, b1, w2, b2, w3, b3]) v.dispose();
  for (const micro of batches) for (const pair of micro) tf.dispose(pair);
  if (leaked !== 0) throw new Error(`${leaked} tensors leaked over ${steps} steps`);
  return { steps, seconds: elapsed };
}

async function main() {
  const { values } = parseArgs({
    options: {
      tfjs: { type: 'string' },
      seconds: { type: 'string', default: '2' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || values.tfjs === undefined) {
    console.log('usage: node scripts/tfjs_canonical.mjs --tfjs NODE_MODULES [--seconds 2]');
    process.exit(values.help ? 0 : 2);
  }
  const seconds = Number(values.seconds);
  if (!(seconds > 0)) throw new Error(`--seconds must be a positive number, not ${values.seconds}`);

  const folder = await mkdtemp(join(tmpdir(), 'tfjs-canonical-'));
  let server;
  let browser;
  try {
    const modules = resolve(values.tfjs);
    for (const [from, to] of FILES) await copyFile(join(modules, from), join(folder, to));
    await writeFile(join(folder, 'index.html'), PAGE);
    server = await serveTree({ '/': folder });
    browser = await launchBrowser({ webgpu: false, courseSkipped: false });
    const page = await browser.newPage();
    page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
    await page.goto(server.url);
    await page.waitForFunction(() => window.tf?.wasm !== undefined);

    const env = await page.evaluate(setUp);
    console.log(
      `tfjs ${env.tfjs}, backend ${env.backend}, ${env.threads} thread, SIMD ${env.simd ? 'yes' : 'no'}` +
        ` (multithread support ${env.multithread ? 'yes' : 'no'}), Chromium ${browser.version()}`,
    );
    console.log(
      `${'engine'.padEnd(10)} ${'regime'.padEnd(14)} ${'work per step'.padEnd(24)} ` +
        `${'steps/s'.padStart(10)} ${'ms/step'.padStart(10)}`,
    );
    for (const [microBatches, regime] of [[1, 'full 256'], [4, '4 x 64']]) {
      const timed = await page.evaluate(timeSteps, { microBatches, seconds });
      console.log(
        `${'tfjs-wasm'.padEnd(10)} ${regime.padEnd(14)} ${'training only'.padEnd(24)} ` +
          `${(timed.steps / timed.seconds).toFixed(1).padStart(10)} ` +
          `${((1000 * timed.seconds) / timed.steps).toFixed(3).padStart(10)}`,
      );
    }
  } finally {
    await browser?.close();
    await server?.close();
    await rm(folder, { recursive: true, force: true });
  }
}

await main();
