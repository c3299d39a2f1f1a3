// The core in JavaScript, for the browser and Node 20 alike.
//   const core = await loadAttention();
//   const result = core.run({module: 'softmax', inputs: [{name: 'x', shape: [3], data: [1, 2, 3]}]});
//   result.outputs[0].data   // Float32Array, a copy owned by JS
// run() owns the C++ Run object and deletes it before returning, so callers cannot leak. Errors
// from the core arrive as JS Errors carrying the core's message; the module stays usable.
// The WASM glue is build/wasm/attention.js (Embind, bindings.cpp beside this file). Two builds of
// the core give the same numbers to the bit (CMakeLists.txt; tests/node/builds.test.mjs): the
// small one (attention*.wasm: link-time optimised, its bookkeeping built for size), which a page
// downloads first, and the fast one (attention-fast*.wasm, its own glue attention-fast.js, imported
// only when asked for), which the page's workers train and generate with. Each comes twice, as the
// kernels differ: *-relaxed.wasm, whose multiply-adds are relaxed SIMD's f32x4.relaxed_madd (one
// fused instruction where the CPU has FMA: the GEMMs run ~1.3x faster in Chromium), where the engine
// validates relaxed SIMD, and plain SIMD128 (every engine, Node 20, the notebook) elsewhere.
import createAttentionModule from '../build/wasm/attention.js';

const wasmUrls = {
  small: {
    simd128: new URL('../build/wasm/attention.wasm', import.meta.url),
    relaxed: new URL('../build/wasm/attention-relaxed.wasm', import.meta.url),
  },
  fast: {
    simd128: new URL('../build/wasm/attention-fast.wasm', import.meta.url),
    relaxed: new URL('../build/wasm/attention-fast-relaxed.wasm', import.meta.url),
  },
  threads: {
    simd128: new URL('../build/wasm/attention-threads.wasm', import.meta.url),
    relaxed: new URL('../build/wasm/attention-threads-relaxed.wasm', import.meta.url),
  },
};
// The threaded build's pthreads each run in a Web Worker started from this script, which imports
// the build's glue (given by URL: Module.mainScriptUrlOrBlob) and instantiates the module the main
// thread compiled over the shared memory.
const threadsWorkerUrl = new URL('../build/wasm/attention-threads.worker.js', import.meta.url);
const threadsGlue = {
  simd128: new URL('../build/wasm/attention-threads.js', import.meta.url),
  relaxed: new URL('../build/wasm/attention-threads-relaxed.js', import.meta.url),
};
export const MAX_THREADS = 8;
const isNode = typeof process !== 'undefined' && !!process.versions?.node;

// Threads need a SharedArrayBuffer: Node has one; a page only when cross-origin isolated (served
// with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp).
export const threadsAvailable = () => typeof SharedArrayBuffer === 'function' && (isNode || globalThis.crossOriginIsolated === true);
async function cores() {
  if (isNode) {
    const os = 'node:os';
    const { availableParallelism, cpus } = await import(/* @vite-ignore */ os);
    return availableParallelism?.() ?? cpus().length;
  }
  return globalThis.navigator?.hardwareConcurrency || 1;
}

// Node has no Web Worker: Emscripten's pthreads (built for the web) get one over worker_threads,
// running the build's worker script with the globals a worker has (self, postMessage, onmessage).
async function nodeWebWorker() {
  const wt = 'node:worker_threads';
  const url = 'node:url';
  const [{ Worker }, { fileURLToPath }] = await Promise.all([import(/* @vite-ignore */ wt), import(/* @vite-ignore */ url)]);
  const bootstrap = `const { parentPort, workerData } = require('node:worker_threads');
globalThis.self = globalThis;
globalThis.postMessage = (message, transfer) => parentPort.postMessage(message, transfer);
parentPort.on('message', (data) => self.onmessage({ data }));
(0, eval)(require('node:fs').readFileSync(workerData, 'utf8'));`;
  return class NodeWebWorker {
    constructor(url) {
      this._w = new Worker(bootstrap, { eval: true, workerData: fileURLToPath(url) });
      this._w.on('message', (data) => this.onmessage?.({ data }));
      this._w.on('error', (e) => this.onerror?.(e));
      NodeWebWorker.started.push(this._w);
    }
    // Once the module is ready (its pool loaded): the pool's workers never keep Node running.
    static unrefAll() { for (const w of NodeWebWorker.started.splice(0)) w.unref(); }
    static started = [];
    addEventListener(type, listener) { if (type === 'error') this._w.on('error', listener); }
    postMessage(message, transfer) { this._w.postMessage(message, transfer); }
    terminate() { this._w.terminate(); }
  };
}

// A module of one function that returns f32x4.relaxed_madd of three splatted zeros (0xfd 0x85 0x02):
// it validates exactly where the engine has relaxed SIMD.
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 28, 1, 26, 0,
  67, 0, 0, 0, 0, 253, 19, 67, 0, 0, 0, 0, 253, 19, 67, 0, 0, 0, 0, 253, 19, 253, 133, 2, 11]);
export const hasRelaxedSimd = () => WebAssembly.validate(RELAXED_PROBE);

// The interpretability fields (core/SCENARIO.md, "Interpretability"): the small build (the
// default, the playground's first view) refuses them with an error naming the field; the
// full-speed build (loadAttention({fast: true}): the page's workers, the CLI) has them.
export const INTERP_FIELDS = Object.freeze(['interventions', 'patching', 'attribution_patching', 'logit_lens', 'logit_attribution']);

async function wasmBytes(url) {
  if (typeof process !== 'undefined' && process.versions?.node && url.protocol === 'file:') {
    // Node: read the file (Emscripten 3.1.6's loader breaks on Node 20's global fetch). The name
    // in a variable: a bundler leaves this import to Node instead of shipping a stub to the page.
    const fs = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ fs);
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// A value as a message names it: a string quoted, an object by its kind (Object, DataView), anything
// else as JavaScript prints it (NaN, -1, null).
export const shown = (v) => (typeof v === 'string' ? JSON.stringify(v) : v && typeof v === 'object' ? v.constructor?.name ?? 'an object' : String(v));
// An Error naming the field it is about, as the core's are.
export const fieldError = (field, message) => Object.assign(new Error(message), { field });

// A file's bytes as a Uint8Array: a Uint8Array as it is, an ArrayBuffer or another view by its bytes;
// anything else refused by name (a number n became n zero bytes, a string none).
function fileBytes(v, what, field) {
  if (v instanceof Uint8Array) return v;
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (['[object ArrayBuffer]', '[object SharedArrayBuffer]'].includes(Object.prototype.toString.call(v))) return new Uint8Array(v);
  throw fieldError(field, `${what} must be the file's bytes (a Uint8Array or an ArrayBuffer), got ${shown(v)}`);
}

// The scenario as JSON text, with Float32Array input data as typed arrays beside it (copied into
// the heap once) and the weights file as bytes.
function encode(scenario, options) {
  options ??= {};  // run(scenario, null) as run(scenario)
  const buffers = [];
  const blobs = [];
  let text = scenario;
  if (options.weights) {
    const bytes = fileBytes(options.weights, 'options.weights', 'weights');
    if (typeof scenario === 'string') scenario = JSON.parse(scenario);
    blobs.push(bytes);
    scenario = { ...scenario, weights: { name: options.weightsName ?? scenario.weights?.name ?? 'weights.safetensors', buffer: 0 } };
  }
  if (typeof scenario !== 'string') {
    // anything else (inputs not a list, an input not an object, no scenario) goes to the core as it
    // is, whose message names the field
    const inputs = Array.isArray(scenario?.inputs) && scenario.inputs.map((input) => {
      if (!(input?.data instanceof Float32Array)) return input;
      const { data, ...rest } = input;
      buffers.push(data);
      return { ...rest, buffer: buffers.length - 1 };
    });
    text = JSON.stringify(inputs ? { ...scenario, inputs } : scenario) ?? 'null';
  }
  // the model folder of "pretrained": {name: Uint8Array} or (name) => Uint8Array | null
  if (options.files != null) blobs.files = options.files;
  // with sizes {name: bytes}: files gives each weight file's header only (a trainer's streamed weights)
  if (options.sizes != null) blobs.sizes = options.sizes;
  // and range (name, offset, length) => Uint8Array: run reads the weights a range at a time
  if (options.range != null) blobs.range = options.range;
  return { text, buffers, blobs };
}

export function throwIfFailed(obj) {
  if (!obj.ok()) throw fieldError(obj.errorField() || null, obj.error());
}

// Numbers the core copies as float32 values or sizes: a list or a typed array (not BigInt64Array,
// whose bigints are no numbers, nor a DataView); anything else reached Embind's copy, which threw a
// TypeError ("Cannot read properties of null") or took a string's characters as NaN values.
const numberList = (v) => Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView) && !(v instanceof BigInt64Array) && !(v instanceof BigUint64Array));
function checkValues(field, what, data, shape) {
  if (!numberList(data)) throw fieldError(field, `${what}: the values must be a Float32Array or a list of numbers, got ${shown(data)}`);
  if (!numberList(shape)) throw fieldError(field, `${what}: the shape must be a list of sizes, e.g. [1, 6], got ${shown(shape)}`);
}

// A Run's result, copied out of the heap: {module, outputs, steps (with grad where computed),
// attention, inputs, params, grads, loss?, losses, and with "generate": ids, generated}.
function readRun(run) {
  const meta = JSON.parse(run.meta());
  meta.outputs.forEach((o, i) => { o.data = run.output(i).slice(); });
  meta.inputs.forEach((o, i) => { o.data = run.input(i).slice(); });
  meta.params.forEach((o, i) => { o.data = run.param(i).slice(); });
  meta.grads.forEach((o, i) => { o.data = run.grad(i).slice(); });
  meta.steps.forEach((s, i) => {
    s.data = run.step(i).slice();
    if (s.hasGrad) s.grad = run.stepGrad(i).slice();
    delete s.hasGrad;
  });
  if (meta.loss === undefined) delete meta.loss;
  // SCENARIO.md, "Interpretability": patching, attribution_patching, logit_lens (data as
  // Float32Array, as every tensor), logit_attribution, when the scenario asked
  const interp = JSON.parse(run.interp());
  for (const e of interp.logit_lens ?? []) e.data = Float32Array.from(e.data, Number);
  Object.assign(meta, interp);
  (meta.generated ?? []).forEach((g, t) => (g.steps ?? []).forEach((s, i) => {
    s.data = run.generatedStep(t, i).slice();
    delete s.hasGrad;
  }));
  return meta;
}

// core.generator(scenario): token by token; see AttentionCore.generator.
export class Generation {
  constructor(native) {
    this._g = native;
    try { throwIfFailed(native); } catch (e) { native.delete(); throw e; }
  }
  // The next token of every batch row: {position, mode ("prefill" | "decode" | "full"), ids,
  // top_ids, top_probs, cache: {shape, bytes} | null, steps? (with data, when the scenario traces)}.
  next() {
    const text = this._g.next();
    throwIfFailed(this._g);
    const token = JSON.parse(text);
    (token.steps ?? []).forEach((s, i) => { s.data = this._g.step(i).slice(); delete s.hasGrad; });
    return token;
  }
  // Per batch row, the prompt then the ids generated so far.
  get ids() { return JSON.parse(this._g.ids()); }
  get produced() { return this._g.produced(); }
  delete() { this._g.delete(); }
}

// trainer.step() many times on one module; see AttentionCore.trainer.
export class Trainer {
  constructor(native) {
    this._t = native;
    try { throwIfFailed(native); } catch (e) { native.delete(); throw e; }
    this._params = JSON.parse(native.paramsMeta());
  }
  // The next steps' input `name` (module order names) and the loss's target: Float32Array + shape.
  setInput(name, data, shape) {
    if (typeof name !== 'string') throw fieldError('inputs', `setInput: the input's name must be a string, got ${shown(name)}`);
    checkValues(`inputs.${name}`, `input '${name}'`, data, shape);
    if (!this._t.setInput(name, shape, data)) throwIfFailed(this._t);
  }
  setTarget(data, shape) {
    checkValues('target', 'the target', data, shape);
    if (!this._t.setTarget(shape, data)) throwIfFailed(this._t);
  }
  // zero_grad, forward, loss, backward, clip, optimizer.step(): the loss before the step.
  step() {
    const loss = this._t.step();
    throwIfFailed(this._t);
    return loss;
  }
  // The current inputs through the module (no step): {outputs, steps} like run(); with grads, also
  // the loss, every gradient and each traced step's grad.
  forward(options = {}) {
    const { trace = true, grads = false } = options ?? {};
    const run = this._t.forward(trace, grads);
    if (!run) throwIfFailed(this._t);
    try { return readRun(run); } finally { run.delete(); }
  }
  // [{name, shape, data}]: views into the heap, valid until the next call on this trainer (copy to keep).
  params() { return this._params.map((p, i) => ({ ...p, data: this._t.param(i) })); }
  grads() { return this._params.map((p, i) => ({ ...p, data: this._t.grad(i) ?? null })); }
  get steps() { return this._t.stepsDone(); }
  delete() { this._t.delete(); }
}

export class AttentionCore {
  constructor(module) {
    this._m = module;
    this._modules = JSON.parse(module.modulesJson());
  }

  // scenario: an object or a JSON string (core/SCENARIO.md). Returns
  // {module, outputs: [{name, shape, step?, data}], steps: [{name, op, ops, attrs, inputs, shape, dims,
  //  tokens, code, cpp, data, grad?}], attention: [...], inputs: [...] (with scenario.return_inputs),
  //  params: [...] (with scenario.return_params), loss?, losses: [...] (optimize),
  //  grads: [{name, shape, data}] (with scenario.grads)}. A bad scenario throws an Error whose message
  // is the core's and whose `field` names the scenario field it is about ("config.num_heads").
  // Input `data` given as a Float32Array crosses as a typed array (copied into the heap once)
  // rather than as JSON text. options.weights: a safetensors file (Uint8Array or ArrayBuffer) to
  // load into the module (scenario.weights = {name} names it; docs/modules.md, "Real weights").
  // scenario.pretrained (the full build): options.files (name) => Uint8Array | null gives the model
  // folder's files; with options.sizes ((name) => bytes, or {name: bytes}) and options.range
  // ((name, offset, length) => Uint8Array), files need give only each weight file's header and the
  // weights are read a range at a time into the module (the Node CLI: no copy of a whole file).
  run(scenario, options = {}) {
    const { text, buffers, blobs } = encode(scenario, options);
    const run = new this._m.Run(text, buffers, blobs);
    try {
      throwIfFailed(run);
      return readRun(run);
    } finally {
      run.delete();
    }
  }

  // Incremental training (docs/training.md): a module built once from a scenario
  // with "loss" and "optimize" (its own "inputs" are the first batch); then, per step, new inputs
  // and target as Float32Arrays and trainer.step(). trainer.delete() frees it.
  trainer(scenario, options = {}) {
    const { text, buffers, blobs } = encode(scenario, options);
    return new Trainer(new this._m.Trainer(text, buffers, blobs));
  }

  // Generation token by token (SCENARIO.md, "Generation"): a scenario with "generate" (a GPT and
  // its prompt); generation.next() at most generate.max_new_tokens times, each one forward (the
  // prompt's window first, then one decode step per token on the KV cache). generation.delete()
  // frees it. options.weights as in run().
  generator(scenario, options = {}) {
    const { text, buffers, blobs } = encode(scenario, options);
    return new Generation(new this._m.Generation(text, buffers, blobs));
  }

  // [{id, seed, seed_name, summary, args: [{name, type, required, default, min, max, help}], inputs, outputs}]
  modules() { return this._modules; }
  // The tensors of a safetensors file: [{name, dtype, shape}]; a damaged file throws an Error
  // naming what is wrong.
  weightsListing(bytes) {
    const out = JSON.parse(this._m.safetensorsListing(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)));
    if (out.error) throw new Error(out.error);
    return out.tensors;
  }
  // The mask rule of a causal attention with a sliding window and sinks (core/tape/graph.hpp
  // window_mask), for T queries and S keys at positions 0.. : a (T, S) Float32Array, 1 = masked.
  // window 0: no window; causal false and window 0: nothing masked.
  // Arguments that break these rules throw (the core would wrap them to its ints, or its throw reach
  // JS as a bare WebAssembly.Exception): whole numbers from 0 to 2^24, T * S at most 2^24 cells.
  attentionMask(T, S, { causal = true, window = 0, sinkTokens = 0 } = {}) {
    const args = [T, S, window, sinkTokens];
    if (!args.every((v) => v >= 0 && v <= 2 ** 24 && v % 1 === 0) || T * S > 2 ** 24)
      throw new Error(`attentionMask(${args}): T, S, window and sinkTokens must be whole numbers from 0 to ${2 ** 24}, and T * S at most ${2 ** 24}`);
    return this._m.attentionMask(T, S, !!causal, window, sinkTokens);
  }
  // The probabilities the next token is drawn from, given the last position's logits (a
  // Float32Array of V): / temperature (0: none, greedy), top_k (0 or null: none), top_p (0 or
  // null: none), softmax, exactly as a scenario's "generate" filters them (core/run/generate.hpp).
  // Values outside those rules throw.
  nextTokenDistribution(logits, { temperature = 1, top_k = 0, top_p = 0 } = {}) {
    top_k ??= 0;
    top_p ??= 0;
    if (!(temperature >= 0 && temperature < Infinity && top_k >= 0 && top_k < 2 ** 31 && top_k % 1 === 0 && top_p >= 0 && top_p <= 1))
      throw new Error(`nextTokenDistribution: temperature ${temperature}, top_k ${top_k}, top_p ${top_p}: temperature must be >= 0 (0: greedy), top_k a whole number (0: none), top_p in [0, 1] (0: none)`);
    return this._m.nextTokenDistribution(logits, temperature, top_k, top_p);
  }
  version() { return this._m.version(); }
  kernels() { return this._m.kernelsName(); }
  // The kernel table and the GEMM register tiles it timed fastest on this machine at start-up.
  kernelsDetail() { return this._m.kernelsDetail(); }
  // The threads the core computes with: 1, or the threaded build's pool (loadAttention({threads})).
  threads() { return this._m.threads(); }
  setUseSimd(on) { this._m.setUseSimd(!!on); }
  heapBytes() { return this._m.HEAPU8.length; }  // the WASM memory's size
  heapUsed() { return this._m.heapUsed(); }        // bytes allocated by malloc now
}

// The threaded glue's printErr: the main thread waits for the last chunks of a split loop, and the
// pool's threads never wait on it (they call nothing on the main thread), so the glue's warning
// about blocking there is left out.
export const threadsPrintErr = (text) => { if (!/^Blocking on the main thread/.test(text)) console.warn(text); };

// A pool's workers each instantiate the module they are sent (a few hundred ms on a loaded 2-core
// machine); one that runs its script but never answers (a script served in its place that does
// nothing, a worker the browser starves) would keep the page waiting for good.
export const POOL_TIMEOUT_MS = 20000;
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

// options.wasmBinary: the small build's bytes when the caller has them already (the notebook page
// carries them inline: web/playground/notebook.js); else they are fetched (read, under Node) from
// beside the glue. options.simd: 'auto' (relaxed SIMD where the engine has it, and where the
// relaxed file is missing, as in the Python package, the plain build), 'relaxed' or 'simd128' (that
// build or an error). options.fast: the full-speed build (the workers': a training step of a small
// model ~8 % faster; the page's first view loads the small one). options.threads: 'auto' (the
// cores, at most 8, where threads are available: threadsAvailable(); else 1) or a count from 1 to
// 8; more than one loads the threaded build (full speed, its pool of Web Workers started with it),
// which gives the same numbers to the bit as the others. core.threads() says how many it uses.
// options.poolTimeoutMs: how long the threaded build's pool may take to start (every worker's
// module loaded) before it counts as failed: POOL_TIMEOUT_MS by default.
export async function loadAttention(options = {}) {
  const { wasmBinary = null, simd = 'auto', fast = false, threads = 'auto', poolTimeoutMs = POOL_TIMEOUT_MS } = options ?? {};
  if (!['auto', 'relaxed', 'simd128'].includes(simd)) throw new Error(`loadAttention: simd is '${simd}': it must be 'auto', 'relaxed' or 'simd128'`);
  if (simd === 'relaxed' && !hasRelaxedSimd()) throw new Error("loadAttention: simd is 'relaxed' but this engine does not validate relaxed SIMD (f32x4.relaxed_madd)");
  if (fast && wasmBinary) throw new Error('loadAttention: wasmBinary is the small build\'s bytes: leave fast out with it');
  if (threads !== 'auto' && !(Number.isInteger(threads) && threads >= 1 && threads <= MAX_THREADS))
    throw new Error(`loadAttention: threads is ${typeof threads === 'number' ? String(threads) : JSON.stringify(threads)}: it must be 'auto' or a whole number from 1 to ${MAX_THREADS}`);
  // setTimeout runs a delay past 2^31 - 1 ms (Infinity included) at once
  if (!(poolTimeoutMs > 0 && poolTimeoutMs <= MAX_TIMEOUT_MS))
    throw new Error(`loadAttention: poolTimeoutMs is ${typeof poolTimeoutMs === 'number' ? poolTimeoutMs : JSON.stringify(poolTimeoutMs)}: it must be a number of milliseconds above 0 and at most ${MAX_TIMEOUT_MS}`);
  if (threads !== 'auto' && threads > 1) {
    if (wasmBinary) throw new Error(`loadAttention: threads is ${threads} but wasmBinary is the single-thread small build's bytes: leave one out`);
    if (!threadsAvailable()) throw new Error(`loadAttention: threads is ${threads} but this page is not cross-origin isolated (no SharedArrayBuffer): serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp, or ask for 1 thread`);
  }
  const count = threads !== 'auto' ? threads : wasmBinary || !threadsAvailable() ? 1 : Math.min(MAX_THREADS, await cores());
  const kind = count > 1 ? 'threads' : fast ? 'fast' : 'small';
  const urls = wasmUrls[kind];
  let bytes = wasmBinary, relaxed = false;
  if (!bytes && simd !== 'simd128' && hasRelaxedSimd()) {
    bytes = simd === 'relaxed' ? await wasmBytes(urls.relaxed) : await wasmBytes(urls.relaxed).catch(() => null);
    relaxed = bytes !== null;
  }
  bytes ??= await wasmBytes(urls.simd128);
  if (kind !== 'threads') {
    const create = fast ? (await import('../build/wasm/attention-fast.js')).default : createAttentionModule;
    return new AttentionCore(await create({ wasmBinary: bytes }));
  }
  if (threads !== 'auto') return startThreaded(bytes, relaxed, count, poolTimeoutMs);
  // 'auto': where the threaded build does not start, the single-thread full-speed one (the same
  // fields), said on the console
  return startThreaded(bytes, relaxed, count, poolTimeoutMs).catch((e) => {
    console.warn(`${e?.message ?? e}: loading the single-thread build`);
    return loadAttention({ simd, fast: true, threads: 1 });
  });
}

async function startThreaded(bytes, relaxed, count, timeoutMs) {
  // The threaded build's glue (its own for each wasm: scripts/relax-wasm.mjs) is imported by URL,
  // here and by every worker of its pool (Module.mainScriptUrlOrBlob): one file, not bundled.
  const glueUrl = threadsGlue[relaxed ? 'relaxed' : 'simd128'].href;
  const glue = await import(/* @vite-ignore */ glueUrl);
  if (isNode && typeof globalThis.Worker !== 'function') globalThis.Worker = await nodeWebWorker();
  const args = {
    wasmBinary: bytes,
    attnThreads: count,  // the pool of Web Workers: count - 1 (CMakeLists.txt, PTHREAD_POOL_SIZE)
    mainScriptUrlOrBlob: glueUrl,
    locateFile: () => threadsWorkerUrl.href,
    printErr: threadsPrintErr,
  };
  const made = glue.default(args);
  // The glue waits for every worker of its pool to load the module, and one whose script fails
  // (not served, refused) never does: its error event ends the wait with an Error instead, and so
  // does a pool still not started after timeoutMs.
  let timer = null;
  const failed = new Promise((_, reject) => {
    for (const w of args.PThread?.unusedWorkers ?? []) {
      w.addEventListener('error', (e) => reject(new Error(`loadAttention: a worker of the threaded build's pool (${threadsWorkerUrl.href}) did not start: ${e?.message || 'its script failed to load'}`)));
    }
    timer = setTimeout(() => reject(new Error(`loadAttention: the threaded build's pool of ${count - 1} worker(s) (${threadsWorkerUrl.href}) had not started after ${timeoutMs} ms`)), timeoutMs);
  });
  const module = await Promise.race([made, failed]).finally(() => clearTimeout(timer)).catch((e) => {
    args.PThread?.terminateAllThreads?.();
    throw e;
  });
  if (isNode) globalThis.Worker.unrefAll?.();
  module.setThreads(count);
  return new AttentionCore(module);
}
