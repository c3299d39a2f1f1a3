// What a scenario computed (core/SCENARIO.md, "Result"): outputs, typed steps, the attention
// blocks, and, as the scenario asked, inputs, parameters, the loss and gradients, or the tokens
// generated. run.cpp fills it, result_json.cpp writes it, the bindings copy it out.
#pragma once
#include <string>
#include <vector>

#include "nn/attention_spec.hpp"
#include "nn/module.hpp"
#include "run/generate.hpp"
#include "run/interp.hpp"
#include "tape/tape.hpp"

namespace attn {

struct Result {
  std::string module;
  std::vector<NamedTensor> outputs;
  std::vector<std::string> output_steps;  // per output: the step that holds the same tensor ("" none)
  std::vector<Step> steps;
  std::vector<AttentionSpec> attention;   // the module's attention blocks, with this run's numbers
  std::vector<NamedTensor> inputs;        // when Scenario::return_inputs
  std::vector<NamedTensor> params;        // when Scenario::return_params
  bool has_loss = false;
  float loss = 0;                         // the loss (optimize: of the last step)
  std::vector<float> losses;              // optimize: the loss before each step
  std::vector<NamedTensor> grads;         // grads: every parameter, then "input:<name>" per float input
  std::vector<std::vector<int64_t>> ids;  // generate: per batch row, the prompt then the new ids
  std::vector<GeneratedToken> generated;  // generate: one entry per new token
  // SCENARIO.md, "Interpretability": as the scenario asked
  bool has_patching = false, has_attribution = false, has_logit_attribution = false;
  PatchingResult patching, attribution_patching;
  std::vector<std::pair<std::string, Tensor>> logit_lens;
  LogitAttribution logit_attribution;
};

// A forward's collected outputs (nn/module.hpp collect_outputs) as the result's outputs.
inline void add_outputs(Result& r, Collected c) {
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    r.outputs.push_back(std::move(c.outputs[i]));
    r.output_steps.push_back(std::move(c.steps[i]));
  }
}

}  // namespace attn
