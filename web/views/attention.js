// The attention view: one head's weights as a heatmap (queries × keys, token labels, masked cells
// hatched), the same head as token-to-token lines (lines.js), thumbnails of every head, and
// selectors for the map (Transformer layers), batch item and head. attention-data.js finds the maps.

import { scaleFor } from '../colors.js';
import { createExportMenu } from '../export.js';
import { i18nLabel, i18nText, t } from '../i18n.js';
import { formatValue, slice2d } from '../tensor.js';
import { createHeatmap } from './heatmap.js';
import { lazyDraw } from './lazy.js';
import { createLines } from './lines.js';
import { createValueTable } from './value-table.js';

function labelled(key, control) {
  const label = document.createElement('label');
  label.className = 'inline';
  const span = i18nText(document.createElement('span'), key);
  label.append(span, control);
  return label;
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

export function createAttentionView(container, { onView = null } = {}) {
  const controls = document.createElement('div');
  controls.className = 'controls-row';
  const sourceSelect = document.createElement('select');
  sourceSelect.id = 'attention-source';
  const batchSelect = document.createElement('select');
  batchSelect.id = 'attention-batch';
  const headSelect = document.createElement('select');
  headSelect.id = 'attention-head';
  const sourceLabel = labelled('attn.map', sourceSelect);
  const batchLabel = labelled('ui.batchItem', batchSelect);
  const headLabel = labelled('attn.head', headSelect);
  controls.append(sourceLabel, batchLabel, headLabel);

  const thumbs = document.createElement('div');
  thumbs.className = 'thumbs';
  thumbs.setAttribute('role', 'group');
  i18nLabel(thumbs, 'attn.allHeads');

  const grid = document.createElement('div');
  grid.className = 'attention-grid';
  const figure = document.createElement('figure');
  figure.dataset.testid = 'attention-heatmap';
  const caption = document.createElement('figcaption');
  const legend = document.createElement('p');
  legend.className = 'legend';
  const ramp = document.createElement('span');
  ramp.className = 'ramp';
  const hatch = document.createElement('span');
  hatch.className = 'hatch-swatch';
  const legendText = document.createElement('span');
  legend.append('0 ', ramp, ' 1', ' · ', hatch, legendText);
  const heatmap = createHeatmap({ className: 'attention', onCell: (r) => { ui.query = r; draw(); } });
  const table = createValueTable('attn.table');
  // Export the displayed head: its weights (JSON, CSV, .npy) and the heatmap (PNG, SVG).
  let shown = null;   // {name, shape, dims, data} of the displayed slice
  const exportMenu = createExportMenu({ tensor: () => shown, heatmap });
  exportMenu.dataset.testid = 'attention-export';
  figure.append(caption, heatmap.element, legend, table.element, exportMenu);
  const linesFigure = document.createElement('figure');
  const linesCaption = document.createElement('figcaption');
  i18nText(linesCaption, 'attn.linesCaption');
  const lines = createLines({ onQuery: (q) => { if (ui.query !== q) { ui.query = q; draw(); } } });
  linesFigure.append(linesCaption, lines.element);
  grid.append(figure, linesFigure);
  const empty = document.createElement('p');
  empty.className = 'hint';
  i18nText(empty, 'attn.none');
  container.append(controls, thumbs, grid, empty);

  const ui = { source: null, batch: 0, head: 0, query: null };
  let data = null;
  let thumbViews = [];

  sourceSelect.addEventListener('change', () => { ui.source = sourceSelect.value; draw(); });
  // The head and batch item shown are part of the page state (links open the same view).
  const viewChanged = () => onView?.({ head: ui.head, batch: ui.batch });
  batchSelect.addEventListener('change', () => { ui.batch = Number(batchSelect.value); draw(); viewChanged(); });
  headSelect.addEventListener('change', () => { ui.head = Number(headSelect.value); draw(); viewChanged(); });

  function current() {
    return data.sources.find((s) => s.id === ui.source) ?? data.sources[0];
  }

  function buildThumbs(n) {
    if (thumbViews.length === n) return;
    thumbViews = Array.from({ length: n }, (_, h) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'thumb';
      i18nLabel(button, 'attn.showHead', { h });
      const view = createHeatmap({ thumb: true });
      const label = i18nText(document.createElement('span'), 'attn.headN', { h });
      button.append(view.element, label);
      button.addEventListener('click', () => { ui.head = h; draw(); viewChanged(); });
      return { button, view };
    });
    thumbs.replaceChildren(...thumbViews.map((t) => t.button));
  }

  function draw() {
    const has = data && data.sources.length > 0;
    controls.hidden = grid.hidden = !has;
    thumbs.hidden = !has;
    empty.hidden = has;
    if (!has) return;
    const src = current();
    ui.source = src.id;
    const { tensor, labels, mask } = src;
    const dims = tensor.dims;
    const bDim = dims.indexOf('batch');
    const hDim = dims.indexOf('heads');
    const B = bDim >= 0 ? tensor.shape[bDim] : 1;
    const H = hDim >= 0 ? tensor.shape[hDim] : 1;
    ui.batch = Math.min(ui.batch, B - 1);
    ui.head = Math.min(ui.head, H - 1);

    fillOptions(sourceSelect, data.sources.map((s) => ({ value: s.id, text: s.label })));
    sourceSelect.value = src.id;
    sourceLabel.hidden = data.sources.length < 2;
    // Typed sentences are named by their first words; random inputs (positions) by their index.
    const words = (b) => (labels.q[b] ?? []).filter((t) => !/^\d+$/.test(t)).slice(0, 4).join(' ');
    fillOptions(batchSelect, Array.from({ length: B }, (_, b) => ({ value: b, text: words(b) ? `${b}: ${words(b)}…` : String(b) })));
    batchSelect.value = String(ui.batch);
    batchLabel.hidden = B < 2;
    fillOptions(headSelect, Array.from({ length: H }, (_, h) => ({ value: h, text: t('attn.headN', { h }) })));
    headSelect.value = String(ui.head);

    const axes = { row: dims.indexOf('seq_q'), col: dims.indexOf('seq_k') };
    const at = dims.map((d) => (d === 'batch' ? ui.batch : d === 'heads' ? ui.head : 0));
    const slice = slice2d(tensor, axes, at);
    const b = ui.batch;
    const qLabels = labels.q[b]?.length === slice.rows ? labels.q[b] : Array.from({ length: slice.rows }, (_, i) => String(i));
    const kLabels = labels.k[b]?.length === slice.cols ? labels.k[b] : Array.from({ length: slice.cols }, (_, i) => String(i));
    const masked = mask ? (r, c) => mask.at(b, r, c) : null;
    if (ui.query != null && ui.query >= slice.rows) ui.query = null;
    const scale = scaleFor(tensor.data, { probabilities: true });
    const headText = H > 1 ? t('attn.headOf', { h: ui.head, H }) : t('attn.singleHead');
    caption.textContent = B > 1 ? t('attn.captionBatch', { name: tensor.name, head: headText, b }) : t('attn.caption', { name: tensor.name, head: headText });
    legendText.textContent = mask ? t('attn.masked', { kind: mask.kind }) : t('attn.noMask');
    hatch.hidden = !mask;
    figure.dataset.head = String(ui.head);
    heatmap.update({
      slice, scale, width: Math.min(data.width, 560), rowLabels: qLabels, colLabels: kLabels, masked,
      highlightRow: ui.query, values: slice.cols <= 8,
      label: t('attn.label', { head: headText, rows: slice.rows, cols: slice.cols }),
      describeCell: (r, c, v) => {
        const text = t('attn.cell', { q: qLabels[r], k: kLabels[c], v: formatValue(v) });
        return masked?.(r, c) ? t('ui.masked', { text }) : text;
      },
    });
    table.update({ slice, rowLabels: qLabels, colLabels: kLabels, masked, caption: `${tensor.name}, ${headText}`, corner: t('attn.corner') });
    shown = { name: `${tensor.name}_b${b}_h${ui.head}`, shape: [slice.rows, slice.cols], dims: ['seq_q', 'seq_k'], data: slice.data };
    lines.update({ rows: slice.rows, cols: slice.cols, data: slice.data, qLabels, kLabels, query: ui.query, masked, width: Math.min(data.width, 560), label: `${tensor.name}, ${headText}` });

    buildThumbs(H > 1 ? H : 0);
    thumbViews.forEach((thumb, h) => {
      const s = slice2d(tensor, axes, dims.map((d) => (d === 'batch' ? b : d === 'heads' ? h : 0)));
      thumb.view.update({ slice: s, scale, width: 72, masked, label: t('attn.headN', { h }) });
      thumb.button.setAttribute('aria-pressed', h === ui.head ? 'true' : 'false');
    });
  }

  const lazy = lazyDraw(container, draw);
  return {
    // d: {sources (attention-data.js), width}
    update(d) {
      data = d;
      lazy.request();
    },
    // Show this head and batch item (a link's view); out-of-range values are clamped when drawn.
    select({ head = ui.head, batch = ui.batch }) {
      ui.head = head;
      ui.batch = batch;
    },
  };
}
