// The page's own WASM core (bindings/attention.mjs as Vite serves it) in a blank page of the test
// server, and core.run there with its typed arrays brought back as Float32Arrays, so a result
// from Chromium's V8 can be checked against a fixture exactly as Node's is (tests/node/fixtures.mjs).
import { fileURLToPath } from 'node:url';

const bindings = `/@fs${fileURLToPath(new URL('../../bindings/attention.mjs', import.meta.url))}`;

// A new page of `context` with window.core loaded (fast: the full-speed build of the page's
// workers, which has the interpretability fields); pageerror messages collected in `errors`.
export async function corePage(context, serverUrl, { fast = false } = {}) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${serverUrl}favicon.svg`);
  await page.evaluate(async ([url, full]) => { window.core = await (await import(url)).loadAttention({ fast: full }); }, [bindings, fast]);
  return { page, errors };
}

// core.run(scenario) in the page; outputs, steps, grads, params and the logit lens with
// Float32Array data, a generation's tokens as plain JSON.
export async function runInPage(page, scenario) {
  const r = await page.evaluate((s) => {
    const out = window.core.run(s);
    const plain = (list) => (list ?? []).map((t) => ({ ...t, data: Array.from(t.data), grad: t.grad && Array.from(t.grad) }));
    const json = (v) => JSON.parse(JSON.stringify(v, (k, x) => (ArrayBuffer.isView(x) ? Array.from(x) : x)));
    return { ...out, outputs: plain(out.outputs), steps: plain(out.steps), grads: plain(out.grads), params: plain(out.params),
      generated: out.generated && json(out.generated), logit_lens: out.logit_lens && plain(out.logit_lens) };
  }, scenario);
  const toArrays = (list) => (list ?? []).map((t) => ({ ...t, data: Float32Array.from(t.data), grad: t.grad && Float32Array.from(t.grad) }));
  return { ...r, outputs: toArrays(r.outputs), steps: toArrays(r.steps), grads: toArrays(r.grads), params: toArrays(r.params),
    logit_lens: r.logit_lens && toArrays(r.logit_lens) };
}
