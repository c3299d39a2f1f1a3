// WebAssembly instantiation of kernels_simd.hpp: built with -msimd128 -msse4.1, Emscripten maps
// xsimd's SSE4.1 code to WASM SIMD128 (xsimd 8.1 has no wasm backend of its own).
#include "kernels_simd.hpp"
namespace attn {
const Kernels& kernels_wasm() { return simd::K<xsimd::sse4_1>::table("wasm-simd128"); }
}  // namespace attn
