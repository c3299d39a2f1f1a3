// ModernAttention: the attention of today's LLMs as switches on one module (no seed writes it;
// scripts/make_fixtures.py's ModernAttention is its PyTorch twin, written from the same words):
//   q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)       (H*D, H_kv*D, H_kv*D columns)
//   q = q.view(B, T, H, D).transpose(1, 2)                           (k, v: H_kv heads)
//   rope:  q = q * cos + rotate_half(q) * sin   (k the same; cos, sin of cat(angles, angles))
//   GQA:   k = k.repeat_interleave(H // H_kv, dim=1)                  (v the same; H_kv = 1: MQA)
//   scores = q @ k.transpose(-2, -1) / math.sqrt(D)
//   alibi: scores = scores + slope_h * (pos_j - pos_i)
//   causal / window / sinks: scores.masked_fill(mask, -inf)          (a fully masked row: zeros)
//   attn_weights = softmax(scores); context = (attn_weights @ v) merged; output = self.o_proj(context)
// x: (B,T,d_model), positions: (T) ids (default 0..T-1) -> output (B,T,d_model), weights (B,H,T,T)
#include "modules/modules.hpp"

namespace attn {

namespace {

struct ModernConfig {
  int64_t d_model, heads, kv_heads;
  bool causal, rope;
  double rope_base;
  bool alibi;
  int64_t window, sink_tokens;
  bool bias;
};

AttentionSpec modern_spec() {
  AttentionSpec s;
  s.projection = Projection::linear;
  s.query_input = s.key_input = s.value_input = "x";
  s.query = "q_proj", s.key = "k_proj", s.value = "v_proj", s.out = "o_proj";
  s.scale_formula = "math.sqrt(D)";
  s.fill = -INFINITY;
  s.weights_step = "attn_weights";
  s.weights_output = "attention_weights", s.output = "output";
  return s;
}

class ModernAttention : public Module {
 public:
  ModernAttention(const ModernConfig& c, Generator& gen) : c_(c), spec_(modern_spec()) {
    if (c.d_model % c.heads != 0)
      fail_at("config.num_heads", "num_heads (", c.heads, ") must divide d_model (", c.d_model,
              "): each head gets d_model / num_heads columns");
    if (c.heads % c.kv_heads != 0)
      fail_at("config.num_kv_heads", "num_kv_heads (", c.kv_heads, ") must divide num_heads (", c.heads,
              "): each key/value head serves num_heads / num_kv_heads query heads");
    D_ = c.d_model / c.heads;
    if (c.rope && D_ % 2 != 0)
      fail_at("config.rope", "rope rotates pairs of columns: the head width d_model / num_heads (", D_, ") must be even");
    spec_.heads = c.heads, spec_.d_k = spec_.d_v = D_, spec_.kv_heads = c.kv_heads;
    spec_.scale = static_cast<float>(std::sqrt(static_cast<double>(D_)));
    spec_.causal = c.causal, spec_.rope = c.rope, spec_.rope_base = c.rope_base, spec_.alibi = c.alibi;
    spec_.window = c.window, spec_.sink_tokens = c.sink_tokens;
    q_proj = Linear(c.d_model, c.heads * D_, c.bias, gen);
    k_proj = Linear(c.d_model, c.kv_heads * D_, c.bias, gen);
    v_proj = Linear(c.d_model, c.kv_heads * D_, c.bias, gen);
    o_proj = Linear(c.heads * D_, c.d_model, c.bias, gen);
  }

  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    const Var& x = in[0];
    expect_input(x, "x", 3, "(B, T, d_model)", c_.d_model, "d_model");
    const int64_t B = x.size(0), T = x.size(1), H = c_.heads, Hk = c_.kv_heads;
    const std::vector<int64_t> pos = positions(in.size() > 1 ? in[1] : Var(), T);
    Var q = q_proj(ctx, x), k = k_proj(ctx, x), v = v_proj(ctx, x);
    ctx.step("q", q, {"batch", "seq", "d_q"}, "q = self.q_proj(x)");
    ctx.step("k", k, {"batch", "seq", "d_kv"}, "k = self.k_proj(x)");
    ctx.step("v", v, {"batch", "seq", "d_kv"}, "v = self.v_proj(x)");
    q = split_heads(ctx, q, H), k = split_heads(ctx, k, Hk), v = split_heads(ctx, v, Hk);
    ctx.step("q_heads", q, {"batch", "heads", "seq", "d_head"}, "q = q.view(B, T, H, D).transpose(1, 2)");
    ctx.step("k_heads", k, {"batch", "kv_heads", "seq", "d_head"}, "k = k.view(B, T, H_kv, D).transpose(1, 2)");
    ctx.step("v_heads", v, {"batch", "kv_heads", "seq", "d_head"}, "v = v.view(B, T, H_kv, D).transpose(1, 2)");
    if (c_.rope) rotate_qk(ctx, q, k, pos, D_, c_.rope_base);
    repeat_kv_heads(ctx, k, v, H / Hk);
    Var scores = scale_scores(ctx, matmul_bt(ctx, q, k), spec_);
    ctx.step("scores", scores, {"batch", "heads", "seq_q", "seq_k"}, "scores = q @ k.transpose(-2, -1) / math.sqrt(D)");
    if (c_.alibi) {
      Var bias = alibi_bias(ctx, pos, H);
      ctx.step("alibi_bias", bias, {"heads", "seq_q", "seq_k"}, "bias = slopes[:, None, None] * (pos[None, :] - pos[:, None])");
      scores = add(ctx, scores, bias);
      ctx.step("scores_alibi", scores, {"batch", "heads", "seq_q", "seq_k"}, "scores = scores + bias");
    }
    if (c_.causal || c_.window > 0) {
      Attrs how;
      how.causal = true, how.window = c_.window, how.sink_tokens = c_.sink_tokens;
      scores = masked_fill(ctx, scores, window_mask(pos, c_.causal, c_.window, c_.sink_tokens), spec_.fill, how);
      ctx.step("scores_masked", scores, {"batch", "heads", "seq_q", "seq_k"}, "scores = scores.masked_fill(mask, -torch.inf)");
    }
    Var weights = softmax(ctx, scores);
    ctx.step("attn_weights", weights, {"batch", "heads", "seq_q", "seq_k"}, "attn_weights = F.softmax(scores, dim=-1)");
    Var context = transpose(ctx, weighted_sum(ctx, weights, v), 1, 2);
    ctx.step("context_heads", context, {"batch", "seq", "heads", "d_head"}, "context = (attn_weights @ v).transpose(1, 2)");
    context = view(ctx, context, {B, T, H * D_});
    ctx.step("context", context, {"batch", "seq", "d_q"}, "context = context.contiguous().view(B, T, H * D)");
    Var out = o_proj(ctx, context);
    ctx.step("output", out, {"batch", "seq", "d_model"}, "output = self.o_proj(context)");
    return {{"output", out}, {"attention_weights", weights}};
  }

  void parameters(const std::string& p, ParamList& out) override {
    q_proj.parameters(p + "q_proj.", out);
    k_proj.parameters(p + "k_proj.", out);
    v_proj.parameters(p + "v_proj.", out);
    o_proj.parameters(p + "o_proj.", out);
  }
  std::vector<AttentionSpec> attention() const override { return {spec_}; }

 private:
  // The positions input (T ids, any non-negative integers: a KV cache continues at its length), or 0..T-1.
  static std::vector<int64_t> positions(const Var& p, int64_t T) {
    std::vector<int64_t> pos;
    if (!p.defined()) {
      for (int64_t t = 0; t < T; ++t) pos.push_back(t);
      return pos;
    }
    if (p.dim() != 1 || p.size(0) != T)
      fail_at("inputs.positions", "input 'positions' has shape ", shape_str(p.shape()), " but must be (T) = (", T,
              "): one position per token of x");
    const std::vector<float> v = p.t.to_vector();
    for (size_t i = 0; i < v.size(); ++i) {
      if (!(v[i] >= 0 && v[i] < 1e7f) || v[i] != std::floor(v[i]))
        fail_at("inputs.positions", "input 'positions' value ", v[i], " at index ", i,
                " is not a position: positions must be integers in [0, 10000000)");
      pos.push_back(static_cast<int64_t>(v[i]));
    }
    return pos;
  }

  ModernConfig c_;
  AttentionSpec spec_;
  int64_t D_ = 0;
  Linear q_proj, k_proj, v_proj, o_proj;
};

}  // namespace

std::vector<int64_t> position_range(int64_t first, int64_t n) {
  std::vector<int64_t> pos(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) pos[static_cast<size_t>(t)] = first + t;
  return pos;
}

void rotate_qk(Context& ctx, Var& q, Var& k, const std::vector<int64_t>& positions, int64_t D, double base) {
  Var cos = rope_table(ctx, positions, D, base, false), sin = rope_table(ctx, positions, D, base, true);
  ctx.step("cos", cos, {"seq", "d_head"}, "cos = torch.cat((angles, angles), dim=-1).cos()");
  ctx.step("sin", sin, {"seq", "d_head"}, "sin = torch.cat((angles, angles), dim=-1).sin()");
  q = rope(ctx, q, cos, sin), k = rope(ctx, k, cos, sin);
  ctx.step("q_rot", q, {"batch", "heads", "seq", "d_head"}, "q = q * cos + rotate_half(q) * sin");
  ctx.step("k_rot", k, {"batch", "kv_heads", "seq", "d_head"}, "k = k * cos + rotate_half(k) * sin");
}

void repeat_kv_heads(Context& ctx, Var& k, Var& v, int64_t n) {
  if (n == 1) return;
  k = repeat_kv(ctx, k, n), v = repeat_kv(ctx, v, n);
  ctx.step("k_repeated", k, {"batch", "heads", "seq", "d_head"}, "k = k.repeat_interleave(H // H_kv, dim=1)");
  ctx.step("v_repeated", v, {"batch", "heads", "seq", "d_head"}, "v = v.repeat_interleave(H // H_kv, dim=1)");
}

namespace {

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  const int64_t heads = c.i("num_heads");
  return std::make_unique<ModernAttention>(
      ModernConfig{c.i("d_model"), heads, c.i("num_kv_heads") ? c.i("num_kv_heads") : heads, c.b("causal"), c.b("rope"),
                   c.d("rope_base"), c.b("alibi"), c.i("window"), c.i("sink_tokens"), c.b("bias")},
      g);
}

}  // namespace

ModuleInfo info_ModernAttention() {
  return {"ModernAttention", "modern", "ModernAttention",
          "Today's LLM attention as switches: rotary positions (RoPE), ALiBi biases, grouped-query heads (GQA, MQA), "
          "a sliding window with attention sinks; q_proj, k_proj, v_proj, o_proj.",
          {{"d_model", ArgType::Int, true, 0, 1, 4096, "model width"},
           {"num_heads", ArgType::Int, true, 0, 1, 256, "number of heads (must divide d_model)"},
           {"num_kv_heads", ArgType::Int, false, 0, 0, 256, "key/value heads (0: num_heads; 1: multi-query; must divide num_heads)"},
           {"causal", ArgType::Bool, false, 1, 0, 1, "causal mask: key j hidden from query i < j"},
           {"rope", ArgType::Bool, false, 0, 0, 1, "rotary position embedding on q and k (rotate-half)"},
           {"rope_base", ArgType::Float, false, 10000.0, 1, 1e7, "RoPE frequency base"},
           {"alibi", ArgType::Bool, false, 0, 0, 1, "ALiBi: add slope_h * (j - i) to the scores"},
           {"window", ArgType::Int, false, 0, 0, 4096, "sliding window: key j visible from query i only if i - window < j <= i (0: none)"},
           {"sink_tokens", ArgType::Int, false, 0, 0, 4096, "attention sinks: the first keys stay visible under the window"},
           {"bias", ArgType::Bool, false, 0, 0, 1, "bias in the projections"}},
          {{"x", InputKind::Float, false, InputRole::x, {"batch", "seq", "d_model"}, "d_model", "(B,T,d_model)"},
           {"positions", InputKind::Ids, true, InputRole::positions, {"seq"}, "", "(T) positions, default 0..T-1"}},
          {"output", "attention_weights"},
          make,
          {modern_spec()}};
}

}  // namespace attn
