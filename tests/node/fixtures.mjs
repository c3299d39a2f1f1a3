// Reading tests/fixtures/ (and tests/fixtures/train/) from Node (twin of tests/native/fixtures.hpp):
// names, expected values ("data" or base64 "data_b64"), the tolerance check (atol 1e-5, rtol
// 1e-4), and checkResult: every output, step, step gradient, gradient, loss and parameter of a
// result against PyTorch's, with the looser tolerance after N optimizer steps; a generation's ids
// and, per new token, its ids, the most probable ids (exactly) and their probabilities.
import { readdirSync, readFileSync } from 'node:fs';

export const fixturesDir = new URL('../fixtures/', import.meta.url);

// sub: '' or 'train/' (its names carry the prefix)
export function fixtureNames(sub = '') {
  return readdirSync(new URL(sub, fixturesDir)).filter((f) => f.endsWith('.scenario.json'))
    .map((f) => sub + f.slice(0, -'.scenario.json'.length)).sort();
}

export function readFixture(name) {
  const read = (suffix) => JSON.parse(readFileSync(new URL(`${name}${suffix}`, fixturesDir), 'utf8'));
  return { scenario: read('.scenario.json'), expected: read('.expected.json') };
}

export function values(t) {
  if (t.data_b64 !== undefined) {
    const b = Buffer.from(t.data_b64, 'base64');
    return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  }
  return Float32Array.from(t.data, Number);  // numbers, or "-Infinity", "Infinity", "NaN"
}

// {ok, maxAbs, worst}: a === b or |a - b| <= atol + rtol * |b| everywhere (b is PyTorch's value).
export function compare(a, b, atol = 1e-5, rtol = 1e-4) {
  let ok = a.length === b.length, maxAbs = 0, worst = -1;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;  // also a masked -inf against -inf
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= atol + rtol * Math.abs(b[i]))) ok = false;
    if (!(d <= maxAbs)) { maxAbs = d; worst = i; }
  }
  return { ok, maxAbs, worst };
}

// Problems of result `r` against `expected` (empty when it matches), as the native test checks.
export function checkResult(r, expected) {
  const problems = [];
  const trained = expected.losses !== undefined;
  const [atol, rtol] = trained ? [1e-4, 1e-3] : [1e-5, 1e-4];
  const check = (label, got, want, shape, a = atol, t = rtol) => {
    if (!got) { problems.push(`${label} missing`); return; }
    if (shape && JSON.stringify(got.shape) !== JSON.stringify(shape)) problems.push(`${label} shape ${got.shape} != ${shape}`);
    const c = compare(got.data ?? got, want, a, t);
    if (!c.ok) problems.push(`${label}: max |core - pytorch| = ${c.maxAbs} at ${c.worst}`);
  };
  for (const group of ['outputs', 'steps', 'grads', 'params']) {
    for (const e of expected[group] ?? []) {
      const got = (r[group] ?? []).find((x) => x.name === e.name);
      check(`${group} '${e.name}'`, got, values(e), e.shape);
      if (group === 'steps' && (e.grad !== undefined || e.grad_b64 !== undefined)) {
        const want = e.grad_b64 !== undefined ? values({ data_b64: e.grad_b64 }) : values({ data: e.grad });
        check(`step '${e.name}' grad`, got?.grad, want, null, 1e-5, 1e-4);
      }
    }
  }
  if (expected.loss !== undefined && !(Math.abs(r.loss - expected.loss) <= 1e-4 * Math.abs(expected.loss) + 1e-7)) {
    problems.push(`loss ${r.loss} vs PyTorch ${expected.loss}`);
  }
  if (trained) check('losses', Float32Array.from(r.losses ?? []), Float32Array.from(expected.losses), null, 1e-7, 1e-4);
  if (expected.ids !== undefined) problems.push(...generationProblems(r, expected));
  problems.push(...interpProblems(r, expected));
  return problems;
}

// SCENARIO.md, "Interpretability": metrics and estimates at atol 1e-4 + rtol 1e-3, the logit lens
// as outputs; cells and components in PyTorch's order.
export function interpProblems(r, expected) {
  const problems = [];
  const near = (got, want) => Math.abs(got - want) <= 1e-4 + 1e-3 * Math.abs(want);
  const cells = (label, got, want, key) => {
    if (!got) { problems.push(`${label} missing`); return; }
    if (got.cells.length !== want.cells.length) { problems.push(`${label}: ${got.cells.length} cells, PyTorch ${want.cells.length}`); return; }
    want.cells.forEach((w, i) => {
      const c = got.cells[i];
      if (c.step !== w.step || c.head !== w.head || c.position !== w.position) problems.push(`${label} cell ${i}: ${JSON.stringify(c)} is not ${JSON.stringify(w)}`);
      else if (!near(c[key], w[key])) problems.push(`${label} cell ${i} (${w.step} head ${w.head} position ${w.position}): ${c[key]} vs PyTorch ${w[key]}`);
    });
  };
  if (expected.patching) {
    cells('patching', r.patching, expected.patching, 'metric');
    for (const k of ['clean_metric', 'corrupted_metric'])
      if (r.patching && !near(r.patching[k], expected.patching[k])) problems.push(`patching.${k}: ${r.patching[k]} vs PyTorch ${expected.patching[k]}`);
  }
  if (expected.attribution_patching) cells('attribution_patching', r.attribution_patching, expected.attribution_patching, 'estimate');
  (expected.logit_lens ?? []).forEach((w, i) => {
    const got = r.logit_lens?.[i];
    if (!got || got.step !== w.step) { problems.push(`logit_lens ${i}: ${got?.step} is not ${w.step}`); return; }
    const c = compare(got.data, values(w));
    if (!c.ok) problems.push(`logit_lens '${w.step}': max |core - pytorch| = ${c.maxAbs}`);
  });
  if (expected.logit_attribution) {
    const got = r.logit_attribution, want = expected.logit_attribution;
    if (!got) problems.push('logit_attribution missing');
    else {
      if (!near(got.total, want.total)) problems.push(`logit_attribution.total ${got.total} vs PyTorch ${want.total}`);
      want.components.forEach((w, i) => {
        const c = got.components[i];
        if (!c || c.name !== w.name || !near(c.value, w.value)) problems.push(`logit_attribution component ${i}: ${JSON.stringify(c)} vs PyTorch ${JSON.stringify(w)}`);
      });
    }
  }
  return problems;
}

// SCENARIO.md, "Generation": ids exactly; per new token its ids and top_ids exactly, top_probs at
// atol 1e-5 + rtol 1e-4.
export function generationProblems(r, expected) {
  const problems = [];
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(r.ids, expected.ids)) problems.push(`ids ${JSON.stringify(r.ids)} != PyTorch's ${JSON.stringify(expected.ids)}`);
  if ((r.generated ?? []).length !== expected.generated.length) return [...problems, 'generated: another number of tokens'];
  expected.generated.forEach((e, t) => {
    const g = r.generated[t];
    if (!same(g.ids, e.ids)) problems.push(`token ${t}: ids ${g.ids} != ${e.ids}`);
    if (!same(g.top_ids, e.top_ids)) problems.push(`token ${t}: top_ids ${JSON.stringify(g.top_ids)} != ${JSON.stringify(e.top_ids)}`);
    e.top_probs.forEach((row, b) => {
      const c = compare(Float32Array.from(g.top_probs[b] ?? []), Float32Array.from(row));
      if (!c.ok) problems.push(`token ${t} row ${b}: top_probs max |core - pytorch| = ${c.maxAbs}`);
    });
  });
  return problems;
}
