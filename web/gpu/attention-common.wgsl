// Shared by the attention kernels (attention-gpu.js prepends it to attention-fused.wgsl,
// attention-weights.wgsl and attention-naive.wgsl, and reads the Params field list from this text):
// where head h of batch b finds its rows, the mask rules and the q·k score, written once.
//   q(b, t, h, d) = Q[q_off + b*q_sb + t*q_st + h*q_sh + d]  (the same for K, V, O): one kernel
// serves heads as column blocks of (B, T, C), fused (B, T, H, 3·D) qkv rows and plain (…, T, d).
// Keys and values are read at kv head h / kv_group (grouped-query attention, no copy); rotary
// positions are applied to q and k before these kernels run (rope.wgsl).

struct Params {
  B: u32, H: u32, T: u32, S: u32,
  Dk: u32, Dv: u32, causal: u32, mask_kind: u32,
  q_off: u32, q_sb: u32, q_st: u32, q_sh: u32,
  k_off: u32, k_sb: u32, k_st: u32, k_sh: u32,
  v_off: u32, v_sb: u32, v_st: u32, v_sh: u32,
  o_off: u32, o_sb: u32, o_st: u32, o_sh: u32,
  m_sb: u32, m_sh: u32, m_st: u32, m_ss: u32,
  scale: f32, fill: f32, wb0: u32, wh0: u32,
  wnb: u32, wnh: u32, scale_mul: u32, masked_fill: u32,
  kv_group: u32, alibi: u32, window: u32, sinks: u32,
  positional: u32, pad0: u32, pad1: u32, pad2: u32,
}
// mask_kind: 0 no mask tensor, 1 a value == 0 is masked, 2 a value != 0 is masked (the block's
// masked_where). masked_fill: 1 when the block's fill is a finite number (masked scores become
// p.fill and keep their share of the row), 0 when it is -inf (masked keys are skipped, weight
// exactly 0; a row with every key masked gives zeros). WGSL has no dependable infinity, hence
// the flag. scale_mul: 1 multiplies the scores by p.scale, 0 divides them, as the block says.
// kv_group: query heads per key/value head (1 without grouped-query attention). alibi: 1 adds
// slopes[h] · (pos_s − pos_t) to the scaled scores. window > 0: key s is visible from query t only
// if pos_t − window < pos_s ≤ pos_t, except the sinks (pos_s < sinks); causal is then set too.
// positional: 1 reads the positions from pos[] (a positions input), 0 takes the row indices.

fn q_base(b: u32, h: u32, t: u32) -> u32 { return p.q_off + b * p.q_sb + t * p.q_st + h * p.q_sh; }
// hk: the kv head (kv_head(h)), computed once per thread rather than per key.
fn k_base(b: u32, hk: u32, s: u32) -> u32 { return p.k_off + b * p.k_sb + s * p.k_st + hk * p.k_sh; }
fn v_base(b: u32, hk: u32, s: u32) -> u32 { return p.v_off + b * p.v_sb + s * p.v_st + hk * p.v_sh; }
fn kv_head(h: u32) -> u32 { return h / p.kv_group; }

fn position(i: u32) -> i32 {
  if (p.positional != 0u) { return pos[i]; }
  return i32(i);
}

// 0: masked and skipped, 1: kept, 2: masked and filled with p.fill
fn mask_state(b: u32, h: u32, t: u32, s: u32) -> u32 {
  var masked = false;
  if (p.causal != 0u) {
    let pt = position(t);
    let ps = position(s);
    masked = ps > pt;
    if (p.window != 0u && ps <= pt - i32(p.window) && ps >= i32(p.sinks)) { masked = true; }
  }
  if (!masked && p.mask_kind != 0u) {
    let m = maskv[b * p.m_sb + h * p.m_sh + t * p.m_st + s * p.m_ss];
    masked = select(m != 0.0, m == 0.0, p.mask_kind == 1u);
  }
  if (!masked) { return 1u; }
  return select(0u, 2u, p.masked_fill != 0u);
}

// The score of a query row against a key row, scaled as the block says. Each kernel defines
// q_at(i) and k_at(i), the values at index i of wherever it keeps them (storage buffers, or a
// register row and a workgroup tile in the fused kernel), and passes the rows' first indices.
fn score(qb: u32, kb: u32) -> f32 {
  var dot = 0.0;
  for (var d = 0u; d < p.Dk; d = d + 1u) { dot = dot + q_at(qb + d) * k_at(kb + d); }
  if (p.scale_mul != 0u) { return dot * p.scale; }
  return dot / p.scale;
}

// A key's score for a mask_state that is not 0 (skipped keys have none): the fill, or the scaled
// q·k of query t and key s of head h plus its ALiBi bias.
fn masked_score(state: u32, h: u32, t: u32, s: u32, qb: u32, kb: u32) -> f32 {
  if (state == 2u) { return p.fill; }
  let x = score(qb, kb);
  if (p.alibi == 0u) { return x; }
  return x + slopes[h] * f32(position(s) - position(t));
}
