// SIMD kernels, written once and templated on the xsimd architecture: a vector loop and a
// scalar tail each. Instantiated per architecture in kernels_<arch>.cpp, each built with its own
// flags; kernels.cpp picks one at run time. The scalar twins are in kernels_scalar.cpp.
#pragma once
#include <cmath>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "kernels.hpp"

namespace attn::simd {

template <class Arch>
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
      B e = xsimd::exp(B::load_unaligned(x + i) - bm);
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

  static const Kernels& table(const char* name) {
    static const Kernels k{name, dot, axpy, add, scale, mul, masked_fill, relu, softmax, layer_norm};
    return k;
  }
};

}  // namespace attn::simd
