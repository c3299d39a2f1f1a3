// AVX-512 instantiation of kernels_simd.hpp; this file alone is built with -mavx512f -mavx512dq
// -mfma (xsimd 8.1's avx512f horizontal sum uses a DQ instruction) and only called when the CPU
// reports AVX-512F and DQ (kernels.cpp). 32 vector registers of 16 floats: the
// GEMM register tiles are wider than AVX2's (16 accumulators each), the sums stay the same kind.
#include "kernels_simd.hpp"
namespace attn {
const Kernels& kernels_avx512() { return simd::K<xsimd::avx512f, 4, 4, 6, 2>::table("avx512"); }
}  // namespace attn
