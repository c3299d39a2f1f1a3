// `npm run bench -- --threads [N]` (run.mjs): seed 000's MultiHeadAttention forward (1 x T x 768,
// 12 heads) on 1 thread and on N, the core beside every CPU peer at the same count, same run:
//   native   core (attention-bench, ATTENTION_THREADS), PyTorch + OpenBLAS (torch_bench.py,
//            BENCH_THREADS: torch.set_num_threads and OpenBLAS's threads, OMP_WAIT_POLICY=PASSIVE), onnxruntime-node
//            (ort_node_bench.mjs, BENCH_THREADS intra-op threads)
//   browser  a cross-origin-isolated Chromium page (page.html?threads=N): the core's threaded bench
//            build (its pool of Web Workers), onnxruntime-web wasm (numThreads), tfjs-wasm
//            (setThreadsCount; T <= 512: it needs seconds per call beyond)
// and natively one training step of the main table's two cases (attention-train-bench against
// torch_bench.py --train) and one GPT decode step at T = 256 with and without the KV cache
// (attention-generate-bench against torch_bench.py --generate), at 1 and N threads.
// Every output is checked against PyTorch's, as in the main tables. Writes build/bench/threads.json
// and docs/bench/threads/<cpu-slug>-family-<f>-model-<m>.md (this CPU model's latest run), and prints the tables.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { cpuFileSlug, machineLine } from './report.mjs';

const TS = [16, 128, 512, 2048, 4096];
const shape = (T) => ({ B: 1, T, C: 768, H: 12 });
const NATIVE = ['core-native', 'torch-cpu', 'ort-node'];
const BROWSER = ['core-wasm', 'ort-wasm', 'tfjs-wasm'];
const TFJS_MAX_T = 512;
const TRAIN_CASES = ['causal', 'mha'], DECODE_CASES = ['cache', 'nocache'];
const NAMES = { 'core-native': 'core, native', 'torch-cpu': 'PyTorch + OpenBLAS', 'ort-node': 'onnxruntime-node', 'core-wasm': 'core, WASM',
  'ort-wasm': 'onnxruntime-web wasm', 'tfjs-wasm': 'tfjs wasm' };

export async function threadsRuns({ results, root, out, quick, log, runJson, benchPage, threads }) {
  const protocol = quick
    ? { warmup: 1, warmupMs: 300, runs: 3, minRunMs: 30, longCallMs: 1500, maxCallMs: 12000 }
    : { warmup: 2, warmupMs: 1000, runs: 5, minRunMs: 100, longCallMs: 3000, maxCallMs: 30000 };
  const protoArgs = ['--warmup', String(protocol.warmup), '--warmup-ms', String(protocol.warmupMs), '--runs', String(protocol.runs),
    '--min-run-ms', String(protocol.minRunMs), '--long-call-ms', String(protocol.longCallMs)];
  const shapeArg = TS.map((T) => `1,${T},768,12`).join(';');
  const runs = [], steps = [];  // the forwards; the training and decode steps
  const record = (backend, n, r) => {
    runs.push({ backend, threads: n, ...r });
    log(`${backend.padEnd(11)} ${n} thread${n > 1 ? 's' : ' '} T=${String(r.T).padStart(4)}:`, r.median_ms != null
      ? `${r.median_ms.toFixed(2)} ms [${r.min_ms.toFixed(2)}, ${r.max_ms.toFixed(2)}] diff ${r.max_abs_diff_vs_torch?.toExponential(1)}` : (r.error ?? r.skipped));
  };
  const info = { threads, protocol, torch: {}, ort_node: {}, browser: {} };
  for (const n of [1, threads]) {
    log(`PyTorch 1.13 CPU, ${n} thread(s)${n === 1 ? ' (and the ONNX export)' : ''}`);
    const torch = runJson('/usr/bin/python3', ['tests/bench/torch_bench.py', '--shapes', shapeArg, ...(n === 1 ? ['--onnx'] : []),
      '--train', TRAIN_CASES.join(), '--generate', '--out', out, ...protoArgs], { BENCH_THREADS: String(n) });
    info.torch[n] = { version: torch.torch, threads: torch.threads, blas: torch.blas, openblas_num_threads: torch.openblas_num_threads,
      omp_wait_policy: torch.omp_wait_policy ?? null };
    torch.results.forEach((r) => record('torch-cpu', n, r));
    torch.train.forEach((r) => steps.push({ backend: 'torch-cpu', threads: n, kind: 'train', ...r }));
    torch.generate.runs.forEach((r) => steps.push({ backend: 'torch-cpu', threads: n, kind: 'decode', ...r }));
    log(`native core, ${n} thread(s)`);
    const native = runJson(`${root}build/native/tests/bench/attention-bench`, ['--shapes', shapeArg, '--ref-dir', out, ...protoArgs], { ATTENTION_THREADS: String(n) });
    info.kernels = native.kernels;
    native.results.forEach((r) => record('core-native', n, r));
    const train = runJson(`${root}build/native/tests/bench/attention-train-bench`, ['--cases', TRAIN_CASES.join(), '--ref-dir', out, ...protoArgs], { ATTENTION_THREADS: String(n) });
    train.results.forEach((r) => steps.push({ backend: 'core-native', threads: n, kind: 'train', ...r }));
    const decode = runJson(`${root}build/native/tests/bench/attention-generate-bench`, ['--cases', DECODE_CASES.join(), '--ref-dir', out, ...protoArgs], { ATTENTION_THREADS: String(n) });
    decode.results.forEach((r) => steps.push({ backend: 'core-native', threads: n, kind: 'decode', ...r }));
    for (const r of steps.filter((s) => s.threads === n)) log(`${r.kind} ${r.case.padEnd(7)} ${r.backend.padEnd(11)} ${n} thread(s): ${r.median_ms.toFixed(2)} ms`);
    log(`onnxruntime-node, ${n} intra-op thread(s)`);
    const ort = runJson('node', ['tests/bench/ort_node_bench.mjs', '--shapes', shapeArg, '--ref-dir', out, ...protoArgs], { BENCH_THREADS: String(n) });
    info.ort_node[n] = { version: ort.version ?? null, intra_op_threads: ort.intra_op_threads ?? null, error: ort.error ?? null };
    ort.results.forEach((r) => record('ort-node', n, r));
  }
  for (const n of [1, threads]) {
    log(`Chromium, cross-origin isolated, ${n} thread(s)`);
    const { page, pageErrors, setup, close } = await benchPage('chromium', `?threads=${n}`);
    try {
      info.browser[n] = { userAgent: setup.userAgent, crossOriginIsolated: setup.crossOriginIsolated, threads: setup.threads, coreKernels: setup.coreKernels,
        ort: setup.ort, tfjs: setup.tfjs };
      if (!setup.crossOriginIsolated || setup.threads !== n) throw new Error(`the bench page is not isolated or runs ${setup.threads} threads, not ${n}`);
      for (const T of TS)
        for (const backend of BROWSER) {
          const r = backend === 'tfjs-wasm' && T > TFJS_MAX_T
            ? { skipped: `not run beyond T = ${TFJS_MAX_T} (seconds per call)` }
            : await page.evaluate(([b, s, p]) => window.bench.run(b, s, p), [backend, shape(T), protocol]);
          // an engine that says how many threads it ran (tfjs-wasm) is kept only at the column's count
          record(backend, n, { ...shape(T), ...(r.ran_threads != null && r.ran_threads !== n ? { error: `ran on ${r.ran_threads} thread(s), not ${n}` } : r) });
        }
      // the GEMM register tiles the core's timing picked in this page (kernels_wasm.cpp), and their rates then
      info.browser[n].coreTiles = await page.evaluate(() => window.bench.detail());
      log(`core tiles, ${n} thread(s): ${info.browser[n].coreTiles}`);
      info.browser[n].pageErrors = pageErrors;
    } finally {
      await close();
    }
  }
  const bad = runs.filter((r) => r.max_abs_diff_vs_torch != null && r.max_abs_diff_vs_torch > 1e-4);
  if (bad.length) log(`warning: ${bad.length} run(s) differ from PyTorch by more than 1e-4:`, bad.map((r) => `${r.backend}@${r.threads} T=${r.T}`).join(', '));
  results.threads = { ...info, runs, steps };
  results.machine.loadavg_after = loadavg();
  results.seconds = (Date.now() - Date.parse(results.date)) / 1000;
  const markdown = threadsTable(results);
  writeFileSync(`${out}/threads.json`, `${JSON.stringify(results, null, 1)}\n`);
  mkdirSync(`${root}docs/bench/threads`, { recursive: true });
  const file = `docs/bench/threads/${cpuFileSlug(results.machine)}.md`;
  writeFileSync(`${root}${file}`, `${markdown}\n`);
  console.log(markdown);
  log(`wrote build/bench/threads.json and ${file} in ${results.seconds.toFixed(0)} s`);
}

// The run as Markdown: milliseconds per backend at 1 and N threads with the speed-up, then the
// core's time over each peer's at the same thread count.
export function threadsTable(results) {
  const { threads: N, runs, browser } = results.threads;
  const m = results.machine;
  const ms = (backend, n, T) => runs.find((r) => r.backend === backend && r.threads === n && r.T === T)?.median_ms ?? null;
  const f = (v) => (v == null ? '—' : v < 10 ? v.toFixed(2) : v.toFixed(1));
  const x = (a, b) => (a == null || b == null ? '—' : `${(a / b).toFixed(2)}×`);
  const lines = [`# Threads: \`${results.command}\` on ${m.cpu}`, '',
    `${machineLine(m)}; ${results.date.slice(0, 10)}; load average ${m.loadavg_before[0].toFixed(2)} before, ` +
    `${m.loadavg_after[0].toFixed(2)} after; core ${results.core?.git_head ?? '?'}. Seed 000's MultiHeadAttention forward, 1 × T × 768, 12 heads, median ms. ` +
    `Browser: ${browser[1]?.userAgent?.match(/(Headless)?Chrome\/[\d.]+/)?.[0] ?? 'Chromium'}, cross-origin isolated: ${browser[N]?.crossOriginIsolated ? 'yes' : 'no'} ` +
    `(core kernels ${browser[N]?.coreKernels ?? '?'}). PyTorch on ${N} threads: OMP_WAIT_POLICY=${results.threads.torch?.[N]?.omp_wait_policy ?? 'unset'}` +
    ` (torch_bench.py). tfjs-wasm's thread count is the one it reports running (its pool is capped at navigator.hardwareConcurrency / 2; page.js). Written by tests/bench/threads.mjs.` +
    [1, N].map((n) => (browser[n]?.coreTiles ? ` The core's WASM tiles as timed in the ${n}-thread page: ${browser[n].coreTiles}.` : '')).join(''), '',
    `| T | ${[...NATIVE, ...BROWSER].map((b) => `${NAMES[b]}: 1 / ${N} threads (speed-up)`).join(' | ')} |`,
    `|---:|${[...NATIVE, ...BROWSER].map(() => '---:').join('|')}|`];
  for (const T of TS)
    lines.push(`| ${T} | ${[...NATIVE, ...BROWSER].map((b) => `${f(ms(b, 1, T))} / ${f(ms(b, N, T))} (${x(ms(b, 1, T), ms(b, N, T))})`).join(' | ')} |`);
  lines.push('', 'The core\'s time over the peer\'s, at the same thread count (below 1: the core is faster):', '',
    `| T | threads | native / PyTorch | native / onnxruntime-node | WASM / onnxruntime-web | WASM / tfjs |`, '|---:|---:|---:|---:|---:|---:|');
  for (const T of TS)
    for (const n of [1, N])
      lines.push(`| ${T} | ${n} | ${x(ms('core-native', n, T), ms('torch-cpu', n, T))} | ${x(ms('core-native', n, T), ms('ort-node', n, T))} | ` +
        `${x(ms('core-wasm', n, T), ms('ort-wasm', n, T))} | ${x(ms('core-wasm', n, T), ms('tfjs-wasm', n, T))} |`);
  const { steps = [] } = results.threads;
  const stepMs = (backend, n, kind, c) => steps.find((r) => r.backend === backend && r.threads === n && r.kind === kind && r.case === c)?.median_ms ?? null;
  const what = { 'train:causal': 'one training step, causal MHA (main table\'s case)', 'train:mha': 'one training step, MHA 1×512×768',
    'decode:cache': 'one GPT decode step at T = 256, KV cache', 'decode:nocache': 'one GPT decode step at T = 256, no cache' };
  lines.push('', 'Natively, a training step (zero_grad + forward + loss + backward + AdamW) and a decode step, median ms:', '',
    `| measured | core: 1 / ${N} threads (speed-up) | PyTorch: 1 / ${N} threads (speed-up) | core / PyTorch at 1 | at ${N} |`, '|---|---:|---:|---:|---:|');
  for (const key of Object.keys(what)) {
    const [kind, c] = key.split(':');
    const [c1, cN, t1, tN] = [stepMs('core-native', 1, kind, c), stepMs('core-native', N, kind, c), stepMs('torch-cpu', 1, kind, c), stepMs('torch-cpu', N, kind, c)];
    lines.push(`| ${what[key]} | ${f(c1)} / ${f(cN)} (${x(c1, cN)}) | ${f(t1)} / ${f(tN)} (${x(t1, tN)}) | ${x(c1, t1)} | ${x(cN, tN)} |`);
  }
  return lines.join('\n');
}
