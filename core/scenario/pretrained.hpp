// A model folder as the Hugging Face Hub serves it (core/SCENARIO.md, "Pretrained"): config.json,
// model.safetensors (or model.safetensors.index.json and its shards), read into a module id, its
// config and its state_dict under the core's names. model_type "gpt2" becomes GPT (Conv1D weights
// transposed, gelu_new, layer_norm_epsilon, the `transformer.` prefix optional); "llama",
// "mistral" and "qwen2" become Llama. Every file is untrusted input: the index names only files
// inside the folder, sizes are checked against the memory the weights will take before a shard is
// read, and anything the core does not compute as the checkpoint's own code does is refused by name.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/limits.hpp"
#include "base/safetensors.hpp"

namespace attn {

using Blob = std::vector<uint8_t>;

// How the caller reads a file of the folder by name (config.json, a shard): false when the folder
// has no such file. The CLI reads the disk, the bindings what JavaScript handed over.
struct ModelFolder {
  std::string label;  // the folder as the scenario names it, for messages
  std::function<bool(const std::string& name, Blob& out)> read;
  uint64_t max_bytes = kMaxModelBytes;  // the weights as float32, all shards together
};

struct PretrainedModel {
  std::string model_type;  // config.json's
  std::string module;      // the core's module id
  std::map<std::string, double> config;
  std::vector<SafeTensor> weights;  // under the module's state_dict names, float32
  std::string weights_name;         // for messages: the folder and its weight files
};

PretrainedModel load_pretrained(const ModelFolder& folder);

}  // namespace attn
