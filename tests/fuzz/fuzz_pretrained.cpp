// libFuzzer target: any bytes as a model folder (core/SCENARIO.md, "Pretrained"; files from the
// internet are untrusted): config.json, an optional model.safetensors.index.json and the weight
// file(s), planned from the headers alone as a page does before a download (plan_pretrained, with
// each file's size), then read whole and run: a prompt's forward and two greedy tokens on the KV
// cache. Each must succeed or throw attn::Error; never read past a file, crash, leak or hit UB.
//
// The input is the folder's files one after another, each behind its length as 4 bytes little-endian:
// config.json, the index (empty: none, the weights are model.safetensors), then the weight file
// every weight-file name reads (one file for all shards: a shard index that names several finds the
// tensors that are not in it missing, or repeated). Built by scripts/fuzz.sh; seeds: each folder of
// tests/fixtures/pretrained/ in this layout (its first shard for a sharded one), written there.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "scenario/pretrained.hpp"
#include "scenario/scenario.hpp"

namespace {
// The next part of the input: its 4-byte length, then that many bytes (fewer where the input ends).
attn::Blob part(const uint8_t*& p, const uint8_t* end) {
  uint32_t n = 0;
  if (end - p < 4) {
    p = end;
    return {};
  }
  std::memcpy(&n, p, 4);
  p += 4;
  const size_t take = std::min<size_t>(n, static_cast<size_t>(end - p));
  attn::Blob b(p, p + take);
  p += take;
  return b;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t *p = data, *end = data + size;
  const attn::Blob config = part(p, end), index = part(p, end), weights = part(p, end);
  // Exact-size copies (vector<uint8_t>): ASan sees a read one byte past a file.
  const auto file = [&](const std::string& name) -> const attn::Blob* {
    if (name == "config.json") return &config;
    if (name == "model.safetensors.index.json") return index.empty() ? nullptr : &index;
    if (name.size() > 12 && name.compare(name.size() - 12, 12, ".safetensors") == 0) return &weights;
    return nullptr;
  };
  const auto read = [&](const std::string& name, attn::Blob& out) {
    const attn::Blob* f = file(name);
    if (f) out = *f;
    return f != nullptr;
  };
  std::string input = "input_ids";  // Llama's; GPT's is idx (the plan says which module)
  try {
    // The page's check before a download: each weight file's header (its first bytes) and its size.
    attn::ModelFolder folder{"fuzz", read, uint64_t{64} << 20,
                             [&](const std::string& name) -> uint64_t {
                               const attn::Blob* f = file(name);
                               return f ? f->size() : 0;
                             }};
    const attn::PretrainedPlan plan = attn::plan_pretrained(folder, true);
    (void)attn::pretrained_plan_json(plan);
    if (plan.module == "GPT") input = "idx";
  } catch (const attn::Error&) {
  }
  try {
    const attn::FolderReader files = [&](const std::string&, const std::string& name, attn::Blob& out) { return read(name, out); };
    attn::Scenario s = attn::parse_scenario(R"({"pretrained": "fuzz", "inputs": [{"name": ")" + input +
                                                R"(", "shape": [1, 3], "data": [1, 2, 3]}], "generate": {"max_new_tokens": 2, "temperature": 0}})",
                                            nullptr, nullptr, &files);
    (void)attn::result_to_json(attn::run(s));
  } catch (const attn::Error&) {
  }
  return 0;
}
