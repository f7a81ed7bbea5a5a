// Shared set-up for the end-to-end tests: a static server for dist/ and Debian's Chromium.
import { createServer } from 'node:http';
import { readFile, mkdir } from 'node:fs/promises';
import { extname, join, normalize, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/** Serves dist/ on a free localhost port; resolves to { url, close }. */
export async function serveDist() {
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://localhost').pathname;
    const file = normalize(join(distDir, path === '/' ? 'index.html' : path));
    if (!file.startsWith(distDir)) {
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

/** Headless Debian Chromium with WebGPU exposed (SwiftShader) and no network chatter; Playwright gives each launch a fresh profile. */
export async function launchBrowser({ webgpu = true } = {}) {
  const args = [
    '--no-sandbox',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  if (webgpu) args.push('--enable-unsafe-webgpu');
  return chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args });
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
export function withAppAndBrowser() {
  const app = {};
  before(async () => {
    app.server = await serveDist();
    app.browser = await launchBrowser();
  });
  after(async () => {
    await app.browser?.close();
    await app.server?.close();
  });
  return app;
}
