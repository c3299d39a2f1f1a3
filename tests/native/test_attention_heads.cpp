// attention_heads (ops.hpp): the blocked attention the multi-head modules use when nothing is
// traced must give the unfused ops' numbers bit for bit (same kernels, same order), weights
// included, on awkward sizes (T = 1, T not a multiple of the row block, S != T, odd head dims),
// on both kernel tables; and the modules' outputs must not depend on tracing.
#include <cmath>

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

// The seed's unfused ops, as the traced path of the modules runs them (graph.hpp).
std::pair<attn::Tensor, attn::Tensor> unfused(const attn::Tensor& q, const attn::Tensor& k, const attn::Tensor& v, int64_t H,
                                              float scale) {
  using namespace attn;
  Generator gen(0);
  Context ctx(gen, false, false);
  const Var qh = split_heads(ctx, q, H), kh = split_heads(ctx, k, H), vh = split_heads(ctx, v, H);
  const Var weights = softmax(ctx, div_scalar(ctx, matmul_bt(ctx, qh, kh), scale));
  return {merge_heads(ctx, weighted_sum(ctx, weights, vh)).t, weights.t};
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

TEST_CASE("attention_heads names the shapes it cannot take", "[attention_heads][errors]") {
  attn::Generator gen(1);
  const attn::Tensor q = randn({1, 3, 6}, gen), k = randn({1, 4, 6}, gen), v = randn({1, 5, 6}, gen);
  CHECK_THROWS_WITH(attn::attention_heads(q, k, v, 2, 1.f), Catch::Contains("must be (B,T,H*D), (B,S,H*D), (B,S,H*D)"));
  CHECK_THROWS_WITH(attn::attention_heads(q, k, k, 4, 1.f), Catch::Contains("H (4) dividing"));
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
