// One description of an attention block: the conventions its seed writes (projection names, the
// head layout, the scale and its float rounding, the mask rule and fill value, the built-in causal
// mask, dropout). The C++ forward reads it (scale_scores, mask_scores), the module table and every
// result export it (SCENARIO.md, "Attention"), and the page and the WebGPU path read that export,
// so no other file writes a seed's conventions down again.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "base/build.hpp"
#include "tape/graph.hpp"

namespace attn {

enum class Projection {
  linear,  // nn.Linear per q, k, v: (B,T,C) -> (B,T,H*D), heads as column blocks
  matrix,  // x @ W with W a (d_in, d_out) matrix (seed 004's SelfAttention_v1)
  fused,   // one qkv_proj to (B,T,H,3*D), chunked into q, k, v (seed 002)
  none,    // q, k, v are the inputs themselves (scaled_dot_product_attention)
  split,   // one c_attn to (B,T,3*C) split into q | k | v, heads as column blocks of each (nanoGPT)
};
const char* projection_name(Projection p);

struct AttentionSpec {
  std::string prefix;              // where its steps and parameters live: "" or "encoder.0.attn."
  Projection projection = Projection::linear;
  std::string query_input, key_input, value_input;  // the module inputs q, k, v come from
  std::string query, key, value;   // parameter prefixes (fused: all three "qkv_proj"; none: "")
  std::string out;                 // the output projection's prefix, "" when there is none
  int64_t heads = 1, d_k = 0, d_v = 0;  // per head; 0 in the module table (set by the config)
  bool divide = true;              // scores / scale (div) or scores * scale (mul)
  float scale = 0.f;               // the float32 the forward uses (0 in the module table)
  std::string scale_formula;       // as the seed writes it: "sqrt(head_dim)", "head_dim ** -0.5"
  bool causal = false;             // a built-in causal mask: key j is hidden from query i < j
  std::string mask_input;          // the module input that is a mask ("" when none)
  bool masked_where_zero = false;  // mask == 0 is masked (seed 000); else nonzero / True is (003)
  bool mask_unsqueezed = false;    // a (B,T,S) mask unsqueezed to (B,1,T,S) (seed 003's MHA); else
                                   // broadcast right-aligned against the scores
  float fill = -INFINITY;          // the value masked scores get
  float dropout = 0.f;             // p on the weights in train mode (0: none)
  bool heads_dim = true;           // the weights have a heads dim: (B,H,T,S); else (B,T,S) or (T,S)
  std::string weights_step;        // the step that holds the weights (softmax, before dropout)
  std::string weights_output;      // the module output returning them ("" when not returned)
  std::string output;              // the module output this block computes in full ("" when more follows)
  // ModernAttention's switches (the seeds' blocks leave them off)
  int64_t kv_heads = 0;            // key/value heads (grouped-query; 0: as many as heads)
  bool rope = false;               // rotary positions on q and k
  double rope_base = 10000.0;
  RopeScaling rope_scaling{};      // Hugging Face's rope_scaling (tape.hpp): factor 0 none
  bool alibi = false;              // ALiBi's linear biases added to the scores
  int64_t window = 0, sink_tokens = 0;  // a sliding window over the causal mask, and its sinks
};

// The block's scores scaled as its seed does: div_scalar or mul_scalar by spec.scale.
Var scale_scores(Context& ctx, const Var& scores, const AttentionSpec& spec);
// The block's scores masked: by its causal triangle when spec.causal, else by the mask input (when
// given) under the spec's rule; masked cells become spec.fill.
Var mask_scores(Context& ctx, const Var& scores, const AttentionSpec& spec, const Tensor& mask);
// Whether a causal block's attention may run in one pass (causal_heads): nothing traced or
// differentiated, no intervention, no dropout, no window or ALiBi, the weights not asked for -- generation's
// prefill, a forward read for its output alone. Builds without pretrained models (the page's first
// view) keep the unfused lines only.
inline bool fuses_causal(const Context& ctx, const AttentionSpec& spec, const Var* weights) {
  return kPretrained && spec.causal && spec.window == 0 && !spec.alibi && !weights && !ctx.recording() && !(kInterp && ctx.interventions) &&
         !(ctx.train && spec.dropout > 0.f);
}
// Whether grouped-query heads may read the kv heads in place: nothing traced, differentiated or
// intervened, so no step shows repeat_kv's output. Then scores and values go through
// matmul_repeated (ops.hpp): the same bits without repeat_kv's copies (a decode step's whole cache,
// every layer, every step: 277 MB at SmolLM-135M's position 2000).
inline bool repeats_in_place(const Context& ctx) { return kPretrained && !ctx.recording() && !(kInterp && ctx.interventions); }
// q·kᵀ of every head (B,H,T,S) and att·v (B,H,T,D), as matmul_bt and weighted_sum; where k and v
// hold fewer heads than q (kept in place: repeats_in_place), each kv head serves H / Hk query heads
// through matmul_repeated. GPT's and Llama's grouped-query attention both read them.
Var head_scores(Context& ctx, const Var& q, const Var& k);
Var head_values(Context& ctx, const Var& att, const Var& v);
// q (B,H,T,D), k and v (B,Hk,T,D) -> (B,T,H*D), the heads merged: the numbers of scale_scores,
// mask_scores, softmax, the product with v and merge_heads, to the bit (ops.hpp, attention_heads),
// without the (B,H,T,T) tensors. Nothing recorded (ctx records nothing where fuses_causal holds).
Var causal_heads(Context& ctx, const Var& q, const Var& k, const Var& v, const AttentionSpec& spec);
// The spec as JSON (core/SCENARIO.md, "Attention"); numbers omitted when heads == 0 (module table).
std::string attention_spec_json(const AttentionSpec& spec);

}  // namespace attn
