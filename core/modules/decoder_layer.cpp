// DecoderLayer(emb_dim, num_heads, ffn_dim), seed 002, with its cross-attention fixed:
//   x = self.norm1(x + self.self_attn(x))
//   x = self.norm2(x + self.cross_attn(x, enc_output, enc_output))   # queries from x, keys/values from enc_output
//   x = self.norm3(x + self.ffn(x))
// The seed's attention class takes one argument, so its own code cannot run this line; here
// cross_attn keeps the same parameters (qkv_proj, fc_out) and takes q from qkv_proj(x), k and v
// from qkv_proj(enc_output). Like the seed, the decoder's self-attention has no causal mask.
// x: (B,T,C), enc_output: (B,S,C) -> (B,T,C)
#include "modules/fused_attention.hpp"

namespace attn {

DecoderBlock::DecoderBlock(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, Generator& gen)
    : self_attn(emb_dim, num_heads, gen),
      norm1(emb_dim),
      cross_attn(emb_dim, num_heads, gen),
      norm2(emb_dim),
      ffn(emb_dim, ffn_dim, gen),
      norm3(emb_dim) {}

std::tuple<Var, Var, Var> DecoderBlock::operator()(const Var& x, const Var& enc_output, Context& ctx) const {
  Var a, self_probs, c, cross_probs;
  {
    // self-attention: keys are the decoder's own positions
    Context::Scope scope(ctx, "self_attn.");
    Context::Sequences seq(ctx, ctx.seq_q(), ctx.seq_q());
    std::tie(a, self_probs) = self_attn(x, Var(), ctx);
  }
  const Var n1 = post_norm(ctx, x, a, norm1, {"residual1", "x + self.self_attn(x)", "norm1", "x = self.norm1(x + self.self_attn(x))"});
  {
    Context::Scope scope(ctx, "cross_attn.");
    std::tie(c, cross_probs) = cross_attn(n1, enc_output, ctx);
  }
  const Var n2 = post_norm(ctx, n1, c, norm2,
                           {"residual2", "x + self.cross_attn(x, enc_output, enc_output)", "norm2",
                            "x = self.norm2(x + self.cross_attn(x, enc_output, enc_output))"});
  return {post_norm(ctx, n2, ffn(n2, ctx), norm3, {"residual3", "x + self.ffn(x)", "norm3", "x = self.norm3(x + self.ffn(x))"}),
          self_probs, cross_probs};
}

void DecoderBlock::parameters(const std::string& p, ParamList& out) {
  self_attn.parameters(p + "self_attn.", out);
  norm1.parameters(p + "norm1.", out);
  cross_attn.parameters(p + "cross_attn.", out);
  norm2.parameters(p + "norm2.", out);
  ffn.parameters(p + "ffn.", out);
  norm3.parameters(p + "norm3.", out);
}

std::vector<AttentionSpec> DecoderBlock::attention(const std::string& prefix, const std::string& x,
                                                   const std::string& memory) const {
  AttentionSpec self = self_attn.spec, cross = cross_attn.spec;
  self.prefix = prefix + "self_attn.";
  self.query_input = self.key_input = self.value_input = x;
  cross.prefix = prefix + "cross_attn.";
  cross.query_input = x;
  cross.key_input = cross.value_input = memory;
  return {self, cross};
}

namespace {

class DecoderLayer : public Module {
 public:
  DecoderLayer(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, Generator& gen) : block(emb_dim, num_heads, ffn_dim, gen) {}
  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    if (!in[1].defined())
      fail_at("inputs.enc_output", "input 'enc_output' is missing: DecoderLayer needs the encoder output (B, S, emb_dim)");
    auto [out, self_probs, cross_probs] = block(in[0], in[1], ctx);
    return {{"output", out}, {"attention_weights", self_probs}, {"cross_attention_weights", cross_probs}};
  }
  void parameters(const std::string& p, ParamList& out) override { block.parameters(p, out); }
  std::vector<AttentionSpec> attention() const override {
    std::vector<AttentionSpec> s = block.attention("", "x", "enc_output");
    s[0].weights_output = "attention_weights";
    s[1].weights_output = "cross_attention_weights";
    return s;
  }

 private:
  DecoderBlock block;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<DecoderLayer>(c.i("emb_dim"), c.i("num_heads"), c.i("ffn_dim"), g);
}

}  // namespace

ModuleInfo info_DecoderLayer() {
  AttentionSpec self = fused_spec("self_attn."), cross = fused_spec("cross_attn.");
  self.weights_output = "attention_weights";
  cross.weights_output = "cross_attention_weights";
  cross.key_input = cross.value_input = "enc_output";
  return {"DecoderLayer", "002", "DecoderLayer",
          "Self-attention, cross-attention to the encoder output, feed-forward; each followed by residual + LayerNorm.",
          layer_args(),
          {{"x", InputKind::Float, false, InputRole::x, {"batch", "seq", "emb_dim"}, "emb_dim", "(B,T,emb_dim)"},
           {"enc_output", InputKind::Float, false, InputRole::memory, {"batch", "seq_k", "emb_dim"}, "emb_dim", "(B,S,emb_dim)"}},
          {"output", "attention_weights", "cross_attention_weights"},
          make,
          {self, cross}};
}

}  // namespace attn
