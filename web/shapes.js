// Says in words what a traced step did to the shape of the tensor before it: a view that splits
// d_model into heads × d_head, a transpose, a concat, a matmul contracting d_head... The step
// cards (views/step-card.js) print it under each step's named shape.

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
  if (/embedding\(/.test(step.cpp)) return 'nn.Embedding looks up one row of the table per token id';
  if (/positional_encoding\(/.test(step.cpp)) return 'the sinusoidal table: sin on even columns, cos on odd ones, one row per position (broadcast over the batch)';
  if (/add_positional|add\(x, pe\)/.test(step.cpp)) return 'adds the position table to the embeddings: shape unchanged';
  if (/split_heads/.test(step.cpp) || (/\.view\(|\.reshape\(/.test(step.code) && /transpose\(1, 2\)/.test(step.code) && step.shape.length > (prev?.shape.length ?? 0))) {
    const heads = step.shape[step.dims.indexOf('heads')];
    const width = heads * last;
    const linear = /linear\(/.test(step.cpp) ? 'nn.Linear projects each token, then ' : '';
    return `${linear}view splits the last dim (${width}) into heads=${heads} × ${lastName}=${last}, then transpose(1, 2) moves heads in front of the tokens: each head attends with its own ${last} columns (no data is copied)`;
  }
  if (/merge_heads|_combine_heads|contiguous\(\)\.view|\.reshape\(batch/.test(code) && prev && step.shape.length < prev.shape.length) {
    const h = prev.shape[prev.dims.indexOf('heads')];
    return `the heads are put side by side again: ${h} heads × ${prev.dims.at(-1)}=${prev.shape.at(-1)} merge into ${lastName}=${last} (transpose back, then a contiguous copy and view)`;
  }
  if (/\.view\(\{B, T, H, 3 \* D\}\)|reshape\(batch_size, seq_len, self.num_heads, 3/.test(code)) {
    return `one fused nn.Linear makes q, k and v at once (3 × emb_dim columns), viewed as heads=${step.shape[2]} × 3*d_head=${last}`;
  }
  if (/\.chunk\(|\.slice\(/.test(code)) {
    const which = { q: 'first', k: 'second', v: 'last' }[step.name.split('.').at(-1)] ?? 'one';
    return `chunk(3, dim=-1) takes the ${which} third of the fused last dim: 3*d_head=${3 * last} → ${lastName}=${last}, a view (no copy)`;
  }
  if (/cat_last|torch\.cat/.test(code)) {
    return `torch.cat joins the heads' outputs along the last dim: ${lastName}=${last}`;
  }
  if (/np\.max|max over the axis/.test(code)) return 'softmax, pass 1: the max of each row (keepdims), subtracted next so exp() cannot overflow';
  if (/np\.exp|exp\(x - max\)/.test(code)) return 'softmax, pass 2: exp(x − max), every value now in (0, 1]';
  if (/masked_fill/.test(code)) return `masked_fill: shape unchanged; the masked cells become ${/-1e9/.test(code) ? '−1e9' : '−∞'}, so softmax gives them weight 0`;
  if (/dropout\(/.test(step.cpp)) return 'dropout: shape unchanged; in train mode a fraction p of the weights become 0 and the rest are scaled by 1/(1−p)';
  if (/softmax/.test(code)) return `softmax along ${step.dims.at(-1)}: shape unchanged, every row is now a probability distribution (sums to 1)`;
  if (/layer_norm/.test(code)) return 'LayerNorm over the last dim: shape unchanged, each token re-centred and re-scaled';
  if (/relu\(linear/.test(code)) return `nn.Linear widens each token to ${lastName}=${last}, then ReLU zeroes the negatives`;
  if (/^add\(/.test(step.cpp)) return 'residual connection: adds the block\'s input back, shape unchanged';
  if (/x @ (self\.)?W_|linear\(x|self\.W_\w+\(|self\.w_\w+\(|linear_\w\(x\)/.test(code) && !/matmul|einsum/.test(step.cpp)) {
    return `a learned projection maps each token's vector to ${lastName}=${last} numbers`;
  }
  if (/matmul|einsum| @ /.test(code)) {
    if (/^seq_q$/.test(step.dims.at(-2) ?? '') && /^seq_k$/.test(lastName)) {
      return 'queries @ keysᵀ: a dot product over each head\'s query/key features, one score per (query, key) pair: seq_q × seq_k';
    }
    return 'weights @ values: each query row becomes a weighted sum of the value rows (contracts seq_k), one vector per query token';
  }
  if (/mul_scalar|div_scalar/.test(code)) return 'scaled by a constant: shape unchanged';
  if (/linear\(|@ W_|self\.W_|self\.w_|fc_out|out_proj|W_O/.test(code)) {
    return `a linear layer maps each token's vector to ${lastName}=${last} numbers`;
  }
  if (/transpose/.test(code)) return 'transpose: swaps two dims (a view, no data moves)';
  return '';
}

// prev: the step before (or the module's input as a pseudo-step), step: this one.
export function describeChange(prev, step) {
  const op = operation(step, prev);
  if (!prev) return op;
  let shape;
  if (sameShape(prev, step) && prev.dims.join() === step.dims.join()) shape = `same shape as ${prev.name}`;
  else if (prod(prev.shape) === prod(step.shape) && prev.shape.length === step.shape.length
    && missing(prev, step).length === 0) shape = `same numbers, dims reordered from ${prev.name}`;
  else shape = `from ${prev.name} ${namedShape(prev.dims, prev.shape)}`;
  return op ? `${op}. Shape: ${shape}.` : `Shape: ${shape}.`;
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
  return { name: `input ${input.name}`, shape: input.shape, dims };
}
