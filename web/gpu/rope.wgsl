// Rotary positions (the core's `rope` op, core/ops.cpp rope_rotate) on the GPU: after the q or k
// projection and before the attention kernels, x · cos + rotate_half(x) · sin with
// rotate_half(x) = cat(−x[D/2:], x[:D/2]), for each head's row. The (T, D/2) cos and sin tables
// (one half: cat(angles, angles) repeats it) are computed by attention-gpu.js from the positions.
// Reads heads at X[off + b*sb + t*st + h*sh + d] (attention-common.wgsl's layouts) and writes them
// contiguous, Y (B, T, heads, D): the source may be a module input, so it is never changed.
// One thread per rotated pair (d, d + D/2). Dispatch: (⌈heads·D/2 / 64⌉, T, B).

struct Rope {
  T: u32, heads: u32, half: u32, pad0: u32,
  off: u32, sb: u32, st: u32, sh: u32,
}

@group(0) @binding(0) var<uniform> r: Rope;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> cos_half: array<f32>;   // (T, D/2)
@group(0) @binding(3) var<storage, read> sin_half: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x % r.half;
  let h = gid.x / r.half;
  let t = gid.y;
  let b = gid.z;
  if (h >= r.heads) { return; }
  let xb = r.off + b * r.sb + t * r.st + h * r.sh;
  let yb = ((b * r.T + t) * r.heads + h) * 2u * r.half;
  let x1 = X[xb + i];
  let x2 = X[xb + i + r.half];
  let c = cos_half[t * r.half + i];
  let s = sin_half[t * r.half + i];
  // Two products, then their sum, as the core and torch compute x * cos + rotate_half(x) * sin.
  Y[yb + i] = x1 * c + (-x2) * s;
  Y[yb + i + r.half] = x2 * c + x1 * s;
}
