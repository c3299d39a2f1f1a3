// Training mode in headless Chromium (docs/training.md): #train=induction trains in
// the page's Web Worker to held-out accuracy >= 0.95, names an induction head, draws its loss,
// scrubs back to an earlier step's attention, pauses and resumes, steps once, and hands the model
// to the playground; the exported .safetensors re-loads (in the core, and in PyTorch when Debian's
// python3-torch is there) to the same outputs; the same in Chinese; the first 50 losses of every
// task are PyTorch's (tests/fixtures/train-parity); a link's settings train the same losses as
// the engine given them; a legacy train=1 link is the dropout flag; gradients on the step cards.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { fromHash } from '../../web/app/state.js';
import { trainSettings } from '../../web/train/fields.js';
import { createEngine } from '../../web/train/engine.js';
import { trainZh } from '../../web/locales/train.zh.js';
import { trainEn } from '../../web/locales/train.en.js';
import { TASK_IDS } from '../../web/train/tasks.js';
import { cutSelects, heavy, launch, openPage, startServer, test, typeAndEnter } from './harness.mjs';

let server, browser, core, dir;
before(async () => {
  server = await startServer();
  browser = await launch();
  core = await loadAttention();
  dir = mkdtempSync(join(tmpdir(), 'attn-train-'));
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const training = (page) => page.evaluate(() => window.playground.training());

async function openTraining(hash, { locale } = {}) {
  const context = locale ? (await launch({ locale })) : null;
  const { page, errors } = await openPage((context ?? browser).context, `${server.url}#${hash}`);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.locator('[data-testid="train-start"]:not([disabled])').waitFor({ timeout: 30000 });
  return { page, errors, close: () => context?.close() };
}

async function trainTo95(page) {
  const t0 = Date.now();
  await page.getByTestId('train-start').click();
  await page.waitForFunction(() => (window.playground.training().accuracy ?? 0) >= 0.95, null, { timeout: 120000, polling: 100 });
  return (Date.now() - t0) / 1000;
}

// Every stop hands the model to the playground: its weights, named by the step.
async function handedOff(page) {
  await page.waitForFunction(() => !window.playground.training().running);
  const { step } = await training(page);
  await page.waitForFunction((s) => window.playground.result()?.module === 'CausalTransformer'
    && document.querySelector('#weights-status').textContent.includes(`step${s}.safetensors`), step);
  return step;
}

async function pause(page) {
  await page.getByTestId('train-pause').click();
  return handedOff(page);
}

// The downloaded file's bytes.
async function download(page, testid) {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testid).click()]);
  const path = join(dir, file.suggestedFilename());
  await file.saveAs(path);
  return { name: file.suggestedFilename(), bytes: readFileSync(path), path };
}

test('#train=induction trains to 0.95, names an induction head, scrubs back, pauses and resumes, exports what re-loads', async () => {
  const { page, errors } = await openTraining('train=induction');
  assert.equal(await page.getByTestId('train-task').inputValue(), 'induction');
  assert.deepEqual(await training(page), { task: 'induction', step: 0, losses: [], accuracy: null, stepsPerSecond: 0, threads: null, running: false });
  const seconds = await trainTo95(page);
  assert.ok(seconds < 120, `${seconds} s to 0.95`);
  const live = await training(page);
  assert.ok(live.running && live.step >= 25 && live.losses.length >= live.step - 50 && live.stepsPerSecond > 0, JSON.stringify({ ...live, losses: live.losses.length }));
  assert.ok(Number(await page.locator('[data-testid="train-chart"]').getAttribute('data-points')) > 20, 'the loss chart has points');
  assert.ok((await page.locator('[data-testid="train-chart"] polyline.loss').getAttribute('points')).split(' ').length > 20);

  // Pause, then resume from there.
  const paused = await pause(page);
  await page.waitForTimeout(300);
  const shownAccuracy = Number(await page.getByTestId('train-accuracy').getAttribute('data-value'));
  assert.equal(shownAccuracy, (await training(page)).accuracy, 'the page shows the latest held-out accuracy');
  assert.equal(await page.getByTestId('train-accuracy').textContent(), shownAccuracy.toFixed(3));
  assert.equal((await training(page)).step, paused, 'paused: no step taken');
  assert.match(await page.getByTestId('train-status').textContent(), /Paused at step/);
  await page.getByTestId('train-start').click();
  await page.waitForFunction((s) => window.playground.training().step > s + 20, paused);
  const resumed = await pause(page);
  assert.equal((await training(page)).losses.length, resumed, 'one loss per step, none lost over the pause');

  // An induction head, named on the page.
  const heads = await page.evaluate(() => window.playground.trainingHeads());
  assert.ok(heads.some((h) => h.labels.includes('induction') && h.scores.induction >= 0.5), JSON.stringify(heads.map((h) => h.labels)));
  const named = page.locator('[data-testid="train-head"][data-labels~="induction"]');
  assert.ok(await named.count() >= 1);
  assert.match(await named.first().locator('.head-labels').textContent(), /induction 0\.\d\d/);

  // The scrubber shows an earlier step's attention (and the live one again).
  const map = page.locator('[data-testid="train-head"]').last().locator('canvas');
  const now = await map.evaluate((c) => c.toDataURL());
  await page.getByTestId('train-scrubber').focus();
  await page.keyboard.press('Home');
  await page.waitForFunction(() => document.querySelector('.train-heads').dataset.step === '0');
  assert.notEqual(await map.evaluate((c) => c.toDataURL()), now, 'step 0\'s map differs from the trained one');
  assert.match(await map.getAttribute('aria-label'), /at step 0,/);
  assert.match(await page.getByTestId('train-sample').locator('caption').textContent(), /At step 0:/);
  await page.keyboard.press('End');
  await page.waitForFunction((s) => document.querySelector('.train-heads').dataset.step === String(s), resumed);

  // Step once while paused.
  await page.getByTestId('train-step').click();
  await page.waitForFunction((s) => window.playground.training().step === s + 1 && !window.playground.training().running, resumed);
  const step = await handedOff(page);
  assert.equal(step, resumed + 1);

  // The playground holds the trained model; the exported weights re-load to its outputs.
  const shown = await page.evaluate(() => ({ text: window.playground.state().text, config: window.playground.state().config.CausalTransformer,
    logits: Array.from(window.playground.result().outputs[0].data) }));
  assert.equal(shown.text.length, 16);
  const weights = await download(page, 'train-export-weights');
  assert.equal(weights.name, `induction-step${step}.safetensors`);
  const idx = Array.from(shown.text, (c) => c.charCodeAt(0) - 65);
  const reloaded = core.run({ module: 'CausalTransformer', config: shown.config, inputs: [{ name: 'idx', shape: [1, 16], data: idx }] }, { weights: new Uint8Array(weights.bytes) });
  assert.deepEqual(Array.from(reloaded.outputs[0].data), shown.logits, 'the exported weights give the page\'s outputs');
  const torch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { encoding: 'utf8' });
  if (torch.status === 0) {
    const logits = join(dir, 'logits.json');
    writeFileSync(logits, JSON.stringify({ logits: shown.logits }));
    const check = spawnSync('/usr/bin/python3', [new URL('../../scripts/make_train_parity.py', import.meta.url).pathname, '--check-export', weights.path, logits], { encoding: 'utf8' });
    assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
    assert.match(check.stdout, /strict load_state_dict ok/);
  }
  const run = JSON.parse((await download(page, 'train-export-run')).bytes.toString('utf8'));
  assert.equal(run.config.task, 'induction');
  assert.equal(run.seed, 1);
  assert.equal(run.losses.length, step);
  assert.deepEqual(errors, []);
});

test('the same in Chinese: trains, names the induction head 归纳, no English text of the panel',
  heavy('the training of the test above again (70 s in Firefox at load 20), in Chinese: i18n.test.mjs checks the Chinese page in Firefox'), async () => {
  const { page, errors } = await openTraining('train=induction&lang=zh');
  assert.equal((await page.getByTestId('train-start').textContent()).trim(), '训练');
  await trainTo95(page);
  const step = await pause(page);
  assert.match(await page.getByTestId('train-status').textContent(), new RegExp(`已暂停于第 ${step} 步`));
  await page.waitForFunction(() => document.querySelector('[data-testid="train-head"][data-labels~="induction"]'));
  assert.match(await page.locator('[data-testid="train-head"][data-labels~="induction"] .head-labels').first().textContent(), /归纳 0\.\d\d/);
  const text = await page.locator('#training').innerText();
  // English texts of the dictionary (up to their first parameter), unless a Chinese text quotes them too (归纳头（induction head）).
  const quoted = Object.values(trainZh).join(' ');
  const english = Object.values(trainEn).map((v) => v.replace(/`[^`]*`/g, '').split(/[{}]/)[0].trim())
    .filter((v) => v.length >= 6 && !quoted.includes(v) && text.includes(v));
  assert.deepEqual(english, [], 'English phrases left on the Chinese panel');
  assert.match(text, /留出集准确率/);
  await page.getByTestId('train-start').click();
  await page.waitForFunction((s) => window.playground.training().step > s, step);
  await pause(page);
  assert.deepEqual(errors, []);
});

test('the first 50 losses of every task are PyTorch\'s (rtol 1e-3), trained in the page', async () => {
  const { page, errors } = await openTraining(`train=${TASK_IDS[0]}&trainsteps=50`);
  for (const id of TASK_IDS) {
    const fixture = JSON.parse(readFileSync(new URL(`../fixtures/train-parity/${id}.json`, import.meta.url), 'utf8'));
    if (id !== TASK_IDS[0]) {
      await page.getByTestId('train-task').selectOption(id);
      await typeAndEnter(page.locator('#trainsteps'), '50');
      await page.waitForFunction((task) => window.playground.training().task === task && window.playground.state().trainsteps === 50
        && document.querySelector('[data-testid="train-start"]:not([disabled])'), id);
    }
    await page.getByTestId('train-start').click();
    await page.waitForFunction(() => window.playground.training().step === 50 && !window.playground.training().running, null, { timeout: 60000 });
    const { losses } = await training(page);
    const rel = Math.max(...losses.map((l, i) => Math.abs(l - fixture.losses[i]) / Math.abs(fixture.losses[i])));
    assert.equal(losses.length, 50, id);
    assert.ok(rel <= fixture.rtol, `${id}: max relative difference ${rel}`);
  }
  assert.match(await page.evaluate(() => window.playground.link()), /#.*train=max&trainsteps=50/);
  assert.deepEqual(errors, []);
});

test('a link\'s settings train the same losses as the engine given them; a refused setting is shown; train=1 is the dropout flag', async () => {
  const hash = 'train=copy&trainseed=7&trainwidth=64&trainheads=4&trainopt=SGD&trainlr=0.05&trainbatch=16&trainsteps=30';
  const { page, errors } = await openTraining(hash);
  assert.equal(await page.locator('#trainwidth').inputValue(), '64');
  assert.equal(await page.locator('#trainopt').inputValue(), 'SGD');
  await page.getByTestId('train-start').click();
  await page.waitForFunction(() => window.playground.training().step === 30 && !window.playground.training().running);
  const engine = createEngine(core, trainSettings(fromHash(`#${hash}`)));
  engine.step(30);
  assert.deepEqual((await training(page)).losses, Array.from(Float32Array.from(engine.history.losses)));
  engine.delete();
  // a head without a pattern: "yet" at step 0, not at the run's last step
  const none = page.locator('[data-testid="train-head"] .head-labels li.none');
  assert.ok((await none.allTextContents()).every((s) => s === 'no clear pattern'), (await none.allTextContents()).join());
  await page.getByTestId('train-scrubber').focus();
  await page.keyboard.press('Home');
  await page.waitForFunction(() => document.querySelector('.train-heads').dataset.step === '0');
  const early = await none.allTextContents();
  assert.ok(early.length > 0 && early.every((s) => s === 'no clear pattern yet'), early.join());
  await page.keyboard.press('End');
  await page.waitForFunction(() => document.querySelector('.train-heads').dataset.step === '30');
  const state = await page.evaluate(() => window.playground.state());
  const { page: again } = await openTraining(new URL(await page.evaluate(() => window.playground.link())).hash.slice(1));
  assert.deepEqual(await again.evaluate(() => window.playground.state()), state, 'the link round-trips the training state');
  await typeAndEnter(page.locator('#trainheads'), '3');
  await page.locator('[data-control="trainheads"] [data-testid="error"]').waitFor();
  assert.ok(await page.getByTestId('train-start').isDisabled(), 'no training on a refused setting');
  await page.setViewportSize({ width: 360, height: 740 });
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0, 'training mode fits 360 px');
  for (const width of [1366, 360]) {  // every select shows any of its options whole
    await page.setViewportSize({ width, height: 740 });
    assert.deepEqual(await cutSelects(page, '[data-testid="training"]'), [], `at ${width} px`);
  }
  const { page: legacy } = await openPage(browser.context, `${server.url}#train=1&module=CausalMultiHeadAttention`);
  assert.equal(await legacy.getByTestId('train').isChecked(), true);
  assert.ok(await legacy.getByTestId('training').isHidden());
  assert.ok(await legacy.getByTestId('link-error').isHidden());
  assert.deepEqual(errors, []);
});

test('gradients: with grads=1 every step card on the loss\'s path shows dL/d(step) beside its values', async () => {
  const { page, errors } = await openPage(browser.context, `${server.url}#grads=1`);
  const r = await page.evaluate(() => { const x = window.playground.result(); return { loss: x.loss, grads: x.steps.map((s) => !!s.grad) }; });
  assert.ok(Number.isFinite(r.loss) && r.grads.every(Boolean), JSON.stringify(r));
  const card = page.locator('[data-step="attn_weights"]');
  await card.scrollIntoViewIfNeeded();
  const grad = card.getByTestId('step-grad');
  await grad.locator('figcaption', { hasText: 'dL/dattn_weights, L = output.sum()' }).waitFor();
  assert.match(await grad.locator('canvas').getAttribute('aria-label'), /gradient dL\/dattn_weights/);
  await page.getByTestId('grads').setChecked(false);
  await page.waitForFunction(() => !window.playground.result().steps[0].grad);
  assert.ok(await grad.isHidden());
  assert.deepEqual(errors, []);
});
