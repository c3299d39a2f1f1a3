// Scenarios: the single description of "what to compute" (core/SCENARIO.md), parsed from JSON
// (scenario.cpp), run (run.cpp, session.cpp), and the result (result.hpp) written back as JSON
// (result_json.cpp).
// Used by the CLI, the bindings and tests.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/limits.hpp"
#include "base/safetensors.hpp"
#include "nn/module.hpp"
#include "run/generate.hpp"
#include "run/interp.hpp"
#include "run/train.hpp"
#include "base/build.hpp"
#include "scenario/pretrained.hpp"
#include "scenario/result.hpp"

namespace attn {

struct ScenarioInput {
  enum class Kind { Init, Data, Embedding, Same };
  std::string name;
  Shape shape;
  Kind kind = Kind::Data;
  std::string init;               // "rand" | "randn"
  std::vector<float> data;        // Data: the values; Embedding: the given table (may be empty)
  int64_t num_embeddings = 0;     // Embedding: V
  std::vector<int64_t> ids;       // Embedding: one per row
  std::string same_as;            // Same: the earlier input it is; Embedding: the earlier input whose table it reads
};

struct Scenario {
  std::string module;
  std::map<std::string, double> config;
  uint64_t seed = 0;
  bool train = false;
  bool trace = false;
  bool return_inputs = false;  // give back the input tensors as built (drawn or given)
  bool return_params = false;  // give back the module's parameters by state_dict name
  std::vector<ScenarioInput> inputs;
  std::vector<std::pair<std::string, Tensor>> params;
  // "weights": {"name": "model.safetensors", "buffer": i}: a state_dict in safetensors form,
  // loaded after construction (every parameter must be in it), before "params".
  std::string weights_name;
  std::vector<SafeTensor> weights;
  // "pretrained": "folder" (SCENARIO.md, "Pretrained"): module, config and weights from a Hugging
  // Face model folder; its config.json's model_type.
  std::string pretrained, model_type;
  // A folder read from its headers alone (parse_scenario with `sizes`): the weights come later,
  // streamed into the built module (Session::write_weights); s.weights stays empty.
#if ATTN_PRETRAINED  // (the page's small build has no model folders)
  std::shared_ptr<const StreamedWeights> streamed;
#endif
  // Training (SCENARIO.md, "Training"): a loss on one output and a target drawn after the inputs;
  // its gradients (grads), or `steps` optimizer steps (optimize).
  bool has_loss = false;
  LossSpec loss;
  ScenarioInput target;          // name "target"; shape empty when there is none (sum)
  bool grads = false;
  bool optimize = false;
  OptimizerSpec optimizer;
  double clip_grad_norm = 0;     // > 0: clip_grad_norm_(params, this) before each step
  int64_t steps = 1;
  // Generation (SCENARIO.md, "Generation"): max_new_tokens new tokens after the ids input's prompt.
  bool generate = false;
  GenerateSpec generation;
  // Interpretability (SCENARIO.md, "Interpretability"): interventions at named steps of every
  // forward; activation and attribution patching, the logit lens and direct logit attribution on
  // the forward's result.
  std::vector<Intervention> interventions;
  bool patching = false, attribution_patching = false, logit_lens = false, logit_attribution = false;
  PatchingSpec patch, attribution;
  LogitAttributionSpec attribution_of;
  bool records() const { return !interventions.empty() || patching || attribution_patching || logit_lens || logit_attribution; }
};


// throws Error naming the bad field. `buffers`: tensors handed over beside the JSON (the bindings'
// typed arrays, copied in once); an input {"name", "shape", "buffer": i} takes buffers[i].
// `blobs`: byte buffers (safetensors files); "weights": {"name", "buffer": i} reads blobs[i].
// `files`: how to read a file of the model folder "pretrained" names (pretrained.hpp): the CLI
// reads the disk, the bindings the files JavaScript handed over.
// `sizes`: each weight file's size, when `files` gives only the first bytes of each (its header):
// the weights are then planned, not read (Scenario::streamed).
// `range` (run, Session::stream_weights): n bytes of a weight file from byte `offset` into dst, as
// the CLIs read a planned folder's weights straight into the module, a chunk at a time (false: the
// file ended or could not be read).
using FolderReader = std::function<bool(const std::string& folder, const std::string& name, Blob& out)>;
using FolderSizes = std::function<uint64_t(const std::string& folder, const std::string& name)>;
using FolderRange = std::function<bool(const std::string& folder, const std::string& name, uint64_t offset, uint8_t* dst, size_t n)>;
Scenario parse_scenario(const std::string& json_text, std::vector<std::vector<float>>* buffers = nullptr,
                        const std::vector<Blob>* blobs = nullptr, const FolderReader* files = nullptr,
                        const FolderSizes* sizes = nullptr);
// A scenario planned from its folder's headers (parse_scenario with `sizes`) needs `range` for its
// weights; any other ignores it.
Result run(const Scenario& scenario, const FolderRange* range = nullptr);
std::string result_to_json(const Result& result);
#ifndef __EMSCRIPTEN__
// The same text written to `os` as it is made, a megabyte at a time (the native CLI: a large
// result's text is never held whole).
void write_result_json(const Result& result, std::ostream& os);
#endif
std::string run_json(const std::string& scenario_json);  // parse, run, serialise
std::string modules_json();                               // the module table, for forms and docs
// One step's description without its data: {"name", "op", "ops", "attrs", "inputs", "shape", "dims",
// "tokens", "code", "cpp"} (the bindings add the data as a typed array).
std::string step_meta_json(const Step& step);
std::string attention_json(const std::vector<AttentionSpec>& specs);
// One generated token's entry of a result without its steps (SCENARIO.md, "Generation").
std::string generated_meta_json(const GeneratedToken& token);
// A result's interpretability fields as one JSON object ({} when it has none): patching,
// attribution_patching, logit_lens, logit_attribution, as result_to_json writes them.
std::string interp_json(const Result& result);
std::string version();

}  // namespace attn
