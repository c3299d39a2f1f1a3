// Where positions enter modern attention (ModernAttention, GPT's Llama-style options): RoPE's
// tables and rotation, ALiBi's slopes and bias, grouped-query heads repeated, and the mask rule of
// a causal window with attention sinks. The page and the WebGPU path read these numbers from the
// steps' attributes and values (or bindings' attentionRules), never from a formula of their own.
#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "kernels/kernels.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

size_t u(int64_t v) { return static_cast<size_t>(v); }

// Hugging Face's rope_scaling of inv_freq (modeling_rope_utils), in float32 op by op as PyTorch
// runs it (a Python number over a tensor is the tensor's reciprocal times the number):
//   linear: inv_freq / factor
//   llama3: wavelen = 2 pi / inv_freq; above original / low_freq_factor: inv_freq / factor; below
//           original / high_freq_factor: kept; between: (1 - s) * inv_freq / factor + s * inv_freq,
//           s = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
constexpr double kTwoPi = 6.283185307179586;  // Python's 2 * math.pi

void scale_frequencies(std::vector<float>& inv_freq, const RopeScaling& sc) {
  if (sc[0] == 0) return;
  const float factor = static_cast<float>(sc[0]);
  if (sc[3] == 0) {
    for (float& f : inv_freq) f = f / factor;
    return;
  }
  const double low = sc[1], high = sc[2], old = sc[3];
  const float low_wavelen = static_cast<float>(old / low), high_wavelen = static_cast<float>(old / high);
  for (float& f : inv_freq) {
    const float wavelen = (1.f / f) * static_cast<float>(kTwoPi);
    const float scaled = wavelen > low_wavelen ? f / factor : f;
    const float s = ((1.f / wavelen) * static_cast<float>(old) - static_cast<float>(low)) / static_cast<float>(high - low);
    const float smoothed = (1.f - s) * scaled / factor + s * scaled;
    const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
    f = medium ? smoothed : scaled;
  }
}

// cos or sin of cat(angles, angles), angles[t][i] = positions[t] * inv_freq[i], inv_freq[i] =
// 1 / base^(2i / D) (then rope_scaling's), in float32 as PyTorch computes them. attrs.shape: (T, D);
// positions: ids.
Tensor rope_table_forward(const Node& n, const std::vector<Tensor>&) {
  const int64_t T = n.attrs.shape[0], D = n.attrs.shape[1], half = D / 2;
  Tensor t = Tensor::empty({T, D});
  std::vector<float> inv_freq(u(half));
  const float fbase = static_cast<float>(n.attrs.base);
  for (int64_t i = 0; i < half; ++i)  // 1.0 / (base ** (arange(0, D, 2).float() / D))
    inv_freq[u(i)] = 1.f / std::pow(fbase, static_cast<float>(2 * i) / static_cast<float>(D));
  if constexpr (kPretrained) scale_frequencies(inv_freq, n.attrs.rope_scaling);  // Llama's: not in the page's small build
  float* p = t.data();
  for (int64_t r = 0; r < T; ++r)
    for (int64_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(n.ids[u(r)]) * inv_freq[u(i)];
      p[r * D + i] = p[r * D + half + i] = n.attrs.sine ? std::sin(angle) : std::cos(angle);
    }
  return t;
}
ATTN_SMALL Json rope_table_attrs(const Node& n, const std::vector<Node>&) {
  Json j = {{"table", n.attrs.sine ? "sin" : "cos"}, {"base", n.attrs.base}, {"d_head", n.out.size(1)}, {"positions", n.ids}};
  const RopeScaling& sc = n.attrs.rope_scaling;
  if (!kPretrained) return j;
  if (sc[0] != 0 && sc[3] == 0) j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", sc[0]}};
  if (sc[0] != 0 && sc[3] != 0)
    j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", sc[0]}, {"low_freq_factor", sc[1]}, {"high_freq_factor", sc[2]},
                         {"original_max_position_embeddings", sc[3]}};
  return j;
}
ATTN_SMALL std::string rope_table_call(const Node& n, const std::vector<std::string>&) {
  return std::string("rope_table(positions, ") + std::to_string(n.out.size(1)) + ", " + float_literal(static_cast<float>(n.attrs.base)) +
         (n.attrs.sine ? ", sin)" : ", cos)");
}

Tensor rope_forward(const Node&, const std::vector<Tensor>& in) { return rope_rotate(in[0], in[1], in[2]); }
// y = x * cos + rotate_half(x) * sin: dx = g * cos + rotate_half^T(g * sin), which is g rotated
// back by the same angles (math/ops.hpp rope_rotate). The tables are constants.
void rope_backward(const Node& n, const Tensor& g, Grads& w) {
  if (w.needs(n, 0)) w.give(n, 0, rope_rotate(g, w.input(n, 1).out, w.input(n, 2).out, -1.f), true);
}

// x (B, H_kv, T, D) -> (B, H_kv * n, T, D): x.repeat_interleave(n, dim=1)
Tensor repeat_kv_forward(const Node& n, const std::vector<Tensor>& in) {
  const Tensor xc = in[0].contiguous();
  const int64_t reps = n.attrs.repeats, B = xc.size(0), Hk = xc.size(1), block = xc.size(2) * xc.size(3);
  Tensor out = Tensor::empty({B, Hk * reps, xc.size(2), xc.size(3)});
  const float* xp = xc.data();
  float* op = out.data();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hk; ++h)
      for (int64_t r = 0; r < reps; ++r) std::copy_n(xp + (b * Hk + h) * block, block, op + ((b * Hk + h) * reps + r) * block);
  return out;
}
ATTN_SMALL Json repeat_kv_attrs(const Node& n, const std::vector<Node>&) { return {{"repeats", n.attrs.repeats}, {"dim", 1}}; }
ATTN_SMALL std::string repeat_kv_call(const Node& n, const std::vector<std::string>& args) {
  return "repeat_kv(" + args[0] + ", " + std::to_string(n.attrs.repeats) + ")";
}
// each kv head's gradient sums its n copies'
void repeat_kv_backward(const Node& n, const Tensor& g, Grads& w) {
  if (!w.needs(n, 0)) return;
  const Tensor gc = g.contiguous();
  const int64_t reps = n.attrs.repeats, B = gc.size(0), Hk = gc.size(1) / reps, block = gc.size(2) * gc.size(3);
  Tensor gx = Tensor::zeros({B, Hk, gc.size(2), gc.size(3)});
  float* gxp = gx.data();
  const float* gp = gc.data();
  const Kernels& k = kernels();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hk; ++h)
      for (int64_t r = 0; r < reps; ++r) {
        float* dst = gxp + (b * Hk + h) * block;
        k.add(dst, dst, gp + ((b * Hk + h) * reps + r) * block, u(block));
      }
  w.give(n, 0, gx, true);
}

// (H, T, T): float(slope_h) * float(positions[j] - positions[i]); the float32 slopes kept in saved
// (a T = 1 bias is all zeros), positions in ids.
Tensor alibi_bias_forward(const Node& n, const std::vector<Tensor>&) {
  const int64_t H = n.saved.numel(), T = static_cast<int64_t>(n.ids.size());
  Tensor bias = Tensor::empty({H, T, T});
  float* bp = bias.data();
  const float* slopes = n.saved.data();
  for (int64_t h = 0; h < H; ++h) {
    const float slope = slopes[h];
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) bp[(h * T + i) * T + j] = slope * static_cast<float>(n.ids[u(j)] - n.ids[u(i)]);
  }
  return bias;
}
ATTN_SMALL Json alibi_bias_attrs(const Node& n, const std::vector<Node>&) {
  Json slopes = Json::array();
  for (int64_t h = 0; h < n.out.size(0); ++h) slopes.push_back(static_cast<double>(n.saved.data()[h]));
  return {{"heads", n.out.size(0)}, {"slopes", slopes}, {"positions", n.ids}, {"seq_q", n.out.size(1)}, {"seq_k", n.out.size(2)}};
}
ATTN_SMALL std::string alibi_bias_call(const Node& n, const std::vector<std::string>&) {
  return "alibi_bias(positions, " + std::to_string(n.out.size(0)) + ")";
}

}  // namespace

const OpDef rope_table_op{"rope_table", rope_table_forward, rope_table_attrs, rope_table_call, no_backward};
const OpDef rope_op{"rope", rope_forward, no_attrs, plain_call, rope_backward};
const OpDef repeat_kv_op{"repeat_kv", repeat_kv_forward, repeat_kv_attrs, repeat_kv_call, repeat_kv_backward};
const OpDef alibi_bias_op{"alibi_bias", alibi_bias_forward, alibi_bias_attrs, alibi_bias_call, no_backward};

Var rope_table(Context& ctx, const std::vector<int64_t>& positions, int64_t D, double base, bool sine, const RopeScaling& scaling) {
  if (D <= 0 || D % 2 != 0) fail_at("config.rope", "rope needs an even head width, got d_head = ", D);
  Attrs a;
  a.base = base, a.sine = sine, a.rope_scaling = scaling;
  a.shape = {static_cast<int64_t>(positions.size()), D};
  return apply(ctx, Op::rope_table, {}, a, {}, positions);
}

Var rope(Context& ctx, const Var& x, const Var& cos, const Var& sin) { return apply(ctx, Op::rope, {x, cos, sin}); }

Var repeat_kv(Context& ctx, const Var& x, int64_t n) {
  Attrs a;
  a.repeats = n;
  return apply(ctx, Op::repeat_kv, {x}, a);
}

std::vector<double> alibi_slopes(int64_t H) {
  const auto power_of_2 = [](int64_t n) {
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3)));
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(start * std::pow(start, static_cast<double>(i)));
    return v;
  };
  const double l = std::log2(static_cast<double>(H));
  if (l == std::floor(l)) return power_of_2(H);
  const int64_t closest = int64_t{1} << static_cast<int>(std::floor(l));
  std::vector<double> v = power_of_2(closest);
  const std::vector<double> next = alibi_slopes(2 * closest);
  for (size_t i = 0; i < next.size() && static_cast<int64_t>(v.size()) < H; i += 2) v.push_back(next[i]);
  return v;
}

Var alibi_bias(Context& ctx, const std::vector<int64_t>& positions, int64_t H) {
  const std::vector<double> slopes = alibi_slopes(H);
  Tensor kept = Tensor::empty({H});
  float* kp = kept.data();
  for (int64_t h = 0; h < H; ++h) kp[h] = static_cast<float>(slopes[u(h)]);
  return apply(ctx, Op::alibi_bias, {}, {}, kept, positions);
}

Tensor window_mask(const std::vector<int64_t>& positions, bool causal, int64_t window, int64_t sink_tokens) {
  return window_mask(positions, positions, causal, window, sink_tokens);
}

Tensor window_mask(const std::vector<int64_t>& q_positions, const std::vector<int64_t>& k_positions, bool causal,
                   int64_t window, int64_t sink_tokens) {
  const int64_t T = static_cast<int64_t>(q_positions.size()), S = static_cast<int64_t>(k_positions.size());
  Tensor m = Tensor::zeros({T, S});
  float* mp = m.data();
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < S; ++j) {
      const int64_t pi = q_positions[u(i)], pj = k_positions[u(j)];
      bool hidden = (causal || window > 0) && pj > pi;
      if (window > 0 && pj <= pi - window && !(pj < sink_tokens)) hidden = true;
      mp[i * S + j] = hidden ? 1.f : 0.f;
    }
  return m;
}

}  // namespace attn
