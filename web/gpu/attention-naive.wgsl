// The textbook three passes, for comparison with the fused kernel (scripts/measure-gpu.mjs and
// the GPU tests): scores = q·kᵀ / scale into a (B, H, T, S) buffer, softmax over each row in
// place, then out = weights · v. Same Params and mask rules as the fused kernel.

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read> maskv: array<f32>;
@group(0) @binding(5) var<storage, read_write> P: array<f32>;   // (B, H, T, S) scores, then weights
@group(0) @binding(6) var<storage, read_write> O: array<f32>;

const NEG_INF_MARK: f32 = -3.40282346e38f;  // a skipped (masked) key

// Pass 1: one thread per score. Dispatch (⌈S/8⌉, ⌈T/8⌉, B·H).
@compute @workgroup_size(8, 8)
fn scores(@builtin(global_invocation_id) gid: vec3<u32>) {
  let s = gid.x;
  let t = gid.y;
  let b = gid.z / p.H;
  let h = gid.z % p.H;
  if (s >= p.S || t >= p.T) { return; }
  let state = mask_state(b, h, t, s);
  var score = NEG_INF_MARK;
  if (state == 2u) { score = p.fill; }
  if (state == 1u) {
    let qb = p.q_off + b * p.q_sb + t * p.q_st + h * p.q_sh;
    let kb = p.k_off + b * p.k_sb + s * p.k_st + h * p.k_sh;
    var dot = 0.0;
    for (var d = 0u; d < p.Dk; d = d + 1u) { dot = dot + Q[qb + d] * K[kb + d]; }
    score = dot / p.scale;
  }
  P[((b * p.H + h) * p.T + t) * p.S + s] = score;
}

// Pass 2: one thread per row. Dispatch (⌈T·B·H/64⌉).
@compute @workgroup_size(64)
fn softmax(@builtin(global_invocation_id) gid: vec3<u32>) {
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
  var acc = 0.0;
  for (var s = 0u; s < p.S; s = s + 1u) {
    acc = acc + P[row + s] * V[p.v_off + b * p.v_sb + s * p.v_st + h * p.v_sh + d];
  }
  O[p.o_off + b * p.o_sb + t * p.o_st + h * p.o_sh + d] = acc;
}
