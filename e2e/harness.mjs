// Shared set-up for the end-to-end tests: a static server for dist/ and Debian's Chromium.
import { createServer } from 'node:http';
import { readFile, mkdir } from 'node:fs/promises';
import { extname, join, normalize, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import { before, after } from 'node:test';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(here, '..');
export const distDir = join(repoRoot, 'dist');
export const artifactsDir = join(here, 'artifacts');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.png': 'image/png',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** Serves fixed pages (path -> HTML) on a free port of another loopback address, i.e. another origin. */
export async function servePages(pages, host = '127.0.0.2') {
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://localhost').pathname;
    const body = pages[path];
    if (body === undefined) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, host, resolve));
  const { port } = server.address();
  return { url: `http://${host}:${port}/`, origin: `http://${host}:${port}`, close: () => new Promise((r) => server.close(r)) };
}

/** The body of a request, as text. */
function bodyOf(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Serves folders under URL prefixes ({ '/': distDir, '/lms/content/': dir, ... }; the longest
 * prefix wins) and fixed pages ({ '/lms/host.html': html }) on a free localhost port. POST
 * requests go to `endpoints` ({ '/lms/commit': (url, body) => ({ status, json }) }).
 */
export async function serveTree(mounts, pages = {}, endpoints = {}) {
  const prefixes = Object.keys(mounts).sort((a, b) => b.length - a.length);
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const path = decodeURIComponent(url.pathname);
    if (req.method === 'POST') {
      const endpoint = endpoints[path];
      if (endpoint === undefined) {
        res.writeHead(404).end('not found');
        return;
      }
      const { status, json } = endpoint(url, await bodyOf(req));
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
      return;
    }
    if (pages[path] !== undefined) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(pages[path]);
      return;
    }
    const prefix = prefixes.find((p) => path.startsWith(p));
    if (prefix === undefined) {
      res.writeHead(404).end('not found');
      return;
    }
    const root = mounts[prefix];
    const rest = path.slice(prefix.length);
    const file = normalize(join(root, rest === '' || rest.endsWith('/') ? `${rest}index.html` : rest));
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(r)) };
}

/** Serves dist/ on a free localhost port; resolves to { url, close }. */
export async function serveDist() {
  return serveTree({ '/': distDir });
}

/**
 * Runs axe-core's WCAG 2.2 A/AA rules in a page or frame and fails on any violation, naming
 * the rule and the elements.
 */
export async function expectAccessible(frame, label) {
  const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
  await frame.addScriptTag({ path: axePath });
  const violations = await frame.evaluate(async () => {
    const result = await window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] },
    });
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  if (violations.length > 0) {
    throw new Error(`${label}: axe-core found ${violations.length} WCAG 2.2 AA violations:\n${violations.join('\n')}`);
  }
}

/** The Lab's presets, which the course asks a prediction for before they train. */
export const PRESETS = ['scaling', 'scaling_adam', 'norms', 'variable_length', 'pitfalls', 'memory'];

/**
 * Makes every page of `browser` start as a returning learner who dismissed the introduction and
 * chose "Just show me" for every preset (unless the page's storage already holds course
 * progress), so that tests of other things can train a preset at once; the course's own tests
 * launch without it.
 */
function withCourseSkipped(browser) {
  const progress = JSON.stringify({ predictions: {}, skipped: PRESETS, observed: [] });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    await context.addInitScript((value) => {
      try {
        if (localStorage.getItem('gradlab.course') === null) localStorage.setItem('gradlab.course', value);
        if (localStorage.getItem('gradlab.intro') === null) localStorage.setItem('gradlab.intro', 'dismissed');
      } catch {
        // A frame without storage (an opaque origin) has no course either.
      }
    }, progress);
    return context;
  };
  browser.newPage = async (options) => {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    page.on('close', () => context.close().catch(() => {}));
    return page;
  };
  return browser;
}

/**
 * Headless Debian Chromium with WebGPU exposed (SwiftShader) and no network chatter; Playwright
 * gives each launch a fresh profile. `courseSkipped`: see `withCourseSkipped`.
 */
export async function launchBrowser({ webgpu = true, courseSkipped = true } = {}) {
  const args = [
    '--no-sandbox',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  if (webgpu) args.push('--enable-unsafe-webgpu');
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args });
  return courseSkipped ? withCourseSkipped(browser) : browser;
}

export async function screenshot(page, name) {
  await mkdir(artifactsDir, { recursive: true });
  const path = join(artifactsDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Registers before/after hooks that serve dist/ and launch the browser for a test file;
 * the returned object holds `server` and `browser` once the hooks have run.
 */
export function withAppAndBrowser(browserOptions = {}) {
  const app = {};
  before(async () => {
    app.server = await serveDist();
    app.browser = await launchBrowser(browserOptions);
  });
  after(async () => {
    await app.browser?.close();
    await app.server?.close();
  });
  return app;
}
