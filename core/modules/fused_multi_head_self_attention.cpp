// FusedMultiHeadSelfAttention = seed 002's MultiHeadSelfAttention(emb_dim, num_heads):
//   qkv = self.qkv_proj(x).reshape(batch_size, seq_len, self.num_heads, 3 * self.head_dim)
//   q, k, v = qkv.chunk(3, dim=-1)
//   attn_scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * self.scaling     # head_dim ** -0.5
//   attn_probs = torch.softmax(attn_scores, dim=-1)
//   attn_output = torch.einsum("bhqk,bkhd->bqhd", attn_probs, v).reshape(batch_size, seq_len, emb_dim)
//   return self.fc_out(attn_output)
// Cross-attention (the fix DecoderLayer needs): q from qkv_proj(x), k and v from qkv_proj(kv).
#include "modules/fused_attention.hpp"

namespace attn {

AttentionSpec fused_spec(const std::string& prefix) {
  AttentionSpec s;
  s.prefix = prefix;
  s.projection = Projection::fused;
  s.query_input = s.key_input = s.value_input = "x";
  s.query = s.key = s.value = "qkv_proj";
  s.out = "fc_out";
  s.divide = false;
  s.scale_formula = "self.scaling = self.head_dim ** -0.5";
  s.weights_step = "attn_probs";
  return s;
}

FusedAttention::FusedAttention(int64_t emb_dim, int64_t num_heads, Generator& gen) : C(emb_dim), spec(fused_spec("")) {
  if (emb_dim % num_heads != 0)
    fail_at("config.num_heads", "num_heads (", num_heads, ") must divide emb_dim (", emb_dim,
            "): each head gets emb_dim / num_heads columns");
  const int64_t D = emb_dim / num_heads;
  spec.heads = num_heads, spec.d_k = spec.d_v = D;
  spec.scale = static_cast<float>(std::pow(static_cast<double>(D), -0.5));
  qkv_proj = Linear(emb_dim, emb_dim * 3, true, gen);
  fc_out = Linear(emb_dim, emb_dim, true, gen);
}

std::pair<Var, Var> FusedAttention::operator()(const Var& x, const Var& kv, Context& ctx) const {
  expect_input(x, "x", 3, "(batch, seq_len, emb_dim)", C, "emb_dim");
  const bool cross = kv.defined();
  if (cross) {
    expect_input(kv, "enc_output", 3, "(batch, src_len, emb_dim)", C, "emb_dim");
    if (kv.size(0) != x.size(0)) fail_at("inputs.enc_output", "enc_output's batch (", kv.size(0), ") must equal x's (", x.size(0), ")");
  }
  const int64_t B = x.size(0), T = x.size(1), H = spec.heads, D = spec.d_k;
  Var qkv = view(ctx, qkv_proj(ctx, x), {B, T, H, 3 * D});
  ctx.step("qkv", qkv, {"batch", "seq", "heads", "3*d_head"},
           "qkv = self.qkv_proj(x).reshape(batch_size, seq_len, self.num_heads, 3 * self.head_dim)");
  Var kvsrc = qkv;
  if (cross) {
    kvsrc = view(ctx, qkv_proj(ctx, kv), {B, kv.size(1), H, 3 * D});
    ctx.step("qkv_enc", kvsrc, {"batch", "seq_k", "heads", "3*d_head"},
             "qkv_enc = self.qkv_proj(enc_output).reshape(batch_size, src_len, self.num_heads, 3 * self.head_dim)");
  }
  // chunk(3, dim=-1): three views, no copy
  Var q = chunk(ctx, qkv, 3, 0, -1), k = chunk(ctx, kvsrc, 3, 1, -1), v = chunk(ctx, kvsrc, 3, 2, -1);
  const char* chunk_code = cross ? "q = qkv.chunk(3, -1)[0]; k, v = qkv_enc.chunk(3, -1)[1:]" : "q, k, v = qkv.chunk(3, dim=-1)";
  ctx.step("q", q, {"batch", "seq_q", "heads", "d_head"}, chunk_code);
  ctx.step("k", k, {"batch", "seq_k", "heads", "d_head"}, chunk_code);
  ctx.step("v", v, {"batch", "seq_k", "heads", "d_head"}, chunk_code);
  // einsum("bqhd,bkhd->bhqk") = (q as b,h,q,d) @ (k as b,h,k,d)^T
  Var attn_scores = scale_scores(ctx, matmul_bt(ctx, transpose(ctx, q, 1, 2), transpose(ctx, k, 1, 2)), spec);
  ctx.step("attn_scores", attn_scores, {"batch", "heads", "seq_q", "seq_k"},
           "attn_scores = torch.einsum(\"bqhd,bkhd->bhqk\", q, k) * self.scaling");
  Var attn_probs = softmax(ctx, attn_scores);
  ctx.step("attn_probs", attn_probs, {"batch", "heads", "seq_q", "seq_k"}, "attn_probs = torch.softmax(attn_scores, dim=-1)");
  // einsum("bhqk,bkhd->bqhd")
  Var out_heads = transpose(ctx, weighted_sum(ctx, attn_probs, transpose(ctx, v, 1, 2)), 1, 2);
  ctx.step("attn_output_heads", out_heads, {"batch", "seq_q", "heads", "d_head"},
           "attn_output = torch.einsum(\"bhqk,bkhd->bqhd\", attn_probs, v)");
  Var merged = view(ctx, out_heads, {B, T, C});
  ctx.step("attn_output", merged, {"batch", "seq_q", "emb_dim"}, "attn_output = attn_output.reshape(batch_size, seq_len, emb_dim)");
  Var output = fc_out(ctx, merged);
  ctx.step("output", output, {"batch", "seq_q", "emb_dim"}, "return self.fc_out(attn_output)");
  return {output, attn_probs};
}

void FusedAttention::parameters(const std::string& prefix, ParamList& out) {
  qkv_proj.parameters(prefix + "qkv_proj.", out);
  fc_out.parameters(prefix + "fc_out.", out);
}

Var FeedForward::operator()(const Var& x, Context& ctx) const {
  Var hidden = relu(ctx, l0(ctx, x));
  ctx.step("ffn_hidden", hidden, {"batch", "seq", "ffn_dim"}, "nn.ReLU()(nn.Linear(emb_dim, ffn_dim)(x))  # self.ffn[0:2]");
  Var out = l2(ctx, hidden);
  ctx.step("ffn_out", out, {"batch", "seq", "emb_dim"}, "self.ffn(x)  # nn.Linear(ffn_dim, emb_dim)");
  return out;
}

namespace {

class FusedMultiHeadSelfAttention : public Module {
 public:
  FusedMultiHeadSelfAttention(int64_t emb_dim, int64_t num_heads, Generator& gen) : attn(emb_dim, num_heads, gen) {
    attn.spec.weights_output = "attention_weights", attn.spec.output = "output";
  }
  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    auto [out, probs] = attn(in[0], Var(), ctx);
    return {{"output", out}, {"attention_weights", probs}};
  }
  void parameters(const std::string& p, ParamList& out) override { attn.parameters(p, out); }
  std::vector<AttentionSpec> attention() const override { return {attn.spec}; }

 private:
  FusedAttention attn;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<FusedMultiHeadSelfAttention>(c.i("emb_dim"), c.i("num_heads"), g);
}

}  // namespace

ModuleInfo info_FusedMultiHeadSelfAttention() {
  AttentionSpec s = fused_spec("");
  s.weights_output = "attention_weights", s.output = "output";
  return {"FusedMultiHeadSelfAttention", "002", "MultiHeadSelfAttention",
          "Self-attention with one fused qkv_proj (reshape to (b,s,h,3*hd), chunk into q,k,v), einsum scores, fc_out.",
          {{"emb_dim", ArgType::Int, true, 0, 1, 8192, "embedding size"},
           {"num_heads", ArgType::Int, true, 0, 1, 256, "number of heads (must divide emb_dim)"}},
          {{"x", InputKind::Float, false, InputRole::x, {"batch", "seq", "emb_dim"}, "emb_dim", "(B,T,emb_dim)"}},
          {"output", "attention_weights"},
          make,
          {s}};
}

}  // namespace attn
