// SelfAttention_v1 and SelfAttention_v2, seed 004 ("Your journey starts with one step"):
//   v1: W_query = nn.Parameter(torch.rand(d_in, d_out))  (x3: W_query, W_key, W_value)
//       keys = x @ self.W_key;  queries = x @ self.W_query;  values = x @ self.W_value
//   v2: W_query = nn.Linear(d_in, d_out, bias=qkv_bias)  (x3); keys = self.W_key(x) ...
//   attn_scores = queries @ keys.T
//   attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
//   context_vec = attn_weights @ values
// x: (T, d_in) -> context_vec (T, d_out), attn_weights (T, T)
#include "modules/modules.hpp"

namespace attn {
namespace {

// Seed 004's first two classes: no mask, no dropout, scores / keys.shape[-1]**0.5.
AttentionSpec journey_spec(Projection projection) {
  AttentionSpec s;
  s.projection = projection;
  s.query_input = s.key_input = s.value_input = "x";
  s.query = "W_query", s.key = "W_key", s.value = "W_value";
  s.scale_formula = "keys.shape[-1]**0.5";
  s.heads_dim = false;
  s.weights_step = "attn_weights", s.weights_output = "attention_weights", s.output = "output";
  return s;
}

class SelfAttentionBase : public Module {
 protected:
  virtual Var project(Context& ctx, int which, const Var& x) const = 0;  // 0 query, 1 key, 2 value
  virtual const char* code(int which) const = 0;
  int64_t d_in_ = 0;
  AttentionSpec s_;

  SelfAttentionBase(Projection projection, int64_t d_in, int64_t d_out) : d_in_(d_in), s_(journey_spec(projection)) {
    s_.d_k = s_.d_v = d_out;
    s_.scale = static_cast<float>(std::sqrt(static_cast<double>(d_out)));
  }

 public:
  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    const Var& x = in[0];
    expect_input(x, "x", 2, "(T, d_in): the book's six token embeddings are (6, 3)", d_in_, "d_in");
    Var keys = project(ctx, 1, x);
    ctx.step("keys", keys, {"seq", "d_out"}, code(1));
    Var queries = project(ctx, 0, x);
    ctx.step("queries", queries, {"seq", "d_out"}, code(0));
    Var values = project(ctx, 2, x);
    ctx.step("values", values, {"seq", "d_out"}, code(2));
    Var attn_scores = matmul_bt(ctx, queries, keys);
    ctx.step("attn_scores", attn_scores, {"seq_q", "seq_k"}, "attn_scores = queries @ keys.T");
    Var attn_weights = softmax(ctx, scale_scores(ctx, attn_scores, s_));
    ctx.step("attn_weights", attn_weights, {"seq_q", "seq_k"},
             "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)");
    Var context_vec = weighted_sum(ctx, attn_weights, values);
    ctx.step("context_vec", context_vec, {"seq", "d_out"}, "context_vec = attn_weights @ values");
    return {{"output", context_vec}, {"attention_weights", attn_weights}};
  }
  std::vector<AttentionSpec> attention() const override { return {s_}; }
};

// v1's parameters are plain (d_in, d_out) matrices used as x @ W.
class SelfAttention_v1 : public SelfAttentionBase {
  Tensor W_query, W_key, W_value;

 public:
  SelfAttention_v1(int64_t d_in, int64_t d_out, Generator& gen) : SelfAttentionBase(Projection::matrix, d_in, d_out) {
    for (Tensor* w : {&W_query, &W_key, &W_value}) {
      *w = Tensor::empty({d_in, d_out});
      gen.rand(w->data(), static_cast<size_t>(w->numel()));
    }
  }
  Var project(Context& ctx, int which, const Var& x) const override {
    return matmul(ctx, x, ctx.param(which == 0 ? W_query : which == 1 ? W_key : W_value));
  }
  const char* code(int which) const override {
    return which == 0 ? "queries = x @ self.W_query" : which == 1 ? "keys = x @ self.W_key" : "values = x @ self.W_value";
  }
  void parameters(const std::string& p, ParamList& out) override {
    out.emplace_back(p + "W_query", &W_query);
    out.emplace_back(p + "W_key", &W_key);
    out.emplace_back(p + "W_value", &W_value);
  }
};

class SelfAttention_v2 : public SelfAttentionBase {
  Linear W_query, W_key, W_value;

 public:
  SelfAttention_v2(int64_t d_in, int64_t d_out, bool qkv_bias, Generator& gen)
      : SelfAttentionBase(Projection::linear, d_in, d_out),
        W_query(d_in, d_out, qkv_bias, gen),
        W_key(d_in, d_out, qkv_bias, gen),
        W_value(d_in, d_out, qkv_bias, gen) {}
  Var project(Context& ctx, int which, const Var& x) const override {
    return (which == 0 ? W_query : which == 1 ? W_key : W_value)(ctx, x);
  }
  const char* code(int which) const override {
    return which == 0 ? "queries = self.W_query(x)" : which == 1 ? "keys = self.W_key(x)" : "values = self.W_value(x)";
  }
  void parameters(const std::string& p, ParamList& out) override {
    W_query.parameters(p + "W_query.", out);
    W_key.parameters(p + "W_key.", out);
    W_value.parameters(p + "W_value.", out);
  }
};

std::unique_ptr<Module> make_v1(const Config& c, Generator& g) {
  return std::make_unique<SelfAttention_v1>(c.i("d_in"), c.i("d_out"), g);
}
std::unique_ptr<Module> make_v2(const Config& c, Generator& g) {
  return std::make_unique<SelfAttention_v2>(c.i("d_in"), c.i("d_out"), c.b("qkv_bias"), g);
}

InputSpec journey_input() { return {"x", InputKind::Float, false, InputRole::x, {"seq", "d_in"}, "d_in", "(T,d_in)"}; }

}  // namespace

ModuleInfo info_SelfAttention_v1() {
  return {"SelfAttention_v1", "004", "SelfAttention_v1",
          "Trainable weights as torch.rand(d_in, d_out) matrices: x @ W_query, x @ W_key, x @ W_value.",
          {{"d_in", ArgType::Int, true, 0, 1, 4096, "input embedding size"},
           {"d_out", ArgType::Int, true, 0, 1, 4096, "query/key/value size"}},
          {journey_input()},
          {"output", "attention_weights"},
          make_v1,
          {journey_spec(Projection::matrix)}};
}

ModuleInfo info_SelfAttention_v2() {
  return {"SelfAttention_v2", "004", "SelfAttention_v2",
          "The same attention with nn.Linear projections (optionally with bias).",
          {{"d_in", ArgType::Int, true, 0, 1, 4096, "input embedding size"},
           {"d_out", ArgType::Int, true, 0, 1, 4096, "query/key/value size"},
           {"qkv_bias", ArgType::Bool, false, 0, 0, 1, "bias in the query/key/value projections"}},
          {journey_input()},
          {"output", "attention_weights"},
          make_v2,
          {journey_spec(Projection::linear)}};
}

}  // namespace attn
