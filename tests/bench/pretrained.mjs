// `npm run bench -- --pretrained` (run.mjs): a 124M-parameter checkpoint of GPT-2 small's shape
// (12 layers, 12 heads, 768 wide, vocabulary 50,257; one set of random weights, written by PyTorch
// into build/bench/pretrained/ at bench time as the Hub lays a folder out, deleted after the run),
// the same weights in every engine, on 1 thread and on N (the cores, at most 8), each engine at the
// same count as the core, same run:
//   prefill   128 prompt ids into an empty KV cache, the last position's logits (what generation needs)
//   decode    one step at position 128 on the prefill's cache
//   load      the folder (or the exported graph) read into a ready model, once
//   memory    the peak resident memory of the process (the page's renderer or content process)
// on
//   native    the core (attention-pretrained-bench: the native CLI's folder reader; ATTENTION_THREADS),
//             PyTorch 1.13 + OpenBLAS (pretrained_bench.py: Hugging Face's GPT-2 code with its KV
//             cache, torch_refs/hf.py; BENCH_THREADS: torch.set_num_threads and OpenBLAS's),
//             onnxruntime-node (pretrained-ort.mjs, BENCH_THREADS intra-op threads) on
//             torch.onnx.export's graphs of the same module (prefill.onnx, decode.onnx with
//             past_key_values inputs)
//   WASM      in Chromium and Firefox, a fresh browser per backend and thread count (pretrained.html;
//             ?threads=N: cross-origin isolated): the core's full build (on N threads its threaded
//             build, as the page picks where it is isolated) opening the folder from its URL as
//             "Open a model" does (web/model/loader.js), and onnxruntime-web's wasm backend on the
//             same two graphs (numThreads)
// Every logits vector and greedy id is checked against PyTorch's. Writes build/bench/pretrained.json
// and docs/bench/pretrained/<cpu-slug>-family-<f>-model-<m>.md, and prints the table.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { launch } from '../browser/harness.mjs';
import { cpuFileSlug, machineLine } from './report.mjs';
import { serveBench } from './server.mjs';

const ENGINES = ['chromium', 'firefox'];
const CASES = ['prefill', 'decode'];

// The largest peak resident memory (VmHWM) among the browser's page processes: Chromium's renderers,
// Firefox's content processes. Each backend runs in a fresh browser, so this is that page's peak.
function pagePeakBytes(engine) {
  let best = null;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const page = engine === 'chromium' ? /chrom/i.test(cmd) && cmd.includes('--type=renderer') : /firefox/i.test(cmd) && cmd.includes('-contentproc');
      if (!page) continue;
      const kb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (kb && (best == null || kb * 1024 > best)) best = kb * 1024;
    } catch { /* the process ended meanwhile */ }
  }
  return best;
}

async function inPage(engine, backend, protocol, threads) {
  const server = await serveBench();
  const browser = await launch({ engine, fineTimers: true });
  try {
    const page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(server.url.replace('page.html', `pretrained.html${threads > 1 ? `?threads=${threads}` : ''}`));
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    page.setDefaultTimeout(0);
    const r = await page.evaluate(([b, p]) => window.bench[b]('/build/bench/pretrained/', p), [backend, protocol]);
    if (!r.error && (r.threads !== threads || (threads > 1 && !r.crossOriginIsolated)))
      r.error = `the page ran ${r.threads} thread(s), cross-origin isolated: ${r.crossOriginIsolated}; asked for ${threads}`;
    return { ...r, page_peak_rss_bytes: pagePeakBytes(engine), pageErrors: errors };
  } finally {
    await browser.close();
    await server.close();
  }
}

export async function pretrainedRuns({ results, root, out, quick, log, runJson, threads, engines = ENGINES }) {
  const protocol = quick
    ? { warmup: 1, warmupMs: 300, runs: 3, minRunMs: 30, longCallMs: 3000 }
    : { warmup: 2, warmupMs: 1000, runs: 7, minRunMs: 200, longCallMs: 5000 };
  const protoArgs = ['--warmup', String(protocol.warmup), '--warmup-ms', String(protocol.warmupMs), '--runs', String(protocol.runs),
    '--min-run-ms', String(protocol.minRunMs), '--long-call-ms', String(protocol.longCallMs)];
  const dir = `${out}/pretrained`;
  const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' };
  // the full WASM build the page's "Open a model" runs and its threaded build (run.mjs built the native bench)
  execFileSync('bash', ['-c', 'flock build/.lock cmake --build build/wasm --target attention_wasm_fast attention_wasm_fast_relaxed ' +
    'attention_wasm_threads attention_wasm_threads_relaxed -j 2 >/dev/null'],
    { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  log('PyTorch writes the 124M GPT-2-shaped folder and exports its prefill and decode graphs');
  rmSync(dir, { recursive: true, force: true });
  const written = runJson('/usr/bin/python3', ['tests/bench/pretrained_bench.py', '--write', dir]);
  const counts = threads > 1 ? [1, threads] : [1];
  const run = { protocol, threads: counts, folder: { parameters: written.parameters, bytes: written.bytes }, rows: [], info: {} };
  results.pretrained = run;
  const add = (backend, n, r) => {
    for (const c of r.results ?? []) run.rows.push({ backend, threads: n, ...c });
    const { results: _, ...info } = r;
    run.info[`${backend}@${n}`] = info;
    log(`${backend.padEnd(18)} ${n} thread(s): load ${r.load_ms?.toFixed(0) ?? '—'} ms, peak ${((r.peak_rss_bytes ?? r.page_peak_rss_bytes) / 1e6).toFixed(0)} MB`, r.error ?? '',
      (r.results ?? []).map((c) => `${c.case} ${c.median_ms.toFixed(1)} ms (diff ${c.max_abs_diff_vs_ref.toExponential(1)})`).join(', '));
  };
  try {
    for (const n of counts) {
      const count = { ATTENTION_THREADS: String(n), BENCH_THREADS: String(n) };
      add('torch-cpu', n, runJson('/usr/bin/python3', ['tests/bench/pretrained_bench.py', '--time', dir, ...protoArgs], count));
      add('core-native', n, runJson(`${root}build/native/tests/bench/attention-pretrained-bench`, ['--dir', dir, ...protoArgs], count));
      add('ort-node', n, runJson('node', ['tests/bench/pretrained-ort.mjs', '--dir', dir, ...protoArgs], count));
    }
    for (const engine of engines)
      for (const n of counts)
        for (const backend of ['core', 'ort']) add(`${engine}:${backend === 'core' ? 'core-wasm' : 'ort-wasm'}`, n, await inPage(engine, backend, protocol, n));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  results.machine.loadavg_after = loadavg();
  writeFileSync(`${out}/pretrained.json`, `${JSON.stringify(results, null, 1)}\n`);
  const md = pretrainedTable(results);
  mkdirSync(`${root}docs/bench/pretrained`, { recursive: true });
  const file = `docs/bench/pretrained/${cpuFileSlug(results.machine)}.md`;
  writeFileSync(`${root}${file}`, `${md}\n`);
  console.log(md);
  log(`wrote build/bench/pretrained.json and ${file}`);
}

const NAMES = { 'core-native': 'core, native', 'torch-cpu': 'PyTorch + OpenBLAS', 'ort-node': 'onnxruntime-node',
  'chromium:core-wasm': 'core, WASM (Chromium)', 'chromium:ort-wasm': 'onnxruntime-web wasm (Chromium)',
  'firefox:core-wasm': 'core, WASM (Firefox)', 'firefox:ort-wasm': 'onnxruntime-web wasm (Firefox)' };

export function pretrainedTable(results) {
  const p = results.pretrained, m = results.machine;
  const counts = p.threads ?? [1];
  const N = counts.at(-1);
  const info = (b, n) => p.info?.[`${b}@${n}`];
  const ms = (b, n, c) => p.rows.find((r) => r.backend === b && r.threads === n && r.case === c)?.median_ms ?? null;
  const f = (v, d = 1) => (v == null ? '—' : v.toFixed(d));
  const x = (a, b) => (a == null || b == null ? '—' : `${(a / b).toFixed(2)}×`);
  // onnxruntime: the prefill graph's session (one 500 MB graph, as the core's one folder; generation needs the decode graph's too)
  const load = (b, n) => info(b, n)?.load_ms ?? p.rows.find((r) => r.backend === b && r.threads === n && r.case === 'prefill')?.session_create_ms ?? null;
  const peak = (b, n) => info(b, n)?.peak_rss_bytes ?? info(b, n)?.page_peak_rss_bytes ?? null;
  const diff = (b, n) => Math.max(...p.rows.filter((r) => r.backend === b && r.threads === n).map((r) => r.max_abs_diff_vs_ref));
  const f32 = p.folder.bytes['model.safetensors'];
  const backends = Object.keys(NAMES).filter((b) => counts.some((n) => info(b, n)));
  const agent = (b) => info(b, 1)?.userAgent?.match(/(Chrome|Firefox)\/[\d.]+/)?.[0];
  const isolated = ['chromium', 'firefox'].filter((e) => info(`${e}:core-wasm`, N)?.crossOriginIsolated && info(`${e}:ort-wasm`, N)?.crossOriginIsolated);
  const lines = [`# A 124M checkpoint: \`${results.command}\` on ${m.cpu}`, '',
    `${machineLine(m)}; ${results.date.slice(0, 10)}; load average ${m.loadavg_before[0].toFixed(2)} before, ` +
    `${m.loadavg_after[0].toFixed(2)} after; core ${results.core?.git_head ?? '?'}; ${[agent('chromium:core-wasm'), agent('firefox:core-wasm')].filter(Boolean).join(', ')}. ` +
    `GPT-2 small's shape (${p.folder.parameters.toLocaleString('en')} parameters, model.safetensors ${(f32 / 1e6).toFixed(1)} MB float32), random weights written by PyTorch; ` +
    `every engine on ${counts.join(' and on ')} thread${N > 1 ? 's' : ''}` +
    (N > 1 ? ` (the core: ATTENTION_THREADS, in the page its threaded build; PyTorch: torch.set_num_threads and OpenBLAS's threads, OMP_WAIT_POLICY=${info('torch-cpu', N)?.omp_wait_policy ?? 'unset'}; onnxruntime: intra-op threads, ` +
      `onnxruntime-web's numThreads; the ${N}-thread pages cross-origin isolated: ${isolated.length ? isolated.map((e) => e[0].toUpperCase() + e.slice(1)).join(', ') : 'no'})` : '') + '. ' +
    'Prefill: 128 ids into an empty KV cache, the last position\'s logits; decode: one step at position 128 on that cache ' +
    '(onnxruntime: torch.onnx.export\'s graph with past_key_values inputs, so a cached step too). Load: the folder read into a ready model ' +
    '(the core in the page: download from localhost, the header checks, streaming into the module; onnxruntime: the prefill graph\'s session created from its file, the decode graph\'s taking as long again). ' +
    'Peak memory: the process\'s resident peak (the page\'s renderer or content process). Median ms; written by tests/bench/pretrained.mjs.', '',
    '| backend | threads | prefill 128 (ms) | decode at 128 (ms) | load (ms) | peak memory (MB) | / weights | logits max abs diff vs PyTorch |',
    '|---|---:|---:|---:|---:|---:|---:|---:|'];
  for (const b of backends)
    for (const n of counts.filter((c) => info(b, c)))
      lines.push(`| ${NAMES[b]} | ${n} | ${f(ms(b, n, 'prefill'))} | ${f(ms(b, n, 'decode'), 2)} | ${f(load(b, n), 0)} | ${f(peak(b, n) && peak(b, n) / 1e6, 0)} | ` +
        `${peak(b, n) ? `${(peak(b, n) / f32).toFixed(2)}×` : '—'} | ${info(b, n)?.error ? info(b, n).error.split('\n')[0] : diff(b, n).toExponential(1)} |`);
  if (N > 1) {
    lines.push('', `${N} threads over 1 (the speed-up):`, '', `| | ${backends.map((b) => NAMES[b]).join(' | ')} |`, `|---|${backends.map(() => '---:').join('|')}|`);
    for (const c of CASES) lines.push(`| ${c} | ${backends.map((b) => x(ms(b, 1, c), ms(b, N, c))).join(' | ')} |`);
  }
  const rd = (n) => info('core-native', n)?.weights_read;
  if (rd(1)) {
    const read = (n) => `${f(rd(n).median_ms, 2)} ms on ${n} thread${n > 1 ? 's' : ''} (${(rd(n).bytes / rd(n).median_ms / 1e6).toFixed(1)} GB/s)`;
    lines.push('', `Memory read, for reference: every parameter read once natively (${(rd(1).bytes / 1e6).toFixed(1)} MB; each thread a part of every tensor in 8 streams side by side, SSE2 sums): ` +
      `${counts.filter(rd).map(read).join(', ')}. Not a bound: a step under 1× below read its weights faster than this loop does. A decode step reads all of them for one token; its time over that read at the same thread count:`);
    lines.push('', `| threads | ${backends.map((b) => NAMES[b]).join(' | ')} |`, `|---:|${backends.map(() => '---:').join('|')}|`);
    for (const n of counts.filter(rd)) lines.push(`| ${n} | ${backends.map((b) => x(ms(b, n, 'decode'), rd(n).median_ms)).join(' | ')} |`);
  }
  lines.push('', 'The core\'s time over the peer\'s at the same thread count (below 1: the core is faster; targets: WASM prefill ≤ 0.8×, WASM decode ≤ 0.5× onnxruntime-web):', '',
    '| | threads | prefill | decode | load |', '|---|---:|---:|---:|---:|');
  const pairs = [['core-native', 'torch-cpu'], ['core-native', 'ort-node'], ['chromium:core-wasm', 'chromium:ort-wasm'], ['firefox:core-wasm', 'firefox:ort-wasm']];
  for (const [a, b] of pairs)
    for (const n of counts.filter((c) => info(a, c) && info(b, c)))
      lines.push(`| ${NAMES[a]} / ${NAMES[b]} | ${n} | ${x(ms(a, n, 'prefill'), ms(b, n, 'prefill'))} | ${x(ms(a, n, 'decode'), ms(b, n, 'decode'))} | ${x(load(a, n), load(b, n))} |`);
  return lines.join('\n');
}
