// GPT(vocab_size, block_size, n_layer, n_head, n_embd, dropout=0.0, bias=True): nanoGPT's
// model.py (github.com/karpathy/nanoGPT), its state_dict names one to one, so a nanoGPT checkpoint
// loads as it is (scripts/export_nanogpt.py). PyTorch 1.13 has no F.scaled_dot_product_attention,
// so nanoGPT takes its manual attention path, the one written here:
//   CausalSelfAttention:
//     q, k, v  = self.c_attn(x).split(self.n_embd, dim=2)
//     k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)   (q, v alike)
//     att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
//     att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))
//     att = F.softmax(att, dim=-1); att = self.attn_dropout(att); y = att @ v
//     y = y.transpose(1, 2).contiguous().view(B, T, C); y = self.resid_dropout(self.c_proj(y))
//   MLP: x = self.c_fc(x); x = self.gelu(x); x = self.c_proj(x); x = self.dropout(x)
//   Block: x = x + self.attn(self.ln_1(x)); x = x + self.mlp(self.ln_2(x))
//   GPT: tok_emb = self.transformer.wte(idx); pos_emb = self.transformer.wpe(pos)
//        x = self.transformer.drop(tok_emb + pos_emb); x = block(x) for each block
//        x = self.transformer.ln_f(x); logits = self.lm_head(x)   # lm_head.weight is wte.weight
// Construction draws as nanoGPT's __init__ does (init_weights below). idx: (B,T) token ids ->
// logits (B,T,V) (nanoGPT's forward with targets; without, only the last position: generation,
// run/generate.hpp) and attention_weights (n_layer,B,H,T,T), every layer's att after softmax (and
// dropout). With a KV cache (nn/generative.hpp) decode() runs one new position per row.
//
// Llama-style options (issue "Modern attention"; make_fixtures.py's LlamaStyleSelfAttention is the
// PyTorch twin), all off by default, when the model is nanoGPT's exactly:
//   rope (rope_base): no wpe; q and k rotated (ModernAttention's rope_table / rope) at the
//     absolute positions 0..T-1 of the window, a decode step at its own position;
//   num_kv_heads (0 = n_head): grouped-query heads. c_attn stays one Linear, now of width
//     (n_head + 2 * num_kv_heads) * head_dim, split as [q | k | v] (q: n_head heads, k and v:
//     num_kv_heads each), so the default is nanoGPT's 3 * n_embd c_attn byte for byte; k and v are
//     repeated (repeat_kv) after the cache, which keeps only the num_kv_heads heads;
//   window (sink_tokens): key j visible from query i iff i - window < j <= i, or j < sink_tokens.
//     The KV cache keeps every position and masks (window_mask) the ones out of the window: its
//     rows stay the positions, as without a window.
#include <array>

#include "base/build.hpp"
#include "modules/modules.hpp"
#include "nn/generative.hpp"

namespace attn {
namespace {

// GPTConfig(block_size, vocab_size, n_layer, n_head, n_embd, dropout, bias), then the Llama-style options
struct GPTConfig {
  int64_t V, block, L, H, C;
  float dropout;
  bool bias;
  bool rope = false;
  double rope_base = 10000.0;
  int64_t kv_heads = 0;  // 0: n_head
  int64_t window = 0, sink_tokens = 0;
  bool gelu_tanh = false;  // Hugging Face's GPT-2: activation_function gelu_new
  float ln_eps = 1e-5f;    // layer_norm_epsilon
  int64_t Hk() const { return kv_heads > 0 ? kv_heads : H; }
  bool llama() const { return rope || Hk() != H || window > 0; }
};

// torch.nn.init.normal_(t, mean=0.0, std=std)
void normal_init(Tensor& t, double std, Generator& gen) { gen.normal_(t.data(), static_cast<size_t>(t.numel()), 0.0, std); }
// nanoGPT's _init_weights on an nn.Linear: normal_(weight, 0, 0.02), zeros_(bias)
void init_linear(Linear& l, Generator& gen) {
  normal_init(l.weight, 0.02, gen);
  if (l.bias.defined()) l.bias = Tensor::zeros(l.bias.shape());
}

AttentionSpec gpt_spec() {
  AttentionSpec s;
  s.projection = Projection::split;
  s.query_input = s.key_input = s.value_input = "idx";
  s.query = s.key = s.value = "c_attn";
  s.out = "c_proj";
  s.divide = false;
  s.scale_formula = "1.0 / math.sqrt(k.size(-1))";
  s.causal = true;
  s.weights_step = "att_softmax";
  return s;
}

struct CausalSelfAttention {
  Linear c_attn, c_proj;  // nanoGPT's construction order
  int64_t C = 0;
  bool llama = false;     // rope, grouped kv heads or a window (make_fixtures.py's LlamaStyleSelfAttention)
  AttentionSpec spec;
  CausalSelfAttention(const GPTConfig& c, Generator& gen)
      : c_attn(c.C, (c.H + 2 * c.Hk()) * (c.C / c.H), c.bias, gen), c_proj(c.C, c.C, c.bias, gen), C(c.C), llama(c.llama()),
        spec(gpt_spec()) {
    spec.heads = c.H, spec.d_k = spec.d_v = c.C / c.H, spec.dropout = c.dropout;
    spec.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(spec.d_k)));
    spec.kv_heads = c.Hk(), spec.rope = c.rope, spec.rope_base = c.rope_base;
    spec.window = c.window, spec.sink_tokens = c.sink_tokens;
  }

  // x (B,T,C) -> q (B,H,T,D), k, v (B,H_kv,T,D); rotated (rope) at positions pos0.. when on
  std::array<Var, 3> qkv(const Var& x, Context& ctx, int64_t pos0) const {
    Var qkv = c_attn(ctx, x);
    const int64_t H = spec.heads, Hk = spec.kv_heads, D = spec.d_k;
    if (!llama) {
      ctx.step("qkv", qkv, {"batch", "seq", "3*n_embd"}, "q, k, v  = self.c_attn(x).split(self.n_embd, dim=2)");
      Var k = split_heads(ctx, chunk(ctx, qkv, 3, 1, 2), H);
      ctx.step("k", k, {"batch", "heads", "seq", "d_head"}, "k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)");
      Var q = split_heads(ctx, chunk(ctx, qkv, 3, 0, 2), H);
      ctx.step("q", q, {"batch", "heads", "seq", "d_head"}, "q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)");
      Var v = split_heads(ctx, chunk(ctx, qkv, 3, 2, 2), H);
      ctx.step("v", v, {"batch", "heads", "seq", "d_head"}, "v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)");
      return {q, k, v};
    }
    ctx.step("qkv", qkv, {"batch", "seq", "(n_head+2*n_kv_head)*hs"}, "q, k, v = self.c_attn(x).split([H * hs, H_kv * hs, H_kv * hs], dim=2)");
    const std::vector<int64_t> sizes{H * D, Hk * D, Hk * D};
    Var k = split_heads(ctx, split(ctx, qkv, sizes, 1, 2), Hk);
    ctx.step("k", k, {"batch", "kv_heads", "seq", "d_head"}, "k = k.view(B, T, H_kv, hs).transpose(1, 2) # (B, n_kv_head, T, hs)");
    Var q = split_heads(ctx, split(ctx, qkv, sizes, 0, 2), H);
    ctx.step("q", q, {"batch", "heads", "seq", "d_head"}, "q = q.view(B, T, H, hs).transpose(1, 2) # (B, nh, T, hs)");
    Var v = split_heads(ctx, split(ctx, qkv, sizes, 2, 2), Hk);
    ctx.step("v", v, {"batch", "kv_heads", "seq", "d_head"}, "v = v.view(B, T, H_kv, hs).transpose(1, 2) # (B, n_kv_head, T, hs)");
    if (spec.rope) rotate_qk(ctx, q, k, position_range(pos0, x.size(1)), D, spec.rope_base);
    return {q, k, v};
  }

  // Grouped-query attention: every kv head serves n_head / num_kv_heads query heads. Where nothing
  // records (repeats_in_place), k and v stay as they are and scores() and attend() repeat them in
  // their products (their head counts then differ from q's).
  std::array<Var, 2> repeat(Var k, Var v, Context& ctx) const {
    if (!repeats_in_place(ctx)) repeat_kv_heads(ctx, k, v, spec.heads / spec.kv_heads);
    return {k, v};
  }

  // The scores of queries at q_pos against keys at k_pos, causal and windowed (nanoGPT's causal
  // triangle when there is no window).
  Var mask(const Var& att, Context& ctx, const std::vector<int64_t>& q_pos, const std::vector<int64_t>& k_pos) const {
    Attrs how;
    how.causal = true, how.window = spec.window, how.sink_tokens = spec.sink_tokens;
    return masked_fill(ctx, att, window_mask(q_pos, k_pos, true, spec.window, spec.sink_tokens), spec.fill, how);
  }

  Var scores(const Var& q, const Var& k, Context& ctx) const {
    Var att = scale_scores(ctx, head_scores(ctx, q, k), spec);
    ctx.step("att", att, {"batch", "heads", "seq_q", "seq_k"}, "att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))");
    return att;
  }

  // att: the scores (B,H,T,S), masked where needed; v (B,H,S,D) -> the block's output (B,T,C)
  Var attend(Var att, const Var& v, Context& ctx, Var* weights) const {
    att = softmax(ctx, att);
    ctx.step("att_softmax", att, {"batch", "heads", "seq_q", "seq_k"}, "att = F.softmax(att, dim=-1)");
    if (ctx.train && spec.dropout > 0.f) {
      att = dropout(ctx, att, spec.dropout);
      ctx.step("att_dropout", att, {"batch", "heads", "seq_q", "seq_k"}, "att = self.attn_dropout(att)");
    }
    if (weights) *weights = att;
    Var y = head_values(ctx, att, v);
    ctx.step("y", y, {"batch", "heads", "seq", "d_head"}, "y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)");
    y = merge_heads(ctx, y);
    ctx.step("y_merged", y, {"batch", "seq", "n_embd"},
             "y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side");
    y = c_proj(ctx, y);
    if (ctx.train && spec.dropout > 0.f) y = dropout(ctx, y, spec.dropout);
    ctx.step("y_proj", y, {"batch", "seq", "n_embd"}, "y = self.resid_dropout(self.c_proj(y))");
    return y;
  }

  // The whole window, nanoGPT's forward; fill: a cache layer to receive k and v (prefill).
  Var operator()(const Var& x, Context& ctx, KVCache::Layer* fill, Var* weights) const {
    auto [q, k, v] = qkv(x, ctx, 0);
    if (fill) {  // no step: the attention reads k and v themselves, as nanoGPT does
      cache_append(ctx, k, fill->k, 0, "k");
      cache_append(ctx, v, fill->v, 0, "v");
    }
    // nothing to name or keep: the lines below in one pass, without their (B,H,T,T) tensors
    if (fuses_causal(ctx, spec, weights)) return c_proj(ctx, causal_heads(ctx, q, k, v, spec));
    if (!llama) {
      Var att = mask_scores(ctx, scores(q, k, ctx), spec, Tensor());
      ctx.step("att_masked", att, {"batch", "heads", "seq_q", "seq_k"}, "att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))");
      return attend(att, v, ctx, weights);
    }
    auto [kr, vr] = repeat(k, v, ctx);
    const std::vector<int64_t> pos = position_range(0, x.size(1));
    Var att = mask(scores(q, kr, ctx), ctx, pos, pos);
    ctx.step("att_masked", att, {"batch", "heads", "seq_q", "seq_k"},
             "att = att.masked_fill(mask, float('-inf'))  # mask: j > i, or j <= i - window unless j < sink_tokens");
    return attend(att, vr, ctx, weights);
  }

  // One new position per row against the cache's `cached` earlier ones: its q, k, v only; its
  // query sees every cached key (its own included), so there is nothing to mask but the window.
  Var decode(const Var& x, Context& ctx, KVCache::Layer& cache, int64_t cached) const {
    auto [q, k, v] = qkv(x, ctx, cached);
    Var kc = cache_append(ctx, k, cache.k, cached, "k");
    ctx.step("k_cache", kc, {"batch", llama ? "kv_heads" : "heads", "seq_k", "d_head"},
             "k = torch.cat((k_cache, k), dim=2)  # KV cache: every earlier key, then this one");
    Var vc = cache_append(ctx, v, cache.v, cached, "v");
    ctx.step("v_cache", vc, {"batch", llama ? "kv_heads" : "heads", "seq_k", "d_head"},
             "v = torch.cat((v_cache, v), dim=2)  # KV cache: every earlier value, then this one");
    auto [kr, vr] = repeat(kc, vc, ctx);
    Var att = scores(q, kr, ctx);
    if (spec.window > 0 && cached + 1 > spec.window) {
      att = mask(att, ctx, {cached}, position_range(0, cached + 1));
      ctx.step("att_masked", att, {"batch", "heads", "seq_q", "seq_k"},
               "att = att.masked_fill(mask, float('-inf'))  # the cached keys out of the window");
    }
    return attend(att, vr, ctx, nullptr);
  }

  void parameters(const std::string& p, ParamList& out) {
    c_attn.parameters(p + "c_attn.", out);
    c_proj.parameters(p + "c_proj.", out);
  }
};

struct MLP {
  Linear c_fc, c_proj;
  float p = 0.f;
  bool tanh = false;
  MLP(const GPTConfig& c, Generator& gen)
      : c_fc(c.C, 4 * c.C, c.bias, gen), c_proj(4 * c.C, c.C, c.bias, gen), p(c.dropout), tanh(kPretrained && c.gelu_tanh) {}
  Var operator()(const Var& x, Context& ctx) const {
    Var h = c_fc(ctx, x);
    ctx.step("c_fc", h, {"batch", "seq", "4*n_embd"}, "x = self.c_fc(x)");
    if (kPretrained && tanh) {  // the page's small build has no gelu_tanh argument (base/build.hpp)
      h = gelu_tanh(ctx, h);
      ctx.step("gelu", h, {"batch", "seq", "4*n_embd"}, "x = self.gelu(x)  # gelu_new: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))");
    } else {
      h = gelu(ctx, h);
      ctx.step("gelu", h, {"batch", "seq", "4*n_embd"}, "x = self.gelu(x)");
    }
    h = c_proj(ctx, h);
    ctx.step("c_proj", h, {"batch", "seq", "n_embd"}, "x = self.c_proj(x)");
    if (ctx.train && p > 0.f) {
      h = dropout(ctx, h, p);
      ctx.step("dropout", h, {"batch", "seq", "n_embd"}, "x = self.dropout(x)");
    }
    return h;
  }
  void parameters(const std::string& pre, ParamList& out) {
    c_fc.parameters(pre + "c_fc.", out);
    c_proj.parameters(pre + "c_proj.", out);
  }
};

struct Block {
  LayerNorm ln_1;  // nanoGPT's construction order: ln_1, attn, ln_2, mlp
  CausalSelfAttention attn;
  LayerNorm ln_2;
  MLP mlp;
  Block(const GPTConfig& c, Generator& gen) : ln_1(c.C, c.bias, c.ln_eps), attn(c, gen), ln_2(c.C, c.bias, c.ln_eps), mlp(c, gen) {}

  // x = x + self.attn(self.ln_1(x)); x = x + self.mlp(self.ln_2(x)), attention by `attend`
  template <class Attend>
  Var residuals(const Var& x, Context& ctx, Attend attend, bool last_row = false) const {
    static const PreNormBlockSteps steps{"n_embd", "ln_1", "self.ln_1(x)", "attn.", "x_attn", "x = x + self.attn(self.ln_1(x))",
                                         "ln_2", "self.ln_2(x)", "mlp.", "x_mlp", "x = x + self.mlp(self.ln_2(x))"};
    return pre_norm_block(
        ctx, x, steps, [&](const Var& v) { return ln_1(ctx, v); }, attend, [&](const Var& v) { return ln_2(ctx, v); },
        [&](const Var& v) { return mlp(v, ctx); }, last_row);
  }
  void parameters(const std::string& p, ParamList& out) {
    ln_1.parameters(p + "ln_1.", out);
    attn.parameters(p + "attn.", out);
    ln_2.parameters(p + "ln_2.", out);
    mlp.parameters(p + "mlp.", out);
  }
};

class GPT : public Module, public Generative {
 public:
  GPT(const GPTConfig& c, Generator& gen) : c_(c) {
    if (c.C % c.H != 0)
      fail_at("config.n_head", "n_head (", c.H, ") must divide n_embd (", c.C, "): each head gets n_embd / n_head columns");
    if (c.kv_heads < 0 || c.H % c.Hk() != 0)
      fail_at("config.num_kv_heads", "num_kv_heads (", c.kv_heads, ") must divide n_head (", c.H,
              "): each key/value head serves n_head / num_kv_heads query heads (0: n_head, 1: multi-query)");
    if (c.rope && (c.C / c.H) % 2 != 0)
      fail_at("config.rope", "rope rotates pairs of columns: the head width n_embd / n_head (", c.C / c.H, ") must be even");
    wte = Tensor::empty({c.V, c.C});  // nn.Embedding(vocab_size, n_embd): normal_(0, 1)
    gen.embedding_init(wte.data(), static_cast<size_t>(wte.numel()));
    if (!c.rope) {  // with rope there is no wpe: positions enter q and k
      wpe = Tensor::empty({c.block, c.C});
      gen.embedding_init(wpe.data(), static_cast<size_t>(wpe.numel()));
    }
    for (int64_t i = 0; i < c.L; ++i) h.emplace_back(c, gen);
    ln_f = LayerNorm(c.C, c.bias, c.ln_eps);
    // nn.Linear(n_embd, vocab_size, bias=False), then self.transformer.wte.weight = self.lm_head.weight:
    // lm_head's values are drawn straight into wte's table (same shape), so a 124M model never
    // holds two vocab x n_embd tables (nor a freed one the allocator cannot reuse for the next)
    gen.linear_init(wte.data(), static_cast<size_t>(wte.numel()), nullptr, 0, c.C);
    init_weights(gen);
  }

  Outputs forward(const std::vector<Var>& in, Context& ctx) override { return forward_window(in[0], ctx, nullptr, false); }

  Outputs forward_window(const Var& idx, Context& ctx, KVCache* cache, bool last_only) override {
    const std::vector<int64_t> ids = token_ids(idx, "idx", c_.V);
    const int64_t B = idx.size(0), T = idx.size(1);
    if (T > c_.block)
      fail_at("config.block_size", "Cannot forward sequence of length ", T, ", block size is only ", c_.block,
              ": give at most block_size tokens (generate crops the prompt to its last block_size)");
    Var x = embed(ids, B, T, 0, ctx);
    std::vector<Var> weights(h.size());
    for (size_t i = 0; i < h.size(); ++i) {
      Context::Scope scope(ctx, "transformer.h." + std::to_string(i) + ".");
      KVCache::Layer* fill = cache ? &cache->layers[i] : nullptr;
      Var* w = ctx.want_weights ? &weights[i] : nullptr;
      x = h[i].residuals(x, ctx, [&](const Var& a) { return h[i].attn(a, ctx, fill, w); }, i + 1 == h.size() && last_row_only(ctx, last_only, T));
    }
    if (cache) cache->len = T;
    Outputs out{{"output", head(x, last_only, ctx)}};
    if (ctx.want_weights) out.push_back({"attention_weights", stack(ctx, weights, 0)});
    return out;
  }

  Var decode(const Var& idx, Context& ctx, KVCache& cache) override {
    const std::vector<int64_t> ids = token_ids(idx, "idx", c_.V);
    const int64_t pos = cache.len;
    if (idx.size(1) != 1 || pos >= c_.block)
      fail("internal: decode takes one token per row at a position below block_size (", c_.block, "), got ",
           shape_str(idx.shape()), " at ", pos);
    Var x = embed(ids, idx.size(0), 1, pos, ctx);
    for (size_t i = 0; i < h.size(); ++i) {
      Context::Scope scope(ctx, "transformer.h." + std::to_string(i) + ".");
      x = h[i].residuals(x, ctx, [&](const Var& a) { return h[i].attn.decode(a, ctx, cache.layers[i], pos); });
    }
    cache.len = pos + 1;
    return head(x, false, ctx);
  }

  // num_kv_heads heads per layer (GQA's saving: n_head / num_kv_heads times fewer bytes per token)
  KVCache make_cache(int64_t B) const override {
    KVCache cache;
    const Shape shape{B, c_.Hk(), c_.block, c_.C / c_.H};
    // not zeroed: cache_append writes rows before any view reads them, and views end at the rows
    // written (a 124M GPT-2's cache is 75 MB: zeroing it took ~7 ms of every prefill)
    for (int64_t i = 0; i < c_.L; ++i) cache.layers.push_back({Tensor::empty(shape), Tensor::empty(shape)});
    return cache;
  }
  int64_t block_size() const override { return c_.block; }
  int64_t vocab_size() const override { return c_.V; }
  Generative* generative() override { return this; }

  void parameters(const std::string& p, ParamList& out) override {
    out.emplace_back(p + "transformer.wte.weight", &wte);  // also lm_head.weight: named once, as named_parameters()
    if (!c_.rope) out.emplace_back(p + "transformer.wpe.weight", &wpe);
    for (size_t i = 0; i < h.size(); ++i) h[i].parameters(p + "transformer.h." + std::to_string(i) + ".", out);
    ln_f.parameters(p + "transformer.ln_f.", out);
  }
  // A nanoGPT state_dict also holds lm_head.weight (the same tensor as wte's) and, saved by PyTorch
  // < 2.0, every layer's causal-mask buffer attn.bias (Hugging Face's GPT-2 also attn.masked_bias).
  bool skips_in_state_dict(const std::string& n) const override {
    return n == "lm_head.weight" || ends_with(n, ".attn.bias") || ends_with(n, ".attn.masked_bias");
  }
  std::vector<AttentionSpec> attention() const override {
    std::vector<AttentionSpec> out;
    for (size_t i = 0; i < h.size(); ++i) {
      AttentionSpec s = h[i].attn.spec;
      s.prefix = "transformer.h." + std::to_string(i) + ".attn.";
      out.push_back(s);
    }
    return out;
  }

 private:
  // self.apply(self._init_weights) visits children before parents, in registration order: wte, wpe,
  // every block's c_attn, attn.c_proj, c_fc, mlp.c_proj, then lm_head (wte's tensor again: drawn
  // twice, the second draw stays); then normal_(std=0.02/sqrt(2 * n_layer)) on each c_proj.weight
  // in named_parameters() order.
  void init_weights(Generator& gen) {
    normal_init(wte, 0.02, gen);
    if (!c_.rope) normal_init(wpe, 0.02, gen);
    for (Block& b : h)
      for (Linear* l : {&b.attn.c_attn, &b.attn.c_proj, &b.mlp.c_fc, &b.mlp.c_proj}) init_linear(*l, gen);
    normal_init(wte, 0.02, gen);
    const double std = 0.02 / std::sqrt(2.0 * static_cast<double>(c_.L));
    for (Block& b : h)
      for (Linear* l : {&b.attn.c_proj, &b.mlp.c_proj}) normal_init(l->weight, std, gen);
  }

  // tok_emb + pos_emb at positions [pos0, pos0 + T), through transformer.drop (rope: tok_emb alone)
  Var embed(const std::vector<int64_t>& ids, int64_t B, int64_t T, int64_t pos0, Context& ctx) const {
    Var tok = embedding(ctx, ctx.param(wte), ids, {B, T}, "idx");
    ctx.step("tok_emb", tok, {"batch", "seq", "n_embd"}, "tok_emb = self.transformer.wte(idx) # token embeddings of shape (b, t, n_embd)");
    if (c_.rope) {
      Var x = dropout(ctx, tok, ctx.train ? c_.dropout : 0.f);
      ctx.step("x", x, {"batch", "seq", "n_embd"}, "x = self.transformer.drop(tok_emb)  # rope: no wpe, positions rotate q and k");
      return x;
    }
    Var pe = embedding(ctx, ctx.param(wpe), position_range(pos0, T), {T});
    ctx.step("pos_emb", pe, {"seq", "n_embd"}, "pos_emb = self.transformer.wpe(pos) # position embeddings of shape (t, n_embd)");
    Var x = add(ctx, tok, pe);
    if (ctx.train && c_.dropout > 0.f) x = dropout(ctx, x, c_.dropout);
    ctx.step("x", x, {"batch", "seq", "n_embd"}, "x = self.transformer.drop(tok_emb + pos_emb)");
    return x;
  }

  // ln_f, then lm_head at every position or the last only (x[:, [-1], :])
  Var head(Var x, bool last_only, Context& ctx) const {
    x = ln_f(ctx, x);
    ctx.step("ln_f", x, {"batch", "seq", "n_embd"}, "x = self.transformer.ln_f(x)");
    if (last_only && x.size(1) > 1) x = chunk(ctx, x, x.size(1), x.size(1) - 1, 1);
    Var logits = linear(ctx, x, ctx.param(wte), Var());
    ctx.step("logits", logits, {"batch", "seq", "vocab"},
             last_only ? "logits = self.lm_head(x[:, [-1], :]) # note: using list [-1] to preserve the time dim"
                       : "logits = self.lm_head(x)");
    return logits;
  }

  GPTConfig c_;
  Tensor wte, wpe;
  std::vector<Block> h;
  LayerNorm ln_f;
};

std::unique_ptr<Module> make(const GPTConfig& c, Generator& g) { return std::make_unique<GPT>(c, g); }
std::unique_ptr<Module> make_from(const attn::Config& c, Generator& g) {
  GPTConfig gc{c.i("vocab_size"), c.i("block_size"), c.i("n_layer"), c.i("n_head"), c.i("n_embd"), c.f("dropout"), c.b("bias"),
               c.b("rope"), c.d("rope_base"), c.i("num_kv_heads"), c.i("window"), c.i("sink_tokens")};
#if ATTN_PRETRAINED  // Hugging Face's GPT-2: not in the page's small build (base/build.hpp)
  gc.gelu_tanh = c.b("gelu_tanh"), gc.ln_eps = c.f("layer_norm_epsilon");
#endif
  return make(gc, g);
}

}  // namespace

ModuleInfo info_GPT() {
  AttentionSpec s = gpt_spec();
  s.prefix = "transformer.h.*.attn.";
  return {"GPT", "nanoGPT", "GPT",
          "nanoGPT's GPT: token + position embeddings, n_layer pre-norm blocks of causal self-attention (one c_attn "
          "split into q, k, v) and a GELU MLP, ln_f, lm_head tied to wte; generates token by token with a KV cache. "
          "Llama-style options: rotary positions instead of wpe, grouped-query kv heads, a sliding window.",
          {{"vocab_size", ArgType::Int, true, 0, 1, 65536, "vocabulary size"},
           {"block_size", ArgType::Int, true, 0, 1, 4096, "longest sequence the causal mask covers"},
           {"n_layer", ArgType::Int, true, 0, 1, 48, "layers"},
           {"n_head", ArgType::Int, true, 0, 1, 256, "number of heads"},
           {"n_embd", ArgType::Int, true, 0, 1, 4096, "embedding size"},
           {"dropout", ArgType::Float, false, 0.0, 0, 1, "dropout rate in train mode: embeddings, attention weights, residual branches"},
           {"bias", ArgType::Bool, false, 1.0, 0, 1, "bias in the Linears and LayerNorms (as GPT-2)"},
           {"rope", ArgType::Bool, false, 0, 0, 1, "rotary positions on q and k in every block instead of wpe (Llama)"},
           {"rope_base", ArgType::Float, false, 10000.0, 1, 1e7, "RoPE frequency base"},
           {"num_kv_heads", ArgType::Int, false, 0, 0, 256, "key/value heads (0: n_head; 1: multi-query; must divide n_head): c_attn gives (n_head + 2 * num_kv_heads) * head_dim columns, [q | k | v]"},
           {"window", ArgType::Int, false, 0, 0, 4096, "sliding window: key j visible from query i only if i - window < j <= i (0: none)"},
           {"sink_tokens", ArgType::Int, false, 0, 0, 4096, "attention sinks: the first keys stay visible under the window"},
#if ATTN_PRETRAINED
           {"gelu_tanh", ArgType::Bool, false, 0, 0, 1, "GELU's tanh form (Hugging Face's GPT-2: gelu_new)"},
           {"layer_norm_epsilon", ArgType::Float, false, 1e-5, 0, 1, "the LayerNorms' epsilon (GPT-2's layer_norm_epsilon)"},
#endif
          },
          {{"idx", InputKind::Ids, false, InputRole::tokens, {"batch", "seq"}, "", "(B,T) token ids"}},
          {"output", "attention_weights"},
          make_from,
          {s},
          true};
}

}  // namespace attn
