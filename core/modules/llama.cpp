// Llama(vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, ...):
// Hugging Face's LlamaForCausalLM (transformers/models/llama/modeling_llama.py), its config names
// and state_dict names one to one, so a checkpoint from the Hub loads as it is (core/SCENARIO.md,
// "Pretrained"); Mistral and Qwen2 where their math is Llama's (Qwen2: q, k, v with biases, o
// without). Its eager path, the one written here:
//   LlamaRMSNorm: variance = hidden_states.pow(2).mean(-1, keepdim=True)
//                 hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
//                 return self.weight * hidden_states                     (float32 throughout)
//   LlamaRotaryEmbedding: inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
//                 emb = torch.cat((freqs, freqs), dim=-1); cos, sin = emb.cos(), emb.sin()
//   LlamaAttention: q = self.q_proj(x).view(B, T, -1, head_dim).transpose(1, 2)   (k, v alike,
//                 num_key_value_heads heads); q, k = apply_rotary_pos_emb(q, k, cos, sin)
//                 (rotate_half); k, v = past_key_value.update(k, v); k, v = repeat_kv(k, v, groups)
//                 attn_weights = torch.matmul(q, k.transpose(2, 3)) * self.scaling (head_dim**-0.5)
//                 attn_weights = attn_weights + causal_mask; softmax(dim=-1, dtype=float32)
//                 attn_output = (attn_weights @ v).transpose(1, 2).reshape(B, T, -1); self.o_proj(..)
//   LlamaMLP:     down_proj(act_fn(gate_proj(x)) * up_proj(x)), act_fn = silu
//   LlamaDecoderLayer: x = x + self_attn(input_layernorm(x)); x = x + mlp(post_attention_layernorm(x))
//   LlamaForCausalLM: x = embed_tokens(input_ids); layers; norm; logits = lm_head(x)
//                 (lm_head.weight is embed_tokens.weight when tie_word_embeddings)
// The causal mask is added as torch.finfo.min there and filled with -inf here: the same weights
// (e^(min - max) is 0 in float32). input_ids (B,T) -> logits (B,T,V) and attention_weights
// (layers,B,H,T,T); generation with a KV cache of num_key_value_heads heads (nn/generative.hpp).
// Seeded construction draws as LlamaForCausalLM(config) does: LlamaModel builds nn.Embedding and
// every nn.Linear, then its post_init() redraws them (_init_weights: normal_(0, initializer_range
// 0.02), biases zero); lm_head is built, LlamaForCausalLM's post_init() redraws it alone (the rest
// is marked initialised), then tie_weights().
#include <array>

#include "modules/modules.hpp"
#include "nn/generative.hpp"

namespace attn {
namespace {

struct LlamaConfig {
  int64_t V, C, I, L, H, Hk, D, max_pos;
  float eps;
  double theta;
  bool tie, attention_bias, mlp_bias, qkv_bias;
  // Mistral's and Qwen2's sliding window (0: none): key j visible from query i iff
  // i - sliding_window < j <= i (masking_utils' sliding_window_overlay), in layers from
  // max_window_layers on (Qwen2's; Mistral's every layer: 0)
  int64_t sliding_window = 0, max_window_layers = 0;
  RopeScaling rope_scaling{};  // (tape.hpp) factor 0: the default frequencies
};

// The causal mask covers at most this many positions in one window (generation crops the prompt to
// its last kMaxWindow tokens, as nanoGPT's block_size): the KV cache is allocated at this length.
constexpr int64_t kMaxWindow = 4096;

AttentionSpec llama_spec(const LlamaConfig& c) {
  AttentionSpec s;
  s.projection = Projection::linear;
  s.query_input = s.key_input = s.value_input = "input_ids";
  s.query = "q_proj", s.key = "k_proj", s.value = "v_proj", s.out = "o_proj";
  s.divide = false;
  s.scale_formula = "self.head_dim**-0.5";
  s.causal = true;
  s.weights_step = "attn_weights";
  s.heads = c.H, s.d_k = s.d_v = c.D, s.kv_heads = c.Hk;
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.D)));
  s.rope = true, s.rope_base = c.theta, s.rope_scaling = c.rope_scaling;
  return s;
}

struct LlamaAttention {
  Linear q_proj, k_proj, v_proj, o_proj;  // Hugging Face's construction order
  AttentionSpec spec;
  LlamaAttention(const LlamaConfig& c, Generator& gen, int64_t layer)
      : q_proj(c.C, c.H * c.D, c.attention_bias || c.qkv_bias, gen), k_proj(c.C, c.Hk * c.D, c.attention_bias || c.qkv_bias, gen),
        v_proj(c.C, c.Hk * c.D, c.attention_bias || c.qkv_bias, gen), o_proj(c.H * c.D, c.C, c.attention_bias, gen), spec(llama_spec(c)) {
    if (c.sliding_window > 0 && layer >= c.max_window_layers) spec.window = c.sliding_window;
  }

  // x (B,T,C) -> q (B,H,T,D) and k, v (B,H_kv,T,D), q and k rotated at positions pos0..
  std::array<Var, 3> qkv(const Var& x, Context& ctx, int64_t pos0) const {
    const int64_t H = spec.heads, Hk = spec.kv_heads, D = spec.d_k;
    Var q = q_proj(ctx, x);
    ctx.step("q_proj", q, {"batch", "seq", "heads*d_head"}, "self.q_proj(hidden_states)");
    q = split_heads(ctx, q, H);
    ctx.step("query_states", q, {"batch", "heads", "seq", "d_head"}, "query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)");
    Var k = k_proj(ctx, x);
    ctx.step("k_proj", k, {"batch", "seq", "kv_heads*d_head"}, "self.k_proj(hidden_states)");
    k = split_heads(ctx, k, Hk);
    ctx.step("key_states", k, {"batch", "kv_heads", "seq", "d_head"}, "key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)");
    Var v = v_proj(ctx, x);
    ctx.step("v_proj", v, {"batch", "seq", "kv_heads*d_head"}, "self.v_proj(hidden_states)");
    v = split_heads(ctx, v, Hk);
    ctx.step("value_states", v, {"batch", "kv_heads", "seq", "d_head"}, "value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)");
    const std::vector<int64_t> pos = position_range(pos0, x.size(1));
    Var cos = rope_table(ctx, pos, D, spec.rope_base, false, spec.rope_scaling), sin = rope_table(ctx, pos, D, spec.rope_base, true, spec.rope_scaling);
    ctx.step("cos", cos, {"seq", "d_head"}, "cos, sin = position_embeddings  # emb = torch.cat((freqs, freqs), dim=-1); cos = emb.cos()");
    ctx.step("sin", sin, {"seq", "d_head"}, "cos, sin = position_embeddings  # sin = emb.sin()");
    q = rope(ctx, q, cos, sin);
    ctx.step("query_rot", q, {"batch", "heads", "seq", "d_head"}, "q_embed = (q * cos) + (rotate_half(q) * sin)");
    k = rope(ctx, k, cos, sin);
    ctx.step("key_rot", k, {"batch", "kv_heads", "seq", "d_head"}, "k_embed = (k * cos) + (rotate_half(k) * sin)");
    return {q, k, v};
  }

  // scores of q against k and v (B,H_kv,S,D) repeated to every query head; at = -1: the whole
  // window, causal (and windowed); else one query at position `at` against keys 0..at (windowed)
  Var attend(const Var& q, Var k, Var v, Context& ctx, int64_t at, Var* weights) const {
    const int64_t groups = spec.heads / spec.kv_heads;
    if (groups > 1 && !repeats_in_place(ctx)) {  // else k and v repeated by the products
      k = repeat_kv(ctx, k, groups), v = repeat_kv(ctx, v, groups);
      ctx.step("key_repeated", k, {"batch", "heads", "seq_k", "d_head"}, "key_states = repeat_kv(key, module.num_key_value_groups)");
      ctx.step("value_repeated", v, {"batch", "heads", "seq_k", "d_head"}, "value_states = repeat_kv(value, module.num_key_value_groups)");
    }
    Var att = scale_scores(ctx, head_scores(ctx, q, k), spec);
    ctx.step("attn_scores", att, {"batch", "heads", "seq_q", "seq_k"}, "attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling");
    if (at < 0 && spec.window == 0) {
      att = mask_scores(ctx, att, spec, Tensor());
      ctx.step("attn_masked", att, {"batch", "heads", "seq_q", "seq_k"}, "attn_weights = attn_weights + causal_mask");
    } else if (spec.window > 0 && (at < 0 || at + 1 > spec.window)) {
      const std::vector<int64_t> k_pos = position_range(0, k.size(2)), q_pos = at < 0 ? k_pos : std::vector<int64_t>{at};
      Attrs how;
      how.causal = true, how.window = spec.window;
      att = masked_fill(ctx, att, window_mask(q_pos, k_pos, true, spec.window, 0), spec.fill, how);
      ctx.step("attn_masked", att, {"batch", "heads", "seq_q", "seq_k"},
               "attn_weights = attn_weights + causal_mask  # sliding window: key j visible iff i - sliding_window < j <= i");
    }
    att = softmax(ctx, att);
    ctx.step("attn_weights", att, {"batch", "heads", "seq_q", "seq_k"},
             "attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)");
    if (weights) *weights = att;
    Var y = head_values(ctx, att, v);
    ctx.step("attn_output_heads", y, {"batch", "heads", "seq", "d_head"}, "attn_output = torch.matmul(attn_weights, value_states)");
    y = merge_heads(ctx, y);
    ctx.step("attn_output", y, {"batch", "seq", "heads*d_head"},
             "attn_output = attn_output.transpose(1, 2).contiguous().reshape(*input_shape, -1)");
    y = o_proj(ctx, y);
    ctx.step("o_proj", y, {"batch", "seq", "hidden"}, "attn_output = self.o_proj(attn_output)");
    return y;
  }

  Var operator()(const Var& x, Context& ctx, KVCache::Layer* fill, Var* weights) const {
    auto [q, k, v] = qkv(x, ctx, 0);
    if (fill) {
      cache_append(ctx, k, fill->k, 0, "k");
      cache_append(ctx, v, fill->v, 0, "v");
    }
    // nothing to name or keep: attend's lines in one pass, without their (B,H,T,T) tensors
    if (fuses_causal(ctx, spec, weights)) return o_proj(ctx, causal_heads(ctx, q, k, v, spec));
    return attend(q, k, v, ctx, -1, weights);
  }

  // One new position per row at `cached`: it sees every cached key and its own, nothing to mask.
  Var decode(const Var& x, Context& ctx, KVCache::Layer& cache, int64_t cached) const {
    auto [q, k, v] = qkv(x, ctx, cached);
    Var kc = cache_append(ctx, k, cache.k, cached, "k");
    ctx.step("key_cache", kc, {"batch", "kv_heads", "seq_k", "d_head"},
             "key_states, value_states = past_key_value.update(key_states, value_states, self.layer_idx)  # keys");
    Var vc = cache_append(ctx, v, cache.v, cached, "v");
    ctx.step("value_cache", vc, {"batch", "kv_heads", "seq_k", "d_head"},
             "key_states, value_states = past_key_value.update(key_states, value_states, self.layer_idx)  # values");
    return attend(q, kc, vc, ctx, cached, nullptr);
  }

  void parameters(const std::string& p, ParamList& out) {
    q_proj.parameters(p + "q_proj.", out);
    k_proj.parameters(p + "k_proj.", out);
    v_proj.parameters(p + "v_proj.", out);
    o_proj.parameters(p + "o_proj.", out);
  }
};

struct LlamaMLP {
  Linear gate_proj, up_proj, down_proj;
  LlamaMLP(const LlamaConfig& c, Generator& gen)
      : gate_proj(c.C, c.I, c.mlp_bias, gen), up_proj(c.C, c.I, c.mlp_bias, gen), down_proj(c.I, c.C, c.mlp_bias, gen) {}
  Var operator()(const Var& x, Context& ctx) const {
    Var g = gate_proj(ctx, x);
    ctx.step("gate_proj", g, {"batch", "seq", "intermediate"}, "self.gate_proj(x)");
    g = silu(ctx, g);
    ctx.step("act_fn", g, {"batch", "seq", "intermediate"}, "self.act_fn(self.gate_proj(x))");
    Var u = up_proj(ctx, x);
    ctx.step("up_proj", u, {"batch", "seq", "intermediate"}, "self.up_proj(x)");
    Var h = mul(ctx, g, u);
    ctx.step("gated", h, {"batch", "seq", "intermediate"}, "self.act_fn(self.gate_proj(x)) * self.up_proj(x)");
    h = down_proj(ctx, h);
    ctx.step("down_proj", h, {"batch", "seq", "hidden"}, "down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))");
    return h;
  }
  void parameters(const std::string& p, ParamList& out) {
    gate_proj.parameters(p + "gate_proj.", out);
    up_proj.parameters(p + "up_proj.", out);
    down_proj.parameters(p + "down_proj.", out);
  }
};

struct LlamaDecoderLayer {
  LlamaAttention self_attn;  // construction order: self_attn, mlp, input_layernorm, post_attention_layernorm
  LlamaMLP mlp;
  RMSNorm input_layernorm, post_attention_layernorm;
  LlamaDecoderLayer(const LlamaConfig& c, Generator& gen, int64_t layer)
      : self_attn(c, gen, layer), mlp(c, gen), input_layernorm(c.C, c.eps), post_attention_layernorm(c.C, c.eps) {}

  // residual = hidden_states; hidden_states = self.input_layernorm(hidden_states); self_attn; residual
  // + hidden_states; then the same with post_attention_layernorm and mlp. Attention by `attend`.
  template <class Attend>
  Var operator()(const Var& x, Context& ctx, Attend attend, bool last_row = false) const {
    static const PreNormBlockSteps steps{
        "hidden", "input_layernorm", "hidden_states = self.input_layernorm(hidden_states)", "self_attn.", "residual_attn",
        "hidden_states = residual + hidden_states  # after self_attn", "post_attention_layernorm",
        "hidden_states = self.post_attention_layernorm(hidden_states)", "mlp.", "residual_mlp",
        "hidden_states = residual + hidden_states  # after mlp"};
    return pre_norm_block(
        ctx, x, steps, [&](const Var& v) { return input_layernorm(ctx, v); }, attend,
        [&](const Var& v) { return post_attention_layernorm(ctx, v); }, [&](const Var& v) { return mlp(v, ctx); }, last_row);
  }
  void parameters(const std::string& p, ParamList& out) {
    self_attn.parameters(p + "self_attn.", out);
    mlp.parameters(p + "mlp.", out);
    input_layernorm.parameters(p + "input_layernorm.", out);
    post_attention_layernorm.parameters(p + "post_attention_layernorm.", out);
  }
};

class Llama : public Module, public Generative {
 public:
  Llama(const LlamaConfig& c, Generator& gen) : c_(c) {
    if (c.H % c.Hk != 0)
      fail_at("config.num_key_value_heads", "num_key_value_heads (", c.Hk, ") must divide num_attention_heads (", c.H,
              "): each key/value head serves num_attention_heads / num_key_value_heads query heads");
    if (c.D % 2 != 0) fail_at("config.head_dim", "rotary positions rotate pairs of columns: head_dim (", c.D, ") must be even");
    embed_tokens = Tensor::empty({c.V, c.C});  // nn.Embedding(vocab_size, hidden_size): normal_(0, 1)
    gen.embedding_init(embed_tokens.data(), static_cast<size_t>(embed_tokens.numel()));
    for (int64_t i = 0; i < c.L; ++i) layers.emplace_back(c, gen, i);
    norm = RMSNorm(c.C, c.eps);
    init_weights(gen);  // LlamaModel's own post_init()
    // LlamaForCausalLM's nn.Linear lm_head, then its post_init() (lm_head alone is left to initialise),
    // then tie_weights(). Tied, lm_head's values are drawn and dropped: into no table at all when the
    // weights will replace every value (a checkpoint's), so a big model never holds two.
    if (c.tie && gen.skips_values() && c.V * c.C >= 16) {  // (normal_ of fewer values writes them)
      const size_t n = static_cast<size_t>(c.V * c.C);
      gen.linear_init(nullptr, n, nullptr, 0, c.C);  // skipped values: the draws only
      gen.normal_(nullptr, n, 0.0, 0.02);
      lm_head = embed_tokens;
      return;
    }
    lm_head = Linear(c.C, c.V, false, gen).weight;
    normal_init(lm_head, gen);
    if (c.tie) lm_head = embed_tokens;
  }

  Outputs forward(const std::vector<Var>& in, Context& ctx) override { return forward_window(in[0], ctx, nullptr, false); }

  Outputs forward_window(const Var& ids_in, Context& ctx, KVCache* cache, bool last_only) override {
    const std::vector<int64_t> ids = token_ids(ids_in, "input_ids", c_.V);
    const int64_t B = ids_in.size(0), T = ids_in.size(1);
    if (T > block_size())
      fail_at("inputs.input_ids", "input_ids has ", T, " tokens: this model takes at most ", block_size(),
              " in one window (max_position_embeddings, at most ", kMaxWindow, " here)");
    Var x = embed(ids, B, T, ctx);
    std::vector<Var> weights(layers.size());
    for (size_t i = 0; i < layers.size(); ++i) {
      Context::Scope scope(ctx, "model.layers." + std::to_string(i) + ".");
      KVCache::Layer* fill = cache ? &cache->layers[i] : nullptr;
      Var* w = ctx.want_weights ? &weights[i] : nullptr;
      x = layers[i](x, ctx, [&](const Var& a) { return layers[i].self_attn(a, ctx, fill, w); }, i + 1 == layers.size() && last_row_only(ctx, last_only, T));
    }
    if (cache) cache->len = T;
    Outputs out{{"logits", head(x, last_only, ctx)}};
    if (ctx.want_weights) out.push_back({"attention_weights", stack(ctx, weights, 0)});
    return out;
  }

  Var decode(const Var& ids_in, Context& ctx, KVCache& cache) override {
    const std::vector<int64_t> ids = token_ids(ids_in, "input_ids", c_.V);
    const int64_t pos = cache.len;
    if (ids_in.size(1) != 1 || pos >= block_size())
      fail("internal: decode takes one token per row at a position below ", block_size(), ", got ", shape_str(ids_in.shape()), " at ", pos);
    Var x = embed(ids, ids_in.size(0), 1, ctx);
    for (size_t i = 0; i < layers.size(); ++i) {
      Context::Scope scope(ctx, "model.layers." + std::to_string(i) + ".");
      x = layers[i](x, ctx, [&](const Var& a) { return layers[i].self_attn.decode(a, ctx, cache.layers[i], pos); });
    }
    cache.len = pos + 1;
    return head(x, false, ctx);
  }

  KVCache make_cache(int64_t B) const override {
    KVCache cache;
    const Shape shape{B, c_.Hk, block_size(), c_.D};
    // not zeroed: cache_append writes rows before any view reads them, and views end at the rows
    // written (a 124M GPT-2's cache is 75 MB: zeroing it took ~7 ms of every prefill)
    for (int64_t i = 0; i < c_.L; ++i) cache.layers.push_back({Tensor::empty(shape), Tensor::empty(shape)});
    return cache;
  }
  int64_t block_size() const override { return std::min(c_.max_pos, kMaxWindow); }
  int64_t vocab_size() const override { return c_.V; }
  const char* ids_input() const override { return "input_ids"; }
  Generative* generative() override { return this; }

  void parameters(const std::string& p, ParamList& out) override {
    out.emplace_back(p + "model.embed_tokens.weight", &embed_tokens);
    for (size_t i = 0; i < layers.size(); ++i) layers[i].parameters(p + "model.layers." + std::to_string(i) + ".", out);
    norm.parameters(p + "model.norm.", out);
    if (!c_.tie) out.emplace_back(p + "lm_head.weight", &lm_head);  // tied: embed_tokens' tensor, named once
  }
  // Tied, a checkpoint may still hold lm_head.weight (embed_tokens' tensor again); rotary_emb's
  // inv_freq is a buffer the core recomputes.
  bool skips_in_state_dict(const std::string& n) const override {
    return (c_.tie && n == "lm_head.weight") || ends_with(n, ".rotary_emb.inv_freq");
  }
  std::vector<AttentionSpec> attention() const override {
    std::vector<AttentionSpec> out;
    for (size_t i = 0; i < layers.size(); ++i) {
      AttentionSpec s = layers[i].self_attn.spec;
      s.prefix = "model.layers." + std::to_string(i) + ".self_attn.";
      out.push_back(s);
    }
    return out;
  }

 private:
  // _init_weights over LlamaModel's modules in apply() order (children first, in registration
  // order): embed_tokens, then every layer's q, k, v, o, gate, up and down projections; normal_(0,
  // 0.02), biases zeroed (the RMSNorms stay ones).
  static void normal_init(Tensor& t, Generator& gen) { gen.normal_(t.data(), static_cast<size_t>(t.numel()), 0.0, 0.02); }
  void init_weights(Generator& gen) {
    normal_init(embed_tokens, gen);
    for (LlamaDecoderLayer& l : layers)
      for (Linear* lin : {&l.self_attn.q_proj, &l.self_attn.k_proj, &l.self_attn.v_proj, &l.self_attn.o_proj, &l.mlp.gate_proj,
                          &l.mlp.up_proj, &l.mlp.down_proj}) {
        normal_init(lin->weight, gen);
        if (lin->bias.defined()) lin->bias = Tensor::zeros(lin->bias.shape());
      }
  }

  Var embed(const std::vector<int64_t>& ids, int64_t B, int64_t T, Context& ctx) const {
    Var x = embedding(ctx, ctx.param(embed_tokens), ids, {B, T}, "input_ids");
    ctx.step("inputs_embeds", x, {"batch", "seq", "hidden"}, "inputs_embeds = self.embed_tokens(input_ids)");
    return x;
  }

  Var head(Var x, bool last_only, Context& ctx) const {
    x = norm(ctx, x);
    ctx.step("norm", x, {"batch", "seq", "hidden"}, "hidden_states = self.norm(hidden_states)");
    if (last_only && x.size(1) > 1) x = chunk(ctx, x, x.size(1), x.size(1) - 1, 1);
    Var logits = linear(ctx, x, ctx.param(c_.tie ? embed_tokens : lm_head), Var());
    ctx.step("logits", logits, {"batch", "seq", "vocab"}, "logits = self.lm_head(hidden_states[:, slice_indices, :])");
    return logits;
  }

  LlamaConfig c_;
  Tensor embed_tokens, lm_head;
  std::vector<LlamaDecoderLayer> layers;
  RMSNorm norm;
};

std::unique_ptr<Module> make_from(const attn::Config& c, Generator& g) {
  const int64_t H = c.i("num_attention_heads"), C = c.i("hidden_size");
  if (c.i("head_dim") == 0 && C % H != 0)
    fail_at("config.num_attention_heads", "num_attention_heads (", H, ") must divide hidden_size (", C,
            ") when head_dim is not given: each head gets hidden_size / num_attention_heads columns");
  LlamaConfig lc{c.i("vocab_size"), C, c.i("intermediate_size"), c.i("num_hidden_layers"), H,
                 c.i("num_key_value_heads") ? c.i("num_key_value_heads") : H, c.i("head_dim") ? c.i("head_dim") : C / H,
                 c.i("max_position_embeddings"), c.f("rms_norm_eps"), c.d("rope_theta"), c.b("tie_word_embeddings"),
                 c.b("attention_bias"), c.b("mlp_bias"), c.b("qkv_bias"), c.i("sliding_window"), c.i("max_window_layers")};
  const double factor = c.d("rope_scaling_factor"), low = c.d("rope_low_freq_factor"), high = c.d("rope_high_freq_factor");
  const int64_t original = c.i("rope_original_max_position_embeddings");
  if (original > 0) {
    if (!(high > low) || low <= 0)
      fail_at("config.rope_high_freq_factor", "llama3 rope_scaling needs 0 < rope_low_freq_factor < rope_high_freq_factor (got ", low, " and ", high, ")");
    lc.rope_scaling = {factor, low, high, static_cast<double>(original)};
  } else if (factor != 1.0) {
    lc.rope_scaling = {factor, 0, 0, 0};
  }
  return std::make_unique<Llama>(lc, g);
}

}  // namespace

ModuleInfo info_Llama() {
  AttentionSpec s = llama_spec({0, 0, 0, 0, 1, 1, 2, 0, 0.f, 10000.0, false, false, false, false});
  s.heads = 0, s.d_k = s.d_v = 0, s.kv_heads = 0, s.scale = 0.f;  // the module table: numbers come with a config
  s.prefix = "model.layers.*.self_attn.";
  return {"Llama", "Hugging Face", "Llama",
          "Hugging Face's LlamaForCausalLM (also Mistral, Qwen2, SmolLM): token embeddings, num_hidden_layers pre-norm "
          "blocks of RMSNorm, causal self-attention with rotary positions and grouped-query kv heads, and a SwiGLU MLP; "
          "norm, lm_head. Loads a Hub checkpoint's folder as it is (scenario field pretrained); generates with a KV cache.",
          {{"vocab_size", ArgType::Int, true, 0, 1, 262144, "vocabulary size"},
           {"hidden_size", ArgType::Int, true, 0, 1, 8192, "width of the residual stream"},
           {"intermediate_size", ArgType::Int, true, 0, 1, 32768, "width of the MLP's gate and up projections"},
           {"num_hidden_layers", ArgType::Int, true, 0, 1, 128, "layers"},
           {"num_attention_heads", ArgType::Int, true, 0, 1, 256, "query heads"},
           {"num_key_value_heads", ArgType::Int, false, 0, 0, 256, "key/value heads (0: num_attention_heads; 1: multi-query)"},
           {"head_dim", ArgType::Int, false, 0, 0, 1024, "width of a head (0: hidden_size / num_attention_heads)"},
           {"max_position_embeddings", ArgType::Int, false, 2048, 1, 1048576, "longest context (windows here: at most 4096 tokens)"},
           {"rms_norm_eps", ArgType::Float, false, 1e-6, 0, 1, "RMSNorm's epsilon"},
           {"rope_theta", ArgType::Float, false, 10000.0, 1, 1e9, "RoPE frequency base"},
           {"tie_word_embeddings", ArgType::Bool, false, 0, 0, 1, "lm_head.weight is embed_tokens.weight"},
           {"attention_bias", ArgType::Bool, false, 0, 0, 1, "biases on q_proj, k_proj, v_proj and o_proj"},
           {"mlp_bias", ArgType::Bool, false, 0, 0, 1, "biases on gate_proj, up_proj and down_proj"},
           {"qkv_bias", ArgType::Bool, false, 0, 0, 1, "biases on q_proj, k_proj and v_proj only (Qwen2)"},
           {"sliding_window", ArgType::Int, false, 0, 0, 1 << 24,
            "sliding window (Mistral, Qwen2): key j visible from query i only if i - sliding_window < j <= i (0: none)"},
           {"max_window_layers", ArgType::Int, false, 0, 0, 128, "the first layer with the sliding window (Qwen2's; 0: every layer)"},
           {"rope_scaling_factor", ArgType::Float, false, 1.0, 1e-3, 1e3,
            "rope_scaling's factor: the rotary frequencies divided by it (linear), or the low ones (llama3); 1: none"},
           {"rope_low_freq_factor", ArgType::Float, false, 0.0, 0, 1e3, "llama3 rope_scaling's low_freq_factor"},
           {"rope_high_freq_factor", ArgType::Float, false, 0.0, 0, 1e3, "llama3 rope_scaling's high_freq_factor"},
           {"rope_original_max_position_embeddings", ArgType::Int, false, 0, 0, 1 << 24,
            "llama3 rope_scaling's original_max_position_embeddings (0: linear scaling, or none)"}},
          {{"input_ids", InputKind::Ids, false, InputRole::tokens, {"batch", "seq"}, "", "(B,T) token ids"}},
          {"logits", "attention_weights"},
          make_from,
          {s},
          true};
}

}  // namespace attn
