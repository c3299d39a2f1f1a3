// Every fixture of tests/fixtures/ (PyTorch 1.13's numbers) through the core, once on the scalar
// reference kernels and once on SIMD: outputs and every recorded step, atol 1e-5, rtol 1e-4.
// One Catch2 test case per fixture, registered at start-up from the folder's contents.
#include <deque>
#include <set>

#include "attention.hpp"
#include "fixtures.hpp"

namespace {

void check_fixture(const std::string& name, bool simd) {
  attn::set_use_simd(simd);
  const auto expected = fixtures::json::parse(fixtures::read_text(fixtures::dir() + "/" + name + ".expected.json"));
  const attn::Result r = attn::run(attn::parse_scenario(fixtures::read_text(fixtures::dir() + "/" + name + ".scenario.json")));
  attn::set_use_simd(true);
  auto find = [](const auto& list, const std::string& n) -> const attn::Tensor* {
    for (const auto& e : list)
      if (e.name == n) return &e.value;
    return nullptr;
  };
  size_t compared = 0;
  for (const char* group : {"outputs", "steps"}) {
    if (!expected.contains(group)) continue;
    for (const auto& e : expected[group]) {
      const std::string n = e["name"].get<std::string>();
      const attn::Tensor* t = group[0] == 'o' ? find(r.outputs, n) : find(r.steps, n);
      INFO(name << (simd ? " [simd] " : " [scalar] ") << group << " '" << n << "'");
      REQUIRE(t != nullptr);
      REQUIRE(t->shape() == e["shape"].get<attn::Shape>());
      const attn::Tensor c = t->contiguous();
      const std::vector<float> want = fixtures::values(e);
      REQUIRE(static_cast<int64_t>(want.size()) == c.numel());
      const fixtures::Diff d = fixtures::compare(c.data(), want);
      INFO("max |core - pytorch| = " << d.max_abs << " at flat index " << d.worst);
      CHECK(d.ok);
      ++compared;
    }
  }
  CHECK(compared > 0);
}

// Runs one fixture on one kernel table; Catch2 owns one of these per registered test case.
class FixtureInvoker : public Catch::ITestInvoker {
 public:
  FixtureInvoker(std::string name, bool simd) : name_(std::move(name)), simd_(simd) {}
  void invoke() const override { check_fixture(name_, simd_); }

 private:
  std::string name_;
  bool simd_;
};

struct RegisterFixtures {
  std::deque<std::string> names;  // Catch keeps StringRefs to these: stable storage
  RegisterFixtures() {
    for (const std::string& f : fixtures::names())
      for (bool simd : {false, true}) {
        names.push_back("fixture " + f + " matches PyTorch on " + (simd ? "SIMD" : "scalar") + " kernels");
        Catch::AutoReg(new FixtureInvoker(f, simd), CATCH_INTERNAL_LINEINFO, Catch::StringRef(),
                       Catch::NameAndTags{names.back(), "[fixtures]"});
      }
  }
} register_fixtures;

TEST_CASE("the fixture folder holds PyTorch fixtures for every module", "[fixtures]") {
  std::set<std::string> modules;
  for (const std::string& f : fixtures::names()) {
    const auto s = fixtures::json::parse(fixtures::read_text(fixtures::dir() + "/" + f + ".scenario.json"));
    modules.insert(s["module"].get<std::string>());
  }
  for (const attn::ModuleInfo& m : attn::module_registry()) {
    INFO("module " << m.id << " has no fixture");
    CHECK(modules.count(m.id) == 1);
  }
}

}  // namespace
