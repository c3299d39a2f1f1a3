// attention_heads (ops.hpp): the blocked attention the multi-head modules use when nothing is
// traced must give the unfused ops' numbers bit for bit (same kernels, same order), weights
// included, on awkward sizes (T = 1, T not a multiple of the row block, S != T, odd head dims),
// on both kernel tables; and the modules' outputs must not depend on tracing.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "attention.hpp"
#include "fixtures.hpp"

namespace {

attn::Tensor randn(const attn::Shape& shape, attn::Generator& gen) {
  attn::Tensor t = attn::Tensor::empty(shape);
  gen.randn(t.data(), static_cast<size_t>(t.numel()));
  return t;
}

double max_diff(const attn::Tensor& a_, const attn::Tensor& b_) {
  const attn::Tensor a = a_.contiguous(), b = b_.contiguous();
  REQUIRE(a.shape() == b.shape());
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::fabs(double(a.data()[i]) - double(b.data()[i])));
  return m;
}

// The unfused ops, as the traced path of the modules runs them (graph.hpp), on split heads:
// q (B,H,T,D), k and v (B,Hk,S,D) repeated to H heads (repeat_kv), scaled and masked by `rule`.
std::pair<attn::Tensor, attn::Tensor> unfused(const attn::Var& qh, attn::Var kh, attn::Var vh, const attn::ScoreRule& rule) {
  using namespace attn;
  Generator gen(0);
  Context ctx(gen, false, false);
  const int64_t groups = qh.size(1) / kh.size(1);
  if (groups > 1) kh = repeat_kv(ctx, kh, groups), vh = repeat_kv(ctx, vh, groups);
  Var scores = matmul_bt(ctx, qh, kh);
  scores = rule.divide ? div_scalar(ctx, scores, rule.scale) : mul_scalar(ctx, scores, rule.scale);
  if (rule.causal) scores = masked_fill(ctx, scores, causal_mask(scores.size(-2), scores.size(-1)), rule.fill, Attrs{});
  const Var weights = softmax(ctx, scores);
  return {merge_heads(ctx, weighted_sum(ctx, weights, vh)).t, weights.t};
}

// Seed 000's: (B,T,H*D) inputs, heads split by view and transpose, scores divided.
std::pair<attn::Tensor, attn::Tensor> unfused(const attn::Tensor& q, const attn::Tensor& k, const attn::Tensor& v, int64_t H,
                                              float scale) {
  using namespace attn;
  Generator gen(0);
  Context ctx(gen, false, false);
  ScoreRule rule;
  rule.scale = scale;
  return unfused(split_heads(ctx, q, H), split_heads(ctx, k, H), split_heads(ctx, v, H), rule);
}

}  // namespace

TEST_CASE("attention_heads equals the unfused ops bit for bit on awkward sizes", "[attention_heads][ops]") {
  struct Case { int64_t B, T, S, C, H; };
  const Case cases[] = {{1, 1, 1, 4, 1}, {2, 3, 5, 6, 2}, {1, 65, 65, 24, 3}, {1, 130, 7, 10, 2}, {3, 17, 129, 36, 4}, {1, 200, 200, 64, 8}};
  for (bool simd : {true, false}) {
    attn::set_use_simd(simd);
    for (const Case& c : cases) {
      attn::Generator gen(7);
      const attn::Tensor q = randn({c.B, c.T, c.C}, gen), k = randn({c.B, c.S, c.C}, gen), v = randn({c.B, c.S, c.C}, gen);
      const float scale = static_cast<float>(std::sqrt(double(c.C / c.H)));
      attn::Tensor weights;
      const attn::Tensor out = attn::attention_heads(q, k, v, c.H, scale, &weights);
      const auto [ref_out, ref_weights] = unfused(q, k, v, c.H, scale);
      const double d_out = max_diff(out, ref_out), d_w = max_diff(weights, ref_weights);
      INFO((simd ? "simd" : "scalar") << " B=" << c.B << " T=" << c.T << " S=" << c.S << " C=" << c.C << " H=" << c.H
                                      << ": maxdiff output " << d_out << ", weights " << d_w);
      CHECK(d_out == 0.0);
      CHECK(d_w == 0.0);
    }
  }
  attn::set_use_simd(true);
}

TEST_CASE("causal attention_heads equals the unfused causal ops bit for bit, keys past a block skipped", "[attention_heads][ops]") {
  // GPT's and Llama's blocks when nothing is traced (attention_spec.hpp, causal_heads): q, k, v
  // as column slices of one (B,T,(H+2Hk)*D) projection, grouped kv heads, scores multiplied (nanoGPT,
  // Llama) or divided, a fill of -inf (a block stops early) or -1e9 (every key computed); T across
  // the 64-row blocks and the softmax's two-vector stride of each table (16, 32 keys)
  struct Case { int64_t B, T, H, Hk, D; };
  const Case cases[] = {{1, 1, 2, 2, 4}, {2, 5, 3, 3, 6}, {1, 33, 4, 2, 8}, {1, 64, 2, 1, 16}, {2, 65, 4, 4, 5},
                        {1, 100, 6, 2, 12}, {1, 130, 2, 2, 64}, {1, 200, 4, 1, 20}};
  std::vector<const attn::Kernels*> tables = attn::available_kernels();
  tables.push_back(nullptr);  // the scalar reference
  for (const attn::Kernels* table : tables) {
    attn::set_use_simd(table != nullptr);
    if (table) attn::set_simd_kernels(table);
    for (const Case& c : cases)
      for (const bool divide : {false, true})
        for (const float fill : {-INFINITY, -1e9f}) {
          attn::Generator gen(11);
          const int64_t C = c.H * c.D, Ck = c.Hk * c.D;
          const attn::Tensor qkv = randn({c.B, c.T, C + 2 * Ck}, gen);
          const attn::Tensor q = qkv.slice(2, 0, C), k = qkv.slice(2, C, C + Ck), v = qkv.slice(2, C + Ck, C + 2 * Ck);
          attn::Context ctx(gen, false, false);
          attn::ScoreRule rule;
          rule.scale = divide ? std::sqrt(float(c.D)) : float(1.0 / std::sqrt(double(c.D))), rule.divide = divide;
          rule.causal = true, rule.fill = fill;
          const attn::Tensor out = attn::attention_heads(q, k, v, c.H, rule);
          attn::Tensor weights;
          const attn::Tensor with_weights = attn::attention_heads(q, k, v, c.H, rule, &weights);
          const auto [ref_out, ref_weights] =
              unfused(attn::split_heads(ctx, q, c.H), attn::split_heads(ctx, k, c.Hk), attn::split_heads(ctx, v, c.Hk), rule);
          INFO((table ? table->name : "scalar") << " B=" << c.B << " T=" << c.T << " H=" << c.H << " Hk=" << c.Hk << " D=" << c.D
                                                << (divide ? " divided" : " multiplied") << " fill " << fill);
          CHECK(max_diff(out, ref_out) == 0.0);
          CHECK(max_diff(with_weights, ref_out) == 0.0);
          CHECK(max_diff(weights, ref_weights) == 0.0);
        }
  }
  attn::set_simd_kernels(nullptr);
  attn::set_use_simd(true);
}

TEST_CASE("attention_heads names the shapes it cannot take", "[attention_heads][errors]") {
  attn::Generator gen(1);
  const attn::Tensor q = randn({1, 3, 6}, gen), k = randn({1, 4, 6}, gen), v = randn({1, 5, 6}, gen);
  CHECK_THROWS_WITH(attn::attention_heads(q, k, v, 2, 1.f), Catch::Contains("must be (B,T,H*D), (B,S,Hk*D), (B,S,Hk*D)"));
  CHECK_THROWS_WITH(attn::attention_heads(q, k, k, 4, 1.f), Catch::Contains("H (4) dividing"));
  const attn::Tensor k4 = randn({1, 4, 4}, gen);  // two heads of 3 columns: 4 columns are no whole kv heads
  CHECK_THROWS_WITH(attn::attention_heads(q, k4, k4, 2, 1.f), Catch::Contains("Hk dividing H"));
  const attn::Tensor k9 = randn({1, 4, 9}, gen);  // 3 kv heads of 3 columns do not divide 2 query heads
  CHECK_THROWS_WITH(attn::attention_heads(q, k9, k9, 2, 1.f), Catch::Contains("Hk dividing H"));
  const attn::Tensor empty = attn::Tensor::empty({1, 3, 0});  // no columns: an empty output, as before heads were grouped
  CHECK(attn::attention_heads(empty, empty, empty, 2, 1.f).shape() == attn::Shape{1, 3, 0});
}

TEST_CASE("multi-head modules give the same output traced, untraced and without weights", "[attention_heads][modules]") {
  for (const char* id : {"MultiHeadAttention", "SplitHeadsMultiHeadAttention"}) {
    const attn::ModuleInfo& info = attn::module_info(id);
    const attn::Config config = attn::make_config(info, {{"d_model", 24}, {"num_heads", 3}});
    attn::Tensor outputs[3], weights[3];
    for (int mode = 0; mode < 3; ++mode) {
      attn::Generator gen(0);
      auto module = info.make(config, gen);
      const attn::Tensor x = randn({2, 70, 24}, gen);
      attn::Context ctx(gen, false, mode == 0);
      ctx.want_weights = mode != 2;
      attn::Outputs out = module->forward({x, x, x, attn::Tensor()}, ctx);
      outputs[mode] = out[0].value.t;
      weights[mode] = out[1].value.t;
    }
    INFO(id << ": maxdiff traced/untraced " << max_diff(outputs[0], outputs[1]) << ", without weights " << max_diff(outputs[0], outputs[2]));
    CHECK(max_diff(outputs[0], outputs[1]) == 0.0);
    CHECK(max_diff(outputs[0], outputs[2]) == 0.0);
    CHECK(max_diff(weights[0], weights[1]) == 0.0);
    CHECK_FALSE(weights[2].defined());
  }
}

TEST_CASE("causal language models give the same logits traced and in one pass", "[attention_heads][modules]") {
  // GPT (nanoGPT's, and with rotary positions and grouped kv heads) and Llama: a forward that
  // names nothing and keeps no weights (generation's prefill) runs causal_heads, a traced one the
  // seed's lines; the logits must be the same bytes, over more than one block of 64 queries.
  struct Model { const char* id; std::map<std::string, double> config; };
  const Model models[] = {
      {"GPT", {{"vocab_size", 50}, {"block_size", 160}, {"n_layer", 2}, {"n_head", 4}, {"n_embd", 32}}},
      {"GPT", {{"vocab_size", 50}, {"block_size", 160}, {"n_layer", 2}, {"n_head", 4}, {"n_embd", 32}, {"rope", 1}, {"num_kv_heads", 2}}},
      {"Llama", {{"vocab_size", 50}, {"hidden_size", 32}, {"intermediate_size", 48}, {"num_hidden_layers", 2},
                 {"num_attention_heads", 4}, {"num_key_value_heads", 1}}},
  };
  for (const Model& m : models) {
    const attn::ModuleInfo& info = attn::module_info(m.id);
    const attn::Config config = attn::make_config(info, m.config);
    attn::Tensor logits[2];
    for (int traced = 0; traced < 2; ++traced) {
      attn::Generator gen(3);
      auto module = info.make(config, gen);
      attn::Tensor idx = attn::Tensor::empty({2, 150});
      for (int64_t i = 0; i < idx.numel(); ++i) idx.data()[i] = static_cast<float>((i * 7 + 3) % 50);
      attn::Context ctx(gen, false, traced == 1);
      ctx.want_weights = traced == 1;
      logits[traced] = module->forward({ctx.input(idx, "idx")}, ctx)[0].value.t;
    }
    INFO(m.id << " (" << m.config.size() << " settings): maxdiff " << max_diff(logits[0], logits[1]));
    CHECK(max_diff(logits[0], logits[1]) == 0.0);
  }
}
