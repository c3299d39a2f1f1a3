// A GPT-2-small-shaped checkpoint (12 layers, 12 heads, 768 wide, 50,257 tokens: 124M parameters,
// 498 MB of float32) written with random weights into a temporary folder as the Hub lays it out
// (config.json + model.safetensors, Conv1D shapes, no `transformer.` prefix), never committed;
// served by the page's own server and opened in the page's "Open a model" from its URL, in
// Chromium and Firefox: the time to open it (download, checks, streaming into the core), the WASM
// memory the worker's core holds after (against the float32 size: the target is <= 1.3x), one
// forward of a 16-token sentence (every layer x head's map) and a 16-token greedy continuation.
// Then "Patch every head" on the default sentence and its corruption (144 heads patched, each
// replayed from its layer on, plus attribution patching and the direct logit attribution).
// With --reopen, the folder is opened a second time while the first model is open (the first stays
// until the second is built: two 124M models in the worker's heap at once): its time and the heap after.
// With --isolated, the page is served cross-origin isolated (COOP + COEP, as npm start serves it):
// the model's worker runs the threaded build on every core.
//   node scripts/measure-pretrained.mjs [--engines chromium,firefox] [--dtype F32|F16] [--reopen] [--isolated] [--json out.json]
import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { launch, openPage, startServer } from '../tests/browser/harness.mjs';

const { values: args } = parseArgs({ options: { engines: { type: 'string', default: 'chromium,firefox' }, dtype: { type: 'string', default: 'F32' }, reopen: { type: 'boolean', default: false }, isolated: { type: 'boolean', default: false }, json: { type: 'string' } } });
const GPT2 = { n_layer: 12, n_head: 12, n_embd: 768, n_positions: 1024, vocab_size: 50257 };

// GPT-2's tensors as Hugging Face saves GPT2LMHeadModel (lm_head tied, so not saved).
function tensors({ n_layer, n_embd: C, n_positions, vocab_size }) {
  const t = [['wte.weight', [vocab_size, C], 'w'], ['wpe.weight', [n_positions, C], 'w']];
  for (let l = 0; l < n_layer; l++) {
    const h = `h.${l}.`;
    t.push([`${h}ln_1.weight`, [C], 1], [`${h}ln_1.bias`, [C], 0], [`${h}attn.c_attn.weight`, [C, 3 * C], 'w'], [`${h}attn.c_attn.bias`, [3 * C], 0],
      [`${h}attn.c_proj.weight`, [C, C], 'w'], [`${h}attn.c_proj.bias`, [C], 0], [`${h}ln_2.weight`, [C], 1], [`${h}ln_2.bias`, [C], 0],
      [`${h}mlp.c_fc.weight`, [C, 4 * C], 'w'], [`${h}mlp.c_fc.bias`, [4 * C], 0], [`${h}mlp.c_proj.weight`, [4 * C, C], 'w'], [`${h}mlp.c_proj.bias`, [C], 0]);
  }
  return t.push(['ln_f.weight', [C], 1], ['ln_f.bias', [C], 0]), t;
}

// The folder, written tensor by tensor (uniform weights of GPT-2's scale from a fixed xorshift).
function writeFolder(dir, dtype) {
  const list = tensors(GPT2), size = dtype === 'F32' ? 4 : 2;
  const header = {};
  let at = 0;
  for (const [name, shape] of list) {
    const n = shape.reduce((a, b) => a * b, 1) * size;
    header[name] = { dtype, shape, data_offsets: [at, at + n] };
    at += n;
  }
  let text = JSON.stringify({ __metadata__: { format: 'pt' }, ...header });
  text += ' '.repeat((8 - ((8 + text.length) % 8)) % 8);
  const fd = openSync(join(dir, 'model.safetensors'), 'w');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(text.length));
  writeSync(fd, len);
  writeSync(fd, Buffer.from(text));
  let s = 0x9e3779b9 >>> 0;
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (const [, shape, fill] of list) {
    const n = shape.reduce((a, b) => a * b, 1);
    const out = dtype === 'F32' ? new Float32Array(n) : new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      let v = fill;
      if (fill === 'w') { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; v = (s / 4294967296 - 0.5) * 0.07; }
      if (dtype === 'F32') out[i] = v;
      else { f32[0] = v; out[i] = u32[0] >>> 16; }   // BF16: the top half of the float32
    }
    writeSync(fd, Buffer.from(out.buffer));
  }
  closeSync(fd);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'gpt2', architectures: ['GPT2LMHeadModel'], activation_function: 'gelu_new', layer_norm_epsilon: 1e-5, ...GPT2 }));
  return statSync(join(dir, 'model.safetensors')).size;
}

const dir = mkdtempSync(join(tmpdir(), 'gpt2-shaped-'));
const dtype = args.dtype === 'F16' ? 'BF16' : args.dtype;
const bytes = writeFolder(dir, dtype);
const serve = (req, res, next) => {
  const m = /^\/gpt2-shaped\/([\w.-]+)$/.exec(req.url.split('?')[0]);
  if (!m) return next();
  const path = join(dir, m[1]);
  let size;
  try { size = statSync(path).size; } catch { res.writeHead(404).end(); return; }
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
  createReadStream(path).pipe(res);
};
const server = await startServer({ middleware: serve, isolated: args.isolated });
const rows = [];
try {
  for (const engine of args.engines.split(',')) {
    const browser = await launch({ engine });
    try {
      const { page } = await openPage(browser.context, `${server.url}#models=1`);
      await page.getByTestId('model-url').fill(`${server.url}gpt2-shaped/`);
      const t0 = Date.now();
      await page.getByTestId('model-url-open').click();
      await page.waitForFunction(() => { const m = window.playground.model(); return (m && m.ids.length > 0 && !m.loading) || !document.querySelector('[data-testid="model-error"]').hidden; }, null, { timeout: 600000, polling: 100 });
      const wall = (Date.now() - t0) / 1000;
      const m = await page.evaluate(() => window.playground.model());
      if (!m || m.error) throw new Error(`${engine}: ${m?.error ?? await page.getByTestId('model-error').textContent()}`);
      const forwardMs = Number((await page.getByTestId('model-next').textContent()).match(/\(([\d.]+) ms\)/)[1]);
      await page.getByTestId('model-patch').click();
      await page.waitForFunction(() => window.playground.model().patching !== null || document.querySelector('[data-testid="model-patch-note"]').classList.contains('error-text'), null, { timeout: 600000, polling: 100 });
      const patched = (await page.evaluate(() => window.playground.model())).patching;
      if (!patched) throw new Error(`${engine}: patching: ${await page.getByTestId('model-patch-note').textContent()}`);
      const patchMs = patched.ms, patchT = patched.ids.length;
      await page.getByTestId('model-text').fill('The animal didn\'t cross the street because it was too tired and slow today');
      await page.waitForFunction(() => window.playground.model().text.endsWith('today'), null, { timeout: 120000 });
      const m2 = await page.evaluate(() => window.playground.model());
      const forward2 = Number((await page.getByTestId('model-next').textContent()).match(/\(([\d.]+) ms\)/)[1]);
      await page.getByTestId('model-generate').click();
      await page.waitForFunction(() => window.playground.model().generated !== null, null, { timeout: 600000 });
      const genMs = Number((await page.getByTestId('model-generated').textContent()).match(/\(([\d.]+) ms\)/)[1]);
      let reopen = null;
      if (args.reopen) {
        const before = await page.evaluate(() => window.playground.model().buildMs);
        const t1 = Date.now();
        await page.getByTestId('model-url-open').click();
        await page.waitForFunction((b) => { const m = window.playground.model(); return (m && !m.loading && m.buildMs !== b && m.ids.length > 0) || !document.querySelector('[data-testid="model-error"]').hidden; },
          before, { timeout: 600000, polling: 100 });
        const m3 = await page.evaluate(() => window.playground.model());
        if (m3.error) throw new Error(`${engine}, second open: ${m3.error}`);
        reopen = { openS: (Date.now() - t1) / 1000, heapMB: m3.heapBytes / 1e6 };
      }
      rows.push({ engine, dtype, fileMB: bytes / 1e6, f32MB: m.f32_bytes / 1e6, openS: wall, buildMs: m.buildMs, heapMB: m.heapBytes / 1e6,
        heapOverF32: m.heapBytes / m.f32_bytes, tokens: [m.ids.length, m2.ids.length], forwardMs: [forwardMs, forward2], generate16Ms: genMs, patchMs, patchT,
        isolated: args.isolated, reopen });
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`CPU: ${cpus()[0].model} (${cpus().length} cores); GPT-2-small shape, ${dtype} file of ${(bytes / 1e6).toFixed(1)} MB, served from the same host, ` +
  `${args.isolated ? 'cross-origin isolated (the model worker threaded)' : 'not isolated (one thread)'}`);
console.log('| browser | open (s) | in the core (ms) | WASM memory (MB) | / float32 size | forward, T tokens (ms) | 16 greedy tokens (ms) | patch 144 heads (ms) |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  if (r.reopen) console.log(`${r.engine}: opened again with the first model open: ${r.reopen.openS.toFixed(2)} s, WASM memory after ${r.reopen.heapMB.toFixed(0)} MB`);
  console.log(`| ${r.engine} | ${r.openS.toFixed(2)} | ${r.buildMs.toFixed(0)} | ${r.heapMB.toFixed(0)} | ${r.heapOverF32.toFixed(3)}× | ${r.forwardMs.map((ms, i) => `${ms.toFixed(0)} (T=${r.tokens[i]})`).join(', ')} | ${r.generate16Ms.toFixed(0)} | ${r.patchMs.toFixed(0)} (T=${r.patchT}) |`);
}
if (args.json) writeFileSync(args.json, JSON.stringify(rows, null, 2));
