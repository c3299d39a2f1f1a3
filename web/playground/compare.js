// Compare mode (docs/modern-attention.md): the same input through a second configuration B of the
// module, side by side with the page's own (A). B is A's arguments with the overrides of state.config2
// (per module, like state.config), so a link keeps both. What differs is measured here, from the two
// results: the arguments, the steps only one side has or whose shape changed, and the attention
// weights and output, cell by cell. Pure: views/compare.js draws it, page.js runs B.

import { attentionSources } from './attention-data.js';
import { moduleConfig } from './fields.js';
import { slice2d } from '../tensor.js';

// Weights that differ by more than this are highlighted (float32 noise of two identical runs is 0).
export const DIFF_TOL = 1e-6;

// B's state: A's, with B's overrides laid over the module's arguments.
export function stateB(state, info) {
  const over = state.config2?.[info.id] ?? {};
  return { ...state, config: { ...state.config, [info.id]: { ...(state.config[info.id] ?? {}), ...over } } };
}

// The overrides B starts with when compare mode is switched on: the first switch flipped (RoPE
// for ModernAttention), so the two sides differ from the start; {} when the module has none.
export function firstFlip(state, info) {
  const config = moduleConfig(state, info);
  const preferred = ['rope', 'alibi', 'causal'];
  const bools = info.args.filter((a) => a.type === 'bool');
  const arg = preferred.map((n) => bools.find((a) => a.name === n)).find(Boolean) ?? bools[0];
  return arg ? { [arg.name]: !config[arg.name] } : {};
}

// The arguments whose values differ: [{name, a, b}].
export function argDiff(info, configA, configB) {
  return info.args.filter((a) => !Object.is(configA[a.name], configB[a.name])).map((a) => ({ name: a.name, a: configA[a.name], b: configB[a.name] }));
}

// Steps only one side traces, and those both trace with another shape (in B's order).
export function stepDiff(resultA, resultB) {
  const a = new Map((resultA.steps ?? []).map((s) => [s.name, s]));
  const b = new Map((resultB.steps ?? []).map((s) => [s.name, s]));
  const same = (x, y) => x.length === y.length && x.every((v, i) => v === y[i]);
  return {
    onlyA: [...a.values()].filter((s) => !b.has(s.name)).map((s) => ({ name: s.name, shape: s.shape })),
    onlyB: [...b.values()].filter((s) => !a.has(s.name)).map((s) => ({ name: s.name, shape: s.shape })),
    reshaped: [...b.values()].filter((s) => a.has(s.name) && !same(a.get(s.name).shape, s.shape))
      .map((s) => ({ name: s.name, a: a.get(s.name).shape, b: s.shape })),
  };
}

// One head of one batch item of a weights tensor (its dims named batch, heads, seq_q, seq_k; leading
// dims optional): tensor.js slice2d's {rows, cols, data}, with the head and item clamped to the tensor's.
export function headSlice(tensor, head, item) {
  const size = (d) => (tensor.dims.includes(d) ? tensor.shape[tensor.dims.indexOf(d)] : 1);
  const H = size('heads'), h = Math.min(head, H - 1), b = Math.min(item, size('batch') - 1);
  const axes = { row: tensor.dims.indexOf('seq_q'), col: tensor.dims.indexOf('seq_k') };
  const slice = slice2d(tensor, axes, tensor.dims.map((d) => (d === 'batch' ? b : d === 'heads' ? h : 0)));
  return { ...slice, head: h, H, item: b };
}

// max |b - a| over two equally long arrays, where it is, and how many entries differ by more than tol.
export function maxDiff(a, b, tol = DIFF_TOL) {
  let max = 0, at = 0, count = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(b[i] - a[i]);
    if (d > max || Number.isNaN(d)) { max = d; at = i; }
    if (!(d <= tol)) count++;
  }
  return { max, at, count, n: a.length };
}

// The first output both results have with the same shape (the module's `output`).
function sharedOutput(resultA, resultB) {
  for (const o of resultA.outputs) {
    const p = resultB.outputs.find((x) => x.name === o.name);
    if (p && p.shape.join() === o.shape.join() && !/weights/.test(o.name)) return [o, p];
  }
  return null;
}

// Everything compare mode shows, for the displayed head and batch item:
// {args, steps, a, b (head slices), diff {rows, cols, data (b - a), ...maxDiff} | null (shapes differ),
//  output {name, ...maxDiff} | null, labels {q, k}, mask}.
export function compareData({ info, planA, resultA, planB, resultB, head, item }) {
  const srcA = attentionSources(resultA, planA)[0] ?? null;
  const srcB = attentionSources(resultB, planB)[0] ?? null;
  const result = { item, args: argDiff(info, planA.config, planB.config), steps: stepDiff(resultA, resultB), a: null, b: null, diff: null, output: null, labels: null, maskA: null, maskB: null };
  if (srcA && srcB) {
    result.a = headSlice(srcA.tensor, head, item);
    result.b = headSlice(srcB.tensor, head, item);
    result.item = result.a.item;   // the masks and labels are the drawn item's
    result.labels = { q: srcA.labels.q[result.item] ?? null, k: srcA.labels.k[result.item] ?? null };
    result.maskA = srcA.mask;
    result.maskB = srcB.mask;
    if (result.a.rows === result.b.rows && result.a.cols === result.b.cols) {
      const data = new Float32Array(result.a.data.length);
      for (let i = 0; i < data.length; i++) data[i] = result.b.data[i] - result.a.data[i];
      result.diff = { rows: result.a.rows, cols: result.a.cols, data, ...maxDiff(result.a.data, result.b.data) };
    }
  }
  const outputs = sharedOutput(resultA, resultB);
  if (outputs) result.output = { name: outputs[0].name, ...maxDiff(outputs[0].data, outputs[1].data) };
  return result;
}
