// Markdown tables and the targets check of `npm run bench` (run.mjs), from results.json's object:
// the forward tables (when run) and the training table. Every figure is a measured median with
// [min, max]; ratios are core / peer in the same run.
const SHAPE = (s) => `${s.B}×${s.T}×${s.C}, H=${s.H}`;
export const flops = ({ B, T, C }) => 8 * B * T * C * C + 4 * B * T * T * C;  // 4 linears + QKᵀ and weights·V

export function report(results) {
  const lines = [];
  const notes = [];
  if (results.shapes) forwardReport(results, lines, notes);
  if (results.train?.runs?.length) trainReport(results, lines, notes);
  return { markdown: lines.join('\n'), notes };
}

const ms = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const loadText = (m) => `load average before ${m.loadavg_before.map((v) => v.toFixed(2)).join(' ')}, after ${m.loadavg_after.map((v) => v.toFixed(2)).join(' ')}`;
const protocolText = (p) => `${p.warmup} warm-up runs (at least ${p.warmupMs / 1000} s) + ${p.runs} timed runs, a run repeating the call for at least ${p.minRunMs} ms; calls over ${p.longCallMs / 1000} s get 1 + 3`;

function forwardReport(results, lines, notes) {
  const get = (backend, s) => results.runs.find((r) => r.backend === backend && r.B === s.B && r.T === s.T && r.C === s.C && r.H === s.H);
  const cell = (r) => {
    if (!r) return 'not run';
    if (r.median_ms != null) return `${ms(r.median_ms)} [${ms(r.min_ms)}, ${ms(r.max_ms)}]`;
    if (r.error) return `error: ${r.error.replace(/\|/g, '/').replace(/\s+/g, ' ').slice(0, 160)}`;
    const secs = /([\d.]+) s per call predicted/.exec(r.skipped) ?? /took ([\d.]+) s/.exec(r.skipped);
    if (/--quick/.test(r.skipped)) return 'not run (--quick)';
    if (/predicted/.test(r.skipped)) return `not run (${secs[1]} s/call predicted)`;
    return secs ? `not run (${secs[1]} s/call)` : 'not run';
  };
  const ratio = (a, b) => (a?.median_ms != null && b?.median_ms != null ? a.median_ms / b.median_ms : null);
  const rcell = (v) => (v == null ? '—' : `${v.toFixed(2)}×`);
  const main = [...results.shapes.main_T.map((T) => ({ B: 1, T, C: 768, H: 12 })), results.shapes.seed];
  const ghz = results.machine.measured_ghz ?? results.machine.mhz / 1000;
  const clock = results.machine.measured_ghz
    ? `${ghz.toFixed(2)} GHz measured (a dependent-add chain; ${results.machine.mhz_source} says ${(results.machine.mhz / 1000).toFixed(3)})`
    : `${ghz.toFixed(3)} GHz (${results.machine.mhz_source})`;
  const adapter = results.browser?.adapter;
  const adapterName = adapter ? [adapter.vendor, adapter.architecture, adapter.description].filter(Boolean).join(' ') : 'none';
  const swift = /swiftshader/i.test(adapterName);
  const table = (title, head, rows) => {
    lines.push(`#### ${title}`, '', `| ${head.join(' | ')} |`, `|${head.map((_, i) => (i ? ' ---: ' : ' --- ')).join('|')}|`);
    for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
    lines.push('');
  };
  lines.push(`### MultiHeadAttention forward (seed 000), output = mha(x, x, x), no mask: ms per call, median [min, max]`, '',
    `${results.machine.cpu}, ${results.machine.cores} cores, clock ${clock}; every backend on 1 thread; ${loadText(results.machine)}. ` +
    `Protocol, the same for every backend: ${protocolText(results.protocol)}; a size whose call takes over ${results.protocol.maxCallMs / 1000} s (measured, or predicted at twice that from the last size by flop count) ends that backend's larger sizes. \`${results.command}\`, ${results.seconds.toFixed(0)} s.`, '');
  table(`CPU, native: core (${results.native.kernels} kernels) vs PyTorch ${results.torch.version} (BLAS: ${results.torch.blas.map((b) => b.split('/').pop()).join(', ')})`,
    ['B×T×C, heads', 'core native', 'PyTorch CPU', 'core / PyTorch'],
    main.map((s) => [SHAPE(s), cell(get('core-native', s)), cell(get('torch-cpu', s)), rcell(ratio(get('core-native', s), get('torch-cpu', s)))]));
  table(`WASM in headless Chromium (${results.browser.coreKernels}, 1 thread; onnxruntime-web ${results.browser.ort} wasm EP, tfjs ${results.browser.tfjs} wasm backend)`,
    ['B×T×C, heads', 'core WASM', 'ort-web wasm', 'tfjs wasm', 'core / ort', 'core / tfjs'],
    main.map((s) => [SHAPE(s), cell(get('core-wasm', s)), cell(get('ort-wasm', s)), cell(get('tfjs-wasm', s)),
      rcell(ratio(get('core-wasm', s), get('ort-wasm', s))), rcell(ratio(get('core-wasm', s), get('tfjs-wasm', s)))]));
  table(`WebGPU on adapter "${adapterName}"${swift ? ' — SwiftShader, a CPU emulation of a GPU: compare the backends with each other only, never with a real GPU' : ''}`,
    ['B×T×C, heads', 'core WebGPU', 'ort-web webgpu', 'tfjs webgpu', 'core / ort', 'core / tfjs'],
    main.map((s) => [SHAPE(s), cell(get('core-webgpu', s)), cell(get('ort-webgpu', s)), cell(get('tfjs-webgpu', s)),
      rcell(ratio(get('core-webgpu', s), get('ort-webgpu', s))), rcell(ratio(get('core-webgpu', s), get('tfjs-webgpu', s)))]));
  const gf = (r, s) => (r?.median_ms != null ? flops(s) / r.median_ms / 1e6 : null);
  const gcell = (r, s, ceiling) => {
    const g = gf(r, s);
    if (g == null) return '—';
    return ceiling ? `${g.toFixed(1)} (${((100 * g) / ceiling).toFixed(0)}%)` : g.toFixed(1);
  };
  const avx2 = 32 * ghz, simd128 = 8 * ghz;
  table(`Achieved GFLOP/s (8·B·T·C² + 4·B·T²·C flop per call), with the fraction of one core's ceiling: AVX2 FMA 32 flop/cycle = ${avx2.toFixed(1)} GFLOP/s, WASM SIMD128 mul+add 8 flop/cycle = ${simd128.toFixed(1)} GFLOP/s`,
    ['B×T×C, heads', 'GFLOP', 'core native', 'PyTorch', 'core WASM', 'ort wasm', 'tfjs wasm', 'core WebGPU', 'ort webgpu', 'tfjs webgpu'],
    main.map((s) => [SHAPE(s), (flops(s) / 1e9).toFixed(2), gcell(get('core-native', s), s, avx2), gcell(get('torch-cpu', s), s, avx2),
      gcell(get('core-wasm', s), s, simd128), gcell(get('ort-wasm', s), s, simd128), gcell(get('tfjs-wasm', s), s, simd128),
      gcell(get('core-webgpu', s), s), gcell(get('ort-webgpu', s), s), gcell(get('tfjs-webgpu', s), s)]));
  const checks = ['core-native', 'torch-cpu', 'core-wasm', 'ort-wasm', 'tfjs-wasm', 'core-webgpu', 'ort-webgpu', 'tfjs-webgpu'].map((b) => {
    const d = results.runs.filter((r) => r.backend === b && r.max_abs_diff_vs_torch != null).map((r) => r.max_abs_diff_vs_torch);
    return b === 'torch-cpu' ? null : `${b} ${d.length ? Math.max(...d).toExponential(1) : '—'}`;
  }).filter(Boolean);
  const skipped = results.runs.filter((r) => r.skipped && !/--quick/.test(r.skipped));
  if (skipped.length) lines.push(`Not run: ${[...new Set(skipped.map((r) => `${r.backend} from T=${r.T}: ${r.skipped.replace(/^not run: /, '')}`))].slice(0, 8).join('; ')}.`, '');
  lines.push(`Same numbers everywhere: max |output − PyTorch's output| over all sizes: ${checks.join(', ')}.`, '');

  // Targets (issue 8), as ratios of this run.
  const T512 = { B: 1, T: 512, C: 768, H: 12 };
  const target = (name, v, limit) => notes.push({ target: name, ratio: v, limit, met: v != null && v <= limit });
  target('WASM core / ort-web wasm at T=512', ratio(get('core-wasm', T512), get('ort-wasm', T512)), 0.8);
  target('WASM core / tfjs wasm at T=512', ratio(get('core-wasm', T512), get('tfjs-wasm', T512)), 0.8);
  const worst = (a, b) => {
    const rs = main.map((s) => ({ s, v: ratio(get(a, s), get(b, s)) })).filter((x) => x.v != null);
    return rs.length ? rs.reduce((m, x) => (x.v > m.v ? x : m)) : null;
  };
  const wn = worst('core-native', 'torch-cpu');
  target(`native core / PyTorch CPU, worst main size${wn ? ` (${SHAPE(wn.s)})` : ''}`, wn?.v ?? null, 1.0);
  const wg = worst('core-webgpu', 'ort-webgpu');
  target(`WebGPU core / ort-web webgpu, worst size both ran${wg ? ` (${SHAPE(wg.s)})` : ''}`, wg?.v ?? null, 1.0);
  lines.push('#### Targets (issue 8)', '', '| target | measured | limit | |', '| --- | ---: | ---: | --- |');
  for (const n of notes) lines.push(`| ${n.target} | ${n.ratio == null ? 'not measured' : `${n.ratio.toFixed(2)}×`} | ≤ ${n.limit.toFixed(1)}× | ${n.met ? 'met' : 'missed'} |`);
  lines.push('');
}

// ---- Training ----------------------------------------------------------------------------------
export const TRAIN_LABELS = {
  causal: 'CausalTransformer (V=16, C=64, H=4, FFN 128, 2 layers), B=16, T=32, cross_entropy',
  mha: 'MultiHeadAttention (seed 000), 1×512×768, H=12, mse',
};
export const TRAIN_LIMITS = { loss: 1e-4, grads: 1e-3 };  // relative, against PyTorch's first step
const TRAIN_TARGETS = { wasm: 0.5, native: 1.0 };

// A backend's first step against PyTorch's: null when not checked (PyTorch itself, or no result).
export function trainCheck(r) {
  if (!r || r.backend === 'torch-cpu' || r.loss_rel_diff == null) return null;
  const ok = r.loss_rel_diff <= TRAIN_LIMITS.loss && r.grad_max_rel_diff <= TRAIN_LIMITS.grads;
  return { ok, text: `${r.loss_rel_diff.toExponential(1)} / ${r.grad_max_rel_diff.toExponential(1)}${ok ? '' : ` ✗ FAILED (${r.grad_max_rel_diff > TRAIN_LIMITS.grads ? r.grad_worst_param : 'loss'})`}` };
}

function trainReport(results, lines, notes) {
  const runs = results.train.runs;
  const get = (backend, c) => runs.find((r) => r.backend === backend && r.case === c);
  const cell = (r) => {
    if (!r) return 'not run';
    if (r.median_ms == null) return `error: ${String(r.error ?? r.skipped ?? '?').replace(/\|/g, '/').replace(/\s+/g, ' ').slice(0, 160)}`;
    const failed = trainCheck(r)?.ok === false;
    return `${ms(r.median_ms)} [${ms(r.min_ms)}, ${ms(r.max_ms)}]${failed ? ' ✗' : ''}`;
  };
  const ratio = (a, b) => (a?.median_ms != null && b?.median_ms != null ? a.median_ms / b.median_ms : null);
  const rcell = (a, b) => {
    const v = ratio(a, b);
    if (v == null) return '—';
    return trainCheck(a)?.ok === false || trainCheck(b)?.ok === false ? `${v.toFixed(2)}× ✗ (check failed)` : `${v.toFixed(2)}×`;
  };
  const m = results.machine;
  const blas = (results.torch?.blas ?? []).map((b) => b.split('/').pop()).join(', ') || 'unknown';
  const b = results.browser ?? {};
  lines.push('### Training: one optimizer step (zero_grad + forward + loss + backward + AdamW), ms per step, median [min, max]', '',
    `${m.cpu}, ${m.cores} cores; every backend on 1 thread; ${loadText(m)}. Protocol, the same for every backend: ${protocolText(results.protocol)}. ` +
    `\`${results.command}\`, ${results.seconds.toFixed(0)} s. Native: the core (${results.native?.kernels} kernels, \`attn::Session::step()\`) vs PyTorch ${results.torch?.version} ` +
    `(\`torch.optim.AdamW\`; BLAS: ${blas}; OPENBLAS_NUM_THREADS=${results.torch?.openblas_num_threads ?? '?'}, torch threads ${results.torch?.threads}). ` +
    `WASM, in one headless Chromium page: the page's core (${get('core-wasm', results.train.cases[0])?.kernels ?? b.coreKernels}, \`core.trainer(scenario).step()\`) vs tfjs ${b.tfjs} wasm backend ` +
    `(\`tf.variableGrads\` + \`tf.train.adam(1e-3)\`: tfjs has no AdamW, so its step leaves out the weight decay, one multiply-add per parameter).`, '');
  const cs = results.core;
  if (cs) {
    const when = (t) => (t ? t.replace('T', ' ').slice(0, 16) + ' UTC' : 'unknown');
    const files = cs.uncommitted.map((l) => l.slice(3));
    const list = files.length > 6 ? `${files.slice(0, 6).join(', ')} and ${files.length - 6} more` : files.join(', ');
    lines.push(`The core measured: commit ${cs.git_head}${files.length ? ` plus uncommitted changes to ${files.length} files under core/ and bindings/ (${list}; all in results.json)` : ''}; native library built ${when(cs.native_built)}, the page's WASM core ${when(cs.wasm_built)}.`, '');
  }
  const head = ['model, batch, loss', 'core native', 'PyTorch CPU', 'core / PyTorch', 'core WASM', 'tfjs wasm', 'core WASM / tfjs'];
  lines.push(`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i ? ' ---: ' : ' --- ')).join('|')}|`);
  for (const c of results.train.cases) {
    const [n, t, w, f] = ['core-native', 'torch-cpu', 'core-wasm', 'tfjs-wasm'].map((k) => get(k, c));
    lines.push(`| ${TRAIN_LABELS[c] ?? c}${t?.params ? ` (${t.params.toLocaleString('en-US')} parameters)` : ''} | ${cell(n)} | ${cell(t)} | ${rcell(n, t)} | ${cell(w)} | ${cell(f)} | ${rcell(w, f)} |`);
  }
  lines.push('', `First step against PyTorch's (its loss and the gradient of every parameter, before the update): loss relative difference / ` +
    `gradients' worst relative difference (max |diff| over the parameter's max |gradient|, floored at 1e-3 of the largest gradient of all: ` +
    `seed 000's \`W_K.bias\` has a gradient of 0 in exact arithmetic, rounding noise everywhere); a backend fails above ` +
    `${TRAIN_LIMITS.loss.toExponential(0)} / ${TRAIN_LIMITS.grads.toExponential(0)}, its time marked ✗.`, '');
  const chead = ['model', 'core native', 'core WASM', 'tfjs wasm'];
  lines.push(`| ${chead.join(' | ')} |`, `|${chead.map((_, i) => (i ? ' ---: ' : ' --- ')).join('|')}|`);
  for (const c of results.train.cases) {
    lines.push(`| ${c} | ${['core-native', 'core-wasm', 'tfjs-wasm'].map((k) => trainCheck(get(k, c))?.text ?? (get(k, c)?.error ? 'error' : '—')).join(' | ')} |`);
  }
  lines.push('');
  const phases = results.train.cases.map((c) => {
    const r = get('core-native', c);
    if (!r?.phases) return null;
    const f = r.phases.forward.median_ms;
    return `${c} ${ms(f)} ms of ${ms(r.median_ms)} (${((100 * f) / r.median_ms).toFixed(0)}%)`;
  }).filter(Boolean);
  if (phases.length) lines.push(`Native core, the forward alone (\`Session::forward\`, no tape for gradients; median, same protocol) against the whole step: ${phases.join(', ')}.`, '');
  const tnotes = [];
  for (const c of results.train.cases) {
    for (const [kind, a, bk, peer] of [['wasm', 'core-wasm', 'tfjs-wasm', 'tfjs wasm'], ['native', 'core-native', 'torch-cpu', `PyTorch + ${/openblas/i.test(blas) ? 'OpenBLAS' : blas}`]]) {
      const v = ratio(get(a, c), get(bk, c));
      const checked = trainCheck(get(a, c))?.ok !== false && trainCheck(get(bk, c))?.ok !== false;
      tnotes.push({ target: `${kind === 'wasm' ? 'WASM' : 'native'} core / ${peer}, training step, ${c}`, ratio: v, limit: TRAIN_TARGETS[kind], met: v != null && checked && v <= TRAIN_TARGETS[kind] });
    }
  }
  lines.push('#### Targets (training)', '', '| target | measured | limit | |', '| --- | ---: | ---: | --- |');
  for (const n of tnotes) lines.push(`| ${n.target} | ${n.ratio == null ? 'not measured' : `${n.ratio.toFixed(2)}×`} | ≤ ${n.limit.toFixed(1)}× | ${n.met ? 'met' : 'missed'} |`);
  lines.push('');
  notes.push(...tnotes);
}
