// A scenario's module built once and kept (Session, session.cpp): what run() does for one scenario, and what
// the page's incremental training drives step after step (bindings: Trainer) with new inputs and
// targets each time, without parsing JSON again. Construction follows SCENARIO.md's program:
// seed, construct, weights, params, inputs in order, then the loss's target.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "run/train.hpp"

namespace attn {

class Session {
 public:
  explicit Session(const Scenario& s);

  // Replace an input (by name) or the loss's target for the next calls: count values, row-major;
  // refused (attn::Error) unless the shape holds exactly that many, within the inputs' limit.
  void set_input(const std::string& name, const Shape& shape, const float* data, size_t count);
  void set_target(const Shape& shape, const float* data, size_t count);

  // On the current inputs: the outputs (steps when trace); with the scenario's loss, its value and
  // every gradient (grads, and each traced step's); one training step (needs "optimize").
  Result forward(bool trace);
  // One forward, its loss and (backward) the gradients; without backward the loss alone (a
  // scenario with "loss" but neither "grads" nor "trace": an evaluation).
  Result gradients(bool trace, bool backward = true);
  float step();
  // Token by token from the ids input (the scenario's "generate"; the module must generate).
  std::unique_ptr<Generation> generation();

#if ATTN_PRETRAINED
  // A scenario planned from its folder's headers (Scenario::streamed): tensor i's values from value
  // `first` on, as the file stores them (n bytes, whole values, each tensor's in order), decoded into
  // its parameter; then finish_weights() checks every value came.
  void write_weights(size_t i, int64_t first, const uint8_t* bytes, size_t n);
  void finish_weights();
  // Every planned tensor's bytes read through `range` (a chunk of at most 4 MiB at a time, straight
  // into its parameter), then finish_weights(): the CLIs' way, no copy of a whole file.
  void stream_weights(const FolderRange& range);
  const StreamedWeights* streamed() const { return s_.streamed.get(); }  // null: not planned from headers
#endif

  // The interventions of the next forwards and generations (SCENARIO.md, "Interpretability"): a JSON
  // list, checked as the scenario's field; "[]" removes them.
  void set_interventions(const std::string& json_list);
  // One forward read as `readings` asks (a JSON object: "logit_lens": true, "logit_attribution":
  // {...}, "patching" / "attribution_patching": {...} on the clean and corrupted rows of the inputs;
  // SCENARIO.md, "Interpretability"), whatever the session was built with (a model that also
  // generates: the page's open checkpoint); its own readings are kept for the next forwards.
  Result read(const std::string& readings);

  const ParamList& params() const { return trainer_->params(); }
  const std::vector<Tensor>& grads() const { return trainer_->grads(); }
  int64_t steps_done() const { return trainer_->steps_done(); }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  const ModuleInfo& info() const { return *info_; }
  Module& module() { return trainer_->module(); }

 private:
  void require_weights() const;  // an Error while streamed weights have not all come
  void intervene_in(Context& ctx) const;
  void interpret(const Context& ctx, Result& r);
  std::unique_ptr<Context> row_forward(int64_t row, std::vector<Intervention>& kept);
  Scenario s_;
  const ModuleInfo* info_;
  std::unique_ptr<Generator> gen_;  // dropout keeps drawing from it, step after step
  std::unique_ptr<Trainer> trainer_;
  std::vector<Tensor> inputs_;      // module order
#if ATTN_PRETRAINED
  std::vector<Tensor*> stream_targets_;  // Scenario::streamed's tensors' parameters (nullptr: a buffer)
  std::vector<int64_t> stream_written_;  // values written of each
  std::vector<float> stream_buffer_;     // a transposed tensor's values on their way
  bool weights_ready_ = true;            // false from planning until finish_weights()
#endif
  Tensor target_;
};

}  // namespace attn
