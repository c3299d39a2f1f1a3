// The attention view: one head's weights as a heatmap (queries × keys, token labels, masked cells
// hatched), the same head as token-to-token lines (lines.js), thumbnails of every head, and
// selectors for the map (Transformer layers), batch item and head. attention-data.js finds the maps;
// the head and batch item shown are page state (onView reports a reader's choice, update() brings the state's).

import { rampGradient, scaleFor } from '../colors.js';
import { createExportMenu } from './export-menu.js';
import { i18nLabel, i18nText, t } from '../i18n.js';
import { formatValue, slice2d } from '../tensor.js';
import { setAttr, setHidden, setText } from './dom-write.js';
import { createHeatmap } from './heatmap.js';
import { lazyDraw } from './lazy.js';
import { paintsLast } from './paint-batch.js';
import { createLines } from './lines.js';
import { createValueTable } from './value-table.js';

function labelled(key, control) {
  const label = document.createElement('label');
  label.className = 'inline';
  const span = i18nText(document.createElement('span'), key);
  label.append(span, control);
  return label;
}

// The legend's words for a plan's mask (scenario.js planMask): built in, or which parts and convention.
function maskKind(mask) {
  if (mask.builtin && mask.window > 0) return t(mask.sinks > 0 ? 'mask.windowSinks' : 'mask.window', { window: mask.window, sinks: mask.sinks });
  if (mask.builtin) return t('mask.builtin');
  // A notebook's own mask (given.js) that is not the causal one is named as given.
  const parts = [mask.causal && t('mask.causal'), mask.padding && t('mask.padding'), mask.given && !mask.causal && t('mask.given')].filter(Boolean).join(' + ');
  return t('mask.kind', { parts, convention: t(mask.convention === 'zero' ? 'mask.seed000' : 'mask.seed003') });
}

function fillOptions(select, items) {
  const key = items.map((i) => `${i.value}:${i.text}`).join('|');
  if (select.dataset.key === key) return;
  select.dataset.key = key;
  select.replaceChildren(...items.map(({ value, text }) => {
    const o = document.createElement('option');
    o.value = String(value);
    o.textContent = text;
    return o;
  }));
}

// The view's elements: the selectors row, the thumbnails, the heatmap figure with its legend,
// table and export, the lines, and the "no attention" hint. redraw() is av's draw.
function buildElements(container, redraw, ui) {
  const select = (id) => Object.assign(document.createElement('select'), { id });
  const sourceSelect = select('attention-source'), batchSelect = select('attention-batch'), headSelect = select('attention-head');
  const controls = document.createElement('div');
  controls.className = 'controls-row';
  const labels = { source: labelled('attn.map', sourceSelect), batch: labelled('ui.batchItem', batchSelect), head: labelled('attn.head', headSelect) };
  controls.append(labels.source, labels.batch, labels.head);
  const thumbs = Object.assign(document.createElement('div'), { className: 'thumbs' });
  thumbs.setAttribute('role', 'group');
  i18nLabel(thumbs, 'attn.allHeads');
  const figure = document.createElement('figure');
  figure.dataset.testid = 'attention-heatmap';
  const caption = document.createElement('figcaption');
  const legend = Object.assign(document.createElement('p'), { className: 'legend' });
  const hatch = Object.assign(document.createElement('span'), { className: 'hatch-swatch' });
  const legendText = document.createElement('span');
  const ramp = Object.assign(document.createElement('span'), { className: 'ramp' });
  ramp.style.background = rampGradient('sequential');   // the weights' scale (scaleFor, probabilities)
  legend.append('0 ', ramp, ' 1', ' · ', hatch, legendText);
  const heatmap = createHeatmap({ className: 'attention', onCell: (r) => { ui.query = r; redraw(); } });
  const table = createValueTable('attn.table');
  heatmap.details(table.element);
  const els = { container, controls, labels, sourceSelect, batchSelect, headSelect, thumbs, figure, caption, hatch, legendText, heatmap, table };
  // Export the displayed head: its weights (JSON, CSV, .npy) and the heatmap (PNG, SVG).
  const exportMenu = createExportMenu({ tensor: () => els.shown, heatmap });
  exportMenu.dataset.testid = 'attention-export';
  figure.append(caption, heatmap.element, legend, table.element, exportMenu);
  const linesFigure = document.createElement('figure');
  i18nText(linesFigure.appendChild(document.createElement('figcaption')), 'attn.linesCaption');
  els.lines = createLines({ onQuery: (q) => { if (ui.query !== q) { ui.query = q; redraw(); } } });
  linesFigure.append(els.lines.element);
  els.grid = Object.assign(document.createElement('div'), { className: 'attention-grid' });
  els.grid.append(figure, linesFigure);
  els.empty = Object.assign(document.createElement('p'), { className: 'hint' });
  i18nText(els.empty, 'attn.none');
  container.append(controls, thumbs, els.grid, els.empty);
  return els;
}

// av: {els, ui: {source, batch, head, query}, data: {sources, width, head, batch}, thumbViews, onView}.

const sizeOf = (tensor, dim) => (tensor.dims.includes(dim) ? tensor.shape[tensor.dims.indexOf(dim)] : 1);

// The map, batch item and head selectors for source `src` with B items and H heads.
function drawSelectors(av, src, B, H) {
  const { els, ui, data } = av;
  fillOptions(els.sourceSelect, data.sources.map((s) => ({ value: s.id, text: s.label ? t(s.label.key, s.label.params) : s.tensor.name })));
  els.sourceSelect.value = src.id;
  setHidden(els.labels.source, data.sources.length < 2);
  // Typed sentences are named by their first words; random inputs (positions) by their index.
  const words = (b) => (src.labels.q[b] ?? []).filter((w) => !/^\d+$/.test(w)).slice(0, 4).join(' ');
  fillOptions(els.batchSelect, Array.from({ length: B }, (_, b) => ({ value: b, text: words(b) ? `${b}: ${words(b)}…` : String(b) })));
  els.batchSelect.value = String(ui.batch);
  setHidden(els.labels.batch, B < 2);
  fillOptions(els.headSelect, Array.from({ length: H }, (_, h) => ({ value: h, text: t('attn.headN', { h }) })));
  els.headSelect.value = String(ui.head);
}

// The displayed head: caption, legend, heatmap, table, export and lines. Returns what the
// thumbnails share with it: {axes, scale, masked}.
function drawHead(av, src, B, H) {
  const { els, ui, data } = av;
  const { tensor, labels, mask } = src;
  const axes = { row: tensor.dims.indexOf('seq_q'), col: tensor.dims.indexOf('seq_k') };
  const slice = slice2d(tensor, axes, tensor.dims.map((d) => (d === 'batch' ? ui.batch : d === 'heads' ? ui.head : 0)));
  const b = ui.batch;
  const positions = (n) => Array.from({ length: n }, (_, i) => String(i));
  const qLabels = labels.q[b]?.length === slice.rows ? labels.q[b] : positions(slice.rows);
  const kLabels = labels.k[b]?.length === slice.cols ? labels.k[b] : positions(slice.cols);
  const masked = mask ? (r, c) => mask.at(b, r, c) : null;
  if (ui.query != null && ui.query >= slice.rows) ui.query = null;
  const scale = scaleFor(tensor.data, { probabilities: true });
  const headText = H > 1 ? t('attn.headOf', { h: ui.head, H }) : t('attn.singleHead');
  setText(els.caption, B > 1 ? t('attn.captionBatch', { name: tensor.name, head: headText, b }) : t('attn.caption', { name: tensor.name, head: headText }));
  setText(els.legendText, mask ? t('attn.masked', { kind: maskKind(mask) }) : t('attn.noMask'));
  setHidden(els.hatch, !mask);
  setAttr(els.figure, 'data-head', String(ui.head));
  const width = Math.min(data.width, 560);
  els.heatmap.update({
    slice, scale, width, rowLabels: qLabels, colLabels: kLabels, masked, highlightRow: ui.query, values: slice.cols <= 8, weights: true,
    label: t('attn.label', { name: tensor.name, head: headText, rows: slice.rows, cols: slice.cols }),
    describeCell: (r, c, v) => {
      const text = t('attn.cell', { q: qLabels[r], k: kLabels[c], v: formatValue(v) });
      return masked?.(r, c) ? t('ui.masked', { text }) : text;
    },
  });
  els.table.update({ slice, rowLabels: qLabels, colLabels: kLabels, masked, caption: `${tensor.name}, ${headText}`, corner: t('attn.corner') });
  els.shown = { name: `${tensor.name}_b${b}_h${ui.head}`, shape: [slice.rows, slice.cols], dims: ['seq_q', 'seq_k'], data: slice.data };
  els.lines.update({ rows: slice.rows, cols: slice.cols, data: slice.data, qLabels, kLabels, query: ui.query, masked, width, label: `${tensor.name}, ${headText}` });
  return { axes, scale, masked };
}

// One thumbnail per head (none for a single head); a click shows that head.
function drawThumbs(av, tensor, H, { axes, scale, masked }) {
  const { els, ui } = av;
  const n = H > 1 ? H : 0;
  if (av.thumbViews.length !== n) {
    av.thumbViews = Array.from({ length: n }, (_, h) => {
      const button = Object.assign(document.createElement('button'), { type: 'button', className: 'thumb' });
      i18nLabel(button, 'attn.showHead', { h });
      const view = createHeatmap({ thumb: true });
      button.append(view.element, i18nText(document.createElement('span'), 'attn.headN', { h }));
      button.addEventListener('click', () => { ui.head = h; draw(av); av.viewChanged(); });
      return { button, view };
    });
    els.thumbs.replaceChildren(...av.thumbViews.map((th) => th.button));
  }
  av.thumbViews.forEach((thumb, h) => {
    const s = slice2d(tensor, axes, tensor.dims.map((d) => (d === 'batch' ? ui.batch : d === 'heads' ? h : 0)));
    thumb.view.update({ slice: s, scale, width: 72, masked, label: t('attn.headN', { h }) });
    setAttr(thumb.button, 'aria-pressed', h === ui.head ? 'true' : 'false');
  });
}

// The whole view; its canvases painted after its DOM writes (paint-batch.js).
const draw = (av) => paintsLast(() => drawView(av));

function drawView(av) {
  const { els, ui, data } = av;
  const has = !!data && data.sources.length > 0;
  for (const e of [els.controls, els.grid, els.thumbs]) setHidden(e, !has);
  setHidden(els.empty, has);
  if (!has) return;
  const src = data.sources.find((s) => s.id === ui.source) ?? data.sources[0];
  ui.source = src.id;
  const B = sizeOf(src.tensor, 'batch'), H = sizeOf(src.tensor, 'heads');
  ui.batch = Math.min(ui.batch, B - 1);
  ui.head = Math.min(ui.head, H - 1);
  drawSelectors(av, src, B, H);
  drawThumbs(av, src.tensor, H, drawHead(av, src, B, H));
}

// onView({head, batch}): a reader chose another head or batch item (the page state keeps it).
export function createAttentionView(container, { onView = null } = {}) {
  const av = { ui: { source: null, batch: 0, head: 0, query: null }, data: null, thumbViews: [] };
  av.els = buildElements(container, () => draw(av), av.ui);
  av.viewChanged = () => onView?.({ head: av.ui.head, batch: av.ui.batch });
  const { ui, els } = av;
  els.sourceSelect.addEventListener('change', () => { ui.source = els.sourceSelect.value; draw(av); });
  els.batchSelect.addEventListener('change', () => { ui.batch = Number(els.batchSelect.value); draw(av); av.viewChanged(); });
  els.headSelect.addEventListener('change', () => { ui.head = Number(els.headSelect.value); draw(av); av.viewChanged(); });
  const lazy = lazyDraw(container, () => draw(av));
  return {
    // The heatmap's width: the figure's (it shares a row with the lines on wide screens).
    measureWidth: () => Math.max(240, els.figure.clientWidth || container.clientWidth),
    // d: {sources (attention-data.js), width, head, batch (the page state's; clamped when drawn)}
    update(d) {
      av.data = d;
      ui.head = d.head;
      ui.batch = d.batch;
      lazy.request();
    },
  };
}
