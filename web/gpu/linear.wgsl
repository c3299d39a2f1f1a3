// nn.Linear on the GPU: Y[M, N] = X[M, K] · W[N, K]ᵀ + b[N] (PyTorch's weight layout, out × in).
// A workgroup of 8 × 8 threads computes a 32 × 32 output tile, each thread a 4 × 4 block of it in
// registers (one vec4 accumulator per row); each step stages a 32 × 16 slice of X and of W in
// workgroup memory, so every staged value feeds 4 multiply-adds from registers and each barrier
// pair covers 64 of them per thread. Any M, N, K: edges are guarded (zeros staged), not padded.
// Each output sums its K products in order k = 0, 1, ..., as the CPU kernels' reference does.

struct Dims {
  M: u32,
  N: u32,
  K: u32,
  has_bias: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> W: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;

const TILE: u32 = 32u;   // output rows and columns per workgroup
const TK: u32 = 16u;     // k per staged slice
var<workgroup> xs: array<array<f32, 16>, 32>;  // [row in tile][k in slice]
var<workgroup> ws: array<array<f32, 16>, 32>;  // [col in tile][k in slice]

@compute @workgroup_size(8, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let row0 = wid.y * TILE;
  let col0 = wid.x * TILE;
  let flat = lid.y * 8u + lid.x;   // 0..63: this thread stages 8 values of X and 8 of W per slice
  var acc: array<vec4<f32>, 4>;
  for (var i = 0u; i < 4u; i = i + 1u) { acc[i] = vec4<f32>(0.0); }
  for (var k0 = 0u; k0 < dims.K; k0 = k0 + TK) {
    for (var e = 0u; e < 8u; e = e + 1u) {
      let idx = e * 64u + flat;       // 0..511 over the 32 × 16 slice
      let r = idx / TK;
      let k = k0 + idx % TK;
      var x = 0.0;
      if (row0 + r < dims.M && k < dims.K) { x = X[(row0 + r) * dims.K + k]; }
      xs[r][idx % TK] = x;
      var w = 0.0;
      if (col0 + r < dims.N && k < dims.K) { w = W[(col0 + r) * dims.K + k]; }
      ws[r][idx % TK] = w;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk = kk + 1u) {
      let b = vec4<f32>(ws[lid.x * 4u][kk], ws[lid.x * 4u + 1u][kk], ws[lid.x * 4u + 2u][kk], ws[lid.x * 4u + 3u][kk]);
      for (var i = 0u; i < 4u; i = i + 1u) {
        acc[i] = acc[i] + xs[lid.y * 4u + i][kk] * b;
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i = i + 1u) {
    let row = row0 + lid.y * 4u + i;
    if (row >= dims.M) { continue; }
    for (var j = 0u; j < 4u; j = j + 1u) {
      let col = col0 + lid.x * 4u + j;
      if (col < dims.N) {
        var y = acc[i][j];
        if (dims.has_bias != 0u) { y = y + bias[col]; }
        Y[row * dims.N + col] = y;
      }
    }
  }
}
