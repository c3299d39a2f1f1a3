// ModernAttention in Chromium: every PyTorch fixture of the module (forward, and gradients from
// autograd) through the page's own core; and on the page, each switch of the module's form
// (rope, num_kv_heads, alibi, window + sink_tokens, causal) changes the steps and their shapes as
// core/SCENARIO.md documents them, with the window visible in the weights.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { checkResult, fixtureNames, readFixture } from '../node/fixtures.mjs';
import { launch, openPage, startServer, test } from './harness.mjs';
import { corePage, runInPage } from './page-core.mjs';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

test('every ModernAttention fixture (forward and gradients) matches PyTorch in the page\'s core', async () => {
  const { page, errors } = await corePage(browser.context, server.url);
  const names = [...fixtureNames().filter((n) => n.startsWith('modern_')), ...fixtureNames('train/').filter((n) => n.startsWith('train/grad_modern_'))];
  assert.ok(names.length >= 16, names.join());
  for (const name of names) {
    const { scenario, expected } = readFixture(name);
    const result = await runInPage(page, scenario);
    assert.deepEqual(checkResult(result, expected), [], name);
  }
  assert.deepEqual(errors, []);
});

// {step name: shape} of the page's latest result.
const shapes = (page) => page.evaluate(() => Object.fromEntries(window.playground.result().steps.map((s) => [s.name, s.shape])));

async function setArg(page, name, value) {
  const before = await page.evaluate(() => window.playground.result());
  const input = page.getByTestId(`arg-${name}`);
  if (typeof value === 'boolean') await input.setChecked(value);
  else await input.fill(String(value));
  await input.dispatchEvent('change');
  await page.waitForFunction((prev) => window.playground.result() !== prev, before, { timeout: 10000 }).catch(() => {});
  await page.waitForFunction(() => window.playground.result()?.module === 'ModernAttention');
}

test('each switch of ModernAttention\'s form changes the steps and shapes as documented', async () => {
  const config = { ModernAttention: { d_model: 16, num_heads: 4 } };
  const { page, errors } = await openPage(browser.context, `${server.url}#module=ModernAttention&config=${encodeURIComponent(JSON.stringify(config))}`);
  await page.waitForFunction(() => window.playground.result()?.module === 'ModernAttention', null, { timeout: 30000 });
  let s = await shapes(page);
  const T = s.q[1];
  assert.deepEqual(Object.keys(s), ['q', 'k', 'v', 'q_heads', 'k_heads', 'v_heads', 'scores', 'scores_masked', 'attn_weights', 'context_heads', 'context', 'output']);
  assert.deepEqual(s.k_heads, [1, 4, T, 4]);

  await setArg(page, 'rope', true);
  s = await shapes(page);
  assert.deepEqual([s.cos, s.sin, s.q_rot, s.k_rot], [[T, 4], [T, 4], [1, 4, T, 4], [1, 4, T, 4]]);

  await setArg(page, 'num_kv_heads', 1);   // multi-query: one key/value head, repeated for the four query heads
  s = await shapes(page);
  assert.deepEqual([s.k, s.k_heads, s.k_repeated, s.v_repeated, s.scores], [[1, T, 4], [1, 1, T, 4], [1, 4, T, 4], [1, 4, T, 4], [1, 4, T, T]]);
  const repeated = await page.evaluate(() => window.playground.result().steps.find((x) => x.name === 'k_repeated'));
  assert.equal(repeated.op, 'repeat_kv');
  assert.equal(repeated.attrs.repeats, 4);

  await setArg(page, 'alibi', true);
  s = await shapes(page);
  assert.deepEqual([s.alibi_bias, s.scores_alibi], [[4, T, T], [1, 4, T, T]]);

  await setArg(page, 'window', 2);
  await setArg(page, 'sink_tokens', 1);
  const w = await page.evaluate(() => {
    const r = window.playground.result();
    const weights = r.steps.find((x) => x.name === 'attn_weights');
    const n = weights.shape[3];
    return { n, row: Array.from(weights.data.slice((n - 1) * n, n * n)), attrs: r.steps.find((x) => x.name === 'scores_masked').attrs };
  });
  // the last query sees the sink (key 0) and the window's two keys (n-2, n-1), nothing else
  w.row.forEach((v, j) => assert.equal(v > 0, j === 0 || j >= w.n - 2, `key ${j}: ${v}`));
  assert.equal(w.attrs.window, 2);
  assert.equal(w.attrs.sink_tokens, 1);

  await setArg(page, 'window', 0);
  await setArg(page, 'causal', false);
  s = await shapes(page);
  assert.equal('scores_masked' in s, false);
  assert.deepEqual(errors, []);
  await page.close();
});
