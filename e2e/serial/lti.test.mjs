// LTI 1.3 end to end against a real platform implementation: the PyPI package `lti1p3platform`
// (e2e/lti-platform/platform.py runs it on loopback) and the real issuer (`gradlab issuer serve`
// with the built app), on SQLite and, when the test script started one, PostgreSQL. A learner
// launches the quiz from the course, passes it, and the score the server graded reaches the
// platform's gradebook through AGS; launches a tool must refuse are refused, each with its own
// message; and the launch works inside the course's iframe without any cookie.
//
// This file runs in serial/, on its own: in CI, beside another browser's file, the postMessage
// storage launch did not open twice (it passes here alone, under busy loops and beside the GPT
// file); the cause is not found yet, and the closing note of issue 40 says so.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, rm, readFile } from 'node:fs/promises';
import { createPrivateKey, createPublicKey, createSign, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { launchBrowser, screenshot, expectAccessible, repoRoot } from '../harness.mjs';
import { passTheQuiz } from '../quiz-helpers.mjs';
import { GRADLAB, freePort, startIssuer } from '../issuer-helpers.mjs';

const run = promisify(execFile);
const PYTHON = process.env.GRADLAB_LTI_PYTHON ?? join(repoRoot, 'target', 'lti-platform-venv', 'bin', 'python');

/** Starts the platform; resolves to its registration (printed as JSON on its first line). */
function startPlatform(toolUrl) {
  const child = spawn(PYTHON, [join(repoRoot, 'e2e', 'lti-platform', 'platform.py'), '0', toolUrl], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`the LTI platform did not start in 60 s:\n${stderr}`)), 60_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (stdout.includes('\n')) {
        clearTimeout(timer);
        resolve({ ...JSON.parse(stdout.split('\n')[0]), stop: () => child.kill('SIGTERM') });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the LTI platform exited (${code}):\n${stderr}`));
    });
  });
}

/** A fresh database on the test PostgreSQL server, when the test script started one. */
async function freshPostgres(name) {
  const admin = process.env.GRADLAB_TEST_POSTGRES_URL;
  if (!admin) return null;
  await run('psql', [admin, '-q', '-c', `CREATE DATABASE ${name}`]);
  return `${admin.slice(0, admin.lastIndexOf('/'))}/${name}`;
}

const setups = [];

/** Waits for the grade to reach the course; a timeout says where it stood and what the servers logged. */
async function delivered(frame, issuer) {
  const grade = frame.locator('[data-testid="lti-grade"]');
  try {
    await frame.locator('[data-testid="lti-grade"][data-delivery="delivered"]').waitFor({ timeout: 30_000 });
  } catch (error) {
    const shown = (await grade.count()) > 0 ? `${await grade.getAttribute('data-delivery')}: ${await grade.textContent()}` : 'no grade shown';
    throw new Error(`the grade did not reach the course by ${new Date().toISOString()} (${shown}; ${String(error.message).split('\n')[0]})\nissuer log:\n${issuer.stderr().slice(-2000)}`);
  }
  return grade;
}

before(async () => {
  const databases = [{ label: 'sqlite', url: null }];
  const postgres = await freshPostgres(`gradlab_lti_e2e_${process.pid}`);
  if (postgres) databases.push({ label: 'postgres', url: postgres });
  for (const database of databases) {
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), 'gradlab-lti-e2e-'));
    const storage = ['--data-dir', dataDir, ...(database.url ? ['--database-url', database.url] : [])];
    const issuer = await startIssuer(port, dataDir, database.url ? ['--database-url', database.url] : []);
    const platform = await startPlatform(issuer.url);
    // The README's manual registration, with what the platform says of itself.
    const { stdout } = await run(GRADLAB, [
      'issuer', 'lti', 'add-platform', ...storage,
      '--issuer', platform.issuer,
      '--client-id', platform.client_id,
      '--deployment-id', platform.deployment_id,
      '--auth-login-url', platform.auth_login_url,
      '--auth-token-url', platform.auth_token_url,
      '--keyset-url', platform.keyset_url,
    ]);
    assert.match(stdout, /^registered LTI platform /);
    setups.push({ database: database.label, issuer, platform, dataDir, storage });
  }
  if (!postgres) console.log('# GRADLAB_TEST_POSTGRES_URL is not set: the LTI tests ran on SQLite only');
});

after(async () => {
  for (const { issuer, platform, dataDir } of setups) {
    platform.stop();
    await issuer.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});

/**
 * The line item's results read back through the platform's AGS result service, as a tool reads
 * them: an access token from the platform's token endpoint for a client assertion signed with
 * the Lab's own key (from its data directory), then GET …/results with it.
 */
async function agsResults(platform, issuer, dataDir, lineitem) {
  const key = createPrivateKey(await readFile(join(dataDir, 'lti-tool-key.pem'), 'utf8'));
  const { n } = createPublicKey(key).export({ format: 'jwk' });
  const { keys } = await (await fetch(`${issuer.url}/lti/jwks.json`)).json();
  const kid = keys.find((k) => k.n === n)?.kid;
  assert.ok(kid, 'the Lab publishes the key of its data directory');
  const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${b64({ alg: 'RS256', typ: 'JWT', kid })}.${b64({
    iss: platform.client_id, sub: platform.client_id, aud: platform.auth_token_url, iat: now, exp: now + 300, jti: randomUUID(),
  })}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(key).toString('base64url');
  const token = await fetch(platform.auth_token_url, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: `${unsigned}.${signature}`,
      scope: 'https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly',
    }),
  });
  assert.equal(token.status, 200, await token.clone().text());
  const { access_token: accessToken } = await token.json();
  const reply = await fetch(`${lineitem}/results`, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.ims.lis.v2.resultcontainer+json' },
  });
  assert.equal(reply.status, 200, await reply.clone().text());
  return reply.json();
}

async function gradebook(platform) {
  const reply = await fetch(`${platform.issuer}/gradebook.json`);
  return reply.json();
}

/**
 * The learner's scores once the first reaches the platform's gradebook (the state waited on: an
 * experiment's completion is posted once it has trained far enough); at most 90 s.
 */
async function scoresArriving(platform, issuer, user) {
  const deadline = Date.now() + 90_000;
  let scores = [];
  while (scores.length === 0 && Date.now() < deadline) {
    scores = (await gradebook(platform)).filter((s) => s.userId === user);
    if (scores.length === 0) await new Promise((resolve) => setTimeout(resolve, 250)); // between polls of the state
  }
  assert.equal(scores.length, 1, `nothing for ${user} reached the gradebook\n${issuer.stderr().slice(-1500)}`);
  return scores;
}

test('a launch opens the quiz signed in, and the score the server graded reaches the gradebook', async () => {
  for (const { database, issuer, platform, dataDir } of setups) {
    const browser = await launchBrowser({ webgpu: false });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${platform.issuer}/launch?user=learner-42&name=${encodeURIComponent('Ada Lovelace')}`);
      const banner = page.getByTestId('lti-banner');
      await page.locator('[data-testid="lti-banner"][data-session="active"]').waitFor();
      const text = await banner.textContent();
      assert.match(text, /Ada Lovelace/, `${database}: ${text}`);
      assert.match(text, /Fine-tuning on one GPU/);
      assert.match(text, /lti1p3platform test LMS/);
      // The session token left the address bar at once; it lives in this tab only.
      const url = new URL(page.url());
      assert.equal(url.origin, issuer.url);
      assert.equal(url.hash, '', 'no token in the URL');
      assert.equal(url.searchParams.get('view'), 'quiz');
      assert.match(await page.evaluate(() => sessionStorage.getItem('gradlab.lti.session')), /^[A-Za-z0-9_-]{43}$/);

      const percent = await passTheQuiz(page, 2);
      const grade = await delivered(page, issuer);
      assert.match(await grade.textContent(), new RegExp(`${percent} %.*gradebook`));
      const scores = (await gradebook(platform)).filter((s) => s.userId === 'learner-42');
      assert.equal(scores.length, 1, `${database}: ${JSON.stringify(scores)}`);
      assert.equal(scores[0].scoreGiven, percent);
      assert.equal(scores[0].scoreMaximum, 100);
      assert.equal(scores[0].activityProgress, 'Completed');
      assert.equal(scores[0].gradingProgress, 'FullyGraded');
      assert.match(scores[0].timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // A quiz link takes no experiment's completion: its column keeps the quiz's score.
      const completion = await page.evaluate(async () => {
        const reply = await fetch('/lti/completion', {
          method: 'POST',
          headers: { authorization: `Bearer ${sessionStorage.getItem('gradlab.lti.session')}`, 'content-type': 'application/json' },
          body: JSON.stringify({ scenario: 'scaling' }),
        });
        return reply.json();
      });
      assert.equal(completion.delivery, 'not-an-experiment', JSON.stringify(completion));
      // Read back through the platform's own AGS result service.
      const results = await agsResults(platform, issuer, dataDir, `${platform.issuer}/lineitems/1`);
      const mine = (Array.isArray(results) ? results : results.content ?? []).filter((r) => r.userId === 'learner-42');
      assert.deepEqual(mine.map((r) => [r.resultScore, r.resultMaximum]), [[percent, 100]], JSON.stringify(results));
      // The certificate names whom the platform authenticated: the form shows that name (read
      // only), and the server takes it from the session whatever name a request carries.
      assert.equal(await page.getByTestId('cert-name').inputValue(), 'Ada Lovelace');
      assert.equal(await page.getByTestId('cert-name').getAttribute('readonly'), '');
      await page.route('**/api/credentials', (route) => {
        const body = JSON.parse(route.request().postData());
        route.continue({ postData: JSON.stringify({ ...body, name: 'Somebody Else' }) });
      });
      await page.getByTestId('get-certificate').click();
      await page.getByTestId('certificate').waitFor();
      assert.match(await page.getByTestId('cert-holder').textContent(), /Ada Lovelace/, database);
      // The credential names the platform and the course; whoever checks it reads them.
      const share = await page.getByTestId('share-link').getAttribute('href');
      const checker = await context.newPage();
      await checker.goto(share);
      const evidence = checker.getByTestId('verify-evidence');
      await evidence.waitFor();
      const said = await evidence.textContent();
      assert.match(said, /Taken in the course \W*Fine-tuning on one GPU/, `${database}: ${said}`);
      assert.match(said, new RegExp(`lti1p3platform test LMS.*\\(${platform.issuer}\\) signed the learner in`), said);
      if (database === 'sqlite') await screenshot(checker, 'lti-certificate-verified');
      await checker.close();
      assert.deepEqual(await context.cookies(), [], 'no cookie anywhere');
      if (database === 'sqlite') {
        await screenshot(page, 'lti-quiz-graded');
        await expectAccessible(page, 'the quiz after an LTI launch');
      }
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  }
});

const refusals = [
  { tamper: 'other-key', code: 'bad-signature', words: /signature does not match/ },
  { tamper: 'expired', code: 'expired', words: /expired/ },
  { tamper: 'wrong-audience', code: 'wrong-audience', words: /meant for another tool/ },
  { tamper: 'unknown-deployment', code: 'unknown-deployment', words: /deployment-unknown.*not registered/ },
];

test('launches a tool must refuse are refused, each with its own message and log line', async () => {
  for (const { database, issuer, platform } of setups) {
    const browser = await launchBrowser({ webgpu: false });
    try {
      const page = await browser.newPage();
      for (const { tamper, code, words } of refusals) {
        await page.goto(`${platform.issuer}/launch?user=learner-9&tamper=${tamper}`);
        const refusal = page.locator('#lti-refusal');
        await refusal.waitFor();
        assert.equal(await refusal.getAttribute('data-code'), code, `${database} ${tamper}`);
        assert.match(await refusal.textContent(), words, `${database} ${tamper}`);
        assert.match(issuer.stderr(), new RegExp(`LTI launch refused \\(${code}\\)`));
        if (database === 'sqlite' && tamper === 'other-key') {
          await screenshot(page, 'lti-launch-refused');
          await expectAccessible(page, 'a refused launch');
        }
      }
      // A browser that asks for Spanish reads the refusal in Spanish.
      if (database === 'sqlite') {
        const spanish = await browser.newPage({ locale: 'es-ES' });
        await spanish.goto(`${platform.issuer}/launch?user=learner-9&tamper=expired`);
        const refusal = spanish.locator('#lti-refusal');
        await refusal.waitFor();
        assert.equal(await refusal.getAttribute('data-code'), 'expired');
        assert.match(await refusal.textContent(), /caducó antes de llegar al Laboratorio/);
        assert.equal(await spanish.getAttribute('html', 'lang'), 'es');
        await expectAccessible(spanish, 'a refused launch in Spanish');
        await spanish.close();
      }
      // A good launch, then the same id_token and state posted again: the nonce is used once.
      await page.goto(`${platform.issuer}/launch?user=learner-10`);
      await page.locator('[data-testid="lti-banner"][data-session="active"]').waitFor();
      await page.goto(`${platform.issuer}/replay`);
      const replayed = page.locator('#lti-refusal');
      await replayed.waitFor();
      assert.equal(await replayed.getAttribute('data-code'), 'replayed', database);
      assert.match(await replayed.textContent(), /already used/);
      // No refused launch left a score or a session behind.
      assert.deepEqual((await gradebook(platform)).filter((s) => s.userId === 'learner-9'), []);
    } finally {
      await browser.close();
    }
  }
});

// Chromium blocks this cross-site frame's storage (third-party storage blocking, as Safari and
// Chrome with blocking on do): the session lives in the page, never in a cookie or storage.
test('inside the course page\'s iframe, on another site, the launch needs no cookie or storage', async () => {
  const { issuer, platform } = setups[0];
  const browser = await launchBrowser({ webgpu: false });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${platform.issuer}/course?user=learner-77&name=${encodeURIComponent('Grace Hopper')}`);
    const frame = page.frameLocator('iframe');
    await frame.locator('[data-testid="lti-banner"][data-session="active"]').waitFor();
    assert.match(await frame.getByTestId('lti-banner').textContent(), /Grace Hopper/);
    const inner = page.frames().find((f) => f.url().startsWith(issuer.url));
    assert.ok(inner, 'the Lab runs in the iframe');
    const storage = await inner.evaluate(() => {
      try {
        sessionStorage.setItem('probe', '1');
        return 'available';
      } catch {
        return 'blocked';
      }
    });
    console.log(`# the cross-site frame's storage: ${storage}`);
    await passTheQuiz(inner, 0);
    await delivered(frame, issuer);
    const scores = (await gradebook(platform)).filter((s) => s.userId === 'learner-77');
    assert.equal(scores.length, 1);
    assert.equal(scores[0].scoreGiven, 100);
    assert.deepEqual(await context.cookies(), [], 'the launch set and needed no cookie');
    await screenshot(page, 'lti-quiz-in-course-iframe');
  } finally {
    await browser.close();
  }
});

test('a launch into a Lab experiment records its completion in the gradebook once it has trained', async () => {
  const { issuer, platform } = setups[0];
  const browser = await launchBrowser({ webgpu: false });
  try {
    const page = await browser.newPage();
    const target = encodeURIComponent('view=lab&scenario=scaling');
    await page.goto(`${platform.issuer}/launch?user=learner-55&target=${target}`);
    await page.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false, null, { timeout: 60_000 });
    // The app has started: it took the token out of the address bar first thing.
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('scenario'), 'scaling', page.url());
    assert.equal(url.hash, '', 'the token left the address bar');
    await page.getByTestId('play').click();
    const scores = await scoresArriving(platform, issuer, 'learner-55');
    assert.deepEqual(
      [scores[0].scoreGiven, scores[0].scoreMaximum, scores[0].activityProgress, scores[0].gradingProgress],
      [1, 1, 'Completed', 'FullyGraded'],
    );
  } finally {
    await browser.close();
  }
});

test('a Spanish course opens the quiz in Spanish, and it reads well on a phone', async () => {
  const { platform } = setups[0];
  const browser = await launchBrowser({ webgpu: false });
  try {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`${platform.issuer}/launch?user=learner-66&name=${encodeURIComponent('Lucía Pérez')}&locale=es-ES`);
    await page.locator('[data-testid="lti-banner"][data-session="active"]').waitFor();
    assert.equal(new URL(page.url()).searchParams.get('lang'), 'es');
    assert.match(await page.getByTestId('lti-banner').textContent(), /Abierto desde .*Lucía Pérez/);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px on a phone`);
    await screenshot(page, 'lti-quiz-es-phone');
    await expectAccessible(page, 'the quiz after a Spanish launch on a phone');
  } finally {
    await browser.close();
  }
});

/** The teacher's picker after a Deep Linking launch, and the platform's page once it accepted the choice. */
async function addFromPicker(page, platform, { item, grading = 'completion', link = null }) {
  await page.goto(`${platform.issuer}/deep-link?user=teacher-1`);
  await page.locator('#lti-picker').waitFor();
  await page.locator(`input[name=item][value="${item}"]`).check();
  if (link !== null) await page.locator('#link').fill(link);
  await page.locator(`input[name=grading][value="${grading}"]`).check();
  await page.getByRole('button', { name: 'Add to the course' }).click();
  const added = page.locator('#added, #refused, #lti-pick-error').first();
  await added.waitFor();
  return added;
}

test('a teacher adds the quiz from the tool picker (Deep Linking): the platform makes a column out of 100 and the score lands in it', async () => {
  for (const { database, issuer, platform } of setups) {
    const browser = await launchBrowser({ webgpu: false });
    try {
      const page = await browser.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${platform.issuer}/deep-link?user=teacher-1`);
      await page.locator('#lti-picker').waitFor();
      if (database === 'sqlite') {
        await screenshot(page, 'lti-deep-link-picker');
        await expectAccessible(page, 'the deep-linking picker');
        // Adding nothing, or another site's address, is refused on the picker with a reason.
        await page.locator('input[name=item][value=settings]').check();
        await page.locator('#link').fill('https://elsewhere.example/?view=lab');
        await page.getByRole('button', { name: 'Add to the course' }).click();
        await page.locator('#lti-pick-error').waitFor();
        assert.match(await page.locator('#lti-pick-error').textContent(), /not a Lab page of this server/);
        await expectAccessible(page, 'the picker with an error');
      }
      const added = await addFromPicker(page, platform, { item: 'quiz' });
      assert.equal(await added.getAttribute('id'), 'added', `${database}: ${await added.textContent()}`);
      assert.equal(await added.getAttribute('data-count'), '1');
      const { links, lineitems } = await (await fetch(`${platform.issuer}/links.json`)).json();
      const k = links.length - 1;
      const link = links[k];
      assert.equal(link.url, `${issuer.url}/lti/launch?view=quiz`);
      assert.equal(lineitems[link.lineitem].scoreMaximum, 100);
      assert.equal(lineitems[link.lineitem].resourceId, 'quiz');
      assert.match(issuer.stderr(), /LTI deep link for .*: view=quiz/);

      // A learner opens the new link, passes, and the score goes to the link's own column.
      const learner = await browser.newPage();
      await learner.goto(`${platform.issuer}/launch?link=${k}&user=learner-dl-${database}&name=${encodeURIComponent('Mary Somerville')}`);
      await learner.locator('[data-testid="lti-banner"][data-session="active"]').waitFor();
      const percent = await passTheQuiz(learner, 1);
      await delivered(learner, issuer);
      const scores = (await gradebook(platform)).filter((s) => s.userId === `learner-dl-${database}`);
      assert.deepEqual(scores.map((s) => [s.lineitem, s.scoreGiven, s.scoreMaximum]), [[link.lineitem, percent, 100]]);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  }
});

test('an experiment added ungraded posts only the learner\'s progress; a cancelled picker adds nothing', async () => {
  const { issuer, platform } = setups[0];
  const browser = await launchBrowser({ webgpu: false });
  try {
    const page = await browser.newPage();
    const added = await addFromPicker(page, platform, { item: 'scenario:scaling', grading: 'progress' });
    assert.equal(await added.getAttribute('id'), 'added', await added.textContent());
    const { links } = await (await fetch(`${platform.issuer}/links.json`)).json();
    const k = links.length - 1;
    assert.equal(links[k].url, `${issuer.url}/lti/launch?view=lab&scenario=scaling`);
    assert.equal(links[k].lineitem, undefined, 'no column of its own');
    assert.deepEqual(links[k].custom, { gradlab_grading: 'progress' });
    // The teacher cancels a second picker: the platform gets an empty, signed answer.
    await page.goto(`${platform.issuer}/deep-link?user=teacher-1`);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('#added').waitFor();
    assert.equal(await page.locator('#added').getAttribute('data-count'), '0');

    const learner = await browser.newPage();
    await learner.goto(`${platform.issuer}/launch?link=${k}&user=learner-progress`);
    await learner.waitForFunction(() => document.querySelector('[data-testid=play]')?.disabled === false, null, { timeout: 60_000 });
    await learner.getByTestId('play').click();
    const scores = await scoresArriving(platform, issuer, 'learner-progress');
    assert.deepEqual(
      [scores[0].scoreGiven, scores[0].activityProgress, scores[0].gradingProgress],
      [undefined, 'Completed', 'NotReady'],
    );
  } finally {
    await browser.close();
  }
});

/** `gradlab issuer lti invite`: the one-use registration link it prints. */
async function invite(storage, issuer, forIssuer) {
  const { stdout } = await run(GRADLAB, [
    'issuer', 'lti', 'invite', ...storage, '--public-url', issuer.url, ...(forIssuer ? ['--issuer', forIssuer] : []),
  ]);
  const link = stdout.trim().split('\n').pop();
  assert.match(link, new RegExp(`^${issuer.url}/lti/register\\?invite=[A-Za-z0-9_-]{43}$`), stdout);
  return link;
}

test('an administrator registers the Lab by Dynamic Registration with a one-use invitation, and launches then work', async () => {
  for (const { database, issuer, platform, storage } of setups) {
    const browser = await launchBrowser({ webgpu: false });
    try {
      const page = await browser.newPage();
      const link = await invite(storage, issuer, platform.issuer);
      await page.goto(`${platform.issuer}/dynamic-registration?tool=${encodeURIComponent(link)}`);
      // The platform's page hears the tool's org.imsglobal.lti.close once it is registered.
      await page.locator('#status[data-closed="true"]').waitFor();
      const registered = page.frameLocator('iframe').locator('#lti-registered');
      const client = await registered.getAttribute('data-client-id');
      assert.match(client, /^dynamic-\d+$/, database);
      const { stdout } = await run(GRADLAB, ['issuer', 'lti', 'platforms', ...storage]);
      assert.match(stdout, new RegExp(`client ${client} deployments dynamic-deployment-\\d+`), stdout);
      assert.match(issuer.stderr(), new RegExp(`registered by Dynamic Registration \\(client ${client}`));
      if (database === 'sqlite') await screenshot(page, 'lti-dynamic-registration');

      // A learner launches under the new client.
      const learner = await browser.newPage();
      await learner.goto(`${platform.issuer}/launch?client=${client}&user=learner-dr&name=${encodeURIComponent('Emmy Noether')}`);
      await learner.locator('[data-testid="lti-banner"][data-session="active"]').waitFor();
      assert.match(await learner.getByTestId('lti-banner').textContent(), /Emmy Noether/);

      // The invitation was used once; one made for another platform registers nothing.
      await page.goto(`${platform.issuer}/dynamic-registration?tool=${encodeURIComponent(link)}`);
      const used = page.frameLocator('iframe').locator('#lti-registration-error');
      await used.waitFor();
      assert.equal(await used.getAttribute('data-code'), 'invite');
      const elsewhere = await invite(storage, issuer, 'https://other-lms.example');
      await page.goto(`${platform.issuer}/dynamic-registration?tool=${encodeURIComponent(elsewhere)}`);
      const other = page.frameLocator('iframe').locator('#lti-registration-error');
      await other.waitFor();
      assert.equal(await other.getAttribute('data-code'), 'other-platform');
      assert.match(await other.textContent(), /made for https:\/\/other-lms\.example/);
      if (database === 'sqlite') await expectAccessible(page, 'a refused registration');
      const registrations = await (await fetch(`${platform.issuer}/registrations.json`)).json();
      assert.equal(registrations.length, 1, 'one registration only');
    } finally {
      await browser.close();
    }
  }
});

// LTI client-side OIDC with postMessage storage: the course page keeps the login's state for
// the Lab (lti_storage_target), which binds the launch to the browser that started it.
test('with the platform\'s postMessage storage a launch is bound to its browser; one started in another is refused', async () => {
  for (const { database, issuer, platform } of setups) {
    const browser = await launchBrowser({ webgpu: false });
    try {
      const learner = await browser.newContext();
      const page = await learner.newPage();
      await page.goto(`${platform.issuer}/course?storage=1&user=learner-storage&name=${encodeURIComponent('Ada Lovelace')}`);
      const frame = page.frameLocator('iframe');
      try {
        // Two storage round trips, each allowed 20 s by the Lab's pages, then the app's start.
        await frame.locator('[data-testid="lti-banner"][data-session="active"]').waitFor({ timeout: 60_000 });
      } catch (error) {
        const shown = page.frames().map((f) => f.url()).join(' | ');
        throw new Error(`${database}: the storage launch did not open (${String(error.message).split('\n')[0]})\nframe: ${shown}\nissuer log:\n${issuer.stderr().slice(-1500)}`);
      }
      // (At least once each: the Lab asks again every second until the platform answers.)
      const [puts, gets] = await page.evaluate(() => [document.documentElement.dataset.put, document.documentElement.dataset.get].map(Number));
      assert.ok(puts >= 1 && gets >= 1, `${database}: the state was kept (${puts}) and read back (${gets}) through the platform's page`);
      assert.deepEqual(await learner.cookies(), [], 'no cookie');

      // Login CSRF: an attacker starts a launch in their own browser and keeps its form...
      const attacker = await browser.newContext();
      const own = await attacker.newPage();
      await own.route(`${issuer.url}/lti/launch`, (route) => route.abort());
      const posted = own.waitForRequest(`${issuer.url}/lti/launch`);
      await own.goto(`${platform.issuer}/course?storage=1&user=attacker-1`);
      await posted;
      await attacker.close();
      // ...and has the learner's browser post it: the learner's platform never kept that
      // state, so the Lab refuses to open the attacker's session there.
      const victim = await browser.newContext();
      const course = await victim.newPage();
      await course.goto(`${platform.issuer}/course?replay=1`);
      const refusal = course.frameLocator('iframe').locator('#lti-refusal');
      await refusal.waitFor();
      assert.equal(await refusal.getAttribute('data-code'), 'other-browser', database);
      assert.match(await refusal.textContent(), /not confirm that this sign-in was started in this browser/);
      assert.match(issuer.stderr(), /LTI launch refused \(other-browser\)/);
      if (database === 'sqlite') await screenshot(course, 'lti-launch-other-browser');
      // Nor can a form on another site hand the learner's browser a session whose state the
      // attacker read in their own: only the Lab's launch page may bind.
      const thief = await browser.newContext();
      const theirs = await thief.newPage();
      await theirs.route(`${issuer.url}/lti/bind`, (route) => route.abort());
      const binding = theirs.waitForRequest(`${issuer.url}/lti/bind`);
      await theirs.goto(`${platform.issuer}/course?storage=1&user=attacker-2`);
      const stolen = new URLSearchParams((await binding).postData() ?? '');
      await thief.close();
      assert.ok(stolen?.get('token') && stolen.get('value'), 'the attacker holds a token and its state');
      const forged = await victim.newPage();
      await forged.setContent(`<form method="post" action="${issuer.url}/lti/bind"><input name="token"><input name="value"></form>`);
      await forged.evaluate(([token, value]) => {
        const form = document.forms[0];
        form.elements.namedItem('token').value = token;
        form.elements.namedItem('value').value = value;
        form.submit();
      }, [stolen.get('token'), stolen.get('value')]);
      const forgedRefusal = forged.locator('#lti-refusal');
      await forgedRefusal.waitFor();
      assert.equal(await forgedRefusal.getAttribute('data-code'), 'other-browser', database);
    } finally {
      await browser.close();
    }
  }
});
