// Fused attention in the flash-attention style: one thread per query row, 64 rows per workgroup
// for one (batch, head). Keys and values stream through workgroup memory 16 at a time; each
// thread keeps a running max m, a running sum l and its output row in f32 (online normalisation),
// so the T × S scores never exist in memory. Causal tiles past the workgroup's last query are
// never loaded, nor (sliding window) the tiles before its first query's window except the sinks'.
// Head dims up to 128, any value. Dispatch: (⌈T/64⌉, H, B). attention-common.wgsl first.

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> Q: array<f32>;
@group(0) @binding(2) var<storage, read> K: array<f32>;
@group(0) @binding(3) var<storage, read> V: array<f32>;
@group(0) @binding(4) var<storage, read> maskv: array<f32>;
@group(0) @binding(5) var<storage, read_write> O: array<f32>;
@group(0) @binding(6) var<storage, read> pos: array<i32>;      // positions (Params.positional)
@group(0) @binding(7) var<storage, read> slopes: array<f32>;   // ALiBi slope per head (Params.alibi)

const ROWS: u32 = 64u;
const BC: u32 = 16u;
const DMAX: u32 = 128u;
var<workgroup> ks: array<f32, 2048>;  // BC × DMAX
var<workgroup> vs: array<f32, 2048>;
var<private> qrow: array<f32, 128>;   // this thread's query row, read once

// score() reads the query from registers and key j of the tile at j * DMAX.
fn q_at(i: u32) -> f32 { return qrow[i]; }
fn k_at(i: u32) -> f32 { return ks[i]; }

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let b = wid.z;
  let h = wid.y;
  let hk = kv_head(h);
  let t = wid.x * ROWS + lid.x;
  let in_range = t < p.T;
  var acc: array<f32, 128>;
  if (in_range) {
    let qb = q_base(b, h, t);
    for (var d = 0u; d < p.Dk; d = d + 1u) { qrow[d] = Q[qb + d]; }
  }
  for (var d = 0u; d < p.Dv; d = d + 1u) { acc[d] = 0.0; }
  var m = -3.40282346e38f;
  var l = 0.0;
  // Keys this workgroup can see: all of them, or (causal, on row indices) up to its last query,
  // and (window) none from the sinks' end to its first query's window.
  var s_end = p.S;
  var gap_lo = 0u;
  var gap_hi = 0u;
  if (p.causal != 0u && p.positional == 0u) {
    s_end = min(p.S, min(p.T, (wid.x + 1u) * ROWS));
    if (p.window != 0u && wid.x * ROWS >= p.window) {
      gap_lo = p.sinks;
      gap_hi = wid.x * ROWS - p.window + 1u;   // the first key the first query's window holds
    }
  }
  for (var s0 = 0u; s0 < s_end; s0 = s0 + BC) {
    if (s0 >= gap_lo && s0 + BC <= gap_hi) { continue; }   // a whole tile no query here sees
    // Stage BC keys and values: 64 threads share the copy.
    for (var i = lid.x; i < BC * p.Dk; i = i + ROWS) {
      let j = i / p.Dk;
      let d = i % p.Dk;
      var kv = 0.0;
      if (s0 + j < p.S) { kv = K[k_base(b, hk, s0 + j) + d]; }
      ks[j * DMAX + d] = kv;
    }
    for (var i = lid.x; i < BC * p.Dv; i = i + ROWS) {
      let j = i / p.Dv;
      let d = i % p.Dv;
      var vv = 0.0;
      if (s0 + j < p.S) { vv = V[v_base(b, hk, s0 + j) + d]; }
      vs[j * DMAX + d] = vv;
    }
    workgroupBarrier();
    if (in_range) {
      for (var j = 0u; j < BC; j = j + 1u) {
        let s = s0 + j;
        if (s >= p.S) { break; }
        let state = mask_state(b, h, t, s);
        if (state == 0u) { continue; }
        let x = masked_score(state, h, t, s, 0u, j * DMAX);
        let m_new = max(m, x);
        let corr = exp(m - m_new);
        let e = exp(x - m_new);
        l = l * corr + e;
        for (var d = 0u; d < p.Dv; d = d + 1u) { acc[d] = acc[d] * corr + e * vs[j * DMAX + d]; }
        m = m_new;
      }
    }
    workgroupBarrier();
  }
  if (in_range) {
    let ob = p.o_off + b * p.o_sb + t * p.o_st + h * p.o_sh;
    // l == 0: every key was skipped (-inf fill): the row is zeros, never NaN.
    let inv = select(0.0, 1.0 / l, l > 0.0);
    for (var d = 0u; d < p.Dv; d = d + 1u) { O[ob + d] = acc[d] * inv; }
  }
}
