// Running a scenario, as the PyTorch program of SCENARIO.md does it: a Session (session.hpp) built
// from it, then a forward on the tape, a forward + backward, N training steps, or a generation.
#include "base/build.hpp"
#include "base/error.hpp"
#include "scenario/scenario.hpp"
#include "scenario/session.hpp"

namespace attn {

// The prompt's forward (the result's outputs and steps), then max_new_tokens tokens.
static Result run_generation(Session& session, const Scenario& s) {
  Result r;
  r.module = s.module;
  std::unique_ptr<Generation> g = session.generation();
  for (int64_t k = 0; k < s.generation.max_new_tokens; ++k) {
    GeneratedToken tok = g->next(k == 0);
    if (k == 0) {  // the prompt's forward is the result's: its outputs, steps and attention blocks
      add_outputs(r, std::move(tok.outputs));
      r.steps = std::move(tok.steps);
      r.attention = std::move(tok.attention);
      tok.outputs = {};
      tok.steps.clear();
      tok.attention.clear();
    }
    r.generated.push_back(std::move(tok));
  }
  r.ids = g->ids();
  return r;
}

Result run(const Scenario& s, const FolderRange* range) {
#if ATTN_PRETRAINED
  if (s.streamed && !range)
    fail_at("pretrained", "model folder '", s.pretrained, "' was given as headers and sizes: its weights are streamed into a trainer (core.trainer, then writeWeights), ",
            "or read by run with a range reader (options.range)");
#endif
  Session session(s);
#if ATTN_PRETRAINED
  if (s.streamed) session.stream_weights(*range);
#else
  (void)range;
#endif
  Result r;
  if (s.generate) {
    r = run_generation(session, s);
  } else if (s.optimize) {
    std::vector<float> losses;
    for (int64_t k = 0; k < s.steps; ++k) losses.push_back(session.step());
    r = session.forward(s.trace);  // the trained module's outputs
    r.has_loss = true;
    r.losses = std::move(losses);
    r.loss = r.losses.back();
    if (s.grads)  // the last step's, before clipping
      for (size_t i = 0; i < session.params().size(); ++i) {
        const Tensor& g = session.grads()[i];
        r.grads.push_back({session.params()[i].first, g.defined() ? g : Tensor::zeros(session.params()[i].second->shape())});
      }
  } else {
    // a loss without grads or trace needs no backward (an evaluation: the loss and the outputs)
    r = s.has_loss ? session.gradients(s.trace, s.grads || s.trace) : session.forward(s.trace);
    if (s.has_loss && !s.grads) r.grads.clear();
  }
  if (s.return_inputs)
    for (size_t i = 0; i < session.inputs().size(); ++i)
      if (session.inputs()[i].defined()) r.inputs.push_back({session.info().inputs[i].name, session.inputs()[i]});
  if (s.return_params)
    for (const auto& [name, t] : session.params()) r.params.push_back({name, t->clone()});
  return r;
}

std::string run_json(const std::string& scenario_json) { return result_to_json(run(parse_scenario(scenario_json))); }

}  // namespace attn
