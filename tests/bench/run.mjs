// npm run bench [-- --quick] [-- --train] [-- --generate] [-- --interp] [-- --no-core-build]: seed 000's
// MultiHeadAttention forward (Q = K = V = x, no mask), one training step of two models on every
// backend and one GPT decode step with and without the KV cache, same machine, same run, written
// to build/bench/results.json and printed as Markdown tables
// (report.mjs), with the scaling chart (chart.mjs).
//   native core (attention-bench, native_bench.cpp)  vs PyTorch 1.13 CPU (torch_bench.py), 1 thread, OpenBLAS,
//     and onnxruntime-node's CPU execution provider (ort_node_bench.mjs), 1 thread, on torch_bench.py's ONNX export
//   WASM core vs onnxruntime-web wasm vs tfjs-backend-wasm, in headless Chromium (page.js), and again
//     in headless Firefox (Debian's firefox-esr: SpiderMonkey beside V8) at the WASM table's sizes
//   WebGPU core (GpuAttention) vs onnxruntime-web webgpu vs tfjs-backend-webgpu, same adapter
// Training (TRAIN_CASES): zero_grad + forward + loss + backward + AdamW, native core
// (attention-train-bench, train_bench.cpp) vs PyTorch, the page's core (core.trainer) vs tfjs-wasm.
// Generation: one decode step of nanoGPT's GPT at T = 256 (4 layers, 256 wide) with the KV cache and
// without, native core (attention-generate-bench, generate_bench.cpp) vs PyTorch (torch_bench.py
// --generate: nanoGPT's generate step, and a minimal KV cache over the same blocks).
// --quick: the table's sizes (T = 16, 128, 512, 2048: issue 19's targets), WebGPU at T <= 128 only, and
// fewer runs (about 5 minutes); the full run covers T = 16 ... 4096 and
// writes the chart to docs/bench-scaling.svg for the README. --train: the training table only;
// --generate: the generation table only (both: those two).
// --interp: the interpretability table only (never part of the full run): activation patching of a
// small GPT's head × position cells and residual positions, and attribution patching, the core's
// sweep (native: attention-interp-bench, interp_bench.cpp; WASM: interp_wasm_bench.mjs in Node)
// against PyTorch running the same sweep with a hook, a full forward per cell (torch_bench.py --interp).
// --threads [N]: the threads table only (tests/bench/threads.mjs): the forward at T = 16 ... 4096 on
// 1 thread and on N (default: the cores, at most 8) for the core and every CPU peer, natively
// (ATTENTION_THREADS, PyTorch's and OpenBLAS's threads, onnxruntime-node's intra-op threads) and in
// a cross-origin-isolated Chromium page (the core's threaded build, onnxruntime-web's numThreads,
// tfjs-wasm's setThreadsCount), written to docs/bench/threads/<cpu-slug>-family-<f>-model-<m>.md.
// --pretrained: the 124M-checkpoint table only (tests/bench/pretrained.mjs): GPT-2 small's shape with
// random weights, prefill of 128 tokens and one decode step at 128 on the KV cache, load time and peak
// memory, the core against PyTorch and onnxruntime-node natively and onnxruntime-web in Chromium and
// Firefox, on torch.onnx.export's graphs of the same weights, on 1 thread and on the cores (at most
// 8; the N-thread pages cross-origin isolated); docs/bench/pretrained/<cpu-slug>-family-<f>-model-<m>.md.
// --no-core-build: no scripts/build.sh and no cmake configure: the bench targets are built in
// build/native and build/wasm as they stand (a machine where someone else owns those builds).
// Measured ceilings (peak.hpp): the native bench times AVX2 / AVX-512 FMA microkernels before and
// after its shapes, the page times the WASM SIMD128 one before and after the forward runs; the
// GFLOP/s table divides by the best of each. The run's tables also go to docs/bench/<cpu-slug>.md
// (one file per CPU model, the latest run on it), docs/benchmarks.md's index of those files and
// README.md's table (report.mjs).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { launch } from '../browser/harness.mjs';
import { scalingChart } from './chart.mjs';
import { flops, publish, report } from './report.mjs';
import { serveBench } from './server.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUT = `${ROOT}build/bench`;
const quick = process.argv.includes('--quick');
const trainFlag = process.argv.includes('--train');
const generateFlag = process.argv.includes('--generate');
const doInterp = process.argv.includes('--interp');
const doThreads = process.argv.includes('--threads');
const doPretrained = process.argv.includes('--pretrained');
const threadsArg = Number(process.argv[process.argv.indexOf('--threads') + 1]);
// the tables of this run: all three, or the ones named (--train, --generate); --interp or --threads alone
const alone = doInterp || doThreads || doPretrained;
const doForward = !trainFlag && !generateFlag && !alone;
const doTrain = (trainFlag || !generateFlag) && !alone;
const doGenerate = (generateFlag || !trainFlag) && !alone;
const GENERATE_CASES = ['cache', 'nocache'];
const noCoreBuild = process.argv.includes('--no-core-build');
const TRAIN_CASES = ['causal', 'mha'];  // torch_bench.py's TRAIN_CASES
const TRAIN_BACKENDS = ['core-wasm', 'tfjs-wasm'];
const started = Date.now();
const log = (...a) => console.error(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s]`, ...a);

// One protocol for every backend (timed() in page.js, torch_bench.py and native_bench.cpp): two
// first calls, the second sizing a run (short calls repeated until a run lasts minRunMs); warm-up
// of `warmup` runs and at least warmupMs; `runs` runs kept. A call over longCallMs gets 1 warm-up
// run + 3 kept; a second call over maxCallMs ends that backend's sizes there (the emulated GPU),
// and so does a predicted one (the last size's time scaled by the flop count) over twice that.
const protocol = quick
  ? { warmup: 1, warmupMs: 500, runs: 3, minRunMs: 30, longCallMs: 2000, maxCallMs: 12000 }
  : { warmup: 2, warmupMs: 2000, runs: 7, minRunMs: 150, longCallMs: 5000, maxCallMs: 60000 };
const MAIN_T = [16, 128, 512, 2048];
const SCALING_T = quick ? MAIN_T : [16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
// The emulated GPU (SwiftShader) needs seconds per call: --quick measures it at T <= 128 only.
const gpuShape = (s) => !quick || (s.B === 1 && s.T <= 128);
const SEED_SHAPE = { B: 64, T: 10, C: 512, H: 8 };
const shapes = [...SCALING_T.map((T) => ({ B: 1, T, C: 768, H: 12 })), SEED_SHAPE];
const shapeArg = shapes.map((s) => `${s.B},${s.T},${s.C},${s.H}`).join(';');
const BROWSER_BACKENDS = ['core-wasm', 'core-wasm-simd128', 'ort-wasm', 'tfjs-wasm', 'core-webgpu', 'ort-webgpu', 'tfjs-webgpu'];
// Firefox: the WASM table's backends at its sizes (its WebGPU, on Mesa's lavapipe, is another CPU
// emulation of a GPU: not timed).
const FIREFOX_BACKENDS = ['core-wasm', 'ort-wasm', 'tfjs-wasm'];
const MAIN_SHAPES = [...MAIN_T.map((T) => ({ B: 1, T, C: 768, H: 12 })), SEED_SHAPE];

// A /proc/cpuinfo number, or null where the field is absent (Number(null) would say 0).
const numberOrNull = (v) => (v == null ? null : Number(v));

function machine() {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const field = (name) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(info)?.[1] ?? null;
  let lscpuMax = null;
  try {
    lscpuMax = Number(/CPU max MHz:\s*([\d.]+)/.exec(execFileSync('lscpu', { encoding: 'utf8' }))?.[1]) || null;
  } catch { /* lscpu absent */ }
  const mhz = lscpuMax ?? Number(field('cpu MHz'));
  const flags = field('flags') ?? '';
  return {
    cpu: field('model name'), family: numberOrNull(field('cpu family')), model: numberOrNull(field('model')), cores: cpus().length, mhz, mhz_source: lscpuMax ? 'lscpu CPU max MHz' : '/proc/cpuinfo cpu MHz',
    avx2: /\bavx2\b/.test(flags), fma: /\bfma\b/.test(flags), avx2_fma: /\bavx2\b/.test(flags) && /\bfma\b/.test(flags), avx512f: /\bavx512f\b/.test(flags),
    loadavg_before: loadavg(),
  };
}

function build() {
  log(noCoreBuild ? 'building the bench targets (--no-core-build)' : 'building the core (scripts/build.sh) and the bench targets');
  const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' };
  const sh = (cmd) => execFileSync('bash', ['-c', cmd], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (!noCoreBuild) {
    sh('bash scripts/build.sh all');
    // scripts/build.sh's lock: one cmake at a time on these trees
    sh('flock build/.lock cmake -S . -B build/native >/dev/null');
    sh('flock build/.lock emcmake cmake -S . -B build/wasm >/dev/null');
  }
  const native = [(doForward || doThreads) && 'attention-bench', (doTrain || doThreads) && 'attention-train-bench', (doGenerate || doThreads) && 'attention-generate-bench', doInterp && 'attention-interp-bench', doPretrained && 'attention-pretrained-bench'].filter(Boolean).join(' ');
  sh(`flock build/.lock cmake --build build/native --target ${native} -j 2 >/dev/null`);
  // the page imports the bench build of the core (forward) and loads training mode's (the fast build, from build.sh)
  if (doForward || doTrain || doThreads) sh('flock build/.lock cmake --build build/wasm --target attention_bench_wasm attention_bench_wasm_relaxed -j 2 >/dev/null');
  if (doThreads) sh('flock build/.lock cmake --build build/wasm --target attention_bench_wasm_threads attention_bench_wasm_threads_relaxed -j 2 >/dev/null');
}

// Which core was measured: the checkout's commit, the uncommitted changes under core/ and
// bindings/ (others may be editing them), and when each build of it was made.
function coreState() {
  const git = (args) => { try { return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trimEnd(); } catch { return null; } };
  const built = (f) => { try { return statSync(`${ROOT}${f}`).mtime.toISOString(); } catch { return null; } };
  return { git_head: git(['rev-parse', '--short', 'HEAD']), uncommitted: (git(['status', '--porcelain', '--', 'core', 'bindings']) ?? '').split('\n').filter(Boolean),
    native_built: built('build/native/libattention.a'), wasm_built: built('build/wasm/attention.wasm') };
}

// The native benches run one thread, as every peer here (the core's pool takes ATTENTION_THREADS,
// else every core: base/threads.hpp); ATTENTION_THREADS=2 npm run bench times two.
function runJson(cmd, args, extraEnv = {}) {
  const env = { ...process.env, ATTENTION_THREADS: process.env.ATTENTION_THREADS ?? '1', ...extraEnv };
  const r = spawnSync(cmd, args, { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const protoArgs = ['--warmup', String(protocol.warmup), '--warmup-ms', String(protocol.warmupMs), '--runs', String(protocol.runs), '--min-run-ms', String(protocol.minRunMs),
  '--long-call-ms', String(protocol.longCallMs)];

// The bench page (page.html) open in `engine`, set up: its page and pageerror messages.
async function benchPage(engine, query = '') {
  const server = await serveBench();
  const browser = await launch({ engine, fineTimers: true });
  const page = await browser.context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  const close = async () => { await browser.close(); await server.close(); };
  try {
    await page.goto(`${server.url}${query}`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    return { page, pageErrors, setup: await page.evaluate(() => window.bench.setup()), close };
  } catch (e) {
    await close();
    throw e;
  }
}

async function browserRuns(results) {
  const { page, pageErrors, setup, close } = await benchPage('chromium');
  try {
    results.browser = setup;
    log('browser:', results.browser.coreKernels, '| adapter', JSON.stringify(results.browser.adapter), results.browser.gpuError ?? '');
    log('WASM peak (before):', peakText(results.browser.peak_before));
    if (doForward) {
      await forwardRuns(page, results, shapes, BROWSER_BACKENDS);
      results.browser.peak_after = await page.evaluate(() => window.bench.peak());
      log('WASM peak (after):', peakText(results.browser.peak_after));
      // the GEMM tiles the core's timing picked (on its first products) in this engine
      results.browser.coreTiles = await page.evaluate(() => window.bench.detail());
      log('core tiles:', results.browser.coreTiles);
    }
    for (const name of doTrain ? TRAIN_CASES : []) {
      for (const backend of TRAIN_BACKENDS) {
        const r = await page.evaluate(([b, c, p]) => window.bench.train(b, c, p), [backend, name, protocol]);
        results.train.runs.push({ backend, case: name, ...r });
        logTrain(backend, name, r);
      }
    }
    results.browser.pageErrors = pageErrors;
  } finally {
    await close();
  }
}

// The WASM table's Firefox columns: the same page, protocol and checks in Debian's firefox-esr
// (SpiderMonkey instead of V8), at the table's sizes; runs are named firefox:<backend>.
async function firefoxRuns(results) {
  const { page, pageErrors, setup, close } = await benchPage('firefox');
  try {
    results.firefox = setup;
    log('firefox:', setup.userAgent, '|', setup.coreKernels, '| WASM SIMD', setup.wasmSimd, '| adapter', JSON.stringify(setup.adapter), setup.gpuError ?? '');
    log('Firefox WASM peak (before):', peakText(setup.peak_before));
    await forwardRuns(page, results, MAIN_SHAPES, FIREFOX_BACKENDS, 'firefox:');
    results.firefox.peak_after = await page.evaluate(() => window.bench.peak());
    log('Firefox WASM peak (after):', peakText(results.firefox.peak_after));
    results.firefox.coreTiles = await page.evaluate(() => window.bench.detail());
    log('Firefox core tiles:', results.firefox.coreTiles);
    results.firefox.pageErrors = pageErrors;
  } finally {
    await close();
  }
}

// A WASM backend that took over RETIME_FACTOR times as long in Chromium as the same code in Firefox
// at some size is timed again there, in a fresh Chromium page. The engines run these modules
// within 0.7-1.4x of each other (the same SIMD128 peak); far past that, the first page's figure is
// that page's state, not the backend's speed: once (Intel Xeon, 2026-11-26) ort-web wasm ran
// 3.5-4x slower than in Firefox at every size in one page (T=128: 70.2 ms, Firefox 19.8) and at
// 17.7 ms in the next. The core's runs get the same check. The report lists every re-timed run
// with both figures; the tables use the fresh page's.
const RETIME_FACTOR = 2;
async function retimeOutliers(results) {
  const find = (backend, s) => results.runs.find((r) => r.backend === backend && r.B === s.B && r.T === s.T && r.C === s.C && r.H === s.H);
  const outliers = [];
  for (const s of MAIN_SHAPES)
    for (const backend of FIREFOX_BACKENDS) {
      const first = find(backend, s), firefox = find(`firefox:${backend}`, s);
      if (first?.median_ms != null && firefox?.median_ms != null && first.median_ms > RETIME_FACTOR * firefox.median_ms)
        outliers.push({ backend, s, first, firefox });
    }
  results.retime_factor = RETIME_FACTOR;
  if (!outliers.length) return;
  log(`chromium: ${outliers.length} run(s) over ${RETIME_FACTOR}x their Firefox time, timed again in a fresh page:`,
    outliers.map((o) => `${o.backend} T=${o.s.T} B=${o.s.B}`).join(', '));
  const { page, close } = await benchPage('chromium');
  try {
    for (const { backend, s, first, firefox } of outliers) {
      const r = await page.evaluate(([b, shape, p]) => window.bench.run(b, shape, p), [backend, s, protocol]);
      results.retimed.push({ backend, ...s, first_page_ms: first.median_ms, firefox_ms: firefox.median_ms, retimed_ms: r.median_ms ?? null,
        retimed_error: r.error ?? r.skipped ?? null });
      results.runs[results.runs.indexOf(first)] = { backend, ...s, ...r, first_page_ms: first.median_ms };
      log(`${backend.padEnd(12)} T=${String(s.T).padStart(4)} B=${s.B} C=${s.C}: first page ${first.median_ms.toFixed(2)} ms, Firefox ${firefox.median_ms.toFixed(2)}, fresh page`,
        r.median_ms != null ? `${r.median_ms.toFixed(2)} ms [${r.min_ms.toFixed(2)}, ${r.max_ms.toFixed(2)}] diff ${r.max_abs_diff_vs_torch?.toExponential(1)}` : (r.error ?? r.skipped));
    }
  } finally {
    await close();
  }
}

const peakText = (ps) => (ps ?? []).map((p) => `${p.kind} ${p.gflops.toFixed(1)} GFLOP/s (${p.accumulators} accumulators)`).join(', ');

// The best of each kind of ceiling over the measurements made (before and after): {kind: {gflops, accumulators, lanes}}.
function bestPeaks(...lists) {
  const best = {};
  for (const p of lists.flat().filter(Boolean)) if (!best[p.kind] || p.gflops > best[p.kind].gflops) best[p.kind] = { gflops: p.gflops, accumulators: p.accumulators, lanes: p.lanes };
  return best;
}

function logTrain(backend, name, r) {
  log(`train ${name.padEnd(6)} ${backend.padEnd(12)}:`, r.median_ms != null
    ? `${r.median_ms.toFixed(2)} ms [${r.min_ms.toFixed(2)}, ${r.max_ms.toFixed(2)}] loss rel diff ${r.loss_rel_diff?.toExponential(1)}, grads rel ${r.grad_max_rel_diff?.toExponential(1)} (${r.grad_worst_param})`
    : r.error);
}

// The forward table's browser backends, shape by shape (skipping sizes the emulated GPU cannot
// finish); each run is recorded as `${prefix}${backend}`.
async function forwardRuns(page, results, shapeList, backends, prefix = '') {
  const skippedFrom = {};  // backend@C,H -> why larger T are not run
  const last = {};         // backend@C,H -> {T, ms} of the last size measured
  for (const shape of shapeList) {
    for (const backend of backends) {
      const key = `${backend}@${shape.C},${shape.H}`;
      const predicted = last[key] && shape.B === 1 ? (last[key].ms * flops(shape)) / flops({ ...shape, T: last[key].T }) : 0;
      let r;
      if (skippedFrom[key]) r = { skipped: skippedFrom[key] };
      else if (backend.endsWith('webgpu') && !gpuShape(shape)) r = { skipped: 'not run with --quick (WebGPU at T <= 128 only)' };
      else if (predicted > 2 * protocol.maxCallMs) {
        r = { skipped: `not run: ${(predicted / 1000).toFixed(0)} s per call predicted from ${(last[key].ms / 1000).toFixed(1)} s at T=${last[key].T} (time ∝ flop), over twice the bench's ${protocol.maxCallMs / 1000} s limit per call` };
        skippedFrom[key] = r.skipped;
      } else r = await page.evaluate(([b, s, p]) => window.bench.run(b, s, p), [backend, shape, protocol]);
      if (r.median_ms != null && shape.B === 1) last[key] = { T: shape.T, ms: r.median_ms };
      if (r.second_call_ms > protocol.maxCallMs && !skippedFrom[key]) skippedFrom[key] = `not run: at T=${shape.T} ${r.skipped}`;
      results.runs.push({ backend: `${prefix}${backend}`, ...shape, ...r });
      log(`${`${prefix}${backend}`.padEnd(12)} T=${String(shape.T).padStart(4)} B=${shape.B} C=${shape.C}:`,
        r.median_ms != null ? `${r.median_ms.toFixed(2)} ms [${r.min_ms.toFixed(2)}, ${r.max_ms.toFixed(2)}] diff ${r.max_abs_diff_vs_torch?.toExponential(1)}` : (r.error ?? r.skipped));
    }
  }
}

mkdirSync(OUT, { recursive: true });
const flags = process.argv.slice(2);
const results = { command: `npm run bench${flags.length ? ` -- ${flags.join(' ')}` : ''}`, quick, train_only: trainFlag && !generateFlag,
  tables: { forward: doForward, train: doTrain, generate: doGenerate, interp: doInterp }, date: new Date().toISOString(), protocol,
  machine: machine(), shapes: doForward ? { main_T: MAIN_T, scaling_T: SCALING_T, seed: SEED_SHAPE } : null, runs: [], retimed: [],
  train: { cases: doTrain ? TRAIN_CASES : [], runs: [] }, generate: doGenerate ? { cases: GENERATE_CASES, runs: [] } : null,
  interp: doInterp ? { runs: [] } : null };
log(`load average before: ${results.machine.loadavg_before.map((v) => v.toFixed(2)).join(' ')}`);
build();
results.core = coreState();
if (doThreads) {
  const { threadsRuns } = await import('./threads.mjs');
  await threadsRuns({ results, root: ROOT, out: OUT, quick, log, runJson, benchPage,
    threads: Number.isInteger(threadsArg) && threadsArg > 1 ? threadsArg : Math.min(8, cpus().length) });
  process.exit(0);
}
if (doPretrained) {
  const { pretrainedRuns } = await import('./pretrained.mjs');
  await pretrainedRuns({ results, root: ROOT, out: OUT, quick, log, runJson, threads: Math.min(8, cpus().length) });
  process.exit(0);
}

log(`PyTorch 1.13 CPU, 1 thread: ${[doForward && 'the forward (and the ONNX export)', doTrain && 'the training steps', doGenerate && 'the decode steps', doInterp && 'the patching sweeps'].filter(Boolean).join(', ')}`);
const torch = runJson('/usr/bin/python3', ['tests/bench/torch_bench.py', ...(doForward ? ['--shapes', shapeArg, '--onnx'] : []),
  ...(doTrain ? ['--train', TRAIN_CASES.join()] : []), ...(doGenerate ? ['--generate'] : []), ...(doInterp ? ['--interp'] : []), '--out', OUT, ...protoArgs]);
results.torch = { version: torch.torch, threads: torch.threads, blas: torch.blas, openblas_num_threads: torch.openblas_num_threads, onnx_models: torch.onnx_models };
log('PyTorch BLAS:', torch.blas.join(', '));
for (const r of torch.results) results.runs.push({ backend: 'torch-cpu', ...r });
for (const r of torch.train) {
  results.train.runs.push({ backend: 'torch-cpu', ...r });
  log(`train ${r.case.padEnd(6)} torch-cpu   : ${r.median_ms.toFixed(2)} ms [${r.min_ms.toFixed(2)}, ${r.max_ms.toFixed(2)}]`);
}

if (torch.generate) {
  const { runs, ...info } = torch.generate;
  Object.assign(results.generate, info);
  for (const r of runs) {
    results.generate.runs.push({ backend: 'torch-cpu', ...r });
    log(`decode ${r.case.padEnd(7)} torch-cpu   : ${r.median_ms.toFixed(2)} ms [${r.min_ms.toFixed(2)}, ${r.max_ms.toFixed(2)}]`);
  }
}

if (torch.interp) {
  const { runs, ...info } = torch.interp;
  Object.assign(results.interp, info);
  for (const r of runs) results.interp.runs.push({ backend: 'torch-cpu', ...r });
}
const logInterp = (r) => log(`interp ${r.case.padEnd(11)} ${r.backend.padEnd(17)}: ${r.median_ms.toFixed(2)} ms [${r.min_ms.toFixed(2)}, ${r.max_ms.toFixed(2)}]` +
  (r.max_abs_diff_vs_torch != null ? ` cells diff ${r.max_abs_diff_vs_torch.toExponential(1)}` : ''));
results.interp?.runs.forEach(logInterp);

log('native core, 1 thread');
if (doForward) {
  const native = runJson(`${ROOT}build/native/tests/bench/attention-bench`, ['--shapes', shapeArg, '--ref-dir', OUT, '--clock', '--peak', ...protoArgs]);
  results.native = { kernels: native.kernels, peak_before: native.peak_before, peak_after: native.peak_after };
  log('native peak:', peakText(native.peak_before), '| after:', peakText(native.peak_after));
  if (native.measured_ghz) Object.assign(results.machine, { measured_ghz: native.measured_ghz });
  for (const r of native.results) results.runs.push({ backend: 'core-native', ...r });

  log('onnxruntime-node, CPU execution provider, 1 thread');
  const ortNode = runJson('node', ['tests/bench/ort_node_bench.mjs', '--shapes', shapeArg, '--ref-dir', OUT, ...protoArgs]);
  results.ort_node = { version: ortNode.version ?? null, execution_provider: ortNode.execution_provider ?? null,
    intra_op_threads: ortNode.intra_op_threads ?? null, inter_op_threads: ortNode.inter_op_threads ?? null, error: ortNode.error ?? null };
  if (ortNode.error) log(ortNode.error);
  for (const r of ortNode.results) {
    results.runs.push({ backend: 'ort-node', ...r });
    log(`ort-node     T=${String(r.T).padStart(4)} B=${r.B} C=${r.C}:`, r.median_ms != null
      ? `${r.median_ms.toFixed(2)} ms [${r.min_ms.toFixed(2)}, ${r.max_ms.toFixed(2)}] diff ${r.max_abs_diff_vs_torch?.toExponential(1)}` : r.error);
  }
}
if (doTrain) {
  const nativeTrain = runJson(`${ROOT}build/native/tests/bench/attention-train-bench`, ['--cases', TRAIN_CASES.join(), '--ref-dir', OUT, '--phases', ...protoArgs]);
  results.native = { ...results.native, kernels: nativeTrain.kernels };
  for (const r of nativeTrain.results) {
    results.train.runs.push({ backend: 'core-native', ...r });
    logTrain('core-native', r.case, r);
  }
}
if (doGenerate) {
  const nativeGen = runJson(`${ROOT}build/native/tests/bench/attention-generate-bench`, ['--cases', GENERATE_CASES.join(), '--ref-dir', OUT, ...protoArgs]);
  results.native = { ...results.native, kernels: nativeGen.kernels };
  for (const r of nativeGen.results) {
    results.generate.runs.push({ backend: 'core-native', ...r });
    log(`decode ${r.case.padEnd(7)} core-native : ${r.median_ms.toFixed(2)} ms [${r.min_ms.toFixed(2)}, ${r.max_ms.toFixed(2)}] logits diff ${r.max_abs_diff_vs_torch.toExponential(1)}`);
  }
}

if (doInterp) {
  const nativeInterp = runJson(`${ROOT}build/native/tests/bench/attention-interp-bench`, ['--ref-dir', OUT, ...protoArgs]);
  results.native = { ...results.native, kernels: nativeInterp.kernels };
  for (const r of nativeInterp.results) results.interp.runs.push({ backend: 'core-native', ...r });
  log('WASM core in Node (the fast build, relaxed SIMD and SIMD128), 1 thread');
  const wasmInterp = runJson('node', ['tests/bench/interp_wasm_bench.mjs', '--ref-dir', OUT, ...protoArgs]);
  results.interp.node = wasmInterp.node;
  results.interp.runs.push(...wasmInterp.results);
  results.interp.runs.filter((r) => r.backend.startsWith('core')).forEach(logInterp);
}

if (doForward || doTrain) {
  log(`browser: ${doForward ? 'WASM and WebGPU backends, then the WASM training steps' : 'WASM training steps'}`);
  await browserRuns(results);
  if (doForward) {
    log('firefox: the WASM backends at the WASM table\'s sizes');
    await firefoxRuns(results);
    await retimeOutliers(results);
  }
}

results.machine.loadavg_after = loadavg();
results.peaks = { native: bestPeaks(results.native?.peak_before, results.native?.peak_after),
  wasm: bestPeaks(results.browser?.peak_before, results.browser?.peak_after),
  firefox_wasm: bestPeaks(results.firefox?.peak_before, results.firefox?.peak_after) };
results.seconds = (Date.now() - started) / 1000;
if (doForward) {
  const chartPath = quick ? `${OUT}/scaling.svg` : `${ROOT}docs/bench-scaling.svg`;
  writeFileSync(chartPath, scalingChart(results));
  results.chart = chartPath.slice(ROOT.length);
}
const { markdown, notes } = report(results);
results.notes = notes;
writeFileSync(`${OUT}/results.json`, `${JSON.stringify(results, null, 1)}\n`);
writeFileSync(`${OUT}/RESULTS.md`, `${markdown}\n`);
const published = publish(results, ROOT);
console.log(markdown);
const wrote = [[published.benchmarks_index, "docs/benchmarks.md's index of docs/bench/"], [published.benchmarks_train, 'its training table'],
  [published.benchmarks_generate, 'its generation table'], [published.benchmarks_interp, 'its interpretability table'], [published.readme, "README.md's table"]].filter(([done]) => done).map(([, what]) => `, ${what}`).join('');
log(`wrote build/bench/results.json, build/bench/RESULTS.md, ${published.file}${wrote}${results.chart ? ` and ${results.chart}` : ''} in ${results.seconds.toFixed(0)} s`);
log(`load average before: ${results.machine.loadavg_before.map((v) => v.toFixed(2)).join(' ')}, after: ${results.machine.loadavg_after.map((v) => v.toFixed(2)).join(' ')}`);
