// Colour scales for the heatmaps, as 256-entry RGB lookup tables (no dependency: two ramps are a
// few lines). Sequential (white → blue) for weights in [0, 1] and other non-negative values;
// diverging (blue ← white → red) centred on 0 for signed ones, as ColorBrewer's Blues and RdBu.

function ramp(stops) {
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(t));
    const f = t - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = stops[k][c] + (stops[k + 1][c] - stops[k][c]) * f;
  }
  return lut;
}

const STOPS = {
  sequential: [[247, 251, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]],
  diverging: [[33, 102, 172], [103, 169, 207], [209, 229, 240], [247, 247, 247], [253, 219, 199], [239, 138, 98], [178, 24, 43]],
};
const BLUES = ramp(STOPS.sequential);
const RDBU = ramp(STOPS.diverging);

// A legend's strip of a scale's kind ('sequential' | 'diverging'), as a CSS background.
export const rampGradient = (kind) => `linear-gradient(to right, ${STOPS[kind].map((c) => `rgb(${c.join(' ')})`).join(', ')})`;

// A scale for the given values: {lut, lo, hi, index(v) -> 0..255, kind}. fill: the value masked
// scores hold (a masked_fill step's attrs.fill), left out: a large negative fill would flatten the scale.
export function scaleFor(values, { probabilities = false, fill = null } = {}) {
  let min = Infinity, max = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v) || v === fill) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (min === Infinity) { min = 0; max = 1; }
  if (probabilities) return sequential(0, 1);
  if (min >= 0) return sequential(0, max || 1);
  const m = Math.max(Math.abs(min), Math.abs(max)) || 1;
  return { kind: 'diverging', lut: RDBU, lo: -m, hi: m, index: (v) => Math.max(0, Math.min(255, Math.round(((v + m) / (2 * m)) * 255))) };
}

function sequential(lo, hi) {
  return { kind: 'sequential', lut: BLUES, lo, hi, index: (v) => Math.max(0, Math.min(255, Math.round(((v - lo) / (hi - lo)) * 255))) };
}

// Entry i of a scale's table as a CSS colour (a table cell's background, a canvas fill).
export const cssColour = (lut, i) => `rgb(${lut[i * 3]}, ${lut[i * 3 + 1]}, ${lut[i * 3 + 2]})`;

// Black text on light cells, white on dark ones: whichever contrasts more (WCAG's relative
// luminance), at least 4.59:1 on every colour of both scales.
const channel = (v) => { const c = v / 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
export function textColourFor(lut, i) {
  const lum = 0.2126 * channel(lut[i * 3]) + 0.7152 * channel(lut[i * 3 + 1]) + 0.0722 * channel(lut[i * 3 + 2]);
  return (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) ? '#000000' : '#ffffff';
}
