// Finds the attention weights in a result, for the attention view and the checks: the tensors
// the seed returns (outputs named *attention_weights), else every softmax step (the Transformer
// returns only logits, so its 2 × num_layers attention maps come from its trace).

import { t } from './i18n.js';
import { stepLabels } from './scenario.js';

const WEIGHT_DIMS = { 2: ['seq_q', 'seq_k'], 3: ['batch', 'seq_q', 'seq_k'], 4: ['batch', 'heads', 'seq_q', 'seq_k'] };

export function isSoftmaxStep(step) {
  return /softmax/.test(step.code) && !/dropout\(/.test(step.cpp) && step.dims.at(-1) === 'seq_k';
}

// [{id, label, tensor: {shape, dims, data}, labels: {q, k}, mask}], first = the one to show first.
export function attentionSources(result, plan) {
  const outputs = result.outputs.filter((o) => /attention_weights/.test(o.name) && WEIGHT_DIMS[o.shape.length]);
  if (outputs.length > 0) {
    return outputs.map((o) => {
      const cross = /^cross/.test(o.name);
      const labels = plan.mod.kind === 'decoder' && !cross ? { q: plan.labels.q, k: plan.labels.q } : plan.labels;
      return {
        id: o.name,
        label: t('attn.returned', { name: o.name }),
        tensor: { name: o.name, shape: o.shape, dims: WEIGHT_DIMS[o.shape.length], data: o.data },
        labels,
        mask: plan.mask,
      };
    });
  }
  return (result.steps ?? []).filter(isSoftmaxStep).map((s) => ({
    id: s.name,
    label: s.name,
    tensor: s,
    labels: stepLabels(plan, s.name),
    mask: plan.mask,
  }));
}
