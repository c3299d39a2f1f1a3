// The two WASM builds (CMakeLists.txt: the small one the page downloads first, the fast one its
// workers train and generate with) are the same arithmetic compiled for size or for speed: every
// fixture, forward and training, gives the same bytes in both, outputs, steps, gradients and losses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INTERP_FIELDS, loadAttention } from '../../bindings/attention.mjs';
import { fixtureNames, readFixture } from './fixtures.mjs';

const small = await loadAttention({ threads: 1 });
const fast = await loadAttention({ fast: true, threads: 1 });

// Every float of a result, in a fixed order: outputs, steps (and their gradients), grads, params, losses.
function floats(r) {
  const parts = [];
  for (const group of ['outputs', 'steps', 'grads', 'params']) {
    for (const x of r[group] ?? []) {
      parts.push(x.data);
      if (x.grad) parts.push(x.grad);
    }
  }
  parts.push(Float32Array.from(r.losses ?? []), Float32Array.of(r.loss ?? 0));
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

test('the small and the fast build are two builds of one core', () => {
  assert.notEqual(small.kernels(), '');
  assert.equal(small.version(), fast.version());
  assert.equal(small.kernels(), fast.kernels());
});

test('every fixture gives the same bytes in the small and the fast build (the small one refuses the interpretability fields and Llama, naming the field)', () => {
  const all = [...fixtureNames(), ...fixtureNames('train/')];
  const llama = all.filter((n) => readFixture(n).scenario.module === 'Llama');  // not in the small build at all: below
  const interp = all.filter((n) => !llama.includes(n) && INTERP_FIELDS.some((k) => k in readFixture(n).scenario));
  assert.ok(interp.length >= 9, `${interp.length} interpretability fixtures`);
  for (const name of interp) {
    const { scenario } = readFixture(name);
    const field = INTERP_FIELDS.find((k) => k in scenario);
    assert.throws(() => small.run(scenario), (e) => e.field === field && /needs the full core: this is the page's small build/.test(e.message), name);
  }
  // Hugging Face's Llama is not in the small build's module table
  assert.ok(llama.length >= 4, `${llama.length} Llama fixtures`);
  for (const name of llama)
    assert.throws(() => small.run(readFixture(name).scenario), (e) => e.field === 'module' && /module 'Llama' is unknown/.test(e.message), name);
  const names = all.filter((n) => !interp.includes(n) && !llama.includes(n));
  assert.ok(names.length > 100, `${names.length} fixtures`);
  const differing = [];
  for (const name of names) {
    const { scenario } = readFixture(name);
    const a = floats(small.run(scenario)), b = floats(fast.run(scenario));
    const same = a.length === b.length && Buffer.compare(Buffer.from(a.buffer), Buffer.from(b.buffer)) === 0;
    if (!same) differing.push(name);
  }
  assert.deepEqual(differing, []);
});
