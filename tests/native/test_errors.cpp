// Bad input at every entry gives attn::Error naming the value, the rule and the fix; the core
// keeps working after it.
#include <cmath>
#include <limits>

#include "attention.hpp"
#include "fixtures.hpp"

using Catch::Contains;

namespace {
std::string mha(const std::string& config, const std::string& inputs) {
  return R"({"module": "CausalMultiHeadAttention", "config": )" + config + R"(, "inputs": )" + inputs + "}";
}
const char* kX = R"([{"name": "x", "shape": [1, 4, 10], "init": "rand"}])";
}  // namespace

TEST_CASE("a head count that does not divide the width names both numbers", "[errors]") {
  const std::string s = mha(R"({"d_in": 10, "d_out": 10, "context_length": 8, "dropout": 0.0, "num_heads": 3})", kX);
  CHECK_THROWS_WITH(attn::run_json(s), Contains("num_heads (3) must divide d_out (10)"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "MultiHeadAttention", "config": {"d_model": 10, "num_heads": 3}})"),
                    Contains("num_heads (3) must divide d_model (10)"));
}

TEST_CASE("unknown modules, config names and input names list what is allowed", "[errors]") {
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "Nope"})"), Contains("module 'Nope' is unknown") && Contains("CausalAttention"));
  CHECK_THROWS_WITH(attn::run_json(mha(R"({"d_in": 10, "d_out": 10, "context_length": 8, "dropout": 0, "num_heads": 2, "heads": 2})", kX)),
                    Contains("config 'heads' is not an argument") && Contains("num_heads"));
  CHECK_THROWS_WITH(attn::run_json(mha(R"({"d_in": 10, "d_out": 10, "context_length": 8, "dropout": 0, "num_heads": 2})",
                                       R"([{"name": "y", "shape": [1, 2, 10], "init": "rand"}])")),
                    Contains("'y' is not an input") && Contains("x"));
  CHECK_THROWS_WITH(attn::run_json(mha(R"({"d_in": 10, "d_out": 10, "context_length": 8, "num_heads": 2})", kX)),
                    Contains("config 'dropout' is required"));
}

TEST_CASE("wrong types, out-of-range values and malformed JSON are rejected", "[errors]") {
  CHECK_THROWS_WITH(attn::run_json("{not json"), Contains("not valid JSON"));
  CHECK_THROWS_WITH(attn::run_json(mha(R"({"d_in": 10.5, "d_out": 10, "context_length": 8, "dropout": 0, "num_heads": 2})", kX)),
                    Contains("config 'd_in' (10.5) must be an integer"));
  CHECK_THROWS_WITH(attn::run_json(mha(R"({"d_in": 10, "d_out": 10, "context_length": 8, "dropout": 1.5, "num_heads": 2})", kX)),
                    Contains("config 'dropout' (1.5) must be between 0 and 1"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "softmax", "seed": -1, "inputs": []})"), Contains("seed"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "softmax", "inputs": [{"name": "x", "shape": [3], "data": [1, 2]}]})"),
                    Contains("has 2 values but the shape needs 3"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "softmax", "inputs": [{"name": "x", "shape": [2], "data": [1, 1e39]}]})"),
                    Contains("inputs[0].data[1]") && Contains("not a finite float32"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "softmax", "inputs": [{"name": "x", "shape": [0], "data": []}]})"),
                    Contains("must be an integer >= 1"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "softmax", "inputs": [{"name": "x", "shape": [100000, 100000], "init": "rand"}]})"),
                    Contains("elements: the limit per tensor"));
}

TEST_CASE("shape mismatches between inputs and the module name the dimension", "[errors]") {
  CHECK_THROWS_WITH(attn::run_json(mha(R"({"d_in": 9, "d_out": 10, "context_length": 8, "dropout": 0, "num_heads": 2})", kX)),
                    Contains("last dimension 10 but must equal d_in (9)"));
  CHECK_THROWS_WITH(attn::run_json(mha(R"({"d_in": 10, "d_out": 10, "context_length": 3, "dropout": 0, "num_heads": 2})", kX)),
                    Contains("sequence length T (4) must not exceed context_length (3)"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "scaled_dot_product_attention", "inputs": [
      {"name": "Q", "shape": [2, 3, 8], "init": "randn"}, {"name": "K", "shape": [2, 4, 7], "init": "randn"},
      {"name": "V", "shape": [2, 4, 5], "init": "randn"}]})"),
                    Contains("K's last dimension (7) must equal Q's d_k (8)"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "Transformer", "config": {"vocab_size": 7, "emb_dim": 16, "num_heads": 2, "ffn_dim": 32, "num_layers": 1},
      "inputs": [{"name": "src", "shape": [1, 2], "data": [1, 9]}, {"name": "tgt", "shape": [1, 2], "data": [0, 1]}]})"),
                    Contains("value 9 at position 1 is not a token id"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "PositionalEncoding", "config": {"emb_dim": 15}})"),
                    Contains("emb_dim (15) must be even"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "MultiHeadAttention", "config": {"d_model": 8, "num_heads": 2}, "inputs": [
      {"name": "Q", "shape": [1, 3, 8], "init": "randn"}, {"name": "K", "shape": [1, 4, 8], "init": "randn"},
      {"name": "V", "shape": [1, 4, 8], "init": "randn"}, {"name": "mask", "shape": [3, 3], "data": [1,1,1,1,1,1,1,1,1]}]})"),
                    Contains("mask of shape [3, 3] cannot broadcast to [1, 2, 3, 4]"));
}

TEST_CASE("explicit params must name a real parameter with its shape", "[errors]") {
  const char* base = R"({"module": "SelfAttention_v1", "config": {"d_in": 3, "d_out": 2}, "params": )";
  CHECK_THROWS_WITH(attn::run_json(std::string(base) + R"({"W_q": {"shape": [3, 2], "data": [1,2,3,4,5,6]}}})"),
                    Contains("'W_q' is not a parameter") && Contains("W_query"));
  CHECK_THROWS_WITH(attn::run_json(std::string(base) + R"({"W_query": {"shape": [2, 3], "data": [1,2,3,4,5,6]}}})"),
                    Contains("has shape [2, 3] but SelfAttention_v1 needs [3, 2]"));
}

TEST_CASE("the core keeps working after an error", "[errors]") {
  CHECK_THROWS_AS(attn::run_json(R"({"module": "Nope"})"), attn::Error);
  const std::string ok = attn::run_json(R"({"module": "softmax", "inputs": [{"name": "x", "shape": [2], "data": [0, 0]}]})");
  CHECK_THAT(ok, Contains("[0.5,0.5]"));
}

TEST_CASE("numbers beyond double range are a JSON error, not a crash (found by the fuzzer)", "[errors]") {
  CHECK_THROWS_WITH(attn::run_json("1e0333333333"), Contains("not valid JSON"));
  CHECK_THROWS_WITH(attn::run_json(R"({"module": "softmax", "seed": 1e999})"), Contains("not valid JSON"));
}

TEST_CASE("a session's inputs and target set apart are checked as a scenario's data: NaN and infinities refused by name", "[errors]") {
  attn::Session s(attn::parse_scenario(R"({"module": "SelfAttention_v1", "config": {"d_in": 3, "d_out": 2},
      "inputs": [{"name": "x", "shape": [2, 3], "init": "randn"}], "loss": {"fn": "mse", "target": {"shape": [2, 2], "init": "randn"}},
      "optimize": {"optimizer": "SGD", "lr": 0.1}})"));
  std::vector<float> x = {1, 2, 3, 4, std::numeric_limits<float>::quiet_NaN(), 6};
  const auto field_of = [](const auto& call) {
    try {
      call();
    } catch (const attn::Error& e) {
      return e.field() + ": " + e.what();
    }
    return std::string("(no error)");
  };
  CHECK(field_of([&] { s.set_input("x", {2, 3}, x.data(), x.size()); }) ==
        "inputs.x: input 'x': the value at index 4 (NaN) is not a finite float32 value");
  std::vector<float> y = {0, -std::numeric_limits<float>::infinity(), 0, 0};
  CHECK(field_of([&] { s.set_target({2, 2}, y.data(), y.size()); }) == "target: the target: the value at index 1 (-Infinity) is not a finite float32 value");
  y[1] = std::numeric_limits<float>::infinity();
  CHECK(field_of([&] { s.set_target({2, 2}, y.data(), y.size()); }) == "target: the target: the value at index 1 (Infinity) is not a finite float32 value");
  // what was refused was not taken: the session steps on what it had, to a finite loss
  CHECK(std::isfinite(s.step()));
  x[4] = 5;
  s.set_input("x", {2, 3}, x.data(), x.size());
  CHECK(std::isfinite(s.step()));
}
