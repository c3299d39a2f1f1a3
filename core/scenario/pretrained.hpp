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
  // A page planning a download (plan_pretrained) gives each weight file's first bytes (its header)
  // through `read` and the whole file's size here; empty: `read` gives whole files.
  std::function<uint64_t(const std::string& name)> file_size;
};

// What a folder holds, read from config.json, the shard index and each weight file's header, all
// checked (names of shards, dtypes, shapes, offsets that tile each file, the float32 total against
// max_bytes), before any tensor's data is needed. headers false: config.json and the index only (the
// weight files' names, checked, for a page to fetch; `read` is not asked for them).
// One tensor of a weight file as the module takes it: its name in the module's state_dict ("" for a
// buffer the core recomputes), its shape there (a GPT-2 Conv1D weight transposed: `transpose`).
struct PlannedTensor {
  size_t file = 0;          // index into PretrainedPlan::files
  SafeTensorEntry entry;    // as the file's header has it
  std::string target;
  Shape shape;
  bool transpose = false;
};
struct PretrainedPlan {
  std::string model_type, module;
  std::map<std::string, double> config;
  std::vector<std::string> files;           // the weight files, in the order they are read
  std::vector<SafeTensorsHeader> headers;   // one per file
  uint64_t f32_bytes = 0;                   // all tensors as float32
  int64_t parameters = 0;                   // elements of every tensor, buffers included
  std::vector<PlannedTensor> tensors() const;  // every file's, in file then header order
  std::string label;
};
PretrainedPlan plan_pretrained(const ModelFolder& folder, bool headers = true);
// {"model_type", "module", "config", "files": [{"name", "size", "header_bytes", "tensors"} ({"name"}
// without headers)], "f32_bytes", "parameters"}
// The weights of a folder planned from headers alone (a page streaming them in): where each
// tensor's bytes go and how they become float32 (Session::write_weights).
struct StreamedWeights {
  std::string name;                   // for messages: the folder and its weight files
  std::vector<PlannedTensor> tensors;
  std::vector<std::string> files;     // PlannedTensor::file indexes these
  std::vector<uint64_t> data_offsets; // where each file's data starts (8 + its header's length)
};
std::string pretrained_plan_json(const PretrainedPlan& plan);

struct PretrainedModel {
  std::string model_type;  // config.json's
  std::string module;      // the core's module id
  std::map<std::string, double> config;
  std::vector<SafeTensor> weights;  // under the module's state_dict names, float32
  std::string weights_name;         // for messages: the folder and its weight files
};

PretrainedModel load_pretrained(const ModelFolder& folder);

}  // namespace attn
