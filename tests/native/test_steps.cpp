// Typed steps (core/SCENARIO.md, "Typed steps", "Attention"): every traced step of every fixture
// carries an op of the documented list (core/tape/op_list.hpp) and only the attributes its entry
// names, inputs that exist, a token source per dim; each result's
// attention description names steps and parameters that exist; inputs shared with same_as give
// the numbers of the same inputs given as data.
#include <map>
#include <regex>
#include <set>

#include "attention.hpp"
#include "fixtures.hpp"

namespace {

// The documented closed set: core/tape/op_list.hpp's entries, `X(name) /* what. attrs: keys */`,
// as op name -> the words of its "attrs:" part (every attribute key it records is among them).
std::map<std::string, std::set<std::string>> documented_ops() {
  const std::string doc = fixtures::read_text(std::string(ATTN_FIXTURES_DIR) + "/../../core/tape/op_list.hpp");
  std::map<std::string, std::set<std::string>> ops;
  const std::regex entry(R"(\n\s+X\((\w+)\)\s*/\*([\s\S]*?)\*/)"), word(R"([a-z_0-9]+)");
  for (std::sregex_iterator it(doc.begin(), doc.end(), entry), end; it != end; ++it) {
    const std::string text = (*it)[2];
    const size_t at = text.find("attrs:");
    REQUIRE(at != std::string::npos);
    const std::string attrs = text.substr(at + 6);
    std::set<std::string>& keys = ops[(*it)[1]];
    for (std::sregex_iterator w(attrs.begin(), attrs.end(), word), wend; w != wend; ++w) keys.insert(w->str());
  }
  return ops;
}

attn::Result run_fixture(const std::string& name) {
  return attn::run(attn::parse_scenario(fixtures::read_text(fixtures::dir() + "/" + name + ".scenario.json")));
}

}  // namespace

TEST_CASE("every Op of the core has its entry in op_list.hpp, with the attributes it records", "[steps]") {
  const auto doc = documented_ops();
  std::set<std::string> core, listed;
  for (int i = 0; i < attn::kOpCount; ++i) core.insert(attn::op_name(static_cast<attn::Op>(i)));
  for (const auto& [name, keys] : doc) listed.insert(name);
  CHECK(core == listed);
  CHECK(doc.at("masked_fill").count("sink_tokens") == 1);
  CHECK(doc.at("relu").count("none") == 1);
}

TEST_CASE("every traced step of every fixture is typed: a documented op, real inputs, a token source per dim", "[steps][fixtures]") {
  const auto ops = documented_ops();
  size_t count = 0;
  for (const std::string& f : fixtures::names()) {
    const attn::Scenario scenario = attn::parse_scenario(fixtures::read_text(fixtures::dir() + "/" + f + ".scenario.json"));
    const attn::Result r = attn::run(scenario);
    const attn::ModuleInfo& info = attn::module_info(r.module);
    std::set<std::string> seen, params;
    attn::Generator gen(0);
    attn::ParamList list;
    auto module = info.make(attn::make_config(info, scenario.config), gen);
    module->parameters("", list);
    for (const auto& p : list) params.insert(p.first);
    const auto check_steps = [&](const std::vector<attn::Step>& steps, std::set<std::string>& named) {
      for (const attn::Step& s : steps) {
        INFO(f << " step " << s.name << ": " << s.cpp);
        CHECK(ops.count(attn::op_name(s.op)) == 1);
        REQUIRE_FALSE(s.ops.empty());
        CHECK(s.ops.back() == s.op);
        std::set<std::string> documented;   // the attributes the entries of this line's ops name
        for (attn::Op op : s.ops) {
          CHECK(ops.count(attn::op_name(op)) == 1);
          if (ops.count(attn::op_name(op))) documented.insert(ops.at(attn::op_name(op)).begin(), ops.at(attn::op_name(op)).end());
        }
        const nlohmann::json attrs = nlohmann::json::parse(s.attrs);
        for (const auto& [key, value] : attrs.items()) {
          INFO("attribute " << key << " of " << s.attrs);
          CHECK(documented.count(key) == 1);
        }
        CHECK(s.tokens.size() == s.dims.size());
        CHECK(s.dims.size() == s.value.shape().size());
        CHECK_FALSE(s.cpp.empty());
        CHECK_FALSE(s.code.empty());
        for (const std::string& t : s.tokens) {
          if (t.empty()) continue;
          bool known = false;
          for (const attn::InputSpec& in : info.inputs) known = known || in.name == t;
          CHECK(known);
        }
        for (const attn::StepInput& in : s.inputs) {
          INFO("input " << in.name);
          if (in.kind == attn::StepInput::Kind::step) CHECK(named.count(in.name) == 1);
          if (in.kind == attn::StepInput::Kind::input) {
            bool known = false;
            for (const attn::InputSpec& spec : info.inputs) known = known || spec.name == in.name;
            CHECK(known);
          }
          if (in.kind == attn::StepInput::Kind::param) CHECK(params.count(in.name) == 1);
        }
        named.insert(s.name);
        ++count;
      }
    };
    check_steps(r.steps, seen);
    for (const attn::GeneratedToken& g : r.generated) {  // a generated token's decode or window forward
      std::set<std::string> own;
      check_steps(g.steps, own);
    }
    for (const attn::AttentionSpec& a : r.attention) {
      INFO(f << " attention block '" << a.prefix << "'");
      if (!r.steps.empty() && !a.weights_step.empty()) CHECK(seen.count(a.prefix + a.weights_step) == 1);
      CHECK(a.heads >= 1);
      CHECK(a.scale > 0.f);
    }
  }
  CHECK(count > 300);
}

TEST_CASE("a step's cpp is printed from the tape with the float the core used", "[steps]") {
  const attn::Result r = run_fixture("journey_causal_attention");
  const attn::Step* weights = nullptr;
  for (const attn::Step& s : r.steps)
    if (s.name == "attn_weights") weights = &s;
  REQUIRE(weights != nullptr);
  CHECK(weights->cpp == "softmax(div_scalar(attn_scores_masked, 1.41421354f))");
  CHECK(weights->ops == std::vector<attn::Op>{attn::Op::scale, attn::Op::softmax});
  REQUIRE(r.attention.size() == 1);
  CHECK(r.attention[0].scale == static_cast<float>(std::sqrt(2.0)));
  CHECK(r.attention[0].causal);
}

TEST_CASE("inputs shared with same_as give the numbers of the same inputs given as data", "[steps][inputs]") {
  // seed 003: mha(x_q, x_kv, x_kv), and keys looked up in the queries' seeded embedding table
  const std::string head = R"({"module": "SplitHeadsMultiHeadAttention", "config": {"d_model": 8, "num_heads": 2},
                              "seed": 5, "return_inputs": true, "inputs": [)";
  const attn::Result shared = attn::run(attn::parse_scenario(head + R"(
      {"name": "query", "shape": [1, 3, 8], "embedding": {"num_embeddings": 5, "ids": [0, 3, 1]}},
      {"name": "key", "shape": [1, 4, 8], "embedding": {"same_as": "query", "ids": [4, 4, 2, 0]}},
      {"name": "value", "same_as": "key"}]})"));
  REQUIRE(shared.inputs.size() == 3);
  const attn::Tensor q = shared.inputs[0].value, k = shared.inputs[1].value;
  // row 0 of the keys is table row 4, and the queries' row 0 is table row 0: key row 3 (id 0) == query row 0
  CHECK(std::equal(q.data(), q.data() + 8, k.data() + 3 * 8));
  CHECK(shared.inputs[2].value.to_vector() == k.to_vector());
  const auto list = [](const attn::Tensor& t) {
    std::string s;
    for (float v : t.to_vector()) s += (s.empty() ? "" : ",") + fixtures::json(v).dump();
    return s;
  };
  const attn::Result given = attn::run(attn::parse_scenario(
      head + R"({"name": "query", "shape": [1, 3, 8], "data": [)" + list(q) + R"(]},
               {"name": "key", "shape": [1, 4, 8], "data": [)" + list(k) + R"(]},
               {"name": "value", "shape": [1, 4, 8], "data": [)" + list(k) + "]}]}"));
  CHECK(shared.outputs[0].value.to_vector() == given.outputs[0].value.to_vector());
  CHECK_THROWS_WITH(attn::run_json(head + R"({"name": "query", "shape": [1, 3, 8], "init": "randn"},
      {"name": "key", "shape": [1, 4, 8], "embedding": {"same_as": "query", "ids": [0, 0, 0, 0]}}]})"),
                    Catch::Contains("must name an earlier input given as an embedding"));
  CHECK_THROWS_WITH(attn::run_json(head + R"({"name": "value", "same_as": "key"}]})"),
                    Catch::Contains("must name an earlier input"));
}
