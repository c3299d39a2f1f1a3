// The attention hot path on WebGPU: q/k/v projections (linear.wgsl), rotary positions on q and k
// (rope.wgsl), fused flash-style attention (attention-fused.wgsl, or the naive three passes of
// attention-naive.wgsl; grouped kv heads, ALiBi and the sliding window inside the score), the
// displayed heads' weights (attention-weights.wgsl) and the output projection. The plan comes from
// a core result alone (core/SCENARIO.md "Attention": its `attention` block, `inputs`, `params`), so
// the GPU computes from the very numbers and conventions the WASM core used; ../backend.js compares
// the two.

import { t } from '../i18n.js';
import { adapterName, gpuAdapter } from './adapter.js';

const SHADERS = {
  common: new URL('./attention-common.wgsl', import.meta.url),
  linear: new URL('./linear.wgsl', import.meta.url),
  fused: new URL('./attention-fused.wgsl', import.meta.url),
  weights: new URL('./attention-weights.wgsl', import.meta.url),
  naive: new URL('./attention-naive.wgsl', import.meta.url),
  rope: new URL('./rope.wgsl', import.meta.url),
  loopCap: new URL('./loop-cap.wgsl', import.meta.url),
};
const LOOP_PROBE = 512 * 256;  // the iterations loop-cap.wgsl asks for

// The kernels keep a query row and an output row in fixed arrays (DMAX in attention-fused.wgsl).
export const MAX_HEAD_DIM = 128;

// What the kernels can lay out: every projection kind, mask rule and broadcast the core describes today.
const PROJECTIONS = new Set(['linear', 'matrix', 'fused', 'none']);
const MASK_KINDS = { zero: 1, nonzero: 2 };   // Params.mask_kind (attention-common.wgsl)
const BROADCASTS = new Set(['right', 'unsqueeze_heads']);

const product = (dims) => dims.reduce((a, b) => a * b, 1);

// The one block whose output the GPU computes: null when the module has no attention block, or
// its blocks feed more computation (an encoder or decoder layer, a stack of them, a heads wrapper).
function gpuBlock(source) {
  const blocks = (source?.attention ?? []).filter((a) => a.output);
  return blocks.length === 1 ? blocks[0] : null;
}

// The block's fill as a number: finite ones are written into masked scores, minus infinity (a
// string in the core's JSON) skips masked keys; anything else is not a fill the kernels know.
function fillOf(block) {
  const fill = Number(block.fill);
  return Number.isFinite(fill) || fill < 0 ? fill : null;
}

// {ok: true} or {ok: false, reason} in the page's language. source: a core result (everything is
// decided) or a module-table entry (structure only: head dims and dropout p are a run's numbers).
export function gpuSupport(scenario, source) {
  const block = gpuBlock(source);
  // Grouped kv heads are read from per-head column blocks: a fused (B, T, H, 3·D) qkv row has none.
  const grouped = block?.kv_heads && block.kv_heads !== block.heads;
  const known = block && PROJECTIONS.has(block.projection) && fillOf(block) !== null
    && (!block.mask || (MASK_KINDS[block.mask.masked_where] && BROADCASTS.has(block.mask.broadcast)))
    && !(grouped && block.projection === 'fused');
  if (!known) return { ok: false, reason: t('gpu.noPath', { module: scenario.module }) };
  if (scenario.train && block.dropout > 0) return { ok: false, reason: t('gpu.dropout') };
  const dim = Math.max(block.d_k ?? 0, block.d_v ?? 0);
  if (dim > MAX_HEAD_DIM) return { ok: false, reason: t('gpu.headDim', { dim, max: MAX_HEAD_DIM }) };
  return { ok: true };
}

// Mask values broadcast (NumPy rules) from `shape` to `target`: a dense Float32Array.
function broadcastTo(data, shape, target) {
  if (shape.length > target.length) throw new Error(`mask of shape [${shape}] has more dims than [${target}]`);
  const pad = [...Array(target.length - shape.length).fill(1), ...shape];
  pad.forEach((d, i) => { if (d !== 1 && d !== target[i]) throw new Error(`mask of shape [${shape}] cannot broadcast to [${target}]`); });
  const strides = new Array(pad.length);
  for (let i = pad.length - 1, s = 1; i >= 0; i--) { strides[i] = pad[i] === 1 ? 0 : s; s *= pad[i]; }
  const n = product(target);
  const out = new Float32Array(n);
  const idx = new Array(target.length).fill(0);
  for (let k = 0; k < n; k++) {
    let src = 0;
    for (let i = 0; i < idx.length; i++) src += idx[i] * strides[i];
    out[k] = data[src];
    for (let i = idx.length - 1; i >= 0; i--) { if (++idx[i] < target[i]) break; idx[i] = 0; }
  }
  return out;
}

// The mask tensor against the scores (lead..., [H,] T, S), as the block's broadcast rule says,
// made dense over (B, Hm, T, S): Hm = H only when the mask has its own head axis.
function maskPlan(block, mask, lead, H, T, S) {
  let shape = mask.shape;
  if (block.mask.broadcast === 'unsqueeze_heads') shape = [shape[0], 1, ...shape.slice(1)];   // mask.unsqueeze(1)
  const scores = block.heads_dim ? [...lead, H, T, S] : [...lead, T, S];
  if (shape.length > scores.length) throw new Error(`mask of shape [${mask.shape}] has more dims than the scores [${scores}]`);
  const padded = [...Array(scores.length - shape.length).fill(1), ...shape];
  const Hm = block.heads_dim && padded.at(-3) > 1 ? H : 1;
  if (block.heads_dim) scores[scores.length - 3] = Hm;
  return { kind: MASK_KINDS[block.mask.masked_where], data: broadcastTo(mask.data, padded, scores), Hm };
}

// One projection: nn.Linear (weight (N, K), PyTorch's layout, which linear.wgsl takes) or a
// matrix x @ W with W (K, N), handed over transposed.
function projection(block, param, name, x, rows) {
  if (block.projection === 'matrix') {
    const w = param(name);
    const [K, N] = w.shape;
    const wt = new Float32Array(K * N);
    for (let i = 0; i < K; i++) for (let j = 0; j < N; j++) wt[j * K + i] = w.data[i * N + j];
    return { x, M: rows, K, N, w: wt, bias: null };
  }
  const w = param(`${name}.weight`);
  return { x, M: rows, K: w.shape[1], N: w.shape[0], w: w.data, bias: param(`${name}.bias`, true)?.data ?? null };
}

// Where q, k and v come from: the inputs themselves, a projection each, or one fused projection
// per distinct input whose (B, T, H, 3·D) rows hold q, k and v side by side.
function qkvLayouts(block, plan, input, param) {
  const roles = { q: 'query', k: 'key', v: 'value' };
  const len = { q: plan.T, k: plan.S, v: plan.S }, D = { q: plan.Dk, k: plan.Dk, v: plan.Dv };
  for (const [name, role] of Object.entries(roles)) {
    const x = input(block.inputs[role]);
    const src = `input:${x.name}`;   // each input is uploaded once, however many roles it has
    plan.tensors[src] = x.data;
    if (block.projection === 'none') {
      plan[name] = { buf: src, off: 0, sb: len[name] * D[name], st: D[name], sh: 0 };
    } else if (block.projection === 'fused') {
      const buf = `qkv:${x.name}`, C = plan.H * plan.Dk, chunk = { q: 0, k: 1, v: 2 }[name];
      if (!plan.linears.some((l) => l.name === buf)) {
        plan.linears.push({ ...projection(block, param, block.params[role], src, plan.B * len[name]), name: buf });
      }
      plan[name] = { buf, off: chunk * plan.Dk, sb: len[name] * 3 * C, st: 3 * C, sh: 3 * plan.Dk };
    } else {
      const l = { ...projection(block, param, block.params[role], src, plan.B * len[name]), name: `proj:${name}` };
      plan.linears.push(l);
      plan[name] = { buf: l.name, off: 0, sb: len[name] * l.N, st: l.N, sh: D[name] };
    }
  }
}

// The core's own numbers for a block's positions, from its traced steps (run the scenario with
// trace): ALiBi's float32 slopes (its alibi_bias step's attrs.slopes) and RoPE's cos and sin tables
// (its rope_table steps' values, (T, D) = cat(half, half): the first D/2 columns of each row).
// Nothing here derives them: the core's rule is the one rule (core/tape/ops/positions.cpp).
function tracedStep(result, block, op, pick = () => true) {
  const prefix = block.prefix ?? '';
  const step = (result.steps ?? []).find((x) => x.op === op && x.name.startsWith(prefix) && pick(x));
  if (!step) throw new Error(`the core's result has no ${op} step for ${prefix || 'the module'}: run the scenario with trace, so the GPU reads the core's RoPE tables and ALiBi slopes`);
  return step;
}

const alibiSlopes = (result, block) => Float32Array.from(tracedStep(result, block, 'alibi_bias').attrs.slopes);

function ropeTables(result, block, T, D) {
  const half = D / 2;
  const [cos, sin] = ['cos', 'sin'].map((table) => {
    const step = tracedStep(result, block, 'rope_table', (x) => x.attrs.table === table);
    if (step.shape[0] !== T || step.shape[1] !== D) throw new Error(`the ${table} table ${step.name} is [${step.shape}], not (${T}, ${D})`);
    const out = new Float32Array(T * half);
    for (let t = 0; t < T; t++) out.set(step.data.subarray(t * D, t * D + half), t * half);
    return out;
  });
  return { cos, sin, half };
}

// A block's switches (grouped kv heads, RoPE, ALiBi, the sliding window and its sinks) as plan
// fields. Positions come from the module's `positions` input when the run had one (its ids;
// the causal rule then compares them too, as the core's window_mask does), else they are the row
// indices; they index queries and keys alike, so T must equal S then.
function switchesPlan(block, plan, result) {
  const kvHeads = block.kv_heads ?? block.heads;
  if (!(kvHeads > 0 && block.heads % kvHeads === 0)) throw new Error(`kv_heads (${kvHeads}) must divide heads (${block.heads})`);
  plan.kvGroup = block.heads / kvHeads;
  plan.window = block.window ?? 0;
  plan.sinks = block.sink_tokens ?? 0;
  plan.causal = plan.causal || plan.window > 0;   // the window hides later keys too (core/SCENARIO.md)
  const given = result.inputs.find((i) => i.name === 'positions');
  if (given) {
    if (given.data.length !== plan.T || plan.S !== plan.T) throw new Error(`positions of shape [${given.shape}] must be (T) = (${plan.T}), with as many keys (${plan.S}) as queries`);
    plan.positions = Int32Array.from(given.data);
  }
  plan.alibi = block.alibi ? alibiSlopes(result, block) : null;
  if (!block.rope) return;
  if (plan.S !== plan.T || plan.Dk % 2 !== 0) throw new Error(`RoPE needs as many keys (${plan.S}) as queries (${plan.T}) and an even head dim (${plan.Dk})`);
  plan.rope = ropeTables(result, block, plan.T, plan.Dk);
  // q and k rotated into contiguous (B, T, heads, D) buffers, which the attention kernels then read.
  plan.ropes = [['q', plan.H], ['k', kvHeads]].map(([name, heads]) => {
    const src = plan[name], D = plan.Dk, rows = name === 'q' ? plan.T : plan.S;
    plan[name] = { buf: `rope:${name}`, off: 0, sb: rows * heads * D, st: heads * D, sh: D };
    return { name: `rope:${name}`, src, heads, rows };
  });
}

// The attention problem of a core result run with return_inputs and return_params: per-head
// layouts of q, k, v, o inside flat buffers, the projections that produce them, the mask, the
// scale. Pure data, no GPU objects. Whether train-mode dropout rules it out is gpuSupport's
// question (it needs the scenario); this throws when the result has no block the GPU computes.
export function planFromResult(result) {
  const block = gpuBlock(result);
  const support = gpuSupport({ module: result.module }, result);
  if (!support.ok) throw new Error(support.reason);
  const input = (name) => {
    const x = result.inputs?.find((i) => i.name === name);
    if (!x) throw new Error(`the core's result has no input '${name}' (run with return_inputs)`);
    return x;
  };
  const param = (name, optional = false) => {
    const w = result.params?.find((p) => p.name === name) ?? null;
    if (!w && !optional) throw new Error(`the core's result has no parameter '${name}' (run with return_params)`);
    return w;
  };
  const xq = input(block.inputs.query), xk = input(block.inputs.key);
  const lead = xq.shape.slice(0, -2);
  const plan = {
    module: result.module, output: block.output, weightsOutput: block.weights_output,
    B: product(lead), H: block.heads, T: xq.shape.at(-2), S: xk.shape.at(-2), Dk: block.d_k, Dv: block.d_v,
    scale: block.scale.value, scaleMul: block.scale.op === 'mul', causal: block.causal, fill: fillOf(block),
    tensors: {}, linears: [], out: null, mask: null,
    kvGroup: 1, window: 0, sinks: 0, positions: null, alibi: null, rope: null, ropes: [],
  };
  if (product(xk.shape.slice(0, -2)) !== plan.B) throw new Error(`queries [${xq.shape}] and keys [${xk.shape}] differ in their leading dims`);
  qkvLayouts(block, plan, input, param);
  switchesPlan(block, plan, result);
  const { B, H, T, S, Dv } = plan;
  plan.o = { off: 0, sb: T * H * Dv, st: H * Dv, sh: Dv, size: B * T * H * Dv };
  plan.outShape = [...xq.shape.slice(0, -1), H * Dv];
  plan.weightsShape = block.heads_dim ? [...lead, H, T, S] : [...lead, T, S];
  if (block.params.out) {
    const w = param(`${block.params.out}.weight`);
    plan.out = { w: w.data, N: w.shape[0], K: w.shape[1], bias: param(`${block.params.out}.bias`, true)?.data ?? null };
    plan.outShape = [...xq.shape.slice(0, -1), w.shape[0]];
  }
  const mask = block.mask && result.inputs.find((i) => i.name === block.mask.input);
  if (mask) plan.mask = maskPlan(block, mask, lead, H, T, S);
  return plan;
}

// Params (attention-common.wgsl) as [{name, type}], read from the struct's text: the WGSL is the
// one list of fields, so a field added there is one the JS side fills (or leaves 0).
function paramLayout(wgsl) {
  const body = /struct\s+Params\s*\{([^}]*)\}/.exec(wgsl)?.[1];
  if (!body) throw new Error('attention-common.wgsl has no struct Params');
  const fields = body.split(',').map((f) => f.trim()).filter(Boolean).map((f) => {
    const [, name, type] = /^(\w+)\s*:\s*(u32|f32)$/.exec(f) ?? [];
    if (!name) throw new Error(`Params field '${f}': the packing here knows only u32 and f32 scalars`);
    return { name, type };
  });
  if ((fields.length * 4) % 16) throw new Error(`Params has ${fields.length} fields: a uniform needs a multiple of 4`);
  return fields;
}

function packParams(layout, values) {
  const buf = new ArrayBuffer(layout.length * 4);
  const u = new Uint32Array(buf), f = new Float32Array(buf);
  const names = new Set(layout.map((field) => field.name));
  for (const key of Object.keys(values)) if (!names.has(key)) throw new Error(`Params has no field ${key}`);
  layout.forEach(({ name, type }, i) => { if (type === 'f32') f[i] = values[name] ?? 0; else u[i] = values[name] ?? 0; });
  return new Uint8Array(buf);
}

// Params values of a plan; extra: the weights kernel's choice of heads (wb0, wh0, wnb, wnh).
function paramValues(plan, extra = {}) {
  const L = (name, l) => ({ [`${name}_off`]: l.off, [`${name}_sb`]: l.sb, [`${name}_st`]: l.st, [`${name}_sh`]: l.sh });
  const { T, S, mask } = plan;
  return {
    B: plan.B, H: plan.H, T, S, Dk: plan.Dk, Dv: plan.Dv, causal: plan.causal ? 1 : 0, mask_kind: mask?.kind ?? 0,
    ...L('q', plan.q), ...L('k', plan.k), ...L('v', plan.v), ...L('o', plan.o),
    m_sb: mask ? mask.Hm * T * S : 0, m_sh: mask && mask.Hm > 1 ? T * S : 0, m_st: S, m_ss: 1,
    scale: plan.scale, scale_mul: plan.scaleMul ? 1 : 0,
    fill: Number.isFinite(plan.fill) ? plan.fill : 0, masked_fill: Number.isFinite(plan.fill) ? 1 : 0,
    kv_group: plan.kvGroup, alibi: plan.alibi ? 1 : 0, window: plan.window, sinks: plan.sinks,
    positional: plan.positions ? 1 : 0, ...extra,
  };
}

// A compute pipeline of WGSL `code`; a shader that does not validate throws its message.
// Compiled asynchronously: a synchronous createComputePipeline compiles on the GPU process's main
// thread, which also rasters the page (SwiftShader: seconds without a frame at start-up).
async function compilePipeline(device, code, entryPoint = 'main') {
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const error = await device.popErrorScope();
  if (error) throw new Error(`WebGPU shader error: ${error.message}`);
  return device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint } });
}

async function loadText(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`cannot load ${url}: HTTP ${r.status}`);
  return r.text();
}

// One device, its pipelines and the Params layout; a plan runs in one command buffer:
//   const gpu = await GpuAttention.create({ onLost });   // throws when WebGPU is absent
//   const result = core.run({ ...scenario, return_inputs: true, return_params: true });
//   if (gpuSupport(scenario, result).ok) r = await gpu.run(planFromResult(result), { weights: { b: 0, h: 0 } });
//   r.output, r.attentionWeights (the chosen heads), r.ms
export class GpuAttention {
  static adapter() { return gpuAdapter(); }
  static adapterName(adapter) { return adapterName(adapter); }

  // The device and its pipelines (the fused and RoPE kernels' on first use: lazyPipeline), on `adapter`
  // (GpuAttention.adapter() when not given): the shader compiles are the start-up's cost (on
  // SwiftShader 0.5 s of CPU in the GPU process, and 1.8 s more for the fused kernel).
  static async create({ onLost, adapter } = {}) {
    adapter ??= await GpuAttention.adapter();
    const limits = {};
    for (const k of ['maxStorageBufferBindingSize', 'maxBufferSize']) limits[k] = adapter.limits[k];
    const device = await adapter.requestDevice({ requiredLimits: limits });
    const [common, linear, weights, naive, loopCap] = await Promise.all(
      [SHADERS.common, SHADERS.linear, SHADERS.weights, SHADERS.naive, SHADERS.loopCap].map(loadText));
    const gpu = new GpuAttention(adapter, device, onLost);
    gpu.paramLayout = paramLayout(common);
    const pipeline = (code, entryPoint) => compilePipeline(device, code, entryPoint);
    const naiveCode = `${common}\n${naive}`;
    gpu.commonCode = common;
    const [pLinear, pWeights, pScores, pNormalize, pWeighted, pLoopCap] = await Promise.all([
      pipeline(linear), pipeline(`${common}\n${weights}`),
      pipeline(naiveCode, 'scores'), pipeline(naiveCode, 'normalize_rows'), pipeline(naiveCode, 'weighted_sum'), pipeline(loopCap)]);
    gpu.pipelines = { linear: pLinear, fused: null, weights: pWeights, scores: pScores, normalizeRows: pNormalize, weightedSum: pWeighted, rope: null };
    gpu.loopCap = await gpu.measureLoopCap(pLoopCap);
    return gpu;
  }

  // The pipelines fetched and compiled on the first plan that needs them, once each: the fused
  // kernel (on SwiftShader it alone takes 1.8 s of the 2.3 s the pipelines take, and a page
  // checking a few tokens never needs it) and the rotary positions (RoPE blocks only).
  lazyPipeline(name) {
    this.compiles[name] ??= loadText(SHADERS[name])
      .then((code) => compilePipeline(this.device, name === 'fused' ? `${this.commonCode}\n${code}` : code))
      .then((p) => { this.pipelines[name] = p; return p; });
    return this.compiles[name];
  }

  // The lazy pipelines `plan` runs with (naive: the three-pass kernels instead of the fused one).
  async pipelinesFor(plan, naive) {
    if (this.usesFused(plan, naive)) await this.lazyPipeline('fused');
    if (plan.rope) await this.lazyPipeline('rope');
  }

  // Whether run(plan, {naive}) / timeAttention take the fused kernel.
  usesFused(plan, naive) { return !naive && this.fusedFits(plan); }

  constructor(adapter, device, onLost) {
    this.adapterName = GpuAttention.adapterName(adapter);
    this.device = device;
    this.compiles = {};   // lazyPipeline()'s compiles, once started
    this.lost = false;
    device.lost.then((e) => { this.lost = true; onLost?.(e); });
    device.addEventListener?.('uncapturederror', (e) => onLost?.({ message: `WebGPU error: ${e.error?.message ?? e}` }));
  }

  buffer(data, usage = GPUBufferUsage.STORAGE) {
    const size = Math.max(4, Math.ceil((data ? data.byteLength : 0) / 4) * 4);
    const b = this.device.createBuffer({ size, usage: usage | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC, mappedAtCreation: !!data });
    if (data) { new Uint8Array(b.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)); b.unmap(); }
    return b;
  }

  empty(floats) {
    return this.device.createBuffer({ size: Math.max(4, floats * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  }

  params(plan, extra) {
    return this.buffer(packParams(this.paramLayout, paramValues(plan, extra)), GPUBufferUsage.UNIFORM);
  }

  // buffers: an array (binding = index) or {binding: buffer} for entry points using only some.
  bind(pipeline, buffers) {
    return this.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: Object.entries(buffers).map(([binding, buffer]) => ({ binding: Number(binding), resource: { buffer } })),
    });
  }

  dispatch(pass, pipeline, buffers, x, y = 1, z = 1) {
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, this.bind(pipeline, buffers));
    pass.dispatchWorkgroups(x, y, z);
  }

  linear(pass, x, w, bias, out, M, N, K, keep) {
    const dims = keep(this.buffer(new Uint32Array([M, N, K, bias ? 1 : 0]), GPUBufferUsage.UNIFORM));
    const b = bias ?? keep(this.empty(1));
    this.dispatch(pass, this.pipelines.linear, [dims, x, w, b, out], Math.ceil(N / 32), Math.ceil(M / 32));   // 32 x 32 tiles (linear.wgsl)
  }

  // Uploads a plan's inputs and encodes its projections into `pass`; returns the buffers the
  // attention kernels read and write. keep(buffer) registers a buffer to destroy afterwards.
  prepare(pass, plan, keep) {
    const bufs = {};
    for (const [name, data] of Object.entries(plan.tensors)) bufs[name] = keep(this.buffer(data));
    for (const l of plan.linears) {
      const w = keep(this.buffer(l.w)), bias = l.bias ? keep(this.buffer(l.bias)) : null;
      bufs[l.name] = keep(this.empty(l.M * l.N));
      this.linear(pass, bufs[l.x], w, bias, bufs[l.name], l.M, l.N, l.K, keep);
    }
    if (plan.rope) {
      const cos = keep(this.buffer(plan.rope.cos)), sin = keep(this.buffer(plan.rope.sin)), { half } = plan.rope;
      for (const r of plan.ropes) {
        bufs[r.name] = keep(this.empty(plan.B * r.rows * r.heads * 2 * half));
        const { off, sb, st, sh } = r.src;
        const dims = keep(this.buffer(new Uint32Array([r.rows, r.heads, half, 0, off, sb, st, sh]), GPUBufferUsage.UNIFORM));
        this.dispatch(pass, this.pipelines.rope, [dims, bufs[r.src.buf], cos, sin, bufs[r.name]], Math.ceil((r.heads * half) / 64), r.rows, plan.B);
      }
    }
    return {
      q: bufs[plan.q.buf], k: bufs[plan.k.buf], v: bufs[plan.v.buf],
      mask: keep(plan.mask ? this.buffer(plan.mask.data) : this.empty(1)),
      pos: keep(plan.positions ? this.buffer(plan.positions) : this.empty(1)),
      slopes: keep(plan.alibi ? this.buffer(plan.alibi) : this.empty(1)),
      o: keep(this.empty(plan.o.size)),
      params: keep(this.params(plan)),
      P: null,
    };
  }

  // The iterations one loop nest may run per invocation here (loop-cap.wgsl): Infinity where all
  // it asked for ran, 65,535 in Firefox 153, which ends longer nests silently.
  async measureLoopCap(pipeline) {
    const out = this.empty(1);
    const enc = this.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    this.dispatch(pass, pipeline, [out], 1);
    pass.end();
    this.device.queue.submit([enc.finish()]);
    const n = new Uint32Array((await this.read(out, 1)).buffer)[0];
    out.destroy();
    return n < LOOP_PROBE ? n : Infinity;
  }

  // Whether the fused kernel's loop nest (per 16-key tile: the key and value staging, then per key
  // the score's Dk and the output's Dv iterations) stays under half the loop cap; else the naive
  // passes run, whose loops are O(S) or O(D) per invocation.
  fusedFits({ S, Dk, Dv }) {
    const perTile = 16 * (Dk + Dv + 1) + 2 * Math.ceil((16 * Math.max(Dk, Dv)) / 64);
    return 2 * Math.ceil(S / 16) * perTile < this.loopCap;
  }

  // The attention itself, fused or as the naive three passes (their (B, H, T, S) buffer made on
  // first use): what run() computes and timeAttention() times. Returns 'fused' or 'naive'.
  encodeAttention(pass, plan, bufs, naive, keep) {
    const { B, H, T, S, Dv } = plan;
    const { params, q, k, v, mask, o, pos, slopes } = bufs;
    if (this.usesFused(plan, naive)) {
      this.dispatch(pass, this.pipelines.fused, [params, q, k, v, mask, o, pos, slopes], Math.ceil(T / 64), H, B);
      return 'fused';
    }
    bufs.P ??= keep(this.empty(B * H * T * S));
    // Each entry point's 'auto' layout holds only the bindings it uses.
    this.dispatch(pass, this.pipelines.scores, { 0: params, 1: q, 2: k, 4: mask, 5: bufs.P, 7: pos, 8: slopes }, Math.ceil(S / 8), Math.ceil(T / 8), B * H);
    this.dispatch(pass, this.pipelines.normalizeRows, { 0: params, 5: bufs.P }, Math.ceil((B * H * T) / 64));
    this.dispatch(pass, this.pipelines.weightedSum, { 0: params, 3: v, 5: bufs.P, 6: o }, Math.ceil(Dv / 8), Math.ceil(T / 8), B * H);
    return 'naive';
  }

  // The weights of the chosen heads ('all' or {b, h}): {buffer, count, shape}.
  encodeWeights(pass, plan, bufs, weights, keep) {
    const all = weights === 'all';
    const sel = all ? { wb0: 0, wh0: 0, wnb: plan.B, wnh: plan.H } : { wb0: weights.b, wh0: weights.h, wnb: 1, wnh: 1 };
    if (sel.wb0 + sel.wnb > plan.B || sel.wh0 + sel.wnh > plan.H) throw new Error(`no head ${weights.h} of batch item ${weights.b}`);
    // Its loop nest per query row: every key's score (Dk iterations). Past the cap it would be wrong.
    const nest = plan.S * (plan.Dk + 1);
    if (2 * nest >= this.loopCap) {
      throw new Error(`the attention weights of ${plan.S} keys at head dim ${plan.Dk} take ${nest} loop iterations per GPU thread; this WebGPU ends a loop after ${this.loopCap}`);
    }
    const count = sel.wnb * sel.wnh * plan.T * plan.S;
    const buffer = keep(this.empty(count));
    this.dispatch(pass, this.pipelines.weights, [keep(this.params(plan, sel)), bufs.q, bufs.k, bufs.mask, buffer, bufs.pos, bufs.slopes], Math.ceil(plan.T / 64), sel.wnh, sel.wnb);
    return { buffer, count, shape: all ? plan.weightsShape : [plan.T, plan.S] };
  }

  async read(buffer, floats) {
    const staging = this.device.createBuffer({ size: Math.max(4, floats * 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(buffer, 0, staging, 0, Math.max(4, floats * 4));
    this.device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = new Float32Array(staging.getMappedRange().slice(0, floats * 4));
    staging.unmap();
    staging.destroy();
    return out;
  }

  // Runs a plan (planFromResult). weights: null, 'all', or {b, h}: which heads' weights to return.
  // naive: use the three-pass kernels instead of the fused one (for comparison).
  async run(plan, { weights = null, naive = false } = {}) {
    if (this.lost) throw new Error('the WebGPU device was lost');
    await this.pipelinesFor(plan, naive);
    const t0 = performance.now();
    const temps = [];
    const keep = (b) => { temps.push(b); return b; };
    this.device.pushErrorScope('out-of-memory');
    this.device.pushErrorScope('validation');
    let scopes = 2;
    const popScopes = async () => {
      const errors = [];
      for (; scopes > 0; scopes--) errors.push(await this.device.popErrorScope());
      return errors.find(Boolean) ?? null;
    };
    try {
      const enc = this.device.createCommandEncoder();
      const pass = enc.beginComputePass();
      const bufs = this.prepare(pass, plan, keep);
      const kernel = this.encodeAttention(pass, plan, bufs, naive, keep);
      const w = weights ? this.encodeWeights(pass, plan, bufs, weights, keep) : null;
      let out = bufs.o, outCount = plan.o.size;
      if (plan.out) {
        outCount = plan.B * plan.T * plan.out.N;
        out = keep(this.empty(outCount));
        const ow = keep(this.buffer(plan.out.w)), bias = plan.out.bias ? keep(this.buffer(plan.out.bias)) : null;
        this.linear(pass, bufs.o, ow, bias, out, plan.B * plan.T, plan.out.N, plan.out.K, keep);
      }
      pass.end();
      this.device.queue.submit([enc.finish()]);
      const [output, attentionWeights] = await Promise.all([this.read(out, outCount), w ? this.read(w.buffer, w.count) : null]);
      const error = await popScopes();
      if (error) throw new Error(`WebGPU error: ${error.message}`);
      return {
        output: { shape: plan.outShape, data: output },
        attentionWeights: attentionWeights && { shape: w.shape, data: attentionWeights },
        kernel,
        ms: performance.now() - t0,
      };
    } finally {
      if (scopes > 0) await popScopes().catch(() => null);
      for (const b of temps) b.destroy();
    }
  }

  // Times the attention kernels alone (projections done once beforehand, nothing read back):
  // fused, or naive three-pass. Returns the per-run milliseconds of `repeats` runs after a warm-up.
  async timeAttention(plan, { naive = false, repeats = 5 } = {}) {
    await this.pipelinesFor(plan, naive);
    const temps = [];
    const keep = (b) => { temps.push(b); return b; };
    try {
      const enc0 = this.device.createCommandEncoder();
      const pass0 = enc0.beginComputePass();
      const bufs = this.prepare(pass0, plan, keep);
      pass0.end();
      this.device.queue.submit([enc0.finish()]);
      await this.device.queue.onSubmittedWorkDone();
      const once = async () => {
        const enc = this.device.createCommandEncoder();
        const pass = enc.beginComputePass();
        this.encodeAttention(pass, plan, bufs, naive, keep);
        pass.end();
        const t0 = performance.now();
        this.device.queue.submit([enc.finish()]);
        await this.device.queue.onSubmittedWorkDone();
        return performance.now() - t0;
      };
      await once();  // warm-up
      const times = [];
      for (let i = 0; i < repeats; i++) times.push(await once());
      return times;
    } finally {
      for (const b of temps) b.destroy();
    }
  }

  destroy() { this.device.destroy(); }
}
