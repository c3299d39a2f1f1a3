// One head's pattern scores over training (train/patterns.js: previous-token, self, anti-diagonal,
// induction and the task's own), as a small SVG line chart from 0 to 1 with a line at the step
// the scrubber shows. Its text alternative (aria-label) gives the scores at that step. train-heads.js
// puts one under each head's map; the colours are the legend's (train-heads.js) via CSS classes.

import { t } from '../i18n.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 200, H = 56, PAD = 3;

const svgEl = (tag, attrs, parent) => {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  parent.append(el);
  return el;
};

export function createTrainScores() {
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('role', 'img');
  svg.classList.add('train-scores');
  svgEl('rect', { x: 0.5, y: 0.5, width: W - 1, height: H - 1, class: 'frame' }, svg);
  svgEl('line', { x1: 0, x2: W, y1: H / 2, y2: H / 2, class: 'grid' }, svg);
  const marker = svgEl('line', { y1: 0, y2: H, class: 'marker' }, svg);
  const lines = new Map();
  return {
    element: svg,
    // d: {series: {pattern: [[step, score]]}, maxStep, at (the shown step), label (the text alternative)}
    update({ series, maxStep, at, label }) {
      const x = (s) => PAD + (s / Math.max(1, maxStep)) * (W - 2 * PAD);
      const y = (v) => H - PAD - v * (H - 2 * PAD);
      for (const [pattern, points] of Object.entries(series)) {
        if (!lines.has(pattern)) lines.set(pattern, svgEl('polyline', { class: `line pattern-${pattern}` }, svg));
        lines.get(pattern).setAttribute('points', points.map(([s, v]) => `${x(s).toFixed(1)},${y(v).toFixed(1)}`).join(' '));
      }
      marker.setAttribute('x1', x(at));
      marker.setAttribute('x2', x(at));
      svg.setAttribute('aria-label', t('training.scoresLabel', { scores: label }));
    },
  };
}
