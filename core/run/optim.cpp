// torch.optim 1.13's update rules, line for line (optim.hpp). Each PyTorch scalar argument is a
// Python float that the CPU kernels round to float32: the f() casts below.
#include "run/optim.hpp"

#include <cmath>

#include "base/error.hpp"
#include "base/threads.hpp"
#include "kernels/kernels.hpp"
#include "math/packed.hpp"

namespace attn {

namespace {

float f(double v) { return static_cast<float>(v); }

}  // namespace

Optimizer::Optimizer(OptimizerSpec spec, std::vector<Tensor*> params)
    : spec_(std::move(spec)), params_(std::move(params)), m_(params_.size()), v_(params_.size()), steps_(params_.size(), 0) {
  if (spec_.name != "SGD" && spec_.name != "Adam" && spec_.name != "AdamW")
    fail_at("optimize.optimizer", "optimizer '", spec_.name, "' is unknown: use SGD, Adam or AdamW");
}

void Optimizer::step(const std::vector<Tensor>& grads) {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!grads[i].defined()) continue;
    const Tensor g = grads[i].contiguous();
    if (spec_.name == "SGD") sgd(i, g);
    else adam(i, g);
  }
  weights_changed();  // the copies math/packed.hpp made of the old values are out of date
}

void Optimizer::sgd(size_t i, const Tensor& g) {
  Tensor& p = *params_[i];
  const int64_t n = p.numel();
  float* pw = p.data();
  // d_p = grad (+ weight_decay * param)
  Tensor dp = g.clone();
  float* d = dp.data();
  if (spec_.weight_decay != 0)
    for (int64_t k = 0; k < n; ++k) d[k] = d[k] + f(spec_.weight_decay) * pw[k];
  if (spec_.momentum != 0) {
    Tensor& buf = m_[i];
    if (!buf.defined()) {
      buf = dp.clone();
    } else {
      float* b = buf.data();
      for (int64_t k = 0; k < n; ++k) b[k] = b[k] * f(spec_.momentum) + f(1 - spec_.dampening) * d[k];
    }
    const float* b = buf.data();
    if (spec_.nesterov)
      for (int64_t k = 0; k < n; ++k) d[k] = d[k] + f(spec_.momentum) * b[k];
    else
      for (int64_t k = 0; k < n; ++k) d[k] = b[k];
  }
  for (int64_t k = 0; k < n; ++k) pw[k] = pw[k] + f(-spec_.lr) * d[k];
}

void Optimizer::adam(size_t i, const Tensor& g) {
  Tensor& p = *params_[i];
  const int64_t n = p.numel();
  float* pw = p.data();
  const bool adamw = spec_.name == "AdamW";
  if (!m_[i].defined()) {
    m_[i] = Tensor::zeros(p.shape());
    v_[i] = Tensor::zeros(p.shape());
  }
  const double step = static_cast<double>(++steps_[i]);
  const float* gr = g.data();
  float* m = m_[i].data();
  float* v = v_[i].data();
  const double bias1 = 1 - std::pow(spec_.beta1, step), bias2 = 1 - std::pow(spec_.beta2, step);
  AdamStep s;
  s.step_size = f(-(spec_.lr / bias1));
  s.bias2_sqrt = f(std::sqrt(bias2));
  s.decay = f(1 - spec_.lr * spec_.weight_decay);
  s.wd = f(spec_.weight_decay);
  s.beta1 = f(spec_.beta1);
  s.beta2 = f(spec_.beta2);
  s.one_beta1 = f(1 - spec_.beta1);
  s.one_beta2 = f(1 - spec_.beta2);
  s.eps = f(spec_.eps);
  s.decoupled = adamw && spec_.weight_decay != 0;
  s.coupled = !adamw && spec_.weight_decay != 0;
  // Element by element (the kernel's vectors or its tail: a chunk starts at a multiple of every
  // vector width), each by the same operations whatever the chunk: the same bits on any number of
  // threads. About 12 operations, a square root and a division each.
  const Kernels& k = kernels();
  split_elements(n, 16, [&](size_t k0, size_t count) { k.adam(pw + k0, m + k0, v + k0, gr + k0, count, s); });
}

float clip_grad_norm(std::vector<Tensor>& grads, double max_norm) {
  // total = norm(stack([norm(g) for g])): each norm to float32, as torch.norm returns them
  double total2 = 0;
  for (const Tensor& g_ : grads) {
    if (!g_.defined()) continue;
    const Tensor g = g_.contiguous();
    double s = 0;
    const float* gp = g.data();
    for (int64_t k = 0, n = g.numel(); k < n; ++k) s += static_cast<double>(gp[k]) * gp[k];
    const float norm = f(std::sqrt(s));
    total2 += static_cast<double>(norm) * norm;
  }
  const float total = f(std::sqrt(total2));
  const float coef = std::fmin(f(max_norm) / (total + 1e-6f), 1.f);
  for (Tensor& g : grads) {
    if (!g.defined()) continue;
    if (!g.is_contiguous()) g = g.contiguous();
    float* p = g.data();
    for (int64_t k = 0, n = g.numel(); k < n; ++k) p[k] *= coef;
  }
  return total;
}

}  // namespace attn
