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

// docs/interpretability.md: each ```json block is a whole scenario; both command lines run it to
// the same result, which has the field the example is about (the last-position figures the page
// quotes are checked for the interventions and patching examples).
test("docs/interpretability.md's examples run, with the same result from both command lines", { skip: !existsSync(native) && 'no native build' }, () => {
  const doc = readFileSync(`${root}docs/interpretability.md`, 'utf8');
  const examples = [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]));
  assert.equal(examples.length, INTERP.length);
  for (const scenario of examples) {
    const field = INTERP.find((k) => k in scenario);
    const [a, b] = clis.map(([name, cmd, pre]) => {
      const r = run(cmd, pre, scenario);
      assert.equal(r.status, 0, `${name}: ${field}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    });
    const same = (x, y, at) => {  // numbers within 1e-5 + 1e-4 relative (the kernels differ), the rest equal
      if (typeof x === 'number') return assert.ok(Math.abs(x - y) <= 1e-5 + 1e-4 * Math.abs(y), `${field}: ${at}: ${x} vs ${y}`);
      if (x === null || typeof x !== 'object') return assert.equal(x, y, `${field}: ${at}`);
      assert.deepEqual(Object.keys(x), Object.keys(y), `${field}: ${at}`);
      for (const k of Object.keys(x)) same(x[k], y[k], `${at}.${k}`);
    };
    same(a, b, 'result');
    if (field !== 'interventions') assert.ok(a[field], `${field} in the result`);
    const quoted = (v) => doc.includes(v.toFixed(4).replace('-', '−'));
    if (field === 'interventions') a.outputs[0].data.slice(-16, -13).forEach((v) => assert.ok(quoted(v), `the doc quotes ${v}`));
    if (field === 'patching') assert.ok(Number(/"clean_metric": ([-\d.e]+)/.exec(doc)[1]).toFixed(4) === a.patching.clean_metric.toFixed(4), 'the doc quotes the clean metric');
  }
});
