// SelfAttention_v1 and SelfAttention_v2, seed 004 ("Your journey starts with one step"):
//   v1: W_query = nn.Parameter(torch.rand(d_in, d_out))  (x3: W_query, W_key, W_value)
//       keys = x @ self.W_key;  queries = x @ self.W_query;  values = x @ self.W_value
//   v2: W_query = nn.Linear(d_in, d_out, bias=qkv_bias)  (x3); keys = self.W_key(x) ...
//   attn_scores = queries @ keys.T
//   attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
//   context_vec = attn_weights @ values
// x: (T, d_in) -> context_vec (T, d_out), attn_weights (T, T)
#include "modules.hpp"

namespace attn {
namespace {

class SelfAttentionBase : public Module {
 protected:
  virtual Tensor project(int which, const Tensor& x) const = 0;  // 0 query, 1 key, 2 value
  virtual const char* code(int which) const = 0;
  int64_t d_in_ = 0;

 public:
  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    const Tensor& x = in[0];
    expect_input(x, "x", 2, "(T, d_in): the book's six token embeddings are (6, 3)", d_in_, "d_in");
    Tensor keys = project(1, x);
    ctx.step("keys", keys, {"seq", "d_out"}, code(1), "keys = x @ W_key");
    Tensor queries = project(0, x);
    ctx.step("queries", queries, {"seq", "d_out"}, code(0), "queries = x @ W_query");
    Tensor values = project(2, x);
    ctx.step("values", values, {"seq", "d_out"}, code(2), "values = x @ W_value");
    Tensor attn_scores = matmul(queries, keys.transpose(0, 1));
    ctx.step("attn_scores", attn_scores, {"seq_q", "seq_k"}, "attn_scores = queries @ keys.T",
             "matmul(queries, keys.transpose(0, 1))");
    const float scale = static_cast<float>(std::sqrt(static_cast<double>(keys.size(-1))));
    Tensor attn_weights = softmax(div_scalar(attn_scores, scale));
    ctx.step("attn_weights", attn_weights, {"seq_q", "seq_k"},
             "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
             "softmax(div_scalar(attn_scores, sqrt(d_k)))");
    Tensor context_vec = matmul(attn_weights, values);
    ctx.step("context_vec", context_vec, {"seq", "d_out"}, "context_vec = attn_weights @ values",
             "matmul(attn_weights, values)");
    return {{"output", context_vec}, {"attention_weights", attn_weights}};
  }
};

// v1's parameters are plain (d_in, d_out) matrices used as x @ W.
class SelfAttention_v1 : public SelfAttentionBase {
  Tensor W_query, W_key, W_value;

 public:
  SelfAttention_v1(int64_t d_in, int64_t d_out, Generator& gen) {
    d_in_ = d_in;
    for (Tensor* w : {&W_query, &W_key, &W_value}) {
      *w = Tensor::empty({d_in, d_out});
      gen.rand(w->data(), static_cast<size_t>(w->numel()));
    }
  }
  Tensor project(int which, const Tensor& x) const override {
    return matmul(x, which == 0 ? W_query : which == 1 ? W_key : W_value);
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
      : W_query(d_in, d_out, qkv_bias, gen), W_key(d_in, d_out, qkv_bias, gen), W_value(d_in, d_out, qkv_bias, gen) {
    d_in_ = d_in;
  }
  Tensor project(int which, const Tensor& x) const override {
    return (which == 0 ? W_query : which == 1 ? W_key : W_value)(x);
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

}  // namespace

ModuleInfo info_SelfAttention_v1() {
  return {"SelfAttention_v1", "004", "SelfAttention_v1",
          "Trainable weights as torch.rand(d_in, d_out) matrices: x @ W_query, x @ W_key, x @ W_value.",
          {{"d_in", ArgType::Int, true, 0, 1, 4096, "input embedding size"},
           {"d_out", ArgType::Int, true, 0, 1, 4096, "query/key/value size"}},
          {{"x", InputKind::Float, false, "(T,d_in)"}},
          {"output", "attention_weights"},
          make_v1};
}

ModuleInfo info_SelfAttention_v2() {
  return {"SelfAttention_v2", "004", "SelfAttention_v2",
          "The same attention with nn.Linear projections (optionally with bias).",
          {{"d_in", ArgType::Int, true, 0, 1, 4096, "input embedding size"},
           {"d_out", ArgType::Int, true, 0, 1, 4096, "query/key/value size"},
           {"qkv_bias", ArgType::Bool, false, 0, 0, 1, "bias in the query/key/value projections"}},
          {{"x", InputKind::Float, false, "(T,d_in)"}},
          {"output", "attention_weights"},
          make_v2};
}

}  // namespace attn
