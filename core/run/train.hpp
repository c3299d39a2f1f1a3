// Training a module, as the PyTorch loop does it: one Trainer owns a seeded module, its
// optimizer (optim.hpp) and the generator dropout keeps drawing from; step() runs zero_grad,
// forward on the tape, the loss, backward (autograd.hpp), clip_grad_norm_ and optimizer.step().
// The scenario runner (run.cpp) and the page's incremental API (bindings/) both drive it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/module.hpp"
#include "run/optim.hpp"

namespace attn {

// "loss": {"fn", "output", "target", "ignore_index"} (SCENARIO.md, "Training")
struct LossSpec {
  std::string fn;                 // "mse" | "cross_entropy" | "sum"
  std::string output = "output";  // which module output the loss reads
  int64_t ignore_index = -100;    // cross_entropy
};

struct TrainStep {
  float loss = 0;
  int32_t loss_node = -1;          // the loss's node on `ctx`'s tape (when recorded)
  Outputs outputs;                 // the forward's outputs (on the tape)
  std::vector<Tensor> node_grads;  // dL/d(node) per node of `ctx`'s tape (when kept)
};

class Trainer {
 public:
  // module: constructed (seeded) and loaded. loss.fn empty: no loss (forward only).
  Trainer(const ModuleInfo& info, std::unique_ptr<Module> module, Generator& gen, bool train, LossSpec loss);
  void set_optimizer(const OptimizerSpec& spec, double clip_grad_norm);  // clip <= 0: no clipping

  // The module's forward on `ctx` (parameters bound, sequences set, inputs as leaves; float inputs
  // require gradients when input_grads, as a scenario's "grads" reports them).
  Outputs forward(Context& ctx, const std::vector<Tensor>& inputs, bool input_grads = true);
  // One forward + loss + backward on `ctx` (which records with grad = true): the gradients of the
  // parameters (params() order; undefined where the loss does not depend on one) in grads(), of
  // every node in the returned step. target: the loss's target (mse: the output's shape; cross
  // entropy: class ids as floats, one per row; sum: undefined).
  TrainStep forward_backward(Context& ctx, const std::vector<Tensor>& inputs, const Tensor& target, bool input_grads = true);
  // The forward and its loss alone (no backward; node_grads empty): an evaluation's loss.
  TrainStep forward_loss(Context& ctx, const std::vector<Tensor>& inputs, const Tensor& target, bool input_grads = false);
  // zero_grad, forward_backward, clip, optimizer.step(): PyTorch's training step. Returns the loss.
  float step(const std::vector<Tensor>& inputs, const Tensor& target);

  Module& module() { return *module_; }
  const ModuleInfo& info() const { return info_; }
  const ParamList& params() const { return params_; }
  const std::vector<Tensor>& grads() const { return grads_; }  // of the last step, before clipping
  Generator& gen() { return gen_; }
  bool train() const { return train_; }
  const LossSpec& loss() const { return loss_; }
  int64_t steps_done() const { return steps_; }
  // The inputs as the tape's leaves: float inputs require gradients, masks and ids do not.
  std::vector<Var> leaves(Context& ctx, const std::vector<Tensor>& inputs, bool input_grads = true) const;

 private:
  Var loss_of(Context& ctx, const Outputs& outputs, const Tensor& target) const;
  const ModuleInfo& info_;
  std::unique_ptr<Module> module_;
  Generator& gen_;
  bool train_;
  LossSpec loss_;
  ParamList params_;
  std::vector<Tensor> grads_;
  std::unique_ptr<Optimizer> optimizer_;
  double clip_ = 0;
  int64_t steps_ = 0;
};

// Which inputs the sequence dims of the steps follow by default (Context::Sequences): queries
// from the x/query/target input, keys from the key/memory/source input (else the queries').
std::pair<std::string, std::string> default_sequences(const ModuleInfo& info);

}  // namespace attn
