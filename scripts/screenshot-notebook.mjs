// Saves docs/screenshot-notebook.png for docs/embedding.md, "In a notebook": tests/notebook/three-seeds.ipynb
// executed and exported by Debian's Jupyter (tests/notebook/run-notebook.mjs), opened from disk in
// headless Chromium with the network off, and the output of its seed-000 cell (show(mha, x, x, x,
// mask, tokens=...)) captured.
//   node scripts/screenshot-notebook.mjs [--out docs/screenshot-notebook.png]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../tests/browser/harness.mjs';
import { runNotebook } from '../tests/notebook/run-notebook.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const out = resolve(root, args.includes('--out') ? args[args.indexOf('--out') + 1] : 'docs/screenshot-notebook.png');

const tmp = mkdtempSync(join(tmpdir(), 'attn-notebook-shot-'));
const browser = await launch({ viewport: { width: 1180, height: 900 } });
try {
  const { html } = await runNotebook(tmp);
  await browser.context.setOffline(true);
  const page = await browser.context.newPage();
  await page.goto(`file://${html}`);
  const frame = page.locator('iframe.attention-playground').nth(1);
  await (await frame.elementHandle()).contentFrame().then((f) => f.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 60000 }));
  await frame.scrollIntoViewIfNeeded();
  await page.waitForTimeout(500);  // the heatmaps redraw once the frame is on screen
  await frame.screenshot({ path: out, timeout: 120000 });
  console.log(`${out}: the seed-000 view of the exported notebook`);
} finally {
  await browser.close();
  rmSync(tmp, { recursive: true, force: true });
}
