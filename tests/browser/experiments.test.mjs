// Experiments mode (docs/experiments.md) in Chromium and Firefox: `#experiment=induction` opens
// the shipped induction model with its layers x heads tiles; ranking the heads puts first the head
// the held-out pattern scores call induction (or the previous-token head below it); pressing it
// costs >= 0.3 held-out accuracy and pressing it again restores the baseline exactly, by mouse
// and by keyboard; patching and attribution patching have a cell per layer x head; the logit
// lens's last row is the model's prediction; the link round-trips ablated heads and inputs; the
// page passes axe (WCAG 2.1 AA), reads in Chinese, shows the heads and the metric on a phone's
// first screen, and runs in <attention-playground experiment="induction"> under the strict CSP.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { audit } from './a11y.mjs';
import { launch, openPage, startServer, test } from './harness.mjs';
import { serveStatic } from './static-server.mjs';
import { buildSite } from '../../scripts/measure-size.mjs';

let server, browser;
before(async () => {
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const experiment = (page) => page.evaluate(() => window.playground.experiment());
// The mode's numbers for `ablated` heads ([[l, h]]), and its analysis, are in.
const settled = (page, n = 0) => page.waitForFunction((k) => {
  const e = window.playground.experiment();
  return e && e.ablated.length === k && e.patching.cells.length > 0;
}, n, { timeout: 60000, polling: 50 });
const tile = (page, l, h) => page.locator(`[data-testid="exp-head"][data-layer="${l}"][data-head="${h}"]`);

async function open(hash, b = browser) {
  const { page, errors } = await openPage(b.context, `${server.url}${hash}`);
  await page.setViewportSize({ width: 1280, height: 900 });
  await settled(page);
  return { page, errors };
}

test('#experiment=induction: tiles, ranking, a press costs >= 0.3 and a second press restores the baseline exactly; patching, lens, link', async () => {
  const { page, errors } = await open('#experiment=induction');
  const e0 = await experiment(page);
  const [L, H] = [2, 4];
  assert.equal(await page.getByTestId('exp-head').count(), L * H, 'a tile per layer x head');
  assert.equal(await tile(page, 1, 3).getAttribute('aria-pressed'), 'false');
  assert.equal(e0.accuracy, e0.baseline_accuracy);
  assert.deepEqual(e0.ranking, []);

  await page.getByTestId('exp-rank-run').click();
  await page.waitForFunction(() => window.playground.experiment()?.ranking.length === 8, null, { timeout: 60000 });
  const { ranking, scores } = await experiment(page);
  const top = ranking[0];
  const all = scores.flatMap((layer, l) => layer.map((s, h) => ({ layer: l, head: h, ...s })));
  const induction = all.reduce((a, b) => (b.induction > a.induction ? b : a));
  const prevBelow = top.layer === induction.layer - 1 && all.find((x) => x.layer === top.layer && x.head === top.head).previous >= 0.5;
  assert.ok((top.layer === induction.layer && top.head === induction.head) || prevBelow, `ranked first ${JSON.stringify(top)}, induction ${JSON.stringify(induction)}`);
  assert.equal(await page.locator('[data-testid="exp-rank-bars"] tbody tr').count(), 8);

  await tile(page, top.layer, top.head).click();
  await settled(page, 1);
  const off = await experiment(page);
  assert.deepEqual(off.ablated, [[top.layer, top.head]]);
  assert.ok(off.baseline_accuracy - off.accuracy >= 0.3, `${off.baseline_accuracy} -> ${off.accuracy}`);
  assert.equal(off.accuracy, top.accuracy, 'the press and the ranking agree');
  assert.equal(await tile(page, top.layer, top.head).getAttribute('aria-pressed'), 'true');
  assert.equal(Number(await page.getByTestId('exp-metric').getAttribute('data-accuracy')), off.accuracy);
  assert.ok(off.latencyMs > 0, 'the press-to-numbers time is measured');

  // the link keeps the ablated head and an edited corrupted sequence
  const corrupted = `${e0.inputs.corrupted.slice(0, 10)}${e0.inputs.corrupted.at(10) === 'P' ? 'O' : 'P'}${e0.inputs.corrupted.slice(11)}`;
  await page.getByTestId('exp-corrupted').fill(corrupted);
  await page.waitForFunction((c) => window.playground.experiment()?.inputs.corrupted === c, corrupted);
  const link = await page.evaluate(() => window.playground.link());
  assert.match(link, /experiment=induction/);
  assert.match(link, new RegExp(`ablate=${top.layer}.${top.head}`));

  await tile(page, top.layer, top.head).click();
  await settled(page, 0);
  const back = await experiment(page);
  assert.equal(back.accuracy, back.baseline_accuracy, 'a second press restores the baseline exactly');
  assert.equal(await tile(page, top.layer, top.head).getAttribute('aria-pressed'), 'false');

  // patching and attribution patching: one cell per layer x head
  for (const id of ['exp-patching', 'exp-attribution']) assert.equal(await page.getByTestId(id).getAttribute('data-cells'), String(L * H), id);
  assert.equal(back.patching.cells.length, L * H);
  // the residual map's rows read apart: each label at most the 12 characters the heatmap draws
  const rows = [...(await page.getByTestId('exp-patching-residual').locator('canvas').getAttribute('aria-label')).matchAll(/row “([^”]+)”/g)].map((m) => m[1]);
  assert.deepEqual(rows, ['x', '0.x_attn', '0.x_mlp', '1.x_attn', '1.x_mlp']);
  // the activation patching map's colour scale: its ends are ± the largest change a cell restores
  // (0 and the largest if none is negative)
  const effects = back.patching.cells.map((c) => Math.fround(c.metric - back.patching.corrupted_metric));
  const reach = Math.max(...effects.map(Math.abs));
  const ends = await page.getByTestId('exp-patching').getByTestId('lab-legend').locator('span').allTextContents();
  assert.deepEqual([Number(ends[0]), Number(ends[2])].map((v) => v.toFixed(3)), [Math.min(...effects) < 0 ? (-reach).toFixed(3) : '0.000', reach.toFixed(3)], `the scale's ends ${ends}`);
  assert.ok(Number(await page.getByTestId('exp-correlation-heads').getAttribute('data-r')) > 0.5);
  // the logit lens's last row is the model's prediction at the answer position
  await page.getByTestId('exp-view-lens').click();
  const lastRow = page.locator('[data-testid="exp-lens"] tr').last();
  const answerCell = lastRow.locator('td.answer');
  assert.equal(Number(await answerCell.getAttribute('data-id')), back.predicted);
  assert.equal(back.lens.at(-1).top[back.inputs.position], back.predicted);
  // direct logit attribution: its bars add up to the total
  await page.getByTestId('exp-view-dla').click();
  const values = await page.locator('[data-testid="exp-dla-bars"] td[data-value]').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
  assert.ok(Math.abs(values.reduce((a, b) => a + b, 0) - back.dla.total) < 1e-3, `${values} vs ${back.dla.total}`);

  // the link round trip: a new page from it has the head switched off and the edited input
  const { page: again } = await openPage(browser.context, link);
  await settled(again, 1);
  const restored = await experiment(again);
  assert.deepEqual(restored.ablated, [[top.layer, top.head]]);
  assert.equal(restored.inputs.corrupted, corrupted);
  assert.equal(restored.accuracy, off.accuracy);
  assert.equal(await tile(again, top.layer, top.head).getAttribute('aria-pressed'), 'true');
  await again.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('keyboard and axe: every head tile is reached with Tab and pressed with Space; WCAG 2.1 AA, 0 violations; a bad sequence is named inline and the lab recovers', async () => {
  const { page } = await open('#experiment=induction');
  await audit(page, 'experiments mode');
  const clean = (await experiment(page)).inputs.clean;
  await page.getByTestId('exp-clean').fill(`${clean.slice(0, 4)}?${clean.slice(5)}`);
  await page.getByTestId('exp-error').filter({ hasText: 'expclean: "?" is not a token of the task' }).waitFor();
  assert.equal(await page.getByTestId('exp-clean').getAttribute('aria-invalid'), 'true');
  await page.getByTestId('exp-clean').fill(clean);
  await page.locator('[data-testid="exp-error"][hidden]').waitFor({ state: 'attached' });
  assert.equal((await experiment(page)).inputs.clean, clean);
  await page.getByTestId('exp-clean').focus();
  const reached = [];
  for (let i = 0; i < 40 && reached.length < 8; i++) {
    await page.keyboard.press('Tab');
    const at = await page.evaluate(() => document.activeElement?.dataset.testid === 'exp-head' && `${document.activeElement.dataset.layer}.${document.activeElement.dataset.head}`);
    if (at && !reached.includes(at)) reached.push(at);
    if (at === '1.3') {
      await page.keyboard.press('Space');
      await settled(page, 1);
      assert.deepEqual((await experiment(page)).ablated, [[1, 3]]);
      await page.keyboard.press('Space');
      await settled(page, 0);
    }
  }
  assert.equal(reached.length, 8, `tiles reached: ${reached}`);
  await page.close();
});

test('training mode\'s model into the lab: a CausalTransformer trained in the tab on copy, its heads switched off, patched and read through the lens', async () => {
  const { page, errors } = await openPage(browser.context, `${server.url}#train=copy&trainsteps=150`);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.locator('[data-testid="train-start"]:not([disabled])').waitFor({ timeout: 30000 });
  await page.getByTestId('train-start').click();
  await page.waitForFunction(() => window.playground.training()?.step === 150 && !window.playground.training().running, null, { timeout: 120000 });
  await page.getByTestId('train-experiment').click();
  await page.waitForFunction(() => window.playground.experiment()?.source === 'trained' && window.playground.experiment().patching.cells.length > 0, null, { timeout: 60000 });
  const e = await experiment(page);
  assert.equal(e.task, 'copy');
  assert.equal(await page.getByTestId('exp-head').count(), 1, 'the copy task\'s CausalTransformer: 1 layer x 1 head');
  assert.equal(e.patching.cells[0].step, 'layers.0.attn.context_vec_heads');
  assert.equal(e.lens.at(-1).step, 'layers.0.norm2');
  assert.equal(e.dla, null, 'no direct logit attribution for a post-norm CausalTransformer');
  assert.match(await page.getByTestId('exp-dla').textContent(), /needs a GPT/);
  await tile(page, 0, 0).click();
  await settled(page, 1);
  const off = await experiment(page);
  assert.ok(off.accuracy < off.baseline_accuracy, `${off.baseline_accuracy} -> ${off.accuracy}`);
  assert.match(await page.evaluate(() => window.playground.link()), /expsource=trained/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('in Chinese, and on a phone: the head grid and the metric on the first screen at 360 x 780', async () => {
  const { page } = await open('#experiment=induction&lang=zh');
  assert.equal(await page.locator('#h-experiments').textContent(), '实验：这些注意力头在做什么？');
  assert.match(await tile(page, 0, 0).getAttribute('title'), /第 0 层第 0 个头/);
  assert.match(await page.getByTestId('exp-metric').textContent(), /留出集准确率/);
  await tile(page, 1, 2).click();
  await settled(page, 1);
  const e = await experiment(page);
  assert.ok(e.accuracy < e.baseline_accuracy);
  assert.match(await tile(page, 1, 2).getAttribute('title'), /已关掉/);
  await page.getByTestId('exp-clean').fill('AB?');
  await page.getByTestId('exp-error').filter({ hasText: 'expclean：“?”不是该任务的词元' }).waitFor();
  await page.close();
  const phone = await launch({ viewport: { width: 360, height: 780 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 });
  try {
    const { page: p } = await openPage(phone.context, `${server.url}#experiment=induction`);
    await settled(p);
    const box = async (sel) => p.locator(sel).first().boundingBox();
    const grid = await box('[data-testid="exp-heads"]'), metric = await box('[data-testid="exp-metric"]');
    assert.ok(grid.y + grid.height <= 780 && metric.y + metric.height <= 780, `heads ${JSON.stringify(grid)}, metric ${JSON.stringify(metric)}`);
    assert.equal(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0, 'nothing scrolls sideways');
  } finally {
    await phone.close();
  }
});

test('<attention-playground experiment="induction"> under the strict CSP: the lab in the built page, no error or violation', async () => {
  const dist = mkdtempSync(join(tmpdir(), 'attn-lab-'));
  let site;
  try {
    await buildSite(dist);
    writeFileSync(join(dist, 'favicon.ico'), '');   // the host page's own icon, asked for by the browser
    writeFileSync(join(dist, 'lab-embed.html'), '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lab</title><script type="module" src="attention-playground.js"></script></head><body><attention-playground experiment="induction" height="1400px"></attention-playground></body></html>\n');
    site = await serveStatic(dist);
    const page = await browser.context.newPage();
    const problems = [];
    page.on('console', (m) => { if (m.type() === 'error' || /Content.Security.Policy/i.test(m.text())) problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(`${site.url}lab-embed.html`);
    const frame = await (await page.locator('attention-playground').evaluateHandle((el) => el.shadowRoot.querySelector('iframe'))).asElement().contentFrame();
    await frame.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
    await frame.evaluate(() => document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective}`)));
    await frame.waitForFunction(() => window.playground.experiment()?.patching.cells.length === 8, null, { timeout: 60000 });
    await frame.locator('[data-testid="exp-head"][data-layer="0"][data-head="0"]').click();
    await frame.waitForFunction(() => window.playground.experiment()?.ablated.length === 1, null, { timeout: 60000 });
    const e = await frame.evaluate(() => window.playground.experiment());
    assert.equal(e.task, 'induction');
    assert.ok(e.accuracy < e.baseline_accuracy);
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    await site?.close();
    rmSync(dist, { recursive: true, force: true });
  }
});
