// First-load size of the playground page and of the example lesson page: builds the static site
// (vite build into a temporary folder, as `npm run build` does into dist/), serves it with the
// strict CSP, opens each page in a headless browser and adds up every file it fetches until every
// playground on it is ready (HTML, JS, CSS, WASM, icons, shaders), each gzipped (zlib level 9, what
// `gzip -9` on a static host gives). Prints a table per page; exits 1 when a total is over the
// budget (300 KB, issue 33). --isolated: served with the cross-origin isolation headers, where the
// page loads the threaded build (docs/threads.md): measured and printed, the budget not applied
// (it is the default page's, what a course page's host serves).
//   node scripts/measure-size.mjs [--budget 300] [--json build/size.json] [--isolated]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { launch } from '../tests/browser/harness.mjs';
import { madeOnce } from './made-once.mjs';
import { ISOLATION_HEADERS, serveStatic } from '../tests/browser/static-server.mjs';

export const BUDGET_KB = 300;
// The pages measured, relative to the site's root.
export const PAGES = { playground: '', lesson: 'examples/lesson.html' };

// What one page load of `url` fetches: [{origin, path, type, raw, gzip, count}] in bytes, sorted by
// gzip size, each URL once (`count` times requested: the lesson page's demos are the playground
// page in iframes, which a host's caching serves from the first fetch). Waits for every playground
// on the page (the page itself, or each <attention-playground> frame the browser loaded: they are
// loading="lazy", so the ones far below the fold wait for a scroll) to be ready, its backend
// decided (WebGPU's pipelines compiled when it is used), and the network quiet.
// The network counts as quiet after QUIET_MS with no request sent and no response come: Playwright's
// 'networkidle' also waits for every request it saw start to end, and in Firefox, over WebDriver
// BiDi, an end it never hears of (one lesson-page load in a CI run, twice) keeps it waiting past
// any timeout.
const QUIET_MS = 500;
async function networkQuiet(page, last, timeout = 30000) {
  const t0 = Date.now();
  while (Date.now() - last() < QUIET_MS) {
    if (Date.now() - t0 > timeout) throw new Error(`the network was not quiet for ${QUIET_MS} ms within ${timeout} ms`);
    await page.waitForTimeout(QUIET_MS - (Date.now() - last()) + 10);
  }
}

export async function firstLoad(context, url) {
  const page = await context.newPage();
  const files = new Map();
  const pending = [];
  let lastActivity = Date.now();
  page.on('request', () => { lastActivity = Date.now(); });
  page.on('response', (response) => {
    lastActivity = Date.now();
    pending.push(response.body().then((body) => {
      const { origin, pathname: path, search } = new URL(response.url());
      const key = `${origin}${path}${search}`;
      const seen = files.get(key);
      if (seen) { seen.count++; return; }
      files.set(key, { origin, path, type: (response.headers()['content-type'] ?? '').split(';')[0], raw: body.length, gzip: gzipSync(body, { level: 9 }).length, count: 1 });
    }, () => {}));
  });
  await page.goto(url);
  await networkQuiet(page, () => lastActivity);
  for (const frame of page.frames()) {
    if (frame.url() === 'about:blank' || !(await frame.evaluate(() => !!document.getElementById('tokens-card')))) continue;
    await frame.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    await frame.waitForSelector('body[data-backend-ready="true"]', { timeout: 60000 });
  }
  await networkQuiet(page, () => lastActivity);
  await Promise.all(pending);
  await page.close();
  return [...files.values()].sort((a, b) => b.gzip - a.gzip);
}

// The static site (web/vite.config.mjs) built into outDir: once per npm test run (made-once.mjs).
export async function buildSite(outDir) {
  await madeOnce('site', outDir, (dir) => build({
    configFile: fileURLToPath(new URL('../web/vite.config.mjs', import.meta.url)),
    logLevel: 'error',
    build: { outDir: dir, emptyOutDir: true },
  }));
}

async function main() {
  const args = process.argv.slice(2);
  const budget = Number(args.includes('--budget') ? args[args.indexOf('--budget') + 1] : BUDGET_KB);
  const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : null;
  const isolated = args.includes('--isolated');
  const dist = mkdtempSync(join(tmpdir(), 'attn-size-'));
  let site, browser;
  try {
    await buildSite(dist);
    site = await serveStatic(dist, isolated ? { headers: ISOLATION_HEADERS } : {});
    browser = await launch();
    const kb = (n) => (n / 1000).toFixed(1);
    const report = {};
    for (const [name, path] of Object.entries(PAGES)) {
      const files = await firstLoad(browser.context, `${site.url}${path}`);
      const total = files.reduce((s, f) => ({ raw: s.raw + f.raw, gzip: s.gzip + f.gzip }), { raw: 0, gzip: 0 });
      console.log(`\n${name} (/${path}):\n| file | type | requests | raw KB | gzip KB |\n|---|---|---:|---:|---:|`);
      for (const f of files) console.log(`| ${f.path} | ${f.type} | ${f.count} | ${kb(f.raw)} | ${kb(f.gzip)} |`);
      console.log(`| **total (${files.length} files)** | | | ${kb(total.raw)} | **${kb(total.gzip)}** |`);
      console.log(`first load of ${name}: ${kb(total.gzip)} KB gzipped ${isolated ? '(cross-origin isolated: the threaded build; no budget)' : `(budget ${budget} KB)`}`);
      report[name] = { totalGzipBytes: total.gzip, totalRawBytes: total.raw, files };
    }
    if (jsonOut) {
      mkdirSync(dirname(jsonOut), { recursive: true });
      writeFileSync(jsonOut, `${JSON.stringify({ budgetKB: budget, pages: report }, null, 1)}\n`);
    }
    process.exitCode = isolated || Object.values(report).every((r) => r.totalGzipBytes <= budget * 1000) ? 0 : 1;
  } finally {
    await browser?.close();
    await site?.close();
    rmSync(dist, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
