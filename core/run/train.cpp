// The training step (train.hpp): forward on the tape, the loss, backward, clip, optimizer.
#include "run/train.hpp"

#include <cmath>

#include "tape/autograd.hpp"
#include "base/error.hpp"
#include "tape/graph.hpp"

namespace attn {

std::pair<std::string, std::string> default_sequences(const ModuleInfo& info) {
  std::string q, k;
  for (const InputSpec& in : info.inputs) {
    if (q.empty() && (in.role == InputRole::x || in.role == InputRole::query || in.role == InputRole::target ||
                      in.role == InputRole::tokens))
      q = in.name;
    if (k.empty() && (in.role == InputRole::key || in.role == InputRole::memory || in.role == InputRole::source)) k = in.name;
  }
  return {q, k.empty() ? q : k};
}

Trainer::Trainer(const ModuleInfo& info, std::unique_ptr<Module> module, Generator& gen, bool train, LossSpec loss)
    : info_(info), module_(std::move(module)), gen_(gen), train_(train), loss_(std::move(loss)) {
  module_->parameters("", params_);
  if (loss_.fn.empty()) return;
  bool known = false;
  for (const char* o : info_.outputs) known = known || o == loss_.output;
  if (!known) {
    std::string names;
    for (const char* o : info_.outputs) names.append(names.empty() ? "" : ", ").append(o);
    fail_at("loss.output", "loss.output '", loss_.output, "' is not an output of ", info_.id, ": its outputs are ", names);
  }
  if (loss_.fn != "mse" && loss_.fn != "cross_entropy" && loss_.fn != "sum")
    fail_at("loss.fn", "loss.fn '", loss_.fn, "' is unknown: use mse, cross_entropy or sum");
}

void Trainer::set_optimizer(const OptimizerSpec& spec, double clip_grad_norm) {
  std::vector<Tensor*> ps;
  for (auto& [name, t] : params_) ps.push_back(t);
  optimizer_ = std::make_unique<Optimizer>(spec, ps);
  clip_ = clip_grad_norm;
}

std::vector<Var> Trainer::leaves(Context& ctx, const std::vector<Tensor>& inputs, bool input_grads) const {
  std::vector<Var> vars;
  for (size_t i = 0; i < inputs.size(); ++i)
    vars.push_back(ctx.input(inputs[i], info_.inputs[i].name, input_grads && info_.inputs[i].kind == InputKind::Float));
  return vars;
}

Var Trainer::loss_of(Context& ctx, const Outputs& outputs, const Tensor& target) const {
  Var out;
  for (const NamedVar& o : outputs)
    if (o.name == loss_.output) out = o.value;
  if (!out.defined()) fail_at("loss.output", "the module did not compute '", loss_.output, "' for this input");
  if (loss_.fn == "mse") return mse_loss(ctx, out, target);
  if (loss_.fn == "sum") return sum(ctx, out);
  std::vector<int64_t> ids;
  const Tensor t = target.contiguous();
  const float* tp = t.data();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    const float v = tp[i];
    if (v != std::floor(v)) fail_at("loss.target", "cross_entropy target ", v, " at index ", i, " is not an integer class id");
    ids.push_back(static_cast<int64_t>(v));
  }
  return cross_entropy(ctx, out, ids, loss_.ignore_index);
}

Outputs Trainer::forward(Context& ctx, const std::vector<Tensor>& inputs, bool input_grads) {
  ctx.bind_parameters(params_);
  const auto [seq_q, seq_k] = default_sequences(info_);
  Context::Sequences sequences(ctx, seq_q, seq_k);
  return module_->forward(leaves(ctx, inputs, input_grads), ctx);
}

TrainStep Trainer::forward_loss(Context& ctx, const std::vector<Tensor>& inputs, const Tensor& target, bool input_grads) {
  if (loss_.fn.empty()) fail_at("loss", "no loss: give the scenario a \"loss\" field");
  TrainStep r;
  r.outputs = forward(ctx, inputs, input_grads);
  const Var loss = loss_of(ctx, r.outputs, target);
  r.loss = loss.t.data()[0];
  r.loss_node = loss.id;
  if (!std::isfinite(r.loss))
    fail_at("loss", "the loss is ", r.loss, ": the model diverged (lower the learning rate) or the inputs overflow float32");
  return r;
}

TrainStep Trainer::forward_backward(Context& ctx, const std::vector<Tensor>& inputs, const Tensor& target, bool input_grads) {
  TrainStep r = forward_loss(ctx, inputs, target, input_grads);
  r.node_grads = backward(ctx.nodes(), r.loss_node);
  grads_.assign(params_.size(), Tensor());
  for (size_t i = 0; i < params_.size(); ++i) {
    const int32_t node = ctx.param_node(*params_[i].second);
    if (node >= 0) grads_[i] = r.node_grads[static_cast<size_t>(node)];
  }
  return r;
}

float Trainer::step(const std::vector<Tensor>& inputs, const Tensor& target) {
  if (!optimizer_) fail_at("optimize", "no optimizer: give the scenario an \"optimize\" field");
  Context ctx(gen_, train_, false, true);
  // as torch: the inputs are plain tensors, so no gradient of the first layer's input is made
  const float loss = forward_backward(ctx, inputs, target, false).loss;
  std::vector<Tensor> g = grads_;
  if (clip_ > 0) clip_grad_norm(g, clip_);
  optimizer_->step(g);
  ++steps_;
  return loss;
}

}  // namespace attn
