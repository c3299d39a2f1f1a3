// Saves docs/screenshot.png: the page in headless Chromium (playwright-core, served by Vite as in
// tests/browser/harness.mjs) after typing a sentence, at laptop width. Also writes a 360 px wide
// capture to docs/screenshot-360.png to check the narrow layout, and docs/screenshot-train.png:
// training mode (#train=induction) mid-run, once the held-out accuracy has passed --accuracy.
//   node scripts/screenshot.mjs [--sentence "..."] [--out docs/screenshot.png] [--only page|train] [--accuracy 0.9]
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openPage, startServer } from '../tests/browser/harness.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
const sentence = opt('--sentence', "the animal didn't cross the street because it was too tired");
const out = resolve(root, opt('--out', 'docs/screenshot.png'));
const narrowOut = out.replace(/\.png$/, '-360.png');
const trainOut = out.replace(/\.png$/, '-train.png');
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

// The playground after typing the sentence, at laptop width and at 360 px.
async function pageShots(context, url) {
  const { page, errors } = await openPage(context, url);
  await page.setViewportSize({ width: 1366, height: 900 });
  const input = page.getByTestId('tokens-input');
  await input.fill('');
  await input.pressSequentially(sentence, { delay: 5 });
  // Point at a word so the lines view and the heatmap show a selected query.
  const words = sentence.split(/\s+/);
  const focus = Math.max(0, words.indexOf('it'));
  await page.locator('#attention .lines canvas').focus();
  for (let i = 0; i < focus; i++) await page.keyboard.press('ArrowDown');
  await page.locator('#tokens').focus();
  await page.evaluate(() => window.scrollTo(0, 0));
  mkdirSync(dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);

  await page.setViewportSize({ width: 360, height: 780 });
  await page.waitForTimeout(200);
  await page.screenshot({ path: narrowOut, fullPage: false });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  console.log(`wrote ${narrowOut} (horizontal overflow at 360 px: ${overflow} px)`);
  if (errors.length) console.log(`page errors:\n${errors.join('\n')}`);
}

const server = await startServer();
const browser = await launch();
try {
  if (only !== 'page') await trainShot(browser.context, server.url);
  if (only !== 'train') await pageShots(browser.context, server.url);
} finally {
  await browser.close();
  await server.close();
}
