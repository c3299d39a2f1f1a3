// The closed set of ops a node on the tape (and so a step) can carry (core/SCENARIO.md, "Typed
// steps"), leaves first. Each op has one descriptor (tape/op.hpp: name, forward, attributes,
// printed call, backward) defined beside its code in tape/ops/; the table of descriptors is built
// from this list, so an op listed here without a complete descriptor does not link.
#pragma once
#include <cstdint>

// X(name): one line per op.
#define ATTN_OPS(X)                                                                                    \
  X(input)               /* a module input (leaf) */                                                   \
  X(parameter)           /* a module parameter (leaf), by state_dict name */                           \
  X(embedding)           /* rows of a table by token id */                                             \
  X(positional_encoding) /* seed 002's sinusoidal table, rows [0, T) */                                \
  X(add)                 /* a + b, b broadcast over a's leading dims (residuals, x + pe) */            \
  X(linear)              /* x W^T + b (nn.Linear) */                                                   \
  X(matmul)              /* a @ b, or a @ b^T (transpose_b): x @ W, queries @ keys^T */                \
  X(weighted_sum)        /* attention weights @ values */                                              \
  X(split_heads)         /* (B,T,H*D) -> (B,H,T,D): view + transpose(1, 2) */                          \
  X(merge_heads)         /* (B,H,T,D) -> (B,T,H*D): transpose(1, 2) + contiguous + view */             \
  X(view)                /* reshape (contiguous first) */                                              \
  X(transpose)           /* swap two dims (a view) */                                                  \
  X(chunk)               /* one of `chunks` equal slices of a dim, or of `sizes` (torch.split) */      \
  X(concat)              /* torch.cat(xs, dim=-1) */                                                   \
  X(stack)               /* torch.stack(xs, dim) */                                                    \
  X(cache_append)        /* a KV cache with new rows appended along the sequence: (B,H,t,D) */         \
  X(scale)               /* x / s or x * s (s a float32, as PyTorch rounds it) */                      \
  X(masked_fill)         /* x with masked cells replaced by a fill value (-inf or -1e9) */             \
  X(softmax)             /* over a dim; a row of -inf gives zeros */                                   \
  X(dropout)             /* train mode: zero with probability p, scale the rest by 1/(1-p) */          \
  X(layer_norm)          /* over the last dim (nn.LayerNorm) */                                        \
  X(relu)                                                                                              \
  X(gelu)                /* nn.GELU(): x * 0.5 * (1 + erf(x / sqrt(2))), the exact (erf) form */       \
  X(amax)                /* max over a dim, keepdim (seed 003's softmax, pass 1) */                    \
  X(sub)                 /* a - b, b broadcast (seed 003's softmax: x - x_max) */                      \
  X(exp)                 /* e^x elementwise */                                                         \
  X(mse_loss)            /* mean((a - b)^2) */                                                         \
  X(cross_entropy)       /* mean over non-ignored rows of -log softmax(logits)[target] */              \
  X(sum)                 /* sum of every element */                                                    \
  X(rope_table)          /* RoPE's cos or sin table for the positions, (T, D) (a constant) */          \
  X(rope)                /* x * cos + rotate_half(x) * sin (rotate-half convention) */                 \
  X(repeat_kv)           /* k or v heads repeated for grouped-query attention */                       \
  X(alibi_bias)          /* ALiBi's (H, T, T) bias slope_h * (pos_j - pos_i) (a constant) */

namespace attn {

enum class Op : uint8_t {
#define ATTN_OP_ENUM(name) name,
  ATTN_OPS(ATTN_OP_ENUM)
#undef ATTN_OP_ENUM
};

#define ATTN_OP_COUNT(name) +1
constexpr int kOpCount = 0 ATTN_OPS(ATTN_OP_COUNT);
#undef ATTN_OP_COUNT

const char* op_name(Op op);

}  // namespace attn
