// Two seeds' multi-head attention over separate query/key/value inputs (self- or cross-attention):
//  MultiHeadAttention (seed 000), W_Q/W_K/W_V/W_O, mask == 0 -> -inf:
//    Q = self.W_Q(Q).view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)  (same K, V)
//    scores = torch.matmul(Q, K.transpose(-2, -1)) / (self.d_head ** 0.5)
//    scores = scores.masked_fill(mask == 0, float('-inf')); attention_weights = F.softmax(scores, dim=-1)
//    attention_output = torch.matmul(attention_weights, V).transpose(1, 2).contiguous().view(B, -1, d_model)
//    output = self.W_O(attention_output)
//  SplitHeadsMultiHeadAttention (seed 003's MultiHeadAttention), w_q/w_k/w_v/w_o, _split_heads,
//    mask (B,T,S) True = masked -> unsqueeze(1) -> -1e9, dropout on attn, returns (out, attn).
// Q: (B,T,C), K and V: (B,S,C) -> output (B,T,C), attention weights (B,H,T,S)
#include "modules/modules.hpp"

namespace attn {
namespace {

// What differs between the two seeds besides the attention conventions (AttentionSpec): the
// names of their variables and the lines that compute them.
struct Lines {
  const char* arg[3];         // forward's argument names: Q K V / query key value
  const char* proj_code[3];   // "Q = self.W_Q(Q)" ...
  const char* split_code[3];  // view/transpose lines
  const char* scores_code;
  const char* mask_code;
  const char* weights_code;
  const char* heads_name;
  const char* heads_code;
  const char* merged_name;
  const char* merged_code;
  const char* out_name;
  const char* out_code;
};

const Lines kLines000 = {
    {"Q", "K", "V"},
    {"Q = self.W_Q(Q)", "K = self.W_K(K)", "V = self.W_V(V)"},
    {"Q = Q.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)",
     "K = K.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)",
     "V = V.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)"},
    "scores = torch.matmul(Q, K.transpose(-2, -1)) / (self.d_head ** 0.5)",
    "scores = scores.masked_fill(mask == 0, float('-inf'))",
    "attention_weights = F.softmax(scores, dim=-1)",
    "attention_output_heads",
    "attention_output = torch.matmul(attention_weights, V)",
    "attention_output",
    "attention_output = attention_output.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)",
    "output",
    "output = self.W_O(attention_output)"};

const Lines kLines003 = {
    {"query", "key", "value"},
    {"Q = self.w_q(query)", "K = self.w_k(key)", "V = self.w_v(value)"},
    {"Q = self._split_heads(Q)  # x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)",
     "K = self._split_heads(K)", "V = self._split_heads(V)"},
    "scores = torch.matmul(Q, K.transpose(-2, -1)) / torch.sqrt(torch.tensor(d_k, dtype=Q.dtype))",
    "scores = scores.masked_fill(mask, float(\"-1e9\"))  # mask = mask.unsqueeze(1)",
    "attn = F.softmax(scores, dim=-1)",
    "out_heads",
    "output = torch.matmul(attn, V)",
    "out_combined",
    "out = self._combine_heads(out)  # x.transpose(1, 2).contiguous().view(B, T, self.d_model)",
    "out",
    "out = self.w_o(out)"};

// seed 000: W_Q..W_O, scores / (d_head ** 0.5) (a Python float, rounded to float32), mask == 0 -> -inf
AttentionSpec spec000() {
  AttentionSpec s;
  s.query_input = "Q", s.key_input = "K", s.value_input = "V";
  s.query = "W_Q", s.key = "W_K", s.value = "W_V", s.out = "W_O";
  s.scale_formula = "self.d_head ** 0.5";
  s.mask_input = "mask";
  s.masked_where_zero = true;
  s.fill = -INFINITY;
  s.weights_step = "attention_weights", s.weights_output = "attention_weights", s.output = "output";
  return s;
}

// seed 003: w_q..w_o, / torch.sqrt(torch.tensor(d_k)) (a float32 sqrt), mask True -> -1e9, dropout
AttentionSpec spec003() {
  AttentionSpec s;
  s.query_input = "query", s.key_input = "key", s.value_input = "value";
  s.query = "w_q", s.key = "w_k", s.value = "w_v", s.out = "w_o";
  s.scale_formula = "torch.sqrt(torch.tensor(d_k))";
  s.mask_input = "mask";
  s.mask_unsqueezed = true;
  s.fill = -1e9f;
  s.weights_step = "attn", s.weights_output = "attention_weights", s.output = "output";
  return s;
}

class HeadsAttention : public Module {
 public:
  HeadsAttention(AttentionSpec spec, const Lines& lines, bool float32_sqrt, int64_t d_model, int64_t num_heads,
                 float dropout, Generator& gen)
      : s_(std::move(spec)), l_(lines), C_(d_model) {
    if (d_model % num_heads != 0)
      fail_at("config.num_heads", "num_heads (", num_heads, ") must divide d_model (", d_model,
              "): each head gets d_model / num_heads columns");
    const int64_t D = d_model / num_heads;
    s_.heads = num_heads, s_.d_k = D, s_.d_v = D, s_.dropout = dropout;
    s_.scale = float32_sqrt ? std::sqrt(static_cast<float>(D)) : static_cast<float>(std::sqrt(static_cast<double>(D)));
    for (Linear& l : W_) l = Linear(d_model, d_model, true, gen);
  }

  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    const Var &q_in = in[0], &k_in = in[1], &v_in = in[2];
    const Tensor& mask = in[3].t;
    expect_input(q_in, l_.arg[0], 3, "(B, T, d_model)", C_, "d_model");
    expect_input(k_in, l_.arg[1], 3, "(B, S, d_model)", C_, "d_model");
    expect_input(v_in, l_.arg[2], 3, "(B, S, d_model)", C_, "d_model");
    if (k_in.size(0) != q_in.size(0) || v_in.size(0) != q_in.size(0))
      fail_at(std::string("inputs.") + l_.arg[1], "batch sizes of ", l_.arg[0], " (", q_in.size(0), "), ", l_.arg[1], " (",
              k_in.size(0), ") and ", l_.arg[2], " (", v_in.size(0), ") must be equal");
    if (v_in.size(1) != k_in.size(1))
      fail_at(std::string("inputs.") + l_.arg[2], l_.arg[2], "'s sequence length (", v_in.size(1), ") must equal ",
              l_.arg[1], "'s (", k_in.size(1), ")");
    const bool drop = ctx.train && s_.dropout > 0.f;
    Var P[3];
    static const char* step_names[3] = {"Q", "K", "V"};
    for (int i = 0; i < 3; ++i) {
      P[i] = W_[i](ctx, in[static_cast<size_t>(i)]);
      ctx.step(step_names[i], P[i], {"batch", i ? "seq_k" : "seq_q", "d_model"}, l_.proj_code[i]);
    }
    if (!ctx.recording() && !mask.defined() && !drop) {
      // Nothing to show step by step: the same numbers, without the (B,H,T,S) tensors unless the
      // weights are wanted (ops.hpp, attention_heads).
      Tensor weights;
      Tensor merged = attention_heads(P[0].t, P[1].t, P[2].t, s_.heads, s_.scale, ctx.want_weights ? &weights : nullptr);
      return {{"output", W_[3](ctx, {merged})}, {"attention_weights", {weights}}};
    }
    Var heads[3];
    static const char* head_names[3] = {"Q_heads", "K_heads", "V_heads"};
    for (int i = 0; i < 3; ++i) {
      heads[i] = split_heads(ctx, P[i], s_.heads);
      ctx.step(head_names[i], heads[i], {"batch", "heads", i ? "seq_k" : "seq_q", "d_head"}, l_.split_code[i]);
    }
    Var scores = scale_scores(ctx, matmul_bt(ctx, heads[0], heads[1]), s_);
    ctx.step("scores", scores, {"batch", "heads", "seq_q", "seq_k"}, l_.scores_code);
    if (mask.defined()) {
      scores = mask_scores(ctx, scores, s_, mask);
      ctx.step("scores_masked", scores, {"batch", "heads", "seq_q", "seq_k"}, l_.mask_code);
    }
    Var weights = softmax(ctx, scores);
    ctx.step(s_.weights_step.c_str(), weights, {"batch", "heads", "seq_q", "seq_k"}, l_.weights_code);
    if (drop) {
      weights = dropout(ctx, weights, s_.dropout);
      ctx.step("attn_dropout", weights, {"batch", "heads", "seq_q", "seq_k"}, "attn = dropout(attn)");
    }
    Var out_heads = weighted_sum(ctx, weights, heads[2]);
    ctx.step(l_.heads_name, out_heads, {"batch", "heads", "seq_q", "d_head"}, l_.heads_code);
    Var merged = merge_heads(ctx, out_heads);
    ctx.step(l_.merged_name, merged, {"batch", "seq_q", "d_model"}, l_.merged_code);
    Var output = W_[3](ctx, merged);
    ctx.step(l_.out_name, output, {"batch", "seq_q", "d_model"}, l_.out_code);
    return {{"output", output}, {"attention_weights", weights}};
  }

  void parameters(const std::string& p, ParamList& out) override {
    const std::string* names[4] = {&s_.query, &s_.key, &s_.value, &s_.out};
    for (int i = 0; i < 4; ++i) W_[i].parameters(p + *names[i] + ".", out);
  }
  std::vector<AttentionSpec> attention() const override { return {s_}; }

 private:
  AttentionSpec s_;
  const Lines& l_;
  int64_t C_;
  Linear W_[4];
};

std::unique_ptr<Module> make000(const Config& c, Generator& g) {
  return std::make_unique<HeadsAttention>(spec000(), kLines000, false, c.i("d_model"), c.i("num_heads"), 0.f, g);
}
std::unique_ptr<Module> make003(const Config& c, Generator& g) {
  return std::make_unique<HeadsAttention>(spec003(), kLines003, true, c.i("d_model"), c.i("num_heads"), c.f("dropout"), g);
}

}  // namespace

ModuleInfo info_MultiHeadAttention() {
  return {"MultiHeadAttention", "000", "MultiHeadAttention",
          "Multi-head attention with W_Q, W_K, W_V, W_O; positions where mask == 0 get -inf.",
          {{"d_model", ArgType::Int, true, 0, 1, 8192, "model width C"},
           {"num_heads", ArgType::Int, true, 0, 1, 256, "number of heads H (must divide d_model)"}},
          {{"Q", InputKind::Float, false, InputRole::query, {"batch", "seq_q", "d_model"}, "d_model", "(B,T,d_model)"},
           {"K", InputKind::Float, false, InputRole::key, {"batch", "seq_k", "d_model"}, "d_model", "(B,S,d_model)"},
           {"V", InputKind::Float, false, InputRole::value, {"batch", "seq_k", "d_model"}, "d_model", "(B,S,d_model)"},
           {"mask", InputKind::Mask, true, InputRole::mask, {"batch", "heads", "seq_q", "seq_k"}, "",
            "broadcastable to (B,H,T,S), 0 = masked"}},
          {"output", "attention_weights"},
          make000,
          {spec000()}};
}

ModuleInfo info_SplitHeadsMultiHeadAttention() {
  return {"SplitHeadsMultiHeadAttention", "003", "MultiHeadAttention",
          "Multi-head attention with w_q..w_o, _split_heads/_combine_heads, bool mask True = masked (-1e9), dropout.",
          {{"d_model", ArgType::Int, true, 0, 1, 8192, "model width"},
           {"num_heads", ArgType::Int, true, 0, 1, 256, "number of heads (must divide d_model)"},
           {"dropout", ArgType::Float, false, 0.0, 0, 1, "dropout rate on attention weights (train mode)"}},
          {{"query", InputKind::Float, false, InputRole::query, {"batch", "seq_q", "d_model"}, "d_model", "(B,T,d_model)"},
           {"key", InputKind::Float, false, InputRole::key, {"batch", "seq_k", "d_model"}, "d_model", "(B,S,d_model)"},
           {"value", InputKind::Float, false, InputRole::value, {"batch", "seq_k", "d_model"}, "d_model", "(B,S,d_model)"},
           {"mask", InputKind::Mask, true, InputRole::mask, {"batch", "seq_q", "seq_k"}, "", "(B,T,S), True = masked"}},
          {"output", "attention_weights"},
          make003,
          {spec003()}};
}

}  // namespace attn
