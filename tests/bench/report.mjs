// Markdown tables and the targets check of `npm run bench` (run.mjs), from results.json's object:
// the forward tables (when run) and the training table. Every figure is a measured median with
// [min, max]; ratios are core / peer in the same run; every table's heading names the CPU model
// and its flags. publish() writes the run to docs/bench/<cpu-slug>.md (one file per CPU model),
// docs/benchmarks.md's index of those files (between <!-- bench:begin --> and <!-- bench:end -->)
// and the training and generation tables (an optimizer step of two models; a GPT decode step with
// and without the KV cache) between <!-- bench-train:begin --> / <!-- bench-generate:begin --> and
// their :end markers, and README.md's one table (<!-- bench-headline:begin -->).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';

const SHAPE = (s) => `${s.B}×${s.T}×${s.C}, H=${s.H}`;
export const flops = ({ B, T, C }) => 8 * B * T * C * C + 4 * B * T * T * C;  // 4 linears + QKᵀ and weights·V

export function report(results) {
  const forward = [], train = [], generate = [], interp = [];
  const notes = [];
  if (results.shapes) forwardReport(results, forward, notes);
  if (results.train?.runs?.length) trainReport(results, train, notes);
  if (results.generate?.runs?.length) generateReport(results, generate);
  if (results.interp?.runs?.length) interpReport(results, interp, notes);
  return { markdown: [...forward, ...train, ...generate, ...interp].join('\n'), forward: forward.join('\n'), train: train.join('\n'), generate: generate.join('\n'),
    interp: interp.join('\n'), notes };
}

// "AMD EPYC (avx2, fma, avx512f)": the CPU model of /proc/cpuinfo and the SIMD flags that matter here.
// "family 26 model 2": two CPUs of one model name (AMD EPYC: Zen 4 and Zen 5) told apart.
export const cpuIdOf = (m) => (Number.isFinite(m.family) && Number.isFinite(m.model) ? ` (family ${m.family} model ${m.model})` : '');
// "AMD EPYC (family 26 model 2), 2 cores, AVX-512": the machine line of the threads and pretrained tables.
export const machineLine = (m) => `${m.cpu}${cpuIdOf(m)}, ${m.cores} cores${m.avx512f ? ', AVX-512' : m.avx2_fma ? ', AVX2 + FMA' : ''}`;
export const cpuTag = (m) => `${m.cpu ?? 'unknown CPU'} (${['avx2', 'fma', 'avx512f'].filter((f) => m[f] ?? (f === 'avx512f' ? m.avx512f : m.avx2_fma)).join(', ') || 'no avx2'})`;
export const cpuSlug = (cpu) => String(cpu ?? 'unknown-cpu').replace(/\((R|TM|C)\)/gi, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'unknown-cpu';
// The file of the threads and 124M tables (docs/bench/threads/, docs/bench/pretrained/): one per CPU
// model, the name and, where known, its family and model (a KVM guest names Zen 4 and Zen 5 both "AMD EPYC").
export const cpuFileSlug = (m) => cpuSlug(`${m.cpu ?? 'unknown-cpu'}${cpuIdOf(m)}`);
const PEAK_NAMES = { 'avx2-fma': 'AVX2 FMA (256-bit)', 'avx512-fma': 'AVX-512 FMA (512-bit)', 'wasm-simd128-mul-add': 'SIMD128 f32x4 mul+add',
  'wasm-relaxed-madd': 'relaxed SIMD f32x4.relaxed_madd' };
// The ceiling a column is divided by: the best measured kind of the engine (native: AVX-512 or AVX2, whichever ran faster).
export function ceilingOf(peaks) {
  const all = Object.entries(peaks ?? {}).map(([kind, p]) => ({ kind, ...p }));
  return all.length ? all.reduce((a, b) => (b.gflops > a.gflops ? b : a)) : null;
}
const peakList = (peaks) => Object.entries(peaks ?? {}).map(([kind, p]) => `${PEAK_NAMES[kind] ?? kind} ${p.gflops.toFixed(1)} GFLOP/s (${p.accumulators} accumulators)`).join(', ');

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
  const tag = cpuTag(results.machine);
  const table = (title, head, rows) => {
    lines.push(`#### ${title} — ${tag}`, '', `| ${head.join(' | ')} |`, `|${head.map((_, i) => (i ? ' ---: ' : ' --- ')).join('|')}|`);
    for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
    lines.push('');
  };
  lines.push(`### MultiHeadAttention forward (seed 000), output = mha(x, x, x), no mask: ms per call, median [min, max] — ${tag}`, '',
    `${results.machine.cpu}${cpuIdOf(results.machine)}, ${results.machine.cores} cores, clock ${clock}; every backend on 1 thread; ${loadText(results.machine)}. ` +
    `Protocol, the same for every backend: ${protocolText(results.protocol)}; a size whose call takes over ${results.protocol.maxCallMs / 1000} s (measured, or predicted at twice that from the last size by flop count) ends that backend's larger sizes. \`${results.command}\`, ${results.seconds.toFixed(0)} s.`, '');
  const on = results.ort_node ?? {};
  const ortNodeText = on.error ? `onnxruntime-node: ${on.error}` : `onnxruntime-node ${on.version} (CPU execution provider, intra-op ${on.intra_op_threads} / inter-op ${on.inter_op_threads} thread)`;
  table(`CPU, native: core (${results.native.kernels} kernels) vs PyTorch ${results.torch.version} (BLAS: ${results.torch.blas.map((b) => b.split('/').pop()).join(', ')}) vs ${ortNodeText}`,
    ['B×T×C, heads', 'core native', 'PyTorch CPU', 'onnxruntime-node', 'core / PyTorch', 'core / ort-node'],
    main.map((s) => [SHAPE(s), cell(get('core-native', s)), cell(get('torch-cpu', s)), cell(get('ort-node', s)),
      rcell(ratio(get('core-native', s), get('torch-cpu', s))), rcell(ratio(get('core-native', s), get('ort-node', s)))]));
  // Firefox's columns (run.mjs firefoxRuns: runs named firefox:<backend>) when that engine ran.
  const ff = results.firefox, ffName = ff && `Firefox ${/Firefox\/([\d.]+)/.exec(ff.userAgent)?.[1] ?? ''}`.trim();
  const ffPeak = ceilingOf(results.peaks?.firefox_wasm);
  // core-wasm-simd128 (page.js): the plain SIMD128 build beside the relaxed-SIMD one core-wasm runs
  const plainRuns = results.runs.some((r) => r.backend === 'core-wasm-simd128' && r.median_ms != null);
  table(`WASM in headless Chromium (V8)${ff ? ` and ${ffName} (SpiderMonkey)` : ''} (${results.browser.coreKernels}, 1 thread; onnxruntime-web ${results.browser.ort} wasm EP, tfjs ${results.browser.tfjs} wasm backend)`,
    ['B×T×C, heads', 'core WASM', 'ort-web wasm', 'tfjs wasm', 'core / ort', 'core / tfjs',
      ...(plainRuns ? ['core WASM, SIMD128 build', 'SIMD128 build / ort'] : []),
      ...(ff ? ['core WASM, Firefox', 'ort wasm, Firefox', 'tfjs wasm, Firefox', 'core / ort, Firefox', 'core, Firefox / Chromium'] : [])],
    main.map((s) => [SHAPE(s), cell(get('core-wasm', s)), cell(get('ort-wasm', s)), cell(get('tfjs-wasm', s)),
      rcell(ratio(get('core-wasm', s), get('ort-wasm', s))), rcell(ratio(get('core-wasm', s), get('tfjs-wasm', s))),
      ...(plainRuns ? [cell(get('core-wasm-simd128', s)), rcell(ratio(get('core-wasm-simd128', s), get('ort-wasm', s)))] : []),
      ...(ff ? [cell(get('firefox:core-wasm', s)), cell(get('firefox:ort-wasm', s)), cell(get('firefox:tfjs-wasm', s)),
        rcell(ratio(get('firefox:core-wasm', s), get('firefox:ort-wasm', s))), rcell(ratio(get('firefox:core-wasm', s), get('core-wasm', s)))] : [])]));
  // run.mjs retimeOutliers: runs over twice their Firefox time, timed again in a fresh Chromium page
  const retimed = results.retimed ?? [];
  if (retimed.length) {
    lines.push(`Timed again in a fresh Chromium page (the first page's run took over ${results.retime_factor ?? 2}x its Firefox time; the table shows the fresh page's): ${retimed.map((r) =>
      `${r.backend} at ${SHAPE(r)}: ${ms(r.first_page_ms)} ms in the first page, ${ms(r.firefox_ms)} in Firefox, ${r.retimed_ms != null ? `${ms(r.retimed_ms)} in the fresh page` : `the fresh page: ${r.retimed_error}`}`).join('; ')}.`, '');
  }
  // Which tiles the core's start-up timing picked in each engine (kernels_wasm.cpp): a run to
  // compare with another starts here.
  const tiles = [['Chromium', results.browser], ...(ff ? [[ffName, ff]] : [])].filter(([, r]) => r?.coreTiles);
  if (tiles.length) lines.push(`The core's GEMM tiles, timed at its start-up: ${tiles.map(([n, r]) => `${n}: ${r.coreTiles}`).join('; ')}.`, '');
  if (ff) {
    lines.push(`${ffName}: ${ff.userAgent}; WASM SIMD128 ${ff.wasmSimd ? 'validated' : 'NOT validated'}; measured peak ${ffPeak ? `${PEAK_NAMES[ffPeak.kind] ?? ffPeak.kind} ${ffPeak.gflops.toFixed(1)} GFLOP/s` : 'not measured'}` +
      `; WebGPU adapter ${ff.adapter ? JSON.stringify(ff.adapter) : `none${ff.gpuError ? ` (${ff.gpuError})` : ''}`}.`, '');
  }
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
  // Ceilings measured in this run (peak.hpp), never assumed: the native bench's register-only FMA
  // microkernels, and the page's SIMD128 ones, each the best of its measurements. Each WASM column
  // is divided by the ceiling of the instructions it runs: the core's relaxed-SIMD build by the
  // relaxed_madd one, the plain builds (ort-web and tfjs use no relaxed SIMD) by mul+add's.
  const nativePeak = ceilingOf(results.peaks?.native);
  const nativeCeil = nativePeak?.gflops ?? null;
  const wasmPeak = (kind) => (results.peaks?.wasm?.[kind] ? { kind, ...results.peaks.wasm[kind] } : null);
  const plainPeak = wasmPeak('wasm-simd128-mul-add'), relaxedPeak = wasmPeak('wasm-relaxed-madd');
  const corePeak = /relaxed/.test(results.browser?.coreKernels ?? '') ? relaxedPeak : plainPeak;
  const wasmCeil = plainPeak?.gflops ?? null, coreWasmCeil = corePeak?.gflops ?? null;
  const peakText = (p) => `${PEAK_NAMES[p.kind]} ${p.gflops.toFixed(1)} GFLOP/s`;
  table(`Achieved GFLOP/s (8·B·T·C² + 4·B·T²·C flop per call), with % of measured peak: native ${nativePeak ? peakText(nativePeak) : 'not measured'}; WASM in this Chromium: ${corePeak ? `core ${peakText(corePeak)}` : 'not measured'}, ort and tfjs ${plainPeak ? peakText(plainPeak) : 'not measured'}`,
    ['B×T×C, heads', 'GFLOP', 'core native', 'PyTorch', 'ort-node', 'core WASM', 'ort wasm', 'tfjs wasm', 'core WebGPU', 'ort webgpu', 'tfjs webgpu'],
    main.map((s) => [SHAPE(s), (flops(s) / 1e9).toFixed(2), gcell(get('core-native', s), s, nativeCeil), gcell(get('torch-cpu', s), s, nativeCeil), gcell(get('ort-node', s), s, nativeCeil),
      gcell(get('core-wasm', s), s, coreWasmCeil), gcell(get('ort-wasm', s), s, wasmCeil), gcell(get('tfjs-wasm', s), s, wasmCeil),
      gcell(get('core-webgpu', s), s), gcell(get('ort-webgpu', s), s), gcell(get('tfjs-webgpu', s), s)]));
  const over = [];
  for (const s of main) {
    for (const [b, c] of [['core-native', nativeCeil], ['torch-cpu', nativeCeil], ['ort-node', nativeCeil], ['core-wasm', coreWasmCeil], ['core-wasm-simd128', wasmCeil], ['ort-wasm', wasmCeil], ['tfjs-wasm', wasmCeil]]) {
      const g = gf(get(b, s), s);
      if (g != null && c && g > c) over.push(`${b} at ${SHAPE(s)} (${((100 * g) / c).toFixed(0)} %)`);
    }
  }
  lines.push(`Measured peaks (register-only multiply-add microkernels, tests/bench/peak.hpp; the best of the measurements before and after the forward runs): native ${peakList(results.peaks?.native) || 'none'}; WASM in the bench page ${peakList(results.peaks?.wasm) || 'none'}.` +
    (over.length ? ` Above 100 % of the measured peak (the peak measured while the machine was busier than during that call): ${over.join(', ')}.` : ' No entry is above 100 % of its measured peak.'), '');
  const checks = ['core-native', 'torch-cpu', 'ort-node', 'core-wasm', 'core-wasm-simd128', 'ort-wasm', 'tfjs-wasm', 'core-webgpu', 'ort-webgpu', 'tfjs-webgpu'].map((b) => {
    const d = results.runs.filter((r) => r.backend === b && r.max_abs_diff_vs_torch != null).map((r) => r.max_abs_diff_vs_torch);
    return b === 'torch-cpu' ? null : `${b} ${d.length ? Math.max(...d).toExponential(1) : '—'}`;
  }).filter(Boolean);
  const skipped = results.runs.filter((r) => r.skipped && !/--quick/.test(r.skipped));
  if (skipped.length) lines.push(`Not run: ${[...new Set(skipped.map((r) => `${r.backend} from T=${r.T}: ${r.skipped.replace(/^not run: /, '')}`))].slice(0, 8).join('; ')}.`, '');
  lines.push(`Same numbers everywhere: max |output − PyTorch's output| over all sizes: ${checks.join(', ')}.`, '');

  // Targets (issue 19; the WebGPU one from issue 8), as ratios of this run.
  const T512 = { B: 1, T: 512, C: 768, H: 12 };
  const target = (name, v, limit) => notes.push({ target: name, ratio: v, limit, met: v != null && v <= limit });
  const atLeast = (name, v, limit) => notes.push({ target: name, percent: v, limit_percent: limit, met: v != null && v >= limit });
  const worst = (a, b, sizes = main) => {
    const rs = sizes.map((s) => ({ s, v: ratio(get(a, s), get(b, s)) })).filter((x) => x.v != null);
    return rs.length ? rs.reduce((m, x) => (x.v > m.v ? x : m)) : null;
  };
  const wasmSizes = main.filter((s) => s.B === 1 && [128, 512, 2048].includes(s.T));
  const sizesText = `T = ${wasmSizes.map((s) => s.T).join(', ')}`;
  const ww = worst('core-wasm', 'ort-wasm', wasmSizes);
  target(`WASM core / ort-web wasm, worst of ${sizesText}${ww ? ` (${SHAPE(ww.s)})` : ''}`, ww?.v ?? null, 0.8);
  const wt = worst('core-wasm', 'tfjs-wasm', wasmSizes);
  target(`WASM core / tfjs wasm, worst of ${sizesText}${wt ? ` (${SHAPE(wt.s)})` : ''}`, wt?.v ?? null, 0.5);
  const wn = worst('core-native', 'torch-cpu');
  target(`native core / PyTorch + OpenBLAS, worst main size${wn ? ` (${SHAPE(wn.s)})` : ''}`, wn?.v ?? null, 1.0);
  const wo = worst('core-native', 'ort-node');
  target(`native core / onnxruntime-node, worst main size${wo ? ` (${SHAPE(wo.s)})` : ''}`, wo?.v ?? null, 1.0);
  const pct = (b, c) => (gf(get(b, T512), T512) != null && c ? (100 * gf(get(b, T512), T512)) / c : null);
  atLeast(`native core, % of the measured ${nativePeak ? PEAK_NAMES[nativePeak.kind] : ''} peak at ${SHAPE(T512)}`, pct('core-native', nativeCeil), 60);
  atLeast(`WASM core, % of the measured ${corePeak ? PEAK_NAMES[corePeak.kind] : 'SIMD128'} peak at ${SHAPE(T512)}`, pct('core-wasm', coreWasmCeil), 60);
  const wg = worst('core-webgpu', 'ort-webgpu');
  target(`WebGPU core / ort-web webgpu, worst size both ran${wg ? ` (${SHAPE(wg.s)})` : ''}`, wg?.v ?? null, 1.0);
  lines.push(`#### Targets (issue 19) — ${tag}`, '', '| target | measured | limit | |', '| --- | ---: | ---: | --- |');
  for (const n of notes) lines.push(`| ${n.target} | ${targetCells(n)} | ${n.met ? 'met' : 'missed'} |`);
  lines.push('');
}

const targetCells = (n) => (n.limit_percent != null
  ? `${n.percent == null ? 'not measured' : `${n.percent.toFixed(0)} %`} | ≥ ${n.limit_percent} %`
  : `${n.ratio == null ? 'not measured' : `${n.ratio.toFixed(2)}×`} | ≤ ${n.limit.toFixed(1)}×`);

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

// Which core was measured (run.mjs's coreState): commit, uncommitted changes, build times.
function coreText(cs, wasm) {
  const when = (t) => (t ? t.replace('T', ' ').slice(0, 16) + ' UTC' : 'unknown');
  const files = cs.uncommitted.map((l) => l.slice(3));
  const list = files.length > 6 ? `${files.slice(0, 6).join(', ')} and ${files.length - 6} more` : files.join(', ');
  return `The core measured: commit ${cs.git_head}${files.length ? ` plus uncommitted changes to ${files.length} files under core/ and bindings/ (${list}; all in results.json)` : ''}; native library built ${when(cs.native_built)}${wasm ? `, the page's WASM core ${when(cs.wasm_built)}` : ''}.`;
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
  lines.push(`### Training: one optimizer step (zero_grad + forward + loss + backward + AdamW), ms per step, median [min, max] — ${cpuTag(m)}`, '',
    `${m.cpu}, ${m.cores} cores; every backend on 1 thread; ${loadText(m)}. Protocol, the same for every backend: ${protocolText(results.protocol)}. ` +
    `\`${results.command}\`, ${results.seconds.toFixed(0)} s. Native: the core (${results.native?.kernels} kernels, \`attn::Session::step()\`) vs PyTorch ${results.torch?.version} ` +
    `(\`torch.optim.AdamW\`; BLAS: ${blas}; OPENBLAS_NUM_THREADS=${results.torch?.openblas_num_threads ?? '?'}, torch threads ${results.torch?.threads}). ` +
    `WASM, in one headless Chromium page: the page's core (${get('core-wasm', results.train.cases[0])?.kernels ?? b.coreKernels}, \`core.trainer(scenario).step()\`) vs tfjs ${b.tfjs} wasm backend ` +
    `(\`tf.variableGrads\` + \`tf.train.adam(1e-3)\`: tfjs has no AdamW, so its step leaves out the weight decay, one multiply-add per parameter).`, '');
  if (results.core) lines.push(coreText(results.core, true), '');
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
  lines.push(`#### Targets (training) — ${cpuTag(m)}`, '', '| target | measured | limit | |', '| --- | ---: | ---: | --- |');
  for (const n of tnotes) lines.push(`| ${n.target} | ${n.ratio == null ? 'not measured' : `${n.ratio.toFixed(2)}×`} | ≤ ${n.limit.toFixed(1)}× | ${n.met ? 'met' : 'missed'} |`);
  lines.push('');
  notes.push(...tnotes);
}

// ---- Generation ----------------------------------------------------------------------------------
export const GENERATE_LIMIT = 1e-4;  // max |logits - PyTorch's uncached logits| of the step

function generateReport(results, lines) {
  const g = results.generate;
  const get = (backend, c) => g.runs.find((r) => r.backend === backend && r.case === c);
  const failed = (r) => r?.backend === 'core-native' && (r.max_abs_diff_vs_torch == null || r.max_abs_diff_vs_torch > GENERATE_LIMIT || r.id !== r.id_ref);
  const cell = (r) => {
    if (!r) return 'not run';
    if (r.median_ms == null) return `error: ${String(r.error ?? '?').replace(/\|/g, '/').replace(/\s+/g, ' ').slice(0, 160)}`;
    return `${ms(r.median_ms)} [${ms(r.min_ms)}, ${ms(r.max_ms)}]${failed(r) ? ' ✗' : ''}`;
  };
  const rcell = (a, b) => (a?.median_ms != null && b?.median_ms != null
    ? `${(a.median_ms / b.median_ms).toFixed(a.median_ms / b.median_ms < 0.1 ? 3 : 2)}×${failed(a) || failed(b) ? ' ✗ (check failed)' : ''}` : '—');
  const m = results.machine;
  const blas = (results.torch?.blas ?? []).map((b) => b.split('/').pop()).join(', ') || 'unknown';
  const c = g.config ?? {};
  lines.push(`### Generation: one decode step of nanoGPT's GPT at T = 256, with the KV cache and without, ms per step, median [min, max] — ${cpuTag(m)}`, '',
    `${m.cpu}, ${m.cores} cores; every backend on 1 thread; ${loadText(m)}. Protocol, the same for every backend: ${protocolText(results.protocol)}. \`${results.command}\`, ${results.seconds.toFixed(0)} s. ` +
    `The model: \`GPT\` (nanoGPT's, V=${c.vocab_size}, block_size ${c.block_size}, ${c.n_layer} layers, ${c.n_head} heads, ${c.n_embd} wide, ${g.params?.toLocaleString('en-US') ?? '?'} parameters), seed 0 everywhere (the core's seeded construction gives PyTorch's weights); ` +
    `a ${g.prompt}-id prompt (i mod ${c.vocab_size}), its greedy next id, then the timed step: the token at position ${g.prompt}, the 256th, to its logits and greedy id. ` +
    `With the cache: only that token's q, k, v, attending to every layer's cached keys and values; without: the whole 256-token window again, as nanoGPT's \`generate\` does. ` +
    `Native: the core (${results.native?.kernels} kernels; \`Session::generation()\`, \`next()\` at position ${g.prompt} on a copy of the generation after the prompt). ` +
    `PyTorch ${results.torch?.version} (BLAS: ${blas}; OPENBLAS_NUM_THREADS=${results.torch?.openblas_num_threads ?? '?'}, torch threads ${results.torch?.threads}), under \`torch.no_grad()\`: ` +
    `without the cache nanoGPT's generate step (\`model(idx_cond)\`, \`logits[:, -1, :]\`, argmax); with it, \`torch_bench.py\`'s \`decode_step\` over the same blocks (per layer k, v of the 255 earlier positions kept, \`torch.cat\` with the new token's).`, '');
  if (results.core) lines.push(coreText(results.core, false), '');
  const head = ['model, step', 'core native, KV cache', 'core native, no cache', 'core cache / no cache', 'PyTorch, KV cache', 'PyTorch, no cache', 'PyTorch cache / no cache', 'core / PyTorch, cache', 'core / PyTorch, no cache'];
  lines.push(`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i ? ' ---: ' : ' --- ')).join('|')}|`);
  const [nc, nn, tc, tn] = [['core-native', 'cache'], ['core-native', 'nocache'], ['torch-cpu', 'cache'], ['torch-cpu', 'nocache']].map(([b, k]) => get(b, k));
  lines.push(`| GPT ${c.n_layer}×${c.n_embd}, ${c.n_head} heads, decode at T = 256 | ${cell(nc)} | ${cell(nn)} | ${rcell(nc, nn)} | ${cell(tc)} | ${cell(tn)} | ${rcell(tc, tn)} | ${rcell(nc, tc)} | ${rcell(nn, tn)} |`, '');
  const check = (r) => (r ? `${r.max_abs_diff_vs_torch?.toExponential(1)}${r.id === r.id_ref ? '' : ` (id ${r.id}, PyTorch's ${r.id_ref})`}${failed(r) ? ' ✗ FAILED' : ''}` : '—');
  lines.push(`The step's logits against PyTorch's uncached ones (max |diff| over the ${c.vocab_size} logits; a backend fails above ${GENERATE_LIMIT.toExponential(0)} or on another greedy id, its time marked ✗): ` +
    `core with the cache ${check(nc)}, core without ${check(nn)}; PyTorch's cached step against its uncached one ${g.cache_vs_nocache_max_abs_diff?.toExponential(1) ?? '—'} (required ≤ 1e-5).`, '');
}

// ---- Interpretability ----------------------------------------------------------------------------
// |core - PyTorch| over a case's cells, relative to the largest |PyTorch| cell (SCENARIO.md's tolerance for metrics and estimates)
export const INTERP_LIMIT = { abs: 1e-4, rel: 1e-3 };
const INTERP_BACKENDS = [['core-native', 'core native'], ['core-wasm-relaxed', 'core WASM, relaxed SIMD'], ['core-wasm-simd128', 'core WASM, SIMD128'], ['torch-cpu', 'PyTorch']];

function interpReport(results, lines, notes) {
  const it = results.interp;
  const get = (backend, c) => it.runs.find((r) => r.backend === backend && r.case === c);
  const failed = (r) => r?.max_abs_diff_vs_torch != null && r.max_abs_diff_vs_torch > INTERP_LIMIT.abs + INTERP_LIMIT.rel * r.max_abs_torch;
  const cell = (r) => (r?.median_ms == null ? 'not run' : `${ms(r.median_ms)} [${ms(r.min_ms)}, ${ms(r.max_ms)}]${failed(r) ? ' ✗' : ''}`);
  const ratio = (a, b) => (a?.median_ms != null && b?.median_ms != null ? `${(a.median_ms / b.median_ms).toFixed(a.median_ms / b.median_ms < 0.1 ? 3 : 2)}×` : '—');
  const m = results.machine, c = it.config ?? {};
  const blas = (results.torch?.blas ?? []).map((b) => b.split('/').pop()).join(', ') || 'unknown';
  lines.push(`### Interpretability: activation patching and attribution patching of a small GPT, ms per call, median [min, max] — ${cpuTag(m)}`, '',
    `${m.cpu}, ${m.cores} cores; every backend on 1 thread; ${loadText(m)}. Protocol, the same for every backend: ${protocolText(results.protocol)}. \`${results.command}\`, ${results.seconds.toFixed(0)} s. ` +
    `The model: \`GPT\` (nanoGPT's, V=${c.vocab_size}, ${c.n_layer} layers, ${c.n_head} heads, ${c.n_embd} wide, ${it.params?.toLocaleString('en-US') ?? '?'} parameters, seed 1), B = ${it.B} (row 0 clean, row 1 corrupted), T = ${it.T}; ` +
    `the metric: logit[${it.metric?.token}] − logit[${it.metric?.wrong}] at the last position of the corrupted row. ` +
    `Cases: **heads**, \`patching\` by \`head_position\` over \`${it.steps?.heads?.join(', ')}\`; **positions**, \`patching\` by \`position\` over \`${it.steps?.positions?.join(', ')}\`; ` +
    `**attribution**, \`attribution_patching\` of the heads case's cells; **forward**, the same scenario without either field. ` +
    `The core: one call is a whole run of the scenario as the CLI and the page run it (the Session built from the seed, the traced forward, then the sweep, each cell replaying only what the tape computes after its step, or one backward); ` +
    `native ${results.native?.kernels} kernels (\`attention-interp-bench\`), WASM the page's fast build in Node ${it.node ?? ''} (V8, \`core.run\`). ` +
    `PyTorch ${results.torch?.version} (BLAS: ${blas}; torch threads ${results.torch?.threads}) as a PyTorch user sweeps (TransformerLens's patching helpers): the model built once (not timed), one full forward per cell under \`torch.no_grad()\` with a hook on the patched line; ` +
    `attribution: one forward with the steps' gradients retained and one backward.`, '');
  if (results.core) lines.push(coreText(results.core, false), '');
  const once = (r) => (r?.built_once_median_ms == null ? null : { median_ms: r.built_once_median_ms, min_ms: r.built_once_min_ms, max_ms: r.built_once_max_ms, max_abs_diff_vs_torch: r.max_abs_diff_vs_torch, max_abs_torch: r.max_abs_torch });
  const head = ['case', 'cells', 'core native, a run', 'core native, built once', 'core WASM relaxed SIMD, a run', 'core WASM SIMD128, a run', 'PyTorch + hooks, built once',
    'native built once / PyTorch', 'native run / PyTorch', 'WASM relaxed run / PyTorch'];
  lines.push(`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i ? ' ---: ' : ' --- ')).join('|')}|`);
  for (const k of ['heads', 'positions', 'attribution', 'forward']) {
    const [n, w, w128, t] = INTERP_BACKENDS.map(([b]) => get(b, k));
    lines.push(`| ${k} | ${[n, w, w128, t].find((r) => r?.cells)?.cells ?? '—'} | ${cell(n)} | ${cell(once(n))} | ${cell(w)} | ${cell(w128)} | ${cell(t)} | ${ratio(once(n), t)} | ${ratio(n, t)} | ${ratio(w, t)} |`);
  }
  lines.push('');
  const over = (b, k, f = (r) => r) => (f(get(b, k))?.median_ms != null && f(get(b, 'forward'))?.median_ms != null ? f(get(b, k)).median_ms / f(get(b, 'forward')).median_ms : null);
  const sweepMs = (b) => (get(b, 'heads')?.median_ms != null && get(b, 'forward')?.median_ms != null ? get(b, 'heads').median_ms - get(b, 'forward').median_ms : null);
  const checks = INTERP_BACKENDS.slice(0, 3).map(([b, l]) => `${l}: ${['heads', 'positions', 'attribution'].map((k) => `${k} ${get(b, k)?.max_abs_diff_vs_torch?.toExponential(1) ?? '—'}${failed(get(b, k)) ? ' ✗ FAILED' : ''}`).join(', ')}`);
  const nf = get('core-native', 'forward'), build = nf?.median_ms != null && once(nf) ? nf.median_ms - once(nf).median_ms : null;
  lines.push(`"A run": the scenario from its JSON to its result, the model built from the seed each time (${build == null ? 'its share not measured' : `${ms(build)} ms of the native forward row`}); "built once": the Session kept, as PyTorch's model is, and only \`forward()\` timed.`, '',
    `Cells against PyTorch's (max |core − PyTorch| over the cells; a case fails above ${INTERP_LIMIT.abs} + ${INTERP_LIMIT.rel} × the largest |PyTorch| cell, its time marked ✗): ${checks.join('; ')}. ` +
    `The heads sweep alone (the heads case less the forward case, a run each): native ${sweepMs('core-native')?.toFixed(1) ?? '—'} ms, WASM relaxed ${sweepMs('core-wasm-relaxed')?.toFixed(1) ?? '—'} ms, SIMD128 ${sweepMs('core-wasm-simd128')?.toFixed(1) ?? '—'} ms. ` +
    `Attribution patching in forwards' time (attribution / forward): native built once ${over('core-native', 'attribution', once)?.toFixed(2) ?? '—'}, native run ${over('core-native', 'attribution')?.toFixed(2) ?? '—'}, WASM relaxed run ${over('core-wasm-relaxed', 'attribution')?.toFixed(2) ?? '—'}, PyTorch ${over('torch-cpu', 'attribution')?.toFixed(2) ?? '—'}.`, '');
  const nh = get('core-native', 'heads'), th = get('torch-cpu', 'heads'), wh = ['core-wasm-relaxed', 'core-wasm-simd128'].map((b) => get(b, 'heads'));
  const at = over('core-native', 'attribution', once);
  notes.push({ target: 'interp: native heads sweep ≤ 0.3× PyTorch', met: nh?.median_ms != null && th?.median_ms != null && once(nh).median_ms <= 0.3 * th.median_ms && !failed(nh) },
    { target: 'interp: WASM heads sweep (256 cells) ≤ 50 ms', met: wh.every((r) => r?.median_ms != null && r.median_ms <= 50 && !failed(r)) },
    { target: "interp: attribution patching ≤ 3 forwards' time", met: at != null && at <= 3 });
  lines.push(`Targets: ${notes.filter((n) => n.target.startsWith('interp: ')).map((n) => `${n.target.slice(8)} ${n.met ? 'met' : 'NOT met'}`).join('; ')}.`, '');
}

// ---- docs/bench/<cpu-slug>.md, docs/benchmarks.md and README.md's table -----------------------------------------
const SUMMARY_RE = /<!-- bench-summary (\{.*\}) -->/;
// A marked region of a Markdown file: its begin marker (and newline), its text, its end marker.
const region = (name) => new RegExp(`(<!-- ${name}:begin -->\\n)([\\s\\S]*?)(<!-- ${name}:end -->)`);
const section = (text, name) => region(name).exec(text ?? '')?.[2] ?? null;

// The headline figures of a run, for the index: ratios at 1×512×768 and the training steps'.
function summary(results, notes) {
  const m = results.machine;
  const T512 = { B: 1, T: 512, C: 768, H: 12 };
  const get = (b) => results.runs.find((r) => r.backend === b && r.B === 1 && r.T === 512 && r.C === 768 && r.H === 12);
  const ratio = (a, b) => (get(a)?.median_ms != null && get(b)?.median_ms != null ? get(a).median_ms / get(b).median_ms : null);
  const pct = (b, peaks) => {
    const c = ceilingOf(peaks);
    return get(b)?.median_ms != null && c ? (100 * flops(T512)) / get(b).median_ms / 1e6 / c.gflops : null;
  };
  const tget = (b, c) => results.train?.runs?.find((r) => r.backend === b && r.case === c);
  const tratio = (a, b, c) => (tget(a, c)?.median_ms != null && tget(b, c)?.median_ms != null ? tget(a, c).median_ms / tget(b, c).median_ms : null);
  const run = { date: results.date, command: results.command, commit: results.core?.git_head ?? null, uncommitted: results.core?.uncommitted?.length ?? 0,
    loadavg_before: m.loadavg_before, loadavg_after: m.loadavg_after };
  return {
    cpu: m.cpu, tag: cpuTag(m), cores: m.cores,
    forward: results.shapes ? { ...run, native_torch: ratio('core-native', 'torch-cpu'), native_ort_node: ratio('core-native', 'ort-node'),
      native_peak_pct: pct('core-native', results.peaks?.native), wasm_ort: ratio('core-wasm', 'ort-wasm'), wasm_tfjs: ratio('core-wasm', 'tfjs-wasm'),
      wasm_peak_pct: pct('core-wasm', results.peaks?.wasm), native_peak: ceilingOf(results.peaks?.native), wasm_peak: ceilingOf(results.peaks?.wasm),
      targets_met: notes.filter((n) => !/training/.test(n.target) && n.met).length, targets: notes.filter((n) => !/training/.test(n.target)).length } : null,
    generate: results.generate?.runs?.length ? { ...run, ...Object.fromEntries(['core-native', 'torch-cpu'].flatMap((b) => ['cache', 'nocache'].map((c) => [`${b === 'core-native' ? 'native' : 'torch'}_${c}_ms`, results.generate.runs.find((r) => r.backend === b && r.case === c)?.median_ms ?? null]))) } : null,
    interp: results.interp?.runs?.length ? { ...run, ...Object.fromEntries(['core-native', 'core-wasm-relaxed', 'core-wasm-simd128', 'torch-cpu'].flatMap((bk) => ['heads', 'attribution', 'forward'].map((c) => [`${bk}_${c}_ms`, results.interp.runs.find((r) => r.backend === bk && r.case === c)?.median_ms ?? null]))) } : null,
    train: results.train?.runs?.length ? { ...run, mha_native_torch: tratio('core-native', 'torch-cpu', 'mha'), causal_native_torch: tratio('core-native', 'torch-cpu', 'causal'),
      mha_wasm_tfjs: tratio('core-wasm', 'tfjs-wasm', 'mha'), causal_wasm_tfjs: tratio('core-wasm', 'tfjs-wasm', 'causal') } : null,
  };
}

// Writes docs/bench/<cpu-slug>.md (this run's tables; a --train run keeps the file's forward part,
// a forward-only one its training part), regenerates docs/benchmarks.md's index of docs/bench/
// between <!-- bench:begin --> and <!-- bench:end --> and the run's training and generation tables
// in theirs, and README.md's one table (<!-- bench-headline:begin --> ... end: the latest full run
// of any machine), only those lines; a file without the markers is left alone. Returns
// {file, readme, ...}.
export function publish(results, root) {
  const dir = `${root}docs/bench`;
  mkdirSync(dir, { recursive: true });
  const slug = cpuSlug(results.machine.cpu);
  const file = `${dir}/${slug}.md`;
  const old = existsSync(file) ? readFileSync(file, 'utf8') : null;
  const oldSummary = old && SUMMARY_RE.exec(old) ? JSON.parse(SUMMARY_RE.exec(old)[1]) : {};
  const { forward, train, generate, interp, notes } = report(results);
  const sum = summary(results, notes);
  const merged = { ...sum, forward: sum.forward ?? oldSummary.forward ?? null, train: sum.train ?? oldSummary.train ?? null, generate: sum.generate ?? oldSummary.generate ?? null,
    interp: sum.interp ?? oldSummary.interp ?? null };
  const fwd = results.shapes ? forward : section(old, 'forward') ?? '';
  const trn = results.train?.runs?.length ? train : section(old, 'train') ?? '';
  const gen = results.generate?.runs?.length ? generate : section(old, 'generate') ?? '';
  const itp = results.interp?.runs?.length ? interp : section(old, 'interp') ?? '';
  const text = [`# \`npm run bench\` on ${merged.tag}`, '', `<!-- bench-summary ${JSON.stringify(merged)} -->`, '',
    `Written by \`npm run bench\` (tests/bench/report.mjs): the latest run on this CPU model, ${merged.cores} cores; the next run on the same model overwrites it ` +
    `(the forward part with a forward run, the training part with a training run, the generation part with a generation run, the interpretability part with \`--interp\`). Forward: ${runText(merged.forward)}. Training: ${runText(merged.train)}. Generation: ${runText(merged.generate)}. Interpretability: ${runText(merged.interp)}.`, '',
    '<!-- forward:begin -->', fwd.trimEnd(), '<!-- forward:end -->', '', '<!-- train:begin -->', trn.trimEnd(), '<!-- train:end -->', '',
    '<!-- generate:begin -->', gen.trimEnd(), '<!-- generate:end -->', '', '<!-- interp:begin -->', itp.trimEnd(), '<!-- interp:end -->', ''].join('\n');
  writeFileSync(file, text);
  const edit = (path, changes) => {
    let doc = existsSync(path) ? readFileSync(path, 'utf8') : '';
    const done = changes.map(([name, made, body]) => {
      const re = region(name);
      if (!made || !re.test(doc)) return false;
      doc = doc.replace(re, (_, begin, before, end) => `${begin}${body.trimEnd()}\n${end}`);
      return true;
    });
    if (done.some(Boolean)) writeFileSync(path, doc);
    return done;
  };
  const [index, trainTable, genTable, interpTable] = edit(`${root}docs/benchmarks.md`, [['bench', true, benchIndex(dir)],
    ['bench-train', results.train?.runs?.length, train], ['bench-generate', results.generate?.runs?.length, generate], ['bench-interp', results.interp?.runs?.length, interp]]);
  const [headlineTable] = edit(`${root}README.md`, [['bench-headline', true, headline(dir)]]);
  return { file: file.slice(root.length), readme: headlineTable, benchmarks_index: index, benchmarks_train: trainTable, benchmarks_generate: genTable, benchmarks_interp: interpTable };
}

// README.md's one table: the headline ratios of the latest full run (`npm run bench`, forward,
// training and generation in one run) among docs/bench/*.md, with its machine, date and command.
export function headline(dir) {
  const runs = readdirSync(dir).filter((f) => f.endsWith('.md')).sort().map((f) => {
    const m = SUMMARY_RE.exec(readFileSync(`${dir}/${f}`, 'utf8'));
    return m ? { f, s: JSON.parse(m[1]) } : null;
  }).filter((r) => r && r.s.forward?.command === 'npm run bench' && r.s.train && r.s.generate);
  const latest = runs.sort((a, b) => a.s.forward.date.localeCompare(b.s.forward.date)).at(-1);
  if (!latest) return 'No full `npm run bench` recorded in docs/bench/ yet.';
  const { s, f } = latest, fw = s.forward, tr = s.train, ge = s.generate;
  const x = (v) => (v == null ? '—' : `${v.toFixed(2)}×`);
  const pct = (v) => (v == null ? '' : `, ${v.toFixed(0)} % of the measured peak`);
  return [`${s.tag}, ${s.cores} cores, \`${fw.command}\` on ${fw.date.slice(0, 10)} at commit ${fw.commit} ([docs/bench/${f}](docs/bench/${f})). ` +
    'Time of the core / time of the peer in the same run: below 1 the core is faster.', '',
    '| measured | the core | peer | core / peer |', '| --- | --- | --- | ---: |',
    `| forward, seed 000's MultiHeadAttention 1×512×768, 12 heads | native, 1 thread${pct(fw.native_peak_pct)} | PyTorch 1.13 + OpenBLAS, 1 thread | ${x(fw.native_torch)} |`,
    '| 〃 | 〃 | onnxruntime-node, 1 thread | ' + x(fw.native_ort_node) + ' |',
    `| 〃 | WASM in Chromium${pct(fw.wasm_peak_pct)} | onnxruntime-web (wasm) | ${x(fw.wasm_ort)} |`,
    '| 〃 | 〃 | TensorFlow.js (wasm) | ' + x(fw.wasm_tfjs) + ' |',
    `| one training step, MHA 1×512×768 | native | PyTorch 1.13 | ${x(tr.mha_native_torch)} |`,
    `| one training step, causal MHA | WASM in Chromium | TensorFlow.js (wasm) | ${x(tr.causal_wasm_tfjs)} |`,
    `| one GPT decode step at T = 256, KV cache | native | PyTorch 1.13 | ${x(ge.native_cache_ms / ge.torch_cache_ms)} |`,
    ''].join('\n');
}

const runText = (r) => (r ? `\`${r.command}\`, ${r.date.replace('T', ' ').slice(0, 16)} UTC, commit ${r.commit}${r.uncommitted ? ` plus uncommitted changes to ${r.uncommitted} files under core/ and bindings/` : ''}, load average ${r.loadavg_before.map((v) => v.toFixed(2)).join(' ')} → ${r.loadavg_after.map((v) => v.toFixed(2)).join(' ')}` : 'not run on this model yet');

// docs/benchmarks.md's index: one row per docs/bench/*.md, the headline ratios of each machine side by side.
export function benchIndex(dir) {
  const rows = readdirSync(dir).filter((f) => f.endsWith('.md')).sort().map((f) => {
    const m = SUMMARY_RE.exec(readFileSync(`${dir}/${f}`, 'utf8'));
    return m ? { f, s: JSON.parse(m[1]) } : null;
  }).filter(Boolean);
  const x = (v) => (v == null ? '—' : `${v.toFixed(2)}×`);
  const p = (v) => (v == null ? '—' : `${v.toFixed(0)} %`);
  const load = (r) => (r ? `${r.loadavg_before[0].toFixed(1)} → ${r.loadavg_after[0].toFixed(1)}` : '—');
  const when = (r) => (r ? `${r.date.slice(0, 10)}, \`${r.command.replace(/^npm run bench ?(-- )?/, '') || 'full'}\`` : '—');
  const head = (cols) => [`| ${cols.join(' | ')} |`, `|${cols.map((_, i) => (i < 2 || i === cols.length - 1 ? ' --- ' : ' ---: ')).join('|')}|`];
  const out = ['### Results per machine (docs/bench/: one file per CPU model, the latest run on each, with every table of that run)', '',
    'Forward at 1×512×768, H=12: time of the core / time of the peer in the same run, and GFLOP/s as a % of the multiply-add peak measured on that machine in the same run.', '',
    ...head(['CPU (flags)', 'run, load average (1 min) before → after', 'native / PyTorch + OpenBLAS', 'native / onnxruntime-node', 'native, % of peak', 'WASM / ort-web wasm', 'WASM / tfjs wasm', 'WASM, % of peak', 'measured peak GFLOP/s, native / WASM', 'targets met', 'file'])];
  for (const { f, s } of rows.filter((r) => r.s.forward)) {
    const fw = s.forward;
    out.push(`| ${s.tag} | ${when(fw)}, ${load(fw)} | ${x(fw.native_torch)} | ${x(fw.native_ort_node)} | ${p(fw.native_peak_pct)} | ${x(fw.wasm_ort)} | ${x(fw.wasm_tfjs)} | ${p(fw.wasm_peak_pct)} | ` +
      `${fw.native_peak ? fw.native_peak.gflops.toFixed(1) : '—'} / ${fw.wasm_peak ? fw.wasm_peak.gflops.toFixed(1) : '—'} | ${fw.targets_met} of ${fw.targets} | [${f}](bench/${f}) |`);
  }
  out.push('', 'Training step (zero_grad + forward + loss + backward + AdamW): time of the core / time of the peer in the same run.', '',
    ...head(['CPU (flags)', 'run, load average (1 min) before → after', 'MHA 1×512×768, native / PyTorch + OpenBLAS', 'causal, native / PyTorch + OpenBLAS', 'MHA, WASM / tfjs wasm', 'causal, WASM / tfjs wasm', 'file']));
  for (const { f, s } of rows.filter((r) => r.s.train)) {
    const tr = s.train;
    out.push(`| ${s.tag} | ${when(tr)}, ${load(tr)} | ${x(tr.mha_native_torch)} | ${x(tr.causal_native_torch)} | ${x(tr.mha_wasm_tfjs)} | ${x(tr.causal_wasm_tfjs)} | [${f}](bench/${f}) |`);
  }
  out.push('');
  return out.join('\n');
}
