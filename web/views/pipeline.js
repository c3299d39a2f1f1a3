// The step pipeline: one card per traced step, in the order the forward computes them. Cards are
// reused by position across keystrokes (same module => same steps), so a redraw only updates
// text and repaints canvases. step-card.js draws each card.

import { inputAsStep } from '../shapes.js';
import { stepLabels } from '../scenario.js';
import { createStepCard } from './step-card.js';

export function createPipeline(list, { onSelect }) {
  const cards = [];
  return {
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
      const input = inputAsStep(result.inputs?.[0], plan);
      let prev = input;
      const vocab = plan.vocab?.tokens;
      steps.forEach((step, i) => {
        // Each of MultiHeadAttentionWrapper's heads starts again from the module's input.
        const head = /^heads\.\d+\./.exec(step.name)?.[0];
        if (head && input && prev && !prev.name.startsWith(head)) prev = input;
        cards[i].update(step, {
          index: i, prev, labels: stepLabels(plan, step.name), vocab, mask: plan.mask, width, selected: step.name === selected,
        });
        cards[i].element.hidden = !!only && !only.has(step.name);
        prev = step;
      });
    },
  };
}
