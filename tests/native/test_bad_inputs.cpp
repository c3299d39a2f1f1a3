// The table of bad inputs (tests/bad_inputs.json): each gives attn::Error with its message and field, and
// the core computes a valid scenario right after every one of them.
#include "attention.hpp"
#include "fixtures.hpp"

TEST_CASE("every bad input of tests/bad_inputs.json gives its error and leaves the core working", "[errors]") {
  const auto doc = fixtures::json::parse(fixtures::read_text(std::string(ATTN_FIXTURES_DIR) + "/../bad_inputs.json"));
  REQUIRE(doc["cases"].size() >= 30);
  const std::string good = fixtures::read_text(fixtures::dir() + "/journey_selfattention_v1.scenario.json");
  const double want = attn::run(attn::parse_scenario(good)).outputs[0].value.contiguous().data()[0];
  for (const auto& c : doc["cases"]) {
    const std::string text = c["scenario"].is_string() ? c["scenario"].get<std::string>() : c["scenario"].dump();
    INFO(c["what"].get<std::string>() << ": " << text.substr(0, 160));
    CHECK_THROWS_WITH(attn::run_json(text), Catch::Contains(c["error"].get<std::string>()));
    std::string field = "(no error)";
    try {
      attn::run_json(text);
    } catch (const attn::Error& e) {
      field = e.field();
    }
    CHECK(field == (c["field"].is_null() ? std::string() : c["field"].get<std::string>()));
    CHECK(attn::run(attn::parse_scenario(good)).outputs[0].value.contiguous().data()[0] == want);
  }
}
