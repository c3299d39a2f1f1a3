// The timing protocol of `npm run bench` (run.mjs), shared by the bench page (page.js, in Chromium)
// and onnxruntime-node's driver (ort_node_bench.mjs, in Node); torch_bench.py and native_bench.cpp
// implement the same steps.
// Median, min and max milliseconds per call, by run.mjs's protocol: a first call (compiles,
// allocates), then a second that sizes a run: a run repeats the call until it lasts minRunMs (the
// browser's timer is coarse). Warm-up is `warmup` runs and at least warmupMs (WebAssembly code
// starts in V8's baseline tier and is optimised once it has run enough), then `runs` runs are
// kept; a call over longCallMs gets 1 warm-up run and 3 kept. A second call over maxCallMs ends
// the measurement there (recorded as skipped, with its time): the emulated GPU's largest sizes.
export async function timed(fn, { warmup, warmupMs, runs, minRunMs, longCallMs, maxCallMs }) {
  let t0 = performance.now();
  const first = await fn();
  const firstMs = performance.now() - t0;
  t0 = performance.now();
  await fn();
  const once = performance.now() - t0;
  if (maxCallMs && once > maxCallMs) return { first, stats: { skipped: `one call took ${(once / 1000).toFixed(1)} s, above the bench's ${(maxCallMs / 1000).toFixed(0)} s limit per call`, first_call_ms: firstMs, second_call_ms: once } };
  if (once > longCallMs) { warmup = Math.min(warmup, 1); runs = Math.min(runs, 3); }
  const inner = Math.max(1, Math.ceil(minRunMs / Math.max(once, 0.01)));
  const w0 = performance.now();
  let warmupRuns = 0;
  for (; warmupRuns < warmup || (once <= longCallMs && performance.now() - w0 < warmupMs); warmupRuns++) for (let k = 0; k < inner; k++) await fn();
  const all = [];
  for (let r = 0; r < runs; r++) {
    t0 = performance.now();
    for (let k = 0; k < inner; k++) await fn();
    all.push((performance.now() - t0) / inner);
  }
  const s = [...all].sort((a, b) => a - b), n = s.length;
  const median = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return { first, stats: { median_ms: median, min_ms: s[0], max_ms: s[n - 1], runs, calls_per_run: inner, warmup_runs: warmupRuns, first_call_ms: firstMs, second_call_ms: once, all_ms: all } };
}
