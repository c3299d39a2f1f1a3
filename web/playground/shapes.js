// Says in words what a traced step did, from its typed op, ops, attrs and inputs (core/SCENARIO.md
// "Typed steps"), and how its shape changed from its own first input (a step, a module input or a
// parameter). The step cards (views/step-card.js) print it under each step's named shape, in the
// page's language (i18n.js); pipeline.js resolves each step's first input (sourceOf, inputAsStep).

import { t } from '../i18n.js';
import { formatFill, namedShape, prod } from '../tensor.js';

// Dims (as name=size) present in `a` but not in `b`, by name and size.
function missing(a, b) {
  const pool = b.dims.map((d, i) => `${d}=${b.shape[i]}`);
  return a.dims.map((d, i) => `${d}=${a.shape[i]}`).filter((x) => {
    const j = pool.indexOf(x);
    if (j < 0) return true;
    pool.splice(j, 1);
    return false;
  });
}

function sameShape(a, b) {
  return a.shape.length === b.shape.length && a.shape.every((n, i) => n === b.shape[i]);
}

const sizeOf = (s, dim) => s.shape[s.dims.indexOf(dim)];
const last = (s) => ({ lastName: s.dims.at(-1), last: s.shape.at(-1) });

// q @ kᵀ over the seq_q × seq_k grid is the scores; x @ W with W a parameter is a projection.
function matmulSentence(step) {
  if (step.attrs.transpose_b && step.dims.at(-2) === 'seq_q' && step.dims.at(-1) === 'seq_k') return t('change.scores');
  if (step.inputs[1]?.param) return t('change.projection', last(step));
  return '';
}

// The heads put side by side again: `from` has a heads dim, the step has none.
function mergeSentence(step, from) {
  if (!from?.dims.includes('heads') || step.dims.includes('heads')) return '';
  return t('change.mergeHeads', { h: sizeOf(from, 'heads'), dim: from.dims.at(-1), size: from.shape.at(-1), ...last(step) });
}

function splitSentence(step) {
  const heads = sizeOf(step, 'heads');
  const params = { width: heads * step.shape.at(-1), heads, ...last(step) };
  return t(step.ops.includes('linear') ? 'change.splitHeadsLinear' : 'change.splitHeads', params);
}

const CHUNK = ['first', 'second', 'last'];

// One sentence per op: (step, from, inputOp) -> text. `from` is the step's first input as a step
// (or pseudo-step), inputOp(i) the op of its i-th input when that is a step. Ops folded into one
// line (step.ops) pick the sentence of the op that gives the line its meaning.
const SENTENCES = {
  embedding: () => t('change.embedding'),
  positional_encoding: () => t('change.posTable'),
  add: (s, from, inputOp) => {
    if ([0, 1].some((i) => inputOp(i) === 'alibi_bias')) return t('change.addAlibi');
    return t([0, 1].some((i) => inputOp(i) === 'positional_encoding') ? 'change.addPos' : 'change.residual');
  },
  rope_table: (s) => t(s.attrs.table === 'sin' ? 'change.ropeSin' : 'change.ropeCos', { base: s.attrs.base }),
  rope: () => t('change.rope'),
  repeat_kv: (s) => t('change.repeatKv', { n: s.attrs.repeats }),
  alibi_bias: () => t('change.alibi'),
  linear: (s) => t(s.inputs[0]?.input ? 'change.projection' : 'change.linear', last(s)),
  matmul: matmulSentence,
  weighted_sum: () => t('change.weightedSum'),
  split_heads: splitSentence,
  merge_heads: mergeSentence,
  view: (s, from) => (s.ops.includes('linear') && s.dims.includes('heads')
    ? t('change.fusedQkv', { heads: sizeOf(s, 'heads'), last: s.shape.at(-1) })
    : mergeSentence(s, from)),
  transpose: (s) => t(s.ops.includes('weighted_sum') ? 'change.weightedSum' : 'change.transpose'),
  chunk: (s) => t(`change.chunk.${CHUNK[s.attrs.index] ?? 'one'}`, { width: s.attrs.chunks * s.shape.at(-1), ...last(s) }),
  concat: (s) => t('change.cat', last(s)),
  scale: (s) => (s.ops.includes('matmul') ? matmulSentence(s) : t('change.scaled')),
  masked_fill: (s) => t('change.maskedFill', { fill: formatFill(Number(s.attrs.fill)) }),
  softmax: (s) => t('change.softmax', { dim: s.dims.at(-1) }),
  dropout: () => t('change.dropout'),
  layer_norm: () => t('change.layerNorm'),
  relu: (s) => (s.ops.includes('linear') ? t('change.ffn', last(s)) : ''),
  amax: () => t('change.softmaxMax'),
  exp: () => t('change.softmaxExp'),
};

// How the shape relates to `from`'s: the same, the same numbers reordered, or changed from it.
function shapeSentence(from, step) {
  if (sameShape(from, step) && from.dims.join() === step.dims.join()) return t('change.sameShape', { prev: from.name });
  if (prod(from.shape) === prod(step.shape) && from.shape.length === step.shape.length && missing(from, step).length === 0) {
    return t('change.reordered', { prev: from.name });
  }
  return t('change.from', { prev: from.name, shape: namedShape(from.dims, from.shape) });
}

// from: the step's first input as a step or pseudo-step ({name, shape, dims}) or null;
// inputOp(i): the op of the step's i-th input when it is a step.
export function describeChange(step, from, inputOp = () => null) {
  const op = SENTENCES[step.op]?.(step, from, inputOp) ?? '';
  if (!from) return op;
  const shape = shapeSentence(from, step);
  return op ? t('change.withOp', { op, shape }) : t('change.shapeOnly', { shape });
}

// The tensor a step is read from, as {step}, {input} or {param}: its first input; an embedding's
// rows are looked up by the ids of a module input (attrs.ids_input).
export function sourceOf(step) {
  if (step.op === 'embedding' && step.attrs.ids_input) return { input: step.attrs.ids_input };
  return step.inputs[0] ?? null;
}

// Leading dims the module table writes as '...': one is the batch, more are numbered.
function expandDims(dims, n) {
  const at = dims.indexOf('...');
  if (at < 0) return dims.length === n ? dims : null;
  const lead = n - (dims.length - 1);
  if (lead < 0) return null;
  const names = lead === 1 ? ['batch'] : Array.from({ length: lead }, (_, i) => `dim${i}`);
  return [...dims.slice(0, at), ...names, ...dims.slice(at + 1)];
}

// A module input or a parameter as a pseudo-step, so a card can say how its step changed it.
// tensor: {name, shape} from the result's inputs or params; dims: the module table's, if any.
export function inputAsStep(tensor, dims, isInput) {
  if (!tensor) return null;
  const named = (dims && expandDims(dims, tensor.shape.length)) ?? tensor.shape.map((_, i) => `dim${i}`);
  return { name: isInput ? t('change.input', { name: tensor.name }) : tensor.name, shape: tensor.shape, dims: named };
}
