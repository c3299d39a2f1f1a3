// The reverse walk over the tape (autograd.hpp): from dL/d(root), nodes in reverse, each op's
// backward (its descriptor's, tape/ops/) adding its inputs' gradients. Shape letters as in attention.hpp.
#include "tape/autograd.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.hpp"
#include "base/threads.hpp"
#include "kernels/kernels.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {
size_t u(int64_t v) { return static_cast<size_t>(v); }
}  // namespace

void Grads::give(const Node& n, size_t i, Tensor g, bool fresh) {
  if (!needs(n, i)) return;
  Tensor& acc = grads[u(n.in[i])];
  if (!acc.defined()) {
    acc = fresh && g.is_contiguous() ? std::move(g) : g.clone();
    return;
  }
  const Tensor gc = g.contiguous();
  const Kernels& k = kernels();
  float* ap = acc.data();
  const float* gp = gc.data();
  split_elements(acc.numel(), 1, [&](size_t i, size_t len) { k.add(ap + i, ap + i, gp + i, len); });
}

std::vector<Tensor> backward(const std::vector<Node>& nodes, int32_t loss) {
  if (loss < 0 || static_cast<size_t>(loss) >= nodes.size() || nodes[u(loss)].out.numel() != 1)
    fail("internal: backward needs a 0-d loss node on the tape");
  return backward(nodes, loss, Tensor::full(nodes[u(loss)].out.shape(), 1.f));
}

std::vector<Tensor> backward(const std::vector<Node>& nodes, int32_t root, const Tensor& root_grad, bool param_grads) {
  if (root < 0 || static_cast<size_t>(root) >= nodes.size() || nodes[u(root)].out.shape() != root_grad.shape())
    fail("internal: backward from a node that is not on the tape, or a gradient of another shape");
  Grads w(nodes, param_grads);
  if (!nodes[u(root)].requires_grad) return std::move(w.grads);
  w.grads[u(root)] = root_grad.clone();
  for (int32_t id = root; id >= 0; --id) {
    const Node& n = nodes[u(id)];
    if (!w.grads[u(id)].defined()) continue;
    op_def(n.op).backward(n, w.grads[u(id)].contiguous(), w);
  }
  return std::move(w.grads);
}

}  // namespace attn
