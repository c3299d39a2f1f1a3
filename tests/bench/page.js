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
// The training table (window.bench.train): one optimizer step of each case torch_bench.py --train
// wrote (build/bench/train_<case>.*), on
//   core-wasm    the core training mode's worker trains with (bindings/attention.mjs, the fast build:
//                build/wasm/attention-fast.js): core.trainer(scenario).step()
//   tfjs-wasm    the same model in tfjs ops, tf.variableGrads + tf.train.adam(1e-3) (tfjs has no AdamW)
// the first step's loss and gradients checked against PyTorch's.
// window.bench.peak() (and setup()) time the WASM SIMD128 multiply-add ceiling (peak.hpp, in the
// bench build of the core) in this page's engine, for the GFLOP/s table's "% of measured peak".
import createAttentionBench from '/build/wasm/bench/attention-bench.js';
import * as ortWasm from '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
import * as ortGpu from '/node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs';
import { GpuAttention, planFromResult } from '/web/gpu/attention-gpu.js';
import { timed } from '/tests/bench/timed.mjs';
import { hasRelaxedSimd, threadsPrintErr } from '/bindings/attention.mjs';

const tf = globalThis.tf;
// The threads every backend computes with (page.html?threads=N; run.mjs --threads): 1 unless asked,
// more only where the page is cross-origin isolated (server.mjs sends the headers).
const THREADS = Number(new URLSearchParams(location.search).get('threads') ?? 1);
const ORT_DIST = '/node_modules/onnxruntime-web/dist/';
let core = null, gpu = null, gpuError = null;
const ortSessions = new Map();

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

// x and the parameters for one shape, copied out of a core session (then deleted).
function problem(B, T, C, H) {
  const s = new core.Session(B, T, C, H);
  const x = s.x().slice();
  const params = {};
  for (let i = 0; i < s.paramCount(); i++) {
    const name = s.paramName(i);
    params[name] = s.param(i).slice();
  }
  s.delete();
  return { x, params };
}

// The `attention` description of seed 000's block at (C, H), which planFromResult reads (the
// scale, heads, parameter names): the bench build of the core returns no results, so the page's
// core (bindings/attention.mjs) runs the module once on one token, loaded on first use only.
let pageCore = null;
const loadPageCore = async () => (pageCore ??= await (await import('/bindings/attention.mjs')).loadAttention());
async function attentionOf(C, H) {
  await loadPageCore();
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

// core-wasm-simd128: the plain SIMD128 build beside the relaxed one core-wasm runs (loaded on first
// use), for the gain of relaxed SIMD in one run; where the engine has no relaxed SIMD, core-wasm is
// that build already and this backend is skipped.
let corePlain = null;
async function plainCore() {
  if (!hasRelaxedSimd()) return null;
  if (!corePlain) {
    corePlain = await createAttentionBench({ wasmBinary: await fetchBytes('/build/wasm/bench/attention-bench.wasm') });
    corePlain.setMemoryBudget(1.9 * 2 ** 30);
  }
  return corePlain;
}

// The forward of a bench build of the core (`mod`) at one shape, timed; x, the session's own
// seeded draw (the same in either build), is put back before every call.
async function timedForward(mod, B, T, C, H, protocol) {
  const session = new mod.Session(B, T, C, H);
  const x = session.x().slice();
  try {
    return await timed(() => { session.x().set(x); return session.forward().slice(); }, protocol);
  } finally {
    session.delete();
  }
}

const BACKENDS = {
  'core-wasm': (B, T, C, H, protocol) => timedForward(core, B, T, C, H, protocol),
  async 'core-wasm-simd128'(B, T, C, H, protocol) {
    const plain = await plainCore();
    if (!plain) return { skipped: 'no relaxed SIMD in this engine: core-wasm runs the plain SIMD128 build' };
    return timedForward(plain, B, T, C, H, protocol);
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
    const r = await timed(async () => {
      const y = tf.tidy(() => tfjsForward(tf.tensor3d(x, [B, T, C]), W, B, T, C, H));
      const data = await y.data();
      y.dispose();
      return data;
    }, protocol);
    return backend === 'wasm' ? { ...r, ran_threads: tf.wasm.getThreadsCount() } : r;
  } finally {
    for (const { w, b } of Object.values(W)) { w.dispose(); b.dispose(); }
  }
}

// ---- Training ------------------------------------------------------------------------------

// A training case as torch_bench.py --train wrote it: the manifest (scenario, parameter names and
// shapes, the first step's loss), PyTorch's parameters before the first step and its gradients,
// split per parameter, and the float inputs (mha: x, then the target).
async function trainCase(name) {
  const manifest = await (await fetch(`/build/bench/train_${name}.json`)).json();
  const split = (bytes, shapes) => {
    const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    let off = 0;
    return shapes.map((shape) => {
      const n = shape.reduce((a, b) => a * b, 1);
      const v = all.subarray(off, off + n);
      off += n;
      return v;
    });
  };
  const shapes = manifest.params.map((p) => p.shape);
  const files = await Promise.all(['params', 'grads', 'inputs'].map((k) => fetchBytes(`/build/bench/train_${name}.${k}.f32`)));
  if (files.some((f) => !f)) throw new Error(`build/bench/train_${name}.*.f32 missing (torch_bench.py --train ${name} writes them)`);
  return { manifest, params: split(files[0], shapes), grads: split(files[1], shapes), inputs: split(files[2], manifest.inputs) };
}

// The first step against PyTorch's: the loss (relative difference) and, per parameter, max |diff|
// over the parameter's largest |gradient|, floored at 1e-3 of the largest of all (a gradient that
// is 0 in exact arithmetic, seed 000's W_K.bias, is rounding noise everywhere) -- train_bench.cpp
// checks the native core the same way.
function checkStep(loss, grads, c) {
  let global = 0;
  for (const r of c.grads) for (const v of r) global = Math.max(global, Math.abs(v));
  let worstRel = 0, worstAbs = 0, worstName = null;
  const per = c.manifest.params.map((p, i) => {
    const g = grads[i], r = c.grads[i];
    if (g && g.length !== r.length) throw new Error(`gradient of ${p.name} has ${g.length} values, PyTorch's ${r.length}`);
    let d = 0, m = 0;
    for (let k = 0; k < r.length; k++) {
      d = Math.max(d, Math.abs((g ? g[k] : 0) - r[k]));
      m = Math.max(m, Math.abs(r[k]));
    }
    const rel = d / Math.max(m, 1e-3 * global);
    if (!(rel <= worstRel)) { worstRel = rel; worstName = p.name; }
    worstAbs = Math.max(worstAbs, d);
    return { name: p.name, max_abs_diff: d, max_abs_ref: m, rel };
  });
  return { loss, loss_ref: c.manifest.loss, loss_rel_diff: Math.abs(loss - c.manifest.loss) / Math.abs(c.manifest.loss),
    grad_max_abs_diff: worstAbs, grad_max_rel_diff: worstRel, grad_worst_param: worstName, grad_params: per };
}

// Training mode's core (the fast build): core.trainer(scenario) builds the module from the
// scenario's seed (PyTorch's weights and draws); step() is zero_grad + forward + loss + backward + AdamW.
let trainCore = null;
async function trainCoreWasm(c, protocol) {
  const core = (trainCore ??= await (await import('/bindings/attention.mjs')).loadAttention({ fast: true }));
  const trainer = core.trainer(c.manifest.scenario);
  try {
    const names = trainer.params().map((p) => p.name).join();
    if (names !== c.manifest.params.map((p) => p.name).join()) throw new Error(`the core's parameters (${names}) are not PyTorch's`);
    const loss = trainer.step();
    const check = checkStep(loss, trainer.grads().map((g) => g.data && g.data.slice()), c);
    const { stats } = await timed(() => trainer.step(), protocol);
    return { ...stats, ...check, kernels: core.kernels() };
  } finally {
    trainer.delete();
  }
}

// nn.Linear in tfjs as tf.layers.dense computes it: x (N, in) @ kernel (in, out) + bias, fused
// (tfjs's fast path); the kernel is nn.Linear's weight transposed once when the variable is made
// (trainTfjsWasm), so the forward needs no transposeB (wrong numbers in tfjs-backend-wasm 4.22's
// fused matMul, see tfjsForward) and the gradient is transposed back for the check.
const linear = (x, w, b) => tf.fused.matMul({ a: x, b: w, bias: b });

// nn.LayerNorm(C) (eps 1e-5, biased variance) over the last dim.
function layerNorm(x, g, b) {
  const mean = tf.mean(x, -1, true);
  const xc = tf.sub(x, mean);
  const variance = tf.mean(tf.square(xc), -1, true);
  return tf.add(tf.mul(tf.mul(xc, tf.rsqrt(tf.add(variance, tf.scalar(1e-5)))), g), b);
}

// seed 004's MultiHeadAttention (qkv_bias False): scores masked with -inf above the diagonal,
// then divided by sqrt(head_dim), softmax, weights @ values, out_proj. x: (B*T, C) -> (B*T, C).
function tfjsCausalMha(x, P, p, B, T, C, H, causal) {
  const D = C / H;
  const heads = (t) => tf.transpose(tf.reshape(t, [B, T, H, D]), [0, 2, 1, 3]);
  const keys = heads(linear(x, P[`${p}W_key.weight`])), queries = heads(linear(x, P[`${p}W_query.weight`]));
  const values = heads(linear(x, P[`${p}W_value.weight`]));
  const scores = tf.where(causal.mask, causal.negInf, tf.matMul(queries, keys, false, true));
  const weights = tf.softmax(tf.div(scores, tf.scalar(Math.sqrt(D))));
  const context = tf.reshape(tf.transpose(tf.matMul(weights, values), [0, 2, 1, 3]), [B * T, C]);
  return linear(context, P[`${p}out_proj.weight`], P[`${p}out_proj.bias`]);
}

// CausalTransformer (core/modules/causal_transformer.cpp, its twin in scripts/make_fixtures.py)
// in tfjs ops. nn.Embedding as one_hot(idx) @ weight: the same rows, and a gradient tfjs-backend-wasm
// can take (tf.gather's gradient needs UnsortedSegmentSum, which the wasm backend does not have).
function tfjsCausalLoss(P, k, cfg) {
  const { B, T, num_layers: L, emb_dim: C, num_heads: H } = cfg;
  let x = tf.add(tf.reshape(tf.matMul(k.idxOneHot, P['embedding.weight']), [B, T, C]), k.pe);
  x = tf.reshape(x, [B * T, C]);
  for (let l = 0; l < L; l++) {
    const p = `layers.${l}.`;
    x = layerNorm(tf.add(x, tfjsCausalMha(x, P, `${p}attn.`, B, T, C, H, k.causal)), P[`${p}norm1.weight`], P[`${p}norm1.bias`]);
    const f = linear(tf.relu(linear(x, P[`${p}ffn.0.weight`], P[`${p}ffn.0.bias`])), P[`${p}ffn.2.weight`], P[`${p}ffn.2.bias`]);
    x = layerNorm(tf.add(x, f), P[`${p}norm2.weight`], P[`${p}norm2.bias`]);
  }
  const logits = linear(x, P['fc_out.weight'], P['fc_out.bias']);
  // F.cross_entropy(ignore_index=-100): the mean of -log_softmax at the target over kept rows
  const picked = tf.sum(tf.mul(tf.logSoftmax(logits), k.targetOneHot), -1);
  return tf.div(tf.neg(tf.sum(tf.mul(picked, k.keep))), k.kept);
}

// Constants of a case for tfjs (outside the timed step, as PyTorch's buffers are): inputs, the
// positional table, the causal mask, the one-hot targets.
function tfjsConstants(c) {
  const sc = c.manifest.scenario;
  if (sc.module === 'MultiHeadAttention') {
    const shape = c.manifest.inputs[0];
    return { x: tf.reshape(tf.tensor(c.inputs[0], shape), [shape[0] * shape[1], shape[2]]), target: tf.tensor(c.inputs[1], c.manifest.inputs[1]),
      shape, heads: sc.config.num_heads };
  }
  const cfg = sc.config, [B, T] = sc.inputs[0].shape, C = cfg.emb_dim, V = cfg.vocab_size;
  const ids = sc.inputs[0].data, target = sc.loss.target.data;
  return tf.tidy(() => {
    // PositionalEncoding: pe[:, 0::2] = sin(position * div_term), pe[:, 1::2] = cos(...)
    const divTerm = tf.exp(tf.mul(tf.range(0, C, 2, 'float32'), tf.scalar(-Math.log(10000.0) / C)));
    const angle = tf.mul(tf.reshape(tf.range(0, T, 1, 'float32'), [T, 1]), tf.reshape(divTerm, [1, C / 2]));
    const pe = tf.reshape(tf.stack([tf.sin(angle), tf.cos(angle)], 2), [1, T, C]);
    const upper = tf.greater(tf.sub(tf.reshape(tf.range(0, T, 1, 'int32'), [1, T]), tf.reshape(tf.range(0, T, 1, 'int32'), [T, 1])), tf.scalar(0, 'int32'));
    const keepArr = Float32Array.from(target, (t) => (t === -100 ? 0 : 1));
    return {
      cfg: { ...cfg, B, T },
      idxOneHot: tf.cast(tf.oneHot(tf.tensor1d(ids, 'int32'), V), 'float32'),
      pe,
      // at the scores' full shape: tf.where broadcasts by tiling, every step (seen: 13% of the step)
      causal: { mask: tf.tile(tf.reshape(upper, [1, 1, T, T]), [B, cfg.num_heads, 1, 1]), negInf: tf.fill([B, cfg.num_heads, T, T], -Infinity) },
      targetOneHot: tf.cast(tf.oneHot(tf.tensor1d(target.map((t) => (t === -100 ? 0 : t)), 'int32'), V), 'float32'),
      keep: tf.tensor1d(keepArr),
      kept: tf.scalar(keepArr.reduce((a, b) => a + b, 0)),
    };
  });
}

// seed 000's MultiHeadAttention (tfjsForward's computation, the weights as stored) and mse.
function tfjsMhaLoss(P, k) {
  const [B, T, C] = k.shape, H = k.heads, D = C / H;
  const heads = (t) => tf.transpose(tf.reshape(t, [B, T, H, D]), [0, 2, 1, 3]);
  const q = heads(linear(k.x, P['W_Q.weight'], P['W_Q.bias'])), kk = heads(linear(k.x, P['W_K.weight'], P['W_K.bias']));
  const v = heads(linear(k.x, P['W_V.weight'], P['W_V.bias']));
  const weights = tf.softmax(tf.div(tf.matMul(q, kk, false, true), tf.scalar(Math.sqrt(D))));
  const o = tf.reshape(tf.transpose(tf.matMul(weights, v), [0, 2, 1, 3]), [B * T, C]);
  const out = tf.reshape(linear(o, P['W_O.weight'], P['W_O.bias']), [B, T, C]);
  // F.mse_loss's mean, as the mean of row means: tfjs-backend-wasm's Mean over all 393,216 values
  // in one float32 accumulator is 1.1e-4 off in relative terms (seen), above the loss check.
  return tf.mean(tf.mean(tf.squaredDifference(out, k.target), -1));
}

// The UMD tf-core bundle registers no gradients (the @tensorflow/tfjs union package imports them):
// tfjs-core's own register_all_gradients.js, as ES modules, fills the gradient registry that every
// copy of tfjs-core shares (globalThis), so tf.variableGrads works with the bundle's engine.
let gradientsLoaded = null;
const loadGradients = () => (gradientsLoaded ??= import('/node_modules/@tensorflow/tfjs-core/dist/register_all_gradients.js'));

let tfjsRunId = 0;
async function trainTfjsWasm(c, protocol) {
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs could not start its wasm backend');
  await tf.ready();
  await loadGradients();
  const run = `r${tfjsRunId++}/`;  // tfjs variable names are global: one prefix per run
  const P = {}, vars = [];
  const kernel = (p) => p.shape.length === 2 && p.name !== 'embedding.weight';  // nn.Linear weights, kept (in, out)
  c.manifest.params.forEach((p, i) => {
    const init = tf.tidy(() => (kernel(p) ? tf.transpose(tf.tensor(c.params[i], p.shape)) : tf.tensor(c.params[i], p.shape)));
    P[p.name] = tf.variable(init, true, run + p.name);
    init.dispose();
    vars.push(P[p.name]);
  });
  const sc = c.manifest.scenario;
  const k = tfjsConstants(c);
  const lossFn = sc.module === 'MultiHeadAttention' ? () => tfjsMhaLoss(P, k) : () => tfjsCausalLoss(P, k, k.cfg);
  const opt = tf.train.adam(sc.optimize.lr, 0.9, 0.999, 1e-8);  // PyTorch's betas and eps; no weight decay
  const step = (keepGrads) => {
    const { value, grads } = tf.variableGrads(lossFn, vars);
    const loss = value.dataSync()[0];
    const kept = keepGrads ? c.manifest.params.map((p) => {
      const g = grads[run + p.name];
      if (!g) return null;
      if (!kernel(p)) return g.dataSync().slice();
      const t = tf.transpose(g), d = t.dataSync().slice();
      t.dispose();
      return d;
    }) : null;
    opt.applyGradients(grads);
    value.dispose();
    tf.dispose(Object.values(grads));
    return { loss, grads: kept };
  };
  try {
    if (protocol.profile) {  // where tfjs's step goes: ms per kernel and input shapes, one step (not timed)
      step(false);
      const prof = await tf.profile(() => { step(false); });
      const agg = {};
      for (const kk of prof.kernels) {
        const key = `${kk.name} ${JSON.stringify(kk.inputShapes)}`;
        agg[key] = (agg[key] ?? 0) + (await kk.kernelTimeMs);
      }
      return { profile: Object.entries(agg).sort((a, b) => b[1] - a[1]) };
    }
    const first = step(true);
    const check = checkStep(first.loss, first.grads, c);
    const before = tf.memory().numTensors;
    const { stats } = await timed(() => step(false), protocol);
    return { ...stats, ...check, tfjs_backend: tf.getBackend(), leaked_tensors: tf.memory().numTensors - before };
  } finally {
    opt.dispose();
    tf.dispose(vars);
    tf.dispose(Object.values(k).filter((t) => t instanceof tf.Tensor));
    if (k.causal) tf.dispose(Object.values(k.causal));
  }
}

const TRAIN_BACKENDS = { 'core-wasm': trainCoreWasm, 'tfjs-wasm': trainTfjsWasm };

window.bench = {
  async setup() {
    // The relaxed-SIMD build where the engine validates relaxed SIMD (as bindings/attention.mjs
    // picks for the page), the plain SIMD128 build elsewhere; the glue is the same.
    const relaxed = hasRelaxedSimd();
    if (THREADS > 1) {
      // the threaded bench build (run.mjs --threads, the page cross-origin isolated): its pool of
      // THREADS - 1 Web Workers, each importing the same glue
      const name = `attention-bench-threads${relaxed ? '-relaxed' : ''}`;
      const glue = new URL(`/build/wasm/bench/${name}.js`, location.href).href;
      core = await (await import(glue)).default({ wasmBinary: await fetchBytes(`/build/wasm/bench/${name}.wasm`), attnThreads: THREADS,
        mainScriptUrlOrBlob: glue, locateFile: (file) => new URL(`/build/wasm/bench/${file}`, location.href).href,
        printErr: threadsPrintErr });
    } else {
      core = await createAttentionBench({ wasmBinary: await fetchBytes(`/build/wasm/bench/attention-bench${relaxed ? '-relaxed' : ''}.wasm`) });
    }
    core.setThreads(THREADS);
    core.setMemoryBudget(1.9 * 2 ** 30);
    for (const ort of [ortWasm, ortGpu]) {
      ort.env.wasm.wasmPaths = ORT_DIST;
      ort.env.wasm.numThreads = THREADS;
      ort.env.wasm.proxy = false;
    }
    tf.wasm.setWasmPaths('/node_modules/@tensorflow/tfjs-backend-wasm/dist/');
    // tfjs-backend-wasm 4.22 caps its pool at navigator.hardwareConcurrency / 2, whatever
    // setThreadsCount asks (backend.cc's init_with_threads_count assumes two hardware threads per
    // core): on a 2-core machine that is 1. Its wasm module starts at the first setBackend('wasm'),
    // after this, so it sees a count that lets it take the threads the other engines are given.
    if (THREADS > 1 && navigator.hardwareConcurrency < 2 * THREADS)
      Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => 2 * THREADS, configurable: true });
    tf.wasm.setThreadsCount(THREADS);
    let adapter = null;
    try {
      const a = await navigator.gpu?.requestAdapter();
      if (a) adapter = { vendor: a.info?.vendor, architecture: a.info?.architecture, device: a.info?.device, description: a.info?.description };
      gpu = await GpuAttention.create();
    } catch (e) {
      gpuError = String(e.message ?? e);
    }
    const peakBefore = JSON.parse(core.peak());  // before any backend has run (the WASM SIMD128 ceiling, peak.hpp)
    return {
      peak_before: peakBefore,
      userAgent: navigator.userAgent, crossOriginIsolated: globalThis.crossOriginIsolated ?? false, threads: core.threads(),
      coreKernels: core.kernelsName(), ort: ortWasm.env.versions?.web ?? ortWasm.env.versions?.common ?? null,
      tfjs: tf.version_core ?? tf.version?.['tfjs-core'] ?? null, adapter, gpuAdapterName: gpu?.adapterName ?? null, gpuError,
      wasmRelaxedSimd: relaxed,
      wasmSimd: WebAssembly.validate(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11])),
    };
  },
  // The WASM multiply-add ceilings again (run.mjs calls it after the forward runs).
  peak: () => JSON.parse(core.peak()),
  // The core's GEMM tiles as timed at start-up (kernels_wasm.cpp) and their GFLOP/s then.
  detail: () => core.kernelsDetail(),
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
  // protocol.profile (tfjs-wasm only): tf.profile's kernel times of one step instead of timings.
  async train(backend, name, protocol) {
    try {
      return await TRAIN_BACKENDS[backend](await trainCase(name), protocol);
    } catch (e) {
      return { error: String(e?.message ?? e).slice(0, 500) };
    }
  },
};
document.body.dataset.ready = 'true';
