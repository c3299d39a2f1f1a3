// The tensor and heatmap file formats of the exports (views/export-menu.js loads this file on the
// first export): the scenario as JSON (runnable by `attention-cli run` and bindings/cli.mjs), a
// tensor as JSON, CSV or NumPy .npy, a heatmap as SVG.
import { formatValue } from '../tensor.js';
import { labelOverhang } from './heatmap.js';

// Typed arrays become plain arrays; non-finite numbers the core's JSON writes as strings.
function plain(value) {
  return JSON.parse(JSON.stringify(value, (key, v) => {
    if (ArrayBuffer.isView(v)) return Array.from(v, (x) => (Number.isFinite(x) ? x : String(x)));
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    return v;
  }));
}

export function scenarioJSON(scenario) {
  return `${JSON.stringify(plain(scenario), null, 1)}\n`;
}

// {name, shape, dims?, data}: data in row-major order, as the core hands it out.
export function tensorJSON(t) {
  return `${JSON.stringify(plain({ name: t.name, shape: t.shape, dims: t.dims ?? null, data: t.data }))}\n`;
}

// One row per index of the leading dims, one column per index of the last dim:
// "batch,heads,seq_q,seq_k=0,seq_k=1,..." then "0,0,0,0.1,0.2,...". Values in full float32 precision.
export function tensorCSV(t) {
  const shape = t.shape.length ? t.shape : [1];
  const dims = t.dims ?? shape.map((_, i) => `dim${i}`);
  const last = shape.at(-1);
  const lead = shape.slice(0, -1);
  const lines = [[...dims.slice(0, -1), ...Array.from({ length: last }, (_, j) => `${dims.at(-1)}=${j}`)].join(',')];
  const rows = lead.reduce((a, b) => a * b, 1);
  const index = new Array(lead.length).fill(0);
  for (let r = 0; r < rows; r++) {
    const values = Array.from(t.data.subarray(r * last, r * last + last), (v) => String(v));
    lines.push([...index, ...values].join(','));
    for (let k = lead.length - 1; k >= 0; k--) { if (++index[k] < lead[k]) break; index[k] = 0; }
  }
  return `${lines.join('\n')}\n`;
}

// NumPy's .npy format, version 1.0: magic, header dict padded to a multiple of 64 bytes, then
// little-endian float32 data in C order (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
export function tensorNpy(t) {
  const shape = t.shape.length === 1 ? `(${t.shape[0]},)` : `(${t.shape.join(', ')})`;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const bytes = new Uint8Array(10 + header.length + t.data.length * 4);
  bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0], 0);   // \x93NUMPY 1.0
  new DataView(bytes.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) bytes[10 + i] = header.charCodeAt(i);
  const view = new DataView(bytes.buffer, 10 + header.length);
  t.data.forEach((v, i) => view.setFloat32(i * 4, v, true));
  return bytes;
}

const escapeXml = (s) => String(s).replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' }[c]));
const hex = (lut, i) => `#${[lut[i * 3], lut[i * 3 + 1], lut[i * 3 + 2]].map((x) => x.toString(16).padStart(2, '0')).join('')}`;

// A heatmap (heatmap.js's view: slice, scale, labels, masked) as a standalone SVG: one rect per
// cell in the page's colours, masked cells grey with a diagonal hatch, labels as text.
export function heatmapSVG(view, title = '') {
  const { rows, cols, data } = view.slice;
  const cell = Math.max(4, Math.min(40, Math.floor(640 / Math.max(rows, cols))));
  const label = (s) => escapeXml(s.length > 12 ? `${s.slice(0, 11)}…` : s);
  const left = view.rowLabels ? 10 + 7 * Math.min(12, Math.max(...view.rowLabels.map((s) => s.length))) : 30;
  const top = (view.colLabels ? 10 + 5 * Math.min(12, Math.max(...view.colLabels.map((s) => s.length))) : 20) + (title ? 20 : 0);
  const W = left + cols * cell + Math.max(10, labelOverhang(view.colLabels, cell, 6) + 4), H = top + rows * cell + 10;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="11">`,
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#e4e6ea"/><path d="M0 6L6 0" stroke="#9aa1ad"/></pattern></defs>',
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`];
  if (title) out.push(`<text x="4" y="14" font-size="12">${escapeXml(title)}</text>`);
  const { lut, index } = view.scale;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = data[r * cols + c];
      const masked = !Number.isFinite(v) || v === view.fill || view.masked?.(r, c);
      const fill = Number.isNaN(v) ? '#ff00ff' : masked ? 'url(#hatch)' : hex(lut, index(v));
      out.push(`<rect x="${left + c * cell}" y="${top + r * cell}" width="${cell}" height="${cell}" fill="${fill}"><title>[${r}, ${c}] = ${escapeXml(formatValue(v))}</title></rect>`);
    }
  }
  for (let r = 0; r < rows; r++) {
    out.push(`<text x="${left - 4}" y="${top + (r + 0.5) * cell}" text-anchor="end" dominant-baseline="middle">${label(view.rowLabels?.[r] ?? String(r))}</text>`);
  }
  for (let c = 0; c < cols; c++) {
    const x = left + (c + 0.5) * cell, y = top - 4;
    out.push(view.colLabels ? `<text transform="translate(${x} ${y}) rotate(-45)">${label(view.colLabels[c])}</text>`
      : `<text x="${x}" y="${y}" text-anchor="middle">${c}</text>`);
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

