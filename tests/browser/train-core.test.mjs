// Training in the core, in Chromium: the WASM core as the page loads it (bindings/attention.mjs,
// served by the page's Vite server) runs the gradient and optimizer fixtures of the page's
// training model (CausalTransformer) and of seed 004's causal MultiHeadAttention, and matches
// PyTorch autograd and torch.optim there too (V8's WASM SIMD, not Node's build of it only).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkResult, fixtureNames, readFixture } from '../node/fixtures.mjs';
import { launch, startServer } from './harness.mjs';

const bindings = `/@fs${fileURLToPath(new URL('../../bindings/attention.mjs', import.meta.url))}`;

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

test('the page\'s core matches PyTorch\'s gradients and optimizer steps in Chromium', async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${server.url}favicon.svg`);
  await page.evaluate(async (url) => { window.core = await (await import(url)).loadAttention(); }, bindings);
  const names = fixtureNames('train/').filter((n) => /causal_transformer|causal_mha/.test(n));
  assert.ok(names.length >= 6, names.join());
  for (const name of names) {
    const { scenario, expected } = readFixture(name);
    const r = await page.evaluate((s) => {
      const out = window.core.run(s);
      const plain = (list) => (list ?? []).map((t) => ({ ...t, data: Array.from(t.data), grad: t.grad && Array.from(t.grad) }));
      return { ...out, outputs: plain(out.outputs), steps: plain(out.steps), grads: plain(out.grads), params: plain(out.params) };
    }, scenario);
    const toArrays = (list) => (list ?? []).map((t) => ({ ...t, data: Float32Array.from(t.data), grad: t.grad && Float32Array.from(t.grad) }));
    const result = { ...r, outputs: toArrays(r.outputs), steps: toArrays(r.steps), grads: toArrays(r.grads), params: toArrays(r.params) };
    assert.deepEqual(checkResult(result, expected), [], name);
  }
  assert.deepEqual(errors, []);
});
