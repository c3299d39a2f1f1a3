// The native CLI: every fixture through `attention-cli run` matches PyTorch; the seed-004
// walk-through prints the book's numbers; bad input exits non-zero with one line naming the rule.
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <streambuf>
#include <string>
#include <unistd.h>
#include <sys/wait.h>

#include "attention.hpp"
#include "cli_run.hpp"
#include "fixtures.hpp"


TEST_CASE("attention-cli run matches PyTorch on every fixture", "[cli]") {
  const auto names = fixtures::names();
  REQUIRE_FALSE(names.empty());
  for (const std::string& name : names) {
    const Proc p = run_cli("run " + fixtures::dir() + "/" + name + ".scenario.json");
    INFO("fixture " << name << ": " << p.out.substr(0, 200));
    REQUIRE(p.status == 0);
    const auto got = fixtures::json::parse(p.out);
    const auto want = fixtures::json::parse(fixtures::read_text(fixtures::dir() + "/" + name + ".expected.json"));
    for (const auto& e : want["outputs"]) {
      const fixtures::json* g = nullptr;
      for (const auto& o : got["outputs"])
        if (o["name"] == e["name"]) g = &o;
      REQUIRE(g != nullptr);
      CHECK((*g)["shape"] == e["shape"]);
      std::vector<float> values = fixtures::numbers((*g)["data"]);
      const std::vector<float> expected = fixtures::values(e);
      REQUIRE(values.size() == expected.size());
      const fixtures::Diff d = fixtures::compare(values.data(), expected);
      INFO("output " << e["name"] << " max diff " << d.max_abs);
      CHECK(d.ok);
    }
  }
}

TEST_CASE("attention-cli prints the book's context vectors for the seeded SelfAttention_v1", "[cli]") {
  const Proc p = run_cli("run " + fixtures::dir() + "/journey_selfattention_v1.scenario.json");
  REQUIRE(p.status == 0);
  const auto got = fixtures::json::parse(p.out);
  // "Build a Large Language Model (From Scratch)", ch. 3: torch.manual_seed(123); sa_v1(inputs)
  const std::vector<float> book = {0.2996f, 0.8053f, 0.3061f, 0.8210f, 0.3058f, 0.8203f,
                                   0.2948f, 0.7939f, 0.2927f, 0.7891f, 0.2990f, 0.8040f};
  const std::vector<float> values = got["outputs"][0]["data"].get<std::vector<float>>();
  REQUIRE(values.size() == book.size());
  const fixtures::Diff d = fixtures::compare(values.data(), book, 5e-5, 0);  // the book prints 4 decimals
  INFO("max diff to the printed book values " << d.max_abs);
  CHECK(d.ok);
}

TEST_CASE("attention-cli rejects bad input with one line and a non-zero exit", "[cli][errors]") {
  const std::string bad = "/tmp/attn_cli_bad_" + std::to_string(::getpid()) + ".json";
  for (const char* text : {"{oops", R"({"module": "MultiHeadAttention", "config": {"d_model": 10, "num_heads": 3}})"}) {
    FILE* f = std::fopen(bad.c_str(), "w");
    std::fputs(text, f);
    std::fclose(f);
    const Proc p = run_cli("run " + bad);
    INFO(p.out);
    CHECK(p.status == 1);
    CHECK(p.out.rfind("error: ", 0) == 0);
    CHECK(std::count(p.out.begin(), p.out.end(), '\n') == 1);
  }
  std::remove(bad.c_str());
  CHECK(run_cli("run /nonexistent/file.json").status == 1);
  CHECK(run_cli("frobnicate").status == 2);
}

TEST_CASE("attention-cli takes ATTENTION_THREADS strictly: 2 gives the bytes of 1; 0 or words are refused by name", "[cli][threads]") {
  const std::string fixture = fixtures::dir() + "/" + fixtures::names().front() + ".scenario.json";
  const Proc one = run_cli_env("ATTENTION_THREADS=1", "run " + fixture), two = run_cli_env("ATTENTION_THREADS=2", "run " + fixture);
  REQUIRE(one.status == 0);
  CHECK(two.out == one.out);
  for (const char* bad : {"0", "many", "65"}) {
    const Proc p = run_cli_env(std::string("ATTENTION_THREADS=") + bad, "run " + fixture);
    INFO(p.out);
    CHECK(p.status != 0);
    CHECK(p.out.find(std::string("ATTENTION_THREADS (") + bad + ") must be a whole number from 1 to 64") != std::string::npos);
  }
}

// write_result_json (the CLI's output) hands its text on a megabyte at a time: the same bytes as
// result_to_json, in writes of about 1 MiB, the last row of a big output included. A generated
// result (ids, tokens, their traced steps) too.
TEST_CASE("the CLI's result text is written as it is made, a megabyte at a time, the same bytes", "[cli]") {
  struct Writes : std::streambuf {
    std::string text;
    size_t calls = 0, longest = 0;
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      ++calls, longest = std::max(longest, static_cast<size_t>(n));
      text.append(s, static_cast<size_t>(n));
      return n;
    }
    int overflow(int c) override { return c == EOF ? 0 : (text += static_cast<char>(c), c); }
  };
  const std::string big = R"({"module": "softmax", "seed": 3, "inputs": [{"name": "x", "shape": [400, 1000], "init": "randn"}]})";
  const std::string gen = R"({"module": "GPT", "seed": 1, "trace": true, "config": {"vocab_size": 10, "block_size": 8, "n_layer": 1,
      "n_head": 2, "n_embd": 8}, "inputs": [{"name": "idx", "shape": [1, 3], "data": [1, 2, 3]}], "generate": {"max_new_tokens": 2, "temperature": 0}})";
  for (const std::string& scenario : {big, gen}) {
    const attn::Result r = attn::run(attn::parse_scenario(scenario));
    Writes w;
    std::ostream os(&w);
    attn::write_result_json(r, os);
    CHECK(w.text == attn::result_to_json(r));
    if (scenario == big) {  // 400,000 floats: about 4.5 MB of text
      CHECK(w.text.size() > (size_t{4} << 20));
      CHECK(w.calls >= 4);
      CHECK(w.longest < (size_t{1} << 20) + 64 * 1024);
    }
  }
}
