// The closed set of ops a node on the tape (and so a step) can carry, leaves first: what each
// computes and the attributes it records (a step's "attrs", core/SCENARIO.md "Typed steps"). This
// list is that documentation: tests/native/test_steps.cpp checks every attribute of every traced
// step against its op's line. Each op has one descriptor (tape/op.hpp: name, forward, attributes,
// printed call, backward) defined beside its code in tape/ops/; the table of descriptors is built
// from this list, so an op listed here without a complete descriptor does not link.
#pragma once
#include <cstdint>

// X(name) /* what it computes. attrs: the keys it records */: one entry per op.
#define ATTN_OPS(X)                                                                                  \
  X(input)               /* a module input (leaf). attrs: none */                                    \
  X(parameter)           /* a module parameter (leaf), by state_dict name. attrs: none */            \
  X(embedding)           /* rows of a table by token id. attrs: weight (param or null), ids_input,   \
                            embedding_dim */                                                         \
  X(positional_encoding) /* seed 002's sinusoidal table, rows [0, T), as (1, T, C). attrs:           \
                            seq_len, emb_dim */                                                      \
  X(add)                 /* a + b, b broadcast over a's leading dims (residuals, x + pe). attrs:     \
                            none */                                                                  \
  X(linear)              /* x Wᵀ + b (nn.Linear). attrs: weight, bias (param names, bias may be      \
                            null), in_features, out_features */                                      \
  X(matmul)              /* a @ b, or a @ bᵀ (scores q·kᵀ). attrs: transpose_b */                    \
  X(weighted_sum)        /* attention weights @ values. attrs: none */                               \
  X(split_heads)         /* (B,T,H·D) → (B,H,T,D): view + transpose(1, 2), no copy. attrs: heads     \
                            */                                                                       \
  X(merge_heads)         /* (B,H,T,D) → (B,T,H·D): transpose(1, 2) + contiguous + view. attrs:       \
                            heads */                                                                 \
  X(view)                /* reshape (a contiguous copy first when needed). attrs: shape */           \
  X(transpose)           /* swaps two dims (a view). attrs: dim0, dim1 */                            \
  X(chunk)               /* one of chunks equal slices of a dim, or with sizes one slice of          \
                            x.split(sizes, dim) (a view). attrs: chunks, index, dim, sizes (only when \
                            the slices differ: GPT's c_attn with num_kv_heads < n_head) */           \
  X(concat)              /* torch.cat(xs, dim=-1). attrs: dim */                                     \
  X(stack)               /* torch.stack(xs, dim). attrs: dim */                                      \
  X(cache_append)        /* a KV cache (generation): the layer's cached keys (or values) with this   \
                            step's appended along the sequence, (B,H,t,D). attrs: cache ("k" or "v"), \
                            cached (rows before), new (rows appended), capacity (block_size), dim (2) \
                            */                                                                       \
  X(scale)               /* x / s or x · s, s the float32 the seed's Python number rounds to.        \
                            attrs: scale, divide */                                                  \
  X(masked_fill)         /* masked cells become fill. attrs: fill ("-Infinity" or -1e9), causal,     \
                            window and sink_tokens (ModernAttention's sliding window; 0 none),       \
                            mask_input, masked_where (causal, zero, nonzero), unsqueezed */          \
  X(softmax)             /* over dim; a row of −∞ gives zeros. attrs: dim */                         \
  X(dropout)             /* train mode: zero with probability p, the rest ·1/(1−p). attrs: p */      \
  X(layer_norm)          /* over the last dim, eps 1e-5. attrs: weight, bias (null without one:      \
                            nanoGPT's bias=False), eps */                                            \
  X(relu)                /* max(x, 0). attrs: none */                                                \
  X(gelu)                /* x · ½ (1 + erf(x / √2)), nn.GELU()'s exact form; approximate "tanh":    \
                            ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))), GPT-2's gelu_new. attrs:       \
                            approximate ("none", "tanh") */                                          \
  X(silu)                /* x · sigmoid(x) (Llama's act_fn). attrs: none */                          \
  X(mul)                 /* a * b elementwise, same shapes (SwiGLU's act(gate) * up). attrs: none */  \
  X(rms_norm)            /* weight * (x * rsqrt(mean(x²) + eps)) over the last dim, float32 (Llama's \
                            RMSNorm). attrs: weight, eps */                                          \
  X(amax)                /* max over dim, keepdim (seed 003's softmax, pass 1). attrs: dim */        \
  X(sub)                 /* a − b, b broadcast. attrs: none */                                       \
  X(exp)                 /* eˣ. attrs: none */                                                       \
  X(mse_loss)            /* mean((a − b)²). attrs: none */                                           \
  X(cross_entropy)       /* mean over non-ignored rows of −log softmax(logits)[target]. attrs:       \
                            ignore_index */                                                          \
  X(sum)                 /* the sum of every element. attrs: none */                                 \
  X(rope_table)          /* RoPE's cos or sin table for the positions, (T, D): of cat(angles,        \
                            angles), angles = positions ⊗ 1 / base^(arange(0, D, 2) / D). attrs:     \
                            table ("cos", "sin"), base, d_head, positions */                         \
  X(rope)                /* rotary positions: x * cos + rotate_half(x) * sin, rotate_half(x) =       \
                            cat(-x[..., D/2:], x[..., :D/2]). attrs: none */                         \
  X(repeat_kv)           /* grouped-query attention: each key/value head repeated for the query      \
                            heads that share it, repeat_interleave(repeats, dim=1). attrs: repeats,  \
                            dim (1) */                                                               \
  X(alibi_bias)          /* ALiBi's (H, T, T) bias slope_h * (pos_j - pos_i). attrs: heads, slopes   \
                            (float32), positions, seq_q, seq_k */                                    \
  X(intervene)           /* an intervention: the step's value with its selected cells set (zero, the \
                            mean over batch and positions, another batch row's value, or times a     \
                            factor). attrs: set, head, position, batch, from_batch, scale */

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
