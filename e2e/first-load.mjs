// What a learner's first visit to the Lab costs: the bytes sent (gzip, as a real server sends
// them) and when Play becomes usable, on loopback and on Chromium's emulated 4G and Fast 3G
// links. A measurement printed for the closing note, not a test (timings are not asserted).
// Usage: node first-load.mjs [distDir] [rounds]
import { createServer } from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { gzipSync } from 'node:zlib';
import { distDir, launchBrowser } from './harness.mjs';

const root = normalize(process.argv[2] || distDir);
const rounds = Math.max(1, Math.floor(Number(process.argv[3] ?? 3)) || 1);
const PROFILES = [
  { name: 'loopback', conditions: null },
  { name: '4G (9 Mbit/s, 60 ms)', conditions: { latency: 60, downloadThroughput: 9e6 / 8, uploadThroughput: 1.5e6 / 8 } },
  { name: 'Fast 3G (1.6 Mbit/s, 150 ms)', conditions: { latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 0.75e6 / 8 } },
];
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** Every file of dist/, gzipped once (level 9) where it compresses. */
async function compressedTree(dir) {
  const files = new Map();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const body = await readFile(path);
    const type = TYPES[extname(path)] ?? 'application/octet-stream';
    const gzip = type === 'image/png' ? null : gzipSync(body, { level: 9 });
    files.set(`/${path.slice(dir.length).replace(/^\/+/, '')}`, { body, gzip, type });
  }
  return files;
}

const files = await compressedTree(root);
const server = createServer((req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  const file = files.get(path === '/' ? '/index.html' : path);
  if (!file) {
    res.writeHead(404).end();
    return;
  }
  const gzip = file.gzip && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
  res.writeHead(200, { 'content-type': file.type, ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
  res.end(gzip ? file.gzip : file.body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/?view=lab&scenario=scaling`;

const browser = await launchBrowser();
for (const profile of PROFILES) {
  const times = [];
  let bytes = new Map();
  for (let round = 0; round < rounds; round++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    // When Play is first enabled, by the page's clock (from the navigation's start).
    await page.addInitScript(() => {
      const check = () => {
        const play = document.querySelector('[data-testid=play]');
        if (play && !play.disabled && window.playUsableAt === undefined) window.playUsableAt = performance.now();
      };
      new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true });
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    if (profile.conditions) {
      await cdp.send('Network.emulateNetworkConditions', { offline: false, ...profile.conditions });
    }
    const urls = new Map();
    const received = new Map();
    cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, new URL(e.request.url).pathname));
    cdp.on('Network.loadingFinished', (e) => {
      const path = urls.get(e.requestId) ?? '?';
      received.set(path, (received.get(path) ?? 0) + e.encodedDataLength);
    });
    await page.goto(url);
    await page.waitForFunction(() => window.playUsableAt !== undefined, null, { timeout: 120_000 });
    times.push(await page.evaluate(() => window.playUsableAt));
    bytes = new Map(received);
    await context.close();
  }
  times.sort((a, b) => a - b);
  const total = [...bytes.values()].reduce((a, b) => a + b, 0);
  console.log(`${profile.name}: Play usable after ${times.map((t) => (t / 1000).toFixed(2)).join(' / ')} s (median ${(times[Math.floor(times.length / 2)] / 1000).toFixed(2)} s); ${(total / 1000).toFixed(1)} kB received by then`);
  for (const [path, n] of [...bytes.entries()].sort((a, b) => b[1] - a[1])) {
    console.log(`    ${(n / 1000).toFixed(1).padStart(8)} kB  ${path}`);
  }
}
await browser.close();
server.close();
