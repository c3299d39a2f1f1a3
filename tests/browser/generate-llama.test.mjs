// Generate mode with a Llama-style GPT (core GPT's rope, num_kv_heads, window; link fields genrope,
// genkvheads, genwindow): PyTorch's rope + GQA fixture through the link generates PyTorch's ids
// with a KV cache of num_kv_heads heads (its bytes per token shown), cached and recomputed logits
// within 1e-5; a window typed in the panel generates again, the cache masking what left it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before } from 'node:test';
import { CHARS } from '../../web/generate/model.js';
import { launch, openPage, startServer, test } from './harness.mjs';

let server, browser;
before(async () => {
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const json = (name) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8'));
const generation = (page) => page.evaluate(() => window.playground.generation());
// n tokens arrived from the mode's worker, none under way, and drawn in the frame after.
async function finished(page, n) {
  await page.waitForFunction((k) => {
    const g = window.playground.generation();
    return g && g.steps === k && !g.running;
  }, n);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}
// A new session's prompt forward is in, nothing generated yet: Run pressed now runs this session.
const prompted = (page) => page.waitForFunction(() => window.playground.generation()?.steps === 0);

test('a rope + GQA GPT from a PyTorch fixture generates its ids with a cache of num_kv_heads heads, then with a window', async () => {
  const name = 'gpt_generate_rope_gqa_greedy';
  const scenario = json(`${name}.scenario.json`), expected = json(`${name}.expected.json`);
  const c = scenario.config, g = scenario.generate;
  const fields = {
    generate: '1', genmodel: 'seeded', genseed: scenario.seed, genvocab: c.vocab_size, genblock: c.block_size, genlayers: c.n_layer, genheads: c.n_head,
    genembd: c.n_embd, genbias: c.bias ? '1' : '0', genrope: '1', genkvheads: c.num_kv_heads, gentemp: g.temperature,
    genmax: g.max_new_tokens, genprompt: scenario.inputs[0].data.map((id) => CHARS[id]).join(''),
  };
  const { page, errors } = await openPage(browser.context, `${server.url}#${new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)]))}`);
  await page.locator('[data-testid="generate-step"]:not([disabled])').waitFor();
  assert.equal(await page.locator('#genrope').isChecked(), true);
  assert.equal(await page.locator('#genkvheads').inputValue(), String(c.num_kv_heads));
  await prompted(page);
  await page.getByTestId('generate-run').click();
  await finished(page, g.max_new_tokens);
  const P = scenario.inputs[0].data.length, Hk = c.num_kv_heads, D = c.n_embd / c.n_head;
  const s = await generation(page);
  assert.deepEqual(s.ids, expected.ids[0], 'the page\'s ids are PyTorch\'s');
  // the cache holds num_kv_heads heads, not n_head: k and v, every layer, float32
  assert.deepEqual(s.cacheShape, [1, Hk, P + g.max_new_tokens, D]);
  assert.equal(s.cacheBytesPerToken, 2 * c.n_layer * Hk * D * 4);
  assert.match(await page.getByTestId('generate-cache-bytes').textContent(), new RegExp(`: ${s.cacheBytesPerToken} bytes per token`));
  const check = page.getByTestId('generate-check');
  assert.ok(Number(await check.getAttribute('data-max-diff')) <= 1e-5, await check.textContent());

  // a window of 3 typed in the panel: a new session, whose decode steps mask the keys that left it
  await page.locator('#generation details.train-settings > summary').click();  // the settings fold open
  await page.locator('#genwindow').fill('3');
  await page.locator('#genwindow').dispatchEvent('change');
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('genwindow') === '3');
  await page.locator('[data-testid="generate-run"]:not([disabled])').waitFor();
  await prompted(page);
  await page.getByTestId('generate-run').click();
  await finished(page, g.max_new_tokens);
  assert.match(await page.locator('#gen-model').textContent(), /GPT\(GPTConfig\(.*window=3/);
  assert.deepEqual((await generation(page)).cacheShape, [1, Hk, P + g.max_new_tokens, D], 'every position stays cached');
  assert.ok(Number(await check.getAttribute('data-max-diff')) <= 1e-5, await check.textContent());
  assert.deepEqual(errors, []);
});

test('training mode trains a Llama-style GPT (rope, 2 heads over 1 kv head, window 12) on copy; Generate mode continues with its KV cache', async () => {
  const fields = { train: 'copy', trainmodel: 'GPT', trainrope: '1', trainheads: 2, trainkvheads: 1, trainwindow: 12, trainsteps: 60,
    genprompt: 'CAFEBJGH|', gentemp: 0, genmax: 7 };
  const { page, errors } = await openPage(browser.context, `${server.url}#${new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)]))}`);
  await page.locator('[data-testid="train-start"]:not([disabled])').waitFor({ timeout: 30000 });
  assert.equal(await page.locator('#trainmodel').inputValue(), 'GPT');
  await page.getByTestId('train-start').click();
  // a stop hands the model to the playground: module GPT with the run's config, its weights
  await page.waitForFunction(() => {
    const tr = window.playground.training();
    return tr && !tr.running && tr.step === 60 && window.playground.result()?.module === 'GPT'
      && document.querySelector('#weights-status').textContent.includes('step60.safetensors');
  }, null, { timeout: 120000, polling: 200 });
  const accuracy = (await page.evaluate(() => window.playground.training())).accuracy;
  await page.getByTestId('generate-open').click();
  await page.locator('[data-testid="generate-run"]:not([disabled])').waitFor();
  assert.match(await page.getByTestId('generate-model').textContent(), /copy-step60\.safetensors/);
  await prompted(page);
  await page.getByTestId('generate-run').click();
  await finished(page, 7);
  const s = await generation(page);
  assert.deepEqual(s.cacheShape, [1, 1, 16, 16], 'one kv head of 16 columns per layer, 16 positions');
  assert.equal(s.cacheBytesPerToken, 2 * 1 * 1 * 16 * 4);
  const check = page.getByTestId('generate-check');
  assert.ok(Number(await check.getAttribute('data-max-diff')) <= 1e-5, await check.textContent());
  // the trained copy: held-out accuracy 1 gives the prompt's letters back, greedily
  assert.equal(accuracy, 1);
  assert.equal(await page.getByTestId('generate-text').textContent(), 'CAFEBJGH|CAFEBJG');
  assert.deepEqual(errors, []);
});

test('the playground\'s GPT form offers rope, num_kv_heads and window: the steps show no wpe, 2 kv heads repeated, the window\'s mask', async () => {
  const config = { GPT: { block_size: 16, n_layer: 1, n_head: 4, n_embd: 16, rope: true, num_kv_heads: 2, window: 3 } };
  const { page, errors } = await openPage(browser.context, `${server.url}#module=GPT&config=${encodeURIComponent(JSON.stringify(config))}`);
  await page.waitForFunction(() => window.playground.result()?.module === 'GPT', null, { timeout: 30000 });
  assert.equal(await page.getByTestId('arg-rope').isChecked(), true);
  assert.equal(await page.getByTestId('arg-num_kv_heads').inputValue(), '2');
  const r = await page.evaluate(() => {
    const steps = window.playground.result().steps;
    const get = (n) => steps.find((s) => s.name === n);
    return { names: steps.map((s) => s.name), k: get('transformer.h.0.attn.k').shape, rep: get('transformer.h.0.attn.k_repeated').shape,
      mask: get('transformer.h.0.attn.att_masked').attrs, qkv: get('transformer.h.0.attn.qkv').shape };
  });
  const T = r.k[2];
  assert.ok(!r.names.includes('pos_emb') && r.names.includes('transformer.h.0.attn.q_rot'), r.names.join());
  assert.deepEqual([r.qkv, r.k, r.rep], [[1, T, (4 + 2 * 2) * 4], [1, 2, T, 4], [1, 4, T, 4]]);
  assert.equal(r.mask.window, 3);
  assert.deepEqual(errors, []);
});
