// Optimizers exactly as torch.optim 1.13 runs them on CPU (its single-tensor loops, float32
// arithmetic with the Python scalars rounded to float): SGD (momentum, dampening, nesterov,
// weight_decay), Adam and AdamW (betas, eps, weight_decay; amsgrad off), and clip_grad_norm_ (L2).
// Parameters are updated in place, in the module's parameter order (named_parameters()).
#pragma once
#include <string>
#include <vector>

#include "base/tensor.hpp"

namespace attn {

struct OptimizerSpec {
  std::string name = "SGD";     // "SGD" | "Adam" | "AdamW"
  double lr = 0.01;
  double momentum = 0, dampening = 0;  // SGD
  bool nesterov = false;               // SGD
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // Adam, AdamW
  double weight_decay = 0;             // SGD and Adam: 0; AdamW: 0.01 (PyTorch's defaults)
};

class Optimizer {
 public:
  Optimizer(OptimizerSpec spec, std::vector<Tensor*> params);
  // One optimizer.step() with these gradients (params' order); a parameter whose gradient is
  // undefined (the loss does not depend on it: PyTorch's grad None) is left alone.
  void step(const std::vector<Tensor>& grads);
  const OptimizerSpec& spec() const { return spec_; }

 private:
  void sgd(size_t i, const Tensor& g);
  void adam(size_t i, const Tensor& g);
  OptimizerSpec spec_;
  std::vector<Tensor*> params_;
  std::vector<Tensor> m_, v_;     // SGD: momentum buffers (m_); Adam: exp_avg, exp_avg_sq
  std::vector<int64_t> steps_;
};

// torch.nn.utils.clip_grad_norm_(params, max_norm): scales every defined gradient by
// min(1, max_norm / (total L2 norm + 1e-6)); returns the total norm before clipping.
float clip_grad_norm(std::vector<Tensor>& grads, double max_norm);

}  // namespace attn
