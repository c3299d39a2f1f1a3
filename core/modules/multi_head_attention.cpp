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
#include "modules.hpp"

namespace attn {
namespace {

// What differs between the two seeds: names, code lines, mask rule, dropout.
struct Flavor {
  const char* proj[4];        // parameter prefixes: W_Q W_K W_V W_O / w_q w_k w_v w_o
  const char* proj_code[3];   // "Q = self.W_Q(Q)" ...
  const char* split_code[3];  // view/transpose lines
  const char* scores_code;
  const char* mask_code;
  const char* weights_name;
  const char* weights_code;
  const char* heads_name;
  const char* heads_code;
  const char* merged_name;
  const char* merged_code;
  const char* out_name;
  const char* out_code;
  bool mask_true_is_masked;   // 003: True = masked, -1e9; 000: == 0 is masked, -inf
};

const Flavor kSeed000 = {
    {"W_Q", "W_K", "W_V", "W_O"},
    {"Q = self.W_Q(Q)", "K = self.W_K(K)", "V = self.W_V(V)"},
    {"Q = Q.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)",
     "K = K.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)",
     "V = V.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)"},
    "scores = torch.matmul(Q, K.transpose(-2, -1)) / (self.d_head ** 0.5)",
    "scores = scores.masked_fill(mask == 0, float('-inf'))",
    "attention_weights",
    "attention_weights = F.softmax(scores, dim=-1)",
    "attention_output_heads",
    "attention_output = torch.matmul(attention_weights, V)",
    "attention_output",
    "attention_output = attention_output.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)",
    "output",
    "output = self.W_O(attention_output)",
    false};

const Flavor kSeed003 = {
    {"w_q", "w_k", "w_v", "w_o"},
    {"Q = self.w_q(query)", "K = self.w_k(key)", "V = self.w_v(value)"},
    {"Q = self._split_heads(Q)  # x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)",
     "K = self._split_heads(K)", "V = self._split_heads(V)"},
    "scores = torch.matmul(Q, K.transpose(-2, -1)) / torch.sqrt(torch.tensor(d_k, dtype=Q.dtype))",
    "scores = scores.masked_fill(mask, float(\"-1e9\"))  # mask = mask.unsqueeze(1)",
    "attn",
    "attn = F.softmax(scores, dim=-1)",
    "out_heads",
    "output = torch.matmul(attn, V)",
    "out_combined",
    "out = self._combine_heads(out)  # x.transpose(1, 2).contiguous().view(B, T, self.d_model)",
    "out",
    "out = self.w_o(out)",
    true};

class HeadsAttention : public Module {
 public:
  HeadsAttention(const Flavor& f, int64_t d_model, int64_t num_heads, float dropout, Generator& gen)
      : f_(f), C_(d_model), H_(num_heads), p_(dropout) {
    if (d_model % num_heads != 0)
      fail("num_heads (", num_heads, ") must divide d_model (", d_model, "): each head gets d_model / num_heads columns");
    for (Linear& l : W_) l = Linear(d_model, d_model, true, gen);
  }

  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    const Tensor &q_in = in[0], &k_in = in[1], &v_in = in[2], &mask_in = in[3];
    const char* arg[3] = {f_.mask_true_is_masked ? "query" : "Q", f_.mask_true_is_masked ? "key" : "K",
                          f_.mask_true_is_masked ? "value" : "V"};
    expect_input(q_in, arg[0], 3, "(B, T, d_model)", C_, "d_model");
    expect_input(k_in, arg[1], 3, "(B, S, d_model)", C_, "d_model");
    expect_input(v_in, arg[2], 3, "(B, S, d_model)", C_, "d_model");
    if (k_in.size(0) != q_in.size(0) || v_in.size(0) != q_in.size(0))
      fail("batch sizes of ", arg[0], " (", q_in.size(0), "), ", arg[1], " (", k_in.size(0), ") and ", arg[2], " (",
           v_in.size(0), ") must be equal");
    if (v_in.size(1) != k_in.size(1))
      fail(arg[2], "'s sequence length (", v_in.size(1), ") must equal ", arg[1], "'s (", k_in.size(1), ")");
    Tensor P[3], heads[3];
    const Tensor* ins[3] = {&q_in, &k_in, &v_in};
    static const char* step_names[3] = {"Q", "K", "V"};
    static const char* head_names[3] = {"Q_heads", "K_heads", "V_heads"};
    for (int i = 0; i < 3; ++i) {
      P[i] = W_[i](*ins[i]);
      ctx.step(step_names[i], P[i], {"batch", i ? "seq_k" : "seq_q", "d_model"}, f_.proj_code[i], "linear(x, W.weight, W.bias)");
    }
    const int64_t D = C_ / H_;
    const float scale = f_.mask_true_is_masked ? std::sqrt(static_cast<float>(D))
                                               : static_cast<float>(std::sqrt(static_cast<double>(D)));
    if (!ctx.tracing() && !mask_in.defined() && !(ctx.train && p_ > 0.f)) {
      // Nothing to show step by step: the same numbers, without the (B,H,T,S) tensors unless the
      // weights are wanted (ops.hpp, attention_heads).
      Tensor weights;
      Tensor merged = attention_heads(P[0], P[1], P[2], H_, scale, ctx.want_weights ? &weights : nullptr);
      return {{"output", W_[3](merged)}, {"attention_weights", weights}};
    }
    for (int i = 0; i < 3; ++i) {
      heads[i] = split_heads(P[i], H_);
      ctx.step(head_names[i], heads[i], {"batch", "heads", i ? "seq_k" : "seq_q", "d_head"}, f_.split_code[i],
               "split_heads(t, num_heads)  // view(B,T,H,D).transpose(1, 2), no copy");
    }
    Tensor scores = div_scalar(matmul(heads[0], heads[1].contiguous().transpose(-2, -1)), scale);
    ctx.step("scores", scores, {"batch", "heads", "seq_q", "seq_k"}, f_.scores_code,
             "div_scalar(matmul(Q, K.transpose(-2, -1)), sqrt(d_head))");
    if (mask_in.defined()) {
      Tensor mask;
      if (f_.mask_true_is_masked) {
        if (mask_in.dim() != 3)
          fail("mask has shape ", shape_str(mask_in.shape()), " but must be 3-d (B, T, S): it is unsqueezed to (B, 1, T, S)");
        mask = mask_in.unsqueeze(1);
      } else {
        mask = equal_zero(mask_in);
      }
      scores = masked_fill(scores, mask, f_.mask_true_is_masked ? -1e9f : -INFINITY);
      ctx.step("scores_masked", scores, {"batch", "heads", "seq_q", "seq_k"}, f_.mask_code,
               f_.mask_true_is_masked ? "masked_fill(scores, mask.unsqueeze(1), -1e9f)"
                                      : "masked_fill(scores, equal_zero(mask), -INFINITY)");
    }
    Tensor weights = softmax(scores);
    ctx.step(f_.weights_name, weights, {"batch", "heads", "seq_q", "seq_k"}, f_.weights_code, "softmax(scores)");
    if (ctx.train && p_ > 0.f) {
      weights = dropout(weights, p_, ctx.gen);
      ctx.step("attn_dropout", weights, {"batch", "heads", "seq_q", "seq_k"}, "attn = dropout(attn)",
               "dropout(attn, p, gen)");
    }
    Tensor out_heads = matmul(weights, heads[2]);
    ctx.step(f_.heads_name, out_heads, {"batch", "heads", "seq_q", "d_head"}, f_.heads_code, "matmul(weights, V)");
    Tensor merged = merge_heads(out_heads);
    ctx.step(f_.merged_name, merged, {"batch", "seq_q", "d_model"}, f_.merged_code, "merge_heads(out)");
    Tensor output = W_[3](merged);
    ctx.step(f_.out_name, output, {"batch", "seq_q", "d_model"}, f_.out_code, "linear(out, W_O.weight, W_O.bias)");
    return {{"output", output}, {"attention_weights", weights}};
  }

  void parameters(const std::string& p, ParamList& out) override {
    for (int i = 0; i < 4; ++i) W_[i].parameters(p + f_.proj[i] + ".", out);
  }

 private:
  const Flavor& f_;
  int64_t C_, H_;
  float p_;
  Linear W_[4];
};

std::unique_ptr<Module> make000(const Config& c, Generator& g) {
  return std::make_unique<HeadsAttention>(kSeed000, c.i("d_model"), c.i("num_heads"), 0.f, g);
}
std::unique_ptr<Module> make003(const Config& c, Generator& g) {
  return std::make_unique<HeadsAttention>(kSeed003, c.i("d_model"), c.i("num_heads"), c.f("dropout"), g);
}

}  // namespace

ModuleInfo info_MultiHeadAttention() {
  return {"MultiHeadAttention", "000", "MultiHeadAttention",
          "Multi-head attention with W_Q, W_K, W_V, W_O; positions where mask == 0 get -inf.",
          {{"d_model", ArgType::Int, true, 0, 1, 8192, "model width C"},
           {"num_heads", ArgType::Int, true, 0, 1, 256, "number of heads H (must divide d_model)"}},
          {{"Q", InputKind::Float, false, "(B,T,d_model)"},
           {"K", InputKind::Float, false, "(B,S,d_model)"},
           {"V", InputKind::Float, false, "(B,S,d_model)"},
           {"mask", InputKind::Mask, true, "broadcastable to (B,H,T,S), 0 = masked"}},
          {"output", "attention_weights"},
          make000};
}

ModuleInfo info_SplitHeadsMultiHeadAttention() {
  return {"SplitHeadsMultiHeadAttention", "003", "MultiHeadAttention",
          "Multi-head attention with w_q..w_o, _split_heads/_combine_heads, bool mask True = masked (-1e9), dropout.",
          {{"d_model", ArgType::Int, true, 0, 1, 8192, "model width"},
           {"num_heads", ArgType::Int, true, 0, 1, 256, "number of heads (must divide d_model)"},
           {"dropout", ArgType::Float, false, 0.0, 0, 1, "dropout rate on attention weights (train mode)"}},
          {{"query", InputKind::Float, false, "(B,T,d_model)"},
           {"key", InputKind::Float, false, "(B,S,d_model)"},
           {"value", InputKind::Float, false, "(B,S,d_model)"},
           {"mask", InputKind::Mask, true, "(B,T,S), True = masked"}},
          {"output", "attention_weights"},
          make003};
}

}  // namespace attn
