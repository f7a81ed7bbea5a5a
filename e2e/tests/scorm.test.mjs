// SCORM packages in a real SCORM runtime: `gradlab package` builds the SCORM 1.2 and 2004
// packages from dist/, the test unzips each into a sub-folder of a test LMS whose host page
// creates scorm-again's API object (what LMSs use) and opens a SCO in an iframe. A learner
// takes the quiz, leaves, comes back and finishes; the LMS side's data model is checked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveTree, launchBrowser, screenshot, repoRoot, distDir, expectAccessible } from '../harness.mjs';
import { bank, currentQuestion, answer } from '../quiz-helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const gradlab = join(repoRoot, 'target', 'debug', 'gradlab');
// scorm-again's package exports hide dist/; the browser bundles are read from the installed folder.
const scormAgain = join(here, '..', 'node_modules', 'scorm-again', 'dist');
const VERSIONS = {
  '1.2': { kind: 'scorm12', api: 'API', script: 'scorm12.min.js', global: 'Scorm12API', initialize: 'LMSInitialize', setValue: 'LMSSetValue', commit: 'LMSCommit' },
  2004: { kind: 'scorm2004', api: 'API_1484_11', script: 'scorm2004.min.js', global: 'Scorm2004API', initialize: 'Initialize', setValue: 'SetValue', commit: 'Commit' },
};

// The LMS's page: creates scorm-again's API with what the LMS stored before and commits to
// the LMS's HTTP endpoint with scorm-again's default synchronous requests (its final commit,
// at Terminate, goes by sendBeacon), as an LMS serves it. It counts the SCO's API calls,
// records each commit's answer, and launches the SCO in an iframe.
const HOST = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test LMS</title>
<script src="scorm12.min.js"></script><script src="scorm2004.min.js"></script></head>
<body><main><h1>Test LMS</h1><iframe id="sco" title="Course content" style="width:100%;height:1200px;border:0"></iframe></main>
<script>
  const setup = window.lmsSetup;
  const api = new window[setup.global]({
    autocommit: false,
    logLevel: 5,
    lmsCommitUrl: '/lms/commit?session=' + encodeURIComponent(setup.session),
    terminateCommitParam: 'final',
  });
  if (setup.stored) api.loadFromFlattenedJSON(setup.stored);
  const lms = (window.lms = { calls: {}, sets: [], commitAnswers: [], finished: false });
  const snapshot = () => JSON.parse(JSON.stringify(api.renderCMIToJSONObject()));
  for (const name of ['LMSInitialize', 'Initialize', 'LMSSetValue', 'SetValue', 'LMSCommit', 'Commit', 'LMSFinish', 'Terminate']) {
    const real = api[name]?.bind(api);
    if (!real) continue;
    api[name] = (...args) => {
      lms.calls[name] = (lms.calls[name] ?? 0) + 1;
      if (name.endsWith('SetValue')) lms.sets.push([args[0], String(args[1])]);
      if (name.endsWith('Finish') || name === 'Terminate') lms.beforeFinish = snapshot();
      const answer = real(...args);
      if (name.endsWith('Commit')) lms.commitAnswers.push(String(answer));
      if (name.endsWith('Finish') || name === 'Terminate') lms.finished = String(answer) === 'true';
      return answer;
    };
  }
  lms.snapshot = snapshot;
  window[setup.api] = api;
  if (setup.popup) {
    // LMSs that launch SCOs in a new window: the API is on the opener.
    window.launchPopup = () => window.open(setup.launch, 'sco');
  } else {
    document.getElementById('sco').src = setup.launch;
  }
</script></body></html>`;

// The LMS's server side: the commits each launch (session) sent, and how many to refuse.
const sessions = new Map();
let sessionCount = 0;

function newSession({ refuse = 0 } = {}) {
  sessionCount += 1;
  const id = `s${sessionCount}`;
  sessions.set(id, { commits: [], refuse, refused: 0 });
  return id;
}

/** The commit endpoint: answers as an LMS does ({"result": true}), or 500 while it refuses. */
function commitEndpoint(url, text) {
  const session = sessions.get(url.searchParams.get('session'));
  if (!session) return { status: 404, json: { result: false, errorCode: 101 } };
  if (session.refuse > 0) {
    session.refuse -= 1;
    session.refused += 1;
    return { status: 500, json: { result: false, errorCode: 101 } };
  }
  session.commits.push({ body: JSON.parse(text), final: url.searchParams.get('final') === 'true' });
  return { status: 200, json: { result: true, errorCode: 0 } };
}

/** Waits until the LMS's server holds a commit that `accept` takes; returns it. */
async function receivedCommit(session, accept, what) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = sessions.get(session).commits.find(accept);
    if (found) return found;
    if (Date.now() > deadline) {
      throw new Error(`the LMS never received ${what}; it received ${JSON.stringify(sessions.get(session).commits.map((c) => c.final))}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let server;
let browser;
const packages = {};

before(async () => {
  const work = mkdtempSync(join(tmpdir(), 'gradlab-scorm-'));
  const mounts = { '/lms/': scormAgain };
  for (const [version, { kind }] of Object.entries(VERSIONS)) {
    const zip = join(work, `gradlab-${kind}.zip`);
    const printed = execFileSync(gradlab, ['package', kind, '--dist', distDir, '--out', zip], { encoding: 'utf8' });
    assert.match(printed, /manifest checked/);
    const folder = join(work, kind);
    execFileSync('unzip', ['-q', zip, '-d', folder]);
    const manifest = readFileSync(join(folder, 'imsmanifest.xml'), 'utf8');
    packages[version] = { folder, manifest, printed };
    mounts[`/lms/content/${kind}/`] = folder;
  }
  server = await serveTree(mounts, { '/lms/host.html': HOST }, { '/lms/commit': commitEndpoint });
  server.work = work;
  browser = await launchBrowser({ webgpu: false });
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (server?.work) rmSync(server.work, { recursive: true, force: true });
});

/** The launch URL of the item whose parameters match, as the LMS builds it from the manifest. */
function launchOf(version, pattern) {
  const { manifest } = packages[version];
  const items = [...manifest.matchAll(/<item [^>]*identifierref="([^"]+)"[^>]*parameters="([^"]+)"/g)];
  const item = items.find(([, , parameters]) => pattern.test(parameters.replaceAll('&amp;', '&')));
  assert.ok(item, `an item matching ${pattern}`);
  const resource = manifest.match(new RegExp(`<resource identifier="${item[1]}"[^>]*href="([^"]+)"`));
  return `content/${VERSIONS[version].kind}/${resource[1]}${item[2].replaceAll('&amp;', '&')}`;
}

/**
 * Opens the LMS page with a SCO; resolves to { page, sco, session } once the SCO's app has
 * started. `refuse` commits are answered 500 by the LMS's server.
 */
async function launch(version, pattern, { stored, refuse } = {}) {
  const { api, global } = VERSIONS[version];
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  const launchUrl = launchOf(version, pattern);
  const session = newSession({ refuse });
  await page.addInitScript((setup) => {
    window.lmsSetup = setup;
  }, { api, global, stored, session, launch: launchUrl });
  await page.goto(`${server.url}lms/host.html`);
  await page.waitForFunction(() => document.getElementById('sco').contentWindow?.location.href.includes('embed='));
  const sco = page.frame({ url: /embed=/ });
  await sco.waitForSelector('main.page');
  return { page, sco, session };
}

const lms = (page) =>
  page.evaluate(() => {
    const { calls, sets, commitAnswers, finished, beforeFinish } = window.lms;
    return { calls, sets, commitAnswers, finished, beforeFinish, now: window.lms.snapshot() };
  });

/** What the LMS's server received last (the data model of its latest accepted commit). */
const lastReceived = (session) => sessions.get(session).commits.at(-1)?.body;

/** Navigates the SCO's frame away (the learner leaves) and waits for the final commit. */
async function leave(page, session) {
  await page.evaluate(() => {
    document.getElementById('sco').src = 'about:blank';
  });
  await page.waitForFunction(() => window.lms.finished);
  return receivedCommit(session, (c) => c.final, 'the final commit of Terminate');
}

/** The stored values an LMS passes to the next launch of the SCO. */
function storedFrom(version, left) {
  return version === '1.2'
    ? { 'cmi.suspend_data': left.suspend, 'cmi.core.lesson_status': left.status, 'cmi.core.entry': 'resume', 'cmi.student_data.mastery_score': '80' }
    : { 'cmi.suspend_data': left.suspend, 'cmi.completion_status': left.status, 'cmi.entry': 'resume', 'cmi.scaled_passing_score': '0.8' };
}

/** The SCORM 1.2 / 2004 spelling of the elements the test reads. */
function model(version, snapshot) {
  const cmi = snapshot.cmi;
  if (version === '1.2') {
    return {
      status: cmi.core.lesson_status,
      success: cmi.core.lesson_status,
      raw: cmi.core.score.raw,
      min: cmi.core.score.min,
      max: cmi.core.score.max,
      exit: cmi.core.exit,
      sessionTime: cmi.core.session_time,
      suspend: cmi.suspend_data,
      interactions: Object.values(cmi.interactions ?? {}).filter((i) => typeof i === 'object' && i.id),
      response: 'student_response',
      wrong: 'wrong',
    };
  }
  return {
    status: cmi.completion_status,
    success: cmi.success_status,
    scaled: cmi.score.scaled,
    raw: cmi.score.raw,
    min: cmi.score.min,
    max: cmi.score.max,
    exit: cmi.exit,
    sessionTime: cmi.session_time,
    suspend: cmi.suspend_data,
    interactions: Object.values(cmi.interactions ?? {}).filter((i) => typeof i === 'object' && i.id),
    response: 'learner_response',
    wrong: 'incorrect',
  };
}

/** Answers the question on screen (right or wrong first) and moves on. */
async function answerAndNext(sco, { wrongFirst = false } = {}) {
  const question = await currentQuestion(sco);
  if (wrongFirst) {
    await answer(sco, question, false, { dispatch: true });
    await sco.getByTestId('try-again').dispatchEvent('click');
  }
  await answer(sco, question, true, { dispatch: true });
  const next = sco.getByTestId('next');
  if (await next.count()) await next.dispatchEvent('click');
  return question;
}

for (const version of Object.keys(VERSIONS)) {
  test(`SCORM ${version}: the package is well formed and every file it lists is in it`, () => {
    const { manifest, folder, printed } = packages[version];
    assert.match(manifest, version === '1.2' ? /<schemaversion>1\.2<\/schemaversion>/ : /<schemaversion>2004 4th Edition<\/schemaversion>/);
    assert.match(manifest, version === '1.2' ? /adlcp:scormtype="sco"/ : /adlcp:scormType="sco"/);
    const hrefs = [...manifest.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(hrefs.length > 3);
    for (const href of hrefs) {
      assert.ok(!href.startsWith('/') && !href.includes('://'), `${href} is relative`);
      assert.ok(existsSync(join(folder, href)), `${href} is in the package`);
    }
    const ids = [...manifest.matchAll(/ identifier="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(new Set(ids).size, ids.length, 'identifiers are unique');
    // Six Lab experiments and the quiz.
    assert.match(printed, /7 SCOs/);
  });

  test(`SCORM ${version}: the quiz reports to the LMS, resumes from suspend_data and records the result`, async () => {
    const total = bank.questions.length;
    const first = await launch(version, /embed=quiz/);
    const { sco } = first;
    await sco.getByTestId('question').waitFor();
    let data = model(version, lastReceived(first.session));
    assert.equal(data.status, 'incomplete', 'opening the quiz marks it incomplete at once, on the LMS\'s server');
    await answerAndNext(sco, { wrongFirst: true });
    await answerAndNext(sco);
    await answerAndNext(sco);
    data = model(version, lastReceived(first.session));
    assert.equal(data.status, 'incomplete');
    assert.equal(data.interactions.length, 3, 'each answer reached the LMS\'s server as it was given');
    assert.equal(data.interactions[0].id, bank.questions[0].id);
    assert.equal(data.interactions[0].result, data.wrong, 'the first answer is what counts');
    assert.equal(data.interactions[1].result, 'correct');
    assert.ok(data.interactions[0][data.response], 'the learner response is recorded');
    const suspended = JSON.parse(data.suspend);
    assert.equal(Object.keys(suspended.p).length, 3);
    assert.ok(data.suspend.length < 4096);
    await expectAccessible(sco, `SCORM ${version} quiz SCO`);
    await screenshot(first.page, `scorm-${VERSIONS[version].kind}-quiz-first-launch`);

    // The learner leaves: the browser refuses the synchronous commit while the frame is
    // dismissed, the SCO terminates all the same, and the LMS's server gets the final commit.
    const final = await leave(first.page, first.session);
    let state = await lms(first.page);
    assert.equal(state.commitAnswers.at(-1), 'false', 'the commit made while leaving was refused (sync XHR in page dismissal)');
    const left = model(version, final.body);
    assert.equal(left.exit, 'suspend');
    assert.match(left.sessionTime, version === '1.2' ? /^\d{2,4}:\d\d:\d\d(\.\d\d?)?$/ : /^PT/);
    assert.equal(left.suspend, data.suspend, 'the suspend data reached the LMS');
    assert.equal(state.calls[VERSIONS[version].initialize], 1);
    assert.deepEqual(first.page.errors, []);
    await first.page.close();

    // Second launch: the attempt goes on at question 4 with three answers kept.
    const second = await launch(version, /embed=quiz/, { stored: storedFrom(version, left) });
    await second.sco.getByTestId('question').waitFor();
    assert.equal(await second.sco.getByTestId('question').getAttribute('data-question-id'), bank.questions[3].id);
    assert.match(await second.sco.getByTestId('score-line').textContent(), new RegExp(`\\b3\\b.*\\b${total}\\b`));
    for (let i = 3; i < total; i += 1) {
      await answerAndNext(second.sco);
    }
    await second.sco.getByTestId('see-result').dispatchEvent('click');
    assert.equal(await second.sco.getByTestId('result').getAttribute('data-passed'), 'true');
    data = model(version, lastReceived(second.session));
    const percent = String(Math.floor((100 * (total - 1)) / total));
    assert.equal(data.success, 'passed');
    if (version === '2004') {
      assert.equal(data.status, 'completed');
      assert.equal(Number(data.scaled), Number(percent) / 100);
    }
    assert.equal(String(data.raw), percent);
    assert.equal(String(data.min), '0');
    assert.equal(String(data.max), '100');
    assert.equal(data.interactions.length, total, 'one interaction per question');
    assert.deepEqual(data.interactions.map((i) => i.id), bank.questions.map((q) => q.id));
    assert.equal(data.interactions.filter((i) => i.result === 'correct').length, total - 1);
    // Each answer sends what changed: no interaction element is set twice.
    state = await lms(second.page);
    const interactionSets = state.sets.filter(([name]) => name.startsWith('cmi.interactions.')).map(([name]) => name);
    assert.equal(new Set(interactionSets).size, interactionSets.length, 'no interaction element is sent again');
    const setCalls = state.calls[VERSIONS[version].setValue];
    const commitCalls = state.calls[VERSIONS[version].commit];
    console.log(`SCORM ${version}: ${total - 3} answers sent with ${setCalls} SetValue and ${commitCalls} Commit calls`);
    await screenshot(second.page, `scorm-${VERSIONS[version].kind}-quiz-passed`);
    const done = model(version, (await leave(second.page, second.session)).body);
    assert.equal(done.exit, version === '1.2' ? '' : 'normal', 'a finished quiz ends the attempt');
    assert.equal(String(done.raw), percent, 'the score is in the final commit too');
    assert.deepEqual(second.page.errors, []);
    await second.page.close();
  });

  test(`SCORM ${version}: a failing commit is shown once, nothing is lost, the next answer commits everything`, async () => {
    // The LMS's server refuses the commits of the launch, of the first answer and of moving
    // on; the second answer's commit is accepted.
    const { page, sco, session } = await launch(version, /embed=quiz/, { refuse: 3 });
    const notice = sco.getByTestId('lms-notice');
    await notice.waitFor();
    assert.match(await notice.textContent(), version === '1.2' ? /LMSCommit failed \(101/ : /Commit failed \(101/);
    await screenshot(page, `scorm-${VERSIONS[version].kind}-commit-failed`);
    await answerAndNext(sco);
    assert.equal(await sco.getByTestId('lms-notice').count(), 1, 'one notice, not one per failure');
    assert.equal(sessions.get(session).refused, 3);
    assert.equal(sessions.get(session).commits.length, 0, 'nothing reached the LMS yet');
    await answerAndNext(sco);
    await sco.getByTestId('lms-notice').waitFor({ state: 'detached' });
    const data = model(version, lastReceived(session));
    assert.equal(data.interactions.length, 2, 'the answer given while the LMS failed was sent again');
    assert.equal(Object.keys(JSON.parse(data.suspend).p).length, 2);
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test(`SCORM ${version}: switching language keeps one LMS session and the progress; an answered question shows its answer`, async () => {
    const { page, sco, session } = await launch(version, /embed=quiz/);
    await sco.getByTestId('question').waitFor();
    const answered = [];
    answered.push(await answerAndNext(sco));
    answered.push(await answerAndNext(sco));
    await sco.locator('[data-lang=es]').dispatchEvent('click');
    await sco.waitForFunction(() => document.documentElement.lang === 'es');
    await sco.getByTestId('question').waitFor();
    assert.equal(await sco.getByTestId('question').getAttribute('data-question-id'), bank.questions[2].id, 'still at question 3');
    assert.match(await sco.getByTestId('score-line').textContent(), /\b2\b/);
    assert.equal(await sco.getByTestId('lms-notice').count(), 0, 'no tracking problem');
    assert.match(sco.url(), /lang=es/, 'the address keeps the language');
    let state = await lms(page);
    assert.equal(state.calls[VERSIONS[version].initialize], 1, 'one Initialize: the SCO was not reloaded');
    assert.equal(state.finished, false, 'the session goes on');

    // Back to question 2: its feedback and the answer that was given.
    await sco.locator('.quiz-actions button').first().dispatchEvent('click');
    await sco.getByTestId('feedback').waitFor();
    const question = answered[1];
    if (question.kind === 'numeric') {
      const shown = await sco.getByTestId('numeric-answer').inputValue();
      assert.equal(Number(shown.replace(',', '.')), question.answer, 'the number given is shown');
    } else {
      const checked = await sco.locator('label.option:has(input:checked)').allTextContents();
      assert.ok(checked.length > 0, 'the options chosen are checked');
    }
    await sco.getByTestId('next').dispatchEvent('click');
    await answerAndNext(sco);
    const data = model(version, lastReceived(session));
    assert.equal(data.interactions.length, 3, 'the answer given after the switch reached the LMS');
    state = await lms(page);
    assert.equal(state.calls[VERSIONS[version].initialize], 1);
    await expectAccessible(sco, `SCORM ${version} quiz SCO in Spanish`);
    await screenshot(page, `scorm-${VERSIONS[version].kind}-quiz-spanish`);
    const left = model(version, (await leave(page, session)).body);
    assert.equal(left.exit, 'suspend');
    assert.equal(Object.keys(JSON.parse(left.suspend).p).length, 3);
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test(`SCORM ${version}: a Lab SCO is completed once its experiment has been experienced, in either language`, async () => {
    const { page, sco, session } = await launch(version, /scenario=scaling&/);
    const playable = () =>
      sco.waitForFunction(() => {
        const play = document.querySelector('[data-testid=play]');
        return play && !play.disabled;
      }, null, { timeout: 60_000 });
    await playable();
    let data = model(version, lastReceived(session));
    assert.equal(data.status, 'incomplete');
    await sco.getByTestId('play').dispatchEvent('click');
    await receivedCommit(session, (c) => model(version, c.body).status === 'completed', 'the completion');
    await sco.getByTestId('play').dispatchEvent('click');
    await expectAccessible(sco, `SCORM ${version} Lab SCO`);
    await screenshot(page, `scorm-${VERSIONS[version].kind}-lab`);
    // A language switch draws the Lab again in Spanish within the same LMS session.
    await sco.locator('[data-lang=es]').dispatchEvent('click');
    await sco.waitForFunction(() => document.documentElement.lang === 'es');
    await playable();
    const state = await lms(page);
    assert.equal(state.calls[VERSIONS[version].initialize], 1, 'one Initialize: the SCO was not reloaded');
    data = model(version, (await leave(page, session)).body);
    assert.equal(data.status, 'completed', 'the completion stands');
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

test('SCORM 1.2: a SCO opened in a new window finds the API on its opener and finishes when it is closed', async () => {
  const page = await browser.newPage();
  const launchUrl = launchOf('1.2', /embed=quiz/);
  const session = newSession();
  await page.addInitScript((setup) => {
    window.lmsSetup = setup;
  }, { ...VERSIONS['1.2'], api: 'API', session, launch: launchUrl, popup: true });
  await page.goto(`${server.url}lms/host.html`);
  const [popup] = await Promise.all([page.waitForEvent('popup'), page.evaluate(() => window.launchPopup())]);
  await popup.getByTestId('question').waitFor();
  await answer(popup, await currentQuestion(popup), true);
  const data = model('1.2', lastReceived(session));
  assert.equal(data.status, 'incomplete');
  assert.equal(data.interactions.length, 1);
  assert.equal(data.interactions[0].result, 'correct');
  await popup.close({ runBeforeUnload: true });
  await page.waitForFunction(() => window.lms.finished);
  const left = model('1.2', (await receivedCommit(session, (c) => c.final, 'the final commit')).body);
  assert.equal(left.exit, 'suspend');
  assert.equal(Object.keys(JSON.parse(left.suspend).p).length, 1);
  await page.close();
});
