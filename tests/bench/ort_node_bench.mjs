// onnxruntime-node side of `npm run bench` (run.mjs runs it after the native core): the native peer
// users would deploy. The ONNX model torch_bench.py --onnx exported for onnxruntime-web
// (mha_C<C>_H<H>.onnx: x -> output = mha(x, x, x), PyTorch's weights for seed 0), on the CPU
// execution provider with one intra-op and one inter-op thread, sequential execution, all graph
// optimisations (as the page gives onnxruntime-web). x is PyTorch's (x_B..._T..._C..._H....f32,
// torch_bench.py), the output is checked against PyTorch's (ref_...f32), and each call is timed by
// the bench's protocol (timed.mjs, the page's own). Prints one JSON object.
//   node tests/bench/ort_node_bench.mjs --shapes "1,16,768,12;64,10,512,8" --ref-dir build/bench
//        [--warmup 2] [--warmup-ms 0] [--runs 7] [--min-run-ms 100] [--long-call-ms 5000]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { timed } from './timed.mjs';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const shapes = opt('--shapes', '1,512,768,12').split(';').filter(Boolean).map((s) => {
  const [B, T, C, H] = s.split(',').map(Number);
  return { B, T, C, H };
});
const dir = opt('--ref-dir', 'build/bench');
const protocol = { warmup: Number(opt('--warmup', 2)), warmupMs: Number(opt('--warmup-ms', 0)), runs: Number(opt('--runs', 7)),
  minRunMs: Number(opt('--min-run-ms', 100)), longCallMs: Number(opt('--long-call-ms', 5000)) };

const floats = (path) => {
  const b = readFileSync(path);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
};
const maxAbsDiff = (a, ref) => {
  if (a.length !== ref.length) return null;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - ref[i]));
  return m;
};

// BENCH_THREADS=N (run.mjs --threads): N intra-op threads instead of one.
const threads = Number(process.env.BENCH_THREADS ?? 1);
const out = { results: [] };
let ort;
try {
  ort = require('onnxruntime-node');
  out.version = ort.env.versions?.node ?? null;
  out.execution_provider = 'cpu';
  out.intra_op_threads = threads;
  out.inter_op_threads = 1;
} catch (e) {
  out.error = `onnxruntime-node does not load here: ${String(e?.message ?? e).split('\n')[0]}`;
}
const sessions = new Map();
for (const s of ort ? shapes : []) {
  const { B, T, C, H } = s;
  try {
    const key = `${C},${H}`;
    if (!sessions.has(key)) {
      sessions.set(key, await ort.InferenceSession.create(`${dir}/mha_C${C}_H${H}.onnx`, {
        executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' }));
    }
    const session = sessions.get(key);
    const feeds = { x: new ort.Tensor('float32', floats(`${dir}/x_B${B}_T${T}_C${C}_H${H}.f32`), [B, T, C]) };
    const { first, stats } = await timed(async () => (await session.run(feeds)).output.data, protocol);
    out.results.push({ ...s, ...stats, max_abs_diff_vs_torch: maxAbsDiff(first, floats(`${dir}/ref_B${B}_T${T}_C${C}_H${H}.f32`)) });
  } catch (e) {
    out.results.push({ ...s, error: String(e?.message ?? e).slice(0, 500) });
  }
}
console.log(JSON.stringify(out));
