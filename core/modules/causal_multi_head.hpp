// Seed 004's MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias) as a
// block other modules build on: its own module (CausalMultiHeadAttention) and the layers of the
// CausalTransformer the page trains (causal_transformer.cpp).
#pragma once
#include "modules/modules.hpp"

namespace attn {

struct CausalMultiHead {
  // declared in the seed's construction order: members are built (and draw) in this order
  Linear W_query, W_key, W_value, out_proj;
  int64_t d_in = 0, d_out = 0, context_length = 0;
  AttentionSpec spec;  // heads, head dim, scale, dropout; prefix and outputs set by the owner
  CausalMultiHead() = default;
  CausalMultiHead(int64_t d_in, int64_t d_out, int64_t context_length, float dropout, int64_t num_heads, bool qkv_bias,
                  Generator& gen);
  // x: (B,T,d_in) -> context_vec (B,T,d_out), attn_weights (B,H,T,T)
  std::pair<Var, Var> operator()(const Var& x, Context& ctx) const;
  void parameters(const std::string& prefix, ParamList& out);
};

}  // namespace attn
