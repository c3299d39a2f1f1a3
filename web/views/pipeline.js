// The step pipeline: one card per traced step, in the order the forward computes them. Cards are
// reused by position across keystrokes (same module => same steps), so a redraw only updates
// text and repaints canvases. step-card.js draws each card; shapes.js words each step's change
// from its own first input (a step, a module input or a parameter of the result).

import { inputAsStep, sourceOf } from '../playground/shapes.js';
import { createStepCard } from './step-card.js';

// The tensor a step reads first, as a step or a pseudo-step with named dims.
function resolver(result, plan) {
  const steps = new Map((result.steps ?? []).map((s) => [s.name, s]));
  const find = (list, name) => list?.find((x) => x.name === name);
  return (ref) => {
    if (ref?.step) return steps.get(ref.step) ?? null;
    if (ref?.input) return inputAsStep(find(result.inputs, ref.input), plan.mod.dims[ref.input], true);
    if (ref?.param) return inputAsStep(find(result.params, ref.param), null, false);
    return null;
  };
}

export function createPipeline(list, { onSelect }) {
  const cards = [];
  return {
    element: list,
    // Heatmap width for the cards: the column's, less the card's padding.
    measureWidth: () => Math.max(240, list.clientWidth - 34),
    // result: the core's result; plan: scenario.js's plan; width: px for a heatmap; selected: step name;
    // only: the step names a lesson shows (a Set), or null for all.
    update({ result, plan, width, selected, only = null }) {
      const steps = result.steps ?? [];
      while (cards.length < steps.length) {
        const card = createStepCard({ onSelect });
        cards.push(card);
        list.append(card.element);
      }
      while (cards.length > steps.length) cards.pop().remove();
      const resolve = resolver(result, plan);
      const vocab = plan.vocab?.tokens;
      steps.forEach((step, i) => {
        const from = resolve(sourceOf(step));
        const inputOp = (k) => (step.inputs[k]?.step ? resolve(step.inputs[k])?.op ?? null : null);
        const input = (k) => resolve(step.inputs[k]);
        cards[i].update(step, { index: i, from, inputOp, input, plan, vocab, mask: plan.mask, width, selected: step.name === selected });
        cards[i].element.hidden = !!only && !only.has(step.name);
      });
    },
  };
}
