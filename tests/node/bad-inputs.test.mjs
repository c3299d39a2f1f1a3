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
