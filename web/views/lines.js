// The token-to-token view (as BertViz draws it): queries on the left, keys on the right, one line
// per pair whose opacity is the attention weight. Hover or arrow keys pick a query; its lines stand
// out and the readout names the keys it attends to most. attention.js feeds it one head's weights.

import { t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { createCanvasBox } from './canvas-fit.js';
import { CANVAS_OPTIONS } from './heatmap.js';

const FONT = '13px system-ui, sans-serif';   // short: each family in the list is a font lookup
const ROW = 22;

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
  let view = null;
  let geom = null;
  let fontSet = false;

  canvas.addEventListener('mousemove', (e) => {
    if (!geom) return;
    const rect = canvas.getBoundingClientRect();
    const y = e.clientY - rect.top - geom.top;
    const r = Math.floor(y / ROW);
    if (r >= 0 && r < view.rows && e.clientX - rect.left < geom.w / 2) onQuery(r);
  });
  canvas.addEventListener('keydown', (e) => {
    if (!view) return;
    const q = view.query ?? 0;
    if (e.key === 'ArrowDown') onQuery(Math.min(view.rows - 1, q + 1));
    else if (e.key === 'ArrowUp') onQuery(Math.max(0, q - 1));
    else return;
    e.preventDefault();
  });
  canvas.addEventListener('focus', () => { if (view && view.query == null) onQuery(0); });

  function draw() {
    const { rows, cols, data, qLabels, kLabels, query, masked } = view;
    const w = Math.max(240, Math.min(view.width, 560));
    const top = 8;
    const h = top + Math.max(rows, cols) * ROW + 4;
    const dpr = window.devicePixelRatio || 1;
    if (box.fit(w, h, 0, 6 * ROW)) fontSet = false;   // a new bitmap has a fresh context
    geom = { top, w };
    const ctx = canvas.getContext('2d', CANVAS_OPTIONS);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, canvas.width / dpr, canvas.height / dpr);
    const xl = Math.round(w * 0.3);
    const xr = Math.round(w * 0.7);
    const y = (i) => top + (i + 0.5) * ROW;
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
    if (!fontSet) { ctx.font = FONT; fontSet = true; }   // re-resolving the font is costly
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

  function summary() {
    const { rows, cols, data, qLabels, kLabels, query } = view;
    if (query == null || query >= rows) return '';
    const ranked = Array.from({ length: cols }, (_, k) => [k, data[query * cols + k]]).sort((a, b) => b[1] - a[1]).slice(0, 3);
    return t('lines.summary', { q: qLabels[query], keys: ranked.map(([k, v]) => t('lines.key', { k: kLabels[k], v: formatValue(v, 3) })).join(t('lines.separator')) });
  }

  return {
    element: root,
    // v: {rows, cols, data (rows×cols), qLabels, kLabels, query (row or null), masked?, width, label}
    update(v) {
      view = v;
      canvas.setAttribute('aria-label', t('lines.label', { label: v.label }));
      draw();
      const text = summary();
      if (readout.textContent !== text) readout.textContent = text;
    },
  };
}
