// onnxruntime's side of `npm run bench -- --pretrained` (tests/bench/pretrained.mjs): the two graphs
// pretrained_bench.py --write exported from the GPT-2-small-shaped module with torch.onnx.export
// (prefill.onnx: 128 ids -> the last position's logits and every layer's present keys and values;
// decode.onnx: one id and the past keys and values of 128 positions -> logits and present of 129),
// each in its own session (created, timed, released: one 500 MB graph held at a time), `threads`
// intra-op threads (1 unless asked; BENCH_THREADS=N for the script) and one inter-op thread,
// sequential execution, all graph optimisations. The session's
// creation is the load time; each run's logits and greedy id are checked against PyTorch's.
// ortPretrained(ort, ...) is shared by onnxruntime-web's wasm backend in the bench page
// (pretrained-page.js) and onnxruntime-node; run as a script, the latter:
//   node tests/bench/pretrained-ort.mjs --dir build/bench/pretrained [--warmup 2] [--warmup-ms 0]
//        [--runs 7] [--min-run-ms 100] [--long-call-ms 5000]
// prints one JSON object (with the process's peak resident memory).
import { timed } from './timed.mjs';

const LAYERS = 12;
// Raw float32 bytes as a Float32Array (copied: a Buffer's bytes may start at any offset).
export const f32 = (b) => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

// Logits against PyTorch's: their greedy id must be PyTorch's; the largest difference.
export function check(logits, want, idRef) {
  if (logits.length !== want.length) throw new Error(`${logits.length} logits, PyTorch has ${want.length}`);
  let d = 0, id = 0;
  for (let i = 0; i < want.length; i++) {
    d = Math.max(d, Math.abs(logits[i] - want[i]));
    if (logits[i] > logits[id]) id = i;
  }
  if (id !== idRef) throw new Error(`greedy id ${id} is not PyTorch's ${idRef}`);
  return { id, id_ref: idRef, max_abs_diff_vs_ref: d };
}

// read(name) -> Promise<Uint8Array> of the folder's small files; locate(name): a graph's path or URL
// (onnxruntime reads it: the session's creation includes reading the file); ep: the execution
// provider; threads: its intra-op threads (onnxruntime-web's are env.wasm.numThreads, set by the
// page); now(): milliseconds.
export async function ortPretrained(ort, { read, locate, ep = 'wasm', threads = 1, protocol, now = () => performance.now() }) {
  const ref = JSON.parse(new TextDecoder().decode(await read('ids.json')));
  const past = f32(await read('past.f32'));
  const per = past.length / (2 * LAYERS);
  const pastFeeds = {};
  for (let i = 0; i < 2 * LAYERS; i++)
    pastFeeds[`past_key_values.${i >> 1}.${i & 1 ? 'value' : 'key'}`] = new ort.Tensor('float32', past.subarray(i * per, (i + 1) * per), [1, 12, per / (12 * 64), 64]);
  const ids = (list) => new ort.Tensor('int64', BigInt64Array.from(list, BigInt), [1, list.length]);
  const cases = [
    { case: 'prefill', graph: 'prefill.onnx', feeds: { input_ids: ids(ref.ids) }, logits: 'prefill_logits.f32', idRef: ref.next_id },
    { case: 'decode', graph: 'decode.onnx', feeds: { input_ids: ids([ref.next_id]), ...pastFeeds }, logits: 'decode_logits.f32', idRef: ref.step_id },
  ];
  const results = [];
  for (const c of cases) {
    const t0 = now();
    const session = await ort.InferenceSession.create(locate(c.graph), { executionProviders: [ep], intraOpNumThreads: threads, interOpNumThreads: 1,
      executionMode: 'sequential', graphOptimizationLevel: 'all' });
    const createMs = now() - t0;
    try {
      const { first, stats } = await timed(async () => (await session.run(c.feeds)).logits.data, protocol);
      results.push({ case: c.case, session_create_ms: createMs,
        ...check(first, f32(await read(c.logits)), c.idRef), ...stats });
    } finally {
      await session.release();
    }
  }
  return results;
}

if (typeof process !== 'undefined' && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href) {
  const { readFile } = await import('node:fs/promises');
  const { createRequire } = await import('node:module');
  const args = process.argv.slice(2);
  const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
  const dir = opt('--dir', 'build/bench/pretrained');
  const protocol = { warmup: Number(opt('--warmup', 2)), warmupMs: Number(opt('--warmup-ms', 0)), runs: Number(opt('--runs', 7)),
    minRunMs: Number(opt('--min-run-ms', 100)), longCallMs: Number(opt('--long-call-ms', 5000)) };
  const threads = Number(process.env.BENCH_THREADS ?? 1);
  const out = { intra_op_threads: threads, inter_op_threads: 1, execution_provider: 'cpu' };
  try {
    const ort = createRequire(import.meta.url)('onnxruntime-node');
    out.version = ort.env.versions?.node ?? null;
    out.results = await ortPretrained(ort, { read: async (name) => new Uint8Array(await readFile(`${dir}/${name}`)),
      locate: (name) => `${dir}/${name}`, ep: 'cpu', threads, protocol });
  } catch (e) {
    out.error = String(e?.message ?? e).split('\n')[0];
  }
  out.peak_rss_bytes = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify(out));
}
