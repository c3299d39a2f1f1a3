// Finds the attention weights in a result, for the attention view and the checks, from the
// result's attention blocks (result.attention, core/SCENARIO.md "Attention"): the tensors the
// module returns, else each block's weights step (the Transformer returns only logits, so its
// 2 × num_layers attention maps come from its trace). labels.js labels their axes.

import { blockLabels } from './labels.js';

const WEIGHT_DIMS = { 2: ['seq_q', 'seq_k'], 3: ['batch', 'seq_q', 'seq_k'], 4: ['batch', 'heads', 'seq_q', 'seq_k'] };

// A softmax over the keys: the attention weights of one block (before any dropout).
export const isWeightsStep = (step) => step.op === 'softmax' && step.dims.at(-1) === 'seq_k';

// The outputs holding attention weights: those a block names (weights_output), and the
// `attention_weights` every attention module returns (core/SCENARIO.md "Result"), which for
// MultiHeadAttentionWrapper stacks its heads' blocks.
function weightOutputs(result) {
  const named = new Set(['attention_weights', ...result.attention.map((b) => b.weights_output).filter(Boolean)]);
  return result.outputs.filter((o) => named.has(o.name) && WEIGHT_DIMS[o.shape.length]);
}

// [{id, label: {key, params} | null, tensor: {name, shape, dims, data}, labels: {q, k}, mask}],
// first = the one to show first. label null: the tensor's own name.
export function attentionSources(result, plan) {
  const blocks = result.attention;
  const outputs = weightOutputs(result);
  if (outputs.length > 0) {
    return outputs.map((o) => ({
      id: o.name,
      label: { key: 'attn.returned', params: { name: o.name } },
      tensor: { name: o.name, shape: o.shape, dims: WEIGHT_DIMS[o.shape.length], data: o.data },
      labels: blockLabels(plan, blocks.find((b) => b.weights_output === o.name) ?? blocks[0]),
      mask: plan.mask,
    }));
  }
  const blockOf = new Map(blocks.map((b) => [`${b.prefix}${b.weights_step}`, b]));
  return (result.steps ?? []).filter((s) => blockOf.has(s.name)).map((s) => ({
    id: s.name, label: null, tensor: s, labels: blockLabels(plan, blockOf.get(s.name)), mask: plan.mask,
  }));
}
