// Generate mode's attention rows (index.html #gen-rows): one row per generated token, each the
// new token's query over every earlier position and itself, one strip per head of the chosen
// layer; columns are absolute positions (a window cropped to block_size starts further right).
// Rows are appended as tokens arrive, so the picture grows as the text does. Each strip is a
// canvas named for a screen reader with the positions it reads most. Above the rows, each strip's
// head; below them, what the columns are and the weights' scale (the page's, colors.js).

import { cssColour, rampGradient, scaleFor } from '../colors.js';
import { t } from '../i18n.js';

const CELL_MAX = 14;
const CELL_MIN = 2;
const ROW_H = 14;

// The attention maps' scale: weights 0 to 1, white to dark blue.
const SCALE = scaleFor([], { probabilities: true });

function strip(weights, offset, total, cell, label) {
  const canvas = document.createElement('canvas');
  canvas.width = total * cell;
  canvas.height = ROW_H;
  canvas.className = 'gen-strip';
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', label);
  const ctx = canvas.getContext('2d');
  weights.forEach((w, j) => {
    ctx.fillStyle = cssColour(SCALE.lut, SCALE.index(w));
    ctx.fillRect((offset + j) * cell, 0, cell, ROW_H);
  });
  return canvas;
}

// The strongest position of a row, as the strip's name says it.
function strongest(weights, offset) {
  let best = 0;
  weights.forEach((w, j) => { if (w > weights[best]) best = j; });
  return { position: offset + best, weight: weights[best] };
}

function rowElement(row, total, cell) {
  const el = document.createElement('div');
  el.className = 'gen-row';
  el.dataset.position = String(row.position);
  const label = document.createElement('span');
  label.className = 'gen-token';
  label.textContent = `${row.position} ${row.label}`;
  el.append(label, ...row.heads.map((w, h) => {
    const top = strongest(w, row.offset);
    return strip(w, row.offset, total, cell, t('gen.rowLabel', { token: row.label, position: row.position, head: h, top: top.position, weight: top.weight.toFixed(2) }));
  }));
  return el;
}

// The line over the rows: each strip's head, where its strip is.
function headsElement(heads) {
  const el = document.createElement('div');
  el.className = 'gen-row gen-heads';
  el.setAttribute('aria-hidden', 'true');   // each strip's own name says its head
  el.append(Object.assign(document.createElement('span'), { className: 'gen-token' }),
    ...Array.from({ length: heads }, (_, h) => Object.assign(document.createElement('span'), { className: 'gen-head', textContent: t('gen.head', { head: h }) })));
  return el;
}

// The line under the rows: the columns and the scale.
function keyElement(total) {
  const el = Object.assign(document.createElement('p'), { className: 'legend gen-key' });
  const ramp = Object.assign(document.createElement('span'), { className: 'ramp' });
  ramp.style.background = rampGradient(SCALE.kind);
  el.append('0 ', ramp, ' 1 · ', Object.assign(document.createElement('span'), { textContent: t('gen.rowsKey', { last: total - 1 }) }));
  return el;
}

// root: the rows' element (the heads' line goes before it, the key after it). update({rows: [{position, label, offset, heads: [Float32Array]}], total: positions wide,
// key}): `key` names what the rows are of (session, layer, language); a new key redraws from the start.
export function createGenRows(root) {
  let key = '';
  let cell = CELL_MAX;
  let head = null, legend = null;
  return {
    update({ rows, total, key: k }) {
      if (k !== key || root.children.length > rows.length) {
        key = k;
        const width = Math.max(200, root.clientWidth || 600) - 80;
        const heads = rows[0]?.heads.length ?? 1;
        cell = Math.max(CELL_MIN, Math.min(CELL_MAX, Math.floor(width / heads / Math.max(1, total))));
        root.replaceChildren();
        head?.remove();
        legend?.remove();
        head = legend = null;
      }
      if (!head && rows.length > 0) {
        head = headsElement(rows[0].heads.length);
        legend = keyElement(total);
        root.before(head);
        root.after(legend);
      }
      for (let i = root.children.length; i < rows.length; i++) root.append(rowElement(rows[i], total, cell));
      root.dataset.rows = String(rows.length);
    },
  };
}
