// The bench page's measurements (tests/bench/run.mjs drives them through window.bench): seed 000's
// MultiHeadAttention forward, output = mha(x, x, x), on
//   core-wasm    the core's WASM build (wasm_bench.cpp: the module's forward, no JSON)
//   ort-wasm     onnxruntime-web, wasm EP, 1 thread, SIMD, on the ONNX model torch_bench.py exported
//   tfjs-wasm    @tensorflow/tfjs-backend-wasm, the same computation written with tfjs ops
//   core-webgpu  GpuAttention (web/gpu/attention-gpu.js), as the playground page runs it
//   ort-webgpu   onnxruntime-web, webgpu EP, same model
//   tfjs-webgpu  @tensorflow/tfjs-backend-webgpu, same tfjs ops
// Every backend gets the same x and weights (the core's, which are PyTorch's for seed 0), the same
// timing protocol (timed() below) and the same warm-up; each timed call takes x in and hands the
// output back as a Float32Array, which is checked against PyTorch's output.
import createAttentionBench from '/build/wasm/bench/attention-bench.js';
import * as ortWasm from '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
import * as ortGpu from '/node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs';
import { GpuAttention, planFromResult } from '/web/gpu/attention-gpu.js';

const tf = globalThis.tf;
const ORT_DIST = '/node_modules/onnxruntime-web/dist/';
let core = null, gpu = null, gpuError = null;
const ortSessions = new Map();

// Median, min and max milliseconds per call, by run.mjs's protocol: a first call (compiles,
// allocates), then a second that sizes a run: a run repeats the call until it lasts minRunMs (the
// browser's timer is coarse). Warm-up is `warmup` runs and at least warmupMs (WebAssembly code
// starts in V8's baseline tier and is optimised once it has run enough), then `runs` runs are
// kept; a call over longCallMs gets 1 warm-up run and 3 kept. A second call over maxCallMs ends
// the measurement there (recorded as skipped, with its time): the emulated GPU's largest sizes.
async function timed(fn, { warmup, warmupMs, runs, minRunMs, longCallMs, maxCallMs }) {
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

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) return null;
  return new Uint8Array(await r.arrayBuffer());
}

function maxAbsDiff(a, ref) {
  if (!ref || !a || a.length !== ref.length) return null;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - ref[i]));
  return m;
}

// x and the parameters for one shape, copied out of a core session (then deleted unless kept).
function problem(B, T, C, H, keep = false) {
  const s = new core.Session(B, T, C, H);
  const x = s.x().slice();
  const params = {};
  for (let i = 0; i < s.paramCount(); i++) {
    const name = s.paramName(i);
    params[name] = s.param(i).slice();
  }
  if (!keep) s.delete();
  return { x, params, session: keep ? s : null };
}

// The `attention` description of seed 000's block at (C, H), which planFromResult reads (the
// scale, heads, parameter names): the bench build of the core returns no results, so the page's
// core (bindings/attention.mjs) runs the module once on one token, loaded on first use only.
let pageCore = null;
async function attentionOf(C, H) {
  pageCore ??= await (await import('/bindings/attention.mjs')).loadAttention();
  const scenario = { module: 'MultiHeadAttention', config: { d_model: C, num_heads: H },
    inputs: ['Q', 'K', 'V'].map((name) => ({ name, shape: [1, 1, C], init: 'randn' })) };
  return pageCore.run(scenario).attention;
}

// seed 000's forward in tfjs ops (functional forms: the UMD bundle has no chained tensor methods);
// W: {W_Q: {w, b}, ...} with w (in, out), nn.Linear's weight transposed once beforehand: fused
// matMul + bias is tfjs's fast path, and with transposeB: true tfjs-backend-wasm 4.22 returns wrong
// numbers (seen: max error 0.83 on a 5×7 · (3×7)ᵀ product), so the weight is not passed as stored.
function tfjsForward(xt, W, B, T, C, H) {
  const D = C / H;
  const lin = (t, name) => tf.fused.matMul({ a: t, b: W[name].w, bias: W[name].b });
  const x2 = tf.reshape(xt, [B * T, C]);
  const heads = (t) => tf.transpose(tf.reshape(t, [B, T, H, D]), [0, 2, 1, 3]);
  const q = heads(lin(x2, 'W_Q')), k = heads(lin(x2, 'W_K')), v = heads(lin(x2, 'W_V'));
  const scores = tf.div(tf.matMul(q, k, false, true), tf.scalar(Math.sqrt(D)));
  const weights = tf.softmax(scores);
  const o = tf.reshape(tf.transpose(tf.matMul(weights, v), [0, 2, 1, 3]), [B * T, C]);
  return tf.reshape(lin(o, 'W_O'), [B, T, C]);
}

async function ortSession(ort, ep, C, H) {
  const key = `${ep}:${C}:${H}`;
  if (!ortSessions.has(key)) {
    const model = await fetchBytes(`/build/bench/mha_C${C}_H${H}.onnx`);
    if (!model) throw new Error(`no ONNX model build/bench/mha_C${C}_H${H}.onnx (torch_bench.py --onnx makes it)`);
    ortSessions.set(key, await ort.InferenceSession.create(model, { executionProviders: [ep], graphOptimizationLevel: 'all' }));
  }
  return ortSessions.get(key);
}

const BACKENDS = {
  async 'core-wasm'(B, T, C, H, protocol) {
    const { x, session } = problem(B, T, C, H, true);
    try {
      return await timed(() => { session.x().set(x); return session.forward().slice(); }, protocol);
    } finally {
      session.delete();
    }
  },
  async 'ort-wasm'(B, T, C, H, protocol) {
    const { x } = problem(B, T, C, H);
    const session = await ortSession(ortWasm, 'wasm', C, H);
    const feeds = { x: new ortWasm.Tensor('float32', x, [B, T, C]) };
    return timed(async () => (await session.run(feeds)).output.data, protocol);
  },
  async 'ort-webgpu'(B, T, C, H, protocol) {
    const { x } = problem(B, T, C, H);
    const session = await ortSession(ortGpu, 'webgpu', C, H);
    const feeds = { x: new ortGpu.Tensor('float32', x, [B, T, C]) };
    return timed(async () => (await session.run(feeds)).output.data, protocol);
  },
  'tfjs-wasm': (B, T, C, H, protocol) => tfjsRun('wasm', B, T, C, H, protocol),
  'tfjs-webgpu': (B, T, C, H, protocol) => tfjsRun('webgpu', B, T, C, H, protocol),
  async 'core-webgpu'(B, T, C, H, protocol) {
    if (!gpu) throw new Error(gpuError ?? 'GpuAttention was not created');
    const { x, params } = problem(B, T, C, H);
    // A core result with this session's tensors: the page's core describes the attention block.
    const result = {
      module: 'MultiHeadAttention', attention: await attentionOf(C, H),
      inputs: ['Q', 'K', 'V'].map((name) => ({ name, shape: [B, T, C], data: x })),
      params: Object.entries(params).map(([name, data]) => ({ name, shape: name.endsWith('weight') ? [C, C] : [C], data })),
    };
    const plan = planFromResult(result);
    return timed(async () => (await gpu.run(plan)).output.data, protocol);
  },
};

async function tfjsRun(backend, B, T, C, H, protocol) {
  if (!(await tf.setBackend(backend))) throw new Error(`tfjs could not start its ${backend} backend`);
  await tf.ready();
  const { x, params } = problem(B, T, C, H);
  const W = {};
  for (const name of ['W_Q', 'W_K', 'W_V', 'W_O'])
    W[name] = { w: tf.tidy(() => tf.transpose(tf.tensor2d(params[`${name}.weight`], [C, C]))), b: tf.tensor1d(params[`${name}.bias`]) };
  try {
    return await timed(async () => {
      const y = tf.tidy(() => tfjsForward(tf.tensor3d(x, [B, T, C]), W, B, T, C, H));
      const data = await y.data();
      y.dispose();
      return data;
    }, protocol);
  } finally {
    for (const { w, b } of Object.values(W)) { w.dispose(); b.dispose(); }
  }
}

window.bench = {
  async setup() {
    const wasmBinary = await fetchBytes('/build/wasm/bench/attention-bench.wasm');
    core = await createAttentionBench({ wasmBinary });
    core.setMemoryBudget(1.9 * 2 ** 30);
    for (const ort of [ortWasm, ortGpu]) {
      ort.env.wasm.wasmPaths = ORT_DIST;
      ort.env.wasm.numThreads = 1;
      ort.env.wasm.proxy = false;
    }
    tf.wasm.setWasmPaths('/node_modules/@tensorflow/tfjs-backend-wasm/dist/');
    tf.wasm.setThreadsCount?.(1);
    let adapter = null;
    try {
      const a = await navigator.gpu?.requestAdapter();
      if (a) adapter = { vendor: a.info?.vendor, architecture: a.info?.architecture, device: a.info?.device, description: a.info?.description };
      gpu = await GpuAttention.create();
    } catch (e) {
      gpuError = String(e.message ?? e);
    }
    return {
      userAgent: navigator.userAgent, crossOriginIsolated: globalThis.crossOriginIsolated ?? false,
      coreKernels: core.kernelsName(), ort: ortWasm.env.versions?.web ?? ortWasm.env.versions?.common ?? null,
      tfjs: tf.version_core ?? tf.version?.['tfjs-core'] ?? null, adapter, gpuAdapterName: gpu?.adapterName ?? null, gpuError,
      wasmSimd: WebAssembly.validate(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11])),
    };
  },
  async run(backend, { B, T, C, H }, protocol) {
    try {
      const ref = await fetchBytes(`/build/bench/ref_B${B}_T${T}_C${C}_H${H}.f32`);
      const { first, stats } = await BACKENDS[backend](B, T, C, H, protocol);
      const diff = maxAbsDiff(first, ref && new Float32Array(ref.buffer));
      if (backend === 'tfjs-wasm' || backend === 'tfjs-webgpu') stats.tfjs_backend = tf.getBackend();
      return { ...stats, max_abs_diff_vs_torch: diff };
    } catch (e) {
      return { error: String(e?.message ?? e).slice(0, 500) };
    }
  },
};
document.body.dataset.ready = 'true';
