// RoPE drawn as what it is: each pair (x[i], x[i + D/2]) of a query or key vector turned by the
// angle θ_i = position · base^(−2i/D) (rotate-half convention: x·cos + rotate_half(x)·sin). One dial
// per pair for one token: the vector before (grey, the step's input) and after (blue, the step),
// the arc between them, and θ_i. Low pairs turn fast, high pairs slowly: the frequencies a student
// sees. step-card.js shows it under the heatmap of a `rope` step (q_rot, k_rot).

import { i18nText, t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { setHidden } from './dom-write.js';

const SVG = 'http://www.w3.org/2000/svg';
const SIZE = 72, R = 30, C = SIZE / 2;

const svg = (tag, attrs = {}) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};

// The pairs of one token of a rope step: [{i, before: [x, y], after: [x, y], theta}], θ from the
// cos table step's attributes (positions, base) when present, else from the cos/sin values.
// step, from: (..., seq, d_head) tensors of the same shape; lead: indices of the dims before seq.
export function ropePairs({ step, from, cos, sin, lead, position }) {
  const D = step.shape.at(-1), T = step.shape.at(-2);
  const base = lead.reduce((acc, v, i) => acc * step.shape[i] + v, 0);
  const offset = (base * T + position) * D;
  const half = D / 2;
  const attrs = cos?.attrs ?? {};
  const pairs = [];
  for (let i = 0; i < half; i++) {
    let theta;
    if (Array.isArray(attrs.positions) && Number.isFinite(attrs.base)) theta = attrs.positions[position] * attrs.base ** (-(2 * i) / D);
    else theta = Math.atan2(sin.data[position * D + i], cos.data[position * D + i]);
    pairs.push({
      i, theta,
      before: [from.data[offset + i], from.data[offset + i + half]],
      after: [step.data[offset + i], step.data[offset + i + half]],
    });
  }
  return pairs;
}

// One pair's dial, its vectors drawn at unit length (a rotation keeps the length; the title says it).
function dial(pair) {
  const root = svg('svg', { viewBox: `0 0 ${SIZE} ${SIZE + 14}`, width: SIZE, height: SIZE + 14, class: 'rope-dial' });
  const title = svg('title');
  title.textContent = t('rope.dialTitle', {
    i: pair.i, theta: formatValue(pair.theta, 3), norm: formatValue(Math.hypot(...pair.before), 3),
    before: pair.before.map((v) => formatValue(v, 3)).join(', '), after: pair.after.map((v) => formatValue(v, 3)).join(', '),
  });
  root.append(title, svg('circle', { cx: C, cy: C, r: R, class: 'rope-ring' }));
  const norm = Math.max(1e-30, Math.hypot(...pair.before));
  const point = ([x, y]) => [C + (x / norm) * R * 0.92, C - (y / norm) * R * 0.92];
  const a0 = Math.atan2(pair.before[1], pair.before[0]);
  const turn = ((pair.theta % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);
  if (turn > 1e-3) {
    const r = R * 0.45, a1 = a0 + turn;
    const [x0, y0] = [C + r * Math.cos(a0), C - r * Math.sin(a0)];
    const [x1, y1] = [C + r * Math.cos(a1), C - r * Math.sin(a1)];
    root.append(svg('path', { d: `M ${x0} ${y0} A ${r} ${r} 0 ${turn > Math.PI ? 1 : 0} 0 ${x1} ${y1}`, class: 'rope-arc' }));
  }
  const [bx, by] = point(pair.before), [ax, ay] = point(pair.after);
  root.append(svg('line', { x1: C, y1: C, x2: bx, y2: by, class: 'rope-before' }), svg('line', { x1: C, y1: C, x2: ax, y2: ay, class: 'rope-after' }));
  const label = svg('text', { x: C, y: SIZE + 11, 'text-anchor': 'middle', class: 'rope-label' });
  label.textContent = `${pair.i}: ${formatValue(pair.theta, 2)}`;
  root.append(label);
  return root;
}

export function createRopeDials() {
  const figure = document.createElement('figure');
  figure.className = 'rope-dials';
  figure.dataset.testid = 'rope-dials';
  const caption = document.createElement('figcaption');
  const label = document.createElement('label');
  label.className = 'inline';
  const select = document.createElement('select');
  select.dataset.testid = 'rope-position';
  label.append(i18nText(document.createElement('span'), 'rope.position'), select);
  const dials = document.createElement('div');
  dials.className = 'rope-dial-row';
  dials.setAttribute('role', 'group');
  dials.tabIndex = 0;   // one row that scrolls sideways: the keyboard scrolls it too
  figure.append(caption, label, dials);
  let last = null, chosen = null;

  // Everything but the dials (caption, token select): what takes room before the card is painted.
  function frame(d) {
    const T = d.step.shape.at(-2);
    const position = Math.min(chosen ?? T - 1, T - 1);
    const options = Array.from({ length: T }, (_, p) => (d.labels?.[p] != null ? `${p}: ${d.labels[p]}` : String(p)));
    if ([...select.options].map((o) => o.textContent).join('\n') !== options.join('\n')) {
      select.replaceChildren(...options.map((text, p) => Object.assign(document.createElement('option'), { value: String(p), textContent: text })));
    }
    select.value = String(position);
    caption.textContent = t('rope.caption', { name: d.step.name, from: d.from.name, position, n: d.step.shape.at(-1) / 2 });
    return position;
  }

  function draw() {
    if (!last) return;
    const position = frame(last);
    const pairs = ropePairs({ ...last, position });
    dials.setAttribute('aria-label', t('rope.groupLabel', { name: last.step.name, position, thetas: pairs.map((p) => formatValue(p.theta, 2)).join(', ') }));
    dials.replaceChildren(...pairs.map(dial));
    figure.dataset.position = String(position);
  }
  select.addEventListener('change', () => { chosen = Number(select.value); draw(); });

  return {
    element: figure,
    // d as update's: the caption and the token select now, the dials when update() paints them.
    prepare(d) {
      setHidden(figure, !d);
      if (d) frame(d);
    },
    // d: {step, from (its input before the rotation), cos, sin (the table steps), lead (indices of
    // the dims before seq: batch, heads), labels (the tokens along seq, or null)}, or null: hidden.
    update(d) {
      setHidden(figure, !d);
      last = d;
      if (d) draw();
    },
  };
}
