// The outputs and the generation part of an expected result (SCENARIO.md, "Generation"), shared by
// the fixture harness (test_fixtures.cpp) and the checkpoint tests (test_nanogpt.cpp, test_pretrained.cpp).
#pragma once
#include "attention.hpp"
#include "fixtures.hpp"

namespace fixtures {

// Every output of the expected result against the result's output of that name (atol 1e-5, rtol 1e-4).
inline void check_outputs(const attn::Result& r, const json& expected) {
  for (const auto& e : expected["outputs"]) {
    const attn::Tensor* got = nullptr;
    for (const auto& o : r.outputs)
      if (o.name == e["name"].get<std::string>()) got = &o.value;
    REQUIRE(got != nullptr);
    const attn::Tensor c = got->contiguous();
    const Diff d = compare(c.data(), values(e));
    INFO(e["name"].get<std::string>() << ": max |core - reference| = " << d.max_abs);
    CHECK(d.ok);
  }
}

// Generation (SCENARIO.md, "Generation"): the ids exactly, and per new token its ids, the ids of
// the most probable tokens (exactly) and their probabilities (atol 1e-5, rtol 1e-4).
inline void check_generation(const attn::Result& r, const json& expected) {
  CHECK(json(r.ids) == expected["ids"]);
  const auto& want = expected["generated"];
  REQUIRE(r.generated.size() == want.size());
  for (size_t t = 0; t < want.size(); ++t) {
    const attn::GeneratedToken& g = r.generated[t];
    INFO("new token " << t << " (" << g.mode << ")");
    CHECK(json(g.ids) == want[t]["ids"]);
    REQUIRE(g.top.size() == want[t]["top_ids"].size());
    for (size_t b = 0; b < g.top.size(); ++b) {
      std::vector<int64_t> ids;
      std::vector<float> probs;
      for (const attn::TopToken& e : g.top[b]) ids.push_back(e.id), probs.push_back(e.p);
      CHECK(json(ids) == want[t]["top_ids"][b]);
      const std::vector<float> p = numbers(want[t]["top_probs"][b]);
      REQUIRE(probs.size() == p.size());
      const Diff d = compare(probs.data(), p);
      INFO("row " << b << ": max |core - pytorch| probability = " << d.max_abs);
      CHECK(d.ok);
    }
  }
}

}  // namespace fixtures
