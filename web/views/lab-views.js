// Experiments mode's views (lab/mode.js draws them): the head tiles (toggle buttons, each a small
// map of its attention), bar tables (the ranking, direct logit attribution), the patching heatmaps
// with their exports, and the logit lens table. Data in, DOM out: no core, no state.

import { cssColour, rampGradient, scaleFor, textColourFor } from '../colors.js';
import { i18nText, t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { createExportMenu } from './export-menu.js';
import { createHeatmap } from './heatmap.js';
import { CANVAS_OPTIONS } from './heatmap.js';

// The pattern names a tile shows (train/patterns.js PATTERNS but the task-specific offset).
const PATTERN_TEXT = { previous: 'lab.pattern.previous', self: 'lab.pattern.self', antiDiagonal: 'lab.pattern.antiDiagonal',
  induction: 'lab.pattern.induction', source: 'lab.pattern.source' };

// A <dl>'s terms and their descriptions: [[term, text]], as text.
export function fillTerms(dl, rows) {
  dl.replaceChildren(...rows.flatMap(([term, text]) => [
    Object.assign(document.createElement('dt'), { textContent: term }),
    Object.assign(document.createElement('dd'), { textContent: text }),
  ]));
}

// A T x T map (row-major) painted into a canvas of T x T pixels (scaled up by CSS), causal cells blank.
export function paintMap(canvas, map, T) {
  canvas.width = canvas.height = T;
  const g = canvas.getContext('2d', CANVAS_OPTIONS);
  const img = g.createImageData(T, T);
  const { lut, index } = scaleFor(map, { probabilities: true });
  for (let r = 0; r < T; r++) for (let c = 0; c < T; c++) {
    const o = (r * T + c) * 4, k = index(map[r * T + c]) * 3;
    const masked = c > r;
    img.data[o] = masked ? 238 : lut[k];
    img.data[o + 1] = masked ? 240 : lut[k + 1];
    img.data[o + 2] = masked ? 243 : lut[k + 2];
    img.data[o + 3] = 255;
  }
  g.putImageData(img, 0, 0);
}

// update({layers, heads, T, maps: [l][h] (T x T), ablated: Set of "l.h", labels: [l][h] -> {key, score} | null})
export function createLabHeads(root, { onToggle }) {
  let built = '';
  const tiles = new Map();
  function build(layers, heads) {
    root.replaceChildren();
    tiles.clear();
    root.style.setProperty('--lab-heads', String(heads));
    for (let l = 0; l < layers; l++) {
      const row = document.createElement('div');
      row.className = 'lab-layer';
      row.setAttribute('role', 'group');
      const name = document.createElement('span');
      name.className = 'lab-layer-name';
      row.append(name);
      row.labelEl = name;
      for (let h = 0; h < heads; h++) {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'lab-head';
        Object.assign(button.dataset, { testid: 'exp-head', layer: String(l), head: String(h) });
        button.setAttribute('aria-pressed', 'false');
        const canvas = document.createElement('canvas');
        canvas.setAttribute('aria-hidden', 'true');
        const caption = document.createElement('span');
        caption.className = 'lab-head-name';
        const label = document.createElement('span');
        label.className = 'lab-head-label';
        button.append(canvas, caption, label);
        button.addEventListener('click', () => onToggle(l, h));
        row.append(button);
        tiles.set(`${l}.${h}`, { button, canvas, caption, label });
      }
      root.append(row);
    }
  }
  return {
    update({ layers, heads, T, maps, ablated, labels }) {
      if (built !== `${layers}x${heads}`) { build(layers, heads); built = `${layers}x${heads}`; }
      [...root.children].forEach((row, l) => { row.labelEl.textContent = t('lab.layerN', { l }); row.setAttribute('aria-label', t('lab.layerN', { l })); });
      for (const [key, tile] of tiles) {
        const [l, h] = key.split('.').map(Number);
        const off = ablated.has(key);
        tile.button.setAttribute('aria-pressed', String(off));
        tile.button.classList.toggle('off', off);
        const lab = labels?.[l]?.[h] ?? null;
        const pattern = lab ? `${t(PATTERN_TEXT[lab.key])} ${lab.score.toFixed(2)}` : t('lab.noPattern');
        tile.caption.textContent = t('lab.headShort', { layer: l, head: h });
        tile.label.textContent = pattern;
        tile.button.title = t(off ? 'lab.headOff' : 'lab.headOn', { layer: l, head: h, pattern });
        if (T > 0 && maps?.[l]?.[h]?.length === T * T) paintMap(tile.canvas, maps[l][h], T);
      }
    },
  };
}

// A table of bars: update({caption, rows: [{label, value, mark?, data?}], format?}); the bar's
// length is |value| over the largest |value|; with a negative value among them, bars grow from a
// zero line in the middle, to the right for positive values and to the left for negative ones.
export function createLabBars(root, { testid }) {
  const table = document.createElement('table');
  table.className = 'lab-bars';
  table.dataset.testid = testid;
  const caption = document.createElement('caption');
  const body = document.createElement('tbody');
  table.append(caption, body);
  let current = null;
  const menu = createExportMenu({ tensor: () => current, heatmap: null });
  root.append(table, menu);
  return {
    table,
    update({ caption: text, rows, format = (v) => v.toFixed(4) }) {
      caption.textContent = text;
      current = { name: testid, shape: [rows.length], dims: ['row'], data: Float32Array.from(rows, (r) => r.value) };
      menu.hidden = rows.length === 0;
      const max = Math.max(1e-12, ...rows.map((r) => Math.abs(r.value)));
      const signed = rows.some((r) => r.value < 0);   // a zero line in the middle; else bars from the left
      table.classList.toggle('signed', signed);
      body.replaceChildren(...rows.map((r) => {
        const tr = document.createElement('tr');
        if (r.mark) tr.className = 'mark';
        if (r.data) Object.assign(tr.dataset, r.data);
        const name = document.createElement('th');
        name.scope = 'row';
        name.textContent = r.label;
        const cell = document.createElement('td');
        cell.className = 'lab-bar-cell';
        const bar = document.createElement('span');
        bar.className = r.value < 0 ? 'lab-bar neg' : 'lab-bar';
        bar.style.width = `${((Math.abs(r.value) / max) * (signed ? 50 : 100)).toFixed(2)}%`;
        cell.append(bar);
        const value = document.createElement('td');
        value.textContent = format(r.value);
        value.dataset.value = String(r.value);
        tr.append(name, cell, value);
        return tr;
      }));
    },
  };
}

// A heatmap of a grid (rows x cols, signed values) with its colour scale's ends and its exports
// (CSV, JSON, .npy, PNG, SVG). update({name, rowLabels, rowNames? (a cell's tooltip: the rows'
// whole names where the labels are short), colLabels, data, label, corner})
export function createLabGrid(figure, { cellKey = 'lab.cell' } = {}) {
  const heatmap = createHeatmap({ className: 'lab-map' });
  let current = null;
  const menu = createExportMenu({ tensor: () => current, heatmap });
  const [lo, ramp, hi] = ['span', 'span', 'span'].map((tag) => document.createElement(tag));
  const legend = Object.assign(document.createElement('p'), { className: 'legend' });
  legend.dataset.testid = 'lab-legend';
  ramp.className = 'ramp';
  legend.append(lo, ramp, hi);
  figure.append(heatmap.element, legend, menu);
  return {
    update({ name, rowLabels, rowNames = rowLabels, colLabels, data, label }) {
      const rows = rowLabels.length, cols = colLabels.length;
      current = { name, shape: [rows, cols], dims: ['row', 'col'], data };
      figure.dataset.rows = String(rows);
      figure.dataset.cols = String(cols);
      figure.dataset.cells = String(rows * cols);
      // 46 px a column up to 520 px (wide enough for each cell's value), and no wider than the
      // figure (GPT-2 small's 12 heads in half a card: its last two columns were cut off)
      const room = figure.clientWidth;
      const scale = scaleFor(data);
      heatmap.update({ slice: { rows, cols, data }, scale, width: Math.min(520, 110 + cols * 46, room > 0 ? room : Infinity), rowLabels, colLabels, values: true, label,
        describeCell: (r, c, v) => t(cellKey, { row: rowNames[r], col: colLabels[c], v: formatValue(v) }) });
      // the values at the scale's two ends (signed: blue, white at 0, red; all >= 0: white to blue)
      lo.textContent = formatValue(scale.lo, 3);
      hi.textContent = formatValue(scale.hi, 3);
      ramp.style.background = rampGradient(scale.kind);
    },
  };
}

// The logit lens: rows (residual points) x positions, each cell the top token shaded by its
// probability; the answer position's column outlined, a check where the top is the right answer.
// update({caption, steps, tokens (column labels), top: [row][pos] labels, ids, prob, pos, answer})
export function createLabLens(root) {
  const scroll = document.createElement('div');
  scroll.className = 'table-scroll';
  scroll.tabIndex = 0;
  scroll.setAttribute('role', 'group');
  const table = document.createElement('table');
  table.className = 'lab-lens';
  scroll.append(table);
  let current = null;
  const menu = createExportMenu({ tensor: () => current, heatmap: null });
  root.append(scroll, menu);
  const { lut } = scaleFor([0, 1], { probabilities: true });
  return {
    update({ caption, steps, tokens, top, ids, prob, pos, answer }) {
      scroll.setAttribute('aria-label', caption);
      current = { name: 'logit_lens_top_prob', shape: [steps.length, tokens.length], dims: ['step', 'seq'], data: Float32Array.from(prob.flat()) };
      const cap = document.createElement('caption');
      cap.textContent = caption;
      const head = document.createElement('tr');
      head.append(i18nText(document.createElement('th'), 'lab.lensCorner'));
      tokens.forEach((tok, i) => {
        const th = document.createElement('th');
        th.scope = 'col';
        th.textContent = `${i} ${tok}`;
        if (i === pos) th.className = 'answer';
        head.append(th);
      });
      const rows = steps.map((step, r) => {
        const tr = document.createElement('tr');
        const th = document.createElement('th');
        th.scope = 'row';
        th.textContent = step;
        tr.append(th);
        top[r].forEach((label, i) => {
          const td = document.createElement('td');
          const k = Math.round(prob[r][i] * 255);
          td.style.background = cssColour(lut, k);
          td.style.color = textColourFor(lut, k);
          const right = i === pos && ids[r][i] === answer;
          td.textContent = right ? `${label} ✓` : label;
          td.title = t('lab.lensCell', { step, i, token: label, p: prob[r][i].toFixed(3) });
          td.dataset.id = String(ids[r][i]);
          td.dataset.prob = String(prob[r][i]);
          if (i === pos) td.className = right ? 'answer right' : 'answer';
          tr.append(td);
        });
        return tr;
      });
      table.replaceChildren(cap, head, ...rows);
    },
  };
}
