// The experiments lab's timings and bytes (docs/experiments.md), in the built site served with the
// strict CSP: a head press's latency (the click to its numbers on the page: the held-out run of the
// shipped induction model over 256 sequences in the mode's worker) over --presses presses that switch
// a head off (and as many that switch it back on: the baseline, kept), the ranking's time (8 heads,
// each alone), and what opening the mode adds to the first view (every file fetched until the lab's
// numbers are in, gzip -9, minus the playground's first view).
//   node scripts/measure-lab.mjs [--presses 20]      (BROWSER=firefox for Firefox)
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch } from '../tests/browser/harness.mjs';
import { serveStatic } from '../tests/browser/static-server.mjs';
import { buildSite, firstLoad } from './measure-size.mjs';

const args = process.argv.slice(2);
const presses = Number(args.includes('--presses') ? args[args.indexOf('--presses') + 1] : 20);
const quantile = (xs, q) => { const s = xs.slice().sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };
const kb = (n) => (n / 1000).toFixed(1);

const dist = mkdtempSync(join(tmpdir(), 'attn-lab-'));
let site, browser;
try {
  await buildSite(dist);
  site = await serveStatic(dist);
  browser = await launch();
  const first = await firstLoad(browser.context, site.url);
  const page = await browser.context.newPage();
  const files = new Map();
  page.on('response', (r) => r.body().then((b) => files.set(new URL(r.url()).pathname, b.length), () => {}));
  await page.goto(`${site.url}#experiment=induction`);
  await page.waitForFunction(() => window.playground?.experiment()?.patching.cells.length > 0, null, { timeout: 120000 });
  const { gzipSync } = await import('node:zlib');
  const seen = new Set(first.map((f) => f.path));
  const extra = [];
  for (const [path] of files) {
    if (seen.has(path)) continue;
    const body = await (await fetch(new URL(path, site.url))).arrayBuffer();
    extra.push({ path, raw: body.byteLength, gzip: gzipSync(Buffer.from(body), { level: 9 }).length });
  }
  extra.sort((a, b) => b.gzip - a.gzip);
  const tile = page.locator('[data-testid="exp-head"][data-layer="0"][data-head="2"]');
  const off = [], on = [];
  for (let i = 0; i < 2 * presses; i++) {
    const n = i % 2 === 0 ? 1 : 0;
    await tile.click();
    await page.waitForFunction((k) => window.playground.experiment()?.ablated.length === k, n);
    (n ? off : on).push((await page.evaluate(() => window.playground.experiment())).latencyMs);
  }
  const t0 = Date.now();
  await page.getByTestId('exp-rank-run').click();
  await page.waitForFunction(() => window.playground.experiment()?.ranking.length > 0, null, { timeout: 120000 });
  const wall = Date.now() - t0;
  const e = await page.evaluate(() => window.playground.experiment());
  const version = browser.context.browser()?.version() ?? '';
  console.log(`CPU: ${cpus()[0].model} (${cpus().length} cores); browser: ${process.env.BROWSER ?? 'chromium'} ${version}`);
  console.log(`| measure | value |\n|---|---:|`);
  console.log(`| press (switch a head off) to numbers, median of ${off.length} | ${quantile(off, 0.5).toFixed(1)} ms |`);
  console.log(`| press (switch a head off) to numbers, p95 / first | ${quantile(off, 0.95).toFixed(1)} / ${off[0].toFixed(1)} ms |`);
  console.log(`| press (switch it on again: the baseline, kept), median | ${quantile(on, 0.5).toFixed(1)} ms |`);
  console.log(`| ranking 8 heads (worker / click to bars) | ${e.rankMs.toFixed(0)} / ${wall} ms |`);
  console.log(`| first view (playground) | ${kb(first.reduce((s, f) => s + f.gzip, 0))} KB gzip |`);
  console.log(`| opening the lab adds (${extra.length} files) | ${kb(extra.reduce((s, f) => s + f.gzip, 0))} KB gzip |`);
  for (const f of extra) console.log(`|   ${f.path} | ${kb(f.gzip)} KB gzip (${kb(f.raw)} raw) |`);
} finally {
  await browser?.close();
  await site?.close();
  rmSync(dist, { recursive: true, force: true });
}
