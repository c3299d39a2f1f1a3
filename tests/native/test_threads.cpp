// Threads split the work, never a sum (base/threads.hpp): every fixture of tests/fixtures/ and
// tests/fixtures/train/ (forwards, traced steps, gradients, optimizer runs, generation,
// interpretability: result_to_json's whole text, or the error) is the same to the bit at 1, 2 and
// 3 threads, and so are forwards big enough that linear() splits its rows (more than two chunks of
// 64) and the fused attention its (batch, head) pairs, with and without their weights, and a
// training step's gradients and two AdamW steps on them; so are the elementwise activations, a
// division, and the row-wise norms and softmax, split in chunks, on sizes with a vector tail.
// ATTENTION_THREADS is read strictly.
#include <cstdlib>
#include <cstring>
#include <functional>

#include "attention.hpp"
#include "fixtures.hpp"

namespace {

std::string result_or_error(const std::string& scenario) {
  try {
    return attn::run_json(scenario);
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

// The scenario's result at 1, 2 and 3 threads: all three the same text. must_split: the runs on
// more than one thread split some loop across the pool (the case is big enough to test it).
void same_at_every_count(const std::string& scenario, const std::string& label, bool must_split = false) {
  const int before = attn::threads();
  attn::set_threads(1);
  const std::string one = result_or_error(scenario);
  for (int n : {2, 3}) {
    attn::set_threads(n);
    const size_t splits = attn::split_loops();
    const std::string got = result_or_error(scenario);
    INFO(label << " at " << n << " threads");
    CHECK(got.size() == one.size());
    CHECK(got == one);
    if (must_split) CHECK(attn::split_loops() > splits);
  }
  attn::set_threads(before);
}

}  // namespace

TEST_CASE("every fixture gives the same bytes at 1, 2 and 3 threads", "[threads]") {
  size_t n = 0;
  for (const std::string sub : {"", "train/"})
    for (const std::string& name : fixtures::names(sub)) {
      same_at_every_count(fixtures::read_text(fixtures::dir() + "/" + name + ".scenario.json"), name);
      ++n;
    }
  CHECK(n > 100);
}

TEST_CASE("forwards that split their rows and heads across threads give the same bytes at 1, 2 and 3 threads", "[threads]") {
  // GPT 2 x 4 heads x 96 wide on 2 x 200 tokens: every Linear has 400 rows (six chunks of 64), the
  // attention 8 (batch, head) pairs; traced (every step, the weights) and not; then its gradients
  std::string ids;
  for (int i = 0; i < 400; ++i) ids += (i ? "," : "") + std::to_string((i * 7 + 3) % 50);
  const std::string gpt = R"({"module": "GPT", "config": {"vocab_size": 50, "block_size": 256, "n_layer": 2, "n_head": 4, "n_embd": 96},
    "seed": 3, "inputs": [{"name": "idx", "shape": [2, 200], "data": [)" + ids + "]}]}";
  for (const char* extra : {"", R"(, "trace": true)"}) {
    std::string s = gpt;
    s.insert(s.size() - 1, extra);
    same_at_every_count(s, std::string("GPT forward") + extra, true);
  }
  std::string grads = gpt;
  grads.insert(grads.size() - 1, R"(, "loss": {"fn": "sum"}, "grads": true)");
  same_at_every_count(grads, "GPT gradients", true);
  // two AdamW steps on it: the attention's backward splits its (batch, head) products, the
  // optimizer each weight of 9,216 or more elements (chunks of 4096)
  std::string trained = gpt;
  trained.insert(trained.size() - 1, R"(, "loss": {"fn": "sum"}, "optimize": {"optimizer": "AdamW", "lr": 0.01, "steps": 2}, "return_params": true)");
  same_at_every_count(trained, "GPT, two AdamW steps", true);
  // GPT 256 wide on 1 x 16 tokens: too few rows to split, its Linears split their output columns
  // (768, 256, 1024 and 256 of them: 4 to 16 chunks of 64; at least 2^20 multiply-adds each, above
  // the split floor of base/threads.hpp), traced and with gradients
  std::string few;
  for (int i = 0; i < 16; ++i) few += (i ? "," : "") + std::to_string((i * 5 + 1) % 50);
  const std::string narrow = R"({"module": "GPT", "config": {"vocab_size": 50, "block_size": 32, "n_layer": 2, "n_head": 4, "n_embd": 256},
    "seed": 5, "trace": true, "inputs": [{"name": "idx", "shape": [1, 16], "data": [)" + few + "]}]}";
  same_at_every_count(narrow, "GPT 1 x 16 tokens, 256 wide", true);
  std::string narrow_grads = narrow;
  narrow_grads.insert(narrow_grads.size() - 1, R"(, "loss": {"fn": "sum"}, "grads": true)");
  same_at_every_count(narrow_grads, "GPT 1 x 16 tokens, 256 wide, gradients", true);
  // seed 000's MultiHeadAttention (the fused attention_heads), 3 x 5 heads, T = 130 queries over
  // S = 77 keys (a cross-attention's shapes), with and without its weights traced
  const std::string mha = R"({"module": "MultiHeadAttention", "config": {"d_model": 40, "num_heads": 5}, "seed": 1,
    "inputs": [{"name": "Q", "shape": [3, 130, 40], "init": "randn"}, {"name": "K", "shape": [3, 77, 40], "init": "randn"},
               {"name": "V", "shape": [3, 77, 40], "init": "randn"}]})";
  same_at_every_count(mha, "MultiHeadAttention 3 x 130 x 77", true);
  std::string traced = mha;
  traced.insert(traced.size() - 1, R"(, "trace": true)");
  same_at_every_count(traced, "MultiHeadAttention 3 x 130 x 77, traced", true);
}

TEST_CASE("activations, a division, norms and softmax split across threads give the same bytes at 1, 2 and 3 threads", "[threads]") {
  // 333 rows of 1031 (odd: every row and the whole end in a vector tail): each op's work above the
  // floor of base/threads.hpp, so it splits its elements (chunks of 4096) or its rows
  const attn::Shape shape{333, 1031};
  attn::Generator gen(7);
  attn::Tensor x = attn::Tensor::empty(shape), g = attn::Tensor::empty({1031}), b = attn::Tensor::empty({1031});
  for (attn::Tensor* t : {&x, &g, &b}) gen.randn(t->data(), static_cast<size_t>(t->numel()));
  const std::pair<const char*, std::function<attn::Tensor()>> ops[] = {
      {"gelu", [&] { return attn::gelu(x); }},
      {"gelu_tanh", [&] { return attn::gelu_tanh(x); }},
      {"silu", [&] { return attn::silu(x); }},
      {"layer_norm", [&] { return attn::layer_norm(x, g, b, 1e-5f); }},
      {"rms_norm", [&] { return attn::rms_norm(x, g, 1e-6f); }},
      {"softmax", [&] { return attn::softmax(x); }},
      {"div_scalar", [&] { return attn::div_scalar(x, 3.f); }}};
  const int before = attn::threads();
  for (const auto& [name, op] : ops) {
    attn::set_threads(1);
    const attn::Tensor one = op();
    for (int n : {2, 3}) {
      attn::set_threads(n);
      const size_t splits = attn::split_loops();
      const attn::Tensor got = op();
      INFO(name << " at " << n << " threads");
      CHECK(attn::split_loops() > splits);
      REQUIRE(got.shape() == one.shape());
      CHECK(std::memcmp(got.data(), one.data(), sizeof(float) * static_cast<size_t>(one.numel())) == 0);
    }
  }
  attn::set_threads(before);
}

TEST_CASE("set_threads takes 1 to 64 and names what it refused", "[threads]") {
  CHECK_THROWS_WITH(attn::set_threads(0), Catch::Contains("threads (0) must be a whole number from 1 to 64"));
  CHECK_THROWS_WITH(attn::set_threads(65), Catch::Contains("threads (65)"));
}
