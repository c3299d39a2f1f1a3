// WebAssembly instantiation of kernels_simd.hpp: built with -msimd128 -msse4.1, Emscripten maps
// xsimd's SSE4.1 code to WASM SIMD128 (xsimd 8.1 has no wasm backend of its own).
#include "kernels_simd.hpp"
namespace attn {
// gemm_nt's tile is 2 x 4 here (8 accumulators + 4 B vectors + 1 A vector): with the 4 x 3 tile of
// the native builds, Chromium's V8 spills and nn.Linear at 512 x 768 x 768 runs at 18-26 GFLOP/s;
// 2 x 4 runs at 46 (4 x 2: 43, 3 x 3: 36) in the same page. The sums, and so the numbers, do not change.
const Kernels& kernels_wasm() { return simd::K<xsimd::sse4_1, 2, 4>::table("wasm-simd128"); }
}  // namespace attn
