// The Generator against PyTorch 1.13's own streams (tests/fixtures/rng.json, written by
// scripts/make_rng_fixtures.py): torch.manual_seed(seed), then each op in order on one generator,
// so a wrong number of draws shows up in every later op. Uniform draws and bernoulli_ must match
// exactly; normal draws within 1e-5 (PyTorch's >= 16-element path uses vectorised log/sin/cos).
#include "attention.hpp"
#include "fixtures.hpp"

namespace {

std::vector<float> replay(attn::Generator& g, const fixtures::json& op) {
  const std::string kind = op["op"].get<std::string>();
  auto n = [&](const char* key) { return op[key].get<size_t>(); };
  std::vector<float> out;
  if (kind == "rand") {
    out.resize(n("n"));
    g.rand(out.data(), out.size());
  } else if (kind == "randn") {
    out.resize(n("n"));
    g.randn(out.data(), out.size());
  } else if (kind == "uniform_") {
    out.resize(n("n"));
    g.uniform_(out.data(), out.size(), op["from"].get<double>(), op["to"].get<double>());
  } else if (kind == "normal_") {
    out.resize(n("n"));
    g.normal_(out.data(), out.size(), op["mean"].get<double>(), op["std"].get<double>());
  } else if (kind == "bernoulli_") {
    out.resize(n("n"));
    g.bernoulli_(out.data(), out.size(), op["p"].get<double>());
  } else if (kind == "linear") {
    const size_t in = n("in"), o = n("out");
    const bool bias = op["bias"].get<bool>();
    out.resize(in * o + (bias ? o : 0));
    g.linear_init(out.data(), in * o, bias ? out.data() + in * o : nullptr, bias ? o : 0, static_cast<int64_t>(in));
  } else if (kind == "embedding") {
    out.resize(n("num") * n("dim"));
    g.embedding_init(out.data(), out.size());
  } else {
    FAIL("unknown op in rng.json: " << kind);
  }
  return out;
}

TEST_CASE("the generator reproduces PyTorch's streams op by op", "[random]") {
  const auto doc = fixtures::json::parse(fixtures::read_text(fixtures::dir() + "/rng.json"));
  REQUIRE(doc["streams"].size() >= 10);
  size_t checked = 0;
  for (const auto& stream : doc["streams"]) {
    attn::Generator g(stream["seed"].get<uint64_t>());
    for (const auto& op : stream["ops"]) {
      const std::vector<float> got = replay(g, op);
      const std::vector<float> want = fixtures::numbers(op["values"]);
      const std::string kind = op["op"].get<std::string>();
      INFO("seed " << stream["seed"].get<uint64_t>() << ", " << op.dump().substr(0, 80));
      REQUIRE(got.size() == want.size());
      const bool normal = kind == "randn" || kind == "normal_" || kind == "embedding";
      const fixtures::Diff d = fixtures::compare(got.data(), want, normal ? 1e-5 : 0.0, 0.0);
      INFO("max |generator - pytorch| = " << d.max_abs << " at " << d.worst);
      CHECK(d.ok);
      checked += got.size();
    }
  }
  CHECK(checked > 500);
}

// tests/fixtures/rng_sampling.json: exponential_ and torch.multinomial(probs, 1), what nanoGPT's
// generate() draws, interleaved with rand/randn so the generator's state after each is checked too.
TEST_CASE("exponential_ and multinomial(probs, 1) reproduce PyTorch's draws exactly", "[random][generate]") {
  const auto doc = fixtures::json::parse(fixtures::read_text(fixtures::dir() + "/rng_sampling.json"));
  size_t checked = 0;
  for (const auto& stream : doc["streams"]) {
    attn::Generator g(stream["seed"].get<uint64_t>());
    for (const auto& op : stream["ops"]) {
      const std::string kind = op["op"].get<std::string>();
      INFO("seed " << stream["seed"].get<uint64_t>() << ", " << op.dump().substr(0, 80));
      std::vector<float> got;
      if (kind == "exponential_") {
        got.resize(op["n"].get<size_t>());
        g.exponential_(got.data(), got.size(), op["lambd"].get<double>());
      } else if (kind == "multinomial") {
        const fixtures::json& p = op["probs"];
        const bool rows = p[0].is_array();
        std::vector<float> probs;
        for (const auto& r : rows ? p : fixtures::json::array({p}))
          for (const auto& v : r) probs.push_back(v.get<float>());
        const size_t R = rows ? p.size() : 1, n = probs.size() / R;
        std::vector<int64_t> ids(R);
        g.multinomial1(probs.data(), R, n, ids.data());
        got.assign(ids.begin(), ids.end());
      } else {
        got = replay(g, op);
      }
      const std::vector<float> want = fixtures::numbers(op["values"]);
      REQUIRE(got.size() == want.size());
      const fixtures::Diff d = fixtures::compare(got.data(), want, kind == "randn" ? 1e-5 : 0.0, 0.0);
      INFO("max |generator - pytorch| = " << d.max_abs);
      CHECK(d.ok);
      checked += got.size();
    }
  }
  CHECK(checked > 50);
}

TEST_CASE("construction draws with skipped values leave the generator exactly where the real ones do", "[random]") {
  // what a module with weights loaded right after does (Session): nn.Linear, nn.Embedding, normal_
  // re-initialisation of every size, the serial (< 16) and the filled (>= 16, tail or not) paths
  attn::Generator real(7), skipping(7);
  skipping.set_skip_values(true);
  std::vector<float> a(1000), b(1000, 42.f);
  for (attn::Generator* g : {&real, &skipping}) {
    std::vector<float>& out = g == &real ? a : b;
    g->linear_init(out.data(), 12, out.data() + 12, 4, 3);
    g->embedding_init(out.data(), 65);
    for (size_t n : {1, 3, 15, 16, 17, 32, 100, 384}) g->normal_(out.data(), n, 0.0, 0.02);
    g->uniform_(out.data(), 9, -1.0, 1.0);
  }
  CHECK(b[20] == 42.f);  // values skipped
  skipping.set_skip_values(false);
  std::vector<float> x(37), y(37);
  real.randn(x.data(), 37);
  skipping.randn(y.data(), 37);
  CHECK(x == y);
  real.rand(x.data(), 5);
  skipping.rand(y.data(), 5);
  CHECK(x == y);
}

TEST_CASE("manual_seed restarts the stream and forgets the cached normal sample", "[random]") {
  attn::Generator g(3);
  float a[3], b[3];
  g.randn(a, 3);  // odd count: one Box-Muller sample stays cached
  g.manual_seed(3);
  g.randn(b, 3);
  for (int i = 0; i < 3; ++i) CHECK(a[i] == b[i]);
}

}  // namespace
