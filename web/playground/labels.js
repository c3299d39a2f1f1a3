// Token labels for a tensor's axes. The core names, per axis of a step, the module input whose
// positions that axis runs over (step.tokens, core/SCENARIO.md "Typed steps"); the plan holds each
// input's token labels per batch item (scenario.js). The step cards, attention-data.js and the
// output view label their axes through here.

// The labels of a module input for batch item b (the first item's when there is one list), or null.
function inputLabels(plan, input, b = 0) {
  const items = input ? plan.tokens[input] : null;
  return items ? items[b] ?? items[0] : null;
}

// Axis `axis` of a step for batch item b: its input's labels, or null (a feature axis, a head).
export const axisLabels = (plan, step, axis, b = 0) => inputLabels(plan, step.tokens?.[axis], b);

// The rows of a module output (its second-to-last axis): the input its step runs over, else the
// module's first input (an elementwise module such as softmax keeps its input's positions).
export function outputRowInput(plan, step, rank) {
  return step?.tokens?.[rank - 2] ?? Object.keys(plan.tokens)[0] ?? null;
}

// {q, k}: labels per batch item of an attention block's queries and keys (result.attention).
export function blockLabels(plan, block) {
  return { q: plan.tokens[block?.inputs.query] ?? [], k: plan.tokens[block?.inputs.key] ?? [] };
}
