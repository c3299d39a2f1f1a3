// The notebook entry point (bindings/python, docs/embedding.md, "In a notebook"): tests/notebook/three-seeds.ipynb
// (seed 004's MultiHeadAttention, seed 000's with a mask, seed 002's Transformer with ids and a
// vocabulary) executed by Debian's Jupyter, `jupyter nbconvert --to html --execute`, with the package
// from this checkout and the notebook page built into a temporary folder. The notebook itself asserts
// each view's core outputs (View.outputs(): the WASM core under Node) against the module's PyTorch
// forward. The exported HTML is then opened from disk in headless Chromium or Firefox, offline, under a CSP that
// allows no origin at all (file: only for the export's own require.js and MathJax from Debian's
// packages): three views render on their own, each one's output equals PyTorch's, no console error.
// Skipped, saying so, where python3-torch is not installed (scripts/setup.sh installs it where Debian has it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { runNotebook } from '../notebook/run-notebook.mjs';
import { launch, test } from './harness.mjs';

const torch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { encoding: 'utf8' });
const skip = torch.status === 0 ? false
  : 'python3-torch is not installed, so the notebook cannot run PyTorch (scripts/setup.sh installs it where Debian ships it for this architecture)';
// No origin is reachable: inline code (the notebook's own output), WASM, data: URLs (the inlined
// kernels), and file: for what nbconvert's template loads from Debian's libjs packages, whose
// MathJax 2.7 evaluates its configuration blocks ('unsafe-eval'). The playground's frames keep their
// own policy as well (web/vite.notebook.config.mjs: no eval, no origin), and both apply there.
const CSP = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval' file:; style-src 'unsafe-inline' file:; "
  + "font-src file: data:; img-src file: data: blob:; connect-src data:";

let tmp, browser;
before(async () => {
  if (skip) return;
  tmp = mkdtempSync(join(tmpdir(), 'attn-notebook-'));
  browser = await launch();
});
after(async () => {
  await browser?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// The fixtures' tolerance: |a - b| <= atol + rtol |b| everywhere (b PyTorch's), and the largest |a - b|.
function close(got, want, atol = 1e-5, rtol = 1e-4) {
  let ok = got.length === want.length, maxAbs = 0;
  want.forEach((w, i) => {
    const d = Math.abs(got[i] - w);
    maxAbs = Math.max(maxAbs, d);
    if (!(d <= atol + rtol * Math.abs(w))) ok = false;
  });
  return { ok, maxAbs };
}

test('three seed modules shown in a notebook: executed by nbconvert, the exported HTML works from disk offline with their PyTorch numbers', { skip, timeout: 240000 }, async () => {
  // executed once per npm test run (run-notebook.mjs): the second engine's pass opens the same export
  const { html, expected, executeMs } = await runNotebook(tmp);
  assert.deepEqual(expected.map((e) => e.module), ['CausalMultiHeadAttention', 'MultiHeadAttention', 'Transformer']);
  const exported = readFileSync(html, 'utf8');
  // The notebook's own checks ran and printed (an assertion there fails the execution above).
  assert.equal((exported.match(/\w+: output \([\d, ]+\), max \|core - PyTorch\| = \d/g) ?? []).length, 3);
  // Opened from disk under the CSP, with the network off and every http(s)/ws request refused and counted.
  const file = join(tmp, 'three-seeds.csp.html');
  writeFileSync(file, exported.replace(/<head>/i, `<head>\n<meta http-equiv="Content-Security-Policy" content="${CSP}">`));
  const context = browser.context;
  const remote = [];
  await context.route(/^(https?|wss?):/, (route) => { remote.push(route.request().url()); return route.abort(); });
  await context.setOffline(true);
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`${m.text()} at ${JSON.stringify(m.location())}`); });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(`file://${file}`);
  const frames = [];
  for (const handle of await page.locator('iframe.attention-playground').elementHandles()) {
    const frame = await handle.contentFrame();
    await frame.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 60000 });
    frames.push(frame);
  }
  assert.equal(frames.length, 3, 'three views in the exported notebook');
  const ids = await page.locator('iframe.attention-playground').evaluateAll((els) => els.map((e) => e.id));
  assert.equal(new Set(ids).size, 3, `unique ids: ${ids}`);
  for (const [i, frame] of frames.entries()) {
    const view = await frame.evaluate(() => {
      const r = window.playground.result();
      return {
        module: r.module, shape: r.outputs[0].shape, data: Array.from(r.outputs[0].data),
        steps: document.querySelectorAll('[data-testid="step"]').length,
        heatmap: [...document.querySelectorAll('[data-testid="attention-heatmap"] canvas')].some((c) => c.width > 0 && c.height > 0),
        checksFailed: document.querySelectorAll('#checks .bad').length,
        stale: document.body.classList.contains('stale'),
      };
    });
    const want = expected[i];
    assert.equal(view.module, want.module);
    assert.deepEqual(view.shape, want.shape);
    const cmp = close(view.data, want.data);
    assert.ok(cmp.ok, `${want.module}: the page's output differs from PyTorch's by up to ${cmp.maxAbs}`);
    assert.ok(view.steps > 5 && view.heatmap && !view.stale, `${want.module}: steps ${view.steps}, heatmap ${view.heatmap}`);
    assert.equal(view.checksFailed, 0, `${want.module}: a check failed on the page`);
    console.log(`# ${want.module}: ${view.steps} steps, output ${JSON.stringify(view.shape)}, max |page - PyTorch| = ${cmp.maxAbs.toExponential(1)}`);
  }
  // The Transformer's axes and vocabulary view are the notebook's tokens.
  const words = await frames[2].evaluate(() => window.playground.plan().tokens.src[0]);
  assert.deepEqual(words, ['I', 'love', 'you', '<eos>']);
  // Independent: a head picked in one view leaves the others as they were.
  await frames[1].evaluate(() => { const s = document.getElementById('attention-head'); s.value = '2'; s.dispatchEvent(new Event('change', { bubbles: true })); });
  await frames[1].waitForFunction(() => window.playground.state().head === 2);
  assert.deepEqual(await Promise.all([frames[0], frames[2]].map((f) => f.evaluate(() => window.playground.state().head))), [0, 0]);
  assert.deepEqual(remote, [], 'no request left the machine');
  assert.deepEqual(problems, []);
  console.log(`# nbconvert --execute ${executeMs === null ? 'earlier in this npm test run' : `${(executeMs / 1000).toFixed(1)} s`}, exported HTML ${(exported.length / 1e6).toFixed(1)} MB`);
  await page.close();
});
