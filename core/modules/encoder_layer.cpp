// EncoderLayer(emb_dim, num_heads, ffn_dim), seed 002 (post-norm residual blocks):
//   x = self.norm1(x + self.attn(x)); x = self.norm2(x + self.ffn(x))
// x: (B,T,C) -> (B,T,C)
#include "modules/fused_attention.hpp"

namespace attn {

EncoderBlock::EncoderBlock(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, Generator& gen)
    : attn(emb_dim, num_heads, gen), norm1(emb_dim), ffn(emb_dim, ffn_dim, gen), norm2(emb_dim) {}

std::pair<Var, Var> EncoderBlock::operator()(const Var& x, Context& ctx) const {
  Var a, probs;
  {
    Context::Scope scope(ctx, "attn.");
    std::tie(a, probs) = attn(x, Var(), ctx);
  }
  return {post_norm_block(ctx, x, a, norm1, ffn, norm2), probs};
}

Var post_norm(Context& ctx, const Var& x, const Var& sublayer, const LayerNorm& norm, const PostNormSteps& s) {
  Var r = add(ctx, x, sublayer);
  ctx.step(s.residual, r, {"batch", "seq", "emb_dim"}, s.residual_line);
  Var n = norm(ctx, r);
  ctx.step(s.norm, n, {"batch", "seq", "emb_dim"}, s.norm_line);
  return n;
}

Var post_norm_block(Context& ctx, const Var& x, const Var& a, const LayerNorm& norm1, const FeedForward& ffn, const LayerNorm& norm2) {
  const Var n1 = post_norm(ctx, x, a, norm1, {"residual1", "x + self.attn(x)", "norm1", "x = self.norm1(x + self.attn(x))"});
  return post_norm(ctx, n1, ffn(n1, ctx), norm2, {"residual2", "x + self.ffn(x)", "norm2", "x = self.norm2(x + self.ffn(x))"});
}

void EncoderBlock::parameters(const std::string& p, ParamList& out) {
  attn.parameters(p + "attn.", out);
  norm1.parameters(p + "norm1.", out);
  ffn.parameters(p + "ffn.", out);
  norm2.parameters(p + "norm2.", out);
}

std::vector<AttentionSpec> EncoderBlock::attention(const std::string& prefix) const {
  AttentionSpec s = attn.spec;
  s.prefix = prefix + "attn.";
  return {s};
}

std::vector<ArgSpec> layer_args() {
  return {{"emb_dim", ArgType::Int, true, 0, 1, 8192, "embedding size"},
          {"num_heads", ArgType::Int, true, 0, 1, 256, "number of heads (must divide emb_dim)"},
          {"ffn_dim", ArgType::Int, true, 0, 1, 32768, "hidden size of the feed-forward network"}};
}

namespace {

class EncoderLayer : public Module {
 public:
  EncoderLayer(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, Generator& gen) : block(emb_dim, num_heads, ffn_dim, gen) {}
  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    auto [out, probs] = block(in[0], ctx);
    return {{"output", out}, {"attention_weights", probs}};
  }
  void parameters(const std::string& p, ParamList& out) override { block.parameters(p, out); }
  std::vector<AttentionSpec> attention() const override {
    std::vector<AttentionSpec> s = block.attention("");
    s[0].weights_output = "attention_weights";
    return s;
  }

 private:
  EncoderBlock block;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<EncoderLayer>(c.i("emb_dim"), c.i("num_heads"), c.i("ffn_dim"), g);
}

}  // namespace

ModuleInfo info_EncoderLayer() {
  AttentionSpec s = fused_spec("attn.");
  s.weights_output = "attention_weights";
  return {"EncoderLayer", "002", "EncoderLayer",
          "Self-attention and a ReLU feed-forward network, each with a residual connection and LayerNorm after it.",
          layer_args(),
          {{"x", InputKind::Float, false, InputRole::x, {"batch", "seq", "emb_dim"}, "emb_dim", "(B,T,emb_dim)"}},
          {"output", "attention_weights"},
          make,
          {s}};
}

}  // namespace attn
