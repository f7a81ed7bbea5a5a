// The signed certificate end to end, against the real issuer (`gradlab issuer serve`, which also
// serves the built app): pass the quiz, get an Open Badges credential, check its baked PNG with
// the CLI, verify the share link in another browser, a dropped tampered file, a revocation, and
// what the learner sees while the issuer is down (then "Try again" once it is back).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { launchBrowser, screenshot, artifactsDir } from '../harness.mjs';
import { bank, passTheQuiz } from '../quiz-helpers.mjs';
import { GRADLAB, freePort, startIssuer } from '../issuer-helpers.mjs';

const run = promisify(execFile);
const ISSUER_NAME = 'Gradient Accumulation Lab';
const ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/;

const state = {};

before(async () => {
  state.port = await freePort();
  state.dataDir = await mkdtemp(join(tmpdir(), 'gradlab-issuer-e2e-'));
  state.files = await mkdtemp(join(tmpdir(), 'gradlab-issuer-files-'));
  state.issuer = await startIssuer(state.port, state.dataDir);
  state.browser = await launchBrowser({ webgpu: false });
});

after(async () => {
  await state.browser?.close();
  await state.issuer?.stop();
  for (const dir of [state.dataDir, state.files]) {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
});

/** Waits until the verify page has a verdict (it shows none while checking) and returns it. */
async function verdictOf(page) {
  const verdict = page.getByTestId('verify-result');
  await verdict.waitFor();
  return { valid: await verdict.getAttribute('data-valid'), status: await verdict.getAttribute('data-status'), verdict };
}

/** A format-2 short ID (see crates/quiz/src/certificate.rs): format 2, serial, nonce, then CRC-15. */
function issuedId(serial, nonce) {
  const payload = (2n << 56n) | (BigInt(serial) << 28n) | BigInt(nonce);
  let crc = 0n;
  for (let i = 59n; i >= 0n; i--) {
    const bit = (payload >> i) & 1n;
    const top = (crc >> 14n) & 1n;
    crc = (crc << 1n) & 0x7fffn;
    if ((top ^ bit) === 1n) crc ^= 0x4599n;
  }
  const word = (payload << 15n) | crc;
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let symbols = '';
  for (let i = 14n; i >= 0n; i--) symbols += alphabet[Number((word >> (5n * i)) & 31n)];
  return `${symbols.slice(0, 5)}-${symbols.slice(5, 10)}-${symbols.slice(10)}`;
}

function did() {
  return `did:web:127.0.0.1%3A${state.port}`;
}

test('pass the quiz on the issuer and get a signed certificate; its baked PNG verifies with the CLI', async () => {
  const context = await state.browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${state.issuer.url}/?view=quiz`);
  const percent = await passTheQuiz(page);
  await page.getByTestId('cert-name').fill('Grace Hopper');
  await page.getByTestId('get-certificate').click();

  const card = page.getByTestId('certificate');
  await card.waitFor();
  assert.equal(await card.getAttribute('data-signed'), 'true');
  const id = (await page.getByTestId('certificate-id').textContent()).trim();
  assert.match(id, ID_PATTERN);
  const issuer = await page.getByTestId('cert-issuer').textContent();
  assert.ok(issuer.includes(ISSUER_NAME) && issuer.includes(did()), issuer);
  assert.match(await card.textContent(), new RegExp(`${percent} %`));
  assert.match(await page.getByTestId('cert-holder').textContent(), /Grace Hopper/);
  const share = await page.getByTestId('share-link').getAttribute('href');
  assert.equal(share, `${state.issuer.url}/?view=verify&id=${id}`);
  await screenshot(page, 'issuer-certificate-signed');

  // One attempt, one certificate: the result shows it instead of asking for a name again, and
  // the issuer gives the attempt's first credential to a second request under another name.
  assert.equal(await page.getByTestId('get-certificate').count(), 0, 'no second "Get my certificate"');
  assert.match(await page.getByTestId('issued-for-attempt').textContent(), /issued to Grace Hopper/);
  const saved = await page.evaluate((version) => JSON.parse(localStorage.getItem(`gradlab.quiz.v${version}`)), bank.version);
  assert.match(saved.attempt_id, /^[A-Za-z0-9_-]{22}$/, 'the attempt carries a random ID');
  const again = await page.evaluate(async ({ attemptId, version }) => {
    const body = { bank_version: version, language: 'en', name: 'Somebody Else', answers: {}, attempt_id: attemptId };
    const reply = await fetch('/api/credentials', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: reply.status, body: await reply.json() };
  }, { attemptId: saved.attempt_id, version: bank.version });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.id, id, 'the same credential');
  assert.equal(again.body.credential.credentialSubject.identifier[0].identityHash, 'Grace Hopper', 'under the first name');

  // The credential as JSON.
  const [jsonDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-json').click()]);
  assert.equal(jsonDownload.suggestedFilename(), `certificate-${id}.json`);
  const credential = JSON.parse(await readFile(await jsonDownload.path(), 'utf8'));
  assert.ok(credential.type.includes('OpenBadgeCredential'), JSON.stringify(credential.type));
  assert.equal(credential.proof?.cryptosuite, 'eddsa-jcs-2022');

  // The PNG is baked: the CLI verifies the image alone (resolving the issuer's did:web).
  const [pngDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-png').click()]);
  assert.equal(pngDownload.suggestedFilename(), `certificate-${id}.png`);
  const pngPath = join(state.files, `certificate-${id}.png`);
  await pngDownload.saveAs(pngPath);
  const png = await readFile(pngPath);
  await writeFile(join(artifactsDir, 'issuer-certificate-baked.png'), png);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const { stdout } = await run(GRADLAB, ['verify', pngPath]);
  assert.match(stdout, /^valid: /);
  assert.match(stdout, /Grace Hopper/);

  // A reload shows the same signed certificate.
  await page.reload();
  await page.getByTestId('certificate').waitFor();
  assert.equal((await page.getByTestId('certificate-id').textContent()).trim(), id);
  assert.deepEqual(errors, []);
  Object.assign(state, { id, share, pngPath, credential });
  await context.close();
});

test('the share link verifies in a fresh browser; a baked PNG and a tampered file are checked too', async () => {
  assert.ok(state.share, 'the first test issued a certificate');
  const context = await state.browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(state.share);
  const { valid, status, verdict } = await verdictOf(page);
  assert.equal(status, 'valid', await verdict.textContent());
  assert.equal(valid, 'true');
  const issuer = await page.getByTestId('verify-issuer').textContent();
  assert.ok(issuer.includes(ISSUER_NAME) && issuer.includes(did()), issuer);
  const text = await verdict.textContent();
  assert.match(text, /Grace Hopper/);
  assert.match(text, /eddsa-jcs-2022/);
  assert.equal(await page.getByTestId('verify-name').count(), 0, 'no name field for a signed ID');
  await screenshot(page, 'issuer-verify-valid');

  // The baked PNG, chosen with the file input.
  await page.getByTestId('verify-file').setInputFiles(state.pngPath);
  const fromPng = page.locator('[data-testid="verify-result"][data-source="file"]');
  await fromPng.waitFor();
  assert.equal(await fromPng.getAttribute('data-status'), 'valid', await fromPng.textContent());
  assert.match(await fromPng.textContent(), /Grace Hopper/);

  // A credential whose score was raised after signing, dropped on the drop zone.
  const tampered = structuredClone(state.credential);
  const results = tampered.credentialSubject.result;
  assert.ok(Array.isArray(results) && results.some((r) => /^\d+$/.test(r.value)), JSON.stringify(results));
  for (const result of results) if (/^\d+$/.test(result.value)) result.value = '100';
  const tamperedText = JSON.stringify(tampered);
  await writeFile(join(state.files, 'tampered.json'), tamperedText);
  const dataTransfer = await page.evaluateHandle((text) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([text], 'tampered.json', { type: 'application/json' }));
    return transfer;
  }, tamperedText);
  await page.getByTestId('verify-drop').dispatchEvent('drop', { dataTransfer });
  const dropped = page.locator('[data-testid="verify-result"][data-checked="tampered.json"]');
  await dropped.waitFor();
  assert.equal(await dropped.getAttribute('data-status'), 'tampered', await dropped.textContent());
  assert.equal(await dropped.getAttribute('data-valid'), 'false');
  await screenshot(page, 'issuer-verify-tampered');
  // The CLI agrees.
  await assert.rejects(run(GRADLAB, ['verify', join(state.files, 'tampered.json')]));
  assert.deepEqual(errors, []);
  await context.close();
});

test('a revoked credential shows as revoked', async () => {
  assert.ok(state.id, 'the first test issued a certificate');
  const { stdout } = await run(GRADLAB, ['issuer', 'revoke', state.id, '--data-dir', state.dataDir, '--reason', 'test']);
  assert.match(stdout, /revoked/);
  const context = await state.browser.newContext();
  const page = await context.newPage();
  await page.goto(state.share);
  const { valid, status, verdict } = await verdictOf(page);
  assert.equal(status, 'revoked', await verdict.textContent());
  assert.equal(valid, 'false');
  assert.match(await page.getByTestId('verify-issuer').textContent(), new RegExp(ISSUER_NAME));
  await screenshot(page, 'issuer-verify-revoked');
  // An ID the issuer never gave out (well formed, so the issuer is asked and says "no such").
  const unknown = issuedId(0x0fffffff, 12345);
  await page.getByTestId('verify-id').fill(unknown);
  await page.getByTestId('verify').click();
  const other = page.locator(`[data-testid="verify-result"][data-checked="${unknown}"]`);
  await other.waitFor();
  assert.equal(await other.getAttribute('data-status'), 'unknown-id', await other.textContent());
  assert.equal(await other.getAttribute('data-valid'), 'false');
  await context.close();
});

test('with the issuer down the learner is told so, keeps everything, and gets the certificate after "Try again"', async () => {
  const context = await state.browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${state.issuer.url}/?view=quiz`);
  await passTheQuiz(page, 2);
  await page.getByTestId('cert-name').fill('Katherine Johnson');
  await state.issuer.stop();

  await page.getByTestId('get-certificate').click();
  const problem = page.getByTestId('issue-problem');
  await problem.waitFor();
  assert.equal(await problem.getAttribute('data-kind'), 'unreachable');
  assert.match(await problem.textContent(), /could not be reached .*Your answers are saved/s);
  assert.equal(await page.getByTestId('integrity-only').isVisible(), true);
  assert.equal(await page.getByTestId('certificate').count(), 0);
  await screenshot(page, 'issuer-unreachable');
  const saved = await page.evaluate((version) => localStorage.getItem(`gradlab.quiz.v${version}`), bank.version);
  assert.ok(saved && JSON.parse(saved).progress, 'progress is saved');
  // Trying again while it is still down really asks again, and says so again; nothing breaks.
  const retried = page.waitForEvent('requestfailed', (r) => r.method() === 'POST' && r.url().includes('/api/credentials'));
  await page.getByTestId('issue-retry').click();
  await retried;
  await page.waitForFunction(
    () => document.querySelector('[data-testid="issue-problem"]')?.getAttribute('data-kind') === 'unreachable',
  );

  // The issuer comes back on the same port with the same data.
  state.issuer = await startIssuer(state.port, state.dataDir);
  await page.getByTestId('issue-retry').click();
  await page.getByTestId('certificate').waitFor();
  assert.equal(await page.getByTestId('certificate').getAttribute('data-signed'), 'true');
  const id = (await page.getByTestId('certificate-id').textContent()).trim();
  assert.match(id, ID_PATTERN);
  assert.notEqual(id, state.id);
  assert.equal(await page.getByTestId('issue-problem').count(), 0);

  // After a reload the progress and the certificate are still there.
  await page.reload();
  await page.getByTestId('certificate').waitFor();
  assert.equal((await page.getByTestId('certificate-id').textContent()).trim(), id);
  assert.match(await page.getByTestId('score-line').textContent(), new RegExp(`${bank.questions.length} of ${bank.questions.length} questions answered`));
  assert.deepEqual(errors, []);
  await context.close();
});
