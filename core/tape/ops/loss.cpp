// Losses, each a 0-d tensor: F.mse_loss (mean; the target kept on the node), F.cross_entropy
// (mean over the rows whose target is not ignore_index; the targets kept on the node), and sum.
// Their loops are math/ops.cpp's.
#include "base/error.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

size_t u(int64_t v) { return static_cast<size_t>(v); }

Tensor mse_loss_forward(const Node& n, const std::vector<Tensor>& in) { return Tensor::full({}, mse_loss(in[0], n.saved)); }
ATTN_SMALL std::string loss_call(const Node& n, const std::vector<std::string>& args) { return std::string(op_name(n.op)) + "(" + args[0] + ", target)"; }
void mse_loss_grad(const Node& n, const Tensor& g, Grads& w) {
  w.give(n, 0, mse_loss_backward(w.input(n, 0).out, n.saved, g.data()[0]), true);
}

Tensor cross_entropy_forward(const Node& n, const std::vector<Tensor>& in) {
  return Tensor::full({}, cross_entropy(in[0], n.ids, n.attrs.ignore_index));
}
ATTN_SMALL Json cross_entropy_attrs(const Node& n, const std::vector<Node>&) { return {{"ignore_index", n.attrs.ignore_index}}; }
void cross_entropy_grad(const Node& n, const Tensor& g, Grads& w) {
  w.give(n, 0, cross_entropy_backward(w.input(n, 0).out, n.ids, n.attrs.ignore_index, g.data()[0]), true);
}

Tensor sum_forward(const Node&, const std::vector<Tensor>& in) { return Tensor::full({}, sum(in[0])); }
void sum_grad(const Node& n, const Tensor& g, Grads& w) { w.give(n, 0, Tensor::full(w.input(n, 0).out.shape(), g.data()[0]), true); }

}  // namespace

const OpDef mse_loss_op{"mse_loss", mse_loss_forward, no_attrs, loss_call, mse_loss_grad};
const OpDef cross_entropy_op{"cross_entropy", cross_entropy_forward, cross_entropy_attrs, loss_call, cross_entropy_grad};
const OpDef sum_op{"sum", sum_forward, no_attrs, plain_call, sum_grad};

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
