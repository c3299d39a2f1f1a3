// Ops on tensors: shapes checked here, inner loops through kernels() (kernels.hpp), so each op
// runs on the scalar reference or on SIMD by the same code path. Shape letters as in
// attention.hpp: B batch, T query length, S key length, C d_model, H heads, D head dim.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

#include "base/random.hpp"
#include "base/tensor.hpp"

namespace attn {

// A GEMM's output rows (or columns) per chunk across the threads (base/threads.hpp): a multiple of
// every table's row tile (kernels_simd.hpp). linear() and its backward (tape/ops/linear.cpp).
constexpr size_t kGemmRows = 64;

// x: (..., IC), weight: (OC, IC) as nn.Linear stores it, bias: (OC) or undefined -> (..., OC)
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// a: (..., M, K), b: (..., K, N) or (K, N) -> (..., M, N). b's rows are read in place when packed (a
// view of the KV cache's values); a transposed view (keys.transpose) when a has one row (a decode
// step's scores: each output a dot product of two contiguous rows), else packed once per call.
Tensor matmul(const Tensor& a, const Tensor& b);
// a (B,H,M,K) @ repeat_kv(b, H / Hk) for b (B,Hk,K,N), or with transpose_b @ repeat_kv(b)ᵀ for b
// (B,Hk,N,K): grouped-query attention's products on b's kv heads where they are, each seen by its
// H / Hk query heads through a stride-0 view (Tensor::expand). matmul's calls on the floats the
// repeated copy would hold, so the same bits (tests/native/test_kernels.cpp), without the copy.
Tensor matmul_repeated(const Tensor& a, const Tensor& b, bool transpose_b);

// How the scores are scaled and masked, as the module's unfused lines do: scores / scale (divide)
// or scores * scale, then, when causal, masked_fill(key j > query t, fill) (causal_mask).
struct ScoreRule {
  float scale = 1.f;
  bool divide = true;
  bool causal = false;
  float fill = -INFINITY;
};
// Multi-head attention without the (B,H,T,S) tensors, blocked over query rows: for each head,
//   scores = matmul(Q, K.transpose(-2, -1)) / scale (or * scale, then masked: ScoreRule);
//   weights = softmax(scores); out = matmul(weights, V)
// with the kernels the unfused ops use, in the same order, so the numbers equal theirs bit for bit.
// q: (B,T,H*D), k and v: (B,S,Hk*D), heads as column blocks (the projections' outputs, as the
// seeds' view/transpose reads them), Hk dividing H: query head h reads key and value head
// h / (H / Hk), as repeat_kv -> (B,T,H*D), the heads already merged. weights: when given, filled
// with softmax(scores), (B,H,T,S). Causal with a fill of -inf and no weights asked for: a block of
// query rows stops at the last key its last row sees (the keys past it are e^-inf = +0 in the
// softmax's sums and in the product with V: the same bits as the whole row;
// tests/native/test_attention_heads.cpp checks it on every table).
Tensor attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int64_t H, const ScoreRule& rule, Tensor* weights = nullptr);
// Seed 000's: divided by scale, no mask.
inline Tensor attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int64_t H, float scale, Tensor* weights = nullptr) {
  ScoreRule rule;
  rule.scale = scale;
  return attention_heads(q, k, v, H, rule, weights);
}

// Stable softmax over the last dimension; a row that is entirely -inf gives zeros.
Tensor softmax(const Tensor& x);

// x where mask is zero, value where it is not; mask broadcasts to x (PyTorch's right-aligned rule).
Tensor masked_fill(const Tensor& x, const Tensor& mask, float value);
// 1 where mask == 0 (seed 000's `mask == 0`), 0 elsewhere.
Tensor equal_zero(const Tensor& mask);
// (T, S) with ones above the diagonal: torch.triu(torch.ones(T, S), diagonal=1)
Tensor causal_mask(int64_t T, int64_t S);

Tensor mul_scalar(const Tensor& x, float s);  // x * s   (s already rounded to float, as PyTorch does)
Tensor div_scalar(const Tensor& x, float s);  // x / s
Tensor add(const Tensor& a, const Tensor& b); // same shapes
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // nn.GELU(), the exact (erf) form
Tensor gelu_tanh(const Tensor& x);  // F.gelu(approximate='tanh'): Hugging Face's gelu_new
Tensor silu(const Tensor& x);       // F.silu: x * sigmoid(x)
// Llama's RMSNorm over the last dim: gamma * (x * rsqrt(mean(x^2) + eps)), float32
Tensor rms_norm(const Tensor& x, const Tensor& gamma, float eps);
// over the last dimension, eps as nn.LayerNorm's default 1e-5; beta undefined: no bias (nanoGPT's bias=False)
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps = 1e-5f);
// train-mode nn.Dropout's mask: per element bernoulli(1 - p) drawn from gen, divided by (1 - p), so
// dropout(x) = mul(x, mask); p == 1 gives zeros without drawing, as PyTorch does
Tensor dropout_mask(const Shape& shape, float p, Generator& gen);
Tensor mul(const Tensor& a, const Tensor& b);  // same shapes, elementwise
// weight: (V, d), ids: one per row of `rows` -> (rows..., d)
Tensor embedding(const Tensor& weight, const std::vector<int64_t>& ids, const Shape& rows);
// torch.cat(xs, dim=-1)
Tensor cat_last(const std::vector<Tensor>& xs);
// torch.stack(xs, dim)
Tensor stack(const std::vector<Tensor>& xs, int64_t dim);
// RoPE's rotation of x (..., T, D) by its (T, D) tables: x * cos + rotate_half(x) * (sign * sin),
// rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2]). sign -1 rotates back by the same angles: the
// backward (the tables repeat across their two halves, so rotate_half's transpose is that).
Tensor rope_rotate(const Tensor& x, const Tensor& cos, const Tensor& sin, float sign = 1.f);
// seed 002's PositionalEncoding table rows [0, T): (T, C), sin on even, cos on odd columns
Tensor positional_encoding(int64_t T, int64_t C);

// a + b and a - b, b of a's shape or broadcast to it (fewer leading dims, or dims of size 1)
Tensor add_broadcast(const Tensor& a, const Tensor& b);
Tensor sub_broadcast(const Tensor& a, const Tensor& b);
Tensor exp(const Tensor& x);  // e^x elementwise
// max over dim, keepdim; and its backward: g (x's shape with dim of size 1) to the maxima of each
// row of x, shared evenly between ties (as torch.amax)
Tensor amax(const Tensor& x, int64_t dim);
Tensor amax_backward(const Tensor& g, const Tensor& x, const Tensor& m, int64_t dim);
// g where y > 0 (relu's backward, from its output y)
Tensor relu_backward(const Tensor& g, const Tensor& y);
// An intervention's value (the tape's intervene op): prev where sel (prev's shape, 1 = selected) is
// 0; where it is 1, by `set`: 0 zero, 1 the mean of src over mean_dims (keepdim, summed in double),
// 2 src at the same index with dim batch_dim's index replaced by `from`, 3 prev * scale. Its
// gradients: to prev (g where not selected, g * scale where selected for set 3), and to src (sets 1
// and 2: each selected cell's g back to the cells it read; undefined for 0 and 3).
Tensor intervene(const Tensor& prev, const Tensor& src, const Tensor& sel, int set, float scale, int64_t from,
                 int64_t batch_dim, const std::vector<int64_t>& mean_dims);
Tensor intervene_grad_prev(const Tensor& g, const Tensor& sel, int set, float scale);
Tensor intervene_grad_src(const Tensor& g, const Tensor& sel, int set, int64_t from, int64_t batch_dim,
                          const std::vector<int64_t>& mean_dims);
// Losses as F.mse_loss (mean) and F.cross_entropy (mean over the rows whose target is not
// ignore_index; logits (..., V), one target per row; every target checked by the caller), and
// their gradients times g (dL/dloss).
float mse_loss(const Tensor& a, const Tensor& target);
Tensor mse_loss_backward(const Tensor& a, const Tensor& target, float g);
float cross_entropy(const Tensor& logits, const std::vector<int64_t>& targets, int64_t ignore_index);
Tensor cross_entropy_backward(const Tensor& logits, const std::vector<int64_t>& targets, int64_t ignore_index, float g);
float sum(const Tensor& x);  // in double, as PyTorch's CPU sum of a float tensor rounds once
int64_t first_nan(const Tensor& x);  // the index of x's first NaN (row-major), -1 when none

// For the backward passes (tape/ops/): g summed down to `shape` (a broadcast operand's gradient);
// dst[idx] += src[idx] with dst a strided view (a slice of a gradient); a (rows x cols) matrix
// transposed into p (cols x rows), in blocks that stay in L1.
Tensor reduce_to(const Tensor& g, const Shape& shape);
void add_strided(const Tensor& dst, const Tensor& src);
void transpose_into(float* p, const float* a, int64_t rows, int64_t cols);

}  // namespace attn
