// The reverse walk over the tape (autograd.hpp): from dL/d(root), nodes in reverse, each op's
// backward (its descriptor's, tape/ops/) adding its inputs' gradients; and the helpers those
// backwards share. Shape letters as in attention.hpp.
#include "tape/autograd.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.hpp"
#include "kernels/kernels.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {
size_t u(int64_t v) { return static_cast<size_t>(v); }
}  // namespace

// in blocks that stay in L1
void transpose_into(float* p, const float* a, int64_t rows, int64_t cols) {
  constexpr int64_t kB = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kB)
    for (int64_t c0 = 0; c0 < cols; c0 += kB)
      for (int64_t r = r0; r < std::min(rows, r0 + kB); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + kB); ++c) p[c * rows + r] = a[r * cols + c];
}

void add_strided(const Tensor& dst, const Tensor& src_) {
  const Tensor src = src_.contiguous();
  const Shape& shape = dst.shape();
  const int64_t nd = dst.dim(), n = dst.numel();
  std::vector<int64_t> idx(u(nd), 0);
  float* base = dst.base();
  const float* s = src.data();
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    base[off] += s[i];
    for (int64_t d = nd - 1; d >= 0; --d) {
      off += dst.strides()[u(d)];
      if (++idx[u(d)] < shape[u(d)]) break;
      off -= dst.strides()[u(d)] * shape[u(d)];
      idx[u(d)] = 0;
    }
  }
}

Tensor reduce_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  Tensor out = Tensor::zeros(shape);
  // A view of `out` broadcast to g's shape (stride 0 on the broadcast dims), then one strided add
  // per element of g.
  const Tensor gc = g.contiguous();
  const Shape& gs = g.shape();
  std::vector<int64_t> ostride(gs.size(), 0);
  int64_t st = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    const size_t j = i + gs.size() - shape.size();
    ostride[j] = shape[i] == 1 ? 0 : st;
    st *= shape[i];
  }
  std::vector<int64_t> idx(gs.size(), 0);
  int64_t off = 0;
  float* o = out.data();
  const float* gp = gc.data();
  for (int64_t i = 0, n = gc.numel(); i < n; ++i) {
    o[off] += gp[i];
    for (int64_t d = static_cast<int64_t>(gs.size()) - 1; d >= 0; --d) {
      off += ostride[u(d)];
      if (++idx[u(d)] < gs[u(d)]) break;
      off -= ostride[u(d)] * gs[u(d)];
      idx[u(d)] = 0;
    }
  }
  return out;
}

void Grads::give(const Node& n, size_t i, Tensor g, bool fresh) {
  if (!needs(n, i)) return;
  Tensor& acc = grads[u(n.in[i])];
  if (!acc.defined()) {
    acc = fresh && g.is_contiguous() ? std::move(g) : g.clone();
    return;
  }
  const Tensor gc = g.contiguous();
  kernels().add(acc.data(), acc.data(), gc.data(), u(acc.numel()));
}

std::vector<Tensor> backward(const std::vector<Node>& nodes, int32_t loss) {
  if (loss < 0 || static_cast<size_t>(loss) >= nodes.size() || nodes[u(loss)].out.numel() != 1)
    fail("internal: backward needs a 0-d loss node on the tape");
  return backward(nodes, loss, Tensor::full(nodes[u(loss)].out.shape(), 1.f));
}

std::vector<Tensor> backward(const std::vector<Node>& nodes, int32_t root, const Tensor& root_grad) {
  if (root < 0 || static_cast<size_t>(root) >= nodes.size() || nodes[u(root)].out.shape() != root_grad.shape())
    fail("internal: backward from a node that is not on the tape, or a gradient of another shape");
  Grads w(nodes);
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
