// `npm run bench -- --pretrained` (run.mjs): a 124M-parameter checkpoint of GPT-2 small's shape
// (12 layers, 12 heads, 768 wide, vocabulary 50,257; one set of random weights, written by PyTorch
// into build/bench/pretrained/ at bench time as the Hub lays a folder out, deleted after the run),
// the same weights in every engine, one thread each, same run:
//   prefill   128 prompt ids into an empty KV cache, the last position's logits (what generation needs)
//   decode    one step at position 128 on the prefill's cache
//   load      the folder (or the exported graph) read into a ready model, once
//   memory    the peak resident memory of the process (the page's renderer or content process)
// on
//   native    the core (attention-pretrained-bench: the native CLI's folder reader), PyTorch 1.13 +
//             OpenBLAS (pretrained_bench.py: Hugging Face's GPT-2 code with its KV cache,
//             torch_refs/hf.py), onnxruntime-node (pretrained-ort.mjs) on torch.onnx.export's
//             graphs of the same module (prefill.onnx, decode.onnx with past_key_values inputs)
//   WASM      in Chromium and Firefox, a fresh browser per backend (pretrained.html): the core's full
//             build opening the folder from its URL as "Open a model" does (web/model/loader.js),
//             and onnxruntime-web's wasm backend on the same two graphs
// Every logits vector and greedy id is checked against PyTorch's. Writes build/bench/pretrained.json
// and docs/bench/pretrained/<cpu-slug>.md, and prints the table.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { launch } from '../browser/harness.mjs';
import { cpuSlug, machineLine } from './report.mjs';
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

async function inPage(engine, backend, protocol) {
  const server = await serveBench();
  const browser = await launch({ engine, fineTimers: true });
  try {
    const page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(server.url.replace('page.html', 'pretrained.html'));
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    page.setDefaultTimeout(0);
    const r = await page.evaluate(([b, p]) => window.bench[b]('/build/bench/pretrained/', p), [backend, protocol]);
    return { ...r, page_peak_rss_bytes: pagePeakBytes(engine), pageErrors: errors };
  } finally {
    await browser.close();
    await server.close();
  }
}

export async function pretrainedRuns({ results, root, out, quick, log, runJson, engines = ENGINES }) {
  const protocol = quick
    ? { warmup: 1, warmupMs: 300, runs: 3, minRunMs: 30, longCallMs: 3000 }
    : { warmup: 2, warmupMs: 1000, runs: 7, minRunMs: 200, longCallMs: 5000 };
  const protoArgs = ['--warmup', String(protocol.warmup), '--warmup-ms', String(protocol.warmupMs), '--runs', String(protocol.runs),
    '--min-run-ms', String(protocol.minRunMs), '--long-call-ms', String(protocol.longCallMs)];
  const dir = `${out}/pretrained`;
  const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' };
  // the full WASM build the page's "Open a model" runs (run.mjs built the native bench)
  execFileSync('bash', ['-c', 'flock build/.lock cmake --build build/wasm --target attention_wasm_fast attention_wasm_fast_relaxed -j 2 >/dev/null'],
    { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  log('PyTorch writes the 124M GPT-2-shaped folder and exports its prefill and decode graphs');
  rmSync(dir, { recursive: true, force: true });
  const written = runJson('/usr/bin/python3', ['tests/bench/pretrained_bench.py', '--write', dir]);
  const run = { protocol, folder: { parameters: written.parameters, bytes: written.bytes }, rows: [] };
  results.pretrained = run;
  const add = (backend, r) => {
    for (const c of r.results ?? []) run.rows.push({ backend, ...c });
    const { results: _, ...info } = r;
    run[backend] = info;
    log(`${backend.padEnd(16)} load ${r.load_ms?.toFixed(0) ?? '—'} ms, peak ${((r.peak_rss_bytes ?? r.page_peak_rss_bytes) / 1e6).toFixed(0)} MB`, r.error ?? '',
      (r.results ?? []).map((c) => `${c.case} ${c.median_ms.toFixed(1)} ms (diff ${c.max_abs_diff_vs_ref.toExponential(1)})`).join(', '));
  };
  try {
    add('torch-cpu', runJson('/usr/bin/python3', ['tests/bench/pretrained_bench.py', '--time', dir, ...protoArgs]));
    add('core-native', runJson(`${root}build/native/tests/bench/attention-pretrained-bench`, ['--dir', dir, ...protoArgs]));
    add('ort-node', runJson('node', ['tests/bench/pretrained-ort.mjs', '--dir', dir, ...protoArgs]));
    for (const engine of engines)
      for (const backend of ['core', 'ort']) add(`${engine}:${backend === 'core' ? 'core-wasm' : 'ort-wasm'}`, await inPage(engine, backend, protocol));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  results.machine.loadavg_after = loadavg();
  writeFileSync(`${out}/pretrained.json`, `${JSON.stringify(results, null, 1)}\n`);
  const md = pretrainedTable(results);
  mkdirSync(`${root}docs/bench/pretrained`, { recursive: true });
  const file = `docs/bench/pretrained/${cpuSlug(results.machine.cpu)}.md`;
  writeFileSync(`${root}${file}`, `${md}\n`);
  console.log(md);
  log(`wrote build/bench/pretrained.json and ${file}`);
}

const NAMES = { 'core-native': 'core, native', 'torch-cpu': 'PyTorch + OpenBLAS', 'ort-node': 'onnxruntime-node',
  'chromium:core-wasm': 'core, WASM (Chromium)', 'chromium:ort-wasm': 'onnxruntime-web wasm (Chromium)',
  'firefox:core-wasm': 'core, WASM (Firefox)', 'firefox:ort-wasm': 'onnxruntime-web wasm (Firefox)' };

export function pretrainedTable(results) {
  const p = results.pretrained, m = results.machine;
  const ms = (b, c) => p.rows.find((r) => r.backend === b && r.case === c)?.median_ms ?? null;
  const f = (v, d = 1) => (v == null ? '—' : v.toFixed(d));
  const x = (a, b) => (a == null || b == null ? '—' : `${(a / b).toFixed(2)}×`);
  // onnxruntime: the prefill graph's session (one 500 MB graph, as the core's one folder; generation needs the decode graph's too)
  const load = (b) => p[b]?.load_ms ?? p.rows.find((r) => r.backend === b && r.case === 'prefill')?.session_create_ms ?? null;
  const peak = (b) => p[b]?.peak_rss_bytes ?? p[b]?.page_peak_rss_bytes ?? null;
  const diff = (b) => Math.max(...p.rows.filter((r) => r.backend === b).map((r) => r.max_abs_diff_vs_ref));
  const f32 = p.folder.bytes['model.safetensors'];
  const backends = Object.keys(NAMES).filter((b) => p[b]);
  const agent = (b) => p[b]?.userAgent?.match(/(Chrome|Firefox)\/[\d.]+/)?.[0];
  const lines = [`# A 124M checkpoint: \`${results.command}\` on ${m.cpu}`, '',
    `${machineLine(m)}; ${results.date.slice(0, 10)}; load average ${m.loadavg_before[0].toFixed(2)} before, ` +
    `${m.loadavg_after[0].toFixed(2)} after; core ${results.core?.git_head ?? '?'}; ${[agent('chromium:core-wasm'), agent('firefox:core-wasm')].filter(Boolean).join(', ')}. ` +
    `GPT-2 small's shape (${p.folder.parameters.toLocaleString('en')} parameters, model.safetensors ${(f32 / 1e6).toFixed(1)} MB float32), random weights written by PyTorch; ` +
    'one thread everywhere. Prefill: 128 ids into an empty KV cache, the last position\'s logits; decode: one step at position 128 on that cache ' +
    '(onnxruntime: torch.onnx.export\'s graph with past_key_values inputs, so a cached step too). Load: the folder read into a ready model ' +
    '(the core in the page: download from localhost, the header checks, streaming into the module; onnxruntime: the prefill graph\'s session created from its file, the decode graph\'s taking as long again). ' +
    'Peak memory: the process\'s resident peak (the page\'s renderer or content process). Median ms; written by tests/bench/pretrained.mjs.', '',
    '| backend | prefill 128 (ms) | decode at 128 (ms) | load (ms) | peak memory (MB) | / weights | logits max abs diff vs PyTorch |', '|---|---:|---:|---:|---:|---:|---:|'];
  for (const b of backends)
    lines.push(`| ${NAMES[b]} | ${f(ms(b, 'prefill'))} | ${f(ms(b, 'decode'), 2)} | ${f(load(b), 0)} | ${f(peak(b) && peak(b) / 1e6, 0)} | ` +
      `${peak(b) ? `${(peak(b) / f32).toFixed(2)}×` : '—'} | ${p[b]?.error ? p[b].error.split('\n')[0] : diff(b).toExponential(1)} |`);
  const rd = p['core-native']?.weights_read;
  if (rd) {
    lines.push('', `Memory-read ceiling: every parameter read once natively (${(rd.bytes / 1e6).toFixed(1)} MB, 8 streams side by side, SSE2 sums, one core): ${f(rd.median_ms, 2)} ms, ` +
      `${(rd.bytes / rd.median_ms / 1e6).toFixed(1)} GB/s. A decode step reads all of them for one token; its time over that read:`);
    lines.push('', `| ${backends.map((b) => NAMES[b]).join(' | ')} |`, `|${backends.map(() => '---:').join('|')}|`,
      `| ${backends.map((b) => x(ms(b, 'decode'), rd.median_ms)).join(' | ')} |`);
  }
  lines.push('', 'The core\'s time over the peer\'s (below 1: the core is faster; targets: WASM prefill ≤ 0.8×, WASM decode ≤ 0.5× onnxruntime-web):', '',
    '| | prefill | decode | load |', '|---|---:|---:|---:|');
  const pairs = [['core-native', 'torch-cpu'], ['core-native', 'ort-node'], ['chromium:core-wasm', 'chromium:ort-wasm'], ['firefox:core-wasm', 'firefox:ort-wasm']];
  for (const [a, b] of pairs.filter(([a, b]) => p[a] && p[b]))
    lines.push(`| ${NAMES[a]} / ${NAMES[b]} | ${x(ms(a, 'prefill'), ms(b, 'prefill'))} | ${x(ms(a, 'decode'), ms(b, 'decode'))} | ${x(load(a), load(b))} |`);
  return lines.join('\n');
}
