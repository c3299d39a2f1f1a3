// Seed 002's MultiHeadSelfAttention (here FusedMultiHeadSelfAttention), shared by its module,
// EncoderLayer, DecoderLayer and Transformer. One qkv_proj, reshaped to (b, s, h, 3*hd) and
// chunked into q, k, v along the last axis, so head h's q, k and v are adjacent columns.
#pragma once
#include <tuple>

#include "modules/modules.hpp"

namespace attn {

// Seed 002's attention conventions: one fused qkv_proj, einsum scores * head_dim ** -0.5, no
// mask, fc_out. `prefix` is where a layer keeps it ("encoder.0.attn.").
AttentionSpec fused_spec(const std::string& prefix);

struct FusedAttention {
  Linear qkv_proj, fc_out;
  int64_t C = 0;
  AttentionSpec spec;  // heads, head dim and scale filled in by the constructor; prefix by the owner
  FusedAttention() = default;
  FusedAttention(int64_t emb_dim, int64_t num_heads, Generator& gen);
  // x: (B,T,C); kv: (B,S,C) for cross-attention (the seed-002 fix) or undefined for self-attention.
  // Returns output (B,T,C) and attn_probs (B,H,T,S).
  std::pair<Var, Var> operator()(const Var& x, const Var& kv, Context& ctx) const;
  void parameters(const std::string& prefix, ParamList& out);
};

// nn.Sequential(nn.Linear(emb_dim, ffn_dim), nn.ReLU(), nn.Linear(ffn_dim, emb_dim))
struct FeedForward {
  Linear l0, l2;
  FeedForward() = default;
  FeedForward(int64_t emb_dim, int64_t ffn_dim, Generator& gen) : l0(emb_dim, ffn_dim, true, gen), l2(ffn_dim, emb_dim, true, gen) {}
  Var operator()(const Var& x, Context& ctx) const;
  void parameters(const std::string& prefix, ParamList& out) {
    l0.parameters(prefix + "0.", out);
    l2.parameters(prefix + "2.", out);
  }
};

// Seed 002's post-norm residual, x = norm(x + sublayer(x)) given the sublayer's output: the sum
// and the norm as two steps, named and quoted as the seed's line is (residual1 "x + self.attn(x)",
// norm1 "x = self.norm1(x + self.attn(x))").
struct PostNormSteps {
  const char *residual, *residual_line, *norm, *norm_line;
};
Var post_norm(Context& ctx, const Var& x, const Var& sublayer, const LayerNorm& norm, const PostNormSteps& s);
// EncoderLayer's block after its attention's output a: x = norm1(x + a); x = norm2(x + ffn(x))
// (the CausalTransformer's blocks too).
Var post_norm_block(Context& ctx, const Var& x, const Var& a, const LayerNorm& norm1, const FeedForward& ffn, const LayerNorm& norm2);

// EncoderLayer: x = norm1(x + attn(x)); x = norm2(x + ffn(x))   (post-norm)
struct EncoderBlock {
  // declared in the seed's construction order: members are built (and draw) in this order
  FusedAttention attn;
  LayerNorm norm1;
  FeedForward ffn;
  LayerNorm norm2;
  EncoderBlock() = default;
  EncoderBlock(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, Generator& gen);
  std::pair<Var, Var> operator()(const Var& x, Context& ctx) const;  // output, attn_probs
  void parameters(const std::string& prefix, ParamList& out);
  std::vector<AttentionSpec> attention(const std::string& prefix) const;
};

// DecoderLayer: x = norm1(x + self_attn(x)); x = norm2(x + cross_attn(x, enc_output, enc_output));
//               x = norm3(x + ffn(x))
struct DecoderBlock {
  FusedAttention self_attn;
  LayerNorm norm1;
  FusedAttention cross_attn;
  LayerNorm norm2;
  FeedForward ffn;
  LayerNorm norm3;
  DecoderBlock() = default;
  DecoderBlock(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, Generator& gen);
  // output, self-attention probs, cross-attention probs
  std::tuple<Var, Var, Var> operator()(const Var& x, const Var& enc_output, Context& ctx) const;
  void parameters(const std::string& prefix, ParamList& out);
  // memory: the input cross-attention reads keys and values from ("enc_output", or "src")
  std::vector<AttentionSpec> attention(const std::string& prefix, const std::string& x, const std::string& memory) const;
};

// The seed-002 arguments shared by EncoderLayer and DecoderLayer.
std::vector<ArgSpec> layer_args();

}  // namespace attn
