// softmax over a dim (the attention weights), and amax, seed 003's first pass of its softmax
// written out (x - amax, exp, / sum). Rows go through kernels() (softmax, softmax_backward).
#include "base/error.hpp"
#include "base/threads.hpp"
#include "kernels/kernels.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

size_t u(int64_t v) { return static_cast<size_t>(v); }
int64_t wrap_dim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

// The kernels normalise rows: bring the dim last, normalise, move it back.
Tensor softmax_forward(const Node& n, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const int64_t nd = x.dim(), d = wrap_dim(n.attrs.dim, nd);
  return d == nd - 1 ? softmax(x) : softmax(x.transpose(d, nd - 1).contiguous()).transpose(d, nd - 1).contiguous();
}
ATTN_SMALL Json dim_attrs(const Node& n, const std::vector<Node>&) { return {{"dim", n.attrs.dim}}; }
ATTN_SMALL std::string softmax_call(const Node& n, const std::vector<std::string>& args) {
  return "softmax(" + args[0] + (n.attrs.dim == -1 ? "" : ", " + std::to_string(n.attrs.dim)) + ")";
}
void softmax_backward(const Node& n, const Tensor& g, Grads& w) {
  const int64_t nd = n.out.dim(), d = wrap_dim(n.attrs.dim, nd);
  const bool last = d == nd - 1;
  const Tensor y = last ? n.out.contiguous() : n.out.transpose(d, nd - 1).contiguous();
  const Tensor gy = last ? g : g.transpose(d, nd - 1).contiguous();
  Tensor gx = Tensor::empty(y.shape());
  const int64_t S = y.size(-1), rows = S ? y.numel() / S : 0;
  const Kernels& k = kernels();
  float* gxp = gx.data();
  const float *yp = y.data(), *gyp = gy.data();
  split_rows(rows, S, 4, [&](size_t r) { k.softmax_backward(gxp + r * S, yp + r * S, gyp + r * S, u(S)); });
  w.give(n, 0, last ? gx : gx.transpose(d, nd - 1), last);
}

Tensor amax_forward(const Node& n, const std::vector<Tensor>& in) { return amax(in[0], n.attrs.dim); }
ATTN_SMALL std::string amax_call(const Node& n, const std::vector<std::string>& args) {
  return "amax(" + args[0] + ", " + std::to_string(n.attrs.dim) + ")";
}
void amax_grad(const Node& n, const Tensor& g, Grads& w) {  // to the maxima of each row, ties sharing
  w.give(n, 0, amax_backward(g, w.input(n, 0).out, n.out, n.attrs.dim), false);
}

}  // namespace

const OpDef softmax_op{"softmax", softmax_forward, dim_attrs, softmax_call, softmax_backward};
const OpDef amax_op{"amax", amax_forward, dim_attrs, amax_call, amax_grad};

Var softmax(Context& ctx, const Var& x, int64_t dim) {
  const int64_t n = x.dim(), d = wrap_dim(dim, n);
  if (n == 0 || d < 0 || d >= n) fail("softmax: dim ", dim, " is out of range for a ", n, "-d tensor: use -", n, "..", n - 1);
  Attrs a;
  a.dim = dim;
  return apply(ctx, Op::softmax, {x}, a);
}

Var amax(Context& ctx, const Var& x, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim());
  if (d < 0 || d >= x.dim()) fail("amax: dim ", dim, " is out of range for ", shape_str(x.shape()));
  Attrs a;
  a.dim = dim;
  return apply(ctx, Op::amax, {x}, a);
}

}  // namespace attn
