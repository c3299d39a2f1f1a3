// A result of core.run (bindings/attention.mjs) as the JSON the native CLI prints
// (core/scenario/result_json.cpp): floats with 9 significant digits (round-trip float32). The text
// comes in pieces, each array CHUNK values at a time, for node bindings/cli.mjs to write as they come:
// a 124M model's logits and attention weights at T = 700 are 1.0 GB of text, past the longest string
// V8 can hold.
const CHUNK = 1 << 16;

const num = (v) => (Number.isFinite(v) ? String(Number(v.toPrecision(9))) : `"${v}"`);  // "NaN", "Infinity", "-Infinity" as core/scenario.cpp

function* arr(data) {
  yield '[';
  for (let i = 0; i < data.length; i += CHUNK) yield `${i ? ',' : ''}${Array.from(data.subarray ? data.subarray(i, i + CHUNK) : data.slice(i, i + CHUNK), num).join(',')}`;
  yield ']';
}

function* list(items, each, sep = ',\n') {
  for (let i = 0; i < items.length; ++i) {
    if (i) yield sep;
    yield* each(items[i]);
  }
}

// {"<key>": ..., "shape": [...], <extra>, "data": [...]}
function* tensor(o, extra = '', key = 'name') {
  yield `{"${key}":${JSON.stringify(o[key])},"shape":${JSON.stringify(o.shape)}${extra},"data":`;
  yield* arr(o.data);
  yield '}';
}

// a step's description, then its data (and gradient, where computed)
function* step({ data, grad, ...meta }) {
  yield `${JSON.stringify(meta).slice(0, -1)},"data":`;
  yield* arr(data);
  if (grad) {
    yield ',"grad":';
    yield* arr(grad);
  }
  yield '}';
}

export function* resultJsonPieces(r) {
  yield `{"module":${JSON.stringify(r.module)},"outputs":[\n`;
  yield* list(r.outputs, (o) => tensor(o, o.step ? `,"step":${JSON.stringify(o.step)}` : ''));
  yield ']';
  if (r.steps.length) {
    yield ',"steps":[\n';
    yield* list(r.steps, step);
    yield ']';
  }
  yield `,"attention":${JSON.stringify(r.attention)}`;
  if (r.loss !== undefined) yield `,"loss":${num(r.loss)}`;
  if (r.losses?.length) {
    yield ',"losses":';
    yield* arr(r.losses);
  }
  for (const key of ['grads', 'inputs', 'params']) {
    if (!r[key]?.length) continue;
    yield `,"${key}":[\n`;
    yield* list(r[key], (o) => tensor(o));
    yield ']';
  }
  yield* interpJson(r);
  if (r.ids) {  // generation: as core/result_json.cpp writes it
    yield `,"ids":${JSON.stringify(r.ids)},"generated":[\n`;
    yield* list(r.generated, function* ({ steps: st, top_probs: probs, ...g }) {
      yield `${JSON.stringify({ position: g.position, mode: g.mode, ids: g.ids, top_ids: g.top_ids }).slice(0, -1)},"top_probs":[`;
      yield* list(probs, arr, ',');
      yield `],"cache":${JSON.stringify(g.cache)}`;
      if (st) {
        yield ',"steps":[\n';
        yield* list(st, step);
        yield ']';
      }
      yield '}';
    });
    yield ']';
  }
  yield '}\n';
}

// SCENARIO.md, "Interpretability", as core/scenario/result_json.cpp writes it (put_interp).
function* interpJson(r) {
  const cells = (items, key) => items.map((c) => `{"step":${JSON.stringify(c.step)}${c.head !== undefined ? `,"head":${c.head}` : ''}`
    + `${c.position !== undefined ? `,"position":${c.position}` : ''},"${key}":${num(c[key])}}`).join(',\n');
  if (r.patching) {
    const p = r.patching;
    yield `,\n"patching":{"clean_metric":${num(p.clean_metric)},"corrupted_metric":${num(p.corrupted_metric)},"cells":[\n${cells(p.cells, 'metric')}]}`;
  }
  if (r.attribution_patching) yield `,\n"attribution_patching":{"cells":[\n${cells(r.attribution_patching.cells, 'estimate')}]}`;
  if (r.logit_lens?.length) {
    yield ',\n"logit_lens":[\n';
    yield* list(r.logit_lens, (e) => tensor(e, '', 'step'));
    yield ']';
  }
  if (r.logit_attribution) {
    const a = r.logit_attribution;
    yield `,\n"logit_attribution":{"total":${num(a.total)},"components":[\n${a.components.map((c) => `{"name":${JSON.stringify(c.name)},"value":${num(c.value)}}`).join(',\n')}]}`;
  }
}
