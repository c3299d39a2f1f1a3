// The attention weights softmax(q·kᵀ / scale) of the heads the page displays (usually one batch
// item and one head): the fused kernel never stores them. One thread per query row: the row's
// max, its sum of exponentials, then each weight; masked keys are exactly 0 and a fully masked
// row is zeros. Dispatch: (⌈T/64⌉, wnh, wnb) for heads wh0.. and batch items wb0..
// Output: W[((b - wb0) * wnh + (h - wh0)) * T * S + t * S + s].

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> maskv: array<f32>;
@group(0) @binding(4) var<storage, read_write> Wt: array<f32>;

fn score_of(b: u32, h: u32, t: u32, s: u32, state: u32) -> f32 {
  if (state == 2u) { return p.fill; }
  let qb = p.q_off + b * p.q_sb + t * p.q_st + h * p.q_sh;
  let kb = p.k_off + b * p.k_sb + s * p.k_st + h * p.k_sh;
  var dot = 0.0;
  for (var d = 0u; d < p.Dk; d = d + 1u) { dot = dot + Q[qb + d] * K[kb + d]; }
  return dot / p.scale;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let t = gid.x;
  if (t >= p.T) { return; }
  let b = p.wb0 + wid.z;
  let h = p.wh0 + wid.y;
  let row = ((wid.z * p.wnh + wid.y) * p.T + t) * p.S;
  var m = -3.40282346e38f;
  var seen = false;
  for (var s = 0u; s < p.S; s = s + 1u) {
    let state = mask_state(b, h, t, s);
    if (state != 0u) { m = max(m, score_of(b, h, t, s, state)); seen = true; }
  }
  var l = 0.0;
  for (var s = 0u; s < p.S; s = s + 1u) {
    let state = mask_state(b, h, t, s);
    var e = 0.0;
    if (state != 0u) { e = exp(score_of(b, h, t, s, state) - m); }
    Wt[row + s] = e;
    l = l + e;
  }
  let inv = select(0.0, 1.0 / l, seen && l > 0.0);
  for (var s = 0u; s < p.S; s = s + 1u) { Wt[row + s] = Wt[row + s] * inv; }
}
