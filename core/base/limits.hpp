// The limits that keep one run within memory and time: every bound a scenario, a weights file or a
// generation is checked against, in one place (docs/testing.md, "Robustness and limits"). A module's own
// argument bounds live in its row of the module table (modules/).
#pragma once
#include <cstddef>
#include <cstdint>

namespace attn {

constexpr int64_t kMaxInputElements = int64_t{1} << 24;  // per input tensor
constexpr int64_t kMaxTotalElements = int64_t{1} << 26;  // inputs + params + outputs, about 256 MB
constexpr int64_t kMaxOptimizeSteps = 10000;             // optimizer steps per scenario (a page trains step by step)
constexpr int64_t kMaxNewTokens = 1024;                  // generated tokens per scenario (a page generates step by step)
constexpr int kTopTokens = 10;                           // probabilities reported per new token
constexpr size_t kMaxSafetensorsHeader = size_t{16} << 20;  // 16 MiB of JSON at most in a safetensors header
constexpr int kMaxSafetensorsDepth = 8;                  // JSON nesting in that header
constexpr int64_t kMaxWeightElements = int64_t{1} << 28;  // per tensor of a weights file (GPT-2's wte: 38.6M)
// A model's weights as float32 (F16 / BF16 widened on load), all shards together: 2 GiB, about
// 537M parameters (a 32-bit WASM heap is 4 GiB, the page keeps one copy plus its working memory).
constexpr uint64_t kMaxModelBytes = uint64_t{2} << 30;
constexpr size_t kMaxConfigBytes = size_t{4} << 20;      // config.json, model.safetensors.index.json

}  // namespace attn
