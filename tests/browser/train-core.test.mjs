// Training in the core, in Chromium: the WASM core as the page loads it (bindings/attention.mjs,
// served by the page's Vite server) runs the gradient and optimizer fixtures of the page's
// training model (CausalTransformer) and of seed 004's causal MultiHeadAttention, and matches
// PyTorch autograd and torch.optim there too (V8's WASM SIMD, not Node's build of it only); and
// every fixture of nanoGPT's GPT: forward, gradients, and generation's ids and probabilities; and
// the interpretability fixtures (interventions, patching, attribution patching, logit lens, logit
// attribution, on the full-speed build the page's workers load).
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { checkResult, fixtureNames, readFixture } from '../node/fixtures.mjs';
import { launch, startServer, test } from './harness.mjs';
import { corePage, runInPage } from './page-core.mjs';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

test('the page\'s core matches PyTorch\'s gradients and optimizer steps in Chromium', async () => {
  const { page, errors } = await corePage(browser.context, server.url);
  const names = fixtureNames('train/').filter((n) => /causal_transformer|causal_mha/.test(n));
  assert.ok(names.length >= 6, names.join());
  for (const name of names) {
    const { scenario, expected } = readFixture(name);
    const result = await runInPage(page, scenario);
    assert.deepEqual(checkResult(result, expected), [], name);
  }
  assert.deepEqual(errors, []);
});

test('nanoGPT\'s GPT in Chromium: forward, autograd and generation fixtures (the same ids as PyTorch, with and without the cache)', async () => {
  const { page, errors } = await corePage(browser.context, server.url);
  const names = [...fixtureNames().filter((n) => n.startsWith('gpt_')), ...fixtureNames('train/').filter((n) => /gpt/.test(n))];
  assert.ok(names.length >= 25, names.join());
  for (const name of names) {
    const { scenario, expected } = readFixture(name);
    assert.deepEqual(checkResult(await runInPage(page, scenario), expected), [], name);
  }
  assert.deepEqual(errors, []);
});

test('interventions, activation and attribution patching, the logit lens and logit attribution in Chromium match PyTorch', async () => {
  const { page, errors } = await corePage(browser.context, server.url, { fast: true });  // the workers' build: the small one leaves them out
  const names = fixtureNames().filter((n) => n.startsWith('interp_'));
  assert.ok(names.length >= 9, names.join());
  for (const name of names) {
    const { scenario, expected } = readFixture(name);
    assert.deepEqual(checkResult(await runInPage(page, scenario), expected), [], name);
  }
  assert.deepEqual(errors, []);
});
