// The threaded WASM build (CMakeLists.txt attention_wasm_threads: Emscripten's pthreads, a pool of
// Web Workers, here worker_threads) splits the work, never a sum: every fixture, forward and
// training, and runs big enough to split (every Linear in chunks of 64 rows, the attention's
// (batch, head) pairs) give the same bytes at 1, 2 and 3 threads (twin of tests/native/test_threads.cpp).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MAX_THREADS, loadAttention } from '../../bindings/attention.mjs';
import { fixtureNames, fixturesDir, readFixture } from './fixtures.mjs';

const cores = [await loadAttention({ fast: true, threads: 1 }), await loadAttention({ threads: 2 }), await loadAttention({ threads: 3 })];

// The whole result (every number's bytes, ids, texts) as one string; an error's message instead.
function resultText(core, scenario) {
  let r;
  try {
    r = core.run(scenario);
  } catch (e) {
    return `error: ${e.message}`;
  }
  return JSON.stringify(r, (key, v) => (v instanceof Float32Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') : v));
}

// The scenarios that give other bytes at 2 or 3 threads than at 1; mustSplit: each run on 2 or 3
// threads must have split some loop across the pool (a case big enough to test it).
function differing(scenarios, { mustSplit = false } = {}) {
  const out = [];
  for (const [name, scenario] of scenarios) {
    const one = resultText(cores[0], scenario);
    assert.doesNotMatch(one, /^error/, name);
    for (const core of cores.slice(1)) {
      const splits = core._m.splitLoops();
      if (resultText(core, scenario) !== one) out.push(`${name} at ${core.threads()} threads`);
      if (mustSplit && core._m.splitLoops() === splits) out.push(`${name}: no loop split at ${core.threads()} threads`);
    }
  }
  return out;
}

test('the threaded build starts its pool: 1, 2 and 3 threads', () => {
  assert.deepEqual(cores.map((c) => c.threads()), [1, 2, 3]);
  assert.equal(cores[1].version(), cores[0].version());
  assert.equal(cores[1].kernels(), cores[0].kernels());
});

test('every fixture gives the same bytes at 1, 2 and 3 threads', () => {
  const names = [...fixtureNames(), ...fixtureNames('train/')];
  assert.ok(names.length > 140, `${names.length} fixtures`);
  assert.deepEqual(differing(names.map((n) => [n, readFixture(n).scenario])), []);
});

test('a GPT and an attention big (or wide) enough to split across threads give the same bytes at 1, 2 and 3 threads', () => {
  // GPT 2 x 4 heads x 96 wide on 2 x 200 tokens: every Linear 400 rows (six chunks of 64), the
  // attention 8 (batch, head) pairs; traced and not, and its gradients. Seed 000's attention at
  // 3 x 130 queries over 77 keys.
  const idx = { name: 'idx', shape: [2, 200], data: Array.from({ length: 400 }, (_, i) => (i * 7 + 3) % 50) };
  const gpt = { module: 'GPT', config: { vocab_size: 50, block_size: 256, n_layer: 2, n_head: 4, n_embd: 96 }, seed: 3, inputs: [idx] };
  const mha = {
    module: 'MultiHeadAttention', config: { d_model: 40, num_heads: 5 }, seed: 1,
    inputs: [{ name: 'Q', shape: [3, 130, 40], init: 'randn' }, { name: 'K', shape: [3, 77, 40], init: 'randn' }, { name: 'V', shape: [3, 77, 40], init: 'randn' }],
  };
  // GPT 256 wide on 1 x 16 tokens: too few rows, its Linears split their output columns
  const narrow = { module: 'GPT', config: { vocab_size: 50, block_size: 32, n_layer: 2, n_head: 4, n_embd: 256 }, seed: 5, trace: true,
    inputs: [{ name: 'idx', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => (i * 5 + 1) % 50) }] };
  assert.deepEqual(differing([
    ['GPT 1 x 16, 256 wide', narrow], ['GPT 1 x 16, 256 wide, gradients', { ...narrow, loss: { fn: 'sum' }, grads: true }],
    ['GPT forward', gpt], ['GPT traced', { ...gpt, trace: true }], ['GPT gradients', { ...gpt, loss: { fn: 'sum' }, grads: true }],
    ['MultiHeadAttention', mha], ['MultiHeadAttention traced', { ...mha, trace: true }],
  ], { mustSplit: true }), []);
});

test('loadAttention names a thread count it refuses', async () => {
  for (const [bad, shown] of [[0, '0'], [MAX_THREADS + 1, String(MAX_THREADS + 1)], [1.5, '1.5'], ['2', '"2"'], [Number.NaN, 'NaN']])
    await assert.rejects(loadAttention({ threads: bad }), { message: `loadAttention: threads is ${shown}: it must be 'auto' or a whole number from 1 to ${MAX_THREADS}` });
  await assert.rejects(loadAttention({ threads: 2, wasmBinary: new Uint8Array(8) }), /threads is 2 but wasmBinary is the single-thread small build's bytes/);
});

test("a pool whose workers run but never answer is an error after poolTimeoutMs, not a wait for good; 'auto' then loads the single-thread build", { timeout: 20000 }, async () => {
  const real = globalThis.Worker;
  const made = [];
  // a worker whose script ran and ignores every message (Emscripten's 'load' included)
  globalThis.Worker = class SilentWorker {
    constructor(url) { made.push(this); this.url = String(url); this.terminated = false; }
    addEventListener() {}
    postMessage() {}
    terminate() { this.terminated = true; }
  };
  const warn = console.warn;
  const warnings = [];
  console.warn = (text) => warnings.push(String(text));
  try {
    const t0 = performance.now();
    await assert.rejects(loadAttention({ threads: 3, poolTimeoutMs: 300 }),
      /loadAttention: the threaded build's pool of 2 worker\(s\) \(.*attention-threads\.worker\.js\) had not started after 300 ms/);
    assert.ok(performance.now() - t0 < 5000);
    assert.equal(made.length, 2);
    assert.ok(made.every((w) => w.terminated), 'the pool is ended');
    const core = await loadAttention({ poolTimeoutMs: 300 });
    assert.equal(core.threads(), 1);
    assert.ok(warnings.some((w) => /had not started after 300 ms: loading the single-thread build/.test(w)), warnings.join('\n'));
    assert.equal(resultText(core, readFixture(fixtureNames()[0]).scenario), resultText(cores[0], readFixture(fixtureNames()[0]).scenario));
  } finally {
    globalThis.Worker = real;
    console.warn = warn;
  }
  for (const bad of [0, -1, 'soon', Infinity, 2 ** 31, NaN])
    await assert.rejects(loadAttention({ poolTimeoutMs: bad }), { message: `loadAttention: poolTimeoutMs is ${typeof bad === 'number' ? bad : JSON.stringify(bad)}: it must be a number of milliseconds above 0 and at most 2147483647` });
});

test('the Node CLI takes ATTENTION_THREADS as the native one: 2 prints the bytes of 1, 0 or words are refused by name', () => {
  const cli = fileURLToPath(new URL('../../bindings/cli.mjs', import.meta.url));
  const fixture = fileURLToPath(new URL(`${fixtureNames()[0]}.scenario.json`, fixturesDir));
  const run = (value) => spawnSync('node', [cli, 'run', fixture], { env: { ...process.env, ATTENTION_THREADS: value }, encoding: 'utf8' });
  const one = run('1'), two = run('2');
  assert.equal(one.status, 0, one.stderr);
  assert.equal(two.stdout, one.stdout);
  for (const bad of ['0', 'many', String(MAX_THREADS + 1)]) {
    const r = run(bad);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`^error: ATTENTION_THREADS \\(${bad}\\) must be a whole number from 1 to ${MAX_THREADS}`));
  }
});
