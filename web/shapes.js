// Says in words what a traced step did to the shape of the tensor before it: a view that splits
// d_model into heads × d_head, a transpose, a concat, a matmul contracting d_head... The step
// cards (views/step-card.js) print it under each step's named shape, in the page's language (i18n.js).

import { t } from './i18n.js';
import { namedShape, prod } from './tensor.js';

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

// One sentence for the operation itself, from the seed's code line and the core's call.
function operation(step, prev) {
  const code = `${step.code} ${step.cpp}`;
  const last = step.shape.at(-1);
  const lastName = step.dims.at(-1);
  if (/embedding\(/.test(step.cpp)) return t('change.embedding');
  if (/positional_encoding\(/.test(step.cpp)) return t('change.posTable');
  if (/add_positional|add\(x, pe\)/.test(step.cpp)) return t('change.addPos');
  if (/split_heads/.test(step.cpp) || (/\.view\(|\.reshape\(/.test(step.code) && /transpose\(1, 2\)/.test(step.code) && step.shape.length > (prev?.shape.length ?? 0))) {
    const heads = step.shape[step.dims.indexOf('heads')];
    const width = heads * last;
    return t(/linear\(/.test(step.cpp) ? 'change.splitHeadsLinear' : 'change.splitHeads', { width, heads, lastName, last });
  }
  if (/merge_heads|_combine_heads|contiguous\(\)\.view|\.reshape\(batch/.test(code) && prev && step.shape.length < prev.shape.length) {
    const h = prev.shape[prev.dims.indexOf('heads')];
    return t('change.mergeHeads', { h, dim: prev.dims.at(-1), size: prev.shape.at(-1), lastName, last });
  }
  if (/\.view\(\{B, T, H, 3 \* D\}\)|reshape\(batch_size, seq_len, self.num_heads, 3/.test(code)) {
    return t('change.fusedQkv', { heads: step.shape[2], last });
  }
  if (/\.chunk\(|\.slice\(/.test(code)) {
    const which = { q: 'first', k: 'second', v: 'last' }[step.name.split('.').at(-1)] ?? 'one';
    return t(`change.chunk.${which}`, { width: 3 * last, lastName, last });
  }
  if (/cat_last|torch\.cat/.test(code)) {
    return t('change.cat', { lastName, last });
  }
  if (/np\.max|max over the axis/.test(code)) return t('change.softmaxMax');
  if (/np\.exp|exp\(x - max\)/.test(code)) return t('change.softmaxExp');
  if (/masked_fill/.test(code)) return t('change.maskedFill', { fill: /-1e9/.test(code) ? '−1e9' : '−∞' });
  if (/dropout\(/.test(step.cpp)) return t('change.dropout');
  if (/softmax/.test(code)) return t('change.softmax', { dim: step.dims.at(-1) });
  if (/layer_norm/.test(code)) return t('change.layerNorm');
  if (/relu\(linear/.test(code)) return t('change.ffn', { lastName, last });
  if (/^add\(/.test(step.cpp)) return t('change.residual');
  if (/x @ (self\.)?W_|linear\(x|self\.W_\w+\(|self\.w_\w+\(|linear_\w\(x\)/.test(code) && !/matmul|einsum/.test(step.cpp)) {
    return t('change.projection', { lastName, last });
  }
  if (/matmul|einsum| @ /.test(code)) {
    if (/^seq_q$/.test(step.dims.at(-2) ?? '') && /^seq_k$/.test(lastName)) {
      return t('change.scores');
    }
    return t('change.weightedSum');
  }
  if (/mul_scalar|div_scalar/.test(code)) return t('change.scaled');
  if (/linear\(|@ W_|self\.W_|self\.w_|fc_out|out_proj|W_O/.test(code)) {
    return t('change.linear', { lastName, last });
  }
  if (/transpose/.test(code)) return t('change.transpose');
  return '';
}

// prev: the step before (or the module's input as a pseudo-step), step: this one.
export function describeChange(prev, step) {
  const op = operation(step, prev);
  if (!prev) return op;
  let shape;
  if (sameShape(prev, step) && prev.dims.join() === step.dims.join()) shape = t('change.sameShape', { prev: prev.name });
  else if (prod(prev.shape) === prod(step.shape) && prev.shape.length === step.shape.length
    && missing(prev, step).length === 0) shape = t('change.reordered', { prev: prev.name });
  else shape = t('change.from', { prev: prev.name, shape: namedShape(prev.dims, prev.shape) });
  return op ? t('change.withOp', { op, shape }) : t('change.shapeOnly', { shape });
}

// A pseudo-step for the module's first input, so the first card also says how it changed.
export function inputAsStep(input, plan) {
  if (!input) return null;
  const n = input.shape.length;
  let dims;
  if (plan.mod.kind === 'ids') dims = ['batch', 'seq'];
  else {
    const width = plan.mod.widthArg ?? 'd';
    dims = n === 2 ? ['seq', width] : n === 3 ? ['batch', 'seq', width] : input.shape.map((_, i) => `dim${i}`);
  }
  return { name: t('change.input', { name: input.name }), shape: input.shape, dims };
}
