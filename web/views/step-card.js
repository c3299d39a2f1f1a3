// One traced step as a card: the seed's variable name, its code line, the shape with named dims,
// what the step did and how its shape changed from its first input (shapes.js), and its values as
// a heatmap of one 2-D slice with selectors for the other dims (batch, heads, ...), axes labelled
// with tokens (labels.js); with gradients on (state.grads), dL/d(step) of the same slice beside
// it (the core's traced `grad`). pipeline.js keeps one per step.

import { scaleFor } from '../colors.js';
import { createExportMenu } from './export-menu.js';
import { i18nText, t } from '../i18n.js';
import { isWeightsStep } from '../playground/attention-data.js';
import { axisLabels } from '../playground/labels.js';
import { describeChange } from '../playground/shapes.js';
import { formatValue, heatmapAxes, namedShape, slice2d } from '../tensor.js';
import { setAttr, setHidden, setText } from './dom-write.js';
import { createHeatmap } from './heatmap.js';
import { lazyDraw } from './lazy.js';
import { paintsLast } from './paint-batch.js';
import { createValueTable } from './value-table.js';

let uid = 0;

const el = (tag, className = '') => Object.assign(document.createElement(tag), className ? { className } : {});

// The card's elements: header (index, name, "Code" button), shape, change, code line, selectors,
// heatmap, value table, export menu. sc.step is read when a tensor is exported.
function buildCard(sc) {
  const id = `step-${++uid}`;
  const root = el('article', 'step');
  root.dataset.testid = 'step';
  root.setAttribute('aria-labelledby', `${id}-name`);
  const index = el('span', 'step-index');
  const title = el('h3');
  title.id = `${id}-name`;
  const name = el('code');
  title.append(name);
  const codeButton = Object.assign(el('button', 'small'), { type: 'button' });
  i18nText(codeButton, 'step.code');
  codeButton.setAttribute('aria-pressed', 'false');
  const header = el('header');
  header.append(index, title, codeButton);
  const formula = el('pre', 'formula');
  const formulaCode = el('code');
  formula.append(formulaCode);
  const heatmap = createHeatmap({ onCell: null });
  const table = createValueTable();
  // Export: the whole tensor (JSON, CSV, .npy) and the heatmap as drawn (PNG, SVG).
  const exportMenu = createExportMenu({ tensor: () => sc.step, heatmap });
  const grad = { figure: el('figure', 'grad'), caption: el('figcaption'), heatmap: createHeatmap({ onCell: null }), table: createValueTable('table.grad') };
  grad.figure.dataset.testid = 'step-grad';
  grad.figure.hidden = true;
  heatmap.details(table.element);
  grad.heatmap.details(grad.table.element);
  grad.figure.append(grad.caption, grad.heatmap.element, grad.table.element);
  const value = el('figure', 'value');
  value.append(heatmap.element, table.element);
  const maps = el('div', 'step-maps');
  maps.append(value, grad.figure);
  const rope = lazyRopeDials();
  const els = { root, index, name, codeButton, shape: el('p', 'shape'), change: el('p', 'change'), formulaCode, selectors: el('div', 'selectors'), heatmap, table, grad, maps, rope };
  root.append(header, els.shape, els.change, formula, els.selectors, maps, rope.element, exportMenu);
  return els;
}

// dL/d(step) of the slice the value heatmap shows, in a diverging scale centred on 0 (its caption
// and whether it is shown are set with the card's data: reserve, update).
function drawGrad(sc, { axes, at, where, rowLabels, colLabels, width }) {
  const { step, els } = sc;
  const { grad } = els;
  if (!step.grad) return;
  const slice = slice2d({ ...step, data: step.grad }, axes, at);
  grad.heatmap.update({
    slice, scale: scaleFor(step.grad), width, rowLabels, colLabels,
    label: t('step.gradHeatmap', { name: step.name, where, rows: slice.rows, cols: slice.cols }),
    describeCell: (r, c, v) => `dL/d${step.name}[${at.map((x, i) => (i === axes.row ? r : i === axes.col ? c : x)).join(', ')}] = ${formatValue(v)}`,
  });
  grad.table.update({ slice, rowLabels, colLabels, caption: `dL/d${step.name}[${where}]`, corner: '' });
}

// sc: one card's state: {els, step, ctx (pipeline.js's context + fill and scale), selectorKey,
// fixed (dim index -> chosen index, kept across redraws)}.

// A select per dim the heatmap does not draw (batch, heads, ...), rebuilt when those dims change
// (not when a token is typed: the drawn dims' sizes are not part of the key).
function buildSelectors(sc, axes) {
  const { step, fixed } = sc;
  const chosen = (n, i) => i !== axes.row && i !== axes.col && n > 1;
  const key = `${step.dims.join()}|${step.shape.map((n, i) => (chosen(n, i) ? n : '-')).join()}`;
  if (key === sc.selectorKey) return;
  sc.selectorKey = key;
  const parts = [];
  step.shape.forEach((n, i) => {
    if (!chosen(n, i)) return;
    const label = el('label', 'inline');
    const span = el('span');
    span.textContent = step.dims[i];
    const select = el('select');
    select.dataset.dim = String(i);
    for (let k = 0; k < n; k++) select.append(Object.assign(el('option'), { value: String(k), textContent: String(k) }));
    if ((fixed.get(i) ?? 0) >= n) fixed.set(i, 0);
    select.value = String(fixed.get(i) ?? 0);
    select.addEventListener('change', () => { fixed.set(i, Number(select.value)); draw(sc); });
    label.append(span, select);
    parts.push(label);
  });
  sc.els.selectors.replaceChildren(...parts);
  setHidden(sc.els.selectors, parts.length === 0);
}

// Tokens along an axis (the module input it runs over), or the vocabulary along logits.
function labelsFor(sc, axis, b) {
  const { step, ctx } = sc;
  if (axis < 0) return null;
  const labels = step.dims[axis] === 'vocab' ? ctx.vocab : axisLabels(ctx.plan, step, axis, b);
  return labels && labels.length === step.shape[axis] ? labels : null;
}

// What the value heatmap draws and how big, without its numbers: axes, the fixed indices, the
// batch item, the token labels, its width and whether values fit in the cells.
function geometry(sc) {
  const { step, ctx } = sc;
  const axes = heatmapAxes(step.dims, step.shape);
  const at = step.shape.map((_, i) => sc.fixed.get(i) ?? 0);
  const bDim = step.dims.indexOf('batch');
  const b = bDim >= 0 ? at[bDim] : 0;
  const rows = axes.row < 0 ? 1 : step.shape[axes.row], cols = axes.col < 0 ? 1 : step.shape[axes.col];
  // Side by side with its gradient on wide cards, one above the other on narrow ones.
  const width = step.grad && ctx.width >= 560 ? Math.floor(ctx.width / 2) - 8 : ctx.width;
  return { axes, at, b, rows, cols, width, rowLabels: labelsFor(sc, axes.row, b), colLabels: labelsFor(sc, axes.col, b), values: cols <= 8 && rows <= 16 };
}

// A card not drawn yet (off screen) still takes its heatmaps' room, so drawing it when it scrolls
// into view moves nothing below it.
function reserve(sc) {
  const g = geometry(sc);
  buildSelectors(sc, g.axes);
  sc.els.rope.prepare(ropeData(sc, g.at, g.rowLabels));
  const data = { slice: { rows: g.rows, cols: g.cols }, width: g.width, rowLabels: g.rowLabels, colLabels: g.colLabels };
  sc.els.heatmap.reserve({ ...data, values: g.values });
  if (!sc.step.grad) return;
  sc.els.grad.heatmap.reserve(data);
  // dL/d(step), captioned with the loss it is of (scenario.js lossFor)
  const text = t(sc.ctx.plan.loss === 'next' ? 'grads.captionNext' : 'grads.captionSum', { name: sc.step.name });
  if (sc.els.grad.caption.textContent !== text) sc.els.grad.caption.textContent = text;
}

// The card's maps, table and dials; its canvases painted after its DOM writes (paint-batch.js).
const draw = (sc) => paintsLast(() => drawCard(sc));

function drawCard(sc) {
  const { step, ctx, els } = sc;
  const { axes, at, b, width, rowLabels, colLabels, values } = geometry(sc);   // selectors: built by reserve
  const slice = slice2d(step, axes, at);
  const rowDim = axes.row >= 0 ? step.dims[axes.row] : '';
  const colDim = step.dims[axes.col];
  // Weights (softmax, dropout) show the mask's cells hatched.
  const weights = (step.op === 'softmax' || step.op === 'dropout') && rowDim === 'seq_q' && colDim === 'seq_k';
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
  els.heatmap.update({
    slice, scale: ctx.scale, width, rowLabels, colLabels, masked, fill: ctx.fill, describeCell, label, weights: weights || isWeightsStep(step),
    values,
  });
  els.table.update({ slice, rowLabels, colLabels, masked, caption: `${step.name}[${where}]`, corner: `${rowDim} \\ ${colDim}` });
  drawGrad(sc, { axes, at, where, rowLabels, colLabels, width });
  els.rope.update(ropeData(sc, at, rowLabels));
}

// The RoPE dials (rope-dials.js), loaded the first time a card shows a rope step (most modules have
// none: the first view goes without them). Until then a hidden placeholder holds their place.
function lazyRopeDials() {
  const slot = document.createElement('div');
  slot.hidden = true;
  let real = null, loading = null, latest = null;
  const call = (kind, d) => {
    if (real) return real[kind](d);
    if (!d && !loading) return undefined;   // no rope step, nothing loaded: nothing to show
    latest = { kind, d };
    loading ??= import('./rope-dials.js').then((m) => {
      real = m.createRopeDials();
      slot.replaceWith(real.element);
      real.prepare(latest.d);
      if (latest.kind === 'update') real.update(latest.d);
    });
    return undefined;
  };
  return { element: slot, prepare: (d) => call('prepare', d), update: (d) => call('update', d) };
}

// A rope step (q_rot, k_rot): its pairs as rotations (rope-dials.js) for the batch item and head
// the selectors chose; its inputs are the vectors before the turn and the cos / sin tables.
function ropeData(sc, at, rowLabels) {
  const { step, ctx } = sc;
  const [from, cos, sin] = step.op === 'rope' ? [0, 1, 2].map((k) => ctx.input?.(k)) : [];
  const ok = from && cos && sin && from.shape.join() === step.shape.join() && step.dims.at(-2) === 'seq';
  return ok ? { step, from, cos, sin, lead: at.slice(0, -2), labels: rowLabels } : null;
}

export function createStepCard({ onSelect }) {
  const sc = { step: null, ctx: null, selectorKey: '', fixed: new Map() };
  const els = buildCard(sc);
  sc.els = els;
  // Cards off screen keep their text current and paint their heatmap when scrolled into view:
  // a dozen canvases repainted per keystroke is most of a frame's budget.
  const lazy = lazyDraw(els.root, () => draw(sc), { initiallyVisible: false });
  els.codeButton.addEventListener('click', () => onSelect(sc.step.name));
  return {
    element: els.root,
    // s: the step; c: {index, from (its first input, pipeline.js), inputOp(i), input(i) (its i-th
    // input as a step), plan, vocab, mask, width, selected}
    update(s, c) {
      sc.step = s;
      const fill = s.op === 'masked_fill' ? Number(s.attrs.fill) : null;
      sc.ctx = { ...c, fill, scale: scaleFor(s.data, { probabilities: isWeightsStep(s), fill }) };
      const { root } = els;
      if (root.dataset.step !== s.name) root.dataset.step = s.name;
      const shapeJson = JSON.stringify(s.shape);
      if (root.dataset.shape !== shapeJson) root.dataset.shape = shapeJson;
      root.classList.toggle('selected', !!c.selected);
      setAttr(els.codeButton, 'aria-pressed', c.selected ? 'true' : 'false');
      setAttr(els.codeButton, 'aria-label', t('step.showCode', { name: s.name }));
      setText(els.index, String(c.index + 1));
      setText(els.name, s.name);
      const shape = namedShape(s.dims, s.shape);
      setText(els.shape, shape);
      setText(els.change, describeChange(s, c.from, c.inputOp));
      setText(els.formulaCode, s.code);
      // Named now, drawn (and named with its numbers) when on screen: never a stale name.
      els.heatmap.setLabel(t('step.heatmapPending', { name: s.name, shape }));
      setHidden(els.grad.figure, !s.grad);
      els.maps.classList.toggle('with-grad', !!s.grad);
      if (s.grad) els.grad.heatmap.setLabel(t('step.gradHeatmapPending', { name: s.name, shape }));
      reserve(sc);
      lazy.request();
    },
    remove() {
      lazy.disconnect();
      els.root.remove();
    },
  };
}
