// One traced step as a card: the seed's variable name, its code line, the shape with named dims,
// how the shape changed from the step before (shapes.js), and its values as a heatmap of one 2-D
// slice with selectors for the other dims (batch, heads, ...). pipeline.js keeps one per step.

import { scaleFor } from '../colors.js';
import { createExportMenu } from '../export.js';
import { i18nText, t } from '../i18n.js';
import { describeChange } from '../shapes.js';
import { formatValue, heatmapAxes, namedShape, slice2d } from '../tensor.js';
import { createHeatmap } from './heatmap.js';
import { lazyDraw } from './lazy.js';
import { createValueTable } from './value-table.js';

const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };

let uid = 0;

export function createStepCard({ onSelect }) {
  const id = `step-${++uid}`;
  const root = document.createElement('article');
  root.className = 'step';
  root.dataset.testid = 'step';
  root.setAttribute('aria-labelledby', `${id}-name`);

  const header = document.createElement('header');
  const index = document.createElement('span');
  index.className = 'step-index';
  const title = document.createElement('h3');
  title.id = `${id}-name`;
  const name = document.createElement('code');
  title.append(name);
  const codeButton = document.createElement('button');
  codeButton.type = 'button';
  codeButton.className = 'small';
  i18nText(codeButton, 'step.code');
  codeButton.setAttribute('aria-pressed', 'false');
  header.append(index, title, codeButton);

  const shape = document.createElement('p');
  shape.className = 'shape';
  const change = document.createElement('p');
  change.className = 'change';
  const formula = document.createElement('pre');
  formula.className = 'formula';
  const formulaCode = document.createElement('code');
  formula.append(formulaCode);
  const selectors = document.createElement('div');
  selectors.className = 'selectors';
  const heatmap = createHeatmap({ onCell: null });
  const table = createValueTable();
  // Export: the whole tensor (JSON, CSV, .npy) and the heatmap as drawn (PNG, SVG).
  const exportMenu = createExportMenu({ tensor: () => step, heatmap });
  root.append(header, shape, change, formula, selectors, heatmap.element, table.element, exportMenu);

  let step = null;
  let ctx = null;
  // Cards off screen keep their text current and paint their heatmap when scrolled into view:
  // a dozen canvases repainted per keystroke is most of a frame's budget.
  const lazy = lazyDraw(root, () => draw(), { initiallyVisible: false });
  let selectorKey = '';
  const fixed = new Map();   // dim index -> chosen index, kept across redraws

  codeButton.addEventListener('click', () => onSelect(step.name));

  function buildSelectors(axes) {
    const key = `${step.dims.join()}|${step.shape.join()}`;
    if (key === selectorKey) return;
    selectorKey = key;
    const parts = [];
    step.shape.forEach((n, i) => {
      if (i === axes.row || i === axes.col || n <= 1) return;
      const label = document.createElement('label');
      label.className = 'inline';
      const span = document.createElement('span');
      span.textContent = step.dims[i];
      const select = document.createElement('select');
      select.dataset.dim = String(i);
      for (let k = 0; k < n; k++) {
        const o = document.createElement('option');
        o.value = String(k);
        o.textContent = String(k);
        select.append(o);
      }
      if ((fixed.get(i) ?? 0) >= n) fixed.set(i, 0);
      select.value = String(fixed.get(i) ?? 0);
      select.addEventListener('change', () => { fixed.set(i, Number(select.value)); draw(); });
      label.append(span, select);
      parts.push(label);
    });
    selectors.replaceChildren(...parts);
    selectors.hidden = parts.length === 0;
  }

  function labelsFor(dim, b) {
    const n = step.shape[step.dims.indexOf(dim)];
    let labels = null;
    if (dim === 'seq' || dim === 'seq_q') labels = ctx.labels.q[b] ?? ctx.labels.q[0];
    else if (dim === 'seq_k') labels = ctx.labels.k[b] ?? ctx.labels.k[0];
    else if (dim === 'vocab') labels = ctx.vocab;
    return labels && labels.length === n ? labels : null;
  }

  function draw() {
    const axes = heatmapAxes(step.dims, step.shape);
    buildSelectors(axes);
    const at = step.shape.map((_, i) => fixed.get(i) ?? 0);
    const bDim = step.dims.indexOf('batch');
    const b = bDim >= 0 ? at[bDim] : 0;
    const slice = slice2d(step, axes, at);
    const rowDim = axes.row >= 0 ? step.dims[axes.row] : '';
    const colDim = step.dims[axes.col];
    const rowLabels = axes.row >= 0 ? labelsFor(rowDim, b) : null;
    const colLabels = labelsFor(colDim, b);
    const weights = /softmax|dropout\(/.test(`${step.code} ${step.cpp}`) && rowDim === 'seq_q' && colDim === 'seq_k';
    const masked = weights && ctx.mask ? (r, c) => ctx.mask.at(b, r, c) : null;
    const where = at.map((v, i) => (i === axes.row || i === axes.col ? ':' : String(v))).join(', ');
    const describeCell = (r, c, v) => {
      const idx = at.map((x, i) => (i === axes.row ? r : i === axes.col ? c : x)).join(', ');
      const rl = rowLabels ? ` ${rowDim} "${rowLabels[r]}"` : '';
      const cl = colLabels ? ` ${colDim} "${colLabels[c]}"` : '';
      const text = `${step.name}[${idx}] = ${formatValue(v)}${rl}${cl}`;
      return masked?.(r, c) ? t('ui.masked', { text }) : text;
    };
    const label = t('step.heatmap', { name: step.name, where, rows: slice.rows, cols: slice.cols });
    heatmap.update({
      slice, scale: ctx.scale, width: ctx.width, rowLabels, colLabels, masked, describeCell, label,
      values: slice.cols <= 8 && slice.rows <= 16,
    });
    table.update({ slice, rowLabels, colLabels, masked, caption: `${step.name}[${where}]`, corner: `${rowDim} \\ ${colDim}` });
  }

  return {
    element: root,
    // s: the step; c: {index, prev, labels: {q, k}, vocab, mask, width, selected}
    update(s, c) {
      step = s;
      ctx = c;
      ctx.scale = scaleFor(s.data, { probabilities: /softmax/.test(s.code) && !/dropout\(/.test(s.cpp) });
      root.dataset.step = s.name;
      const shapeJson = JSON.stringify(s.shape);
      if (root.dataset.shape !== shapeJson) root.dataset.shape = shapeJson;
      root.classList.toggle('selected', !!c.selected);
      codeButton.setAttribute('aria-pressed', c.selected ? 'true' : 'false');
      codeButton.setAttribute('aria-label', t('step.showCode', { name: s.name }));
      setText(index, String(c.index + 1));
      setText(name, s.name);
      setText(shape, namedShape(s.dims, s.shape));
      setText(change, describeChange(c.prev, s));
      setText(formulaCode, s.code);
      lazy.request();
    },
    remove() {
      lazy.disconnect();
      root.remove();
    },
  };
}
