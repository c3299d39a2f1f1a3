// SSE2 instantiation of kernels_simd.hpp: the x86-64 baseline every machine runs.
#include "kernels/kernels_simd.hpp"
namespace attn {
const Kernels& kernels_sse2() { return simd::K<xsimd::sse2>::table("sse2"); }
}  // namespace attn
