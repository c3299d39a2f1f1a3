// AttentionSpec: the two steps every seed's forward takes from it (scale, mask) and its JSON form.
#include "nn/attention_spec.hpp"

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "math/ops.hpp"

namespace attn {

const char* projection_name(Projection p) {
  switch (p) {
    case Projection::linear: return "linear";
    case Projection::matrix: return "matrix";
    case Projection::fused: return "fused";
    case Projection::none: return "none";
    case Projection::split: return "split";
  }
  return "?";
}

Var scale_scores(Context& ctx, const Var& scores, const AttentionSpec& spec) {
  return spec.divide ? div_scalar(ctx, scores, spec.scale) : mul_scalar(ctx, scores, spec.scale);
}

Var mask_scores(Context& ctx, const Var& scores, const AttentionSpec& spec, const Tensor& mask_in) {
  Attrs how;
  if (spec.causal) {
    how.causal = true;
    return masked_fill(ctx, scores, causal_mask(scores.size(-2), scores.size(-1)), spec.fill, how);
  }
  if (!mask_in.defined()) return scores;
  const std::string field = "inputs." + spec.mask_input;
  Tensor mask = spec.masked_where_zero ? equal_zero(mask_in) : mask_in;
  if (spec.mask_unsqueezed) {
    if (mask_in.dim() != 3)
      fail_at(field, spec.mask_input, " has shape ", shape_str(mask_in.shape()),
              " but must be 3-d (B, T, S): it is unsqueezed to (B, 1, T, S)");
    mask = mask.unsqueeze(1);
  }
  // Broadcast right-aligned, as PyTorch does: each dim equals the scores' or is 1.
  const Shape& ms = mask.shape();
  const Shape& ss = scores.shape();
  bool fits = ms.size() <= ss.size();
  for (size_t i = 0; fits && i < ms.size(); ++i) {
    const int64_t m = ms[ms.size() - 1 - i], s = ss[ss.size() - 1 - i];
    fits = m == s || m == 1;
  }
  if (!fits)
    fail_at(field, spec.mask_input, " of shape ", shape_str(mask.shape()), " cannot broadcast to ", shape_str(ss),
            ": each dimension must equal the scores' or be 1");
  how.mask_input = spec.mask_input;
  how.masked_where_zero = spec.masked_where_zero;
  how.mask_unsqueezed = spec.mask_unsqueezed;
  return masked_fill(ctx, scores, mask, spec.fill, how);
}

Var head_scores(Context& ctx, const Var& q, const Var& k) {
  if (kPretrained && k.size(1) != q.size(1)) return matmul_repeated(q.t, k.t, true);
  return matmul_bt(ctx, q, k);
}

Var head_values(Context& ctx, const Var& att, const Var& v) {
  if (kPretrained && v.size(1) != att.size(1)) return matmul_repeated(att.t, v.t, false);
  return weighted_sum(ctx, att, v);
}

Var causal_heads(Context& ctx, const Var& q, const Var& k, const Var& v, const AttentionSpec& spec) {
  ScoreRule rule;
  rule.scale = spec.scale, rule.divide = spec.divide, rule.causal = true, rule.fill = spec.fill;
  // heads as column blocks, (B,T,H*D): merge_heads, which records nothing here (fuses_causal)
  return attention_heads(merge_heads(ctx, q).t, merge_heads(ctx, k).t, merge_heads(ctx, v).t, q.size(1), rule);
}

std::string attention_spec_json(const AttentionSpec& s) {
  using json = nlohmann::json;
  const auto name = [](const std::string& n) { return n.empty() ? json(nullptr) : json(n); };
  const auto number = [](float v) { return std::isinf(v) ? json(v < 0 ? "-Infinity" : "Infinity") : json(static_cast<double>(v)); };
  json scale = {{"op", s.divide ? "div" : "mul"}, {"formula", s.scale_formula}};
  json j = {{"prefix", s.prefix},
            {"projection", projection_name(s.projection)},
            {"inputs", {{"query", name(s.query_input)}, {"key", name(s.key_input)}, {"value", name(s.value_input)}}},
            {"params", {{"query", name(s.query)}, {"key", name(s.key)}, {"value", name(s.value)}, {"out", name(s.out)}}},
            {"causal", s.causal},
            {"fill", number(s.fill)},
            {"dropout", static_cast<double>(s.dropout)},
            {"heads_dim", s.heads_dim},
            {"weights_step", name(s.weights_step)},
            {"weights_output", name(s.weights_output)},
            {"output", name(s.output)}};
  j["mask"] = s.mask_input.empty()
                  ? json(nullptr)
                  : json({{"input", s.mask_input},
                          {"masked_where", s.masked_where_zero ? "zero" : "nonzero"},
                          {"broadcast", s.mask_unsqueezed ? "unsqueeze_heads" : "right"}});
  j["rope"] = s.rope ? json({{"base", s.rope_base}}) : json(nullptr);
  if (kPretrained && s.rope && s.rope_scaling[0] != 0) j["rope"]["scaling"] = s.rope_scaling;
  j["alibi"] = s.alibi;
  j["window"] = s.window;
  j["sink_tokens"] = s.sink_tokens;
  if (s.heads > 0 && s.scale != 0.f) {
    j["kv_heads"] = s.kv_heads > 0 ? s.kv_heads : s.heads;
    j["heads"] = s.heads;
    j["d_k"] = s.d_k;
    j["d_v"] = s.d_v;
    scale["value"] = static_cast<double>(s.scale);
  }
  j["scale"] = scale;
  return j.dump();
}

}  // namespace attn
