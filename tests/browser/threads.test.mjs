// The threaded build in the page (docs/threads.md): served with Cross-Origin-Opener-Policy and
// -Embedder-Policy (npm start's headers) the page is cross-origin isolated and runs the core's
// threaded build, its footer saying how many threads; served without them (a course page's host),
// the single-thread build. Both show the same numbers, to the bit, and training's worker follows
// the same rule.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { launch, openPage, startServer, test } from './harness.mjs';

let isolated, plain, browser;
before(async () => {
  [isolated, plain, browser] = await Promise.all([startServer({ isolated: true }), startServer(), launch()]);
});
after(async () => { await browser?.close(); await isolated?.close(); await plain?.close(); });

// GPT 2 x 4 heads x 96 wide on 2 x 200 tokens: every Linear splits into chunks of 64 rows, the
// attention into its (batch, head) pairs (tests/node/threads.test.mjs).
const GPT = {
  module: 'GPT', config: { vocab_size: 50, block_size: 256, n_layer: 2, n_head: 4, n_embd: 96 }, seed: 3, trace: true,
  inputs: [{ name: 'idx', shape: [2, 200], data: Array.from({ length: 400 }, (_, i) => (i * 7 + 3) % 50) }],
};

// What the page shows of its core and its numbers: the footer, the default sentence's traced steps
// and the GPT's outputs and steps, each tensor as its length and two 32-bit FNV-1a hashes of its
// floats' bits (the bits themselves are megabytes: too much for WebDriver BiDi to carry back).
async function pageNumbers(server) {
  const { page, errors } = await openPage(browser.context, server.url);
  const seen = await page.evaluate((gpt) => {
    const fnv = (words, seed) => {
      let h = seed;
      for (const w of words) h = Math.imul(h ^ w, 16777619) >>> 0;
      return h;
    };
    const bits = (steps) => steps.map((s) => {
      const words = new Uint32Array(Float32Array.from(s.data).buffer);
      return [s.name, words.length, fnv(words, 2166136261), fnv(words.reverse(), 16777619)];
    });
    const footer = document.getElementById('threads');
    const r = window.playground.core.run(gpt);
    const t0 = performance.now();
    window.playground.core.run(gpt);
    return {
      isolated: globalThis.crossOriginIsolated, cores: navigator.hardwareConcurrency, threads: Number(footer.dataset.threads), footer: footer.textContent,
      page: bits(window.playground.result().steps), gpt: bits([...r.outputs, ...r.steps]), ms: performance.now() - t0,
    };
  }, GPT);
  await page.close();
  assert.deepEqual(errors, []);
  return seen;
}

test('with the isolation headers the page runs the threaded build (its threads in the footer), without them one thread; the same numbers', async () => {
  const threaded = await pageNumbers(isolated);
  const single = await pageNumbers(plain);
  const expected = Math.min(8, threaded.cores);
  assert.ok(expected >= 2, `this machine's browser reports ${threaded.cores} cores: no second thread to test`);
  assert.deepEqual([threaded.isolated, threaded.threads], [true, expected]);
  assert.equal(threaded.footer, `threaded build · ${expected} threads`);
  assert.deepEqual([single.isolated, single.threads, single.footer], [false, 1, 'single-thread build']);
  assert.ok(single.page.length >= 10 && single.gpt.length > 10);
  assert.deepEqual(threaded.page, single.page);
  assert.deepEqual(threaded.gpt, single.gpt);
  console.log(`GPT 2 x 200 traced forward: ${single.ms.toFixed(1)} ms on 1 thread, ${threaded.ms.toFixed(1)} ms on ${expected}`);
});

test('training\'s worker trains a model big enough to gain on the threaded build where the page is isolated', async () => {
  // 64 wide with a 256-wide MLP: 1.6e8 multiply-adds a step (engine.js gainsFromThreads)
  const { page, errors } = await openPage(browser.context, `${isolated.url}#train=induction&trainwidth=64&trainffn=256`);
  await page.locator('[data-testid="train-start"]:not([disabled])').waitFor({ timeout: 30000 });
  await page.getByTestId('train-start').click();
  await page.waitForFunction(() => (window.playground.training()?.step ?? 0) >= 20 && window.playground.training().threads !== null, null, { timeout: 60000, polling: 50 });
  const run = await page.evaluate(() => window.playground.training());
  await page.getByTestId('train-pause').click();
  assert.equal(run.threads, Math.min(8, await page.evaluate(() => navigator.hardwareConcurrency)));
  assert.ok(run.losses.every(Number.isFinite));
  await page.close();
  assert.deepEqual(errors, []);
});

// A pool whose worker script is not served (a site that copied the page but not
// attention-threads.worker.js) never finished loading, and the page waited on it for good: now the
// page says why on the console and computes on the single-thread build, the same numbers.
test('where the threaded build\'s worker script is missing, the isolated page warns and runs the single-thread build', async () => {
  const page = await browser.context.newPage();
  const warnings = [], errors = [];
  page.on('console', (m) => (m.type() === 'warning' ? warnings : m.type() === 'error' ? errors : []).push(m.text()));
  await page.route('**/attention-threads.worker.js', (route) => route.fulfill({ status: 404, body: 'not here' }));
  await page.goto(isolated.url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  const seen = await page.evaluate(() => ({ isolated: globalThis.crossOriginIsolated, threads: Number(document.getElementById('threads').dataset.threads),
    steps: window.playground.result().steps.length }));
  await page.close();
  assert.deepEqual([seen.isolated, seen.threads], [true, 1]);
  assert.ok(seen.steps >= 10);
  assert.ok(warnings.some((w) => /attention-threads\.worker\.js\) did not start.*loading the single-thread build/.test(w)), warnings.join('\n'));
  assert.deepEqual(errors.filter((e) => !/attention-threads\.worker\.js|status of 404/.test(e)), []);
});
