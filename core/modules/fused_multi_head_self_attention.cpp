// FusedMultiHeadSelfAttention = seed 002's MultiHeadSelfAttention(emb_dim, num_heads):
//   qkv = self.qkv_proj(x).reshape(batch_size, seq_len, self.num_heads, 3 * self.head_dim)
//   q, k, v = qkv.chunk(3, dim=-1)
//   attn_scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * self.scaling     # head_dim ** -0.5
//   attn_probs = torch.softmax(attn_scores, dim=-1)
//   attn_output = torch.einsum("bhqk,bkhd->bqhd", attn_probs, v).reshape(batch_size, seq_len, emb_dim)
//   return self.fc_out(attn_output)
// Cross-attention (the fix DecoderLayer needs): q from qkv_proj(x), k and v from qkv_proj(kv).
#include "fused_attention.hpp"

namespace attn {

FusedAttention::FusedAttention(int64_t emb_dim, int64_t num_heads, Generator& gen) : C(emb_dim), H(num_heads) {
  if (emb_dim % num_heads != 0)
    fail("num_heads (", num_heads, ") must divide emb_dim (", emb_dim, "): each head gets emb_dim / num_heads columns");
  qkv_proj = Linear(emb_dim, emb_dim * 3, true, gen);
  fc_out = Linear(emb_dim, emb_dim, true, gen);
}

std::pair<Tensor, Tensor> FusedAttention::operator()(const Tensor& x, const Tensor& kv, Context& ctx) const {
  expect_input(x, "x", 3, "(batch, seq_len, emb_dim)", C, "emb_dim");
  const bool cross = kv.defined();
  if (cross) {
    expect_input(kv, "enc_output", 3, "(batch, src_len, emb_dim)", C, "emb_dim");
    if (kv.size(0) != x.size(0)) fail("enc_output's batch (", kv.size(0), ") must equal x's (", x.size(0), ")");
  }
  const int64_t B = x.size(0), T = x.size(1), D = C / H;
  Tensor qkv = qkv_proj(x).view({B, T, H, 3 * D});
  ctx.step("qkv", qkv, {"batch", "seq", "heads", "3*d_head"},
           "qkv = self.qkv_proj(x).reshape(batch_size, seq_len, self.num_heads, 3 * self.head_dim)",
           "linear(x, qkv_proj.weight, qkv_proj.bias).view({B, T, H, 3 * D})");
  Tensor kvsrc = qkv;
  if (cross) {
    kvsrc = qkv_proj(kv).view({B, kv.size(1), H, 3 * D});
    ctx.step("qkv_enc", kvsrc, {"batch", "seq_k", "heads", "3*d_head"},
             "qkv_enc = self.qkv_proj(enc_output).reshape(batch_size, src_len, self.num_heads, 3 * self.head_dim)",
             "linear(enc_output, qkv_proj.weight, qkv_proj.bias).view({B, S, H, 3 * D})");
  }
  // chunk(3, dim=-1): three views, no copy
  Tensor q = qkv.slice(3, 0, D), k = kvsrc.slice(3, D, 2 * D), v = kvsrc.slice(3, 2 * D, 3 * D);
  const char* chunk_code = cross ? "q = qkv.chunk(3, -1)[0]; k, v = qkv_enc.chunk(3, -1)[1:]" : "q, k, v = qkv.chunk(3, dim=-1)";
  ctx.step("q", q, {"batch", "seq_q", "heads", "d_head"}, chunk_code, "qkv.slice(3, 0, D)  // a view");
  ctx.step("k", k, {"batch", "seq_k", "heads", "d_head"}, chunk_code, "qkv.slice(3, D, 2 * D)  // a view");
  ctx.step("v", v, {"batch", "seq_k", "heads", "d_head"}, chunk_code, "qkv.slice(3, 2 * D, 3 * D)  // a view");
  // einsum("bqhd,bkhd->bhqk") = (q as b,h,q,d) @ (k as b,h,k,d)^T
  const float scaling = static_cast<float>(std::pow(static_cast<double>(D), -0.5));
  Tensor qh = q.transpose(1, 2), kh = k.transpose(1, 2).contiguous(), vh = v.transpose(1, 2);
  Tensor attn_scores = mul_scalar(matmul(qh, kh.transpose(2, 3)), scaling);
  ctx.step("attn_scores", attn_scores, {"batch", "heads", "seq_q", "seq_k"},
           "attn_scores = torch.einsum(\"bqhd,bkhd->bhqk\", q, k) * self.scaling",
           "mul_scalar(matmul(q.transpose(1, 2), k.transpose(1, 2).transpose(2, 3)), scaling)");
  Tensor attn_probs = softmax(attn_scores);
  ctx.step("attn_probs", attn_probs, {"batch", "heads", "seq_q", "seq_k"},
           "attn_probs = torch.softmax(attn_scores, dim=-1)", "softmax(attn_scores)");
  Tensor out_heads = matmul(attn_probs, vh).transpose(1, 2);  // einsum("bhqk,bkhd->bqhd")
  ctx.step("attn_output_heads", out_heads, {"batch", "seq_q", "heads", "d_head"},
           "attn_output = torch.einsum(\"bhqk,bkhd->bqhd\", attn_probs, v)",
           "matmul(attn_probs, v.transpose(1, 2)).transpose(1, 2)");
  Tensor merged = out_heads.contiguous().view({B, T, C});
  ctx.step("attn_output", merged, {"batch", "seq_q", "emb_dim"},
           "attn_output = attn_output.reshape(batch_size, seq_len, emb_dim)", "attn_output.contiguous().view({B, T, C})");
  Tensor output = fc_out(merged);
  ctx.step("output", output, {"batch", "seq_q", "emb_dim"}, "return self.fc_out(attn_output)",
           "linear(attn_output, fc_out.weight, fc_out.bias)");
  return {output, attn_probs};
}

void FusedAttention::parameters(const std::string& prefix, ParamList& out) {
  qkv_proj.parameters(prefix + "qkv_proj.", out);
  fc_out.parameters(prefix + "fc_out.", out);
}

Tensor FeedForward::operator()(const Tensor& x, Context& ctx) const {
  Tensor hidden = relu(l0(x));
  ctx.step("ffn_hidden", hidden, {"batch", "seq", "ffn_dim"}, "nn.ReLU()(nn.Linear(emb_dim, ffn_dim)(x))  # self.ffn[0:2]",
           "relu(linear(x, ffn.0.weight, ffn.0.bias))");
  Tensor out = l2(hidden);
  ctx.step("ffn_out", out, {"batch", "seq", "emb_dim"}, "self.ffn(x)  # nn.Linear(ffn_dim, emb_dim)",
           "linear(hidden, ffn.2.weight, ffn.2.bias)");
  return out;
}

namespace {

class FusedMultiHeadSelfAttention : public Module {
 public:
  FusedMultiHeadSelfAttention(int64_t emb_dim, int64_t num_heads, Generator& gen) : attn(emb_dim, num_heads, gen) {}
  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    auto [out, probs] = attn(in[0], Tensor(), ctx);
    return {{"output", out}, {"attention_weights", probs}};
  }
  void parameters(const std::string& p, ParamList& out) override { attn.parameters(p, out); }

 private:
  FusedAttention attn;
};

std::unique_ptr<Module> make(const Config& c, Generator& g) {
  return std::make_unique<FusedMultiHeadSelfAttention>(c.i("emb_dim"), c.i("num_heads"), g);
}

}  // namespace

ModuleInfo info_FusedMultiHeadSelfAttention() {
  return {"FusedMultiHeadSelfAttention", "002", "MultiHeadSelfAttention",
          "Self-attention with one fused qkv_proj (reshape to (b,s,h,3*hd), chunk into q,k,v), einsum scores, fc_out.",
          {{"emb_dim", ArgType::Int, true, 0, 1, 8192, "embedding size"},
           {"num_heads", ArgType::Int, true, 0, 1, 256, "number of heads (must divide emb_dim)"}},
          {{"x", InputKind::Float, false, "(B,T,emb_dim)"}},
          {"output", "attention_weights"},
          make};
}

}  // namespace attn
