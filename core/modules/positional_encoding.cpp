// PositionalEncoding(emb_dim, max_len=5000), seed 002:
//   position = torch.arange(0, max_len).unsqueeze(1)
//   div_term = torch.exp(torch.arange(0, emb_dim, 2).float() * (-math.log(10000.0) / emb_dim))
//   pe[:, 0::2] = torch.sin(position * div_term); pe[:, 1::2] = torch.cos(position * div_term)
//   forward: x + self.pe[:, :x.size(1), :]
// x: (B,T,C) -> (B,T,C). Only the T rows used are computed (the table has no parameters).
#include "modules/modules.hpp"

namespace attn {

// Shared with Transformer: x + pe[:T], with the checks the seed's broadcasting implies. Names the
// table step "pe" (inside the caller's scope); the sum is the caller's to name.
Var add_positional_encoding(const Var& x, int64_t emb_dim, int64_t max_len, Context& ctx) {
  expect_input(x, "x", 3, "(batch, seq_len, emb_dim)", emb_dim, "emb_dim");
  const int64_t T = x.size(1);
  if (T > max_len)
    fail_at("config.max_len", "sequence length (", T, ") must not exceed max_len (", max_len, ") of the positional encoding");
  Var pe = positional_encoding(ctx, T, emb_dim);
  ctx.step("pe", pe, {"1", "seq", "emb_dim"}, "self.pe[:, :x.size(1), :]  # sin on even, cos on odd columns");
  return add(ctx, x, pe);
}

// Token ids of an ids input (B, L), each an integer in [0, vocab).
std::vector<int64_t> token_ids(const Var& t, const char* name, int64_t vocab) {
  const std::string field = std::string("inputs.") + name;
  if (!t.defined()) fail_at(field, "input '", name, "' is missing: the module needs token ids of shape (B, L)");
  if (t.dim() != 2) fail_at(field, "input '", name, "' has shape ", shape_str(t.shape()), " but must be 2-d (batch, seq_len) token ids");
  std::vector<int64_t> ids;
  const std::vector<float> v = t.t.to_vector();
  for (size_t i = 0; i < v.size(); ++i) {
    const float f = v[i];
    if (!(f >= 0 && f < static_cast<float>(vocab)) || f != static_cast<float>(static_cast<int64_t>(f)))
      fail_at(field, "input '", name, "' value ", f, " at position ", i, " is not a token id: ids must be integers in [0, ",
              vocab, ") (vocab_size)");
    ids.push_back(static_cast<int64_t>(f));
  }
  return ids;
}

void check_even_emb_dim(int64_t emb_dim) {
  if (emb_dim % 2 != 0)
    fail_at("config.emb_dim", "emb_dim (", emb_dim, ") must be even: PositionalEncoding puts sin in even and cos in odd columns");
}

namespace {

class PositionalEncoding : public Module {
 public:
  PositionalEncoding(int64_t emb_dim, int64_t max_len) : emb_dim_(emb_dim), max_len_(max_len) { check_even_emb_dim(emb_dim); }
  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    Var out = add_positional_encoding(in[0], emb_dim_, max_len_, ctx);
    ctx.step("output", out, {"batch", "seq", "emb_dim"}, "return x + self.pe[:, :x.size(1), :]");
    return {{"output", out}};
  }
  void parameters(const std::string&, ParamList&) override {}

 private:
  int64_t emb_dim_, max_len_;
};

std::unique_ptr<Module> make(const Config& c, Generator&) {
  return std::make_unique<PositionalEncoding>(c.i("emb_dim"), c.i("max_len"));
}

}  // namespace

ModuleInfo info_PositionalEncoding() {
  return {"PositionalEncoding", "002", "PositionalEncoding",
          "Adds the sinusoidal position table: sin(pos / 10000^(2i/d)) on even columns, cos on odd ones.",
          {{"emb_dim", ArgType::Int, true, 0, 2, 8192, "embedding size (even)"},
           {"max_len", ArgType::Int, false, 5000, 1, 100000, "longest sequence"}},
          {{"x", InputKind::Float, false, InputRole::x, {"batch", "seq", "emb_dim"}, "emb_dim", "(B,T,emb_dim)"}},
          {"output"},
          make,
          {}};
}

}  // namespace attn
