// One heatmap on a canvas: a 2-D slice with token labels on the axes, masked cells hatched, the
// value of a cell on hover (tooltip) or keyboard focus (arrow keys; read out in a live region).
// Used by the step cards (step-card.js), the attention view (attention.js) and the vocab table.
// Screen readers get the same numbers from value-table.js, which sits beside every heatmap: the
// canvas's accessible name says what it shows and each row's strongest cell in words, and its
// aria-details points at that table (the long description).

import { textColourFor } from '../colors.js';
import { t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { createCanvasBox } from './canvas-fit.js';
import { setAttr } from './dom-write.js';
import { paintSoon } from './paint-batch.js';
import { hideTooltip, showTooltip } from './tooltip.js';

const FONT = '12px system-ui, sans-serif';   // short: each family in the list is a font lookup
const CHAR_W = 7;
// A column label slants at 45°: this much of its length runs across (and up); cos 45° rounded up.
const SLANT = 0.72;
// Small canvases redrawn on every keystroke are cheaper in software: a GPU-backed canvas pays an
// upload (and on SwiftShader a full raster) per change. willReadFrequently asks for software.
export const CANVAS_OPTIONS = { willReadFrequently: true };   // a label's width is estimated, not measured: measureText per redraw costs more than it buys

let hatch = null;
function hatchPattern(ctx) {
  if (!hatch) {
    const c = document.createElement('canvas');
    c.width = c.height = 6;
    const g = c.getContext('2d', CANVAS_OPTIONS);
    g.fillStyle = '#e4e6ea';
    g.fillRect(0, 0, 6, 6);
    g.strokeStyle = '#9aa1ad';
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(0, 6); g.lineTo(6, 0);
    g.moveTo(-1, 1); g.lineTo(1, -1);
    g.moveTo(5, 7); g.lineTo(7, 5);
    g.stroke();
    hatch = c;
  }
  return ctx.createPattern(hatch, 'repeat');
}

const truncate = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

// A cell drawn hatched whatever the mask says: ±inf (masked scores) or the step's fill value.
const isHidden = (v, fill) => v === -Infinity || v === Infinity || v === fill;

// hm: one heatmap's state: {canvas, box, readout, cells (one pixel per cell, scaled up by
// drawImage), thumb, onCell, view (the last data drawn), geom (where the cells are), cursor (the
// keyboard cell {r, c}), fontSet}.

function cellAt(hm, event) {
  const { geom, view } = hm;
  if (!geom) return null;
  const rect = hm.canvas.getBoundingClientRect();
  const x = event.clientX - rect.left - geom.left;
  const y = event.clientY - rect.top - geom.top;
  const c = Math.floor(x / geom.cw);
  const r = Math.floor(y / geom.ch);
  if (x < 0 || y < 0 || r >= view.slice.rows || c >= view.slice.cols) return null;
  return { r, c };
}

function describe(hm, { r, c }) {
  const { view } = hm;
  const v = view.slice.data[r * view.slice.cols + c];
  if (view.describeCell) return view.describeCell(r, c, v);
  return `[${r}, ${c}] = ${formatValue(v)}`;
}

const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

// Arrow keys move the keyboard cell, Home / End go along the row, Enter / Space pick it.
function onKey(hm, e) {
  const { view } = hm;
  if (!view) return;
  let cursor = hm.cursor ?? { r: 0, c: 0 };
  if (e.key in MOVES) {
    const [dr, dc] = MOVES[e.key];
    cursor = {
      r: Math.max(0, Math.min(view.slice.rows - 1, cursor.r + dr)),
      c: Math.max(0, Math.min(view.slice.cols - 1, cursor.c + dc)),
    };
  } else if (e.key === 'Home') cursor = { r: cursor.r, c: 0 };
  else if (e.key === 'End') cursor = { r: cursor.r, c: view.slice.cols - 1 };
  else if (e.key === 'Enter' || e.key === ' ') hm.onCell?.(cursor.r, cursor.c);
  else { hm.cursor = cursor; return; }
  hm.cursor = cursor;
  e.preventDefault();
  hm.readout.textContent = describe(hm, cursor);
  draw(hm);
}

// Hover or a tap shows a cell's value, a click or Enter picks it, focus and the arrow keys read it out.
function listen(hm) {
  const { canvas } = hm;
  canvas.addEventListener('mousemove', (e) => {
    const cell = cellAt(hm, e);
    if (cell) showTooltip(describe(hm, cell), e.clientX, e.clientY);
    else hideTooltip();
  });
  canvas.addEventListener('mouseleave', hideTooltip);
  // A tap (touch: no hover) shows the cell's value and tokens in the tooltip and the readout.
  let touch = false;
  canvas.addEventListener('pointerdown', (e) => { touch = e.pointerType === 'touch'; });
  canvas.addEventListener('click', (e) => {
    const cell = cellAt(hm, e);
    if (cell && touch) {
      hm.cursor = cell;   // the cell stays outlined and read out while the heatmap redraws
      hm.readout.textContent = describe(hm, cell);
      showTooltip(hm.readout.textContent, e.clientX, e.clientY);
    }
    if (cell && hm.onCell) hm.onCell(cell.r, cell.c);
  });
  canvas.addEventListener('focus', () => {
    if (!hm.view) return;
    hm.cursor ??= { r: hm.view.highlightRow ?? 0, c: 0 };
    hm.readout.textContent = describe(hm, hm.cursor);
    draw(hm);
  });
  canvas.addEventListener('blur', () => { hm.readout.textContent = ''; draw(hm); });
  canvas.addEventListener('keydown', (e) => onKey(hm, e));
}

const SUMMARY_ROWS = 6;

// Each row's strongest cell in words (masked cells left out), for the first SUMMARY_ROWS rows:
// "row ‘it’: most attention on ‘animal’ (0.41)" for weights, "largest at" for other values.
function strongest(view) {
  const { rows, cols, data } = view.slice;
  const parts = [];
  for (let r = 0; r < Math.min(rows, SUMMARY_ROWS); r++) {
    let best = -1;
    for (let c = 0; c < cols; c++) {
      const v = data[r * cols + c];
      if (!Number.isFinite(v) || v === view.fill || view.masked?.(r, c)) continue;
      if (best < 0 || v > data[r * cols + best]) best = c;
    }
    if (best < 0) continue;
    const words = { row: view.rowLabels?.[r] ?? r, col: view.colLabels?.[best] ?? best, v: formatValue(data[r * cols + best], 2) };
    parts.push(t(view.weights ? 'heatmap.mostAttention' : 'heatmap.largest', words));
  }
  if (rows > SUMMARY_ROWS) parts.push(t('heatmap.moreRows', { n: rows - SUMMARY_ROWS }));
  return parts.join(t('heatmap.separator'));
}

// The canvas's accessible name: the view's label (tensor, head, shape), then the strongest cells.
function accessibleName(hm) {
  const { view, thumb } = hm;
  const label = view.label ?? t('heatmap.unnamed');
  const summary = thumb ? '' : strongest(view);
  return summary ? t('heatmap.name', { label, summary }) : label;
}

function layout(hm, width) {
  const { view } = hm;
  const { rows, cols } = view.slice;
  if (hm.thumb) {
    const cw = Math.max(1, Math.floor(width / Math.max(rows, cols)));
    return { left: 0, top: 0, cw, ch: cw, w: cw * cols, h: cw * rows };
  }
  const rowChars = view.rowLabels ? Math.max(...view.rowLabels.map((s) => Math.min(12, s.length))) : String(rows - 1).length;
  const left = Math.min(100, rowChars * CHAR_W + 10);
  const colChars = view.colLabels ? Math.max(...view.colLabels.map((s) => Math.min(12, s.length))) : 0;
  const top = view.colLabels ? Math.min(84, colChars * CHAR_W * SLANT + 16) : 16;
  const maxCell = view.colLabels ? 44 : view.values ? 64 : 28;
  const cellWidth = (right) => Math.max(2, Math.min(maxCell, Math.floor((width - left - right) / cols)));
  // The room on the right: the last columns' slanted labels (the canvas box clips what is past it).
  let cw = cellWidth(8);
  let right = Math.max(8, labelOverhang(view.colLabels, cw, CHAR_W) + 3);
  cw = cellWidth(right);
  right = Math.max(right, labelOverhang(view.colLabels, cw, CHAR_W) + 3);
  const ch = Math.max(view.rowLabels ? 14 : 6, Math.min(view.values ? 26 : 22, cw));
  return { left, top, cw, ch, w: left + cw * cols + right, h: top + ch * rows + 2 };
}

// How far (px) the column labels reach right of the cells: label c (at most 12 characters of
// charW px) starts over its column's centre and runs up and right, SLANT of its length across.
export function labelOverhang(labels, cw, charW) {
  if (!labels) return 0;
  const n = labels.length;
  let over = 0;
  for (let c = Math.max(0, n - Math.ceil((12 * charW) / cw) - 1); c < n; c++) {
    over = Math.max(over, Math.min(12, labels[c].length) * charW * SLANT - (n - c - 0.5) * cw);
  }
  return Math.ceil(over);
}

// Cells: one pixel each in an offscreen canvas (grow-only too), scaled up without smoothing.
// Returns whether any cell is masked (a fill value or ±inf: left transparent, hatched next).
function paintCells(hm, ctx) {
  const { view, geom: g, cells } = hm;
  const { rows, cols, data } = view.slice;
  const { lut, index } = view.scale;
  if (cells.width < cols || cells.height < rows) { cells.width = Math.max(cols, cells.width); cells.height = Math.max(rows + 8, cells.height); }
  const cctx = cells.getContext('2d', CANVAS_OPTIONS);
  const img = cctx.createImageData(cols, rows);
  const px = img.data;
  let anyMasked = false;
  for (let i = 0; i < rows * cols; i++) {
    const v = data[i];
    let k;
    if (v === view.fill) { anyMasked = true; px[i * 4 + 3] = 0; continue; }
    if (Number.isFinite(v)) k = index(v) * 3;
    else if (Number.isNaN(v)) { px[i * 4] = 255; px[i * 4 + 1] = 0; px[i * 4 + 2] = 255; px[i * 4 + 3] = 255; continue; }
    else { anyMasked = true; px[i * 4 + 3] = 0; continue; }
    px[i * 4] = lut[k]; px[i * 4 + 1] = lut[k + 1]; px[i * 4 + 2] = lut[k + 2]; px[i * 4 + 3] = 255;
  }
  cctx.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(cells, 0, 0, cols, rows, g.left, g.top, g.cw * cols, g.ch * rows);
  return anyMasked;
}

// Masked cells: the fill value (-inf or the step's attrs.fill), or cells the mask hides (their
// weight is 0), drawn hatched; then grid lines once cells are big enough to tell apart.
function paintMaskAndGrid(hm, ctx, anyMasked) {
  const { view, geom: g } = hm;
  const { rows, cols, data } = view.slice;
  const masked = view.masked;
  if (anyMasked || masked) {
    ctx.fillStyle = hatchPattern(ctx);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
      const v = data[r * cols + c];
      if (isHidden(v, view.fill) || (masked && masked(r, c))) ctx.fillRect(g.left + c * g.cw, g.top + r * g.ch, g.cw, g.ch);
    }
  }
  if (g.cw >= 8 && g.ch >= 8) {
    ctx.fillStyle = 'rgba(255,255,255,0.9)';
    for (let c = 1; c < cols; c++) ctx.fillRect(g.left + c * g.cw - 0.5, g.top, 1, g.ch * rows);
    for (let r = 1; r < rows; r++) ctx.fillRect(g.left, g.top + r * g.ch - 0.5, g.cw * cols, 1);
  }
}

// A value in a cell: in a narrow one (2 digits) a tiny or huge value as 1 significant digit
// ("4e-4", as formatValue's "4.00e-4" would run into the next cell).
function cellText(v, digits) {
  const a = Math.abs(v);
  return digits === 2 && a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(0) : formatValue(v, digits);
}

// Values inside the cells when they fit: the numbers themselves are the lesson.
function paintValues(hm, ctx) {
  const { view, geom: g } = hm;
  const { rows, cols, data } = view.slice;
  if (!view.values || g.cw < 40 || g.ch < 16) return;
  const { lut, index } = view.scale;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  const digits = g.cw >= 54 ? 4 : 2;
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
    const v = data[r * cols + c];
    const hidden = !Number.isFinite(v) || v === view.fill || (view.masked && view.masked(r, c));
    ctx.fillStyle = hidden ? '#5b6475' : textColourFor(lut, index(v));
    ctx.fillText(Number.isFinite(v) ? cellText(v, digits) : formatValue(v), g.left + (c + 0.5) * g.cw, g.top + (r + 0.5) * g.ch);
  }
}

// Row labels (query tokens) right-aligned against the cells; column labels: tokens slanted,
// indices as sparse ticks.
function paintLabels(hm, ctx) {
  const { view, geom: g } = hm;
  const { rows, cols } = view.slice;
  ctx.fillStyle = '#1d2330';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  const rowStep = Math.max(1, Math.ceil(12 / g.ch));
  for (let r = 0; r < rows; r += view.rowLabels ? 1 : rowStep) {
    const text = view.rowLabels ? truncate(view.rowLabels[r], 12) : String(r);
    if (view.rowLabels && g.ch < 11 && r % rowStep) continue;
    ctx.fillStyle = view.highlightRow === r ? '#2f6fde' : '#1d2330';
    ctx.fillText(text, g.left - 5, g.top + (r + 0.5) * g.ch);
  }
  ctx.fillStyle = '#1d2330';
  if (view.colLabels) {
    ctx.textAlign = 'left';
    const step = Math.max(1, Math.ceil(11 / g.cw));
    for (let c = 0; c < cols; c += step) {
      ctx.save();
      ctx.translate(g.left + (c + 0.5) * g.cw, g.top - 5);
      ctx.rotate(-Math.PI / 4);
      ctx.fillText(truncate(view.colLabels[c], 12), 0, 0);
      ctx.restore();
    }
  } else {
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    ctx.fillStyle = '#5b6475';
    const step = Math.max(1, Math.ceil(28 / g.cw));
    for (let c = 0; c < cols; c += step) ctx.fillText(String(c), g.left + (c + 0.5) * g.cw, g.top - 2);
  }
}

// The highlighted row (the query the lines show), the marked cells (compare mode's differences)
// and the keyboard cell.
function paintCursor(hm, ctx) {
  const { view, geom: g, cursor } = hm;
  const { rows, cols } = view.slice;
  if (view.highlightRow != null && view.highlightRow < rows) {
    ctx.strokeStyle = '#2f6fde';
    ctx.lineWidth = 2;
    ctx.strokeRect(g.left - 1, g.top + view.highlightRow * g.ch - 1, g.cw * cols + 2, g.ch + 2);
  }
  if (view.marked) {
    ctx.strokeStyle = '#c2410c';
    ctx.lineWidth = 1.5;
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
      if (view.marked(r, c)) ctx.strokeRect(g.left + c * g.cw + 1, g.top + r * g.ch + 1, g.cw - 2, g.ch - 2);
    }
  }
  if (cursor && document.activeElement === hm.canvas) {
    ctx.strokeStyle = '#1d2330';
    ctx.lineWidth = 2;
    ctx.strokeRect(g.left + cursor.c * g.cw + 1, g.top + cursor.r * g.ch + 1, g.cw - 2, g.ch - 2);
  }
}

// The canvas's size for the view (a DOM write: done with the redraw's other writes, before any paint).
function fit(hm) {
  const { view, geom: g, box, thumb } = hm;
  const W = Math.ceil(g.w), H = Math.ceil(g.h);
  // Room for the full column width and a few more rows: typing a token then costs no realloc.
  if (box.fit(W, H, thumb ? 0 : Math.max(0, view.width - W), thumb ? 0 : 6 * g.ch)) hm.fontSet = false;
}

// The canvas's pixels (fit() sized it for this view).
function paint(hm) {
  const { view, thumb } = hm;
  if (!view) return;
  const dpr = window.devicePixelRatio || 1;
  const ctx = hm.canvas.getContext('2d', CANVAS_OPTIONS);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, hm.canvas.width / dpr, hm.canvas.height / dpr);
  paintMaskAndGrid(hm, ctx, paintCells(hm, ctx));
  if (thumb) return;
  // Setting ctx.font re-resolves the font (the costliest line of a redraw): only when reset.
  if (!hm.fontSet) { ctx.font = FONT; hm.fontSet = true; }
  paintValues(hm, ctx);
  paintLabels(hm, ctx);
  paintCursor(hm, ctx);
}

function draw(hm) {
  if (!hm.view) return;
  fit(hm);
  paint(hm);
}

// The drawn heatmap alone (the canvas keeps spare room to grow into), on white, as a PNG blob.
function png(hm) {
  const dpr = window.devicePixelRatio || 1;
  const out = document.createElement('canvas');
  out.width = Math.ceil(hm.geom.w * dpr);
  out.height = Math.ceil(hm.geom.h * dpr);
  const g = out.getContext('2d');
  g.fillStyle = '#ffffff';
  g.fillRect(0, 0, out.width, out.height);
  g.drawImage(hm.canvas, 0, 0, out.width, out.height, 0, 0, out.width, out.height);
  return new Promise((resolve, reject) => out.toBlob((b) => (b ? resolve(b) : reject(new Error('the heatmap could not be encoded as PNG'))), 'image/png'));
}

let detailsIds = 0;

export function createHeatmap({ className = '', thumb = false, onCell = null } = {}) {
  const root = document.createElement('div');
  root.className = `heatmap ${className}`.trim();
  const box = createCanvasBox();
  const { canvas } = box;
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', t('heatmap.unnamed'));
  const readout = document.createElement('p');
  readout.className = 'readout';
  readout.setAttribute('aria-live', 'polite');
  root.append(box.clip);
  const hm = { canvas, box, readout, cells: document.createElement('canvas'), thumb, onCell, view: null, geom: null, cursor: null, fontSet: false };
  if (!thumb) {
    canvas.tabIndex = 0;
    root.append(readout);
    listen(hm);
  }
  return {
    element: root,
    canvas,
    view: () => hm.view,
    png: () => png(hm),
    // Takes the room the heatmap of `data` will take ({slice: {rows, cols}, width, rowLabels?,
    // colLabels?, values?}) before it is painted: a card drawn when it scrolls into view (lazy.js)
    // then does not push what is below it (a click aimed there would land elsewhere).
    reserve(data) {
      const { w, h } = layout({ ...hm, view: data }, data.width);
      box.show(Math.ceil(w), Math.ceil(h));
    },
    // The name of a heatmap whose data is current but not drawn yet (lazy.js: scrolled out of view).
    setLabel(text) { setAttr(canvas, 'aria-label', text); },
    // The element (a value table) that holds the heatmap's numbers: its long description.
    details(el) {
      el.id ||= `heatmap-details-${++detailsIds}`;
      canvas.setAttribute('aria-details', el.id);
    },
    // data: {slice: {rows, cols, data}, scale, width, rowLabels?, colLabels?, masked?(r, c), fill? (the
    //        value masked cells hold), label (tensor, head, shape: for screen readers), weights? (the
    //        cells are attention weights: said so in the name), describeCell?(r, c, v), highlightRow?,
    //        values? (numbers in cells), marked?(r, c) (cells outlined: compare mode's differences)}
    update(data) {
      hm.view = data;
      hm.geom = layout(hm, data.width);
      if (hm.cursor && (hm.cursor.r >= data.slice.rows || hm.cursor.c >= data.slice.cols)) hm.cursor = { r: 0, c: 0 };
      setAttr(canvas, 'aria-label', accessibleName(hm));
      fit(hm);
      if (hm.cursor && document.activeElement === canvas) readout.textContent = describe(hm, hm.cursor);
      paintSoon(hm, () => paint(hm));
    },
  };
}
