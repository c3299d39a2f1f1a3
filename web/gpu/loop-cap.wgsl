// How many iterations of one loop nest this WebGPU runs in an invocation: 512 × 256 = 131,072
// asked for. Chromium runs them all; Firefox 153 silently ends the nest after 65,535, which made
// the fused attention kernel write wrong rows past about 1,900 keys at head dim 16. attention-gpu.js
// reads the count once per device and keeps the fused kernel to plans well under it.

@group(0) @binding(0) var<storage, read_write> count: array<u32>;

@compute @workgroup_size(1)
fn main() {
  var c = 0u;
  for (var i = 0u; i < 512u; i = i + 1u) {
    for (var j = 0u; j < 256u; j = j + 1u) { c = c + 1u; }
  }
  count[0] = c;
}
