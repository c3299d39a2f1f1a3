// CausalAttention and MultiHeadAttentionWrapper, seed 004:
//   keys = self.W_key(x); queries = self.W_query(x); values = self.W_value(x)
//   attn_scores = queries @ keys.transpose(1, 2)
//   attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
//   attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
//   attn_weights = self.dropout(attn_weights); context_vec = attn_weights @ values
// Wrapper: torch.cat([head(x) for head in self.heads], dim=-1)
// x: (B,T,d_in) -> (B,T,d_out) per head; weights (B,T,T); T <= context_length
#include "modules/modules.hpp"

namespace attn {

// Seed 004's attention conventions: W_query/W_key/W_value, scores / keys.shape[-1]**0.5 (a Python
// float, rounded to float32), a causal triu buffer filled with -inf, dropout on the weights.
AttentionSpec causal_spec(const std::string& out_proj) {
  AttentionSpec s;
  s.query_input = s.key_input = s.value_input = "x";
  s.query = "W_query", s.key = "W_key", s.value = "W_value", s.out = out_proj;
  s.scale_formula = "keys.shape[-1]**0.5";
  s.causal = true;
  s.fill = -INFINITY;
  s.weights_step = "attn_weights";
  return s;
}

// The checks seed 004's causal modules start with: x (B, T, d_in), T within the mask buffer.
void check_causal_input(const Var& x, int64_t d_in, int64_t context_length) {
  expect_input(x, "x", 3, "(B, T, d_in)", d_in, "d_in");
  if (x.size(1) > context_length)
    fail_at("config.context_length", "sequence length T (", x.size(1), ") must not exceed context_length (", context_length,
            "): the causal mask buffer is context_length x context_length");
}

namespace {

class CausalAttention : public Module {
 public:
  CausalAttention(int64_t d_in, int64_t d_out, int64_t context_length, float dropout, bool qkv_bias, Generator& gen)
      : W_query(d_in, d_out, qkv_bias, gen),
        W_key(d_in, d_out, qkv_bias, gen),
        W_value(d_in, d_out, qkv_bias, gen),
        d_in_(d_in),
        context_length_(context_length),
        s_(causal_spec("")) {
    s_.heads = 1, s_.d_k = s_.d_v = d_out, s_.dropout = dropout, s_.heads_dim = false;
    s_.scale = static_cast<float>(std::sqrt(static_cast<double>(d_out)));
  }

  // context_vec (B,T,d_out) and attn_weights (B,T,T)
  std::pair<Var, Var> attend(const Var& x, Context& ctx) const {
    check_causal_input(x, d_in_, context_length_);
    Var keys = W_key(ctx, x);
    ctx.step("keys", keys, {"batch", "seq", "d_out"}, "keys = self.W_key(x)");
    Var queries = W_query(ctx, x);
    ctx.step("queries", queries, {"batch", "seq", "d_out"}, "queries = self.W_query(x)");
    Var values = W_value(ctx, x);
    ctx.step("values", values, {"batch", "seq", "d_out"}, "values = self.W_value(x)");
    Var attn_scores = matmul_bt(ctx, queries, keys);
    ctx.step("attn_scores", attn_scores, {"batch", "seq_q", "seq_k"}, "attn_scores = queries @ keys.transpose(1, 2)");
    attn_scores = mask_scores(ctx, attn_scores, s_, Tensor());
    ctx.step("attn_scores_masked", attn_scores, {"batch", "seq_q", "seq_k"},
             "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)");
    Var attn_weights = softmax(ctx, scale_scores(ctx, attn_scores, s_));
    ctx.step("attn_weights", attn_weights, {"batch", "seq_q", "seq_k"},
             "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)");
    if (ctx.train && s_.dropout > 0.f) {
      attn_weights = dropout(ctx, attn_weights, s_.dropout);
      ctx.step("attn_weights_dropout", attn_weights, {"batch", "seq_q", "seq_k"}, "attn_weights = self.dropout(attn_weights)");
    }
    Var context_vec = weighted_sum(ctx, attn_weights, values);
    ctx.step("context_vec", context_vec, {"batch", "seq", "d_out"}, "context_vec = attn_weights @ values");
    return {context_vec, attn_weights};
  }

  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    auto [context_vec, attn_weights] = attend(in[0], ctx);
    return {{"output", context_vec}, {"attention_weights", attn_weights}};
  }
  void parameters(const std::string& p, ParamList& out) override {
    W_query.parameters(p + "W_query.", out);
    W_key.parameters(p + "W_key.", out);
    W_value.parameters(p + "W_value.", out);
  }
  // standalone: the block is the whole module; inside the wrapper, prefix and outputs change
  AttentionSpec spec(const std::string& prefix, bool whole) const {
    AttentionSpec s = s_;
    s.prefix = prefix;
    if (whole) s.weights_output = "attention_weights", s.output = "output";
    return s;
  }
  std::vector<AttentionSpec> attention() const override { return {spec("", true)}; }

 private:
  Linear W_query, W_key, W_value;
  int64_t d_in_, context_length_;
  AttentionSpec s_;
};

class MultiHeadAttentionWrapper : public Module {
 public:
  MultiHeadAttentionWrapper(int64_t d_in, int64_t d_out, int64_t context_length, float dropout, int64_t num_heads,
                            bool qkv_bias, Generator& gen) {
    for (int64_t h = 0; h < num_heads; ++h)
      heads.push_back(std::make_unique<CausalAttention>(d_in, d_out, context_length, dropout, qkv_bias, gen));
  }
  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    std::vector<Var> outs, weights;
    for (size_t h = 0; h < heads.size(); ++h) {
      Context::Scope scope(ctx, "heads." + std::to_string(h) + ".");
      auto [context_vec, attn_weights] = heads[h]->attend(in[0], ctx);
      outs.push_back(context_vec);
      weights.push_back(attn_weights);
    }
    Var context_vec = concat(ctx, outs);
    ctx.step("context_vec", context_vec, {"batch", "seq", "heads*d_out"},
             "return torch.cat([head(x) for head in self.heads], dim=-1)");
    return {{"output", context_vec}, {"attention_weights", stack(ctx, weights, 1)}};
  }
  void parameters(const std::string& p, ParamList& out) override {
    for (size_t h = 0; h < heads.size(); ++h) heads[h]->parameters(p + "heads." + std::to_string(h) + ".", out);
  }
  std::vector<AttentionSpec> attention() const override {
    std::vector<AttentionSpec> out;
    for (size_t h = 0; h < heads.size(); ++h) out.push_back(heads[h]->spec("heads." + std::to_string(h) + ".", false));
    return out;
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

// x (B,T,d_in), seed 004's causal modules' one input
InputSpec causal_input() { return {"x", InputKind::Float, false, InputRole::x, {"batch", "seq", "d_in"}, "d_in", "(B,T,d_in)"}; }

ModuleInfo info_CausalAttention() {
  AttentionSpec s = causal_spec("");
  s.heads_dim = false, s.weights_output = "attention_weights", s.output = "output";
  return {"CausalAttention", "004", "CausalAttention",
          "Self-attention where token t sees only tokens <= t (triu mask with -inf), then dropout.",
          causal_args(false),
          {causal_input()},
          {"output", "attention_weights"},
          make_causal,
          {s}};
}

ModuleInfo info_MultiHeadAttentionWrapper() {
  AttentionSpec s = causal_spec("");
  s.prefix = "heads.*.", s.heads_dim = false;
  return {"MultiHeadAttentionWrapper", "004", "MultiHeadAttentionWrapper",
          "num_heads independent CausalAttention heads, outputs concatenated: (B,T,num_heads*d_out).",
          causal_args(true),
          {causal_input()},
          {"output", "attention_weights"},
          make_wrapper,
          {s}};
}

}  // namespace attn
