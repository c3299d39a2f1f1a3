// AVX-512 instantiation of kernels_simd.hpp; this file alone is built with -mavx512f -mavx512dq
// -mfma (xsimd 8.1's avx512f horizontal sum uses a DQ instruction) and only called when the CPU
// reports AVX-512F and DQ (kernels.cpp). 32 vector registers of 16 floats: the GEMM register
// tiles are wider than AVX2's (24 accumulators: gemm_nt's packed panels of 3 vectors x 8 columns,
// gemm_nn's 8 rows x 3 vectors, and 6 rows x 4 vectors for a head dim of 64); 8 rows x 2 vectors
// (16) on weights packed ahead, for 9 to 16 rows.
#include "kernels/kernels_simd.hpp"
namespace attn {
const Kernels& kernels_avx512() {
  static const Kernels table = [] {
    using Table = simd::K<xsimd::avx512f, 4, 4, 8, 3, 128, false, 6>;
    return simd::GemmNtPacked<xsimd::avx512f, 3, 8, 16, 768, Table>::install(Table::table("avx512"));
  }();
  return table;
}
}  // namespace attn
