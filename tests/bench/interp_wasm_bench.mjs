// WASM side of the interpretability table of `npm run bench -- --interp` (run.mjs runs it after the
// native core): the scenarios torch_bench.py --interp wrote (build/bench/interp.json), each a
// `core.run(scenario)` of the bindings in Node (V8, one thread) as the page's worker calls it:
// construction from the seed, the traced forward and the sweep (or one backward). The fast build
// of the page's training mode, with relaxed SIMD (as Chromium runs it) and with plain SIMD128
// (every engine). Cells are checked against PyTorch's. Prints one JSON object.
//   node tests/bench/interp_wasm_bench.mjs --ref-dir build/bench [--warmup 2] [--warmup-ms 0] [--runs 7] [--min-run-ms 100]
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { timed } from './timed.mjs';

setFlagsFromString('--experimental-wasm-relaxed-simd');  // Node 20's V8 has it behind a flag; Chromium ships it
const { loadAttention } = await import('../../bindings/attention.mjs');
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const dir = opt('--ref-dir', 'build/bench');
const protocol = { warmup: Number(opt('--warmup', 2)), warmupMs: Number(opt('--warmup-ms', 0)), runs: Number(opt('--runs', 7)),
  minRunMs: Number(opt('--min-run-ms', 100)), longCallMs: Number(opt('--long-call-ms', 5000)) };
const ref = JSON.parse(readFileSync(`${dir}/interp.json`, 'utf8'));
const out = { node: process.version, results: [] };
for (const simd of ['relaxed', 'simd128']) {
  const core = await loadAttention({ fast: true, simd });
  for (const [name, c] of Object.entries(ref)) {
    const sc = name === 'forward' ? c : c.scenario;
    const row = { backend: `core-wasm-${simd}`, case: name, kernels: core.kernels() };
    if (name !== 'forward') {
      const r = core.run(sc);
      const key = sc.attribution_patching ? 'attribution_patching' : 'patching';
      const got = r[key].cells, want = c.expected.cells;
      if (got.length !== want.length) throw new Error(`${name}: ${got.length} cells, PyTorch has ${want.length}`);
      const v = key === 'patching' ? 'metric' : 'estimate';
      row.cells = got.length;
      row.max_abs_diff_vs_torch = Math.max(...got.map((g, i) => Math.abs(g[v] - want[i][v])));
      row.max_abs_torch = Math.max(...want.map((w) => Math.abs(w[v])));
    }
    Object.assign(row, (await timed(() => core.run(sc), protocol)).stats);
    out.results.push(row);
  }
}
console.log(JSON.stringify(out));
