// The interpretability fields through both command lines (SCENARIO.md, "Interpretability"): every
// bad input of tests/bad_inputs.json that uses them exits 1 with its message on one line, from the
// native attention-cli and from the WASM one (bindings/cli.mjs); and a scenario with every field
// gives the same result from both.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readFixture } from './fixtures.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const native = `${root}build/native/attention-cli`;
const clis = [['native', native, []], ['wasm', process.execPath, [`${root}bindings/cli.mjs`]]];
const INTERP = ['interventions', 'patching', 'attribution_patching', 'logit_lens', 'logit_attribution'];

const cases = JSON.parse(readFileSync(new URL('../bad_inputs.json', import.meta.url), 'utf8')).cases
  .filter((c) => typeof c.scenario === 'object' && !Array.isArray(c.scenario) && INTERP.some((k) => k in c.scenario));

const run = (cmd, pre, scenario) => spawnSync(cmd, [...pre, 'run', '-'], { input: JSON.stringify(scenario), encoding: 'utf8', maxBuffer: 1 << 26 });

test(`${cases.length} bad inputs of the interpretability fields: exit 1 and the message, natively and through WASM`, { skip: !existsSync(native) && 'no native build' }, () => {
  assert.ok(cases.length >= 15, `${cases.length} cases`);
  for (const [name, cmd, pre] of clis) {
    for (const c of cases) {
      const r = run(cmd, pre, c.scenario);
      assert.equal(r.status, 1, `${name}: ${c.what}: exit ${r.status}, stdout ${r.stdout.slice(0, 200)}`);
      assert.ok(r.stderr.includes(c.error), `${name}: ${c.what}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: ${c.what}: one line`);
    }
  }
});

test('every field at once: the native and the WASM command lines give the same result', { skip: !existsSync(native) && 'no native build' }, () => {
  const { scenario } = readFixture('interp_gpt_patching_head');
  scenario.interventions = [{ step: 'transformer.h.0.attn.y', head: 1, set: 'zero' }];
  const [a, b] = clis.map(([, cmd, pre]) => {
    const r = run(cmd, pre, scenario);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  });
  for (const key of INTERP.slice(1)) assert.ok(a[key] !== undefined && b[key] !== undefined, key);
  const close = (x, y) => Math.abs(x - y) <= 1e-5 + 1e-4 * Math.abs(y);
  a.patching.cells.forEach((c, i) => assert.ok(close(c.metric, b.patching.cells[i].metric), JSON.stringify([c, b.patching.cells[i]])));
  a.attribution_patching.cells.forEach((c, i) => assert.ok(close(c.estimate, b.attribution_patching.cells[i].estimate)));
  a.logit_attribution.components.forEach((c, i) => assert.ok(close(c.value, b.logit_attribution.components[i].value)));
  assert.deepEqual(a.logit_lens.map((e) => e.step), b.logit_lens.map((e) => e.step));
});

test('the logit-attribution components sum to the total, and the logit lens ends at the logits', () => {
  for (const name of ['interp_gpt_patching_head', 'interp_gpt_patching_position_prob', 'interp_gpt_rope_gqa']) {
    const { scenario } = readFixture(name);
    const r = JSON.parse(run(native, [], scenario).stdout);
    const sum = r.logit_attribution.components.reduce((s, c) => s + c.value, 0);
    assert.ok(Math.abs(sum - r.logit_attribution.total) <= 1e-4, `${name}: components sum to ${sum}, total ${r.logit_attribution.total}`);
    if (r.logit_lens) {
      const last = r.logit_lens.at(-1).data, logits = r.outputs[0].data;
      assert.deepEqual(last, logits, `${name}: the last logit-lens entry is the logits`);
    }
  }
});
