// The scaling chart of `npm run bench`: median time of one forward vs T (B=1, C=768, H=12) for
// every backend, log-log, as a standalone SVG (docs/bench-scaling.svg for the README). Pure: takes
// results.json's object, returns the SVG text; backends with no measurement at a T leave a gap.
export const SERIES = [
  { backend: 'core-native', label: 'core, native', color: '#1f5fbf', dash: '' },
  { backend: 'torch-cpu', label: 'PyTorch 1.13 CPU', color: '#1f5fbf', dash: '6 4' },
  { backend: 'ort-node', label: 'onnxruntime-node CPU', color: '#1f5fbf', dash: '2 3' },
  { backend: 'core-wasm', label: 'core, WASM SIMD128', color: '#c0392b', dash: '' },
  { backend: 'ort-wasm', label: 'onnxruntime-web wasm', color: '#c0392b', dash: '6 4' },
  { backend: 'tfjs-wasm', label: 'tfjs wasm', color: '#c0392b', dash: '2 3' },
  { backend: 'core-webgpu', label: 'core, WebGPU', color: '#27874a', dash: '' },
  { backend: 'ort-webgpu', label: 'onnxruntime-web webgpu', color: '#27874a', dash: '6 4' },
  { backend: 'tfjs-webgpu', label: 'tfjs webgpu', color: '#27874a', dash: '2 3' },
];

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function scalingChart(results) {
  const Ts = results.shapes.scaling_T;
  const series = SERIES.map((s) => ({
    ...s,
    points: Ts.map((T) => results.runs.find((r) => r.backend === s.backend && r.B === 1 && r.T === T && r.C === 768 && r.H === 12))
      .map((r, i) => (r && r.median_ms != null ? { T: Ts[i], ms: r.median_ms } : null)),
  }));
  const all = series.flatMap((s) => s.points.filter(Boolean).map((p) => p.ms));
  if (all.length === 0) return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>';
  const W = 760, H = 460, L = 70, R = 230, Tp = 40, Bt = 50;
  const lx0 = Math.log2(Ts[0]), lx1 = Math.log2(Ts[Ts.length - 1]);
  const ly0 = Math.floor(Math.log10(Math.min(...all))), ly1 = Math.ceil(Math.log10(Math.max(...all)));
  const x = (T) => L + ((Math.log2(T) - lx0) / (lx1 - lx0 || 1)) * (W - L - R);
  const y = (ms) => H - Bt - ((Math.log10(ms) - ly0) / (ly1 - ly0 || 1)) * (H - Tp - Bt);
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(`<text x="${L}" y="22" font-size="14" font-weight="bold">MultiHeadAttention forward, B=1, C=768, H=12: median ms per call (log-log)</text>`);
  for (let e = ly0; e <= ly1; e++) {
    const v = 10 ** e;
    out.push(`<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    out.push(`<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${v >= 1000 ? `${v / 1000} s` : `${v} ms`}</text>`);
  }
  for (const T of Ts) {
    out.push(`<line x1="${x(T)}" x2="${x(T)}" y1="${Tp}" y2="${H - Bt}" stroke="#eee"/>`);
    out.push(`<text x="${x(T)}" y="${H - Bt + 16}" text-anchor="middle">${T}</text>`);
  }
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">sequence length T</text>`);
  out.push(`<rect x="${L}" y="${Tp}" width="${W - L - R}" height="${H - Tp - Bt}" fill="none" stroke="#888"/>`);
  series.forEach((s, i) => {
    const segs = [];
    let cur = [];
    for (const p of s.points) {
      if (p) cur.push(`${x(p.T).toFixed(1)},${y(p.ms).toFixed(1)}`);
      else if (cur.length) { segs.push(cur); cur = []; }
    }
    if (cur.length) segs.push(cur);
    for (const seg of segs) {
      out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" ${s.dash ? `stroke-dasharray="${s.dash}"` : ''} points="${seg.join(' ')}"/>`);
    }
    for (const p of s.points.filter(Boolean)) out.push(`<circle cx="${x(p.T).toFixed(1)}" cy="${y(p.ms).toFixed(1)}" r="2.5" fill="${s.color}"/>`);
    const ly = Tp + 14 + i * 20;
    out.push(`<line x1="${W - R + 14}" x2="${W - R + 44}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2" ${s.dash ? `stroke-dasharray="${s.dash}"` : ''}/>`);
    const n = s.points.filter(Boolean).length;
    out.push(`<text x="${W - R + 50}" y="${ly}">${esc(s.label)}${n < Ts.length ? ` (${n}/${Ts.length})` : ''}</text>`);
  });
  const adapter = results.browser?.adapter?.architecture ?? results.browser?.adapter?.vendor ?? 'none';
  const notes = [`${results.machine.cpu}, 1 thread`, `WebGPU adapter: ${adapter}${/swiftshader/i.test(adapter) ? ' (CPU emulation)' : ''}`,
    `${results.command}, ${results.date.slice(0, 10)}`];
  notes.forEach((t, i) => out.push(`<text x="${W - R + 14}" y="${Tp + 14 + SERIES.length * 20 + 16 + i * 16}" font-size="10" fill="#555">${esc(t)}</text>`));
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
