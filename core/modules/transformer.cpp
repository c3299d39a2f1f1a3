// Transformer(vocab_size, emb_dim, num_heads, ffn_dim, num_layers), seed 002:
//   src = self.pos_encoder(self.embedding(src)); tgt = self.pos_encoder(self.embedding(tgt))
//   enc_output = self.encoder(src)                      # nn.Sequential of EncoderLayer
//   for layer in self.decoder: tgt = layer(tgt, enc_output)   # the fix: nn.Sequential passes one argument
//   return self.fc_out(dec_output)
// src: (B,S) token ids, tgt: (B,T) token ids -> logits (B,T,vocab_size)
#include "modules/fused_attention.hpp"

namespace attn {

namespace {

class Transformer : public Module {
 public:
  Transformer(int64_t vocab_size, int64_t emb_dim, int64_t num_heads, int64_t ffn_dim, int64_t num_layers, Generator& gen)
      : V_(vocab_size), C_(emb_dim) {
    check_even_emb_dim(emb_dim);
    embedding = Tensor::empty({vocab_size, emb_dim});
    gen.embedding_init(embedding.data(), static_cast<size_t>(embedding.numel()));
    for (int64_t i = 0; i < num_layers; ++i) encoder.emplace_back(emb_dim, num_heads, ffn_dim, gen);
    for (int64_t i = 0; i < num_layers; ++i) decoder.emplace_back(emb_dim, num_heads, ffn_dim, gen);
    fc_out = Linear(emb_dim, vocab_size, true, gen);
  }

  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    const std::vector<int64_t> src_ids = token_ids(in[0], "src", V_), tgt_ids = token_ids(in[1], "tgt", V_);
    if (in[1].size(0) != in[0].size(0))
      fail_at("inputs.tgt", "src batch (", in[0].size(0), ") and tgt batch (", in[1].size(0), ") must be equal");
    // The seed's order: both embeddings, then the encoder, then the decoder.
    Var src, tgt;
    {
      Context::Sequences seq(ctx, "src", "src");
      src = embedding_lookup(src_ids, in[0].shape(), "src", ctx);
    }
    {
      Context::Sequences seq(ctx, "tgt", "tgt");
      tgt = embedding_lookup(tgt_ids, in[1].shape(), "tgt", ctx);
    }
    {
      Context::Sequences seq(ctx, "src", "src");
      for (size_t i = 0; i < encoder.size(); ++i) {
        Context::Scope scope(ctx, "encoder." + std::to_string(i) + ".");
        src = encoder[i](src, ctx).first;
      }
    }
    // decoder positions are the target's; cross-attention keys the source's
    Context::Sequences seq(ctx, "tgt", "src");
    for (size_t i = 0; i < decoder.size(); ++i) {
      Context::Scope scope(ctx, "decoder." + std::to_string(i) + ".");
      tgt = std::get<0>(decoder[i](tgt, src, ctx));
    }
    Var logits = fc_out(ctx, tgt);
    ctx.step("logits", logits, {"batch", "seq", "vocab"}, "return self.fc_out(dec_output)");
    return {{"output", logits}};
  }

  void parameters(const std::string& p, ParamList& out) override {
    out.emplace_back(p + "embedding.weight", &embedding);
    for (size_t i = 0; i < encoder.size(); ++i) encoder[i].parameters(p + "encoder." + std::to_string(i) + ".", out);
    for (size_t i = 0; i < decoder.size(); ++i) decoder[i].parameters(p + "decoder." + std::to_string(i) + ".", out);
    fc_out.parameters(p + "fc_out.", out);
  }
  std::vector<AttentionSpec> attention() const override {
    std::vector<AttentionSpec> out;
    for (size_t i = 0; i < encoder.size(); ++i) {
      AttentionSpec s = encoder[i].attention("encoder." + std::to_string(i) + ".")[0];
      s.query_input = s.key_input = s.value_input = "src";
      out.push_back(s);
    }
    for (size_t i = 0; i < decoder.size(); ++i)
      for (const AttentionSpec& s : decoder[i].attention("decoder." + std::to_string(i) + ".", "tgt", "src")) out.push_back(s);
    return out;
  }

 private:
  Var embedding_lookup(const std::vector<int64_t>& ids, const Shape& rows, const char* which, Context& ctx) {
    const bool src = which[0] == 's';
    Var e = attn::embedding(ctx, ctx.param(this->embedding), ids, rows, which);
    ctx.step(src ? "src_embedding" : "tgt_embedding", e, {"batch", "seq", "emb_dim"},
             src ? "self.embedding(src)" : "self.embedding(tgt)");
    Var pos;
    {
      Context::Scope scope(ctx, src ? "src_" : "tgt_");
      pos = add_positional_encoding(e, C_, 5000, ctx);
    }
    ctx.step(src ? "src_pos" : "tgt_pos", pos, {"batch", "seq", "emb_dim"},
             src ? "src = self.pos_encoder(self.embedding(src))" : "tgt = self.pos_encoder(self.embedding(tgt))");
    return pos;
  }

  int64_t V_, C_;
  Tensor embedding;
  std::vector<EncoderBlock> encoder;
  std::vector<DecoderBlock> decoder;
  Linear fc_out;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<Transformer>(c.i("vocab_size"), c.i("emb_dim"), c.i("num_heads"), c.i("ffn_dim"),
                                       c.i("num_layers"), g);
}

}  // namespace

ModuleInfo info_Transformer() {
  std::vector<ArgSpec> args = layer_args();
  args.insert(args.begin(), {"vocab_size", ArgType::Int, true, 0, 1, 65536, "vocabulary size"});
  args.push_back({"num_layers", ArgType::Int, true, 0, 0, 24, "encoder and decoder layers"});
  AttentionSpec enc = fused_spec("encoder.*.attn."), self = fused_spec("decoder.*.self_attn."),
                cross = fused_spec("decoder.*.cross_attn.");
  enc.query_input = enc.key_input = enc.value_input = "src";
  self.query_input = self.key_input = self.value_input = "tgt";
  cross.query_input = "tgt", cross.key_input = cross.value_input = "src";
  return {"Transformer", "002", "Transformer",
          "Embedding + positional encoding, num_layers encoder and decoder layers, a linear layer to vocabulary logits.",
          args,
          {{"src", InputKind::Ids, false, InputRole::source, {"batch", "seq"}, "", "(B,S) token ids"},
           {"tgt", InputKind::Ids, false, InputRole::target, {"batch", "seq"}, "", "(B,T) token ids"}},
          {"output"},
          make,
          {enc, self, cross}};
}

}  // namespace attn
