// The table of bad inputs (tests/bad_inputs.json) through the WASM core: each gives a JS Error
// with the core's message (the same as natively), the module keeps computing, and the committed
// tests/BAD_INPUTS.md lists exactly the messages the core gives today.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { badInputsTable, readCases } from '../../scripts/bad-inputs-table.mjs';

const core = await loadAttention({ fast: true });  // the build with every field (the small one: builds.test.mjs)

test('every bad input gives a JS Error with its rule and field, and the next run still works', () => {
  const cases = readCases();
  assert.ok(cases.length >= 30);
  const good = { module: 'SelfAttention_v1', config: { d_in: 3, d_out: 2 }, seed: 123,
    inputs: [{ name: 'x', shape: [6, 3], data: [0.43, 0.15, 0.89, 0.55, 0.87, 0.66, 0.57, 0.85, 0.64, 0.22, 0.58, 0.33, 0.77, 0.25, 0.10, 0.05, 0.80, 0.55] }] };
  const want = core.run(good).outputs[0].data[2];
  for (const c of cases) {
    assert.throws(() => core.run(c.scenario), (e) => e instanceof Error && e.message.includes(c.error) && e.field === c.field, c.what);
    assert.equal(core.run(good).outputs[0].data[2], want);
  }
  assert.ok(Math.abs(want - 0.3061) < 1e-4);  // the book's context vector for "journey"
});

test('tests/BAD_INPUTS.md is the table the core produces now', () => {
  const committed = readFileSync(new URL('../BAD_INPUTS.md', import.meta.url), 'utf8');
  assert.equal(committed, badInputsTable(core), 'regenerate with: node scripts/bad-inputs-table.mjs');
});

// The two rules the page reads from the core outside a scenario: arguments from JS can be anything,
// and a C++ throw would reach JS as a bare WebAssembly.Exception with no message.
test('attentionMask and nextTokenDistribution refuse what breaks their rules with an Error naming it', () => {
  const refused = (f, pattern) => assert.throws(f, (e) => e instanceof Error && pattern.test(e.message), String(pattern));
  for (const [T, S, o] of [[-1, 3], [3, 3, { window: -2 }], [2.5, 3], ['a', 3], [3, 3, { sinkTokens: NaN }], [1e5, 1e5], [1e10, 2], [1e9, 0], [2, 2, { window: 2 ** 32 }]])
    refused(() => core.attentionMask(T, S, o), /^attentionMask\(.*\): T, S, window and sinkTokens must be whole numbers from 0 to 16777216, and T \* S at most 16777216$/);
  // query 3 sees its window (keys 2, 3) and the sink (key 0), not key 1
  assert.deepEqual([...core.attentionMask(4, 4, { window: 2, sinkTokens: 1 })], [0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 0]);
  for (const o of [{ temperature: -1 }, { temperature: NaN }, { temperature: Infinity }, { top_k: -3 }, { top_k: 1.5 }, { top_p: 2 }, { top_p: -0.1 }])
    refused(() => core.nextTokenDistribution([1, 2, 3], o), /^nextTokenDistribution: temperature .*: temperature must be >= 0 \(0: greedy\), top_k a whole number \(0: none\), top_p in \[0, 1\] \(0: none\)$/);
  const p = core.nextTokenDistribution([1, 2, 3], { temperature: 1, top_k: 2, top_p: null });
  assert.ok(p[0] === 0 && Math.abs(p[2] - 1 / (1 + Math.exp(-1))) < 1e-6, String(p));
});

// The bindings' own step before the core (Float32Array data set beside the JSON) reads `inputs`: a
// value it cannot walk goes to the core as it is, whose message names the field.
test('inputs that are not a list of objects, or no scenario at all, get the core\'s message and field, not a TypeError', () => {
  const refused = (scenario, field, pattern) => {
    for (const call of [() => core.run(scenario), () => core.generator(scenario), () => core.trainer(scenario)])
      assert.throws(call, (e) => e.constructor === Error && e.field === field && pattern.test(e.message), `${JSON.stringify(scenario)}: ${pattern}`);
  };
  refused({ module: 'softmax', inputs: 3 }, 'inputs', /^scenario\.inputs must be a list/);
  refused({ module: 'softmax', inputs: [null] }, 'inputs', /^inputs\[0\] must be an object with name and shape/);
  refused({ module: 'softmax', inputs: [{ name: 'x', shape: [2], data: new Float32Array([1, 2]) }, 5] }, 'inputs', /^inputs\[1\] must be an object/);
  for (const scenario of [null, undefined, 42]) refused(scenario, null, /^scenario must be a JSON object like/);
});
