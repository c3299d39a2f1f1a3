// DecoderLayer(emb_dim, num_heads, ffn_dim), seed 002, with its cross-attention fixed:
//   x = self.norm1(x + self.self_attn(x))
//   x = self.norm2(x + self.cross_attn(x, enc_output, enc_output))   # queries from x, keys/values from enc_output
//   x = self.norm3(x + self.ffn(x))
// The seed's attention class takes one argument, so its own code cannot run this line; here
// cross_attn keeps the same parameters (qkv_proj, fc_out) and takes q from qkv_proj(x), k and v
// from qkv_proj(enc_output). Like the seed, the decoder's self-attention has no causal mask.
// x: (B,T,C), enc_output: (B,S,C) -> (B,T,C)
#include "fused_attention.hpp"

namespace attn {

DecoderBlock::DecoderBlock(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, Generator& gen)
    : self_attn(emb_dim, num_heads, gen),
      norm1(emb_dim),
      cross_attn(emb_dim, num_heads, gen),
      norm2(emb_dim),
      ffn(emb_dim, ffn_dim, gen),
      norm3(emb_dim) {}

std::tuple<Tensor, Tensor, Tensor> DecoderBlock::operator()(const Tensor& x, const Tensor& enc_output, Context& ctx) const {
  Tensor a, self_probs, c, cross_probs;
  {
    Context::Scope scope(ctx, "self_attn.");
    std::tie(a, self_probs) = self_attn(x, Tensor(), ctx);
  }
  Tensor r1 = add(x, a);
  ctx.step("residual1", r1, {"batch", "seq", "emb_dim"}, "x + self.self_attn(x)", "add(x, self_attn(x))");
  Tensor n1 = norm1(r1);
  ctx.step("norm1", n1, {"batch", "seq", "emb_dim"}, "x = self.norm1(x + self.self_attn(x))", "layer_norm(x, norm1.weight, norm1.bias)");
  {
    Context::Scope scope(ctx, "cross_attn.");
    std::tie(c, cross_probs) = cross_attn(n1, enc_output, ctx);
  }
  Tensor r2 = add(n1, c);
  ctx.step("residual2", r2, {"batch", "seq", "emb_dim"}, "x + self.cross_attn(x, enc_output, enc_output)", "add(x, cross_attn(x, enc_output))");
  Tensor n2 = norm2(r2);
  ctx.step("norm2", n2, {"batch", "seq", "emb_dim"}, "x = self.norm2(x + self.cross_attn(x, enc_output, enc_output))",
           "layer_norm(x, norm2.weight, norm2.bias)");
  Tensor r3 = add(n2, ffn(n2, ctx));
  ctx.step("residual3", r3, {"batch", "seq", "emb_dim"}, "x + self.ffn(x)", "add(x, ffn(x))");
  Tensor n3 = norm3(r3);
  ctx.step("norm3", n3, {"batch", "seq", "emb_dim"}, "x = self.norm3(x + self.ffn(x))", "layer_norm(x, norm3.weight, norm3.bias)");
  return {n3, self_probs, cross_probs};
}

void DecoderBlock::parameters(const std::string& p, ParamList& out) {
  self_attn.parameters(p + "self_attn.", out);
  norm1.parameters(p + "norm1.", out);
  cross_attn.parameters(p + "cross_attn.", out);
  norm2.parameters(p + "norm2.", out);
  ffn.parameters(p + "ffn.", out);
  norm3.parameters(p + "norm3.", out);
}

namespace {

class DecoderLayer : public Module {
 public:
  DecoderLayer(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, Generator& gen) : block(emb_dim, num_heads, ffn_dim, gen) {}
  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    if (!in[1].defined()) fail("input 'enc_output' is missing: DecoderLayer needs the encoder output (B, S, emb_dim)");
    auto [out, self_probs, cross_probs] = block(in[0], in[1], ctx);
    return {{"output", out}, {"attention_weights", self_probs}, {"cross_attention_weights", cross_probs}};
  }
  void parameters(const std::string& p, ParamList& out) override { block.parameters(p, out); }

 private:
  DecoderBlock block;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<DecoderLayer>(c.i("emb_dim"), c.i("num_heads"), c.i("ffn_dim"), g);
}

}  // namespace

ModuleInfo info_DecoderLayer() {
  return {"DecoderLayer", "002", "DecoderLayer",
          "Self-attention, cross-attention to the encoder output, feed-forward; each followed by residual + LayerNorm.",
          layer_args(),
          {{"x", InputKind::Float, false, "(B,T,emb_dim)"}, {"enc_output", InputKind::Float, false, "(B,S,emb_dim)"}},
          {"output", "attention_weights", "cross_attention_weights"},
          make};
}

}  // namespace attn
