// Saves docs/screenshot.png: the page in headless Chromium (playwright-core, served by Vite as in
// tests/browser/harness.mjs) after typing a sentence, at laptop width. Also writes the phone layout
// (a touch screen, as tests/browser/phone.test.mjs opens it) at 360×780 and 390×844 to
// docs/screenshot-phone-360.png and -phone-390.png, printing where the input, the heatmap and the
// first step card are, docs/screenshot-train.png: training mode (#train=induction) mid-run,
// once the held-out accuracy has passed --accuracy, and docs/screenshot-generate.png: Generate
// mode after running the shipped language model to 16 tokens, and docs/screenshot-lab.png: the
// experiments lab on the shipped induction model (#experiment=induction) with the heads ranked and
// the first of them switched off.
//   node scripts/screenshot.mjs [--sentence "..."] [--out docs/screenshot.png] [--only page|phone|train|generate|lab] [--accuracy 0.9]
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openPage, startServer } from '../tests/browser/harness.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
const sentence = opt('--sentence', "the animal didn't cross the street because it was too tired");
const out = resolve(root, opt('--out', 'docs/screenshot.png'));
const phoneOut = (width) => out.replace(/\.png$/, `-phone-${width}.png`);
const trainOut = out.replace(/\.png$/, '-train.png');
const generateOut = out.replace(/\.png$/, '-generate.png');
const labOut = out.replace(/\.png$/, '-lab.png');
const only = opt('--only', '');
const accuracy = Number(opt('--accuracy', '0.9'));

// Training mode while induction trains: the chart half way, the heads turning into the pattern.
async function trainShot(context, url) {
  const { page, errors } = await openPage(context, `${url}#train=induction`);
  await page.setViewportSize({ width: 1366, height: 1180 });
  await page.locator('[data-testid="train-start"]:not([disabled])').waitFor();
  await page.getByTestId('train-start').click();
  await page.waitForFunction((a) => (window.playground.training().accuracy ?? 0) >= a, accuracy, { timeout: 120000 });
  await page.evaluate(() => document.getElementById('training').scrollIntoView());
  await page.waitForTimeout(300);
  mkdirSync(dirname(trainOut), { recursive: true });
  await page.screenshot({ path: trainOut });
  const t = await page.evaluate(() => window.playground.training());
  console.log(`wrote ${trainOut} (step ${t.step}, held-out accuracy ${t.accuracy.toFixed(3)}, running: ${t.running})`);
  if (errors.length) console.log(`page errors:\n${errors.join('\n')}`);
  await page.close();
}

// Generate mode: the shipped language model continues a prompt, 16 tokens with the KV cache.
async function generateShot(context, url) {
  const { page, errors } = await openPage(context, `${url}#generate=1&genprompt=to+be+or+not+to&genmax=16&genseed=3`);
  await page.setViewportSize({ width: 1366, height: 1000 });
  await page.locator('[data-testid="generate-run"]:not([disabled])').waitFor();
  await page.getByTestId('generate-run').click();
  await page.waitForFunction(() => { const g = window.playground.generation(); return g && !g.running && g.steps >= 16; }, null, { timeout: 60000 });
  await page.evaluate(() => document.getElementById('generation').scrollIntoView());
  await page.waitForTimeout(300);
  mkdirSync(dirname(generateOut), { recursive: true });
  await page.screenshot({ path: generateOut });
  console.log(`wrote ${generateOut}`);
  if (errors.length) console.log(`page errors:\n${errors.join('\n')}`);
  await page.close();
}

// The experiments lab: the heads ranked, the one ranked first pressed (switched off).
async function labShot(context, url) {
  const { page, errors } = await openPage(context, `${url}#experiment=induction`);
  await page.setViewportSize({ width: 1366, height: 1060 });
  await page.waitForFunction(() => window.playground.experiment()?.patching.cells.length > 0, null, { timeout: 60000 });
  await page.getByTestId('exp-rank-run').click();
  await page.waitForFunction(() => window.playground.experiment()?.ranking.length > 0, null, { timeout: 60000 });
  const [top] = (await page.evaluate(() => window.playground.experiment())).ranking;
  await page.locator(`[data-testid="exp-head"][data-layer="${top.layer}"][data-head="${top.head}"]`).click();
  await page.waitForFunction(() => window.playground.experiment()?.ablated.length === 1);
  await page.evaluate(() => { document.activeElement.blur(); document.getElementById('experiments').scrollIntoView(); });
  await page.waitForTimeout(300);
  await page.screenshot({ path: labOut });
  const e = await page.evaluate(() => window.playground.experiment());
  console.log(`wrote ${labOut} (layer ${top.layer}, head ${top.head} off: held-out accuracy ${e.baseline_accuracy.toFixed(4)} -> ${e.accuracy.toFixed(4)})`);
  if (errors.length) console.log(`page errors:\n${errors.join('\n')}`);
  await page.close();
}

// Picks the query "it" (or the first word) so the lines view and the heatmap show a selected row.
async function pointAtIt(page) {
  const words = sentence.split(/\s+/);
  const focus = Math.max(0, words.indexOf('it'));
  await page.locator('#attention .lines canvas').focus();
  for (let i = 0; i < focus; i++) await page.keyboard.press('ArrowDown');
  await page.locator('#tokens').focus();
}

// The playground after typing the sentence, at laptop width.
async function pageShots(context, url) {
  const { page, errors } = await openPage(context, url);
  await page.setViewportSize({ width: 1366, height: 900 });
  const input = page.getByTestId('tokens-input');
  await input.fill('');
  await input.pressSequentially(sentence, { delay: 5 });
  await pointAtIt(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  mkdirSync(dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
  if (errors.length) console.log(`page errors:\n${errors.join('\n')}`);
}

// Where the first screen ends on a phone: document tops (px) of the input, the attention heatmap
// (its figure and canvas), the first step card, the page's height and any sideways overflow.
const phonePositions = (page) => page.evaluate(() => {
  const top = (sel) => Math.round(document.querySelector(sel).getBoundingClientRect().top + window.scrollY);
  return {
    input: top('[data-testid="tokens-input"]'), heatmap: top('[data-testid="attention-heatmap"]'),
    canvas: top('[data-testid="attention-heatmap"] canvas'), step: top('[data-testid="step"]'),
    height: document.documentElement.scrollHeight, sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  };
});

// The phone layout's first screen as a student sees it after loading (positions) and after typing.
async function phoneShots(url) {
  for (const viewport of [{ width: 360, height: 780 }, { width: 390, height: 844 }]) {
    const phone = await launch({ viewport, hasTouch: true, isMobile: true, deviceScaleFactor: 2 });
    try {
      const { page, errors } = await openPage(phone.context, url);
      await page.waitForTimeout(300);
      const loaded = await phonePositions(page);
      const input = page.getByTestId('tokens-input');
      await input.fill('');
      await input.pressSequentially(sentence, { delay: 5 });
      await pointAtIt(page);
      await page.evaluate(() => { document.activeElement.blur(); window.scrollTo(0, 0); });
      await page.waitForTimeout(300);
      await page.screenshot({ path: phoneOut(viewport.width) });
      console.log(`wrote ${phoneOut(viewport.width)}; at ${viewport.width}×${viewport.height} after load: ${JSON.stringify(loaded)}`);
      if (errors.length) console.log(`page errors:\n${errors.join('\n')}`);
    } finally {
      await phone.close();
    }
  }
}

const server = await startServer();
const browser = await launch();
try {
  if (!only || only === 'train') await trainShot(browser.context, server.url);
  if (!only || only === 'generate') await generateShot(browser.context, server.url);
  if (!only || only === 'lab') await labShot(browser.context, server.url);
  if (!only || only === 'page') await pageShots(browser.context, server.url);
  if (!only || only === 'phone') await phoneShots(server.url);
} finally {
  await browser.close();
  await server.close();
}
