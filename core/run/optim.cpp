// torch.optim 1.13's update rules, line for line (optim.hpp). Each PyTorch scalar argument is a
// Python float that the CPU kernels round to float32: the f() casts below.
#include "run/optim.hpp"

#include <cmath>

#include "base/error.hpp"
#include "base/threads.hpp"
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
  const float step_size = f(-(spec_.lr / bias1)), bias2_sqrt = f(std::sqrt(bias2));
  const float decay = f(1 - spec_.lr * spec_.weight_decay), wd = f(spec_.weight_decay);
  const float beta1 = f(spec_.beta1), beta2 = f(spec_.beta2), one_beta1 = f(1 - spec_.beta1), one_beta2 = f(1 - spec_.beta2);
  const float eps = f(spec_.eps);
  const bool decoupled = adamw && spec_.weight_decay != 0, coupled = !adamw && spec_.weight_decay != 0;
  // Element by element, each by the same operations whatever the chunk (the same bits on any
  // number of threads); about 12 operations and a square root and a division each.
  split_elements(n, 16, [&](size_t k0, size_t count) {
    for (size_t k = k0; k < k0 + count; ++k) {
      if (decoupled) pw[k] *= decay;  // param.mul_(1 - lr * weight_decay)
      float gk = gr[k];
      if (coupled) gk = gk + wd * pw[k];  // grad.add(param, alpha=wd)
      m[k] = m[k] * beta1 + one_beta1 * gk;
      v[k] = v[k] * beta2 + one_beta2 * gk * gk;
      const float denom = std::sqrt(v[k]) / bias2_sqrt + eps;
      pw[k] = pw[k] + step_size * m[k] / denom;
    }
  });
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
