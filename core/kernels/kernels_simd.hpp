// SIMD kernels, written once and templated on the xsimd architecture: a vector loop and a
// scalar tail each. Instantiated per architecture in kernels_<arch>.cpp, each built with its own
// flags; kernels.cpp picks one at run time. The scalar twins are in kernels_scalar.cpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <xsimd/xsimd.hpp>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#include "base/build.hpp"
#include "kernels/kernels.hpp"

// The relaxed-SIMD WASM build (kernels_wasm.cpp compiled again with ATTN_WASM_RELAXED, linked
// into attention-relaxed.wasm) gets its own inline namespace: its templates must never merge with
// the plain build's at link time.
#if defined(ATTN_WASM_RELAXED)
#define ATTN_SIMD_VARIANT relaxed
#else
#define ATTN_SIMD_VARIANT plain
#endif

namespace attn::simd {
inline namespace ATTN_SIMD_VARIANT {

// a * b + c, lane by lane: xsimd::fma (one rounding on AVX2 / AVX-512; a multiply, then an add, on
// SSE2 and WASM SIMD128), or, in the relaxed-SIMD WASM build, f32x4.relaxed_madd, which engines
// with FMA hardware run as one fused instruction (V8 on x86-64: vfmadd). Debian's clang 14 knows
// that instruction only by its prototype opcode (__builtin_wasm_fma_f32x4: 0xfd 0xaf 0x01, a
// stack of a, b, c); scripts/relax-wasm.mjs rewrites each one to the final relaxed_madd
// (0xfd 0x85 0x02), which computes a * b + c from the same stack.
template <class Bt>
inline Bt madd(const Bt& a, const Bt& b, const Bt& c) {
#if defined(ATTN_WASM_RELAXED)
  if constexpr (std::is_same<Bt, xsimd::batch<float, xsimd::sse4_1>>::value)
    return Bt(__m128(__builtin_wasm_fma_f32x4(__m128(a), __m128(b), __m128(c))));
#endif
  return xsimd::fma(a, b, c);
}

// MR_NT x NR_NT: gemm_nt's register tile; MR_NN x NV_NN vectors: gemm_nn's outer-product tile.
// Accumulators + the B vectors + one A vector must fit the 16 vector registers (32 for AVX-512);
// for WASM the register allocator is V8's, which keeps fewer of them than a C++ compiler
// (kernels_wasm.cpp). AVX2 and AVX-512 replace K::gemm_nt by GemmNtPacked's (below).
// KB_NN > 0: gemm_nn / gemm_tn run K in blocks of KB_NN, each block's tiles starting from the sums
// the last one stored in C, so a block of B (KB_NN rows of NV_NN vectors) stays in L1 while every
// row tile of A passes; a stored float reloads exactly, so the sums are those of one pass.
// PACK_NN (with KB_NN > 0): each block of A (48 rows x KB_NN) is first copied k-major, a row tile's
// MR floats of one k side by side, so the tile reads A at fixed offsets from one pointer that moves
// MR floats per k. For WASM: V8 otherwise computes each of the MR addresses with a multiply per k
// (the strides of gemm_nn and gemm_tn are run-time values), and on x86 that integer work takes the
// ports the multiply-adds need (the attention's products ran 20-25 % slower). Same sums, same order.
// MR4_NN > 0 (with NV_NN = 3, unpacked): a column block of exactly 4 vectors (a head dim of 4 W)
// runs MR4_NN x 4 tiles instead of two 2-vector blocks (AVX-512: 6 x 4, 24 sums of 10 loads per k
// where two 8 x 2 blocks' 16 take 10; 64 x 64 x 512 7 % faster). The same sums in the same order.
template <class Arch, size_t MR_NT = 4, size_t NR_NT = 3, size_t MR_NN = 4, size_t NV_NN = 2, size_t KB_NN = 0,
          bool PACK_NN = false, size_t MR4_NN = 0>
struct K {
  static_assert(MR4_NN == 0 || (NV_NN == 3 && !PACK_NN), "MR4_NN: 4-vector blocks of an unpacked 3-vector table");
  using B = xsimd::batch<float, Arch>;
  static constexpr size_t W = B::size;

  static float dot(const float* a, const float* b, size_t n) {
    B acc0(0.f), acc1(0.f);
    size_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
      acc0 = madd(B::load_unaligned(a + i), B::load_unaligned(b + i), acc0);
      acc1 = madd(B::load_unaligned(a + i + W), B::load_unaligned(b + i + W), acc1);
    }
    for (; i + W <= n; i += W) acc0 = madd(B::load_unaligned(a + i), B::load_unaligned(b + i), acc0);
    float s = xsimd::hadd(acc0 + acc1);
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
  }
  // Register tile of MR rows x NR columns: MR*NR accumulators + NR B vectors + 1 A vector fit the
  // 16 vector registers of SSE/AVX2/WASM SIMD128; each A and B load feeds NR or MR FMAs.
  template <size_t MR, size_t NR>
  static void tile(float* C, const float* A, const float* Bm, const float* bias, size_t K, size_t lda, size_t ldb,
                   size_t ldc) {
    B acc[MR][NR];
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NR; ++j) acc[i][j] = B(0.f);
    size_t k = 0;
    for (; k + W <= K; k += W) {
      B b[NR];
      for (size_t j = 0; j < NR; ++j) b[j] = B::load_unaligned(Bm + j * ldb + k);
      for (size_t i = 0; i < MR; ++i) {
        const B a = B::load_unaligned(A + i * lda + k);
        for (size_t j = 0; j < NR; ++j) acc[i][j] = madd(a, b[j], acc[i][j]);
      }
    }
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NR; ++j) {
        float s = xsimd::hadd(acc[i][j]);
        for (size_t kk = k; kk < K; ++kk) s += A[i * lda + kk] * Bm[j * ldb + kk];
        C[i * ldc + j] = s + (bias ? bias[j] : 0.f);
      }
  }
  // tile<1, R>'s sums (one row of A against R rows of B: per row one vector of sums over k, then
  // its lanes, then the tail), with a pointer per row stepped 4 vectors at a time and the loads at
  // constant offsets from it: in WebAssembly an address is a base plus a constant, so tile's
  // `row + k` cost an add before every load (9 per k beside 8 multiply-adds). The same floats.
  // The R rows are `step` rows apart (outputs C[j * step]).
  template <size_t R>
  static void gemv(float* C, const float* a, const float* Bm, const float* bias, size_t K, size_t ldb, size_t step = 1) {
    const float* p[R];
    B acc[R];
    for (size_t j = 0; j < R; ++j) {
      p[j] = Bm + j * step * ldb;
      acc[j] = B(0.f);
    }
    const float* ap = a;
    size_t k = 0;
    for (; k + 4 * W <= K; k += 4 * W, ap += 4 * W) {
      for (size_t u = 0; u < 4; ++u) {
        const B x = B::load_unaligned(ap + u * W);
        for (size_t j = 0; j < R; ++j) acc[j] = madd(x, B::load_unaligned(p[j] + u * W), acc[j]);
      }
      for (size_t j = 0; j < R; ++j) p[j] += 4 * W;
    }
    for (; k + W <= K; k += W, ap += W) {
      const B x = B::load_unaligned(ap);
      for (size_t j = 0; j < R; ++j) {
        acc[j] = madd(x, B::load_unaligned(p[j]), acc[j]);
        p[j] += W;
      }
    }
    for (size_t j = 0; j < R; ++j) {
      float s = xsimd::hadd(acc[j]);
      for (size_t kk = k; kk < K; ++kk) s += a[kk] * Bm[j * step * ldb + kk];
      C[j * step] = s + (bias ? bias[j * step] : 0.f);
    }
  }
  static void gemm_nt(float* C, const float* A, const float* Bm, const float* bias, size_t M, size_t N, size_t K,
                      size_t lda, size_t ldb, size_t ldc) noexcept {
    constexpr size_t MR = MR_NT, NR = NR_NT;
    // One row (a decode step's token): every weight is read once and the call waits on memory.
    // S rows far apart (n, n + N/S, ...), each its own chain of sums: S sequential streams through
    // B. Before (2026-12-02), 16 neighbouring rows at a time (16 streams 3 KB apart) read a
    // 50257 x 768 matrix at 18.6-22.0 GB/s in WebAssembly under Node (AMD EPYC, Zen 5), one row at a
    // time 29.6 (plain SIMD128) but 21.4 with relaxed SIMD (its fused multiply-add's latency bounds
    // one chain); 2 far rows 41.3 / 33.1 GB/s, 4 far rows 37.2 / 36.7 (best of 12). 124M
    // parameters' decode step, builds alternated (medians): WASM in Chromium 29.0-29.7 -> 18.7-22.8
    // ms on 1 thread, natively (AVX-512) 16.8-21.6 -> 14.8-19.1 (docs/benchmarks.md). The same sum
    // per output as every tile (tile<1, R>'s). Not in the page's small build (base/build.hpp): its
    // models are small, and each tile's copy of this cost 2 KB of its first view.
    if (kPretrained && M == 1) {
#if defined(__EMSCRIPTEN__) && !defined(ATTN_WASM_RELAXED)
      constexpr size_t S = 2;
#else
      constexpr size_t S = 4;
#endif
      const size_t part = N / S;
      for (size_t n = 0; n < part; ++n) gemv<S>(C + n, A, Bm + n * ldb, bias ? bias + n : nullptr, K, ldb, part);
      for (size_t n = S * part; n < N; ++n) gemv<1>(C + n, A, Bm + n * ldb, bias ? bias + n : nullptr, K, ldb);
      return;
    }
    // Column panels of B small enough to stay in L2 while every row block of A streams past them.
    const size_t NC = std::max<size_t>(NR, (size_t{128} * 1024 / (sizeof(float) * (K ? K : 1))) / NR * NR);
    for (size_t n0 = 0; n0 < N; n0 += NC) {
      const size_t n1 = std::min(N, n0 + NC);
      size_t m = 0;
      for (; m + MR <= M; m += MR) panel<MR>(C, A, Bm, bias, m, n0, n1, K, lda, ldb, ldc);
      for (; m < M; ++m) panel<1>(C, A, Bm, bias, m, n0, n1, K, lda, ldb, ldc);
    }
  }
  template <size_t MR>
  static void panel(float* C, const float* A, const float* Bm, const float* bias, size_t m, size_t n0, size_t n1, size_t K,
                    size_t lda, size_t ldb, size_t ldc) {
    constexpr size_t NR = NR_NT;
    size_t n = n0;
    for (; n + NR <= n1; n += NR)
      tile<MR, NR>(C + m * ldc + n, A + m * lda, Bm + n * ldb, bias ? bias + n : nullptr, K, lda, ldb, ldc);
    for (; n < n1; ++n) tile<MR, 1>(C + m * ldc + n, A + m * lda, Bm + n * ldb, bias ? bias + n : nullptr, K, lda, ldb, ldc);
  }
  // Outer-product tile: MR rows x NV vectors of C in registers; per k, MR broadcasts of A and NV
  // loads of B feed MR*NV FMAs. A[i][k] is at A + i*am + k*ak: (lda, 1) for gemm_nn, (1, lda) for
  // gemm_tn, so both run the same sums in the same order; PK > 0: at A + k*PK + i (a packed tile).
  template <size_t MR, size_t NV, size_t PK = 0>
  static void tile_nn(float* C, const float* A, const float* Bm, size_t K, size_t am, size_t ak, size_t ldb, size_t ldc,
                      bool more) {
    B acc[MR][NV];
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NV; ++j) acc[i][j] = more ? B::load_unaligned(C + i * ldc + j * W) : B(0.f);
    // Both operands through pointers that step once per k, each load at a constant offset from
    // one of them. Written with indices (Bm + k * ldb, A + k * PK + i), clang's WebAssembly
    // multiplied k by ldb and added each row's offset anew on every k (wasm addresses are a base
    // plus a constant, and an index sum that might wrap cannot become the constant): 22
    // instructions per k beside 2x4's 8 multiply-adds in Chromium, 6x2's spilling. Stepped, the
    // tiles ran 49-56 GFLOP/s where they ran 36-46, and the 1x2048x768 forward took 504-509 ms
    // where it took 557-566 (Intel Xeon); natively the same speed. The same sums in the same order.
    const float* bp = Bm;
    const float* ap = A;
    const size_t astep = PK ? PK : ak;
    for (size_t k = 0; k < K; ++k, bp += ldb, ap += astep) {
      B b[NV];
      for (size_t j = 0; j < NV; ++j) b[j] = B::load_unaligned(bp + j * W);
      for (size_t i = 0; i < MR; ++i) {
        const B a(PK ? ap[i] : ap[i * am]);
        for (size_t j = 0; j < NV; ++j) acc[i][j] = madd(a, b[j], acc[i][j]);
      }
    }
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NV; ++j) acc[i][j].store_unaligned(C + i * ldc + j * W);
  }
  // Rows [0, M) of one column block of NV vectors: MR-row tiles, then the last rows 4 and 1 at a time.
  // more: C holds the sums of the K rows before these (a later block of K). P: A as pack_nn wrote
  // it (the tile of row m at A + m * K, its R floats of one k side by side); else A[i][k] is at
  // A + i*am + k*ak.
  template <size_t NV, bool P = false, size_t MR = MR_NN>
  static void rows_nn(float* C, const float* A, const float* Bm, size_t M, size_t K, size_t am, size_t ak, size_t ldb,
                      size_t ldc, bool more) {
    constexpr size_t M4 = MR > 4 ? 4 : 1;
    const auto at = [&](size_t m) { return P ? A + m * K : A + m * am; };
    size_t m = 0;
    for (; m + MR <= M; m += MR) tile_nn<MR, NV, P ? MR : 0>(C + m * ldc, at(m), Bm, K, am, ak, ldb, ldc, more);
    if (MR > 4)
      for (; m + 4 <= M; m += 4) tile_nn<M4, NV, P ? M4 : 0>(C + m * ldc, at(m), Bm, K, am, ak, ldb, ldc, more);
    for (; m < M; ++m) tile_nn<1, NV, P ? 1 : 0>(C + m * ldc, at(m), Bm, K, am, ak, ldb, ldc, more);
  }
  // PACK_NN: rows [0, M) of A, K long, as rows_nn<NV, true> reads them: each tile of R rows (MR,
  // then 4, then 1, as rows_nn splits them) k-major, R floats per k.
  static void pack_nn(float* Ap, const float* A, size_t M, size_t K, size_t am, size_t ak) {
    size_t m = 0;
    const auto tiles = [&](size_t R, size_t count) {
      for (; count--; m += R)
        for (size_t k = 0; k < K; ++k)
          for (size_t i = 0; i < R; ++i) *Ap++ = A[(m + i) * am + k * ak];
    };
    tiles(MR_NN, M / MR_NN);
    if (MR_NN > 4) tiles(4, (M - m) / 4);
    tiles(1, M - m);
  }
  // Rows [0, M) of one block of K against the column blocks of C: NV vectors at a time, then 2,
  // then 1; returns the columns they cover (the rest, under one vector, is tail_nn's).
  template <bool P>
  static size_t strips_nn(float* C, const float* A, const float* b, size_t M, size_t N, size_t kc, size_t am, size_t ak,
                          size_t ldb, size_t ldc, bool more) {
    constexpr size_t NV = NV_NN;
    size_t n = 0;
    for (; n + NV * W <= N; n += NV * W) {
      if (NV == 3 && N - n >= 4 * W && N - n < 5 * W) break;  // 4 vectors left: not 3 + 1
      rows_nn<NV, P>(C + n, A, b + n, M, kc, am, ak, ldb, ldc, more);
    }
    if constexpr (MR4_NN > 0)  // those 4 vectors as one block (else two 2-vector blocks, below)
      if (N - n >= 4 * W && N - n < 5 * W) {
        rows_nn<4, P, MR4_NN>(C + n, A, b + n, M, kc, am, ak, ldb, ldc, more);
        n += 4 * W;
      }
    if (NV > 2)
      for (; n + 2 * W <= N; n += 2 * W) rows_nn<(NV > 2 ? 2 : 1), P>(C + n, A, b + n, M, kc, am, ak, ldb, ldc, more);
    for (; n + W <= N; n += W) rows_nn<1, P>(C + n, A, b + n, M, kc, am, ak, ldb, ldc, more);
    return n;
  }
  static void gemm_outer(float* C, const float* A, const float* Bm, size_t M, size_t N, size_t K, size_t am, size_t ak,
                         size_t ldb, size_t ldc) {
    if constexpr (PACK_NN) {
      static_assert(KB_NN > 0, "PACK_NN packs blocks of KB_NN");
      constexpr size_t MC = 48 / MR_NN * MR_NN;  // rows per packed block: a multiple of the tile
      alignas(64) float Ap[MC * KB_NN];
      if (K == 0) {  // empty sums, as the tiles store them
        for (size_t m = 0; m < M; ++m) std::fill(C + m * ldc, C + m * ldc + N, 0.f);
        return;
      }
      size_t n_end = 0;
      for (size_t k0 = 0; k0 < K; k0 += KB_NN) {
        const size_t kc = std::min(KB_NN, K - k0);
        for (size_t m0 = 0; m0 < M; m0 += MC) {
          const size_t mc = std::min(MC, M - m0);
          pack_nn(Ap, A + m0 * am + k0 * ak, mc, kc, am, ak);
          n_end = strips_nn<true>(C + m0 * ldc, Ap, Bm + k0 * ldb, mc, N, kc, am, ak, ldb, ldc, k0 > 0);
        }
      }
      if (n_end < N) tail_nn(C + n_end, A, Bm + n_end, M, N - n_end, K, am, ak, ldb, ldc);
      return;
    }
    const size_t kb = KB_NN && K > KB_NN ? KB_NN : K;
    size_t n_end = 0;  // columns the vector tiles cover
    for (size_t k0 = 0;;) {
      const size_t kc = std::min(kb, K - k0);
      n_end = strips_nn<false>(C, A + k0 * ak, Bm + k0 * ldb, M, N, kc, am, ak, ldb, ldc, k0 > 0);
      k0 += kc;
      if (k0 >= K) break;
    }
    if (n_end < N) tail_nn(C + n_end, A, Bm + n_end, M, N - n_end, K, am, ak, ldb, ldc);
  }
  // The last r < W columns through the same vector tiles, on a copy of those columns of B padded to
  // one vector per row, into a buffer of whole vectors per row (C holds only r of them): every
  // column of C is the same chain of fma over k, wherever it falls (a scalar loop would round
  // differently from the vector FMA), and a few keys' scores (r = N < W) run as vectors too.
  static void tail_nn(float* C, const float* A, const float* Bm, size_t M, size_t r, size_t K, size_t am, size_t ak,
                      size_t ldb, size_t ldc) {
    constexpr size_t MC = 64, KC = 128;  // rows of C, rows of B per copy
    alignas(64) float bt[KC * W], ct[MC * W];
    for (size_t m0 = 0; m0 < M; m0 += MC) {
      const size_t mc = std::min(MC, M - m0);
      for (size_t k0 = 0;;) {
        const size_t kc = std::min(KC, K - k0);
        for (size_t k = 0; k < kc; ++k)
          for (size_t j = 0; j < W; ++j) bt[k * W + j] = j < r ? Bm[(k0 + k) * ldb + j] : 0.f;
        rows_nn<1>(ct, A + m0 * am + k0 * ak, bt, mc, kc, am, ak, W, W, k0 > 0);
        k0 += kc;
        if (k0 >= K) break;
      }
      for (size_t i = 0; i < mc; ++i)
        for (size_t j = 0; j < r; ++j) C[(m0 + i) * ldc + j] = ct[i * W + j];
    }
  }
  static void gemm_nn(float* C, const float* A, const float* Bm, size_t M, size_t N, size_t K, size_t lda, size_t ldb,
                      size_t ldc) noexcept {
    gemm_outer(C, A, Bm, M, N, K, lda, 1, ldb, ldc);
  }
  static void gemm_tn(float* C, const float* A, const float* Bm, size_t M, size_t N, size_t K, size_t lda, size_t ldb,
                      size_t ldc) noexcept {
    gemm_outer(C, A, Bm, M, N, K, 1, lda, ldb, ldc);
  }
  static void axpy(float* y, float alpha, const float* x, size_t n) noexcept {
    const B va(alpha);
    size_t i = 0;
    for (; i + W <= n; i += W) madd(va, B::load_unaligned(x + i), B::load_unaligned(y + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] += alpha * x[i];
  }
  static void add(float* y, const float* a, const float* b, size_t n) noexcept {
    size_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(a + i) + B::load_unaligned(b + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = a[i] + b[i];
  }
  static void scale(float* x, float s, size_t n) noexcept {
    const B vs(s);
    size_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(x + i) * vs).store_unaligned(x + i);
    for (; i < n; ++i) x[i] *= s;
  }
  static void mul(float* y, const float* a, const float* b, size_t n) noexcept {
    size_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(a + i) * B::load_unaligned(b + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = a[i] * b[i];
  }
  static void masked_fill(float* x, const float* mask, float value, size_t n) noexcept {
    const B v(value), zero(0.f);
    size_t i = 0;
    for (; i + W <= n; i += W)
      xsimd::select(B::load_unaligned(mask + i) != zero, v, B::load_unaligned(x + i)).store_unaligned(x + i);
    for (; i < n; ++i)
      if (mask[i] != 0.f) x[i] = value;
  }
  static void relu(float* x, size_t n) noexcept {
    const B zero(0.f);
    size_t i = 0;
    for (; i + W <= n; i += W) xsimd::max(B::load_unaligned(x + i), zero).store_unaligned(x + i);
    for (; i < n; ++i) x[i] = x[i] > 0.f ? x[i] : 0.f;
  }
  static float hmax(const B& v) {
    alignas(64) float lanes[W];
    v.store_aligned(lanes);
    float m = lanes[0];
    for (size_t j = 1; j < W; ++j) m = lanes[j] > m ? lanes[j] : m;
    return m;
  }
  // e^x for x <= 0 (softmax after subtracting the row's max): x = k ln2 + r with |r| <= ln2/2,
  // e^r = 1 + r p(r), p of degree 5: a near-minimax fit of (e^r - 1) / r made for this (weighted
  // least squares iterated to equal ripple), coefficients rounded to float. Against e^x in double
  // over [-87.3, 0]: at most 0.997 ulp with fused multiply-adds (AVX2, AVX-512, relaxed SIMD), 1.29
  // with a multiply and an add (SSE2, SIMD128); Cephes' expf of degree 7 that it replaced: 0.985
  // and 0.948; Sleef's expf_u10 in PyTorch's softmax: 1.0. k = round(x log2e) comes from adding
  // 1.5 * 2^23 + 127: the sum's low mantissa bits then hold k + 127, so 2^k is those bits shifted
  // into the exponent, and the sum minus that number is k as a float (no rounding or conversion
  // instruction); the last step, 2^k r p + 2^k, is one multiply-add: 12 operations a vector where
  // Cephes' form took 17. x < -87.3 (2^k below the normal range, -1e9 and -inf of masks included)
  // gives exactly 0; NaN stays NaN. Written here because xsimd::exp converts float to int with
  // _mm_cvtps_epi32, which WASM's SSE emulation runs as four scalar lrint calls.
  static B exp_nonpositive(const B& x) {
    using I = xsimd::batch<int32_t, Arch>;
    const B magic(12582912.f + 127.f);
    B k = madd(x, B(1.44269504088896341f), magic);
    const B pow2k = xsimd::bitwise_cast<B>(xsimd::bitwise_cast<I>(k) << 23);
    k = k - magic;
    // x - k ln2 in two steps (ln2's high part has 9 bits: k times it is exact)
    B r = madd(k, B(-0.693359375f), x);
    r = madd(k, B(2.12194440e-4f), r);
    B p = madd(B(0x1.6ae712p-10f), r, B(0x1.12677ep-7f));
    p = madd(p, r, B(0x1.555822p-5f));
    p = madd(p, r, B(0x1.55541ap-3f));
    p = madd(p, r, B(0x1.fffffcp-2f));
    p = madd(p, r, B(1.f));
    return zero_where(x < B(-87.33654475f), madd(r * pow2k, p, pow2k));
  }
  // v with the lanes where `where` holds set to +0: xsimd::select(where, 0, v), which Emscripten's
  // SSE4.1 (_mm_blendv_ps) runs as a shift and a bitselect; here v128.andnot, which clang 14
  // nonetheless folds with the compare into one v128.bitselect (wasm-dis of the softmax, 2026-12-02).
  static B zero_where(const xsimd::batch_bool<float, Arch>& where, const B& v) {
#if defined(__wasm_simd128__)
    if constexpr (std::is_same<Arch, xsimd::sse4_1>::value)
      return B(__m128(wasm_v128_andnot(v128_t(__m128(v)), v128_t(__m128(where)))));
#endif
    return xsimd::select(where, B(0.f), v);
  }
  // max(m, x) for a running max m: xsimd::max (m > x ? m : x); on WASM f32x4.pmax(x, m), defined as
  // x < m ? m : x, the same lanes NaN included, in one instruction where Emscripten's _mm_max_ps
  // is a compare and a bitselect.
  // GCC 12 warns that _mm512_max_ps's pass-through (_mm512_undefined_ps, __Y = __Y) is used
  // uninitialized where it inlines this into softmax (GCC bug 105593: a false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
  static B running_max(const B& m, const B& x) {
#if defined(__wasm_simd128__)
    if constexpr (std::is_same<Arch, xsimd::sse4_1>::value) return B(__m128(wasm_f32x4_pmax(v128_t(__m128(x)), v128_t(__m128(m)))));
#endif
    return xsimd::max(m, x);
  }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  // Softmax of one row: its max with four running maxima (one chain of dependent max
  // instructions took a fifth of the softmax in WASM; the max of floats that are not NaN is the
  // same in any order), then e^(x - max) two vectors at a time, each with its own sum (two chains
  // of the exponential side by side), then the scale by 1 / sum.
  static void softmax(float* x, size_t n) noexcept {
    constexpr float ninf = -std::numeric_limits<float>::infinity();
    size_t i = 0;
    B m0(ninf), m1(ninf), m2(ninf), m3(ninf);
    for (; i + 4 * W <= n; i += 4 * W) {
      m0 = running_max(m0, B::load_unaligned(x + i));
      m1 = running_max(m1, B::load_unaligned(x + i + W));
      m2 = running_max(m2, B::load_unaligned(x + i + 2 * W));
      m3 = running_max(m3, B::load_unaligned(x + i + 3 * W));
    }
    for (; i + W <= n; i += W) m0 = running_max(m0, B::load_unaligned(x + i));
    float m = hmax(running_max(running_max(m0, m1), running_max(m2, m3)));
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    if (m == ninf) {  // fully masked row: zeros, never NaN
      for (i = 0; i < n; ++i) x[i] = 0.f;
      return;
    }
    const B bm(m);
    B s0(0.f), s1(0.f);
    for (i = 0; i + 2 * W <= n; i += 2 * W) {
      const B e0 = exp_nonpositive(B::load_unaligned(x + i) - bm);
      const B e1 = exp_nonpositive(B::load_unaligned(x + i + W) - bm);
      e0.store_unaligned(x + i);
      e1.store_unaligned(x + i + W);
      s0 += e0;
      s1 += e1;
    }
    for (; i + W <= n; i += W) {
      const B e = exp_nonpositive(B::load_unaligned(x + i) - bm);
      e.store_unaligned(x + i);
      s0 += e;
    }
    // The last n % W through one vector too, -inf past the row (e^-inf = 0): a short row (a few
    // keys) would otherwise run std::exp on every element.
    if (i < n) {
      alignas(64) float t[W];
      for (size_t j = 0; j < W; ++j) t[j] = i + j < n ? x[i + j] : ninf;
      B e = exp_nonpositive(B::load_aligned(t) - bm);
      e.store_aligned(t);
      s1 += e;
      for (size_t j = 0; i + j < n; ++j) x[i + j] = t[j];
    }
    scale(x, 1.f / xsimd::hadd(s0 + s1), n);
  }
  // A row's mean and 1 / sqrt(biased variance + eps), as layer_norm and its backward both need them.
  struct Moments {
    float mean, rstd;
  };
  static Moments moments(const float* x, size_t n, float eps) {
    size_t i = 0;
    B vs(0.f);
    for (; i + W <= n; i += W) vs += B::load_unaligned(x + i);
    float mean = xsimd::hadd(vs);
    for (; i < n; ++i) mean += x[i];
    mean /= static_cast<float>(n);
    const B bmean(mean);
    B vv(0.f);
    for (i = 0; i + W <= n; i += W) {
      B d = B::load_unaligned(x + i) - bmean;
      vv = madd(d, d, vv);
    }
    float var = xsimd::hadd(vv);
    for (; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<float>(n);
    const float rstd = 1.f / std::sqrt(var + eps);
    return {mean, rstd};
  }
  static void layer_norm(float* y, const float* x, const float* gamma, const float* beta, size_t n, float eps) noexcept {
    const auto [mean, rstd] = moments(x, n, eps);
    const B bmean(mean), brstd(rstd);
    size_t i = 0;
    for (; i + W <= n; i += W)
      madd((B::load_unaligned(x + i) - bmean) * brstd, B::load_unaligned(gamma + i), B::load_unaligned(beta + i))
          .store_unaligned(y + i);
    for (; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
  }

  static void softmax_backward(float* dx, const float* y, const float* dy, size_t n) noexcept {
    const float s = dot(dy, y, n);
    const B bs(s);
    size_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(y + i) * (B::load_unaligned(dy + i) - bs)).store_unaligned(dx + i);
    for (; i < n; ++i) dx[i] = y[i] * (dy[i] - s);
  }
  static void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* x, const float* dy, const float* gamma,
                                  size_t n, float eps) noexcept {
    const auto [mean, rstd] = moments(x, n, eps);
    const B bmean(mean), brstd(rstd);
    // dgamma += dy * xhat, dbeta += dy; m1 = mean(dy * gamma), m2 = mean(dy * gamma * xhat)
    B v1(0.f), v2(0.f);
    size_t i = 0;
    for (; i + W <= n; i += W) {
      const B xhat = (B::load_unaligned(x + i) - bmean) * brstd, d = B::load_unaligned(dy + i);
      const B g = d * B::load_unaligned(gamma + i);
      madd(d, xhat, B::load_unaligned(dgamma + i)).store_unaligned(dgamma + i);
      (B::load_unaligned(dbeta + i) + d).store_unaligned(dbeta + i);
      v1 += g;
      v2 = madd(g, xhat, v2);
    }
    float m1 = xsimd::hadd(v1), m2 = xsimd::hadd(v2);
    for (; i < n; ++i) {
      const float xhat = (x[i] - mean) * rstd, g = dy[i] * gamma[i];
      dgamma[i] += dy[i] * xhat;
      dbeta[i] += dy[i];
      m1 += g;
      m2 += g * xhat;
    }
    m1 /= static_cast<float>(n);
    m2 /= static_cast<float>(n);
    const B bm1(m1), bm2(m2);
    for (i = 0; i + W <= n; i += W) {
      const B xhat = (B::load_unaligned(x + i) - bmean) * brstd;
      (brstd * (B::load_unaligned(dy + i) * B::load_unaligned(gamma + i) - bm1 - xhat * bm2)).store_unaligned(dx + i);
    }
    for (; i < n; ++i) dx[i] = rstd * (dy[i] * gamma[i] - m1 - (x[i] - mean) * rstd * m2);
  }

  // erf as PyTorch's AVX2 Vectorized<float>::erf computes it: Abramowitz & Stegun 7.1.26,
  // sign(x) * (1 - t * poly(t) * exp(-x^2)), t = 1 / (1 + 0.3275911 |x|), |error| < 1.5e-7; exp of
  // -x^2 <= 0 is exp_nonpositive's domain.
  static B erf(const B& x) {
    const B ax = xsimd::abs(x);
    const B t = B(1.f) / madd(B(0.3275911f), ax, B(1.f));
    B r = madd(B(1.061405429f), t, B(-1.453152027f));
    r = madd(r, t, B(1.421413741f));
    r = madd(r, t, B(-0.284496736f));
    r = madd(r, t, B(0.254829592f));
    const B e = xsimd::fnma(exp_nonpositive(-(x * x)) * t, r, B(1.f));  // 1 - t r exp(-x^2)
    return xsimd::select(x < B(0.f), -e, e);
  }
  static void gelu(float* y, const float* x, size_t n) noexcept {
    const float alpha = static_cast<float>(kSqrt1_2);
    size_t i = 0;
    for (; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i);
      (v * B(0.5f) * (B(1.f) + erf(v * B(alpha)))).store_unaligned(y + i);
    }
    for (; i < n; ++i) y[i] = x[i] * 0.5f * (1.f + std::erf(x[i] * alpha));
  }
  static void gelu_backward(float* dx, const float* x, const float* dy, size_t n) noexcept {
    const float alpha = static_cast<float>(kSqrt1_2), beta = static_cast<float>(kGeluBeta);
    size_t i = 0;
    for (; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i);
      const B cdf = B(0.5f) * (B(1.f) + erf(v * B(alpha))), pdf = B(beta) * exp_nonpositive(v * v * B(-0.5f));
      (B::load_unaligned(dy + i) * madd(v, pdf, cdf)).store_unaligned(dx + i);
    }
    for (; i < n; ++i) {
      const float cdf = 0.5f * (1.f + std::erf(x[i] * alpha)), pdf = beta * std::exp(x[i] * x[i] * -0.5f);
      dx[i] = dy[i] * (cdf + x[i] * pdf);
    }
  }

  // tanh(z) = sign(z) (1 - e) / (1 + e), e = exp(-2 |z|) <= 1 (exp_nonpositive's domain): for
  // GELU's 1 + tanh the absolute error is what matters, ~1 ulp of 1.
  static B tanh(const B& z) {
    const B e = exp_nonpositive(B(-2.f) * xsimd::abs(z));
    const B t = (B(1.f) - e) / (B(1.f) + e);
    return xsimd::select(z < B(0.f), -t, t);
  }
  // 1 / (1 + exp(-x)) from e = exp(-|x|): 1 / (1 + e) for x >= 0, e / (1 + e) below
  static B sigmoid(const B& x) {
    const B e = exp_nonpositive(-xsimd::abs(x)), d = B(1.f) / (B(1.f) + e);
    return xsimd::select(x < B(0.f), e * d, d);
  }
  static void gelu_tanh(float* y, const float* x, size_t n) noexcept {
    const float k = static_cast<float>(kSqrt2OverPi);
    size_t i = 0;
    for (; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i);
      (B(0.5f) * v * (B(1.f) + tanh(B(k) * madd(B(0.044715f) * v * v, v, v)))).store_unaligned(y + i);
    }
    for (; i < n; ++i) y[i] = 0.5f * x[i] * (1.f + std::tanh(k * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
  }
  static void gelu_tanh_backward(float* dx, const float* x, const float* dy, size_t n) noexcept {
    const float k = static_cast<float>(kSqrt2OverPi);
    size_t i = 0;
    for (; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i), t = tanh(B(k) * madd(B(0.044715f) * v * v, v, v));
      const B d = madd(B(0.5f) * v * (B(1.f) - t * t) * B(k), madd(B(3.f * 0.044715f) * v, v, B(1.f)), B(0.5f) * (B(1.f) + t));
      (B::load_unaligned(dy + i) * d).store_unaligned(dx + i);
    }
    for (; i < n; ++i) {
      const float v = x[i], t = std::tanh(k * (v + 0.044715f * v * v * v));
      dx[i] = dy[i] * (0.5f * (1.f + t) + 0.5f * v * (1.f - t * t) * k * (1.f + 3.f * 0.044715f * v * v));
    }
  }
  static void silu(float* y, const float* x, size_t n) noexcept {
    size_t i = 0;
    for (; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i);
      (v * sigmoid(v)).store_unaligned(y + i);
    }
    for (; i < n; ++i) y[i] = x[i] / (1.f + std::exp(-x[i]));
  }
  static void silu_backward(float* dx, const float* x, const float* dy, size_t n) noexcept {
    size_t i = 0;
    for (; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i), sg = sigmoid(v);
      (B::load_unaligned(dy + i) * sg * madd(v, B(1.f) - sg, B(1.f))).store_unaligned(dx + i);
    }
    for (; i < n; ++i) {
      const float sg = 1.f / (1.f + std::exp(-x[i]));
      dx[i] = dy[i] * sg * (1.f + x[i] * (1.f - sg));
    }
  }
  static float sum_squares(const float* x, size_t n) {
    size_t i = 0;
    B vs(0.f);
    for (; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i);
      vs = madd(v, v, vs);
    }
    float ss = xsimd::hadd(vs);
    for (; i < n; ++i) ss += x[i] * x[i];
    return ss;
  }
  static void rms_norm(float* y, const float* x, const float* gamma, size_t n, float eps) noexcept {
    const float r = 1.f / std::sqrt(sum_squares(x, n) / static_cast<float>(n) + eps);
    size_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(gamma + i) * (B::load_unaligned(x + i) * B(r))).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = gamma[i] * (x[i] * r);
  }
  static void rms_norm_backward(float* dx, float* dgamma, const float* x, const float* dy, const float* gamma, size_t n, float eps) noexcept {
    const float r = 1.f / std::sqrt(sum_squares(x, n) / static_cast<float>(n) + eps);
    size_t i = 0;
    B vm(0.f);
    for (; i + W <= n; i += W) {
      const B xv = B::load_unaligned(x + i), d = B::load_unaligned(dy + i);
      madd(d, xv * B(r), B::load_unaligned(dgamma + i)).store_unaligned(dgamma + i);
      vm = madd(d * B::load_unaligned(gamma + i), xv, vm);
    }
    float m = xsimd::hadd(vm);
    for (; i < n; ++i) {
      dgamma[i] += dy[i] * x[i] * r;
      m += dy[i] * gamma[i] * x[i];
    }
    m /= static_cast<float>(n);
    const float c = r * r * m;
    for (i = 0; i + W <= n; i += W)
      (B(r) * (B::load_unaligned(dy + i) * B::load_unaligned(gamma + i) - B::load_unaligned(x + i) * B(c))).store_unaligned(dx + i);
    for (; i < n; ++i) dx[i] = r * (dy[i] * gamma[i] - x[i] * c);
  }

  // kernels_scalar.cpp's adam W elements at a time, each by the same operations in the same order.
  static void adam(float* p, float* m, float* v, const float* g, size_t n, const AdamStep& s) noexcept {
    const B decay(s.decay), wd(s.wd), beta1(s.beta1), beta2(s.beta2), one_beta1(s.one_beta1), one_beta2(s.one_beta2),
        bias2_sqrt(s.bias2_sqrt), step_size(s.step_size), eps(s.eps);
    size_t k = 0;
    for (; k + W <= n; k += W) {
      B pk = B::load_unaligned(p + k);
      if (s.decoupled) pk = pk * decay;
      B gk = B::load_unaligned(g + k);
      if (s.coupled) gk = gk + wd * pk;
      const B mk = B::load_unaligned(m + k) * beta1 + one_beta1 * gk;
      const B vk = B::load_unaligned(v + k) * beta2 + one_beta2 * gk * gk;
      mk.store_unaligned(m + k);
      vk.store_unaligned(v + k);
      (pk + step_size * mk / (xsimd::sqrt(vk) / bias2_sqrt + eps)).store_unaligned(p + k);
    }
    for (; k < n; ++k) {
      if (s.decoupled) p[k] *= s.decay;
      float gk = g[k];
      if (s.coupled) gk = gk + s.wd * p[k];
      m[k] = m[k] * s.beta1 + s.one_beta1 * gk;
      v[k] = v[k] * s.beta2 + s.one_beta2 * gk * gk;
      p[k] = p[k] + s.step_size * m[k] / (std::sqrt(v[k]) / s.bias2_sqrt + s.eps);
    }
  }

  static const Kernels& table(const char* name) {
    static const Kernels k{name, W, gemm_nt, gemm_nn, gemm_tn, axpy, add, scale, mul, masked_fill, relu, softmax, layer_norm,
                           softmax_backward, layer_norm_backward, gelu, gelu_backward,
                           // Hugging Face's models only: not in the page's small build (base/build.hpp)
                           kPretrained ? gelu_tanh : nullptr, kPretrained ? gelu_tanh_backward : nullptr, kPretrained ? silu : nullptr,
                           kPretrained ? silu_backward : nullptr, kPretrained ? rms_norm : nullptr,
                           kPretrained ? rms_norm_backward : nullptr, adam};
    return k;
  }
};

// gemm_nt for long inner dimensions (nn.Linear: x W^T with K = in_features) without horizontal
// sums: A is packed, MV*W rows at a time, k-major (one vector load gives A[m..m+MV*W)[k]), and
// each of NR rows of B gives one broadcast float per k, so MV*NR accumulators each hold MV*W
// outputs of one column and every product goes straight into its lane (the dot-product tiles of
// K::gemm_nt end each output with a horizontal sum). The weights are read in place: nothing to
// cache or invalidate when training changes them (gemm_nt_packed below, for calls of one vector of
// rows or less, reads a copy math/packed.hpp keeps). K runs in blocks of at most
// KC: a packed panel (MV*W x KC floats, on the stack) stays in cache (AVX2's 16 x 256 in L1,
// AVX-512's 48 x 768 in L2: one pass over a 768-wide K, no partial sums through C, measured
// faster) while every column tile of B streams past it; each tile goes into C transposed (in
// registers on AVX-512, through a small buffer elsewhere), and block sums add up in C.
// Each output is the same chain of multiply-adds over k whatever M, the tile or the row's place:
// s_b = fma over k in block b, C = ((s_0 + s_1) + ...) + bias, so in calls of more than W / 2 rows
// a row's numbers never depend on the rows computed beside it. NR1 is the column tile of a
// single-vector panel (the last rows of A when they fit one vector; the whole of A for a few
// tokens). At most W / 2 rows (a decode step's one token per sequence) would leave most of a
// panel's lanes empty: Dot::gemm_nt (K's dot-product tiles, 2-4x faster there) runs them, so a
// call of that few rows sums in its own order.
template <class Arch, size_t MV, size_t NR, size_t NR1, size_t KC, class Dot>
struct GemmNtPacked {
  using B = xsimd::batch<float, Arch>;
  static constexpr size_t W = B::size;

  // acc[j][v] = sum_k Ap[k][v*W + lane] * Bm[j*ldb + k]; written to buf[j*P + v*W + lane], P = V*W
  template <size_t V, size_t R>
  static void tile(float* buf, const float* Ap, const float* Bm, size_t kc, size_t ldb) {
    constexpr size_t P = V * W;
    B acc[R][V];
    for (size_t j = 0; j < R; ++j)
      for (size_t v = 0; v < V; ++v) acc[j][v] = B(0.f);
    if constexpr (R % 4 == 0 && R > 8) {
      // A single-vector panel's 12 (AVX2) or 16 (AVX-512) columns: the rows of B in groups of 4,
      // one pointer a group stepping along k, each row at 0, 1, 2 or 3 times ldb from it (x86's
      // base + index * 4 or 8). With a pointer a row gcc ran out of general registers and reloaded
      // 8 of them from the stack every 2 k. AMD EPYC (Zen 5), AVX-512, 16 x 768 x 768 alone:
      // 201-236 -> 217-248 GFLOP/s (binaries alternated); the 1 x 16 x 768 forward 0.343-0.368 ->
      // 0.340-0.347 ms; AVX2's unchanged. Grouped, the 8 columns of a 3-vector panel ran slower
      // (1 x 128 x 768: 3.06-3.16 against 2.68-2.71 ms) and keep a pointer a row below. The same
      // multiply-adds in the same order either way.
      const float* gp[R / 4];
      for (size_t g = 0; g < R / 4; ++g) gp[g] = Bm + 4 * g * ldb;
      const size_t l2 = 2 * ldb, l3 = 3 * ldb;
#pragma GCC unroll 2
      for (size_t k = 0; k < kc; ++k) {
        B a[V];
        for (size_t v = 0; v < V; ++v) a[v] = B::load_aligned(Ap + k * P + v * W);
        for (size_t g = 0; g < R / 4; ++g) {
          const float* q = gp[g]++;
          const B b[4] = {B(q[0]), B(q[ldb]), B(q[l2]), B(q[l3])};
          for (size_t r = 0; r < 4; ++r)
            for (size_t v = 0; v < V; ++v) acc[4 * g + r][v] = madd(a[v], b[r], acc[4 * g + r][v]);
        }
      }
    } else {
      const float* bp[R];
      for (size_t j = 0; j < R; ++j) bp[j] = Bm + j * ldb;
#pragma GCC unroll 2  // 2 k per loop trip: 4 % faster on the Xeon (clang reads it too)
      for (size_t k = 0; k < kc; ++k) {
        B a[V];
        for (size_t v = 0; v < V; ++v) a[v] = B::load_aligned(Ap + k * P + v * W);
        for (size_t j = 0; j < R; ++j) {
          const B b(bp[j][k]);
          for (size_t v = 0; v < V; ++v) acc[j][v] = madd(a[v], b, acc[j][v]);
        }
      }
    }
    for (size_t j = 0; j < R; ++j)
      for (size_t v = 0; v < V; ++v) acc[j][v].store_aligned(buf + j * P + v * W);
  }
#if defined(__AVX512F__)
  static constexpr bool kAvx512 = std::is_same<Arch, xsimd::avx512f>::value;
  // The first two steps of a transpose of n rows (8 or 16): rows paired by unpack, then quads by
  // shuffle, so u[4q + j] holds, in each 128-bit lane, column j + 4 * lane of rows 4q .. 4q + 3.
  static void quads(const __m512* r, __m512* u, int n) {
    __m512 t[16];
    for (int i = 0; i < n / 2; ++i) {
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < n / 4; ++i) {
      u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
  }
  // r[i] = row i -> r[j] = column j, 16 x 16
  static void transpose16(__m512 r[16]) {
    __m512 t[16];
    quads(r, r, 16);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        t[8 * i + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0x88);
        t[8 * i + 4 + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0xdd);
      }
    for (int j = 0; j < 8; ++j) {
      r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
      r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
    }
  }
  // c[j] = column j of 16 rows, j < 8 -> o[l] = [row l | row l + 8], 8 columns each, l < 8
  static void transpose16x8(const __m512 c[8], __m512 o[8]) {
    __m512 u[8];
    quads(c, u, 8);
    const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
    const __m512i hi = _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
    for (int j = 0; j < 4; ++j) {
      o[j] = _mm512_permutex2var_ps(u[j], lo, u[4 + j]);
      o[4 + j] = _mm512_permutex2var_ps(u[j], hi, u[4 + j]);
    }
  }
  // 8 columns of one row into C: = (first block) or +=, + bias after the last block
  static void put8(float* c, __m256 v, const float* bias, bool first, bool last) {
    if (!first) v = _mm256_add_ps(_mm256_loadu_ps(c), v);
    if (last && bias) v = _mm256_add_ps(v, _mm256_loadu_ps(bias));
    _mm256_storeu_ps(c, v);
  }
#else
  static constexpr bool kAvx512 = false;
#endif
  // The tile's buffer (R columns of P rows) into rows [0, rows) and columns [n, n + R) of C.
  template <size_t P, size_t R>
  static void put(float* C, const float* buf, const float* bias, size_t rows, size_t n, size_t ldc, bool first, bool last) {
#if defined(__AVX512F__)
    if constexpr (kAvx512 && R == 8) {  // transposed in registers, 16 rows at a time
      for (size_t i0 = 0; i0 < rows; i0 += 16) {
        __m512 c[8], o[8];
        for (size_t j = 0; j < 8; ++j) c[j] = _mm512_load_ps(buf + j * P + i0);
        transpose16x8(c, o);
        const float* b = bias ? bias + n : nullptr;
        for (size_t l = 0; l < 8; ++l) {
          if (i0 + l < rows) put8(C + (i0 + l) * ldc + n, _mm512_castps512_ps256(o[l]), b, first, last);
          if (i0 + l + 8 < rows)
            put8(C + (i0 + l + 8) * ldc + n, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(o[l]), 1)), b, first, last);
        }
      }
      return;
    }
#endif
    for (size_t i = 0; i < rows; ++i) {
      float* c = C + i * ldc + n;
      for (size_t j = 0; j < R; ++j) {
        float s = first ? buf[j * P + i] : c[j] + buf[j * P + i];
        c[j] = last && bias ? s + bias[n + j] : s;
      }
    }
  }
  // One panel of `rows` rows of A (packed in Ap, P = V*W floats per k) against columns [0, N) of B:
  // C[i][n] = buf (first block) or += buf, and + bias[n] after the last block.
  template <size_t V, size_t R>
  static void panel(float* C, const float* Ap, const float* Bm, const float* bias, size_t rows, size_t N, size_t kc,
                    size_t ldb, size_t ldc, bool first, bool last) {
    constexpr size_t P = V * W;
    alignas(64) float buf[R * P];
    size_t n = 0;
    for (; n + R <= N; n += R) {
      tile<V, R>(buf, Ap, Bm + n * ldb, kc, ldb);
      put<P, R>(C, buf, bias, rows, n, ldc, first, last);
    }
    for (; n + 4 <= N; n += 4) {
      tile<V, 4>(buf, Ap, Bm + n * ldb, kc, ldb);
      put<P, 4>(C, buf, bias, rows, n, ldc, first, last);
    }
    for (; n < N; ++n) {
      tile<V, 1>(buf, Ap, Bm + n * ldb, kc, ldb);
      put<P, 1>(C, buf, bias, rows, n, ldc, first, last);
    }
  }
  // Ap[k * P + i] = A[i * lda + k] for i < rows, 0 for rows <= i < P
  template <size_t V>
  static void pack(float* Ap, const float* A, size_t rows, size_t kc, size_t lda) {
    constexpr size_t P = V * W;
    size_t k0 = 0;
#if defined(__AVX512F__)
    if constexpr (kAvx512) {  // 16 x 16 blocks transposed in registers
      for (; k0 + 16 <= kc; k0 += 16)
        for (size_t i0 = 0; i0 < P; i0 += 16) {
          __m512 r[16];
          for (size_t i = 0; i < 16; ++i)
            r[i] = i0 + i < rows ? _mm512_loadu_ps(A + (i0 + i) * lda + k0) : _mm512_setzero_ps();
          transpose16(r);
          for (size_t k = 0; k < 16; ++k) _mm512_store_ps(Ap + (k0 + k) * P + i0, r[k]);
        }
    }
#endif
    for (size_t i = 0; i < rows; ++i)
      for (size_t k = k0; k < kc; ++k) Ap[k * P + i] = A[i * lda + k];
    for (size_t i = rows; i < P; ++i)
      for (size_t k = k0; k < kc; ++k) Ap[k * P + i] = 0.f;
  }
  // K = 0: C = 0 + bias (or 0) in rows [0, M), columns [n0, n1)
  static void empty_sums(float* C, const float* bias, size_t M, size_t n0, size_t n1, size_t ldc) {
    for (size_t m = 0; m < M; ++m)
      for (size_t n = n0; n < n1; ++n) C[m * ldc + n] = bias ? 0.f + bias[n] : 0.f;
  }
  // K's blocks: of equal length (a multiple of 16 but the last), at most KC
  static size_t block_len(size_t K) {
    const size_t blocks = (K + KC - 1) / KC;
    return std::min(KC, ((K + blocks - 1) / blocks + 15) / 16 * 16);
  }
  static void gemm_nt(float* C, const float* A, const float* Bm, const float* bias, size_t M, size_t N, size_t K,
                      size_t lda, size_t ldb, size_t ldc) noexcept {
    constexpr size_t P = MV * W;
    if (M <= W / 2) {
      Dot::gemm_nt(C, A, Bm, bias, M, N, K, lda, ldb, ldc);
      return;
    }
    alignas(64) float Ap[P * KC];
    if (K == 0) return empty_sums(C, bias, M, 0, N, ldc);
    const size_t kb = block_len(K);
    for (size_t k0 = 0; k0 < K; k0 += kb) {
      const size_t kc = std::min(kb, K - k0);
      const bool first = k0 == 0, last = k0 + kc == K;
      // Panels of MV vectors of rows; the last rows in a panel of 2 vectors (zero rows pad it) or
      // 1 when that is all they fill.
      constexpr size_t V2 = MV > 2 ? 2 : MV;
      for (size_t m = 0; m < M;) {
        const size_t left = M - m;
        if (left <= W) {
          pack<1>(Ap, A + m * lda + k0, left, kc, lda);
          panel<1, NR1>(C + m * ldc, Ap, Bm + k0, bias, left, N, kc, ldb, ldc, first, last);
          break;
        }
        if (MV > 2 && left <= 2 * W) {
          pack<V2>(Ap, A + m * lda + k0, left, kc, lda);
          panel<V2, NR>(C + m * ldc, Ap, Bm + k0, bias, left, N, kc, ldb, ldc, first, last);
          break;
        }
        const size_t rows = std::min(P, left);
        pack<MV>(Ap, A + m * lda + k0, rows, kc, lda);
        panel<MV, NR>(C + m * ldc, Ap, Bm + k0, bias, rows, N, kc, ldb, ldc, first, last);
        m += rows;
      }
    }
  }

  // Weights packed ahead (Kernels::pack_nt) for the calls of one vector of rows or less, where the
  // tile above gets one load of A per multiply-add (one vector of A, a broadcast of B for each):
  // B's columns in panels of PN = 2 vectors, k-major, so a tile of PR rows x 2 vectors gets 2 loads
  // and PR broadcasts of A (read in place: packing it too cost 1-2 %) for 2 * PR multiply-adds.
  // AMD EPYC (Zen 5), 16 x 768 x 768, weights cycled through L3: 232-251 GFLOP/s in place, 266-276
  // packed (48 rows or more: no gain, so only these calls use it). The same multiply-adds in the
  // same order as gemm_nt: equal bits.
  static constexpr size_t PN = 2 * W, PR = W == 16 ? 8 : 6;
  static size_t packed_floats(size_t N, size_t K) noexcept { return (N + PN - 1) / PN * PN * K; }
  // Bp[(p * K + k) * PN + c] = B[(p * PN + c) * ldb + k], zero columns padding the last panel
  static void pack_nt(float* Bp, const float* Bm, size_t N, size_t K, size_t ldb) noexcept {
    for (size_t p = 0; p * PN < N; ++p)
      for (size_t c = 0; c < PN; ++c) {
        const size_t n = p * PN + c;
        float* out = Bp + p * K * PN + c;
        for (size_t k = 0; k < K; ++k) out[k * PN] = n < N ? Bm[n * ldb + k] : 0.f;
      }
  }
  // tile() with the roles swapped, for the R rows a block has (PR, or the last block's rest): the
  // 2 vectors of packed B as its packed panel, R rows of A read in place as its broadcast rows, so
  // buf[r * PN + c] = sum over kc of A[r * lda + k] * Bp[k * PN + c] (products commute: the same bits)
  template <size_t... R>
  static void packed_tile(size_t rows, float* buf, const float* A, size_t lda, const float* Bp, size_t kc,
                          std::index_sequence<R...>) {
    ((rows == R + 1 ? tile<2, R + 1>(buf, Bp, A, kc, lda) : void()), ...);
  }
  // Columns [n0, n1) of gemm_nt(C, A, B, bias, M, N, K, lda, ldb, ldc) from Bp = pack_nt(B), for
  // W / 2 < M <= W; n0 a multiple of PN. C and bias point at column 0.
  static void gemm_nt_packed(float* C, const float* A, const float* Bp, const float* bias, size_t M, size_t n0, size_t n1,
                             size_t K, size_t lda, size_t ldc) noexcept {
    alignas(64) float buf[PR * PN];
    if (K == 0) return empty_sums(C, bias, M, n0, n1, ldc);
    const size_t kb = block_len(K), blocks = (M + PR - 1) / PR;
    for (size_t k0 = 0; k0 < K; k0 += kb) {
      const size_t kc = std::min(kb, K - k0);
      const bool first = k0 == 0, last = k0 + kc == K;
      for (size_t n = n0; n < n1; n += PN) {
        const float* panel = Bp + (n / PN * K + k0) * PN;
        const size_t cols = std::min(PN, n1 - n);
        for (size_t rb = 0; rb < blocks; ++rb) {
          const size_t rows = std::min(PR, M - rb * PR);
          packed_tile(rows, buf, A + rb * PR * lda + k0, lda, panel, kc, std::make_index_sequence<PR>());
          for (size_t r = 0; r < rows; ++r) {
            float* c = C + (rb * PR + r) * ldc + n;
            const float* s = buf + r * PN;
            size_t j = 0;
            for (; j + W <= cols; j += W) {  // as put(): (C + s) + bias, the same bits
              B v = B::load_aligned(s + j);
              if (!first) v = B::load_unaligned(c + j) + v;
              if (last && bias) v = v + B::load_unaligned(bias + n + j);
              v.store_unaligned(c + j);
            }
            for (; j < cols; ++j) {
              const float v = first ? s[j] : c[j] + s[j];
              c[j] = last && bias ? v + bias[n + j] : v;
            }
          }
        }
      }
    }
  }
  // A table's gemm_nt and packed entries replaced by these (kernels_avx2.cpp, kernels_avx512.cpp).
  static Kernels install(Kernels k) {
    k.gemm_nt = gemm_nt;
    k.packed_cols = PN;
    k.packed_floats = packed_floats;
    k.pack_nt = pack_nt;
    k.gemm_nt_packed = gemm_nt_packed;
    return k;
  }
};

}  // inline namespace ATTN_SIMD_VARIANT
}  // namespace attn::simd
