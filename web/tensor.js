// Small helpers over the core's flat row-major tensors ({shape, dims, data}): picking the 2-D slice
// a heatmap shows and printing shapes with named dims. Views (views/*.js) and checks.js use them.

export const prod = (shape) => shape.reduce((a, b) => a * b, 1);

export function strides(shape) {
  const s = new Array(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) { s[i] = acc; acc *= shape[i]; }
  return s;
}

// Which two dims a heatmap draws: rows = the first sequence-like dim (so rows are tokens), columns =
// the last dim (or the second sequence dim, for seq_q × seq_k scores). Every other dim is fixed
// by a selector (batch, heads, ...).
export function heatmapAxes(dims, shape) {
  const n = shape.length;
  if (n === 0) return { row: -1, col: -1 };
  if (n === 1) return { row: -1, col: 0 };
  let row = dims.findIndex((d) => d.startsWith('seq'));
  if (row < 0 || row === n - 1) row = n - 2;
  return { row, col: n - 1 };
}

// The 2-D slice at `fixed` (an index for every dim; the row/col entries are ignored).
export function slice2d(tensor, axes, fixed) {
  const { shape, data } = tensor;
  const st = strides(shape);
  const rows = axes.row < 0 ? 1 : shape[axes.row];
  const cols = axes.col < 0 ? 1 : shape[axes.col];
  let base = 0;
  shape.forEach((_, i) => { if (i !== axes.row && i !== axes.col) base += (fixed[i] ?? 0) * st[i]; });
  const rs = axes.row < 0 ? 0 : st[axes.row];
  const cs = axes.col < 0 ? 0 : st[axes.col];
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[r * cols + c] = data[base + r * rs + c * cs];
  return { rows, cols, data: out };
}

// (batch=1, heads=8, seq=6, d_head=64)
export function namedShape(dims, shape) {
  // A broadcast dim the core names by its size ("1") reads better as just that.
  return `(${shape.map((n, i) => (dims?.[i] === String(n) ? String(n) : `${dims?.[i] ?? `dim${i}`}=${n}`)).join(', ')})`;
}

// What masked scores become (a masked_fill step's attrs.fill), as the seeds write it: −∞ or −1e9.
export function formatFill(v) {
  return Number.isFinite(v) ? v.toExponential().replace('e+', 'e').replace('-', '−') : formatValue(v);
}

export function formatValue(v, digits = 4) {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (Number.isNaN(v)) return 'NaN';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return v.toFixed(digits);
}
