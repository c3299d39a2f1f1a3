// EncoderLayer(emb_dim, num_heads, ffn_dim), seed 002 (post-norm residual blocks):
//   x = self.norm1(x + self.attn(x)); x = self.norm2(x + self.ffn(x))
// x: (B,T,C) -> (B,T,C)
#include "fused_attention.hpp"

namespace attn {

EncoderBlock::EncoderBlock(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, Generator& gen)
    : attn(emb_dim, num_heads, gen), norm1(emb_dim), ffn(emb_dim, ffn_dim, gen), norm2(emb_dim) {}

std::pair<Tensor, Tensor> EncoderBlock::operator()(const Tensor& x, Context& ctx) const {
  Tensor a, probs;
  {
    Context::Scope scope(ctx, "attn.");
    std::tie(a, probs) = attn(x, Tensor(), ctx);
  }
  Tensor r1 = add(x, a);
  ctx.step("residual1", r1, {"batch", "seq", "emb_dim"}, "x + self.attn(x)", "add(x, attn(x))");
  Tensor n1 = norm1(r1);
  ctx.step("norm1", n1, {"batch", "seq", "emb_dim"}, "x = self.norm1(x + self.attn(x))", "layer_norm(x, norm1.weight, norm1.bias)");
  Tensor r2 = add(n1, ffn(n1, ctx));
  ctx.step("residual2", r2, {"batch", "seq", "emb_dim"}, "x + self.ffn(x)", "add(x, ffn(x))");
  Tensor n2 = norm2(r2);
  ctx.step("norm2", n2, {"batch", "seq", "emb_dim"}, "x = self.norm2(x + self.ffn(x))", "layer_norm(x, norm2.weight, norm2.bias)");
  return {n2, probs};
}

void EncoderBlock::parameters(const std::string& p, ParamList& out) {
  attn.parameters(p + "attn.", out);
  norm1.parameters(p + "norm1.", out);
  ffn.parameters(p + "ffn.", out);
  norm2.parameters(p + "norm2.", out);
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
  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    auto [out, probs] = block(in[0], ctx);
    return {{"output", out}, {"attention_weights", probs}};
  }
  void parameters(const std::string& p, ParamList& out) override { block.parameters(p, out); }

 private:
  EncoderBlock block;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<EncoderLayer>(c.i("emb_dim"), c.i("num_heads"), c.i("ffn_dim"), g);
}

}  // namespace

ModuleInfo info_EncoderLayer() {
  return {"EncoderLayer", "002", "EncoderLayer",
          "Self-attention and a ReLU feed-forward network, each with a residual connection and LayerNorm after it.",
          layer_args(),
          {{"x", InputKind::Float, false, "(B,T,emb_dim)"}},
          {"output", "attention_weights"},
          make};
}

}  // namespace attn
