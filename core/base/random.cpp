// PyTorch 1.13's CPU random transformations, ATen file by file:
//  core/TransformationHelper.h   uniform_real: (bits & (2^digits - 1)) * 2^-digits * (to - from) + from
//  core/DistributionsHelper.h    normal_distribution<double>: Box-Muller on two uniform doubles,
//                                the sin sample cached in the generator for the next call
//  native/cpu/DistributionTemplates.h  normal_fill for contiguous float tensors of >= 16 elements:
//                                fill with uniforms, Box-Muller on blocks of 16 (8 pairs), redo the
//                                last 16 with fresh uniforms when the size is not a multiple of 16
//  native/cpu/DistributionKernels.cpp  bernoulli_(p) without MKL: uniform double < p, one per element;
//                                exponential_ without MKL: at::exponential_distribution<double>, i.e.
//                                -1/lambda * log(1 - u) of one uniform double per element, cast to float
//  native/Distributions.cpp      multinomial_out without replacement (torch.multinomial's default):
//                                q = empty_like(probs).exponential_(1); div_out(q, probs, q) in float;
//                                num_samples == 1: argmax_out(q, -1). Checked against torch 1.13 in
//                                tests/fixtures/rng_sampling.json (scripts/make_rng_fixtures.py).
#include "base/random.hpp"

#include <cmath>
#include <vector>

namespace attn {

namespace {
constexpr double kPi = 3.14159265358979323846;

// at::uniform_real_distribution<float>(from, to) of one 32-bit draw, in float as ATen computes it:
// x * (to - from) + from, which PyTorch's AVX2 kernels (the CPU capability of x86-64 machines from
// 2013 on) compile to one fused multiply-add; std::fma gives that rounding on every target.
inline float uniform_float(uint32_t bits, float from, float to) {
  const float x = static_cast<float>(bits & ((1u << 24) - 1)) * (1.0f / static_cast<float>(1u << 24));
  return std::fma(x, to - from, from);
}

// Box-Muller on 8 pairs: data[j] (u1) and data[j + 8] (u2) become two normals.
inline void normal_fill_16(float* data, float mean, float std) {
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1 - data[j];  // [0, 1) -> (0, 1] for log
    const float u2 = data[j + 8];
    const float radius = std::sqrt(-2 * std::log(u1));
    const float theta = static_cast<float>(2.0f * kPi * u2);
    data[j] = radius * std::cos(theta) * std + mean;
    data[j + 8] = radius * std::sin(theta) * std + mean;
  }
}
}  // namespace

Generator::Generator(uint64_t seed) { manual_seed(seed); }

void Generator::manual_seed(uint64_t seed) {
  engine_.seed(static_cast<uint32_t>(seed & 0xffffffffu));
  has_next_normal_ = false;
}

uint32_t Generator::random() { return static_cast<uint32_t>(engine_()); }

uint64_t Generator::random64() {
  const uint64_t hi = random(), lo = random();
  return (hi << 32) | lo;
}

double Generator::uniform_double() {
  return static_cast<double>(random64() & ((uint64_t{1} << 53) - 1)) * (1.0 / static_cast<double>(uint64_t{1} << 53));
}

double Generator::normal_double() {
  if (has_next_normal_) {
    has_next_normal_ = false;
    return next_normal_;
  }
  const double u1 = uniform_double(), u2 = uniform_double();
  const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
  const double theta = 2.0 * kPi * u1;
  next_normal_ = r * std::sin(theta);
  has_next_normal_ = true;
  return r * std::cos(theta);
}

void Generator::uniform_(float* out, size_t n, double from, double to) {
  if (no_draws_) return;
  if (skip_values_) return engine_.discard(n);  // one 32-bit draw per element
  const float f = static_cast<float>(from), t = static_cast<float>(to);
  for (size_t i = 0; i < n; ++i) out[i] = uniform_float(random(), f, t);
}

void Generator::rand(float* out, size_t n) { uniform_(out, n, 0.0, 1.0); }

void Generator::normal_(float* out, size_t n, double mean, double std) {
  if (no_draws_) return;
  if (n < 16) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(normal_double() * std + mean);
    return;
  }
  if (skip_values_) return engine_.discard(n + (n % 16 != 0 ? 16 : 0));  // as below: n draws, 16 more for a tail
  const float m = static_cast<float>(mean), s = static_cast<float>(std);
  for (size_t i = 0; i < n; ++i) out[i] = uniform_float(random(), 0.f, 1.f);
  for (size_t i = 0; i + 16 <= n; i += 16) normal_fill_16(out + i, m, s);
  if (n % 16 != 0) {
    float* tail = out + n - 16;
    for (size_t i = 0; i < 16; ++i) tail[i] = uniform_float(random(), 0.f, 1.f);
    normal_fill_16(tail, m, s);
  }
}

void Generator::randn(float* out, size_t n) { normal_(out, n, 0.0, 1.0); }

void Generator::bernoulli_(float* out, size_t n, double p) {
  for (size_t i = 0; i < n; ++i) out[i] = uniform_double() < p ? 1.f : 0.f;
}

void Generator::exponential_(float* out, size_t n, double lambd) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(-1.0 / lambd * std::log(1.0 - uniform_double()));
}

void Generator::multinomial1(const float* probs, size_t rows, size_t n, int64_t* out) {
  std::vector<float> q(rows * n);
  exponential_(q.data(), q.size());
  for (size_t r = 0; r < rows; ++r) {
    size_t best = 0;
    float best_v = probs[r * n] / q[r * n];
    for (size_t j = 1; j < n; ++j) {
      const float v = probs[r * n + j] / q[r * n + j];
      if (v > best_v) best = j, best_v = v;
    }
    out[r] = static_cast<int64_t>(best);
  }
}

void Generator::linear_init(float* weight, size_t weight_n, float* bias, size_t bias_n, int64_t fan_in) {
  // kaiming_uniform_(a=sqrt(5)): gain = sqrt(2 / (1 + a^2)), std = gain / sqrt(fan_in), bound = sqrt(3) * std
  const double gain = std::sqrt(2.0 / (1.0 + 5.0));
  const double bound_w = std::sqrt(3.0) * (gain / std::sqrt(static_cast<double>(fan_in)));
  uniform_(weight, weight_n, -bound_w, bound_w);
  if (bias) {
    const double bound_b = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    uniform_(bias, bias_n, -bound_b, bound_b);
  }
}

void Generator::embedding_init(float* weight, size_t n) { normal_(weight, n, 0.0, 1.0); }

}  // namespace attn
