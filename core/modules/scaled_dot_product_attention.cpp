// scaled_dot_product_attention(Q, K, V, mask), seed 003 (PyTorch version):
//   scores = torch.matmul(Q, K.transpose(-2, -1)) / torch.sqrt(torch.tensor(d_k))
//   scores = scores.masked_fill(mask, float("-1e9"))      # mask True = masked
//   attn = F.softmax(scores, dim=-1); output = torch.matmul(attn, V)
// Q: (...,T,d_k), K: (...,S,d_k), V: (...,S,d_v) -> output (...,T,d_v), attn (...,T,S)
#include "modules/modules.hpp"

namespace attn {
namespace {

// Seed 003's function: no parameters, / torch.sqrt(torch.tensor(d_k)) (a float32 sqrt), mask
// True = masked -> -1e9, broadcast right-aligned.
AttentionSpec spec_sdpa() {
  AttentionSpec s;
  s.projection = Projection::none;
  s.query_input = "Q", s.key_input = "K", s.value_input = "V";
  s.scale_formula = "torch.sqrt(torch.tensor(d_k))";
  s.mask_input = "mask";
  s.fill = -1e9f;
  s.heads_dim = false;
  s.weights_step = "attn", s.weights_output = "attention_weights", s.output = "output";
  return s;
}

class ScaledDotProductAttention : public Module {
 public:
  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    const Var &Q = in[0], &K = in[1], &V = in[2];
    const Tensor& mask = in[3].t;
    if (!Q.defined() || !K.defined() || !V.defined()) fail_at("inputs.Q", "inputs 'Q', 'K' and 'V' are all required");
    if (Q.dim() < 2 || Q.dim() != K.dim() || Q.dim() != V.dim())
      fail_at("inputs.K", "Q ", shape_str(Q.shape()), ", K ", shape_str(K.shape()), " and V ", shape_str(V.shape()),
              " must have the same number (>= 2) of dimensions: (..., T, d_k), (..., S, d_k), (..., S, d_v)");
    if (K.size(-1) != Q.size(-1)) fail_at("inputs.K", "K's last dimension (", K.size(-1), ") must equal Q's d_k (", Q.size(-1), ")");
    if (V.size(-2) != K.size(-2))
      fail_at("inputs.V", "V's sequence length (", V.size(-2), ") must equal K's (", K.size(-2), "): keys and values come in pairs");
    s_.d_k = Q.size(-1), s_.d_v = V.size(-1);
    s_.scale = std::sqrt(static_cast<float>(s_.d_k));
    Var scores = scale_scores(ctx, matmul_bt(ctx, Q, K), s_);
    ctx.step("scores", scores, dims(scores),
             "scores = torch.matmul(Q, K.transpose(-2, -1)) / torch.sqrt(torch.tensor(d_k, dtype=Q.dtype))");
    if (mask.defined()) {
      scores = mask_scores(ctx, scores, s_, mask);
      ctx.step("scores_masked", scores, dims(scores), "scores = scores.masked_fill(mask, float(\"-1e9\"))");
    }
    Var attn = softmax(ctx, scores);
    ctx.step("attn", attn, dims(attn), "attn = F.softmax(scores, dim=-1)");
    Var output = weighted_sum(ctx, attn, V);
    ctx.step("output", output, dims(output, "d_v"), "output = torch.matmul(attn, V)");
    return {{"output", output}, {"attention_weights", attn}};
  }
  void parameters(const std::string&, ParamList&) override {}
  // d_k, d_v and the scale follow the inputs: known after a forward
  std::vector<AttentionSpec> attention() const override { return {s_}; }

 private:
  static std::vector<std::string> dims(const Var& t, const char* last = "seq_k") {
    std::vector<std::string> d;
    const char* lead[] = {"batch", "heads"};
    for (int64_t i = 0; i + 2 < t.dim(); ++i) d.push_back(i < 2 ? lead[i] : "dim" + std::to_string(i));
    d.push_back("seq_q");
    d.push_back(last);
    return d;
  }
  AttentionSpec s_ = spec_sdpa();
};

std::unique_ptr<Module> make(const Config&, Generator&) { return std::make_unique<ScaledDotProductAttention>(); }

}  // namespace

ModuleInfo info_scaled_dot_product_attention() {
  return {"scaled_dot_product_attention", "003", "scaled_dot_product_attention",
          "softmax(Q K^T / sqrt(d_k)) V with T != S and d_v != d_k allowed; mask True = masked (-1e9).",
          {},
          {{"Q", InputKind::Float, false, InputRole::query, {"...", "seq_q", "d_k"}, "", "(...,T,d_k)"},
           {"K", InputKind::Float, false, InputRole::key, {"...", "seq_k", "d_k"}, "", "(...,S,d_k)"},
           {"V", InputKind::Float, false, InputRole::value, {"...", "seq_k", "d_v"}, "", "(...,S,d_v)"},
           {"mask", InputKind::Mask, true, InputRole::mask, {"...", "seq_q", "seq_k"}, "", "broadcastable to (...,T,S), True = masked"}},
          {"output", "attention_weights"},
          make,
          {spec_sdpa()}};
}

}  // namespace attn
