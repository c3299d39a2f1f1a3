// The attention hot path on WebGPU: Q/K/V projections (linear.wgsl), fused flash-style attention
// (attention-fused.wgsl), the displayed heads' weights (attention-weights.wgsl) and the output
// projection, for the seeds' multi-head modules. It computes from the very numbers the WASM core
// used (a core run with return_inputs + return_params), so the two can be compared value by value.
//
//   const gpu = await GpuAttention.create({ onLost });   // throws when WebGPU is absent
//   const r = await gpu.runScenario(core, scenario, { weights: { b: 0, h: 0 } });
//   r.output, r.attentionWeights (the chosen heads), r.ms
//
// gpuSupport(scenario) tells which scenarios the GPU path covers (and why not, otherwise, in the
// page's language: ../i18n.js).

import { t } from '../i18n.js';

const SHADERS = {
  common: new URL('./attention-common.wgsl', import.meta.url),
  linear: new URL('./linear.wgsl', import.meta.url),
  fused: new URL('./attention-fused.wgsl', import.meta.url),
  weights: new URL('./attention-weights.wgsl', import.meta.url),
  naive: new URL('./attention-naive.wgsl', import.meta.url),
};

export const MAX_HEAD_DIM = 128;

const fround = Math.fround;

// Per module: how its parameters and inputs map onto projections + attention (see each seed).
const MODULES = {
  // seed 000: W_Q, W_K, W_V, W_O; scores / (d_head ** 0.5); mask == 0 -> -inf
  MultiHeadAttention: (c) => ({
    heads: c.num_heads, Dk: c.d_model / c.num_heads, inputs: ['Q', 'K', 'V'], proj: ['W_Q', 'W_K', 'W_V'], out: 'W_O',
    scale: fround(Math.sqrt(c.d_model / c.num_heads)), mask: 'zero_is_masked',
  }),
  // seed 003: w_q, w_k, w_v, w_o; / torch.sqrt(torch.tensor(d_k)); mask True -> -1e9
  SplitHeadsMultiHeadAttention: (c) => ({
    heads: c.num_heads, Dk: c.d_model / c.num_heads, inputs: ['query', 'key', 'value'], proj: ['w_q', 'w_k', 'w_v'], out: 'w_o',
    scale: fround(Math.sqrt(c.d_model / c.num_heads)), mask: 'true_is_masked', maskHeadAxis: true, dropout: c.dropout ?? 0,
  }),
  // seed 004: W_query, W_key, W_value (+ qkv_bias), out_proj; causal; / keys.shape[-1]**0.5
  CausalMultiHeadAttention: (c) => ({
    heads: c.num_heads, Dk: c.d_out / c.num_heads, inputs: ['x', 'x', 'x'], proj: ['W_query', 'W_key', 'W_value'], out: 'out_proj',
    scale: fround(Math.sqrt(c.d_out / c.num_heads)), causal: true, dropout: c.dropout,
  }),
  // seed 001: linear_q, linear_k (dim_k), linear_v (dim_v), no bias, no output projection; * 1/sqrt(dk)
  MultiHeadSelfAttention: (c) => {
    const nh = c.num_heads ?? 8;
    return { heads: nh, Dk: c.dim_k / nh, Dv: c.dim_v / nh, inputs: ['x', 'x', 'x'], proj: ['linear_q', 'linear_k', 'linear_v'],
      scale: 1 / fround(1 / Math.sqrt(c.dim_k / nh)) };
  },
  // seed 002: one qkv_proj, rows (B, T, H, 3·D) chunked into q, k, v; * head_dim ** -0.5; fc_out
  FusedMultiHeadSelfAttention: (c) => ({
    heads: c.num_heads, Dk: c.emb_dim / c.num_heads, inputs: ['x'], proj: ['qkv_proj'], out: 'fc_out', fused: true,
    scale: 1 / fround((c.emb_dim / c.num_heads) ** -0.5),
  }),
  // seed 004, one head: CausalAttention (W_query, W_key, W_value: nn.Linear; causal; no out_proj)
  CausalAttention: (c) => ({
    heads: 1, Dk: c.d_out, inputs: ['x', 'x', 'x'], proj: ['W_query', 'W_key', 'W_value'],
    scale: fround(Math.sqrt(c.d_out)), causal: true, dropout: c.dropout, weightsRank: 3,
  }),
  // seed 004: SelfAttention_v2 (nn.Linear) and SelfAttention_v1 (x @ W, W a (d_in, d_out) matrix); x is (T, d_in)
  SelfAttention_v2: (c) => ({
    heads: 1, Dk: c.d_out, inputs: ['x', 'x', 'x'], proj: ['W_query', 'W_key', 'W_value'], scale: fround(Math.sqrt(c.d_out)), rank2: true,
  }),
  SelfAttention_v1: (c) => ({
    heads: 1, Dk: c.d_out, inputs: ['x', 'x', 'x'], proj: ['W_query', 'W_key', 'W_value'], scale: fround(Math.sqrt(c.d_out)), rank2: true, matrices: true,
  }),
  // seed 003: scaled_dot_product_attention(Q, K, V, mask): no parameters, leading dims = batch
  scaled_dot_product_attention: () => ({ heads: 1, inputs: ['Q', 'K', 'V'], proj: null, mask: 'true_is_masked', plain: true }),
};

// {ok: true} or {ok: false, reason} for a scenario object.
export function gpuSupport(scenario) {
  const make = MODULES[scenario.module];
  if (!make) return { ok: false, reason: t('gpu.noPath', { module: scenario.module }) };
  const m = make(scenario.config ?? {});
  if (scenario.train && m.dropout > 0) return { ok: false, reason: t('gpu.dropout') };
  const dv = m.Dv ?? m.Dk;
  if (m.Dk > MAX_HEAD_DIM || dv > MAX_HEAD_DIM) return { ok: false, reason: t('gpu.headDim', { dim: Math.max(m.Dk, dv), max: MAX_HEAD_DIM }) };
  return { ok: true };
}

// Mask values broadcast (NumPy rules) from `shape` to `target`: a dense Float32Array.
function broadcastTo(data, shape, target) {
  if (shape.length > target.length) throw new Error(`mask of shape [${shape}] has more dims than [${target}]`);
  const pad = [...Array(target.length - shape.length).fill(1), ...shape];
  pad.forEach((d, i) => { if (d !== 1 && d !== target[i]) throw new Error(`mask of shape [${shape}] cannot broadcast to [${target}]`); });
  const strides = new Array(pad.length);
  for (let i = pad.length - 1, s = 1; i >= 0; i--) { strides[i] = pad[i] === 1 ? 0 : s; s *= pad[i]; }
  const n = target.reduce((a, b) => a * b, 1);
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

const PARAM_FIELDS = ['B', 'H', 'T', 'S', 'Dk', 'Dv', 'causal', 'mask_kind',
  'q_off', 'q_sb', 'q_st', 'q_sh', 'k_off', 'k_sb', 'k_st', 'k_sh', 'v_off', 'v_sb', 'v_st', 'v_sh',
  'o_off', 'o_sb', 'o_st', 'o_sh', 'm_sb', 'm_sh', 'm_st', 'm_ss', 'scale', 'fill', 'wb0', 'wh0', 'wnb', 'wnh', 'pad0', 'pad1'];

function paramsBuffer(p) {
  const buf = new ArrayBuffer(PARAM_FIELDS.length * 4);
  const u = new Uint32Array(buf), f = new Float32Array(buf);
  PARAM_FIELDS.forEach((k, i) => { if (k === 'scale' || k === 'fill') f[i] = p[k] ?? 0; else u[i] = p[k] ?? 0; });
  return buf;
}

// The attention problem of a core result: per-head layouts of q, k, v, o inside flat buffers,
// plus the projections that produce them. Pure data: no GPU objects.
export function planFromResult(scenario, result) {
  const support = gpuSupport(scenario);
  if (!support.ok) throw new Error(support.reason);
  const m = MODULES[scenario.module](scenario.config ?? {});
  const input = (name) => {
    const t = result.inputs.find((i) => i.name === name);
    if (!t) throw new Error(`the core's result has no input '${name}' (run with return_inputs)`);
    return t;
  };
  const param = (name) => result.params.find((p) => p.name === name) ?? null;
  const plan = { module: scenario.module, linears: [], out: null };
  if (m.plain) {
    const [Q, K, V] = m.inputs.map(input);
    const T = Q.shape.at(-2), S = K.shape.at(-2), Dk = Q.shape.at(-1), Dv = V.shape.at(-1);
    const lead = Q.shape.slice(0, -2);
    const B = lead.reduce((a, b) => a * b, 1);
    Object.assign(plan, { B, H: 1, T, S, Dk, Dv, scale: fround(Math.sqrt(fround(Dk))), causal: false, outShape: [...lead, T, Dv], weightsShape: [...lead, T, S] });
    plan.q = { src: Q.data, off: 0, sb: T * Dk, st: Dk, sh: 0 };
    plan.k = { src: K.data, off: 0, sb: S * Dk, st: Dk, sh: 0 };
    plan.v = { src: V.data, off: 0, sb: S * Dv, st: Dv, sh: 0 };
    plan.o = { off: 0, sb: T * Dv, st: Dv, sh: 0, size: B * T * Dv };
    const mask = result.inputs.find((i) => i.name === 'mask');
    if (mask) plan.mask = { kind: 2, fill: -1e9, data: broadcastTo(mask.data, mask.shape, [...lead, T, S]), Hm: 1 };
    return plan;
  }
  const H = m.heads, Dk = m.Dk, Dv = m.Dv ?? m.Dk;
  const xq = input(m.inputs[0]);
  const [B, T] = m.rank2 ? [1, xq.shape[0]] : xq.shape;
  const xkv = m.inputs.length > 1 ? input(m.inputs[1]) : xq;
  const S = m.rank2 ? xkv.shape[0] : xkv.shape[1];
  Object.assign(plan, { B, H, T, S, Dk, Dv, scale: m.scale, causal: !!m.causal });
  const lin = (name, x, rows) => {
    if (m.matrices) {  // x @ W with W (d_in, d_out): the kernel takes Wᵀ, (d_out, d_in)
      const w = param(name);
      const [K, N] = w.shape;
      const wt = new Float32Array(K * N);
      for (let i = 0; i < K; i++) for (let j = 0; j < N; j++) wt[j * K + i] = w.data[i * N + j];
      return { x: x.data, M: rows, K, N, w: wt, bias: null };
    }
    const w = param(`${name}.weight`);
    if (!w) throw new Error(`the core's result has no parameter '${name}.weight' (run with return_params)`);
    const bias = param(`${name}.bias`);
    return { x: x.data, M: rows, K: w.shape[1], N: w.shape[0], w: w.data, bias: bias?.data ?? null };
  };
  if (m.fused) {
    const C = H * Dk;
    plan.linears.push({ ...lin(m.proj[0], xq, B * T), name: 'qkv' });
    plan.q = { buf: 'qkv', off: 0, sb: T * 3 * C, st: 3 * C, sh: 3 * Dk };
    plan.k = { buf: 'qkv', off: Dk, sb: T * 3 * C, st: 3 * C, sh: 3 * Dk };
    plan.v = { buf: 'qkv', off: 2 * Dk, sb: T * 3 * C, st: 3 * C, sh: 3 * Dk };
  } else {
    const xs = m.inputs.map(input);
    ['q', 'k', 'v'].forEach((name, i) => {
      const rows = i === 0 ? B * T : B * S;
      plan.linears.push({ ...lin(m.proj[i], xs[i], rows), name });
      const width = plan.linears[i].N, D = i === 2 ? Dv : Dk, len = i === 0 ? T : S;
      plan[name] = { buf: name, off: 0, sb: len * width, st: width, sh: D };
    });
  }
  plan.o = { off: 0, sb: T * H * Dv, st: H * Dv, sh: Dv, size: B * T * H * Dv };
  plan.outShape = m.rank2 ? [T, H * Dv] : [B, T, H * Dv];
  plan.weightsShape = m.rank2 ? [T, S] : m.weightsRank === 3 ? [B, T, S] : [B, H, T, S];
  if (m.out) {
    const w = param(`${m.out}.weight`);
    plan.out = { w: w.data, N: w.shape[0], K: w.shape[1], bias: param(`${m.out}.bias`)?.data ?? null };
    plan.outShape = [B, T, w.shape[0]];
  }
  const mask = result.inputs.find((i) => i.name === 'mask');
  if (mask && m.mask) {
    if (m.maskHeadAxis) {  // seed 003: mask (B, T, S) -> mask.unsqueeze(1)
      plan.mask = { kind: 2, fill: -1e9, data: broadcastTo(mask.data, [mask.shape[0], 1, ...mask.shape.slice(1)], [B, 1, T, S]), Hm: 1 };
    } else {  // seed 000: broadcast against scores (B, H, T, S), right-aligned as PyTorch does
      if (mask.shape.length > 4) throw new Error(`mask of shape [${mask.shape}] has more than 4 dims`);
      const padded = [...Array(4 - mask.shape.length).fill(1), ...mask.shape];
      const Hm = padded[1] > 1 ? H : 1;
      plan.mask = { kind: 1, fill: 0, data: broadcastTo(mask.data, padded, [B, Hm, T, S]), Hm };
    }
  }
  return plan;
}

async function loadText(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`cannot load ${url}: HTTP ${r.status}`);
  return r.text();
}

export class GpuAttention {
  // Throws an Error saying why when WebGPU is not there (no navigator.gpu, no adapter); its `key`
  // names the message, so the page can show it again in another language.
  static async create({ onLost } = {}) {
    const absent = (key) => Object.assign(new Error(t(key)), { key });
    if (typeof navigator === 'undefined' || !navigator.gpu) throw absent('gpu.noNavigator');
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw absent('gpu.noAdapter');
    const limits = {};
    for (const k of ['maxStorageBufferBindingSize', 'maxBufferSize']) limits[k] = adapter.limits[k];
    const device = await adapter.requestDevice({ requiredLimits: limits });
    const [common, linear, fused, weights, naive] = await Promise.all(
      [SHADERS.common, SHADERS.linear, SHADERS.fused, SHADERS.weights, SHADERS.naive].map(loadText));
    const gpu = new GpuAttention(adapter, device, onLost);
    device.pushErrorScope('validation');
    const module = (code) => device.createShaderModule({ code });
    const pipeline = (code, entryPoint = 'main') => device.createComputePipeline({ layout: 'auto', compute: { module: module(code), entryPoint } });
    gpu.pipelines = {
      linear: pipeline(linear),
      fused: pipeline(`${common}\n${fused}`),
      weights: pipeline(`${common}\n${weights}`),
      scores: pipeline(`${common}\n${naive}`, 'scores'),
      softmax: pipeline(`${common}\n${naive}`, 'softmax'),
      weightedSum: pipeline(`${common}\n${naive}`, 'weighted_sum'),
    };
    const error = await device.popErrorScope();
    if (error) throw new Error(`WebGPU shader error: ${error.message}`);
    return gpu;
  }

  constructor(adapter, device, onLost) {
    const info = adapter.info ?? {};
    this.adapterName = [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' ') || 'WebGPU adapter';
    this.device = device;
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

  linear(pass, x, w, bias, out, M, N, K, temps) {
    const dims = this.buffer(new Uint32Array([M, N, K, bias ? 1 : 0]), GPUBufferUsage.UNIFORM);
    const b = bias ?? this.empty(1);
    temps.push(dims, b);
    this.dispatch(pass, this.pipelines.linear, [dims, x, w, b, out], Math.ceil(N / 32), Math.ceil(M / 32));   // 32 x 32 tiles (linear.wgsl)
  }

  params(plan, extra = {}) {
    const L = (name, l) => ({ [`${name}_off`]: l.off, [`${name}_sb`]: l.sb, [`${name}_st`]: l.st, [`${name}_sh`]: l.sh });
    const mask = plan.mask;
    const T = plan.T, S = plan.S;
    return paramsBuffer({
      B: plan.B, H: plan.H, T, S, Dk: plan.Dk, Dv: plan.Dv, causal: plan.causal ? 1 : 0, mask_kind: mask?.kind ?? 0,
      ...L('q', plan.q), ...L('k', plan.k), ...L('v', plan.v), ...L('o', plan.o),
      m_sb: mask ? mask.Hm * T * S : 0, m_sh: mask && mask.Hm > 1 ? T * S : 0, m_st: S, m_ss: 1,
      scale: plan.scale, fill: mask?.fill ?? 0, ...extra,
    });
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
      const bufs = {};
      for (const l of plan.linears) {
        const x = keep(this.buffer(l.x)), w = keep(this.buffer(l.w)), bias = l.bias ? keep(this.buffer(l.bias)) : null;
        bufs[l.name] = keep(this.empty(l.M * l.N));
        this.linear(pass, x, w, bias, bufs[l.name], l.M, l.N, l.K, temps);
      }
      const src = (l) => (l.src ? keep(this.buffer(l.src)) : bufs[l.buf]);
      const [q, k, v] = [src(plan.q), src(plan.k), src(plan.v)];
      const mask = plan.mask ? keep(this.buffer(plan.mask.data)) : keep(this.empty(1));
      const o = keep(this.empty(plan.o.size));
      const params = keep(this.buffer(new Uint8Array(this.params(plan)), GPUBufferUsage.UNIFORM));
      if (naive) {
        const P = keep(this.empty(plan.B * plan.H * plan.T * plan.S));
        // Each entry point's 'auto' layout holds only the bindings it uses.
        this.dispatch(pass, this.pipelines.scores, { 0: params, 1: q, 2: k, 4: mask, 5: P }, Math.ceil(plan.S / 8), Math.ceil(plan.T / 8), plan.B * plan.H);
        this.dispatch(pass, this.pipelines.softmax, { 0: params, 5: P }, Math.ceil((plan.B * plan.H * plan.T) / 64));
        this.dispatch(pass, this.pipelines.weightedSum, { 0: params, 3: v, 5: P, 6: o }, Math.ceil(plan.Dv / 8), Math.ceil(plan.T / 8), plan.B * plan.H);
      } else {
        this.dispatch(pass, this.pipelines.fused, [params, q, k, v, mask, o], Math.ceil(plan.T / 64), plan.H, plan.B);
      }
      let wbuf = null, wcount = 0, wshape = null;
      if (weights) {
        const all = weights === 'all';
        const sel = all ? { wb0: 0, wh0: 0, wnb: plan.B, wnh: plan.H } : { wb0: weights.b, wh0: weights.h, wnb: 1, wnh: 1 };
        if (sel.wb0 + sel.wnb > plan.B || sel.wh0 + sel.wnh > plan.H) throw new Error(`no head ${weights.h} of batch item ${weights.b}`);
        const wp = keep(this.buffer(new Uint8Array(this.params(plan, sel)), GPUBufferUsage.UNIFORM));
        wcount = sel.wnb * sel.wnh * plan.T * plan.S;
        wbuf = keep(this.empty(wcount));
        this.dispatch(pass, this.pipelines.weights, [wp, q, k, mask, wbuf], Math.ceil(plan.T / 64), sel.wnh, sel.wnb);
        wshape = all ? plan.weightsShape : [plan.T, plan.S];
      }
      let out = o, outCount = plan.o.size;
      if (plan.out) {
        out = keep(this.empty(plan.B * plan.T * plan.out.N));
        const w = keep(this.buffer(plan.out.w)), bias = plan.out.bias ? keep(this.buffer(plan.out.bias)) : null;
        this.linear(pass, o, w, bias, out, plan.B * plan.T, plan.out.N, plan.out.K, temps);
        outCount = plan.B * plan.T * plan.out.N;
      }
      pass.end();
      this.device.queue.submit([enc.finish()]);
      const [output, attentionWeights] = await Promise.all([this.read(out, outCount), wbuf ? this.read(wbuf, wcount) : null]);
      const error = await popScopes();
      if (error) throw new Error(`WebGPU error: ${error.message}`);
      return {
        output: { shape: plan.outShape, data: output },
        attentionWeights: attentionWeights && { shape: wshape, data: attentionWeights },
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
    const temps = [];
    const keep = (b) => { temps.push(b); return b; };
    try {
      const bufs = {};
      const enc0 = this.device.createCommandEncoder();
      const pass0 = enc0.beginComputePass();
      for (const l of plan.linears) {
        const x = keep(this.buffer(l.x)), w = keep(this.buffer(l.w)), bias = l.bias ? keep(this.buffer(l.bias)) : null;
        bufs[l.name] = keep(this.empty(l.M * l.N));
        this.linear(pass0, x, w, bias, bufs[l.name], l.M, l.N, l.K, temps);
      }
      pass0.end();
      this.device.queue.submit([enc0.finish()]);
      const src = (l) => (l.src ? keep(this.buffer(l.src)) : bufs[l.buf]);
      const [q, k, v] = [src(plan.q), src(plan.k), src(plan.v)];
      const mask = plan.mask ? keep(this.buffer(plan.mask.data)) : keep(this.empty(1));
      const o = keep(this.empty(plan.o.size));
      const params = keep(this.buffer(new Uint8Array(this.params(plan)), GPUBufferUsage.UNIFORM));
      const P = naive ? keep(this.empty(plan.B * plan.H * plan.T * plan.S)) : null;
      await this.device.queue.onSubmittedWorkDone();
      const once = async () => {
        const enc = this.device.createCommandEncoder();
        const pass = enc.beginComputePass();
        if (naive) {
          this.dispatch(pass, this.pipelines.scores, { 0: params, 1: q, 2: k, 4: mask, 5: P }, Math.ceil(plan.S / 8), Math.ceil(plan.T / 8), plan.B * plan.H);
          this.dispatch(pass, this.pipelines.softmax, { 0: params, 5: P }, Math.ceil((plan.B * plan.H * plan.T) / 64));
          this.dispatch(pass, this.pipelines.weightedSum, { 0: params, 3: v, 5: P, 6: o }, Math.ceil(plan.Dv / 8), Math.ceil(plan.T / 8), plan.B * plan.H);
        } else {
          this.dispatch(pass, this.pipelines.fused, [params, q, k, v, mask, o], Math.ceil(plan.T / 64), plan.H, plan.B);
        }
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

  // The core run (with inputs and parameters returned), then the same scenario on the GPU.
  async runScenario(core, scenario, options = {}) {
    const result = core.run({ ...scenario, return_inputs: true, return_params: true });
    return { result, gpu: await this.run(planFromResult(scenario, result), options) };
  }

  destroy() { this.device.destroy(); }
}
