// The seed modules, one file each under modules/, and their entries in the module table
// (registry.cpp). Each file opens with the seed code it reproduces and its shapes.
#pragma once
#include <cmath>

#include "nn/attention_spec.hpp"
#include "tape/graph.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"
#include "math/ops.hpp"

namespace attn {

ModuleInfo info_softmax();                       // 003
ModuleInfo info_scaled_dot_product_attention();  // 003
ModuleInfo info_SelfAttention_v1();              // 004
ModuleInfo info_SelfAttention_v2();              // 004
ModuleInfo info_CausalAttention();               // 004
ModuleInfo info_MultiHeadAttentionWrapper();     // 004
ModuleInfo info_CausalMultiHeadAttention();      // 004 MultiHeadAttention
ModuleInfo info_MultiHeadAttention();            // 000
ModuleInfo info_SplitHeadsMultiHeadAttention();  // 003 MultiHeadAttention
ModuleInfo info_MultiHeadSelfAttention();        // 001
ModuleInfo info_FusedMultiHeadSelfAttention();   // 002 MultiHeadSelfAttention
ModuleInfo info_PositionalEncoding();            // 002
ModuleInfo info_EncoderLayer();                  // 002
ModuleInfo info_DecoderLayer();                  // 002 (cross-attention fixed)
ModuleInfo info_Transformer();                   // 002 (decoder loop fixed)

ModuleInfo info_CausalTransformer();             // 002 + 004: the decoder-only model the page trains
ModuleInfo info_GPT();                           // nanoGPT's GPT (its model.py), generates (generate.hpp)
ModuleInfo info_ModernAttention();               // RoPE, ALiBi, GQA/MQA, sliding window, sinks (no seed)
ModuleInfo info_Llama();                         // Hugging Face's LlamaForCausalLM (Mistral, Qwen2), generates

// Shared by seed 002's modules (positional_encoding.cpp): x + pe[:T] (names the "pe" step), the
// even-width check, and token ids read from an ids input.
Var add_positional_encoding(const Var& x, int64_t emb_dim, int64_t max_len, Context& ctx);
void check_even_emb_dim(int64_t emb_dim);
std::vector<int64_t> token_ids(const Var& t, const char* name, int64_t vocab);

// Shared by seed 004's causal modules (causal_attention.cpp).
AttentionSpec causal_spec(const std::string& out_proj);
void check_causal_input(const Var& x, int64_t d_in, int64_t context_length);
std::vector<ArgSpec> causal_args(bool with_heads);
InputSpec causal_input();
// Shared by ModernAttention and GPT's Llama-style options (modern_attention.cpp): q (B,H,T,D) and k
// (B,H_kv,T,D) rotated at `positions` (steps cos, sin, q_rot, k_rot), and k, v repeated to n times
// their heads (steps k_repeated, v_repeated; n = 1: unchanged, no step).
void rotate_qk(Context& ctx, Var& q, Var& k, const std::vector<int64_t>& positions, int64_t D, double base);
// The positions first, first + 1, ..., first + n - 1 (GPT's and Llama's windows and decode steps).
std::vector<int64_t> position_range(int64_t first, int64_t n);
void repeat_kv_heads(Context& ctx, Var& k, Var& v, int64_t n);

// Shared by GPT and Llama: the pre-norm block x = x + attn(norm_1(x)); x = x + mlp(norm_2(x)),
// norm_1, attn, norm_2 and mlp given as functions of a Var; each result a step named and quoted
// as the model's own code does (`attn` and `mlp` run under their scopes). last_row: the block's
// output is wanted at the last position only (the last block before logits at the last position:
// a prompt's forward in generation), so after the attention (every row: its keys and values are
// the cache's, its last query reads them all) only that row goes on: the MLP of one row, not T.
// Every row's numbers are computed alone, so the last one is the same. Only where nothing reads
// the other rows (last_row_only below).
struct PreNormBlockSteps {
  const char* width;  // the residual stream's dim name
  const char *norm_1, *norm_1_line, *attn_scope, *residual_1, *residual_1_line;
  const char *norm_2, *norm_2_line, *mlp_scope, *residual_2, *residual_2_line;
};
template <class Norm1, class Attend, class Norm2, class Mlp>
Var pre_norm_block(Context& ctx, const Var& x, const PreNormBlockSteps& s, Norm1 norm_1, Attend attend, Norm2 norm_2, Mlp mlp,
                   bool last_row = false) {
  Var h = norm_1(x);
  ctx.step(s.norm_1, h, {"batch", "seq", s.width}, s.norm_1_line);
  Var a;
  {
    Context::Scope scope(ctx, s.attn_scope);
    a = attend(h);
  }
  const int64_t T = x.size(1);
  Var x1 = last_row && T > 1 ? add(ctx, chunk(ctx, x, T, T - 1, 1), chunk(ctx, a, T, T - 1, 1)) : add(ctx, x, a);
  ctx.step(s.residual_1, x1, {"batch", "seq", s.width}, s.residual_1_line);
  h = norm_2(x1);
  ctx.step(s.norm_2, h, {"batch", "seq", s.width}, s.norm_2_line);
  Var m;
  {
    Context::Scope scope(ctx, s.mlp_scope);
    m = mlp(h);
  }
  Var x2 = add(ctx, x1, m);
  ctx.step(s.residual_2, x2, {"batch", "seq", s.width}, s.residual_2_line);
  return x2;
}

// A forward whose blocks may keep only the last row after the last attention (pre_norm_block's
// last_row): logits wanted at the last position only, no tape (nothing traced, no gradient, no
// intervention reads a step of another row), more than one row.
inline bool last_row_only(const Context& ctx, bool last_only, int64_t T) {
  return last_only && T > 1 && !ctx.recording() && !(kInterp && ctx.interventions);
}

}  // namespace attn
