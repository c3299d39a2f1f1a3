// scaled_dot_product_attention(Q, K, V, mask), seed 003 (PyTorch version):
//   scores = torch.matmul(Q, K.transpose(-2, -1)) / torch.sqrt(torch.tensor(d_k))
//   scores = scores.masked_fill(mask, float("-1e9"))      # mask True = masked
//   attn = F.softmax(scores, dim=-1); output = torch.matmul(attn, V)
// Q: (...,T,d_k), K: (...,S,d_k), V: (...,S,d_v) -> output (...,T,d_v), attn (...,T,S)
#include "modules.hpp"

namespace attn {
namespace {

class ScaledDotProductAttention : public Module {
 public:
  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    const Tensor &Q = in[0], &K = in[1], &V = in[2], &mask = in[3];
    if (!Q.defined() || !K.defined() || !V.defined()) fail("inputs 'Q', 'K' and 'V' are all required");
    if (Q.dim() < 2 || Q.dim() != K.dim() || Q.dim() != V.dim())
      fail("Q ", shape_str(Q.shape()), ", K ", shape_str(K.shape()), " and V ", shape_str(V.shape()),
           " must have the same number (>= 2) of dimensions: (..., T, d_k), (..., S, d_k), (..., S, d_v)");
    if (K.size(-1) != Q.size(-1))
      fail("K's last dimension (", K.size(-1), ") must equal Q's d_k (", Q.size(-1), ")");
    if (V.size(-2) != K.size(-2))
      fail("V's sequence length (", V.size(-2), ") must equal K's (", K.size(-2), "): keys and values come in pairs");
    const float d_k = static_cast<float>(Q.size(-1));
    Tensor scores = div_scalar(matmul(Q, K.transpose(-2, -1)), std::sqrt(d_k));
    ctx.step_dims("scores", scores, dims(scores),
                  "scores = torch.matmul(Q, K.transpose(-2, -1)) / torch.sqrt(torch.tensor(d_k, dtype=Q.dtype))",
                  "div_scalar(matmul(Q, K.transpose(-2, -1)), sqrt(d_k))");
    if (mask.defined()) {
      scores = masked_fill(scores, mask, -1e9f);
      ctx.step_dims("scores_masked", scores, dims(scores), "scores = scores.masked_fill(mask, float(\"-1e9\"))",
                    "masked_fill(scores, mask, -1e9f)");
    }
    Tensor attn = softmax(scores);
    ctx.step_dims("attn", attn, dims(attn), "attn = F.softmax(scores, dim=-1)", "softmax(scores)");
    Tensor output = matmul(attn, V);
    ctx.step_dims("output", output, dims(output, "d_v"), "output = torch.matmul(attn, V)", "matmul(attn, V)");
    return {{"output", output}, {"attention_weights", attn}};
  }
  void parameters(const std::string&, ParamList&) override {}

 private:
  static std::vector<std::string> dims(const Tensor& t, const char* last = "seq_k") {
    std::vector<std::string> d;
    const char* lead[] = {"batch", "heads"};
    for (int64_t i = 0; i + 2 < t.dim(); ++i) d.push_back(i < 2 ? lead[i] : "dim" + std::to_string(i));
    d.push_back("seq_q");
    d.push_back(last);
    return d;
  }
};

std::unique_ptr<Module> make(const Config&, Generator&) { return std::make_unique<ScaledDotProductAttention>(); }

}  // namespace

ModuleInfo info_scaled_dot_product_attention() {
  return {"scaled_dot_product_attention", "003", "scaled_dot_product_attention",
          "softmax(Q K^T / sqrt(d_k)) V with T != S and d_v != d_k allowed; mask True = masked (-1e9).",
          {},
          {{"Q", InputKind::Float, false, "(...,T,d_k)"},
           {"K", InputKind::Float, false, "(...,S,d_k)"},
           {"V", InputKind::Float, false, "(...,S,d_v)"},
           {"mask", InputKind::Mask, true, "broadcastable to (...,T,S), True = masked"}},
          {"output", "attention_weights"},
          make};
}

}  // namespace attn
