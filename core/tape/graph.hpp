// The ops modules call: each computes with its descriptor's forward (tape/op.hpp; the Tensor ops of
// math/ops.hpp, scalar or SIMD kernels) and,
// when the Context records, puts one typed node on the tape (tape.hpp). One function per Op; the
// name is the one a step's `cpp` text prints. Shape letters as in attention.hpp.
#pragma once
#include <vector>

#include "tape/tape.hpp"

namespace attn {

// x: (..., IC), weight: (OC, IC), bias: (OC) or undefined -> (..., OC)
Var linear(Context& ctx, const Var& x, const Var& weight, const Var& bias);
// a: (..., M, K), b: (..., K, N) or (K, N) -> (..., M, N)
Var matmul(Context& ctx, const Var& a, const Var& b);
// a: (..., M, K), b: (..., N, K) -> a @ b.transpose(-2, -1): (..., M, N) (queries @ keys^T)
Var matmul_bt(Context& ctx, const Var& a, const Var& b);
// weights: (..., T, S), values: (..., S, D) -> (..., T, D)
Var weighted_sum(Context& ctx, const Var& weights, const Var& values);
// x: (B, T, H*D) -> (B, H, T, D), a view: x.view(B, T, H, D).transpose(1, 2)
Var split_heads(Context& ctx, const Var& x, int64_t H);
// x: (B, H, T, D) -> (B, T, H*D): x.transpose(1, 2).contiguous().view(B, T, H*D)
Var merge_heads(Context& ctx, const Var& x);
// x.contiguous().view(shape), one -1 inferred
Var view(Context& ctx, const Var& x, Shape shape);
Var transpose(Context& ctx, const Var& x, int64_t d0, int64_t d1);
// x.chunk(chunks, dim)[index], a view
Var chunk(Context& ctx, const Var& x, int64_t chunks, int64_t index, int64_t dim);
// x.split(sizes, dim)[index], a view (a chunk node whose slices need not be equal: GPT's c_attn
// split into q | k | v when num_kv_heads < n_head)
Var split(Context& ctx, const Var& x, const std::vector<int64_t>& sizes, int64_t index, int64_t dim);
// torch.cat(xs, dim=-1)
Var concat(Context& ctx, const std::vector<Var>& xs);
// torch.stack(xs, dim)
Var stack(Context& ctx, const std::vector<Var>& xs, int64_t dim);
// A KV cache: x (B,H,Tn,D), the new keys (which "k") or values ("v"); cache (B,H,capacity,D)
// holding `cached` rows. Writes x into rows [cached, cached + Tn) and gives rows [0, cached + Tn),
// (B,H,t,D): a view of the cache (later appends write only rows after these).
Var cache_append(Context& ctx, const Var& x, Tensor& cache, int64_t cached, const char* which);
// x / s and x * s (Op::scale); s already a float32, as PyTorch rounds a Python float
Var div_scalar(Context& ctx, const Var& x, float s);
Var mul_scalar(Context& ctx, const Var& x, float s);
// x with cells where mask != 0 set to fill; mask (1 = masked) broadcasts to x, right-aligned.
// `how` says where the mask came from (causal, mask_input, masked_where_zero, mask_unsqueezed),
// for the step's attributes and its printed call; attrs.fill is set from `fill`.
Var masked_fill(Context& ctx, const Var& x, const Tensor& mask, float fill, Attrs how);
// over `dim` (the last by default); a row of -inf gives zeros
Var softmax(Context& ctx, const Var& x, int64_t dim = -1);
// train-mode dropout from ctx.gen (the identity when p == 0)
Var dropout(Context& ctx, const Var& x, float p);
// over the last dim, nn.LayerNorm's eps 1e-5
Var layer_norm(Context& ctx, const Var& x, const Var& weight, const Var& bias, float eps = 1e-5f);
Var rms_norm(Context& ctx, const Var& x, const Var& weight, float eps);  // Llama's RMSNorm
Var relu(Context& ctx, const Var& x);
Var gelu(Context& ctx, const Var& x);  // nn.GELU(): x * 0.5 * (1 + erf(x / sqrt(2)))
Var gelu_tanh(Context& ctx, const Var& x);  // F.gelu(x, approximate='tanh'): GPT-2's gelu_new
Var silu(Context& ctx, const Var& x);  // F.silu
Var mul(Context& ctx, const Var& a, const Var& b);  // a * b, same shapes
// a + b, b: a's shape or a's trailing dims (broadcast over the leading ones: x + pe)
Var add(Context& ctx, const Var& a, const Var& b);
// weight: (V, d), ids: one per row of `rows` -> (rows..., d); ids_input: the module input they came from
Var embedding(Context& ctx, const Var& weight, const std::vector<int64_t>& ids, const Shape& rows,
              const std::string& ids_input = "");
// seed 002's table rows [0, T) as (1, T, C)
Var positional_encoding(Context& ctx, int64_t T, int64_t C);
// seed 003's softmax, written out: max over dim (keepdim), x - max, exp
Var amax(Context& ctx, const Var& x, int64_t dim);
Var sub(Context& ctx, const Var& a, const Var& b);
Var exp(Context& ctx, const Var& x);

// Modern attention (ModernAttention). RoPE's table for `positions` and head width D (even): the
// cos (sine false) or sin of cat(angles, angles), angles[t][i] = positions[t] * inv_freq[i],
// inv_freq[i] = 1 / base^(2i / D), each in float32 as PyTorch computes it: (T, D).
Var rope_table(Context& ctx, const std::vector<int64_t>& positions, int64_t D, double base, bool sine,
               const RopeScaling& scaling = {});
// x (..., T, D) rotated by the tables: x * cos + rotate_half(x) * sin, rotate_half(x) =
// cat(-x[..., D/2:], x[..., :D/2]) (Llama / GPT-NeoX)
Var rope(Context& ctx, const Var& x, const Var& cos, const Var& sin);
// x (B, H_kv, T, D) -> (B, H_kv * n, T, D): x.repeat_interleave(n, dim=1)
Var repeat_kv(Context& ctx, const Var& x, int64_t n);
// ALiBi's slopes for H heads, as the paper's reference code computes them (in double)
std::vector<double> alibi_slopes(int64_t H);
// ALiBi's bias (H, T, T): float(slope_h) * float(positions[j] - positions[i])
Var alibi_bias(Context& ctx, const std::vector<int64_t>& positions, int64_t H);
// The (T, T) mask of a causal attention (key j hidden from query i when positions[j] >
// positions[i]), with a window (> 0: also hidden when positions[j] <= positions[i] - window,
// except keys with positions[j] < sink_tokens): 1 = masked.
Tensor window_mask(const std::vector<int64_t>& positions, bool causal, int64_t window, int64_t sink_tokens);
// The same rule between queries at q_positions and keys at k_positions: (Tq, Tk) (a KV cache's
// decode step: one query at the newest position, every cached key).
Tensor window_mask(const std::vector<int64_t>& q_positions, const std::vector<int64_t>& k_positions, bool causal,
                   int64_t window, int64_t sink_tokens);

// An intervention (Context::step applies them; tape/ops/intervene.cpp): prev with the cells of sel
// (prev's shape, 1 = selected) set as how.set says, from src (the step's value as computed).
Var intervene(Context& ctx, const Var& prev, const Var& src, const Tensor& sel, Attrs how);
// The dims of a step an intervention or a patching cell indexes, by the step's named dims: batch,
// heads (or kv_heads), seq (or seq_q); -1 where it has none.
struct CellDims {
  int64_t batch = -1, heads = -1, seq = -1;
};
CellDims cell_dims(const std::vector<std::string>& dims);
// 1 where the index along each of d's dims is the one given (Attrs::kAll: any), 0 elsewhere: the
// selection (`shape`) an intervene node takes. An index given for a dim the step lacks, or one
// outside it, selects nothing.
Tensor select_cells(const Shape& shape, const CellDims& d, int64_t batch, int64_t head, int64_t position);

// Losses, each a 0-d tensor. target: a's shape (F.mse_loss, mean); targets: one class id per row of
// logits (..., V), rows equal to ignore_index skipped (F.cross_entropy, mean over the others).
Var mse_loss(Context& ctx, const Var& a, const Tensor& target);
Var cross_entropy(Context& ctx, const Var& logits, const std::vector<int64_t>& targets, int64_t ignore_index);
Var sum(Context& ctx, const Var& a);  // output.sum()

}  // namespace attn
