// Generation (core/generate.hpp, SCENARIO.md "Generation"): the KV cache gives the logits of
// recomputing the whole window every step (atol 1e-5), on both kernel tables, across block_size;
// each decode step computes one position against a cache that grows (B,H,t,D); the sampling
// rules (greedy, top_k, top_p); the token-by-token API; errors. PyTorch's own ids and
// probabilities are checked by the gpt_generate_* fixtures (test_fixtures.cpp). A hidden case,
// "[.timing]", measures a decode step with and without the cache.
#include <chrono>
#include <cmath>
#include <cstdio>

#include "attention.hpp"
#include "fixtures.hpp"
#include "scenario/session.hpp"

namespace {

std::string gpt_scenario(const std::string& config, const std::string& idx_shape, const std::string& ids, const std::string& generate,
                         bool trace = false, int seed = 5) {
  return R"({"module": "GPT", "seed": )" + std::to_string(seed) + R"(, "config": )" + config + R"(, "trace": )" +
         (trace ? "true" : "false") + R"(, "inputs": [{"name": "idx", "shape": )" + idx_shape + R"(, "data": )" + ids +
         R"(}], "generate": )" + generate + "}";
}

const char* kConfig = R"({"vocab_size": 65, "block_size": 32, "n_layer": 3, "n_head": 4, "n_embd": 32})";

// max |a - b| over every token's logits; the ids must agree for the comparison to mean anything
double max_logits_diff(const attn::Result& a, const attn::Result& b) {
  REQUIRE(a.ids == b.ids);
  REQUIRE(a.generated.size() == b.generated.size());
  double worst = 0;
  for (size_t t = 0; t < a.generated.size(); ++t) {
    const attn::Tensor& x = a.generated[t].logits;
    const attn::Tensor& y = b.generated[t].logits;
    REQUIRE(x.shape() == y.shape());
    for (int64_t i = 0; i < x.numel(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(x.data()[i]) - y.data()[i]));
  }
  return worst;
}

attn::Result run_with_cache(std::string scenario, bool cache) {
  scenario.insert(scenario.rfind('}', scenario.size() - 2), cache ? R"(, "cache": true)" : R"(, "cache": false)");
  return attn::run(attn::parse_scenario(scenario));
}

}  // namespace

TEST_CASE("cached generation gives the logits of recomputing the whole window every step", "[generate]") {
  const std::vector<std::string> cases = {
      gpt_scenario(kConfig, "[2, 5]", "[1, 2, 3, 4, 5, 60, 61, 62, 63, 64]", R"({"max_new_tokens": 40, "temperature": 0})"),
      gpt_scenario(kConfig, "[1, 3]", "[7, 7, 7]", R"({"max_new_tokens": 24, "temperature": 1.0, "top_k": 20})"),
      gpt_scenario(R"({"vocab_size": 17, "block_size": 9, "n_layer": 2, "n_head": 3, "n_embd": 12, "bias": false})", "[1, 12]",
                   "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]", R"({"max_new_tokens": 6, "temperature": 0.7, "top_p": 0.9})"),
  };
  for (bool simd : {false, true}) {
    attn::set_use_simd(simd);
    for (const std::string& sc : cases) {
      const attn::Result cached = run_with_cache(sc, true), full = run_with_cache(sc, false);
      const double d = max_logits_diff(cached, full);
      INFO((simd ? "SIMD" : "scalar") << ": max |cached - recomputed| logits = " << d << " over " << cached.generated.size()
                                      << " tokens; " << sc.substr(0, 120));
      CHECK(d <= 1e-5);
      CHECK(cached.generated.back().mode != "full");
      CHECK(full.generated.back().mode == "full");
    }
  }
  attn::set_use_simd(true);
}

TEST_CASE("a decode step computes one position against a cache that grows (B, H, t, D)", "[generate][steps]") {
  const attn::Result r = attn::run(attn::parse_scenario(
      gpt_scenario(kConfig, "[2, 4]", "[1, 2, 3, 4, 5, 6, 7, 8]", R"({"max_new_tokens": 31, "temperature": 0})", true)));
  REQUIRE(r.generated.size() == 31);
  const auto find = [](const std::vector<attn::Step>& steps, const std::string& name) -> const attn::Step* {
    for (const attn::Step& s : steps)
      if (s.name == name) return &s;
    return nullptr;
  };
  for (size_t k = 0; k < r.generated.size(); ++k) {
    const attn::GeneratedToken& g = r.generated[k];
    const int64_t t = g.position;  // positions the forward saw: the sequence so far (the new id goes at index t)
    INFO("token " << k << " at position " << g.position << ": " << g.mode);
    if (k == 0) {  // the prompt's window: its steps are the result's own
      CHECK(g.mode == "prefill");
      CHECK(g.steps.empty());
      CHECK(find(r.steps, "transformer.h.0.attn.q")->value.shape() == attn::Shape{2, 4, 4, 8});
    } else if (t <= 32) {
      CHECK(g.mode == "decode");
      CHECK(find(g.steps, "transformer.h.0.attn.q")->value.shape() == attn::Shape{2, 4, 1, 8});
      CHECK(find(g.steps, "transformer.h.2.attn.k_cache")->value.shape() == attn::Shape{2, 4, t, 8});
      CHECK(find(g.steps, "transformer.h.1.attn.v_cache")->op == attn::Op::cache_append);
      CHECK(find(g.steps, "transformer.h.1.attn.att_softmax")->value.shape() == attn::Shape{2, 4, 1, t});
      CHECK(find(g.steps, "transformer.h.0.attn.att_masked") == nullptr);  // the new query sees every key
      CHECK(find(g.steps, "logits")->value.shape() == attn::Shape{2, 1, 65});
      CHECK(find(g.steps, "pos_emb")->value.shape() == attn::Shape{1, 32});
    } else {  // the sequence outgrew block_size: the window again (positions restart at 0)
      CHECK(g.mode == "prefill");
      CHECK(find(g.steps, "transformer.h.0.attn.q")->value.shape() == attn::Shape{2, 4, 32, 8});
    }
    const int64_t cached = std::min<int64_t>(t, 32);
    CHECK(g.cache_shape == attn::Shape{2, 4, cached, 8});
    CHECK(g.cache_bytes == 2 * 3 * 2 * 4 * cached * 8 * 4);
  }
  // the cached keys of an earlier step stay as they were when the cache grows past them
  const attn::Step* early = find(r.generated[3].steps, "transformer.h.0.attn.k_cache");
  const attn::Step* later = find(r.generated[9].steps, "transformer.h.0.attn.k_cache");
  for (int64_t d = 0; d < 8; ++d) CHECK(early->value.data()[d] == later->value.data()[d]);
  CHECK(r.ids[0].size() == 35);
}

TEST_CASE("a Llama-style GPT (rope, grouped kv heads, a window) generates with a cache of num_kv_heads heads, as without it", "[generate][llama]") {
  // 4 query heads over 2 (then 1) kv heads, a window of 5 with a sink, block_size 12: the cache's
  // decode steps mask the keys that left the window, and the sequence outgrows block_size
  const std::string config = R"({"vocab_size": 29, "block_size": 12, "n_layer": 2, "n_head": 4, "n_embd": 16, "rope": true, )";
  for (const char* kv : {"2", "1"}) {
    const std::string sc = gpt_scenario(config + R"("num_kv_heads": )" + kv + R"(, "window": 5, "sink_tokens": 1})", "[2, 3]",
                                        "[1, 2, 3, 20, 21, 22]", R"({"max_new_tokens": 16, "temperature": 0.8})", true);
    const int64_t Hk = std::stoll(kv);
    for (bool simd : {false, true}) {
      attn::set_use_simd(simd);
      const attn::Result cached = run_with_cache(sc, true), full = run_with_cache(sc, false);
      const double d = max_logits_diff(cached, full);
      INFO((simd ? "SIMD" : "scalar") << ", num_kv_heads " << kv << ": max |cached - recomputed| logits = " << d);
      CHECK(d <= 1e-5);
      size_t decodes = 0;
      for (const attn::GeneratedToken& g : cached.generated) {
        const int64_t t = std::min<int64_t>(g.position, 12);
        CHECK(g.cache_shape == attn::Shape{2, Hk, t, 4});
        CHECK(g.cache_bytes == 2 * 2 * 2 * Hk * t * 4 * 4);  // k and v, 2 layers, B = 2, float32: 64 * Hk bytes per position and row
        if (g.mode != "decode") continue;
        ++decodes;
        for (const attn::Step& s : g.steps) {
          if (s.name == "transformer.h.1.attn.k_cache") CHECK(s.value.shape() == attn::Shape{2, Hk, t, 4});
          if (s.name == "transformer.h.1.attn.att_masked") CHECK(t > 5);  // only once keys have left the window
        }
      }
      CHECK(decodes >= 8);
    }
  }
  attn::set_use_simd(true);
}

TEST_CASE("a GPT's Llama-style options are refused with the rule they break", "[generate][llama][errors]") {
  const auto field_of = [](const std::string& config) {
    try {
      attn::run(attn::parse_scenario(gpt_scenario(config, "[1, 2]", "[1, 2]", R"({"max_new_tokens": 1})")));
    } catch (const attn::Error& e) {
      INFO(e.what());
      return e.field();
    }
    return std::string("no error");
  };
  const std::string base = R"({"vocab_size": 9, "block_size": 8, "n_layer": 1, "n_head": 4, "n_embd": 12, )";
  CHECK(field_of(base + R"("num_kv_heads": 3})") == "config.num_kv_heads");
  CHECK_THROWS_WITH(attn::run_json(gpt_scenario(base + R"("num_kv_heads": 3})", "[1, 2]", "[1, 2]", R"({"max_new_tokens": 1})")),
                    Catch::Contains("num_kv_heads (3) must divide n_head (4)"));
  CHECK(field_of(base + R"("num_kv_heads": 8})") == "config.num_kv_heads");
  CHECK(field_of(R"({"vocab_size": 9, "block_size": 8, "n_layer": 1, "n_head": 4, "n_embd": 12, "rope": true})") == "config.rope");
  CHECK(field_of(base + R"("window": -1})") == "config.window");
  CHECK(field_of(base + R"("num_kv_heads": 2, "window": 3})") == "no error");
}

TEST_CASE("greedy picks the largest logit; top_k 1 and a tiny top_p sample it too", "[generate]") {
  const std::string greedy = gpt_scenario(kConfig, "[1, 3]", "[10, 20, 30]", R"({"max_new_tokens": 8, "temperature": 0})");
  const attn::Result g = attn::run(attn::parse_scenario(greedy));
  for (const attn::GeneratedToken& t : g.generated) {
    const float* row = t.logits.data();
    CHECK(t.ids[0] == std::max_element(row, row + 65) - row);
    CHECK(t.top[0][0].id == t.ids[0]);
  }
  for (const char* spec : {R"({"max_new_tokens": 8, "temperature": 1.5, "top_k": 1})", R"({"max_new_tokens": 8, "temperature": 1.5, "top_p": 0.001})"}) {
    const attn::Result r = attn::run(attn::parse_scenario(gpt_scenario(kConfig, "[1, 3]", "[10, 20, 30]", spec)));
    INFO(spec);
    CHECK(r.ids == g.ids);
    for (const attn::GeneratedToken& t : r.generated) {
      REQUIRE(t.top[0].size() == 1);  // one token left: probability 1
      CHECK(t.top[0][0].p == 1.f);
    }
  }
}

TEST_CASE("the sampling distribution: temperature, top_k keeping ties, top_p keeping at least one", "[generate]") {
  attn::GenerateSpec spec;
  std::vector<float> x = {1.f, 3.f, 3.f, 2.f, 0.f};
  spec.top_k = 2;
  attn::next_token_distribution(x.data(), 5, spec);
  CHECK(x[0] == 0.f);
  CHECK(x[1] == x[2]);
  CHECK(x[3] == 0.f);
  CHECK(std::fabs(x[1] - 0.5f) < 1e-6);
  std::vector<float> y = {0.f, 5.f, 1.f};
  attn::GenerateSpec p;
  p.top_p = 1e-6;
  attn::next_token_distribution(y.data(), 3, p);
  CHECK(y == std::vector<float>{0.f, 1.f, 0.f});
  std::vector<float> z = {0.f, std::log(2.f), std::log(7.f)};  // p = 0.1, 0.2, 0.7
  p.top_p = 0.75;  // 0.7 alone is not > 0.75: the 0.2 is kept too (cumulative from below: 0.1 <= 0.25)
  attn::next_token_distribution(z.data(), 3, p);
  CHECK(z[0] == 0.f);
  CHECK(std::fabs(z[1] - 2.f / 9.f) < 1e-6);
  std::vector<float> w = {0.f, 1.f};
  attn::GenerateSpec t;
  t.temperature = 0.5;
  attn::next_token_distribution(w.data(), 2, t);
  CHECK(std::fabs(w[1] - 1.f / (1.f + std::exp(-2.f))) < 1e-6);
}

TEST_CASE("Generation::next continues the prompt token by token as run() does", "[generate]") {
  const std::string sc = gpt_scenario(kConfig, "[1, 2]", "[3, 4]", R"({"max_new_tokens": 12, "temperature": 0.9})");
  const attn::Result all = attn::run(attn::parse_scenario(sc));
  attn::Session session(attn::parse_scenario(sc));
  std::unique_ptr<attn::Generation> g = session.generation();
  for (int k = 0; k < 12; ++k) g->next();
  CHECK(g->ids() == all.ids);
  CHECK(g->produced() == 12);
  CHECK(g->cache().len == 13);
}

TEST_CASE("generate errors name their field; a prompt longer than block_size is cropped", "[generate][errors]") {
  const auto field_of = [](const std::string& text) {
    try {
      attn::run_json(text);
    } catch (const attn::Error& e) {
      return e.field();
    }
    return std::string("(no error)");
  };
  const std::string ok = R"({"max_new_tokens": 2})";
  CHECK(field_of(gpt_scenario(kConfig, "[1, 2]", "[1, 2]", R"({"max_new_tokens": 0})")) == "generate.max_new_tokens");
  CHECK(field_of(gpt_scenario(kConfig, "[1, 2]", "[1, 2]", R"({"temperature": 1})")) == "generate.max_new_tokens");
  CHECK(field_of(gpt_scenario(kConfig, "[1, 2]", "[1, 2]", R"({"max_new_tokens": 2, "temperature": -0.5})")) == "generate.temperature");
  CHECK(field_of(gpt_scenario(kConfig, "[1, 2]", "[1, 2]", R"({"max_new_tokens": 2, "top_k": 0})")) == "generate.top_k");
  CHECK(field_of(gpt_scenario(kConfig, "[1, 2]", "[1, 2]", R"({"max_new_tokens": 2, "top_p": 0})")) == "generate.top_p");
  CHECK(field_of(gpt_scenario(kConfig, "[1, 2]", "[1, 2]", R"({"max_new_tokens": 2, "beam": 3})")) == "generate");
  CHECK(field_of(gpt_scenario(kConfig, "[1, 2]", "[1, 70]", ok)) == "inputs.idx");
  // a fraction or a negative is no token id: refused as the forward refuses it, never cut to one
  for (const char* ids : {"[1, 2.5]", "[1, -0.5]"})
    CHECK_THROWS_WITH(attn::run_json(gpt_scenario(kConfig, "[1, 2]", ids, ok)),
                      Catch::Matches("input 'idx' value (2\\.5|-0\\.5) at position 1 is not a token id: ids must be integers in \\[0, 65\\) \\(vocab_size\\)"));
  CHECK(field_of(R"({"module": "CausalTransformer", "config": {"vocab_size": 5, "emb_dim": 4, "num_heads": 2, "ffn_dim": 4,
      "num_layers": 1, "context_length": 4}, "inputs": [{"name": "idx", "shape": [1, 2], "data": [1, 2]}], "generate": {"max_new_tokens": 1}})") ==
        "generate");
  std::string train = gpt_scenario(kConfig, "[1, 2]", "[1, 2]", ok);
  train.insert(1, R"("train": true, )");
  CHECK(field_of(train) == "train");
  // 40 tokens for block_size 32: cropped to the last 32, as nanoGPT's generate crops idx
  std::string ids = "[";
  for (int i = 0; i < 40; ++i) ids += (i ? ", " : "") + std::to_string(i);
  const attn::Result r = attn::run(attn::parse_scenario(gpt_scenario(kConfig, "[1, 40]", ids + "]", ok)));
  CHECK(r.outputs[0].value.shape() == attn::Shape{1, 32, 65});
  CHECK(r.ids[0].size() == 42);
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "GPT", "config": )" + std::string(kConfig) +
                                   R"(, "inputs": [{"name": "idx", "shape": [1, 40], "data": )" + ids + "]}]}"),
                    Catch::Contains("Cannot forward sequence of length 40, block size is only 32"));
}

// build/native/attention_tests "[.timing]": one decode step with and without the KV cache at
// T = 256 (n_layer 4, n_embd 256, n_head 4, vocab 65), the median of several.
TEST_CASE("timing: a decode step at T=256 with and without the KV cache", "[.timing]") {
  const std::string config = R"({"vocab_size": 65, "block_size": 256, "n_layer": 4, "n_head": 4, "n_embd": 256})";
  std::string ids = "[";
  for (int i = 0; i < 255; ++i) ids += (i ? ", " : "") + std::to_string(i % 65);
  ids += "]";
  for (bool cache : {true, false}) {
    const std::string sc = gpt_scenario(config, "[1, 255]", ids, std::string(R"({"max_new_tokens": 2, "temperature": 0, "cache": )") +
                                                                     (cache ? "true" : "false") + "}");
    std::vector<double> ms;
    for (int rep = 0; rep < 9; ++rep) {
      attn::Session session(attn::parse_scenario(sc));
      std::unique_ptr<attn::Generation> g = session.generation();
      g->next();  // the prompt's window (255 positions)
      const auto t0 = std::chrono::steady_clock::now();
      g->next();  // position 255: the 256th
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("decode step at T=256, %s: median %.3f ms [min %.3f, max %.3f] (%s kernels)\n", cache ? "KV cache" : "no cache",
                ms[ms.size() / 2], ms.front(), ms.back(), attn::kernels().name);
  }
}
