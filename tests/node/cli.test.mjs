// The two CLIs agree: node bindings/cli.mjs (WASM) and build/native/attention-cli print the same
// result JSON for every fixture (numbers equal up to the last float32 bits), and both reject
// malformed or invalid scenarios with one line and a non-zero exit; the WASM CLI piped into a reader
// that stops early ends quietly.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resultJsonPieces } from '../../bindings/result-json.mjs';
import { started } from '../../scripts/processes.mjs';
import { fixtureNames, fixturesDir } from './fixtures.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const nativeCli = join(root, 'build/native/attention-cli');
const wasmCli = join(root, 'bindings/cli.mjs');

const native = (args) => spawnSync(nativeCli, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
const wasm = (args) => spawnSync(process.execPath, [wasmCli, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });

// Same structure, same names and shapes; numbers within 1e-6 relative (the last float32 bits).
function assertSameResult(a, b, where) {
  assert.equal(a.module, b.module);
  assert.deepEqual(a.attention, b.attention, `${where}: attention`);
  // The two builds' kernels differ (AVX2 vs WASM SIMD128); after N optimizer steps more bits do.
  const tol = a.losses ? 1e-4 : 1e-5;
  const near = (x, y) => Math.abs(x - y) <= tol * Math.max(1, Math.abs(y));
  assert.equal(a.loss === undefined, b.loss === undefined, `${where}: loss in one CLI only`);
  if (a.loss !== undefined) assert.ok(near(a.loss, b.loss), `${where}: loss ${a.loss} vs ${b.loss}`);
  assert.equal((a.losses ?? []).length, (b.losses ?? []).length, `${where}: losses`);
  (a.losses ?? []).forEach((x, i) => assert.ok(near(x, b.losses[i]), `${where}: losses[${i}] ${x} vs ${b.losses[i]}`));
  for (const group of ['outputs', 'steps', 'grads', 'params']) {
    assert.equal((a[group] ?? []).length, (b[group] ?? []).length, `${where}: ${group} count`);
    (a[group] ?? []).forEach((ta, i) => {
      const tb = b[group][i];
      assert.equal(ta.name, tb.name);
      assert.deepEqual(ta.shape, tb.shape);
      if (group === 'steps') {
        for (const key of ['op', 'ops', 'attrs', 'inputs', 'dims', 'tokens', 'code', 'cpp']) assert.deepEqual(ta[key], tb[key], `${where} ${ta.name}.${key}`);
      }
      for (const key of ['data', 'grad']) {
        assert.equal(ta[key] === undefined, tb[key] === undefined, `${where} ${group} ${ta.name}: ${key} in one CLI only`);
        let worst = 0;
        (ta[key] ?? []).forEach((v, k) => {
          const x = Number(v), y = Number(tb[key][k]);  // "-Infinity" for masked scores
          if (x !== y) worst = Math.max(worst, Math.abs(x - y) / Math.max(1, Math.abs(y)));
        });
        assert.ok(worst <= tol, `${where} ${group} ${ta.name} ${key}: max relative diff ${worst}`);
      }
    });
  }
  // generation: the same ids, per token the same entry (probabilities to the last float32 bits)
  assert.deepEqual(a.ids, b.ids, `${where}: ids`);
  assert.equal((a.generated ?? []).length, (b.generated ?? []).length, `${where}: generated count`);
  (a.generated ?? []).forEach((g, t) => {
    const h = b.generated[t];
    for (const key of ['position', 'mode', 'ids', 'top_ids', 'cache']) assert.deepEqual(g[key], h[key], `${where} token ${t} ${key}`);
    g.top_probs.forEach((row, i) => row.forEach((p, k) => assert.ok(near(p, h.top_probs[i][k]), `${where} token ${t} top_probs`)));
    assert.equal((g.steps ?? []).length, (h.steps ?? []).length, `${where} token ${t} steps`);
  });
}

// Every fixture through both CLIs, a fixture per core at a time (CI's 2 cores: half the wall time),
// each CLI on one thread: the pool already fills the cores, and the Node CLI's threaded build
// started two workers per fixture (0.45 s a run where one thread takes 0.32, on an AMD EPYC Zen 5;
// this test 68 -> 42 s). The same bytes at any thread count: threads.test.mjs and test_threads.cpp.
const oneThread = { ...process.env, ATTENTION_THREADS: '1' };
test('the WASM CLI and the native CLI print the same result for every fixture, training ones included', async () => {
  const names = [...fixtureNames(), ...fixtureNames('train/')];
  assert.ok(names.length > 0);
  const queue = [...names];
  const checked = [];
  await Promise.all(Array.from({ length: Math.min(2, availableParallelism()) }, async () => {
    while (queue.length) {
      const name = queue.shift();
      const file = fileURLToPath(new URL(`${name}.scenario.json`, fixturesDir));
      const [n, w] = await Promise.all([started(nativeCli, ['run', file], oneThread), started(process.execPath, [wasmCli, 'run', file], oneThread)]);
      assert.equal(n.status, 0, `native ${name}: ${n.stderr}`);
      assert.equal(w.status, 0, `wasm ${name}: ${w.stderr}`);
      assertSameResult(JSON.parse(w.stdout), JSON.parse(n.stdout), name);
      checked.push(name);
    }
  }));
  assert.equal(checked.length, names.length);
});

test('both CLIs reject a malformed or invalid scenario with the same one-line error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'attn-cli-'));
  const cases = {
    'malformed.json': '{"module": ',
    'invalid.json': JSON.stringify({ module: 'CausalMultiHeadAttention', config: { d_in: 4, d_out: 10, context_length: 4, dropout: 0, num_heads: 3 } }),
    'unknown.json': JSON.stringify({ module: 'NoSuchModule' }),
  };
  for (const [file, text] of Object.entries(cases)) {
    const path = join(dir, file);
    writeFileSync(path, text);
    const n = native(['run', path]), w = wasm(['run', path]);
    assert.equal(n.status, 1, file);
    assert.equal(w.status, 1, file);
    assert.equal(n.stdout, '');
    assert.equal(w.stdout, '');
    assert.match(w.stderr, /^error: .+\n$/);
    if (file !== 'malformed.json') assert.equal(w.stderr, n.stderr, file);  // parser messages name positions alike
  }
  // --version: the core's, the same from both
  const [nv, wv] = [native(['--version']), wasm(['--version'])];
  assert.equal(wv.status, 0);
  assert.match(wv.stdout, /^\d+\.\d+\.\d+\n$/);
  assert.equal(wv.stdout, nv.stdout);
  assert.equal(native(['run', join(dir, 'missing.json')]).status, 1);
  assert.equal(wasm(['run', join(dir, 'missing.json')]).status, 1);
  // a folder where a file belongs: the same words from both (natively it read as 0 bytes before)
  for (const args of [['run', dir], ['weights', dir], ['run', join(dir, 'invalid.json'), '--weights', dir]]) {
    const n = native(args), w = wasm(args);
    assert.equal(n.status, 1, args.join(' '));
    assert.match(n.stderr, /^error: cannot read (scenario|weights) file '.+': check the path\n$/);
    assert.equal(w.stderr, n.stderr, args.join(' '));
  }
});

test('the WASM CLI stops quietly when its reader stops early (| head)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'attn-cli-'));
  const path = join(dir, 'big.json');   // about 3 MB of result JSON, far past a pipe's buffer
  writeFileSync(path, JSON.stringify({ module: 'softmax', inputs: [{ name: 'x', shape: [200, 1000], init: 'randn' }] }));
  const child = spawn(process.execPath, [wasmCli, 'run', path]);
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(stderr, '');
  assert.equal(code, 0);
});

test("the WASM CLI's result comes in pieces of at most 65,536 values: an output no one string can hold still prints", async () => {
  // 300,000 values (about 3.6 MB of text) in one output and in a step; a generated token's rows
  const data = Float32Array.from({ length: 300000 }, (_, i) => Math.sin(i) * 1e3);
  const r = {
    module: 'GPT', outputs: [{ name: 'output', shape: [1, 300000], data }], attention: [],
    steps: [{ name: 'logits', op: 'linear', data, grad: data.subarray(0, 5) }], losses: [1.5, NaN],
    ids: [[1, 2]], generated: [{ position: 1, mode: 'prefill', ids: [2], top_ids: [[2, 1]], top_probs: [[0.75, 0.25]], cache: null }],
  };
  const pieces = [...resultJsonPieces(r)];
  const longest = Math.max(...pieces.map((p) => p.length));
  assert.ok(longest < 65536 * 20, `a piece of ${longest} characters`);
  const j = JSON.parse(pieces.join(''));
  assert.deepEqual(j.outputs[0].shape, [1, 300000]);
  assert.equal(j.outputs[0].data.length, 300000);
  assert.deepEqual(Float32Array.from(j.outputs[0].data), data);  // 9 significant digits: float32 round trip
  assert.deepEqual(Float32Array.from(j.steps[0].data), data);
  assert.deepEqual(j.steps[0].grad, Array.from(data.subarray(0, 5), (v) => Number(v.toPrecision(9))));
  assert.deepEqual(j.losses, [1.5, 'NaN']);
  assert.deepEqual(j.generated[0].top_probs, [[0.75, 0.25]]);
});
