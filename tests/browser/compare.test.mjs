// ModernAttention's teaching views on the page: the KV cache per token of MHA / GQA / MQA, RoPE's
// rotations under the rope steps, the window's hidden cells in the attention view, and compare
// mode (two configurations side by side on the same input, the difference measured and outlined,
// a core error in B shown in its card while A stays live, both kept by the link).
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { audit } from './a11y.mjs';
import { launch, openPage, startServer, test } from './harness.mjs';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const config = { ModernAttention: { d_model: 16, num_heads: 4 } };
const url = () => `${server.url}#module=ModernAttention&config=${encodeURIComponent(JSON.stringify(config))}`;

// Types a value into one argument field (prefix arg: A's form, compare-arg: B's) and waits for the
// page's next result.
async function setField(page, testid, value) {
  const before = await page.evaluate(() => window.playground.result());
  const input = page.getByTestId(testid);
  if (typeof value === 'boolean') await input.setChecked(value);
  else await input.fill(String(value));
  await input.dispatchEvent('change');
  await page.waitForFunction((prev) => window.playground.result() !== prev, before, { timeout: 10000 }).catch(() => {});
}

test('KV cache per token, RoPE drawn as rotations, the window hatched', async () => {
  const { page, errors } = await openPage(browser.context, url());
  await page.waitForFunction(() => window.playground.result()?.module === 'ModernAttention', null, { timeout: 30000 });
  const kv = () => page.evaluate(() => [...document.querySelectorAll('[data-testid="kv-cache"] tr[data-kv]')]
    .map((tr) => ({ kind: tr.dataset.kv, bytes: Number(tr.dataset.bytes), current: tr.classList.contains('current') })));
  // 2 (K, V) x kv heads x head_dim 4 x 4 bytes
  assert.deepEqual(await kv(), [{ kind: 'mha', bytes: 128, current: true }, { kind: 'mqa', bytes: 32, current: false }]);
  await setField(page, 'arg-num_kv_heads', 2);
  assert.deepEqual(await kv(), [{ kind: 'mha', bytes: 128, current: false }, { kind: 'gqa', bytes: 64, current: true }, { kind: 'mqa', bytes: 32, current: false }]);

  await setField(page, 'arg-rope', true);
  const card = page.locator('[data-testid="step"][data-step="q_rot"]');
  await card.scrollIntoViewIfNeeded();
  const dials = card.getByTestId('rope-dials');
  await dials.locator('svg.rope-dial').first().waitFor();
  const T = await page.evaluate(() => window.playground.result().steps.find((s) => s.name === 'q_rot').shape[2]);
  // D = 4: two pairs; the last token (position T-1) turned by θ_0 = T-1 rad, θ_1 = (T-1)/100 rad
  assert.equal(await dials.locator('svg.rope-dial').count(), 2);
  assert.equal(await dials.getAttribute('data-position'), String(T - 1));
  const thetas = async (position) => {
    const text = await dials.locator('[role="group"]').getAttribute('aria-label');
    assert.match(text, new RegExp(`q_rot at token ${position}, θ per pair in radians: `));
    return text.split(': ')[1].split(', ').map(Number);
  };
  const near = (a, b) => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) < 0.006);
  assert.ok(near(await thetas(T - 1), [T - 1, (T - 1) / 100]), String(await thetas(T - 1)));
  // The vectors keep their length: a rotation (read back from the step and its input).
  const lengths = await page.evaluate(() => {
    const steps = window.playground.result().steps;
    const q = steps.find((s) => s.name === 'q_heads'), r = steps.find((s) => s.name === 'q_rot');
    const n = q.shape[2], off = (n - 1) * 4;   // batch 0, head 0, last token
    return [Math.hypot(q.data[off], q.data[off + 2]), Math.hypot(r.data[off], r.data[off + 2])];
  });
  assert.ok(Math.abs(lengths[0] - lengths[1]) < 1e-5, String(lengths));
  await dials.getByTestId('rope-position').selectOption('0');
  assert.equal(await dials.getAttribute('data-position'), '0');
  assert.ok(near(await thetas(0), [0, 0]));
  await audit(page, 'RoPE dials on the q_rot card');

  await setField(page, 'arg-window', 2);
  await setField(page, 'arg-sink_tokens', 1);
  const mask = await page.evaluate(() => {
    const plan = window.playground.plan();
    const n = plan.T;
    return { n, rows: Array.from({ length: n }, (_, q) => Array.from({ length: n }, (_, k) => (plan.mask.at(0, q, k) ? 1 : 0)).join('')) };
  });
  // query i sees the sink (key 0) and keys i-1, i: the same cells the core's weights are zero in
  const weights = await page.evaluate(() => {
    const w = window.playground.result().steps.find((s) => s.name === 'attn_weights');
    const n = w.shape[3];
    return Array.from({ length: n }, (_, q) => Array.from({ length: n }, (_, k) => (w.data[q * n + k] === 0 ? 1 : 0)).join(''));
  });
  assert.deepEqual(mask.rows, weights);
  assert.equal(mask.rows.at(-1), `0${'1'.repeat(mask.n - 3)}00`);
  const legend = page.getByTestId('attention-heatmap').locator('.legend');
  await legend.scrollIntoViewIfNeeded();   // the attention view redraws when on screen
  await page.waitForFunction((el) => /sliding window of 2 keys \+ 1 attention sink/.test(el.textContent), await legend.elementHandle(), { timeout: 10000 });
  assert.deepEqual(errors, []);
  await page.close();
});

test('compare mode shows both heatmaps', async () => {
  const { page, errors } = await openPage(browser.context, url());
  await page.waitForFunction(() => window.playground.result()?.module === 'ModernAttention', null, { timeout: 30000 });
  assert.equal(await page.getByTestId('compare').isHidden(), true);
  await page.getByTestId('compare-toggle').check();
  await page.waitForFunction(() => window.playground.compare() !== null);
  const card = page.getByTestId('compare');
  await card.scrollIntoViewIfNeeded();
  // B starts as A with RoPE switched on: the rotation steps appear, the weights change.
  let c = await page.evaluate(() => window.playground.compare());
  assert.deepEqual(c.args, [{ name: 'rope', a: false, b: true }]);
  assert.deepEqual(c.steps.onlyB.map((s) => s.name), ['cos', 'sin', 'q_rot', 'k_rot']);
  assert.ok(c.weights.max > 1e-4 && c.weights.count > 0, JSON.stringify(c.weights));
  assert.ok(c.output.max > 1e-4);
  for (const side of ['a', 'b', 'diff']) {
    const canvas = card.getByTestId(`compare-${side}`).locator('canvas');
    await page.waitForFunction((el) => el.width > 0 && el.getAttribute('aria-label').includes('head 0'), await canvas.elementHandle());
  }
  assert.match(await card.getByTestId('compare-a').locator('canvas').getAttribute('aria-label'), /^A: attention weights of head 0/);
  assert.match(await card.getByTestId('compare-b').locator('canvas').getAttribute('aria-label'), /^B: attention weights of head 0/);
  // Cells that differ are painted outlined: the diff canvas has the outline colour (#c2410c).
  const outlined = await card.getByTestId('compare-diff').locator('canvas').evaluate((canvas) => {
    const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 0; i < d.length; i += 4) if (d[i] === 0xc2 && d[i + 1] === 0x41 && d[i + 2] === 0x0c) return true;
    return false;
  });
  assert.ok(outlined);
  assert.match(await card.getByTestId('compare-summary').textContent(), /B differs from A in rope false → true\. Attention weights of head 0: max \|B − A\| = /);

  await audit(page, 'compare mode on ModernAttention, the KV cache table');

  // MHA vs MQA: B's keys and values shrink to one head.
  await setField(page, 'compare-arg-num_kv_heads', 1);
  c = await page.evaluate(() => window.playground.compare());
  const T = await page.evaluate(() => window.playground.plan().T);
  assert.deepEqual(c.steps.reshaped.find((s) => s.name === 'k'), { name: 'k', a: [1, T, 16], b: [1, T, 4] });
  assert.ok(c.steps.onlyB.some((s) => s.name === 'k_repeated'));

  // A rule B breaks: its card says which, A's views stay live and error-free.
  await setField(page, 'compare-arg-num_kv_heads', 3);
  await page.getByTestId('compare-error').waitFor();
  assert.match(await page.getByTestId('compare-error').textContent(), /num_kv_heads/);
  assert.deepEqual(await page.locator('#config [data-testid="error"]').allTextContents(), []);
  await setField(page, 'compare-arg-num_kv_heads', 0);   // 0: one kv head per query head, as A
  await page.getByTestId('compare-error').waitFor({ state: 'hidden' });

  // B back to A's arguments: nothing differs.
  await setField(page, 'compare-arg-rope', false);
  c = await page.evaluate(() => window.playground.compare());
  assert.deepEqual([c.args, c.weights.max, c.weights.count, c.output.max], [[], 0, 0, 0]);

  // The link keeps compare mode and B's overrides.
  await setField(page, 'compare-arg-alibi', true);
  const link = await page.evaluate(() => window.playground.link());
  const again = await openPage(browser.context, link);
  await again.page.waitForFunction(() => window.playground.compare() !== null, null, { timeout: 30000 });
  assert.deepEqual(await again.page.evaluate(() => window.playground.compare().args), [{ name: 'alibi', a: false, b: true }]);
  assert.deepEqual([...errors, ...again.errors], []);
  await again.page.close();
  await page.close();
});
