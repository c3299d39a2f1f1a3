// The attention weights of the heads the page displays (usually one batch item and one head):
// the fused kernel never stores them. One thread per query row: the row's max score, its sum of
// exponentials, then each weight exp(score − max) / sum; skipped keys are exactly 0 and a row
// with every key skipped is zeros. Dispatch: (⌈T/64⌉, wnh, wnb) for heads wh0.. and batch items
// wb0.. Output: W[((b - wb0) * wnh + (h - wh0)) * T * S + t * S + s]. attention-common.wgsl first.

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> maskv: array<f32>;
@group(0) @binding(4) var<storage, read_write> Wt: array<f32>;
@group(0) @binding(5) var<storage, read> pos: array<i32>;      // positions (Params.positional)
@group(0) @binding(6) var<storage, read> slopes: array<f32>;   // ALiBi slope per head (Params.alibi)

fn q_at(i: u32) -> f32 { return Q[i]; }
fn k_at(i: u32) -> f32 { return K[i]; }

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let t = gid.x;
  if (t >= p.T) { return; }
  let b = p.wb0 + wid.z;
  let h = p.wh0 + wid.y;
  let qb = q_base(b, h, t);
  let hk = kv_head(h);
  let row = ((wid.z * p.wnh + wid.y) * p.T + t) * p.S;
  var m = -3.40282346e38f;
  var seen = false;
  for (var s = 0u; s < p.S; s = s + 1u) {
    let state = mask_state(b, h, t, s);
    if (state != 0u) { m = max(m, masked_score(state, h, t, s, qb, k_base(b, hk, s))); seen = true; }
  }
  var l = 0.0;
  for (var s = 0u; s < p.S; s = s + 1u) {
    let state = mask_state(b, h, t, s);
    var e = 0.0;
    if (state != 0u) { e = exp(masked_score(state, h, t, s, qb, k_base(b, hk, s)) - m); }
    Wt[row + s] = e;
    l = l + e;
  }
  let inv = select(0.0, 1.0 / l, seen && l > 0.0);
  for (var s = 0u; s < p.S; s = s + 1u) { Wt[row + s] = Wt[row + s] * inv; }
}
