// Every fixture of tests/fixtures/ and tests/fixtures/train/ (PyTorch 1.13's numbers, autograd's
// gradients, torch.optim's runs) through the core, once on the scalar reference kernels and once
// on SIMD: outputs, every recorded step and its gradient, the loss, every parameter's and input's
// gradient at atol 1e-5, rtol 1e-4; after N optimizer steps every loss at rtol 1e-4 and the
// parameters and outputs at atol 1e-4, rtol 1e-3. One Catch2 test case per fixture, registered
// at start-up from the folders' contents.
#include <deque>
#include <set>

#include "attention.hpp"
#include "fixtures.hpp"
#include "generation_check.hpp"

namespace {

const attn::Tensor* find(const std::vector<attn::NamedTensor>& list, const std::string& n) {
  for (const auto& e : list)
    if (e.name == n) return &e.value;
  return nullptr;
}
const attn::Tensor* find(const std::vector<attn::Step>& list, const std::string& n, bool grad) {
  for (const auto& e : list)
    if (e.name == n) return grad ? (e.grad.defined() ? &e.grad : nullptr) : &e.value;
  return nullptr;
}

void check_tensor(const attn::Tensor* t, const fixtures::json& e, const std::vector<float>& want, double atol, double rtol) {
  REQUIRE(t != nullptr);
  REQUIRE(t->shape() == e["shape"].get<attn::Shape>());
  const attn::Tensor c = t->contiguous();
  REQUIRE(static_cast<int64_t>(want.size()) == c.numel());
  const fixtures::Diff d = fixtures::compare(c.data(), want, atol, rtol);
  INFO("max |core - pytorch| = " << d.max_abs << " at flat index " << d.worst);
  CHECK(d.ok);
}

// SCENARIO.md, "Interpretability": metrics and estimates at atol 1e-4 + rtol 1e-3, the logit lens
// as outputs (atol 1e-5 + rtol 1e-4); cells and components in PyTorch's order.
bool near(double got, double want) { return std::fabs(got - want) <= 1e-4 + 1e-3 * std::fabs(want); }

void check_cells(const attn::PatchingResult& got, const fixtures::json& want, const char* key) {
  REQUIRE(got.cells.size() == want["cells"].size());
  for (size_t i = 0; i < got.cells.size(); ++i) {
    const auto& w = want["cells"][i];
    const attn::PatchCell& c = got.cells[i];
    INFO("cell " << i << ": " << c.step << " head " << c.head << " position " << c.position << ": " << c.value << " vs PyTorch " << w[key]);
    CHECK(c.step == w["step"].get<std::string>());
    CHECK(c.head == (w.contains("head") ? w["head"].get<int64_t>() : attn::Attrs::kAll));
    CHECK(c.position == (w.contains("position") ? w["position"].get<int64_t>() : attn::Attrs::kAll));
    CHECK(near(c.value, w[key].get<double>()));
  }
}

void check_interp(const attn::Result& r, const fixtures::json& expected, const std::string& label) {
  INFO(label);
  if (expected.contains("patching")) {
    const auto& w = expected["patching"];
    REQUIRE(r.has_patching);
    CHECK(near(r.patching.clean_metric, w["clean_metric"].get<double>()));
    CHECK(near(r.patching.corrupted_metric, w["corrupted_metric"].get<double>()));
    check_cells(r.patching, w, "metric");
  }
  if (expected.contains("attribution_patching")) {
    REQUIRE(r.has_attribution);
    check_cells(r.attribution_patching, expected["attribution_patching"], "estimate");
  }
  if (expected.contains("logit_lens")) {
    const auto& w = expected["logit_lens"];
    REQUIRE(r.logit_lens.size() == w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      INFO("logit lens at " << w[i]["step"]);
      CHECK(r.logit_lens[i].first == w[i]["step"].get<std::string>());
      check_tensor(&r.logit_lens[i].second, w[i], fixtures::values(w[i]), 1e-5, 1e-4);
    }
  }
  if (expected.contains("logit_attribution")) {
    const auto& w = expected["logit_attribution"];
    REQUIRE(r.has_logit_attribution);
    CHECK(near(r.logit_attribution.total, w["total"].get<double>()));
    REQUIRE(r.logit_attribution.components.size() == w["components"].size());
    for (size_t i = 0; i < w["components"].size(); ++i) {
      INFO("component " << w["components"][i]["name"] << ": " << r.logit_attribution.components[i].value);
      CHECK(r.logit_attribution.components[i].name == w["components"][i]["name"].get<std::string>());
      CHECK(near(r.logit_attribution.components[i].value, w["components"][i]["value"].get<double>()));
    }
  }
}

void check_fixture(const std::string& name, bool simd) {
  attn::set_use_simd(simd);
  const auto expected = fixtures::json::parse(fixtures::read_text(fixtures::dir() + "/" + name + ".expected.json"));
  const attn::Result r = attn::run(attn::parse_scenario(fixtures::read_text(fixtures::dir() + "/" + name + ".scenario.json")));
  attn::set_use_simd(true);
  const bool trained = expected.contains("losses");  // after N optimizer steps: looser, as the issue states
  const double atol = trained ? 1e-4 : 1e-5, rtol = trained ? 1e-3 : 1e-4;
  size_t compared = 0;
  for (const char* group : {"outputs", "steps", "grads", "params"}) {
    if (!expected.contains(group)) continue;
    for (const auto& e : expected[group]) {
      const std::string n = e["name"].get<std::string>();
      INFO(name << (simd ? " [simd] " : " [scalar] ") << group << " '" << n << "'");
      const std::string g = group;
      check_tensor(g == "outputs" ? find(r.outputs, n) : g == "steps" ? find(r.steps, n, false) : g == "grads" ? find(r.grads, n) : find(r.params, n),
                   e, fixtures::values(e), atol, rtol);
      if (g == "steps" && fixtures::has_grad(e)) {
        INFO("its gradient");
        check_tensor(find(r.steps, n, true), e, fixtures::grad_values(e), 1e-5, 1e-4);
      }
      ++compared;
    }
  }
  if (expected.contains("loss")) {
    INFO(name << ": loss " << r.loss << " vs PyTorch " << expected["loss"].get<double>());
    CHECK(r.has_loss);
    CHECK(std::fabs(r.loss - expected["loss"].get<double>()) <= 1e-4 * std::fabs(expected["loss"].get<double>()) + 1e-7);
  }
  if (trained) {
    const std::vector<float> want = fixtures::numbers(expected["losses"]);
    REQUIRE(r.losses.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO(name << ": loss before step " << i + 1 << ": " << r.losses[i] << " vs PyTorch " << want[i]);
      CHECK(std::fabs(r.losses[i] - want[i]) <= 1e-4 * std::fabs(want[i]) + 1e-7);
    }
  }
  if (expected.contains("ids")) {
    INFO(name << (simd ? " [simd]" : " [scalar]") << ": generation");
    fixtures::check_generation(r, expected);
  }
  check_interp(r, expected, name + (simd ? " [simd]" : " [scalar]"));
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
    std::vector<std::string> all = fixtures::names();
    for (const std::string& f : fixtures::names("train/")) all.push_back(f);
    for (const std::string& f : all)
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
