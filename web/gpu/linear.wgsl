// nn.Linear on the GPU: Y[M, N] = X[M, K] · W[N, K]ᵀ + b[N] (PyTorch's weight layout, out × in).
// 16 × 16 output tiles; each step stages a 16 × 16 tile of X and of W in workgroup memory, so
// every loaded value is used 16 times. Any M, N, K (edges are guarded, not padded).

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

const TILE: u32 = 16u;
var<workgroup> xs: array<array<f32, 16>, 16>;  // [row in tile][k in tile]
var<workgroup> ws: array<array<f32, 16>, 16>;  // [col in tile][k in tile]

@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let row = wid.y * TILE + lid.y;
  let col = wid.x * TILE + lid.x;
  let wrow = wid.x * TILE + lid.y;  // the W row (output column) this thread stages
  var acc = 0.0;
  for (var k0 = 0u; k0 < dims.K; k0 = k0 + TILE) {
    let k = k0 + lid.x;
    var x = 0.0;
    if (row < dims.M && k < dims.K) { x = X[row * dims.K + k]; }
    xs[lid.y][lid.x] = x;
    var w = 0.0;
    if (wrow < dims.N && k < dims.K) { w = W[wrow * dims.K + k]; }
    ws[lid.y][lid.x] = w;
    workgroupBarrier();
    for (var kk = 0u; kk < TILE; kk = kk + 1u) {
      acc = acc + xs[lid.y][kk] * ws[lid.x][kk];
    }
    workgroupBarrier();
  }
  if (row < dims.M && col < dims.N) {
    if (dims.has_bias != 0u) { acc = acc + bias[col]; }
    Y[row * dims.N + col] = acc;
  }
}
