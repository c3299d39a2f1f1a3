// Compare mode's card (compare.js computes what it shows): B's arguments as a second form, the
// arguments and steps that differ, and one head's attention weights of A and of B side by side
// with B − A beside them; the cells that differ are outlined on all three maps.

import { scaleFor } from '../colors.js';
import { DIFF_TOL } from '../playground/compare.js';
import { i18nText, t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { createArgsForm } from './config-form.js';
import { createHeatmap } from './heatmap.js';
import { lazyDraw } from './lazy.js';
import { createValueTable } from './value-table.js';

const el = (tag, className = '', testid = '') => {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (testid) e.dataset.testid = testid;
  return e;
};

const shapeText = (shape) => `[${shape.join(', ')}]`;
const valueText = (v) => (typeof v === 'number' && !Number.isInteger(v) ? formatValue(v) : String(v));

function figure(testid, captionKey) {
  const fig = el('figure', 'compare-map', testid);
  const caption = i18nText(el('figcaption'), captionKey);
  const heatmap = createHeatmap({ onCell: null });
  const table = createValueTable();   // the numbers for screen readers (the heatmap's long description)
  heatmap.details(table.element);
  fig.append(caption, heatmap.element, table.element);
  return { fig, heatmap, table };
}

// One map and its table: data {slice, scale, width, rowLabels, colLabels, masked?, marked?, label}.
function drawMap(map, data, caption) {
  map.heatmap.update(data);
  map.table.update({ slice: data.slice, rowLabels: data.rowLabels, colLabels: data.colLabels, masked: data.masked ?? null, caption, corner: t('attn.corner') });
}

// The differing steps as list items: only in A, only in B, other shape.
function stepItems(steps) {
  const items = [];
  const names = (list) => list.map((s) => `${s.name} ${shapeText(s.shape)}`).join(', ');
  if (steps.onlyB.length) items.push(t('compare.onlyB', { steps: names(steps.onlyB) }));
  if (steps.onlyA.length) items.push(t('compare.onlyA', { steps: names(steps.onlyA) }));
  for (const s of steps.reshaped) items.push(t('compare.reshaped', { name: s.name, a: shapeText(s.a), b: shapeText(s.b) }));
  if (!items.length) items.push(t('compare.sameSteps'));
  return items.map((text) => Object.assign(el('li'), { textContent: text }));
}

// The summary line: the arguments that differ, then the weights' and the output's largest difference.
function summary(data) {
  const parts = [];
  parts.push(data.args.length
    ? t('compare.args', { args: data.args.map((a) => t('compare.arg', { name: a.name, a: valueText(a.a), b: valueText(a.b) })).join('; ') })
    : t('compare.sameArgs'));
  if (data.diff) {
    const r = Math.floor(data.diff.at / data.diff.cols), c = data.diff.at % data.diff.cols;
    const q = data.labels?.q?.[r] ?? String(r), k = data.labels?.k?.[c] ?? String(c);
    parts.push(t('compare.weights', { max: formatValue(data.diff.max), q, k, count: data.diff.count, n: data.diff.n, head: data.a.head }));
  } else if (data.a && data.b) {
    parts.push(t('compare.weightsShapes', { a: `${data.a.rows}×${data.a.cols}`, b: `${data.b.rows}×${data.b.cols}` }));
  }
  if (data.output) parts.push(t('compare.output', { name: data.output.name, max: formatValue(data.output.max) }));
  return parts.join(' ');
}

// container: the compare card's body; onArg(name, value): B's argument edited (NaN while half-typed).
export function createCompareView(container, { onArg }) {
  const intro = i18nText(el('p', 'hint'), 'compare.intro');
  const argsHeading = i18nText(el('h3'), 'compare.argsHeading');
  const args = el('div', 'args compare-args', 'compare-args');
  const error = el('p', 'error', 'compare-error');
  error.setAttribute('role', 'alert');
  error.hidden = true;
  const text = el('p', 'compare-summary', 'compare-summary');
  text.setAttribute('role', 'status');
  const steps = el('ul', 'compare-steps', 'compare-steps');
  const maps = { a: figure('compare-a', 'compare.captionA'), b: figure('compare-b', 'compare.captionB'), diff: figure('compare-diff', 'compare.captionDiff') };
  const grid = el('div', 'compare-grid');
  grid.append(maps.a.fig, maps.b.fig, maps.diff.fig);
  container.append(intro, argsHeading, args, error, text, steps, grid);
  const form = createArgsForm(args, onArg, { prefix: 'compare-arg' });
  let data = null, width = 300;

  function draw() {
    if (!data) return;
    const { a, b, diff, labels } = data;
    text.textContent = summary(data);
    steps.replaceChildren(...stepItems(data.steps));
    grid.hidden = !a || !b;
    if (!a || !b) return;
    const differs = diff ? (r, c) => !(Math.abs(diff.data[r * diff.cols + c]) <= DIFF_TOL) : null;   // as compare.js counts them
    const w = Math.max(160, Math.min(360, width));
    const rowLabels = labels?.q?.length === a.rows ? labels.q : null;
    const colLabels = labels?.k?.length === a.cols ? labels.k : null;
    const side = (name, slice, mask) => {
      const masked = mask ? (r, c) => mask.at(data.item, r, c) : null;
      const label = t('compare.label', { side: name.toUpperCase(), head: slice.head, rows: slice.rows, cols: slice.cols });
      drawMap(maps[name], { slice, scale: scaleFor(slice.data, { probabilities: true }), width: w, rowLabels, colLabels, masked, marked: differs, weights: true, label }, label);
    };
    side('a', a, data.maskA);
    side('b', b, data.maskB);
    maps.diff.fig.hidden = !diff;
    if (diff) {
      const label = t('compare.diffLabel', { head: a.head, max: formatValue(diff.max), count: diff.count, n: diff.n });
      drawMap(maps.diff, { slice: diff, scale: scaleFor(diff.data), width: w, rowLabels, colLabels, marked: differs, label }, label);
    }
  }
  const lazy = lazyDraw(container, draw);

  return {
    // info, configB: the module and B's arguments (the form's values).
    form(info, configB) { form.update(info, configB); },
    // A core error of B's run (B's form keeps what was typed), or null.
    error(message) {
      error.hidden = !message;
      error.textContent = message ?? '';
      container.classList.toggle('stale', !!message);
    },
    // d: compare.js compareData's; w: px for each of the three maps.
    update(d, w) {
      data = d;
      width = w;
      lazy.request();
    },
    data: () => data,
  };
}
