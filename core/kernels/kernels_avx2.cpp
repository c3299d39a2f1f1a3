// AVX2 + FMA instantiation of kernels_simd.hpp; this file alone is built with -mavx2 -mfma and
// only called when the CPU reports both (kernels.cpp). gemm_nt runs on packed panels of 2
// vectors x 6 columns (12 accumulators of the 16 registers), and on weights packed ahead, for 5
// to 8 rows, 6 rows x 2 vectors.
#include "kernels/kernels_simd.hpp"
namespace attn {
const Kernels& kernels_avx2() {
  static const Kernels table = [] {
    using Table = simd::K<xsimd::fma3<xsimd::avx2>, 4, 3, 6, 2>;
    return simd::GemmNtPacked<xsimd::fma3<xsimd::avx2>, 2, 6, 12, 256, Table>::install(Table::table("avx2"));
  }();
  return table;
}
}  // namespace attn
