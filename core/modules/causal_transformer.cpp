// CausalTransformer(vocab_size, emb_dim, num_heads, ffn_dim, num_layers, context_length, dropout=0.0):
// the decoder-only model the page trains, assembled from the seeds' own parts in their names:
// seed 002's nn.Embedding + PositionalEncoding, then per layer seed 004's causal
// MultiHeadAttention inside seed 002's post-norm block, then seed 002's fc_out to the vocabulary.
//   x = self.pos_encoder(self.embedding(idx))
//   for layer in self.layers:                      # CausalBlock
//       x = layer.norm1(x + layer.attn(x)); x = layer.norm2(x + layer.ffn(x))
//   return self.fc_out(x)
// idx: (B,T) token ids -> logits (B,T,vocab_size); T <= context_length. Its PyTorch twin is in
// scripts/make_fixtures.py (CausalTransformer), for fixtures and the page's training parity.
#include "modules/causal_multi_head.hpp"
#include "modules/fused_attention.hpp"

namespace attn {
namespace {

struct CausalBlock {
  // the seed's construction order: attn, norm1, ffn, norm2
  CausalMultiHead attn;
  LayerNorm norm1;
  FeedForward ffn;
  LayerNorm norm2;
  CausalBlock(int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, int64_t context_length, float dropout, Generator& gen)
      : attn(emb_dim, emb_dim, context_length, dropout, num_heads, false, gen), norm1(emb_dim), ffn(emb_dim, ffn_dim, gen),
        norm2(emb_dim) {}
  Var operator()(const Var& x, Context& ctx) const {
    Var a;
    {
      Context::Scope scope(ctx, "attn.");
      a = attn(x, ctx).first;
    }
    return post_norm_block(ctx, x, a, norm1, ffn, norm2);
  }
  void parameters(const std::string& p, ParamList& out) {
    attn.parameters(p + "attn.", out);
    norm1.parameters(p + "norm1.", out);
    ffn.parameters(p + "ffn.", out);
    norm2.parameters(p + "norm2.", out);
  }
};

class CausalTransformer : public Module {
 public:
  CausalTransformer(int64_t vocab_size, int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, int64_t num_layers,
                    int64_t context_length, float dropout, Generator& gen)
      : V_(vocab_size), C_(emb_dim), context_length_(context_length) {
    check_even_emb_dim(emb_dim);
    embedding = Tensor::empty({vocab_size, emb_dim});
    gen.embedding_init(embedding.data(), static_cast<size_t>(embedding.numel()));
    for (int64_t i = 0; i < num_layers; ++i) layers.emplace_back(emb_dim, num_heads, ffn_dim, context_length, dropout, gen);
    fc_out = Linear(emb_dim, vocab_size, true, gen);
  }

  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    const std::vector<int64_t> ids = token_ids(in[0], "idx", V_);
    if (in[0].size(1) > context_length_)
      fail_at("config.context_length", "sequence length T (", in[0].size(1), ") must not exceed context_length (",
              context_length_, "): the causal mask buffer is context_length x context_length");
    Var e = attn::embedding(ctx, ctx.param(embedding), ids, in[0].shape(), "idx");
    ctx.step("tok_embedding", e, {"batch", "seq", "emb_dim"}, "self.embedding(idx)");
    Var x = add_positional_encoding(e, C_, context_length_, ctx);
    ctx.step("x", x, {"batch", "seq", "emb_dim"}, "x = self.pos_encoder(self.embedding(idx))");
    for (size_t i = 0; i < layers.size(); ++i) {
      Context::Scope scope(ctx, "layers." + std::to_string(i) + ".");
      x = layers[i](x, ctx);
    }
    Var logits = fc_out(ctx, x);
    ctx.step("logits", logits, {"batch", "seq", "vocab"}, "return self.fc_out(x)");
    return {{"output", logits}};
  }
  void parameters(const std::string& p, ParamList& out) override {
    out.emplace_back(p + "embedding.weight", &embedding);
    for (size_t i = 0; i < layers.size(); ++i) layers[i].parameters(p + "layers." + std::to_string(i) + ".", out);
    fc_out.parameters(p + "fc_out.", out);
  }
  std::vector<AttentionSpec> attention() const override {
    std::vector<AttentionSpec> out;
    for (size_t i = 0; i < layers.size(); ++i) {
      AttentionSpec s = layers[i].attn.spec;
      s.prefix = "layers." + std::to_string(i) + ".attn.";
      s.query_input = s.key_input = s.value_input = "idx";
      out.push_back(s);
    }
    return out;
  }

 private:
  int64_t V_, C_, context_length_;
  Tensor embedding;
  std::vector<CausalBlock> layers;
  Linear fc_out;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<CausalTransformer>(c.i("vocab_size"), c.i("emb_dim"), c.i("num_heads"), c.i("ffn_dim"),
                                             c.i("num_layers"), c.i("context_length"), c.f("dropout"), g);
}

}  // namespace

ModuleInfo info_CausalTransformer() {
  std::vector<ArgSpec> args = layer_args();
  args.insert(args.begin(), {"vocab_size", ArgType::Int, true, 0, 1, 65536, "vocabulary size"});
  args.push_back({"num_layers", ArgType::Int, true, 0, 0, 24, "layers"});
  args.push_back({"context_length", ArgType::Int, true, 0, 1, 4096, "longest sequence the causal mask covers"});
  args.push_back({"dropout", ArgType::Float, false, 0.0, 0, 1, "dropout rate on attention weights (train mode)"});
  AttentionSpec s = causal_spec("out_proj");
  s.prefix = "layers.*.attn.";
  s.query_input = s.key_input = s.value_input = "idx";
  return {"CausalTransformer", "002+004", "CausalTransformer",
          "Decoder-only: embedding + positional encoding, num_layers blocks of seed 004's causal multi-head attention "
          "and a ReLU feed-forward (post-norm, as seed 002), fc_out to vocabulary logits.",
          args,
          {{"idx", InputKind::Ids, false, InputRole::tokens, {"batch", "seq"}, "", "(B,T) token ids"}},
          {"output"},
          make,
          {s}};
}

}  // namespace attn
