// Building blocks the seed modules share: nn.Linear, nn.LayerNorm, and the input checks every
// forward starts with. Each is built in PyTorch's order of draws (weight, then bias) and applied
// through the tape (graph.hpp), so its parameters appear in the steps by their state_dict names.
#pragma once
#include <string>

#include "base/error.hpp"
#include "tape/graph.hpp"
#include "nn/module.hpp"

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
  Var operator()(Context& ctx, const Var& x) const { return linear(ctx, x, ctx.param(weight), ctx.param(bias)); }
  void parameters(const std::string& prefix, ParamList& out) {
    out.emplace_back(prefix + "weight", &weight);
    if (bias.defined()) out.emplace_back(prefix + "bias", &bias);
  }
};

// nn.LayerNorm(n): weight ones, bias zeros, eps 1e-5 (GPT-2's layer_norm_epsilon where a config
// gives one); draws nothing. bias = false: nanoGPT's LayerNorm(ndim, bias=False), no bias at all.
struct LayerNorm {
  Tensor weight, bias;
  float eps = 1e-5f;
  LayerNorm() = default;
  explicit LayerNorm(int64_t n, bool has_bias = true, float eps_ = 1e-5f)
      : weight(Tensor::full({n}, 1.f)), bias(has_bias ? Tensor::zeros({n}) : Tensor()), eps(eps_) {}
  Var operator()(Context& ctx, const Var& x) const { return layer_norm(ctx, x, ctx.param(weight), ctx.param(bias), eps); }
  void parameters(const std::string& prefix, ParamList& out) {
    out.emplace_back(prefix + "weight", &weight);
    if (bias.defined()) out.emplace_back(prefix + "bias", &bias);
  }
};

// Hugging Face's LlamaRMSNorm(hidden_size, eps): weight ones, no bias; draws nothing.
struct RMSNorm {
  Tensor weight;
  float eps = 1e-6f;
  RMSNorm() = default;
  RMSNorm(int64_t n, float eps_) : weight(Tensor::full({n}, 1.f)), eps(eps_) {}
  Var operator()(Context& ctx, const Var& x) const { return rms_norm(ctx, x, ctx.param(weight), eps); }
  void parameters(const std::string& prefix, ParamList& out) { out.emplace_back(prefix + "weight", &weight); }
};

// Throws (field "inputs.<name>") unless x has `rank` dimensions and, where last >= 0, a last
// dimension of `last`.
inline void expect_input(const Var& x, const char* name, int64_t rank, const char* layout, int64_t last = -1,
                         const char* last_name = "") {
  const std::string field = std::string("inputs.") + name;
  if (!x.defined()) fail_at(field, "input '", name, "' is missing: this module needs it with shape ", layout);
  if (x.dim() != rank)
    fail_at(field, "input '", name, "' has shape ", shape_str(x.shape()), " but must be ", rank, "-d ", layout);
  if (last >= 0 && x.size(-1) != last)
    fail_at(field, "input '", name, "' has last dimension ", x.size(-1), " but must equal ", last_name, " (", last, ")");
}

}  // namespace attn
