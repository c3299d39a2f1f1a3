// CausalAttention and MultiHeadAttentionWrapper, seed 004:
//   keys = self.W_key(x); queries = self.W_query(x); values = self.W_value(x)
//   attn_scores = queries @ keys.transpose(1, 2)
//   attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
//   attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
//   attn_weights = self.dropout(attn_weights); context_vec = attn_weights @ values
// Wrapper: torch.cat([head(x) for head in self.heads], dim=-1)
// x: (B,T,d_in) -> (B,T,d_out) per head; weights (B,T,T); T <= context_length
#include "modules.hpp"

namespace attn {
namespace {

void check_causal_input(const Tensor& x, int64_t d_in, int64_t context_length) {
  expect_input(x, "x", 3, "(B, T, d_in)", d_in, "d_in");
  if (x.size(1) > context_length)
    fail("sequence length T (", x.size(1), ") must not exceed context_length (", context_length,
         "): the causal mask buffer is context_length x context_length");
}

class CausalAttention : public Module {
 public:
  CausalAttention(int64_t d_in, int64_t d_out, int64_t context_length, float dropout, bool qkv_bias, Generator& gen)
      : W_query(d_in, d_out, qkv_bias, gen),
        W_key(d_in, d_out, qkv_bias, gen),
        W_value(d_in, d_out, qkv_bias, gen),
        d_in_(d_in),
        context_length_(context_length),
        p_(dropout) {}

  // context_vec (B,T,d_out) and attn_weights (B,T,T)
  std::pair<Tensor, Tensor> attend(const Tensor& x, Context& ctx) const {
    check_causal_input(x, d_in_, context_length_);
    const int64_t T = x.size(1);
    Tensor keys = W_key(x);
    ctx.step("keys", keys, {"batch", "seq", "d_out"}, "keys = self.W_key(x)", "linear(x, W_key.weight, W_key.bias)");
    Tensor queries = W_query(x);
    ctx.step("queries", queries, {"batch", "seq", "d_out"}, "queries = self.W_query(x)",
             "linear(x, W_query.weight, W_query.bias)");
    Tensor values = W_value(x);
    ctx.step("values", values, {"batch", "seq", "d_out"}, "values = self.W_value(x)",
             "linear(x, W_value.weight, W_value.bias)");
    Tensor attn_scores = matmul(queries, keys.transpose(1, 2));
    ctx.step("attn_scores", attn_scores, {"batch", "seq_q", "seq_k"}, "attn_scores = queries @ keys.transpose(1, 2)",
             "matmul(queries, keys.transpose(1, 2))");
    attn_scores = masked_fill(attn_scores, causal_mask(T, T), -INFINITY);
    ctx.step("attn_scores_masked", attn_scores, {"batch", "seq_q", "seq_k"},
             "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)",
             "masked_fill(attn_scores, causal_mask(T, T), -INFINITY)");
    const float scale = static_cast<float>(std::sqrt(static_cast<double>(keys.size(-1))));
    Tensor attn_weights = softmax(div_scalar(attn_scores, scale));
    ctx.step("attn_weights", attn_weights, {"batch", "seq_q", "seq_k"},
             "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
             "softmax(div_scalar(attn_scores, sqrt(d_k)))");
    if (ctx.train && p_ > 0.f) {
      attn_weights = dropout(attn_weights, p_, ctx.gen);
      ctx.step("attn_weights_dropout", attn_weights, {"batch", "seq_q", "seq_k"},
               "attn_weights = self.dropout(attn_weights)", "dropout(attn_weights, p, gen)");
    }
    Tensor context_vec = matmul(attn_weights, values);
    ctx.step("context_vec", context_vec, {"batch", "seq", "d_out"}, "context_vec = attn_weights @ values",
             "matmul(attn_weights, values)");
    return {context_vec, attn_weights};
  }

  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    auto [context_vec, attn_weights] = attend(in[0], ctx);
    return {{"output", context_vec}, {"attention_weights", attn_weights}};
  }
  void parameters(const std::string& p, ParamList& out) override {
    W_query.parameters(p + "W_query.", out);
    W_key.parameters(p + "W_key.", out);
    W_value.parameters(p + "W_value.", out);
  }

 private:
  Linear W_query, W_key, W_value;
  int64_t d_in_, context_length_;
  float p_;
};

class MultiHeadAttentionWrapper : public Module {
 public:
  MultiHeadAttentionWrapper(int64_t d_in, int64_t d_out, int64_t context_length, float dropout, int64_t num_heads,
                            bool qkv_bias, Generator& gen) {
    for (int64_t h = 0; h < num_heads; ++h)
      heads.push_back(std::make_unique<CausalAttention>(d_in, d_out, context_length, dropout, qkv_bias, gen));
  }
  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    std::vector<Tensor> outs, weights;
    for (size_t h = 0; h < heads.size(); ++h) {
      Context::Scope scope(ctx, "heads." + std::to_string(h) + ".");
      auto [context_vec, attn_weights] = heads[h]->attend(in[0], ctx);
      outs.push_back(context_vec);
      weights.push_back(attn_weights);
    }
    Tensor context_vec = cat_last(outs);
    ctx.step("context_vec", context_vec, {"batch", "seq", "heads*d_out"},
             "return torch.cat([head(x) for head in self.heads], dim=-1)", "cat_last(head outputs)");
    return {{"output", context_vec}, {"attention_weights", stack(weights, 1)}};
  }
  void parameters(const std::string& p, ParamList& out) override {
    for (size_t h = 0; h < heads.size(); ++h) heads[h]->parameters(p + "heads." + std::to_string(h) + ".", out);
  }

 private:
  std::vector<std::unique_ptr<CausalAttention>> heads;
};

std::unique_ptr<Module> make_causal(const Config& c, Generator& g) {
  return std::make_unique<CausalAttention>(c.i("d_in"), c.i("d_out"), c.i("context_length"), c.f("dropout"),
                                           c.b("qkv_bias"), g);
}
std::unique_ptr<Module> make_wrapper(const Config& c, Generator& g) {
  return std::make_unique<MultiHeadAttentionWrapper>(c.i("d_in"), c.i("d_out"), c.i("context_length"), c.f("dropout"),
                                                     c.i("num_heads"), c.b("qkv_bias"), g);
}

}  // namespace

// The argument list shared by seed 004's causal modules.
std::vector<ArgSpec> causal_args(bool with_heads) {
  std::vector<ArgSpec> a = {{"d_in", ArgType::Int, true, 0, 1, 4096, "input embedding size"},
                            {"d_out", ArgType::Int, true, 0, 1, 4096, "output size"},
                            {"context_length", ArgType::Int, true, 0, 1, 4096, "longest sequence the mask covers"},
                            {"dropout", ArgType::Float, true, 0, 0, 1, "dropout rate on attention weights (train mode)"}};
  if (with_heads) a.push_back({"num_heads", ArgType::Int, true, 0, 1, 256, "number of heads"});
  a.push_back({"qkv_bias", ArgType::Bool, false, 0, 0, 1, "bias in the query/key/value projections"});
  return a;
}

ModuleInfo info_CausalAttention() {
  return {"CausalAttention", "004", "CausalAttention",
          "Self-attention where token t sees only tokens <= t (triu mask with -inf), then dropout.",
          causal_args(false),
          {{"x", InputKind::Float, false, "(B,T,d_in)"}},
          {"output", "attention_weights"},
          make_causal};
}

ModuleInfo info_MultiHeadAttentionWrapper() {
  return {"MultiHeadAttentionWrapper", "004", "MultiHeadAttentionWrapper",
          "num_heads independent CausalAttention heads, outputs concatenated: (B,T,num_heads*d_out).",
          causal_args(true),
          {{"x", InputKind::Float, false, "(B,T,d_in)"}},
          {"output", "attention_weights"},
          make_wrapper};
}

}  // namespace attn
