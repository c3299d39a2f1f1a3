// libFuzzer target: any bytes as a safetensors weights file, read and loaded into a small
// CausalMultiHeadAttention (the shapes of tests/fixtures/weights/causal_mha_*). Reading must
// either succeed or throw attn::Error; never read past the buffer, crash, leak or hit UB.
// Built by scripts/fuzz.sh; seeds: tests/fixtures/weights/*.safetensors.
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/safetensors.hpp"
#include "scenario/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size copy, so ASan sees any read one byte past the file.
  std::vector<attn::Blob> blobs{attn::Blob(data, data + size)};
  try {
    (void)attn::safetensors_listing_json(blobs[0].data(), blobs[0].size());
    const attn::Scenario s = attn::parse_scenario(
        R"({"module": "CausalMultiHeadAttention", "weights": {"name": "fuzz", "buffer": 0},
            "config": {"d_in": 6, "d_out": 8, "context_length": 10, "dropout": 0.0, "num_heads": 2, "qkv_bias": true},
            "inputs": [{"name": "x", "shape": [1, 3, 6], "init": "randn"}]})",
        nullptr, &blobs);
    (void)attn::run(s);
  } catch (const attn::Error&) {
  }
  return 0;
}
