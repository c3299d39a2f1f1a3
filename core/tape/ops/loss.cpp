// Losses, each a 0-d tensor: F.mse_loss (mean; the target kept on the node), F.cross_entropy
// (mean over the rows whose target is not ignore_index; the targets kept on the node), and sum.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.hpp"
#include "kernels/kernels.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

size_t u(int64_t v) { return static_cast<size_t>(v); }

Tensor mse_loss_forward(const Node& n, const std::vector<Tensor>& in) {
  const Tensor x = in[0].contiguous();
  const float *xp = x.data(), *tp = n.saved.data();
  double acc = 0;
  for (int64_t i = 0, k = x.numel(); i < k; ++i) {
    const float d = xp[i] - tp[i];
    acc += static_cast<double>(d) * d;
  }
  return Tensor::full({}, static_cast<float>(acc / static_cast<double>(x.numel())));
}
std::string loss_call(const Node& n, const std::vector<std::string>& args) { return std::string(op_name(n.op)) + "(" + args[0] + ", target)"; }
void mse_loss_backward(const Node& n, const Tensor& g, Grads& w) {  // 2 (a - target) / numel * g
  const float norm = 2.f / static_cast<float>(n.saved.numel()) * g.data()[0];
  const Tensor diff = map2(w.input(n, 0).out.contiguous(), n.saved, [](float x, float t) { return x - t; });
  w.give(n, 0, mul_scalar(diff, norm), true);
}

Tensor cross_entropy_forward(const Node& n, const std::vector<Tensor>& in) {
  const Tensor x = in[0].contiguous();
  const int64_t V = x.size(-1), N = V ? x.numel() / V : 0;
  double acc = 0;
  int64_t counted = 0;
  for (int64_t r = 0; r < N; ++r) {
    const int64_t t = n.ids[u(r)];
    if (t == n.attrs.ignore_index) continue;
    const float* row = x.data() + r * V;
    const float m = *std::max_element(row, row + V);
    double se = 0;
    for (int64_t j = 0; j < V; ++j) se += std::exp(static_cast<double>(row[j] - m));
    acc += std::log(se) + m - row[t];
    ++counted;
  }
  return Tensor::full({}, static_cast<float>(acc / static_cast<double>(counted)));
}
Json cross_entropy_attrs(const Node& n, const std::vector<Node>&) { return {{"ignore_index", n.attrs.ignore_index}}; }
// d(mean over counted rows of -log softmax(row)[t]) = (softmax(row) - onehot(t)) / counted
void cross_entropy_backward(const Node& n, const Tensor& g, Grads& w) {
  const Tensor x = w.input(n, 0).out.contiguous();
  const int64_t V = x.size(-1), N = V ? x.numel() / V : 0;
  int64_t counted = 0;
  for (int64_t t : n.ids) counted += t != n.attrs.ignore_index;
  const float scale = g.data()[0] / static_cast<float>(counted);
  Tensor gx = Tensor::zeros(x.shape());
  for (int64_t r = 0; r < N; ++r) {
    const int64_t t = n.ids[u(r)];
    if (t == n.attrs.ignore_index) continue;
    float* row = gx.data() + r * V;
    std::memcpy(row, x.data() + r * V, u(V) * sizeof(float));
    kernels().softmax(row, u(V));
    row[t] -= 1.f;
    for (int64_t j = 0; j < V; ++j) row[j] *= scale;
  }
  w.give(n, 0, gx, true);
}

Tensor sum_forward(const Node&, const std::vector<Tensor>& in) {
  const Tensor x = in[0].contiguous();
  const float* xp = x.data();
  double acc = 0;
  for (int64_t i = 0, k = x.numel(); i < k; ++i) acc += xp[i];
  return Tensor::full({}, static_cast<float>(acc));
}
void sum_backward(const Node& n, const Tensor& g, Grads& w) {
  w.give(n, 0, Tensor::full(w.input(n, 0).out.shape(), g.data()[0]), true);
}

}  // namespace

const OpDef mse_loss_op{"mse_loss", mse_loss_forward, no_attrs, loss_call, mse_loss_backward};
const OpDef cross_entropy_op{"cross_entropy", cross_entropy_forward, cross_entropy_attrs, loss_call, cross_entropy_backward};
const OpDef sum_op{"sum", sum_forward, no_attrs, plain_call, sum_backward};

Var mse_loss(Context& ctx, const Var& a, const Tensor& target) {
  if (target.shape() != a.shape())
    fail_at("loss.target", "loss target has shape ", shape_str(target.shape()), " but the output has shape ", shape_str(a.shape()),
            ": mse needs them equal");
  return apply(ctx, Op::mse_loss, {a}, {}, target.contiguous());
}

Var cross_entropy(Context& ctx, const Var& logits, const std::vector<int64_t>& targets, int64_t ignore_index) {
  const int64_t V = logits.size(-1), N = V ? logits.t.numel() / V : 0;
  if (static_cast<int64_t>(targets.size()) != N)
    fail_at("loss.target", "cross_entropy: ", targets.size(), " targets for ", N, " rows of logits ", shape_str(logits.shape()),
            ": give one class id per row");
  int64_t counted = 0;
  for (int64_t r = 0; r < N; ++r) {
    const int64_t t = targets[u(r)];
    if (t == ignore_index) continue;
    if (t < 0 || t >= V)
      fail_at("loss.target", "cross_entropy: target ", t, " at row ", r, " is not a class: ids must be in [0, ", V,
              ") or ignore_index (", ignore_index, ")");
    ++counted;
  }
  if (counted == 0)
    fail_at("loss.target", "cross_entropy: every target is ignore_index (", ignore_index, "): the mean over no rows is undefined");
  Attrs a;
  a.ignore_index = ignore_index;
  return apply(ctx, Op::cross_entropy, {logits}, a, {}, targets);
}

Var sum(Context& ctx, const Var& a) { return apply(ctx, Op::sum, {a}); }

}  // namespace attn
