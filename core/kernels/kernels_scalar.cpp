// Scalar reference kernels: the slow, obvious twin of every SIMD kernel (kernels_simd.hpp).
// Tests compare the two on awkward sizes and compare this one with PyTorch's fixtures.
#include <cmath>
#include <limits>

#include "base/build.hpp"
#include "kernels/kernels.hpp"

namespace attn {
namespace {

float dot(const float* a, const float* b, size_t n) {
  float s = 0.f;
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}
void gemm_nt(float* C, const float* A, const float* B, const float* bias, size_t M, size_t N, size_t K, size_t lda,
             size_t ldb, size_t ldc) noexcept {
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) C[m * ldc + n] = dot(A + m * lda, B + n * ldb, K) + (bias ? bias[n] : 0.f);
}
void axpy(float* y, float alpha, const float* x, size_t n) noexcept;
void gemm_nn(float* C, const float* A, const float* B, size_t M, size_t N, size_t K, size_t lda, size_t ldb, size_t ldc) noexcept {
  for (size_t m = 0; m < M; ++m) {
    for (size_t n = 0; n < N; ++n) C[m * ldc + n] = 0.f;
    for (size_t k = 0; k < K; ++k) axpy(C + m * ldc, A[m * lda + k], B + k * ldb, N);
  }
}
void gemm_tn(float* C, const float* A, const float* B, size_t M, size_t N, size_t K, size_t lda, size_t ldb, size_t ldc) noexcept {
  for (size_t m = 0; m < M; ++m) {
    for (size_t n = 0; n < N; ++n) C[m * ldc + n] = 0.f;
    for (size_t k = 0; k < K; ++k) axpy(C + m * ldc, A[k * lda + m], B + k * ldb, N);
  }
}
void axpy(float* y, float alpha, const float* x, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}
void add(float* y, const float* a, const float* b, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
void mul(float* y, const float* a, const float* b, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}
void masked_fill(float* x, const float* mask, float value, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i)
    if (mask[i] != 0.f) x[i] = value;
}
void scale(float* x, float s, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) x[i] *= s;
}
void relu(float* x, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.f ? x[i] : 0.f;
}
void softmax(float* x, size_t n) noexcept {
  float m = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  if (m == -std::numeric_limits<float>::infinity()) {  // fully masked row
    for (size_t i = 0; i < n; ++i) x[i] = 0.f;
    return;
  }
  float sum = 0.f;
  for (size_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - m));
  const float inv = 1.f / sum;
  for (size_t i = 0; i < n; ++i) x[i] *= inv;
}
// A row's mean and 1 / sqrt(biased variance + eps), as layer_norm and its backward both need them.
struct Moments {
  float mean, rstd;
};
Moments moments(const float* x, size_t n, float eps) {
  float mean = 0.f;
  for (size_t i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<float>(n);
  float var = 0.f;
  for (size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<float>(n);
  const float rstd = 1.f / std::sqrt(var + eps);
  return {mean, rstd};
}
void layer_norm(float* y, const float* x, const float* gamma, const float* beta, size_t n, float eps) noexcept {
  const auto [mean, rstd] = moments(x, n, eps);
  for (size_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
}

void softmax_backward(float* dx, const float* y, const float* dy, size_t n) noexcept {
  const float s = dot(dy, y, n);
  for (size_t i = 0; i < n; ++i) dx[i] = y[i] * (dy[i] - s);
}
void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* x, const float* dy, const float* gamma,
                         size_t n, float eps) noexcept {
  const auto [mean, rstd] = moments(x, n, eps);
  // dxhat = dy * gamma; dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
  float m1 = 0.f, m2 = 0.f;
  for (size_t i = 0; i < n; ++i) {
    const float xhat = (x[i] - mean) * rstd, g = dy[i] * gamma[i];
    dgamma[i] += dy[i] * xhat;
    dbeta[i] += dy[i];
    m1 += g;
    m2 += g * xhat;
  }
  m1 /= static_cast<float>(n);
  m2 /= static_cast<float>(n);
  for (size_t i = 0; i < n; ++i) dx[i] = rstd * (dy[i] * gamma[i] - m1 - (x[i] - mean) * rstd * m2);
}

// As PyTorch's scalar GELU (aten/src/ATen/native/cpu/Activation.cpp), float throughout.
void gelu(float* y, const float* x, size_t n) noexcept {
  const float alpha = static_cast<float>(kSqrt1_2);
  for (size_t i = 0; i < n; ++i) y[i] = x[i] * 0.5f * (1.f + std::erf(x[i] * alpha));
}
void gelu_backward(float* dx, const float* x, const float* dy, size_t n) noexcept {
  const float alpha = static_cast<float>(kSqrt1_2), beta = static_cast<float>(kGeluBeta);
  for (size_t i = 0; i < n; ++i) {
    const float cdf = 0.5f * (1.f + std::erf(x[i] * alpha)), pdf = beta * std::exp(x[i] * x[i] * -0.5f);
    dx[i] = dy[i] * (cdf + x[i] * pdf);
  }
}

// As Hugging Face's NewGELUActivation (0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))), float throughout.
void gelu_tanh(float* y, const float* x, size_t n) noexcept {
  const float k = static_cast<float>(kSqrt2OverPi);
  for (size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.f + std::tanh(k * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}
void gelu_tanh_backward(float* dx, const float* x, const float* dy, size_t n) noexcept {
  const float k = static_cast<float>(kSqrt2OverPi);
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i], t = std::tanh(k * (v + 0.044715f * v * v * v));
    dx[i] = dy[i] * (0.5f * (1.f + t) + 0.5f * v * (1.f - t * t) * k * (1.f + 3.f * 0.044715f * v * v));
  }
}
void silu(float* y, const float* x, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] / (1.f + std::exp(-x[i]));
}
void silu_backward(float* dx, const float* x, const float* dy, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) {
    const float s = 1.f / (1.f + std::exp(-x[i]));
    dx[i] = dy[i] * s * (1.f + x[i] * (1.f - s));
  }
}
void rms_norm(float* y, const float* x, const float* gamma, size_t n, float eps) noexcept {
  float ss = 0.f;
  for (size_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const float r = 1.f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (size_t i = 0; i < n; ++i) y[i] = gamma[i] * (x[i] * r);
}
// y_i = g_i x_i r, r = (mean(x^2) + eps)^-1/2: dx_i = r (dy_i g_i - x_i r^2 mean(dy g x))
void rms_norm_backward(float* dx, float* dgamma, const float* x, const float* dy, const float* gamma, size_t n, float eps) noexcept {
  float ss = 0.f;
  for (size_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const float r = 1.f / std::sqrt(ss / static_cast<float>(n) + eps);
  float m = 0.f;
  for (size_t i = 0; i < n; ++i) {
    dgamma[i] += dy[i] * x[i] * r;
    m += dy[i] * gamma[i] * x[i];
  }
  m /= static_cast<float>(n);
  for (size_t i = 0; i < n; ++i) dx[i] = r * (dy[i] * gamma[i] - x[i] * r * r * m);
}

void adam(float* p, float* m, float* v, const float* g, size_t n, const AdamStep& s) noexcept {
  for (size_t k = 0; k < n; ++k) {
    if (s.decoupled) p[k] *= s.decay;  // param.mul_(1 - lr * weight_decay)
    float gk = g[k];
    if (s.coupled) gk = gk + s.wd * p[k];  // grad.add(param, alpha=wd)
    m[k] = m[k] * s.beta1 + s.one_beta1 * gk;
    v[k] = v[k] * s.beta2 + s.one_beta2 * gk * gk;
    const float denom = std::sqrt(v[k]) / s.bias2_sqrt + s.eps;
    p[k] = p[k] + s.step_size * m[k] / denom;
  }
}

}  // namespace

const Kernels& scalar_kernels() {
  static const Kernels k{"scalar", 1, gemm_nt, gemm_nn, gemm_tn, axpy, add, scale, mul, masked_fill, relu, softmax, layer_norm,
                         softmax_backward, layer_norm_backward, gelu, gelu_backward,
                         // Hugging Face's models only: not in the page's small build (base/build.hpp)
                         kPretrained ? gelu_tanh : nullptr, kPretrained ? gelu_tanh_backward : nullptr, kPretrained ? silu : nullptr,
                         kPretrained ? silu_backward : nullptr, kPretrained ? rms_norm : nullptr, kPretrained ? rms_norm_backward : nullptr, adam};
  return k;
}

}  // namespace attn
