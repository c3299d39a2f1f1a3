// The token-to-token view (as BertViz draws it): queries on the left, keys on the right, one line
// per pair whose opacity is the attention weight. Hover or arrow keys pick a query; its lines stand
// out and the readout names the keys it attends to most. attention.js feeds it one head's weights.

import { t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { createCanvasBox } from './canvas-fit.js';
import { setAttr } from './dom-write.js';
import { CANVAS_OPTIONS } from './heatmap.js';
import { paintSoon } from './paint-batch.js';

const FONT = '13px system-ui, sans-serif';   // short: each family in the list is a font lookup
const ROW = 22;

// ln: the view's state: {canvas, box, view (the last data), geom, fontSet}.

// One curve per (query, key) pair, its opacity the weight; the focused query's stand out.
function paintLines(ctx, view, { xl, xr, y }) {
  const { rows, cols, data, query, masked } = view;
  ctx.lineCap = 'round';
  for (let q = 0; q < rows; q++) {
    const focus = query == null || query === q;
    for (let k = 0; k < cols; k++) {
      const v = data[q * cols + k];
      if (!(v > 0.005) || (masked && masked(q, k))) continue;
      ctx.strokeStyle = focus ? `rgba(47, 111, 222, ${Math.min(1, v * 1.1).toFixed(3)})` : `rgba(120, 130, 150, ${Math.min(0.25, v * 0.3).toFixed(3)})`;
      ctx.lineWidth = focus ? 1 + 3 * v : 1;
      ctx.beginPath();
      ctx.moveTo(xl + 6, y(q));
      ctx.bezierCurveTo((xl + xr) / 2, y(q), (xl + xr) / 2, y(k), xr - 6, y(k));
      ctx.stroke();
    }
  }
}

// Query tokens right-aligned on the left, key tokens on the right (the focused query's strong keys in blue).
function paintTokens(ctx, view, { xl, xr, y }) {
  const { rows, cols, data, qLabels, kLabels, query, masked } = view;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  for (let q = 0; q < rows; q++) {
    ctx.fillStyle = query === q ? '#2f6fde' : '#1d2330';
    ctx.fillText(qLabels[q], xl, y(q));
  }
  ctx.textAlign = 'left';
  const weightOf = (k) => (query == null ? null : data[query * cols + k]);
  for (let k = 0; k < cols; k++) {
    const wk = weightOf(k);
    ctx.fillStyle = masked && query != null && masked(query, k) ? '#9aa1ad' : wk != null && wk > 0.2 ? '#2f6fde' : '#1d2330';
    ctx.fillText(kLabels[k], xr, y(k));
  }
}

// The canvas's size and where the tokens go (a DOM write: done with the redraw's others, before any paint).
function fit(ln) {
  const { view, box } = ln;
  const w = Math.max(240, Math.min(view.width, 560));
  const top = 8;
  const h = top + Math.max(view.rows, view.cols) * ROW + 4;
  if (box.fit(w, h, 0, 6 * ROW)) ln.fontSet = false;   // a new bitmap has a fresh context
  ln.geom = { top, w };
}

function paint(ln) {
  const { view, canvas, geom: { top, w } } = ln;
  const dpr = window.devicePixelRatio || 1;
  const ctx = canvas.getContext('2d', CANVAS_OPTIONS);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, canvas.width / dpr, canvas.height / dpr);
  const at = { xl: Math.round(w * 0.3), xr: Math.round(w * 0.7), y: (i) => top + (i + 0.5) * ROW };
  paintLines(ctx, view, at);
  if (!ln.fontSet) { ctx.font = FONT; ln.fontSet = true; }   // re-resolving the font is costly
  paintTokens(ctx, view, at);
}

function summary(view) {
  const { rows, cols, data, qLabels, kLabels, query } = view;
  if (query == null || query >= rows) return '';
  const ranked = Array.from({ length: cols }, (_, k) => [k, data[query * cols + k]]).sort((a, b) => b[1] - a[1]).slice(0, 3);
  return t('lines.summary', { q: qLabels[query], keys: ranked.map(([k, v]) => t('lines.key', { k: kLabels[k], v: formatValue(v, 3) })).join(t('lines.separator')) });
}

// Hovering the left half or the arrow keys pick a query; focus picks the first.
function listen(ln, onQuery) {
  const { canvas } = ln;
  canvas.addEventListener('mousemove', (e) => {
    if (!ln.geom) return;
    const rect = canvas.getBoundingClientRect();
    const r = Math.floor((e.clientY - rect.top - ln.geom.top) / ROW);
    if (r >= 0 && r < ln.view.rows && e.clientX - rect.left < ln.geom.w / 2) onQuery(r);
  });
  canvas.addEventListener('keydown', (e) => {
    if (!ln.view) return;
    const q = ln.view.query ?? 0;
    if (e.key === 'ArrowDown') onQuery(Math.min(ln.view.rows - 1, q + 1));
    else if (e.key === 'ArrowUp') onQuery(Math.max(0, q - 1));
    else return;
    e.preventDefault();
  });
  canvas.addEventListener('focus', () => { if (ln.view && ln.view.query == null) onQuery(0); });
}

export function createLines({ onQuery }) {
  const root = document.createElement('div');
  root.className = 'lines';
  const box = createCanvasBox();
  const { canvas } = box;
  canvas.tabIndex = 0;
  canvas.setAttribute('role', 'img');
  const readout = document.createElement('p');
  readout.className = 'readout';
  readout.setAttribute('aria-live', 'polite');
  root.append(box.clip, readout);
  const ln = { canvas, box, view: null, geom: null, fontSet: false };
  listen(ln, onQuery);
  return {
    element: root,
    // v: {rows, cols, data (rows×cols), qLabels, kLabels, query (row or null), masked?, width, label}
    update(v) {
      ln.view = v;
      setAttr(canvas, 'aria-label', t('lines.label', { label: v.label }));
      fit(ln);
      const text = summary(v);
      if (readout.textContent !== text) readout.textContent = text;
      paintSoon(ln, () => paint(ln));
    },
  };
}
