// Helpers of the tests that run the real issuer (`gradlab issuer serve`, serving the built app).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { repoRoot, distDir } from './harness.mjs';

export const GRADLAB = process.env.GRADLAB_BIN ?? join(repoRoot, 'target', 'debug', 'gradlab');

/** A port nobody listens on right now. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `gradlab issuer serve`; resolves once it prints that it listens. */
export function startIssuer(port, dataDir, extraArgs = []) {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    GRADLAB,
    [
      'issuer', 'serve',
      '--listen', `127.0.0.1:${port}`,
      '--data-dir', dataDir,
      '--public-url', url,
      '--dist', distDir,
      '--issues-per-minute', '0',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const listening = new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`the issuer did not start in 60 s:\n${stderr}`)), 60_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n')[0];
      if (stdout.includes('\n') && line.startsWith('gradlab issuer listening on')) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the issuer exited (${code ?? signal}) before listening:\n${stderr}`));
    });
  });
  return listening.then((line) => ({
    url,
    line,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  }));
}

