// AVX2 + FMA instantiation of kernels_simd.hpp; this file alone is built with -mavx2 -mfma and
// only called when the CPU reports both (kernels.cpp).
#include "kernels_simd.hpp"
namespace attn {
const Kernels& kernels_avx2() { return simd::K<xsimd::fma3<xsimd::avx2>>::table("avx2"); }
}  // namespace attn
