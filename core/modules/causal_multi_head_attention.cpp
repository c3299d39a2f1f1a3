// CausalMultiHeadAttention = seed 004's MultiHeadAttention(d_in, d_out, context_length, dropout,
// num_heads, qkv_bias): one projection per Q/K/V split into heads by view + transpose, causal
// mask, dropout, heads merged, out_proj.
//   keys = self.W_key(x).view(b, num_tokens, num_heads, head_dim).transpose(1, 2)  (same for Q, V)
//   attn_scores = queries @ keys.transpose(2, 3); masked_fill_(mask_bool, -inf)
//   attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1))
//   context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, d_out)
//   context_vec = self.out_proj(context_vec)
// x: (B,T,d_in) -> (B,T,d_out); weights (B,H,T,T)
#include "modules.hpp"

namespace attn {

std::vector<ArgSpec> causal_args(bool with_heads);  // causal_attention.cpp

namespace {

class CausalMultiHeadAttention : public Module {
 public:
  CausalMultiHeadAttention(int64_t d_in, int64_t d_out, int64_t context_length, float dropout, int64_t num_heads,
                           bool qkv_bias, Generator& gen)
      : d_in_(d_in), d_out_(d_out), context_length_(context_length), H_(num_heads), p_(dropout) {
    if (d_out % num_heads != 0)
      fail("num_heads (", num_heads, ") must divide d_out (", d_out, "): each head gets d_out / num_heads columns");
    W_query = Linear(d_in, d_out, qkv_bias, gen);
    W_key = Linear(d_in, d_out, qkv_bias, gen);
    W_value = Linear(d_in, d_out, qkv_bias, gen);
    out_proj = Linear(d_out, d_out, true, gen);
  }

  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    const Tensor& x = in[0];
    expect_input(x, "x", 3, "(B, T, d_in)", d_in_, "d_in");
    const int64_t T = x.size(1);
    if (T > context_length_)
      fail("sequence length T (", T, ") must not exceed context_length (", context_length_, ")");
    Tensor keys = W_key(x), queries = W_query(x), values = W_value(x);
    ctx.step("keys", keys, {"batch", "seq", "d_out"}, "keys = self.W_key(x)", "linear(x, W_key.weight, W_key.bias)");
    ctx.step("queries", queries, {"batch", "seq", "d_out"}, "queries = self.W_query(x)",
             "linear(x, W_query.weight, W_query.bias)");
    ctx.step("values", values, {"batch", "seq", "d_out"}, "values = self.W_value(x)",
             "linear(x, W_value.weight, W_value.bias)");
    Tensor kh = split_heads(keys, H_), qh = split_heads(queries, H_), vh = split_heads(values, H_);
    const char* split_cpp = "split_heads(t, num_heads)  // view(B,T,H,D).transpose(1, 2), no copy";
    ctx.step("keys_heads", kh, {"batch", "heads", "seq", "d_head"},
             "keys = keys.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)", split_cpp);
    ctx.step("queries_heads", qh, {"batch", "heads", "seq", "d_head"},
             "queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)", split_cpp);
    ctx.step("values_heads", vh, {"batch", "heads", "seq", "d_head"},
             "values = values.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)", split_cpp);
    Tensor attn_scores = matmul(qh, kh.contiguous().transpose(2, 3));
    ctx.step("attn_scores", attn_scores, {"batch", "heads", "seq_q", "seq_k"},
             "attn_scores = queries @ keys.transpose(2, 3)", "matmul(queries, keys.transpose(2, 3))");
    attn_scores = masked_fill(attn_scores, causal_mask(T, T), -INFINITY);
    ctx.step("attn_scores_masked", attn_scores, {"batch", "heads", "seq_q", "seq_k"},
             "attn_scores.masked_fill_(mask_bool, -torch.inf)", "masked_fill(attn_scores, causal_mask(T, T), -INFINITY)");
    const float scale = static_cast<float>(std::sqrt(static_cast<double>(kh.size(-1))));
    Tensor attn_weights = softmax(div_scalar(attn_scores, scale));
    ctx.step("attn_weights", attn_weights, {"batch", "heads", "seq_q", "seq_k"},
             "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
             "softmax(div_scalar(attn_scores, sqrt(head_dim)))");
    if (ctx.train && p_ > 0.f) {
      attn_weights = dropout(attn_weights, p_, ctx.gen);
      ctx.step("attn_weights_dropout", attn_weights, {"batch", "heads", "seq_q", "seq_k"},
               "attn_weights = self.dropout(attn_weights)", "dropout(attn_weights, p, gen)");
    }
    Tensor ctx_heads = matmul(attn_weights, vh).transpose(1, 2);
    ctx.step("context_vec_heads", ctx_heads, {"batch", "seq", "heads", "d_head"},
             "context_vec = (attn_weights @ values).transpose(1, 2)", "matmul(attn_weights, values).transpose(1, 2)");
    Tensor concat = ctx_heads.contiguous().view({x.size(0), T, d_out_});
    ctx.step("context_vec_concat", concat, {"batch", "seq", "d_out"},
             "context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)",
             "context_vec.contiguous().view({B, T, d_out})");
    Tensor out = out_proj(concat);
    ctx.step("context_vec", out, {"batch", "seq", "d_out"}, "context_vec = self.out_proj(context_vec)",
             "linear(context_vec, out_proj.weight, out_proj.bias)");
    return {{"output", out}, {"attention_weights", attn_weights}};
  }
  void parameters(const std::string& p, ParamList& out) override {
    W_query.parameters(p + "W_query.", out);
    W_key.parameters(p + "W_key.", out);
    W_value.parameters(p + "W_value.", out);
    out_proj.parameters(p + "out_proj.", out);
  }

 private:
  Linear W_query, W_key, W_value, out_proj;
  int64_t d_in_, d_out_, context_length_, H_;
  float p_;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<CausalMultiHeadAttention>(c.i("d_in"), c.i("d_out"), c.i("context_length"), c.f("dropout"),
                                                    c.i("num_heads"), c.b("qkv_bias"), g);
}

}  // namespace

ModuleInfo info_CausalMultiHeadAttention() {
  return {"CausalMultiHeadAttention", "004", "MultiHeadAttention",
          "Efficient causal multi-head attention: one projection split into heads, causal mask, out_proj.",
          causal_args(true),
          {{"x", InputKind::Float, false, "(B,T,d_in)"}},
          {"output", "attention_weights"},
          make};
}

}  // namespace attn
