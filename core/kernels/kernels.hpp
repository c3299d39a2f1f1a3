// Kernels: the innermost loops, as a table of function pointers. Each entry has a scalar
// reference (kernels_scalar.cpp) and one xsimd version per architecture (kernels_simd.hpp,
// instantiated in kernels_sse2.cpp / kernels_avx2.cpp / kernels_avx512.cpp natively, picked at
// run time by what the CPU reports, and kernels_wasm.cpp for WASM SIMD128). kernels() is the table in use; ops.cpp calls only through it. Kernels never
// allocate and never throw: ops.cpp checks shapes before calling them. So every entry is noexcept: in the
// threaded WASM build (JavaScript exceptions) a call that may throw goes out to JavaScript and back
// (invoke_*), which was 9.8 % of the induction model's training step there (docs/threads.md).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace attn {

// GELU's constants as PyTorch writes them (M_SQRT1_2, M_2_SQRTPI * M_SQRT1_2 * 0.5), spelled out:
// the M_ macros are not standard C++.
constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kGeluBeta = 1.12837916709551257390 * 0.70710678118654752440 * 0.5;  // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // math.sqrt(2.0 / math.pi), gelu_new's constant

// An Adam / AdamW step's float32 coefficients (run/optim.cpp computes them from the step count).
struct AdamStep {
  float decay, wd, beta1, beta2, one_beta1, one_beta2, bias2_sqrt, step_size, eps;
  bool decoupled, coupled;  // AdamW's weight decay on the weights, Adam's on the gradient
};

struct Kernels {
  const char* name;  // "scalar", "sse2", "avx2", "wasm-simd128"
  // floats per vector (1 for scalar): gemm_nn's vector tiles cover N in whole vectors, the last
  // N % width columns going through a padded copy; a caller that can pad B's rows itself skips it
  size_t width;
  // C[m*ldc + n] = sum_k A[m*lda + k] * B[n*ldb + k] (+ bias[n] when bias != nullptr), for m < M, n < N:
  // both operands walk K contiguously (nn.Linear's weight layout, keys for Q K^T). The workhorse.
  void (*gemm_nt)(float* C, const float* A, const float* B, const float* bias, size_t M, size_t N, size_t K,
                  size_t lda, size_t ldb, size_t ldc) noexcept;
  // C[m*ldc + n] = sum_k A[m*lda + k] * B[k*ldb + n], for m < M, n < N: B walks N contiguously
  // (values for attn @ V, packed keys^T for Q K^T). Outer-product tiles: no horizontal sums, so it
  // wins over gemm_nt when K is short (head dims).
  void (*gemm_nn)(float* C, const float* A, const float* B, size_t M, size_t N, size_t K, size_t lda, size_t ldb,
                  size_t ldc) noexcept;
  // C[m*ldc + n] = sum_k A[k*lda + m] * B[k*ldb + n]: A^T B without copying A^T (the backward's
  // dW = g^T x and the attention's d(V) = weights^T g, d(K) = d(scores)^T Q). The same tiles and the
  // same sums in the same order as gemm_nn on a transposed copy of A: bit-identical results.
  void (*gemm_tn)(float* C, const float* A, const float* B, size_t M, size_t N, size_t K, size_t lda, size_t ldb,
                  size_t ldc) noexcept;
  // y[i] += alpha * x[i]  (gradients summed over rows: biases, embedding rows)
  void (*axpy)(float* y, float alpha, const float* x, size_t n) noexcept;
  // y[i] = a[i] + b[i]
  void (*add)(float* y, const float* a, const float* b, size_t n) noexcept;
  // x[i] *= s
  void (*scale)(float* x, float s, size_t n) noexcept;
  // y[i] = a[i] * b[i]
  void (*mul)(float* y, const float* a, const float* b, size_t n) noexcept;
  // x[i] = value where mask[i] != 0
  void (*masked_fill)(float* x, const float* mask, float value, size_t n) noexcept;
  // x[i] = max(x[i], 0)
  void (*relu)(float* x, size_t n) noexcept;
  // x = exp(x - max) / sum, in place; a row that is entirely -inf becomes zeros (never NaN)
  void (*softmax)(float* x, size_t n) noexcept;
  // y = (x - mean) / sqrt(var + eps) * gamma + beta  (biased variance, as nn.LayerNorm)
  void (*layer_norm)(float* y, const float* x, const float* gamma, const float* beta, size_t n, float eps) noexcept;
  // Backward of softmax over one row, from its output y: dx = y * (dy - sum(dy * y)). A fully
  // masked row (y all zeros) gives zeros.
  void (*softmax_backward)(float* dx, const float* y, const float* dy, size_t n) noexcept;
  // Backward of layer_norm over one row of x: dx, and dgamma += dy * xhat, dbeta += dy (summed over
  // rows by the caller's loop); mean and variance recomputed from x as the forward does.
  void (*layer_norm_backward)(float* dx, float* dgamma, float* dbeta, const float* x, const float* dy, const float* gamma,
                              size_t n, float eps) noexcept;
  // y = x * 0.5 * (1 + erf(x / sqrt(2))): nn.GELU()'s exact form. The SIMD twins compute erf as
  // PyTorch's AVX2 kernel does (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7), the scalar one with std::erf.
  void (*gelu)(float* y, const float* x, size_t n) noexcept;
  // dx = dy * (cdf(x) + x * pdf(x)), cdf = 0.5 * (1 + erf(x / sqrt(2))), pdf = exp(-x^2 / 2) / sqrt(2 pi)
  void (*gelu_backward)(float* dx, const float* x, const float* dy, size_t n) noexcept;
  // y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): F.gelu(approximate='tanh'), Hugging
  // Face's gelu_new (GPT-2's activation_function)
  void (*gelu_tanh)(float* y, const float* x, size_t n) noexcept;
  // dx = dy * (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2 / pi) (1 + 3 * 0.044715 x^2)), t the tanh above
  void (*gelu_tanh_backward)(float* dx, const float* x, const float* dy, size_t n) noexcept;
  // y = x / (1 + exp(-x)): F.silu (Llama's hidden_act "silu", SwiGLU's gate)
  void (*silu)(float* y, const float* x, size_t n) noexcept;
  // dx = dy * s (1 + x (1 - s)), s = 1 / (1 + exp(-x))
  void (*silu_backward)(float* dx, const float* x, const float* dy, size_t n) noexcept;
  // One row of Llama's RMSNorm, float32 throughout: y = gamma * (x * rsqrt(mean(x^2) + eps))
  void (*rms_norm)(float* y, const float* x, const float* gamma, size_t n, float eps) noexcept;
  // Its backward over one row: dx, and dgamma += dy * x * r (summed over rows by the caller)
  void (*rms_norm_backward)(float* dx, float* dgamma, const float* x, const float* dy, const float* gamma, size_t n, float eps) noexcept;
  // One Adam / AdamW update of n weights (run/optim.cpp, torch.optim 1.13's rule): per element
  // p *= decay (decoupled), g += wd * p (coupled), m = beta1 m + (1 - beta1) g, v = beta2 v +
  // (1 - beta2) g g, p += step_size * m / (sqrt(v) / bias2_sqrt + eps); the same operations in the
  // same order in every table (a square root and a division are exact in every one of them).
  void (*adam)(float* p, float* m, float* v, const float* g, size_t n, const AdamStep& s) noexcept;
  // gemm_nt with B packed ahead, for calls of width / 2 < M <= width rows (a few tokens through
  // nn.Linear, whose weights math/packed.hpp packs once and keeps); nullptr in the tables without
  // (scalar, SSE2, WASM). pack_nt writes packed_floats(N, K) floats (64-byte aligned) from B's N
  // rows of K; gemm_nt_packed computes columns [n0, n1) of gemm_nt's C from them, n0 a multiple of
  // packed_cols, C and bias pointing at column 0: the same numbers as gemm_nt, bit for bit.
  size_t packed_cols = 0;
  size_t (*packed_floats)(size_t N, size_t K) noexcept = nullptr;
  void (*pack_nt)(float* Bp, const float* B, size_t N, size_t K, size_t ldb) noexcept = nullptr;
  void (*gemm_nt_packed)(float* C, const float* A, const float* Bp, const float* bias, size_t M, size_t n0, size_t n1,
                         size_t K, size_t lda, size_t ldc) noexcept = nullptr;
};

const Kernels& scalar_kernels();
const Kernels& simd_kernels();   // the best architecture this CPU runs (chosen once, at first use)
std::vector<const Kernels*> available_kernels();  // every SIMD table this CPU runs, best first
// Makes simd_kernels() one of available_kernels() (the benchmark times each table the CPU runs),
// or the best again with nullptr. Not for use while other threads compute.
void set_simd_kernels(const Kernels* table);
std::string kernels_detail();  // the SIMD table and, in WASM, the GEMM tiles timed best at start-up

// The table the ops use: simd_kernels() unless set_use_simd(false) (tests run both).
const Kernels& kernels();
void set_use_simd(bool on);
bool use_simd();

}  // namespace attn
