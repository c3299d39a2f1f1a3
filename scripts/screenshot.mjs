// Saves docs/screenshot.png: the page in headless Chromium (playwright-core, served by Vite as in
// tests/browser/harness.mjs) after typing a sentence, at laptop width. Also writes a 360 px wide
// capture to docs/screenshot-360.png to check the narrow layout.
//   node scripts/screenshot.mjs [--sentence "..."] [--out docs/screenshot.png]
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

const server = await startServer();
const browser = await launch();
try {
  const { page, errors } = await openPage(browser.context, server.url);
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
} finally {
  await browser.close();
  await server.close();
}
