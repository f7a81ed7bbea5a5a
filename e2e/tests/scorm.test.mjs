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
  '1.2': { kind: 'scorm12', api: 'API', script: 'scorm12.min.js', global: 'Scorm12API' },
  2004: { kind: 'scorm2004', api: 'API_1484_11', script: 'scorm2004.min.js', global: 'Scorm2004API' },
};

// The LMS's page: creates the API with what the LMS stored before, records every commit's data
// model, can make commits fail, and launches the SCO in an iframe.
const HOST = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test LMS</title>
<script src="scorm12.min.js"></script><script src="scorm2004.min.js"></script></head>
<body><main><h1>Test LMS</h1><iframe id="sco" title="Course content" style="width:100%;height:1200px;border:0"></iframe></main>
<script>
  const setup = window.lmsSetup;
  const api = new window[setup.global]({ autocommit: false, logLevel: 5 });
  if (setup.stored) api.loadFromFlattenedJSON(setup.stored);
  const lms = (window.lms = { commits: [], failures: 0, finished: false });
  const snapshot = () => JSON.parse(JSON.stringify(api.renderCMIToJSONObject()));
  let failing = setup.failCommits ?? 0;
  for (const name of ['LMSCommit', 'Commit']) {
    const real = api[name]?.bind(api);
    if (!real) continue;
    api[name] = (parameter) => {
      if (failing > 0) {
        failing -= 1;
        lms.failures += 1;
        api.lastErrorCode = '101';
        return 'false';
      }
      const answer = real(parameter);
      if (String(answer) === 'true') lms.commits.push(snapshot());
      return answer;
    };
  }
  for (const name of ['LMSFinish', 'Terminate']) {
    const real = api[name]?.bind(api);
    if (!real) continue;
    api[name] = (parameter) => {
      lms.beforeFinish = snapshot();
      const answer = real(parameter);
      lms.finished = String(answer) === 'true';
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
  server = await serveTree(mounts, { '/lms/host.html': HOST });
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

/** Opens the LMS page with a SCO; resolves to { page, sco } once the SCO's app has started. */
async function launch(version, pattern, { stored, failCommits } = {}) {
  const { api, global } = VERSIONS[version];
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  const launchUrl = launchOf(version, pattern);
  await page.addInitScript((setup) => {
    window.lmsSetup = setup;
  }, { api, global, stored, failCommits, launch: launchUrl });
  await page.goto(`${server.url}lms/host.html`);
  await page.waitForFunction(() => document.getElementById('sco').contentWindow?.location.href.includes('embed='));
  const sco = page.frame({ url: /embed=/ });
  await sco.waitForSelector('main.page');
  return { page, sco };
}

const lms = (page) =>
  page.evaluate(() => {
    const { commits, failures, finished, beforeFinish } = window.lms;
    return { commits, failures, finished, beforeFinish, now: window.lms.snapshot() };
  });

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
    let data = model(version, (await lms(first.page)).now);
    assert.equal(data.status, 'incomplete', 'opening the quiz marks it incomplete at once');
    await answerAndNext(sco, { wrongFirst: true });
    await answerAndNext(sco);
    await answerAndNext(sco);
    let state = await lms(first.page);
    data = model(version, state.commits.at(-1));
    assert.equal(data.status, 'incomplete');
    assert.equal(data.interactions.length, 3);
    assert.equal(data.interactions[0].id, bank.questions[0].id);
    assert.equal(data.interactions[0].result, data.wrong, 'the first answer is what counts');
    assert.equal(data.interactions[1].result, 'correct');
    assert.ok(data.interactions[0][data.response], 'the learner response is recorded');
    const suspended = JSON.parse(data.suspend);
    assert.equal(Object.keys(suspended.p).length, 3);
    assert.ok(data.suspend.length < 4096);
    await expectAccessible(sco, `SCORM ${version} quiz SCO`);
    await screenshot(first.page, `scorm-${VERSIONS[version].kind}-quiz-first-launch`);

    // The learner leaves: the SCO finishes the session and asks the LMS to keep the attempt.
    await first.page.evaluate(() => {
      document.getElementById('sco').src = 'about:blank';
    });
    await first.page.waitForFunction(() => window.lms.finished);
    state = await lms(first.page);
    const left = model(version, state.beforeFinish);
    assert.equal(left.exit, 'suspend');
    assert.notEqual(left.sessionTime, undefined);
    assert.match(left.sessionTime, version === '1.2' ? /^\d{2,4}:\d\d:\d\d(\.\d\d?)?$/ : /^PT/);
    assert.deepEqual(first.page.errors, []);
    const stored = version === '1.2'
      ? { 'cmi.suspend_data': left.suspend, 'cmi.core.lesson_status': left.status, 'cmi.core.entry': 'resume', 'cmi.student_data.mastery_score': '80' }
      : { 'cmi.suspend_data': left.suspend, 'cmi.completion_status': left.status, 'cmi.entry': 'resume', 'cmi.scaled_passing_score': '0.8' };
    await first.page.close();

    // Second launch: the attempt goes on at question 4 with three answers kept.
    const second = await launch(version, /embed=quiz/, { stored });
    await second.sco.getByTestId('question').waitFor();
    assert.equal(await second.sco.getByTestId('question').getAttribute('data-question-id'), bank.questions[3].id);
    assert.match(await second.sco.getByTestId('score-line').textContent(), new RegExp(`\\b3\\b.*\\b${total}\\b`));
    for (let i = 3; i < total; i += 1) {
      await answerAndNext(second.sco);
    }
    await second.sco.getByTestId('see-result').dispatchEvent('click');
    assert.equal(await second.sco.getByTestId('result').getAttribute('data-passed'), 'true');
    state = await lms(second.page);
    data = model(version, state.commits.at(-1));
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
    await screenshot(second.page, `scorm-${VERSIONS[version].kind}-quiz-passed`);
    await second.page.evaluate(() => {
      document.getElementById('sco').src = 'about:blank';
    });
    await second.page.waitForFunction(() => window.lms.finished);
    const done = model(version, (await lms(second.page)).beforeFinish);
    assert.equal(done.exit, version === '1.2' ? '' : 'normal', 'a finished quiz ends the attempt');
    assert.deepEqual(second.page.errors, []);
    await second.page.close();
  });

  test(`SCORM ${version}: a failing commit is shown once, nothing is lost, the next answer commits everything`, async () => {
    // The commits of the launch, of the first answer and of moving on fail; the second
    // answer's works.
    const { page, sco } = await launch(version, /embed=quiz/, { failCommits: 3 });
    const notice = sco.getByTestId('lms-notice');
    await notice.waitFor();
    assert.match(await notice.textContent(), version === '1.2' ? /LMSCommit failed \(101/ : /Commit failed \(101/);
    await screenshot(page, `scorm-${VERSIONS[version].kind}-commit-failed`);
    await answerAndNext(sco);
    assert.equal(await sco.getByTestId('lms-notice').count(), 1, 'one notice, not one per failure');
    let state = await lms(page);
    assert.equal(state.failures, 3);
    assert.equal(state.commits.length, 0, 'nothing reached the LMS yet');
    await answerAndNext(sco);
    await sco.getByTestId('lms-notice').waitFor({ state: 'detached' });
    state = await lms(page);
    const data = model(version, state.commits.at(-1));
    assert.equal(data.interactions.length, 2, 'the answer given while the LMS failed was sent again');
    assert.equal(Object.keys(JSON.parse(data.suspend).p).length, 2);
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test(`SCORM ${version}: a Lab SCO is completed once its experiment has been experienced`, async () => {
    const { page, sco } = await launch(version, /scenario=scaling&/);
    await sco.waitForFunction(() => {
      const play = document.querySelector('[data-testid=play]');
      return play && !play.disabled;
    }, null, { timeout: 60_000 });
    let data = model(version, (await lms(page)).now);
    assert.equal(data.status, 'incomplete');
    await sco.getByTestId('play').dispatchEvent('click');
    await page.waitForFunction(() => {
      const cmi = window.lms.snapshot().cmi;
      return (cmi.core?.lesson_status ?? cmi.completion_status) === 'completed';
    }, null, { timeout: 120_000 });
    await sco.getByTestId('play').dispatchEvent('click');
    data = model(version, (await lms(page)).commits.at(-1));
    assert.equal(data.status, 'completed');
    await expectAccessible(sco, `SCORM ${version} Lab SCO`);
    await screenshot(page, `scorm-${VERSIONS[version].kind}-lab`);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

test('SCORM 1.2: a SCO opened in a new window finds the API on its opener', async () => {
  const page = await browser.newPage();
  const launchUrl = launchOf('1.2', /embed=quiz/);
  await page.addInitScript((setup) => {
    window.lmsSetup = setup;
  }, { ...VERSIONS['1.2'], api: 'API', launch: launchUrl, popup: true });
  await page.goto(`${server.url}lms/host.html`);
  const [popup] = await Promise.all([page.waitForEvent('popup'), page.evaluate(() => window.launchPopup())]);
  await popup.getByTestId('question').waitFor();
  await answer(popup, await currentQuestion(popup), true);
  const data = model('1.2', (await lms(page)).commits.at(-1));
  assert.equal(data.status, 'incomplete');
  assert.equal(data.interactions.length, 1);
  assert.equal(data.interactions[0].result, 'correct');
  await popup.close();
  await page.waitForFunction(() => window.lms.finished);
  await page.close();
});
