// The WASM core under Node: PyTorch fixtures, errors that leave the module usable, no leaks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasRelaxedSimd, INTERP_FIELDS, loadAttention } from '../../bindings/attention.mjs';
import { checkResult, fixtureNames, readFixture } from './fixtures.mjs';

// ATTN_WASM_SIMD=relaxed (scripts/run-tests.mjs runs this file again so, under
// node --experimental-wasm-relaxed-simd): every case on attention-relaxed.wasm.
const simd = process.env.ATTN_WASM_SIMD ?? 'auto';
const core = await loadAttention({ simd });
// the interpretability fixtures run on the full-speed build (the small one leaves those fields out)
const fullCore = await loadAttention({ simd, fast: true });
const coreFor = (scenario) => (INTERP_FIELDS.some((k) => k in scenario) ? fullCore : core);

test('the core loads and reports its version, kernels and module table', () => {
  assert.match(core.version(), /^\d+\.\d+\.\d+$/);
  assert.equal(core.kernels(), simd !== 'simd128' && hasRelaxedSimd() ? 'wasm-relaxed-simd' : 'wasm-simd128');
  const ids = core.modules().map((m) => m.id);
  for (const id of ['softmax', 'SelfAttention_v1', 'CausalMultiHeadAttention', 'MultiHeadAttention', 'Transformer']) assert.ok(ids.includes(id), id);
  const mha = core.modules().find((m) => m.id === 'CausalMultiHeadAttention');
  assert.deepEqual(mha.args.map((a) => a.name), ['d_in', 'd_out', 'context_length', 'dropout', 'num_heads', 'qkv_bias']);
  assert.equal(mha.args.at(-1).default, false);
});

test('softmax of typed numbers equals the closed form', () => {
  const r = core.run({ module: 'softmax', inputs: [{ name: 'x', shape: [3], data: [2, 1, 0.1] }] });
  const e = [2, 1, 0.1].map(Math.exp), s = e.reduce((a, b) => a + b);
  assert.deepEqual(r.outputs[0].shape, [3]);
  assert.ok(r.outputs[0].data instanceof Float32Array);
  e.forEach((v, i) => assert.ok(Math.abs(r.outputs[0].data[i] - v / s) < 1e-6));
});

for (const name of [...fixtureNames(), ...fixtureNames('train/')]) {
  test(`fixture ${name} matches PyTorch through WASM`, () => {
    const { scenario, expected } = readFixture(name);
    assert.deepEqual(checkResult(coreFor(scenario).run(scenario), expected), []);
  });
}

test('a core error arrives as a JS Error with the core message, and the next call works', () => {
  assert.throws(() => core.run({ module: 'MultiHeadAttention', config: { d_model: 10, num_heads: 3 } }),
    { message: /num_heads \(3\) must divide d_model \(10\)/ });
  assert.throws(() => core.run('{bad json'), { message: /not valid JSON/ });
  const r = core.run({ module: 'softmax', inputs: [{ name: 'x', shape: [2], data: [0, 0] }] });
  assert.deepEqual(Array.from(r.outputs[0].data), [0.5, 0.5]);
});

test('10,000 runs do not grow the WASM heap after the first ones', () => {
  const scenario = JSON.stringify({ module: 'CausalMultiHeadAttention', seed: 1, trace: true,
    config: { d_in: 8, d_out: 8, context_length: 8, dropout: 0.1, num_heads: 2 },
    inputs: [{ name: 'x', shape: [2, 6, 8], init: 'randn' }] });
  for (let i = 0; i < 100; i++) core.run(scenario);
  const before = { size: core.heapBytes(), used: core.heapUsed() };
  for (let i = 0; i < 10000; i++) {
    core.run(scenario);
    if (i % 10 === 0) assert.throws(() => core.run('{"module": "nope"}'));
  }
  assert.equal(core.heapBytes(), before.size, 'WASM memory grew');
  // malloc's in-use count moves by a few dozen bytes with fragmentation (a reused chunk may be a
  // little larger than asked for); a leak of even 16 bytes per run would add 160 KB here.
  const grew = core.heapUsed() - before.used;
  assert.ok(grew <= 4096, `malloc'd bytes grew by ${grew} over 10,000 runs: a leak`);
});

test('Float32Array inputs cross as typed arrays and give the same numbers as JSON data', () => {
  const x = Float32Array.from({ length: 2 * 5 * 8 }, (_, i) => Math.sin(i));
  const scenario = (data) => ({ module: 'CausalMultiHeadAttention', seed: 7,
    config: { d_in: 8, d_out: 8, context_length: 5, dropout: 0, num_heads: 2 }, inputs: [{ name: 'x', shape: [2, 5, 8], data }] });
  const a = core.run(scenario(x)), b = core.run(scenario(Array.from(x)));
  assert.deepEqual(Array.from(a.outputs[0].data), Array.from(b.outputs[0].data));
  assert.throws(() => core.run(scenario(new Float32Array(3))), { message: /buffer has 3 values but the shape needs 80/ });
  assert.throws(() => core.run(scenario(Float32Array.of(...x.slice(0, 79), NaN))), { message: /buffer\[79\] \(nan\) is not a finite/ });
});
