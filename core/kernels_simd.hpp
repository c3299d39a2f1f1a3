// SIMD kernels, written once and templated on the xsimd architecture: a vector loop and a
// scalar tail each. Instantiated per architecture in kernels_<arch>.cpp, each built with its own
// flags; kernels.cpp picks one at run time. The scalar twins are in kernels_scalar.cpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "kernels.hpp"

namespace attn::simd {

// MR_NT x NR_NT: gemm_nt's register tile; MR_NN x NV_NN vectors: gemm_nn's outer-product tile.
// Accumulators + the B vectors + one A vector must fit the 16 vector registers; for WASM the
// register allocator is V8's, which keeps fewer of them than a C++ compiler (kernels_wasm.cpp).
template <class Arch, size_t MR_NT = 4, size_t NR_NT = 3, size_t MR_NN = 4, size_t NV_NN = 2>
struct K {
  using B = xsimd::batch<float, Arch>;
  static constexpr size_t W = B::size;

  static float dot(const float* a, const float* b, size_t n) {
    B acc0(0.f), acc1(0.f);
    size_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
      acc0 = xsimd::fma(B::load_unaligned(a + i), B::load_unaligned(b + i), acc0);
      acc1 = xsimd::fma(B::load_unaligned(a + i + W), B::load_unaligned(b + i + W), acc1);
    }
    for (; i + W <= n; i += W) acc0 = xsimd::fma(B::load_unaligned(a + i), B::load_unaligned(b + i), acc0);
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
        for (size_t j = 0; j < NR; ++j) acc[i][j] = xsimd::fma(a, b[j], acc[i][j]);
      }
    }
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NR; ++j) {
        float s = xsimd::hadd(acc[i][j]);
        for (size_t kk = k; kk < K; ++kk) s += A[i * lda + kk] * Bm[j * ldb + kk];
        C[i * ldc + j] = s + (bias ? bias[j] : 0.f);
      }
  }
  static void gemm_nt(float* C, const float* A, const float* Bm, const float* bias, size_t M, size_t N, size_t K,
                      size_t lda, size_t ldb, size_t ldc) {
    constexpr size_t MR = MR_NT, NR = NR_NT;
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
  // gemm_tn, so both run the same sums in the same order.
  template <size_t MR, size_t NV>
  static void tile_nn(float* C, const float* A, const float* Bm, size_t K, size_t am, size_t ak, size_t ldb, size_t ldc) {
    B acc[MR][NV];
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NV; ++j) acc[i][j] = B(0.f);
    for (size_t k = 0; k < K; ++k) {
      B b[NV];
      for (size_t j = 0; j < NV; ++j) b[j] = B::load_unaligned(Bm + k * ldb + j * W);
      for (size_t i = 0; i < MR; ++i) {
        const B a(A[i * am + k * ak]);
        for (size_t j = 0; j < NV; ++j) acc[i][j] = xsimd::fma(a, b[j], acc[i][j]);
      }
    }
    for (size_t i = 0; i < MR; ++i)
      for (size_t j = 0; j < NV; ++j) acc[i][j].store_unaligned(C + i * ldc + j * W);
  }
  static void gemm_outer(float* C, const float* A, const float* Bm, size_t M, size_t N, size_t K, size_t am, size_t ak,
                         size_t ldb, size_t ldc) {
    constexpr size_t MR = MR_NN, NV = NV_NN;
    size_t n = 0;
    for (; n + NV * W <= N; n += NV * W) {
      size_t m = 0;
      for (; m + MR <= M; m += MR) tile_nn<MR, NV>(C + m * ldc + n, A + m * am, Bm + n, K, am, ak, ldb, ldc);
      for (; m < M; ++m) tile_nn<1, NV>(C + m * ldc + n, A + m * am, Bm + n, K, am, ak, ldb, ldc);
    }
    for (; n + W <= N; n += W) {
      size_t m = 0;
      for (; m + MR <= M; m += MR) tile_nn<MR, 1>(C + m * ldc + n, A + m * am, Bm + n, K, am, ak, ldb, ldc);
      for (; m < M; ++m) tile_nn<1, 1>(C + m * ldc + n, A + m * am, Bm + n, K, am, ak, ldb, ldc);
    }
    if (n < N)  // the last N % W columns: scalar, one row at a time
      for (size_t m = 0; m < M; ++m)
        for (size_t j = n; j < N; ++j) {
          float s = 0.f;
          for (size_t k = 0; k < K; ++k) s += A[m * am + k * ak] * Bm[k * ldb + j];
          C[m * ldc + j] = s;
        }
  }
  static void gemm_nn(float* C, const float* A, const float* Bm, size_t M, size_t N, size_t K, size_t lda, size_t ldb,
                      size_t ldc) {
    gemm_outer(C, A, Bm, M, N, K, lda, 1, ldb, ldc);
  }
  static void gemm_tn(float* C, const float* A, const float* Bm, size_t M, size_t N, size_t K, size_t lda, size_t ldb,
                      size_t ldc) {
    gemm_outer(C, A, Bm, M, N, K, 1, lda, ldb, ldc);
  }
  static void axpy(float* y, float alpha, const float* x, size_t n) {
    const B va(alpha);
    size_t i = 0;
    for (; i + W <= n; i += W) xsimd::fma(va, B::load_unaligned(x + i), B::load_unaligned(y + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] += alpha * x[i];
  }
  static void add(float* y, const float* a, const float* b, size_t n) {
    size_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(a + i) + B::load_unaligned(b + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = a[i] + b[i];
  }
  static void scale(float* x, float s, size_t n) {
    const B vs(s);
    size_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(x + i) * vs).store_unaligned(x + i);
    for (; i < n; ++i) x[i] *= s;
  }
  static void mul(float* y, const float* a, const float* b, size_t n) {
    size_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(a + i) * B::load_unaligned(b + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = a[i] * b[i];
  }
  static void masked_fill(float* x, const float* mask, float value, size_t n) {
    const B v(value), zero(0.f);
    size_t i = 0;
    for (; i + W <= n; i += W)
      xsimd::select(B::load_unaligned(mask + i) != zero, v, B::load_unaligned(x + i)).store_unaligned(x + i);
    for (; i < n; ++i)
      if (mask[i] != 0.f) x[i] = value;
  }
  static void relu(float* x, size_t n) {
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
  // e^x for x <= 0 (softmax after subtracting the row's max), Cephes' expf: x = k ln2 + r with
  // |r| <= ln2/2, e^r by a degree-6 polynomial (max error ~1 ulp, as xsimd::exp and Sleef's expf_u10
  // that PyTorch's softmax uses), 2^k built in the exponent bits. x < -87.3 (2^k below the normal
  // range, -1e9 and -inf of masks included) gives exactly 0; NaN stays NaN. Written here because
  // xsimd::exp converts float to int with _mm_cvtps_epi32, which WASM's SSE emulation runs as four
  // scalar lrint calls: this version is 4x faster there and no slower natively.
  static B exp_nonpositive(const B& x) {
    using I = xsimd::batch<int32_t, Arch>;
    const B k = xsimd::nearbyint(x * B(1.44269504088896341f));
    B r = xsimd::fnma(k, B(0.693359375f), x);
    r = xsimd::fnma(k, B(-2.12194440e-4f), r);
    B p(1.9875691500E-4f);
    p = xsimd::fma(p, r, B(1.3981999507E-3f));
    p = xsimd::fma(p, r, B(8.3334519073E-3f));
    p = xsimd::fma(p, r, B(4.1665795894E-2f));
    p = xsimd::fma(p, r, B(1.6666665459E-1f));
    p = xsimd::fma(p, r, B(5.0000001201E-1f));
    p = xsimd::fma(p * r, r, r) + B(1.f);
    // k + 1.5 * 2^23 holds k in its low mantissa bits (|k| < 2^22): int k without a conversion.
    const I ki = xsimd::bitwise_cast<I>(k + B(12582912.f)) - I(0x4B400000);
    const B pow2k = xsimd::bitwise_cast<B>((ki + I(127)) << 23);
    return xsimd::select(x < B(-87.33654475f), B(0.f), p * pow2k);
  }
  static void softmax(float* x, size_t n) {
    constexpr float ninf = -std::numeric_limits<float>::infinity();
    size_t i = 0;
    B vm(ninf);
    for (; i + W <= n; i += W) vm = xsimd::max(vm, B::load_unaligned(x + i));
    float m = hmax(vm);
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    if (m == ninf) {  // fully masked row: zeros, never NaN
      for (i = 0; i < n; ++i) x[i] = 0.f;
      return;
    }
    const B bm(m);
    B vs(0.f);
    for (i = 0; i + W <= n; i += W) {
      B e = exp_nonpositive(B::load_unaligned(x + i) - bm);
      e.store_unaligned(x + i);
      vs += e;
    }
    float sum = xsimd::hadd(vs);
    for (; i < n; ++i) sum += (x[i] = std::exp(x[i] - m));
    scale(x, 1.f / sum, n);
  }
  static void layer_norm(float* y, const float* x, const float* gamma, const float* beta, size_t n, float eps) {
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
      vv = xsimd::fma(d, d, vv);
    }
    float var = xsimd::hadd(vv);
    for (; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<float>(n);
    const float rstd = 1.f / std::sqrt(var + eps);
    const B brstd(rstd);
    for (i = 0; i + W <= n; i += W)
      xsimd::fma((B::load_unaligned(x + i) - bmean) * brstd, B::load_unaligned(gamma + i), B::load_unaligned(beta + i))
          .store_unaligned(y + i);
    for (; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
  }

  static void softmax_backward(float* dx, const float* y, const float* dy, size_t n) {
    const float s = dot(dy, y, n);
    const B bs(s);
    size_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(y + i) * (B::load_unaligned(dy + i) - bs)).store_unaligned(dx + i);
    for (; i < n; ++i) dx[i] = y[i] * (dy[i] - s);
  }
  static void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* x, const float* dy, const float* gamma,
                                  size_t n, float eps) {
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
      vv = xsimd::fma(d, d, vv);
    }
    float var = xsimd::hadd(vv);
    for (; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<float>(n);
    const float rstd = 1.f / std::sqrt(var + eps);
    const B brstd(rstd);
    // dgamma += dy * xhat, dbeta += dy; m1 = mean(dy * gamma), m2 = mean(dy * gamma * xhat)
    B v1(0.f), v2(0.f);
    for (i = 0; i + W <= n; i += W) {
      const B xhat = (B::load_unaligned(x + i) - bmean) * brstd, d = B::load_unaligned(dy + i);
      const B g = d * B::load_unaligned(gamma + i);
      xsimd::fma(d, xhat, B::load_unaligned(dgamma + i)).store_unaligned(dgamma + i);
      (B::load_unaligned(dbeta + i) + d).store_unaligned(dbeta + i);
      v1 += g;
      v2 = xsimd::fma(g, xhat, v2);
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
    const B t = B(1.f) / xsimd::fma(B(0.3275911f), ax, B(1.f));
    B r = xsimd::fma(B(1.061405429f), t, B(-1.453152027f));
    r = xsimd::fma(r, t, B(1.421413741f));
    r = xsimd::fma(r, t, B(-0.284496736f));
    r = xsimd::fma(r, t, B(0.254829592f));
    const B e = xsimd::fnma(exp_nonpositive(-(x * x)) * t, r, B(1.f));  // 1 - t r exp(-x^2)
    return xsimd::select(x < B(0.f), -e, e);
  }
  static void gelu(float* y, const float* x, size_t n) {
    const float alpha = static_cast<float>(kSqrt1_2);
    size_t i = 0;
    for (; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i);
      (v * B(0.5f) * (B(1.f) + erf(v * B(alpha)))).store_unaligned(y + i);
    }
    for (; i < n; ++i) y[i] = x[i] * 0.5f * (1.f + std::erf(x[i] * alpha));
  }
  static void gelu_backward(float* dx, const float* x, const float* dy, size_t n) {
    const float alpha = static_cast<float>(kSqrt1_2), beta = static_cast<float>(kGeluBeta);
    size_t i = 0;
    for (; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i);
      const B cdf = B(0.5f) * (B(1.f) + erf(v * B(alpha))), pdf = B(beta) * exp_nonpositive(v * v * B(-0.5f));
      (B::load_unaligned(dy + i) * xsimd::fma(v, pdf, cdf)).store_unaligned(dx + i);
    }
    for (; i < n; ++i) {
      const float cdf = 0.5f * (1.f + std::erf(x[i] * alpha)), pdf = beta * std::exp(x[i] * x[i] * -0.5f);
      dx[i] = dy[i] * (cdf + x[i] * pdf);
    }
  }

  static const Kernels& table(const char* name) {
    static const Kernels k{name, gemm_nt, gemm_nn, gemm_tn, axpy, add, scale, mul, masked_fill, relu, softmax, layer_norm,
                           softmax_backward, layer_norm_backward, gelu, gelu_backward};
    return k;
  }
};

}  // namespace attn::simd
