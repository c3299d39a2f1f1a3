// A nanoGPT checkpoint (ckpt.pt as train.py saves it, plain and with torch.compile's '_orig_mod.'
// prefix) exported by scripts/export_nanogpt.py (tests/fixtures/nanogpt/, made by
// scripts/make_nanogpt_fixtures.py) loads into GPT by its own names and gives PyTorch's logits,
// attention weights, generated ids and probabilities from the same (F16-rounded) weights; the
// file carries nothing the core does not take, and its vocabulary has one token per wte row.
#include <set>

#include "attention.hpp"
#include "fixtures.hpp"
#include "generation_check.hpp"

namespace {

const std::string kDir = std::string(ATTN_FIXTURES_DIR) + "/nanogpt/";

attn::Blob read_blob(const std::string& path) {
  const std::string s = fixtures::read_text(path);
  return attn::Blob(s.begin(), s.end());
}

}  // namespace

TEST_CASE("an exported nanoGPT checkpoint gives PyTorch's logits and generation from the same weights", "[nanogpt][generate]") {
  for (const char* model : {"nanogpt_char", "nanogpt_char_compiled_f32"})
    for (const char* kind : {"sample", "greedy"})
      for (bool cache : {true, false}) {
        const std::string name = std::string(model) + "_" + kind;
        INFO(name << (cache ? " (KV cache)" : " (no cache)"));
        auto sc = fixtures::json::parse(fixtures::read_text(kDir + name + ".scenario.json"));
        sc["weights"]["buffer"] = 0;
        sc["generate"]["cache"] = cache;
        const std::vector<attn::Blob> blobs{read_blob(kDir + std::string(model) + ".safetensors")};
        const attn::Result r = attn::run(attn::parse_scenario(sc.dump(), nullptr, &blobs));
        const auto expected = fixtures::json::parse(fixtures::read_text(kDir + name + ".expected.json"));
        fixtures::check_outputs(r, expected);
        fixtures::check_generation(r, expected);
      }
}

TEST_CASE("the exported file holds nanoGPT's parameters once each, F16, and its vocabulary a token per row", "[nanogpt]") {
  const attn::Blob b = read_blob(kDir + "nanogpt_char.safetensors");
  const auto list = fixtures::json::parse(attn::safetensors_listing_json(b.data(), b.size()));
  std::set<std::string> names;
  for (const auto& t : list) {
    names.insert(t["name"].get<std::string>());
    CHECK(t["dtype"] == "F16");
  }
  CHECK(names.count("transformer.wte.weight") == 1);
  CHECK(names.count("transformer.h.1.mlp.c_proj.bias") == 1);
  CHECK(names.count("lm_head.weight") == 0);          // tied to wte: one tensor
  CHECK(names.count("transformer.h.0.attn.bias") == 0);  // the causal-mask buffer
  attn::Generator gen(0);
  attn::ParamList params;
  const attn::ModuleInfo& info = attn::module_info("GPT");
  const auto vocab = fixtures::json::parse(fixtures::read_text(kDir + "nanogpt_char.vocab.json"))["tokens"];
  auto m = info.make(attn::make_config(info, {{"vocab_size", vocab.size()}, {"block_size", 32}, {"n_layer", 2}, {"n_head", 4}, {"n_embd", 32}}), gen);
  m->parameters("", params);
  CHECK(names.size() == params.size());
  CHECK(vocab[0] == "\n");
  // a state_dict as nanoGPT saves it (lm_head.weight and the attn.bias buffers too) loads as well
  CHECK(m->skips_in_state_dict("lm_head.weight"));
  CHECK(m->skips_in_state_dict("transformer.h.3.attn.bias"));
  CHECK_FALSE(m->skips_in_state_dict("transformer.h.3.attn.c_attn.bias"));
}
