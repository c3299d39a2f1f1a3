// The core in JavaScript, for the browser and Node 20 alike.
//   const core = await loadAttention();
//   const result = core.run({module: 'softmax', inputs: [{name: 'x', shape: [3], data: [1, 2, 3]}]});
//   result.outputs[0].data   // Float32Array, a copy owned by JS
// run() owns the C++ Run object and deletes it before returning, so callers cannot leak. Errors
// from the core arrive as JS Errors carrying the core's message; the module stays usable.
// The WASM glue is build/wasm/attention.js (Embind, bindings.cpp beside this file).
import createAttentionModule from '../build/wasm/attention.js';

const wasmUrl = new URL('../build/wasm/attention.wasm', import.meta.url);

async function wasmBytes(url) {
  if (typeof process !== 'undefined' && process.versions?.node && url.protocol === 'file:') {
    // Node: read the file (Emscripten 3.1.6's loader breaks on Node 20's global fetch).
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

export class AttentionCore {
  constructor(module) {
    this._m = module;
    this._modules = JSON.parse(module.modulesJson());
  }

  // scenario: an object or a JSON string (core/SCENARIO.md). Returns
  // {module, outputs: [{name, shape, step?, data}], steps: [{name, op, ops, attrs, inputs, shape, dims,
  //  tokens, code, cpp, data}], attention: [...], inputs: [...] (with scenario.return_inputs),
  //  params: [...] (with scenario.return_params)}. A bad scenario throws an Error whose message
  // is the core's and whose `field` names the scenario field it is about ("config.num_heads").
  // Input `data` given as a Float32Array crosses as a typed array (copied into the heap once)
  // rather than as JSON text. options.weights: a safetensors file (Uint8Array or ArrayBuffer) to
  // load into the module (scenario.weights = {name} names it; README "Real weights").
  run(scenario, options = {}) {
    const buffers = [];
    const blobs = [];
    let text = scenario;
    if (options.weights) {
      const bytes = options.weights instanceof Uint8Array ? options.weights : new Uint8Array(options.weights);
      if (typeof scenario === 'string') scenario = JSON.parse(scenario);
      blobs.push(bytes);
      scenario = { ...scenario, weights: { name: options.weightsName ?? scenario.weights?.name ?? 'weights.safetensors', buffer: 0 } };
    }
    if (typeof scenario !== 'string') {
      const inputs = (scenario.inputs ?? []).map((input) => {
        if (!(input.data instanceof Float32Array)) return input;
        const { data, ...rest } = input;
        buffers.push(data);
        return { ...rest, buffer: buffers.length - 1 };
      });
      text = JSON.stringify(scenario.inputs ? { ...scenario, inputs } : scenario);
    }
    const run = new this._m.Run(text, buffers, blobs);
    try {
      if (!run.ok()) throw Object.assign(new Error(run.error()), { field: run.errorField() || null });
      const meta = JSON.parse(run.meta());
      meta.outputs.forEach((o, i) => { o.data = run.output(i).slice(); });
      meta.inputs.forEach((o, i) => { o.data = run.input(i).slice(); });
      meta.params.forEach((o, i) => { o.data = run.param(i).slice(); });
      meta.steps.forEach((s, i) => { s.data = run.step(i).slice(); });
      return meta;
    } finally {
      run.delete();
    }
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
  version() { return this._m.version(); }
  kernels() { return this._m.kernelsName(); }
  setUseSimd(on) { this._m.setUseSimd(!!on); }
  heapBytes() { return this._m.HEAPU8.length; }  // the WASM memory's size
  heapUsed() { return this._m.heapUsed(); }        // bytes allocated by malloc now
}

export async function loadAttention() {
  const wasmBinary = await wasmBytes(wasmUrl);
  const module = await createAttentionModule({ wasmBinary });
  return new AttentionCore(module);
}
