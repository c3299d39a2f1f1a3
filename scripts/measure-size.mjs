// First-load size of the playground: builds the static site (vite build into a temporary folder,
// as `npm run build` does into dist/), serves it with the strict CSP, opens index.html in headless
// Chromium and adds up every response the page needs until it is ready (HTML, JS, CSS, WASM, icons,
// shaders), each gzipped (zlib level 9, what `gzip -9` on a static host gives). Prints a table per
// file and the total; exits 1 when the total is over the budget (500 KB, issue 7).
//   node scripts/measure-size.mjs [--budget 500] [--json build/size.json]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { launch } from '../tests/browser/harness.mjs';
import { serveStatic } from '../tests/browser/static-server.mjs';

export const BUDGET_KB = 500;

// Responses of one page load of `url`: [{origin, path, type, raw, gzip}] in bytes, sorted by gzip size.
export async function firstLoad(context, url) {
  const page = await context.newPage();
  const files = [];
  const pending = [];
  page.on('response', (response) => {
    pending.push(response.body().then((body) => {
      const { origin, pathname: path } = new URL(response.url());
      files.push({ origin, path, type: (response.headers()['content-type'] ?? '').split(';')[0], raw: body.length, gzip: gzipSync(body, { level: 9 }).length });
    }, () => {}));
  });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  await page.waitForSelector('body[data-backend-ready="true"]', { timeout: 60000 });
  await page.waitForLoadState('networkidle');
  await Promise.all(pending);
  await page.close();
  return files.sort((a, b) => b.gzip - a.gzip);
}

export async function buildSite(outDir) {
  await build({
    configFile: fileURLToPath(new URL('../web/vite.config.mjs', import.meta.url)),
    logLevel: 'error',
    build: { outDir, emptyOutDir: true },
  });
}

async function main() {
  const args = process.argv.slice(2);
  const budget = Number(args.includes('--budget') ? args[args.indexOf('--budget') + 1] : BUDGET_KB);
  const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : null;
  const dist = mkdtempSync(join(tmpdir(), 'attn-size-'));
  let site, browser;
  try {
    await buildSite(dist);
    site = await serveStatic(dist);
    browser = await launch();
    const files = await firstLoad(browser.context, site.url);
    const kb = (n) => (n / 1000).toFixed(1);
    const total = files.reduce((s, f) => ({ raw: s.raw + f.raw, gzip: s.gzip + f.gzip }), { raw: 0, gzip: 0 });
    console.log('| file | type | raw KB | gzip KB |\n|---|---|---:|---:|');
    for (const f of files) console.log(`| ${f.path} | ${f.type} | ${kb(f.raw)} | ${kb(f.gzip)} |`);
    console.log(`| **total (${files.length} files)** | | ${kb(total.raw)} | **${kb(total.gzip)}** |`);
    console.log(`first load: ${kb(total.gzip)} KB gzipped (budget ${budget} KB)`);
    if (jsonOut) {
      mkdirSync(dirname(jsonOut), { recursive: true });
      writeFileSync(jsonOut, `${JSON.stringify({ budgetKB: budget, totalGzipBytes: total.gzip, totalRawBytes: total.raw, files }, null, 1)}\n`);
    }
    process.exitCode = total.gzip <= budget * 1000 ? 0 : 1;
  } finally {
    await browser?.close();
    await site?.close();
    rmSync(dist, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
