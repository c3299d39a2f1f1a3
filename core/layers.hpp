// Building blocks the seed modules share: nn.Linear, nn.LayerNorm, and the input checks every
// forward starts with. Each is built in PyTorch's order of draws (weight, then bias).
#pragma once
#include <string>

#include "error.hpp"
#include "module.hpp"
#include "ops.hpp"

namespace attn {

// nn.Linear(in_features, out_features, bias): weight (out, in), bias (out)
struct Linear {
  Tensor weight, bias;
  Linear() = default;
  Linear(int64_t in, int64_t out, bool has_bias, Generator& gen) {
    weight = Tensor::empty({out, in});
    if (has_bias) bias = Tensor::empty({out});
    gen.linear_init(weight.data(), static_cast<size_t>(weight.numel()), has_bias ? bias.data() : nullptr,
                    has_bias ? static_cast<size_t>(out) : 0, in);
  }
  Tensor operator()(const Tensor& x) const { return linear(x, weight, bias); }
  void parameters(const std::string& prefix, ParamList& out) {
    out.emplace_back(prefix + "weight", &weight);
    if (bias.defined()) out.emplace_back(prefix + "bias", &bias);
  }
};

// nn.LayerNorm(n): weight ones, bias zeros, eps 1e-5; draws nothing
struct LayerNorm {
  Tensor weight, bias;
  LayerNorm() = default;
  explicit LayerNorm(int64_t n) : weight(Tensor::full({n}, 1.f)), bias(Tensor::zeros({n})) {}
  Tensor operator()(const Tensor& x) const { return layer_norm(x, weight, bias); }
  void parameters(const std::string& prefix, ParamList& out) {
    out.emplace_back(prefix + "weight", &weight);
    out.emplace_back(prefix + "bias", &bias);
  }
};

// Throws unless x has `rank` dimensions and, where last >= 0, a last dimension of `last`.
inline void expect_input(const Tensor& x, const char* name, int64_t rank, const char* layout, int64_t last = -1,
                         const char* last_name = "") {
  if (!x.defined()) fail("input '", name, "' is missing: this module needs it with shape ", layout);
  if (x.dim() != rank)
    fail("input '", name, "' has shape ", shape_str(x.shape()), " but must be ", rank, "-d ", layout);
  if (last >= 0 && x.size(-1) != last)
    fail("input '", name, "' has last dimension ", x.size(-1), " but must equal ", last_name, " (", last, ")");
}

// (B, T, H*D) -> (B, H, T, D): x.view(B, T, H, D).transpose(1, 2), a view (no copy)
inline Tensor split_heads(const Tensor& x, int64_t H) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / H;
  return x.contiguous().view({B, T, H, D}).transpose(1, 2);
}
// (B, H, T, D) -> (B, T, H*D): x.transpose(1, 2).contiguous().view(B, T, H*D)
inline Tensor merge_heads(const Tensor& x) {
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  return x.transpose(1, 2).contiguous().view({B, T, H * D});
}

}  // namespace attn
