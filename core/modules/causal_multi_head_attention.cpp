// CausalMultiHeadAttention = seed 004's MultiHeadAttention(d_in, d_out, context_length, dropout,
// num_heads, qkv_bias): one projection per Q/K/V split into heads by view + transpose, causal
// mask, dropout, heads merged, out_proj.
//   keys = self.W_key(x).view(b, num_tokens, num_heads, head_dim).transpose(1, 2)  (same for Q, V)
//   attn_scores = queries @ keys.transpose(2, 3); masked_fill_(mask_bool, -inf)
//   attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1))
//   context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, d_out)
//   context_vec = self.out_proj(context_vec)
// x: (B,T,d_in) -> (B,T,d_out); weights (B,H,T,T)
#include "modules/causal_multi_head.hpp"

namespace attn {

CausalMultiHead::CausalMultiHead(int64_t d_in_, int64_t d_out_, int64_t context_length_, float dropout, int64_t num_heads,
                                 bool qkv_bias, Generator& gen)
    : d_in(d_in_), d_out(d_out_), context_length(context_length_), spec(causal_spec("out_proj")) {
  if (d_out % num_heads != 0)
    fail_at("config.num_heads", "num_heads (", num_heads, ") must divide d_out (", d_out,
            "): each head gets d_out / num_heads columns");
  spec.heads = num_heads, spec.d_k = spec.d_v = d_out / num_heads, spec.dropout = dropout;
  spec.scale = static_cast<float>(std::sqrt(static_cast<double>(spec.d_k)));
  W_query = Linear(d_in, d_out, qkv_bias, gen);
  W_key = Linear(d_in, d_out, qkv_bias, gen);
  W_value = Linear(d_in, d_out, qkv_bias, gen);
  out_proj = Linear(d_out, d_out, true, gen);
}

std::pair<Var, Var> CausalMultiHead::operator()(const Var& x, Context& ctx) const {
  check_causal_input(x, d_in, context_length);
  const int64_t T = x.size(1), H = spec.heads;
  Var keys = W_key(ctx, x), queries = W_query(ctx, x), values = W_value(ctx, x);
  ctx.step("keys", keys, {"batch", "seq", "d_out"}, "keys = self.W_key(x)");
  ctx.step("queries", queries, {"batch", "seq", "d_out"}, "queries = self.W_query(x)");
  ctx.step("values", values, {"batch", "seq", "d_out"}, "values = self.W_value(x)");
  Var kh = split_heads(ctx, keys, H), qh = split_heads(ctx, queries, H), vh = split_heads(ctx, values, H);
  ctx.step("keys_heads", kh, {"batch", "heads", "seq", "d_head"},
           "keys = keys.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)");
  ctx.step("queries_heads", qh, {"batch", "heads", "seq", "d_head"},
           "queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)");
  ctx.step("values_heads", vh, {"batch", "heads", "seq", "d_head"},
           "values = values.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)");
  Var attn_scores = matmul_bt(ctx, qh, kh);
  ctx.step("attn_scores", attn_scores, {"batch", "heads", "seq_q", "seq_k"}, "attn_scores = queries @ keys.transpose(2, 3)");
  attn_scores = mask_scores(ctx, attn_scores, spec, Tensor());
  ctx.step("attn_scores_masked", attn_scores, {"batch", "heads", "seq_q", "seq_k"},
           "attn_scores.masked_fill_(mask_bool, -torch.inf)");
  Var attn_weights = softmax(ctx, scale_scores(ctx, attn_scores, spec));
  ctx.step("attn_weights", attn_weights, {"batch", "heads", "seq_q", "seq_k"},
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)");
  if (ctx.train && spec.dropout > 0.f) {
    attn_weights = dropout(ctx, attn_weights, spec.dropout);
    ctx.step("attn_weights_dropout", attn_weights, {"batch", "heads", "seq_q", "seq_k"},
             "attn_weights = self.dropout(attn_weights)");
  }
  Var ctx_heads = transpose(ctx, weighted_sum(ctx, attn_weights, vh), 1, 2);
  ctx.step("context_vec_heads", ctx_heads, {"batch", "seq", "heads", "d_head"},
           "context_vec = (attn_weights @ values).transpose(1, 2)");
  Var concat = view(ctx, ctx_heads, {x.size(0), T, d_out});
  ctx.step("context_vec_concat", concat, {"batch", "seq", "d_out"},
           "context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)");
  Var out = out_proj(ctx, concat);
  ctx.step("context_vec", out, {"batch", "seq", "d_out"}, "context_vec = self.out_proj(context_vec)");
  return {out, attn_weights};
}

void CausalMultiHead::parameters(const std::string& p, ParamList& out) {
  W_query.parameters(p + "W_query.", out);
  W_key.parameters(p + "W_key.", out);
  W_value.parameters(p + "W_value.", out);
  out_proj.parameters(p + "out_proj.", out);
}

namespace {

AttentionSpec spec_of_module() {
  AttentionSpec s = causal_spec("out_proj");
  s.weights_output = "attention_weights", s.output = "output";
  return s;
}

class CausalMultiHeadAttention : public Module {
 public:
  CausalMultiHeadAttention(int64_t d_in, int64_t d_out, int64_t context_length, float dropout, int64_t num_heads,
                           bool qkv_bias, Generator& gen)
      : mha_(d_in, d_out, context_length, dropout, num_heads, qkv_bias, gen) {
    mha_.spec.weights_output = "attention_weights", mha_.spec.output = "output";
  }
  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    auto [out, weights] = mha_(in[0], ctx);
    return {{"output", out}, {"attention_weights", weights}};
  }
  void parameters(const std::string& p, ParamList& out) override { mha_.parameters(p, out); }
  std::vector<AttentionSpec> attention() const override { return {mha_.spec}; }

 private:
  CausalMultiHead mha_;
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
          {causal_input()},
          {"output", "attention_weights"},
          make,
          {spec_of_module()}};
}

}  // namespace attn
