// MultiHeadSelfAttention(dim_in, dim_k, dim_v, num_heads=8), seed 001: no bias, no output
// projection, keys/queries of width dim_k and values of width dim_v.
//   q = self.linear_q(x).reshape(batch, n, nh, dk).transpose(1, 2)    # (batch, nh, n, dk)
//   dist = torch.matmul(q, k.transpose(2, 3)) * self._norm_fact        # 1 / sqrt(dim_k // nh)
//   dist = torch.softmax(dist, dim=-1); att = torch.matmul(dist, v)
//   att = att.transpose(1, 2).reshape(batch, n, self.dim_v)
// x: (B,n,dim_in) -> (B,n,dim_v); weights (B,nh,n,n)
#include "modules/modules.hpp"

namespace attn {
namespace {

// Seed 001: linear_q/k/v without bias, no output projection, scores * _norm_fact (1 / sqrt(dim_k // nh),
// a Python float rounded to float32).
AttentionSpec spec001() {
  AttentionSpec s;
  s.query_input = s.key_input = s.value_input = "x";
  s.query = "linear_q", s.key = "linear_k", s.value = "linear_v";
  s.divide = false;
  s.scale_formula = "self._norm_fact = 1 / sqrt(dim_k // num_heads)";
  s.weights_step = "dist_softmax", s.weights_output = "attention_weights", s.output = "output";
  return s;
}

class MultiHeadSelfAttention : public Module {
 public:
  MultiHeadSelfAttention(int64_t dim_in, int64_t dim_k, int64_t dim_v, int64_t num_heads, Generator& gen)
      : dim_in_(dim_in), dim_v_(dim_v), s_(spec001()) {
    if (dim_k % num_heads != 0 || dim_v % num_heads != 0)
      fail_at("config.num_heads", "num_heads (", num_heads, ") must divide dim_k (", dim_k, ") and dim_v (", dim_v,
              "): dim_k and dim_v must be multiple of num_heads");
    s_.heads = num_heads, s_.d_k = dim_k / num_heads, s_.d_v = dim_v / num_heads;
    s_.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim_k / num_heads)));
    linear_q = Linear(dim_in, dim_k, false, gen);
    linear_k = Linear(dim_in, dim_k, false, gen);
    linear_v = Linear(dim_in, dim_v, false, gen);
  }

  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    const Var& x = in[0];
    expect_input(x, "x", 3, "(batch, n, dim_in)", dim_in_, "dim_in");
    const int64_t B = x.size(0), n = x.size(1), nh = s_.heads;
    Var q = split_heads(ctx, linear_q(ctx, x), nh), k = split_heads(ctx, linear_k(ctx, x), nh),
        v = split_heads(ctx, linear_v(ctx, x), nh);
    ctx.step("q", q, {"batch", "heads", "seq", "d_k"}, "q = self.linear_q(x).reshape(batch, n, nh, dk).transpose(1, 2)");
    ctx.step("k", k, {"batch", "heads", "seq", "d_k"}, "k = self.linear_k(x).reshape(batch, n, nh, dk).transpose(1, 2)");
    ctx.step("v", v, {"batch", "heads", "seq", "d_v"}, "v = self.linear_v(x).reshape(batch, n, nh, dv).transpose(1, 2)");
    Var dist = scale_scores(ctx, matmul_bt(ctx, q, k), s_);
    ctx.step("dist", dist, {"batch", "heads", "seq_q", "seq_k"}, "dist = torch.matmul(q, k.transpose(2, 3)) * self._norm_fact");
    Var probs = softmax(ctx, dist);
    ctx.step("dist_softmax", probs, {"batch", "heads", "seq_q", "seq_k"}, "dist = torch.softmax(dist, dim=-1)");
    Var att_heads = weighted_sum(ctx, probs, v);
    ctx.step("att_heads", att_heads, {"batch", "heads", "seq", "d_v"}, "att = torch.matmul(dist, v)");
    Var att = view(ctx, transpose(ctx, att_heads, 1, 2), {B, n, dim_v_});
    ctx.step("att", att, {"batch", "seq", "dim_v"}, "att = att.transpose(1, 2).reshape(batch, n, self.dim_v)");
    return {{"output", att}, {"attention_weights", probs}};
  }
  void parameters(const std::string& p, ParamList& out) override {
    linear_q.parameters(p + "linear_q.", out);
    linear_k.parameters(p + "linear_k.", out);
    linear_v.parameters(p + "linear_v.", out);
  }
  std::vector<AttentionSpec> attention() const override { return {s_}; }

 private:
  int64_t dim_in_, dim_v_;
  AttentionSpec s_;
  Linear linear_q, linear_k, linear_v;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<MultiHeadSelfAttention>(c.i("dim_in"), c.i("dim_k"), c.i("dim_v"), c.i("num_heads"), g);
}

}  // namespace

ModuleInfo info_MultiHeadSelfAttention() {
  return {"MultiHeadSelfAttention", "001", "MultiHeadSelfAttention",
          "Multi-head self-attention with separate key and value widths, no bias, no output projection.",
          {{"dim_in", ArgType::Int, true, 0, 1, 8192, "input dimension"},
           {"dim_k", ArgType::Int, true, 0, 1, 8192, "key and query dimension"},
           {"dim_v", ArgType::Int, true, 0, 1, 8192, "value dimension"},
           {"num_heads", ArgType::Int, false, 8, 1, 256, "number of heads"}},
          {{"x", InputKind::Float, false, InputRole::x, {"batch", "seq", "dim_in"}, "dim_in", "(B,n,dim_in)"}},
          {"output", "attention_weights"},
          make,
          {spec001()}};
}

}  // namespace attn
