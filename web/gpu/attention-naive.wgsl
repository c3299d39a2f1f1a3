// The textbook three passes, for comparison with the fused kernel (scripts/measure-gpu.mjs and
// tests/browser/gpu.test.mjs): scores q·kᵀ scaled into a (B, H, T, S) buffer, each row turned
// into weights exp(score − max) / sum in place, then out = weights · v. Same Params, mask rules
// and score as the fused kernel (attention-common.wgsl, prepended).

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read> maskv: array<f32>;
@group(0) @binding(5) var<storage, read_write> P: array<f32>;   // (B, H, T, S) scores, then weights
@group(0) @binding(6) var<storage, read_write> O: array<f32>;
@group(0) @binding(7) var<storage, read> pos: array<i32>;      // positions (Params.positional)
@group(0) @binding(8) var<storage, read> slopes: array<f32>;   // ALiBi slope per head (Params.alibi)

const NEG_INF_MARK: f32 = -3.40282346e38f;  // a skipped (masked) key

fn q_at(i: u32) -> f32 { return Q[i]; }
fn k_at(i: u32) -> f32 { return K[i]; }

// Pass 1: one thread per score. Dispatch (⌈S/8⌉, ⌈T/8⌉, B·H).
@compute @workgroup_size(8, 8)
fn scores(@builtin(global_invocation_id) gid: vec3<u32>) {
  let s = gid.x;
  let t = gid.y;
  let b = gid.z / p.H;
  let h = gid.z % p.H;
  if (s >= p.S || t >= p.T) { return; }
  let state = mask_state(b, h, t, s);
  var x = NEG_INF_MARK;
  if (state != 0u) { x = masked_score(state, h, t, s, q_base(b, h, t), k_base(b, kv_head(h), s)); }
  P[((b * p.H + h) * p.T + t) * p.S + s] = x;
}

// Pass 2: one thread per row. Dispatch (⌈T·B·H/64⌉).
@compute @workgroup_size(64)
fn normalize_rows(@builtin(global_invocation_id) gid: vec3<u32>) {
  let r = gid.x;
  if (r >= p.B * p.H * p.T) { return; }
  let base = r * p.S;
  var m = NEG_INF_MARK;
  for (var s = 0u; s < p.S; s = s + 1u) { m = max(m, P[base + s]); }
  var l = 0.0;
  for (var s = 0u; s < p.S; s = s + 1u) {
    var e = 0.0;
    if (P[base + s] > NEG_INF_MARK) { e = exp(P[base + s] - m); }
    P[base + s] = e;
    l = l + e;
  }
  let inv = select(0.0, 1.0 / l, l > 0.0);
  for (var s = 0u; s < p.S; s = s + 1u) { P[base + s] = P[base + s] * inv; }
}

// Pass 3: one thread per output value. Dispatch (⌈Dv/8⌉, ⌈T/8⌉, B·H).
@compute @workgroup_size(8, 8)
fn weighted_sum(@builtin(global_invocation_id) gid: vec3<u32>) {
  let d = gid.x;
  let t = gid.y;
  let b = gid.z / p.H;
  let h = gid.z % p.H;
  if (d >= p.Dv || t >= p.T) { return; }
  let row = ((b * p.H + h) * p.T + t) * p.S;
  let hk = kv_head(h);
  var acc = 0.0;
  for (var s = 0u; s < p.S; s = s + 1u) {
    acc = acc + P[row + s] * V[v_base(b, hk, s) + d];
  }
  O[p.o_off + b * p.o_sb + t * p.o_st + h * p.o_sh + d] = acc;
}
