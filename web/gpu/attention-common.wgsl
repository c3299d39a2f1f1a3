// Shared by the attention kernels (prepended by attention-gpu.js): where head h of batch b finds
// its query, key, value and output rows, and the mask rules.
//   q(b, t, h, d) = Q[q_off + b*q_sb + t*q_st + h*q_sh + d]   (the same for K, V, O)
// so one kernel serves every seed's layout: (B, T, C) with heads as column blocks, seed 002's
// fused (B, T, H, 3·D) qkv rows, and plain (…, T, d) tensors.
// Masks: causal (key after query: masked), and an optional mask tensor broadcast by strides:
//   mask_kind 1: value == 0 is masked (seed 000: -inf; a row with every key masked gives zeros)
//   mask_kind 2: value != 0 is masked (seed 003: filled with fill, -1e9; such a row is uniform)

struct Params {
  B: u32, H: u32, T: u32, S: u32,
  Dk: u32, Dv: u32, causal: u32, mask_kind: u32,
  q_off: u32, q_sb: u32, q_st: u32, q_sh: u32,
  k_off: u32, k_sb: u32, k_st: u32, k_sh: u32,
  v_off: u32, v_sb: u32, v_st: u32, v_sh: u32,
  o_off: u32, o_sb: u32, o_st: u32, o_sh: u32,
  m_sb: u32, m_sh: u32, m_st: u32, m_ss: u32,
  scale: f32, fill: f32, wb0: u32, wh0: u32,
  wnb: u32, wnh: u32, pad0: u32, pad1: u32,
}

// 0: masked and skipped, 1: kept, 2: masked and filled with p.fill
fn mask_state(b: u32, h: u32, t: u32, s: u32) -> u32 {
  if (p.causal != 0u && s > t) { return 0u; }
  if (p.mask_kind == 0u) { return 1u; }
  let m = maskv[b * p.m_sb + h * p.m_sh + t * p.m_st + s * p.m_ss];
  if (p.mask_kind == 1u) { return select(1u, 0u, m == 0.0); }
  return select(1u, 2u, m != 0.0);
}
