// softmax over a dim (the attention weights), and amax, seed 003's first pass of its softmax
// written out (x - amax, exp, / sum). Rows go through kernels() (softmax, softmax_backward).
#include <algorithm>

#include "base/error.hpp"
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
Json dim_attrs(const Node& n, const std::vector<Node>&) { return {{"dim", n.attrs.dim}}; }
std::string softmax_call(const Node& n, const std::vector<std::string>& args) {
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
  for (int64_t r = 0; r < rows; ++r) k.softmax_backward(gx.data() + r * S, y.data() + r * S, gy.data() + r * S, u(S));
  w.give(n, 0, last ? gx : gx.transpose(d, nd - 1), last);
}

Tensor amax_forward(const Node& n, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const int64_t nd = x.dim(), d = wrap_dim(n.attrs.dim, nd);
  const Tensor moved = x.transpose(d, nd - 1).contiguous();
  Shape s = moved.shape();
  const int64_t w = s.back(), rows = w ? moved.numel() / w : 0;
  s.back() = 1;
  Tensor m = Tensor::empty(s);
  float* mp = m.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = moved.data() + r * w;
    mp[r] = *std::max_element(row, row + w);
  }
  return m.transpose(d, nd - 1).contiguous();
}
std::string amax_call(const Node& n, const std::vector<std::string>& args) {
  return "amax(" + args[0] + ", " + std::to_string(n.attrs.dim) + ")";
}
// the gradient goes to the maxima of each row, shared evenly between ties (as torch.amax)
void amax_backward(const Node& n, const Tensor& g, Grads& w) {
  const Tensor& x = w.input(n, 0).out;
  const int64_t nd = x.dim(), d = wrap_dim(n.attrs.dim, nd);
  const Tensor xm = x.transpose(d, nd - 1).contiguous(), gm = g.transpose(d, nd - 1).contiguous();
  const Tensor m = n.out.transpose(d, nd - 1).contiguous();
  Tensor gx = Tensor::zeros(xm.shape());
  const int64_t S = xm.size(-1), rows = S ? xm.numel() / S : 0;
  const float *mp = m.data(), *gp = gm.data();
  float* gxp = gx.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = xm.data() + r * S;
    int64_t ties = 0;
    for (int64_t j = 0; j < S; ++j) ties += row[j] == mp[r];
    for (int64_t j = 0; j < S; ++j)
      if (row[j] == mp[r]) gxp[r * S + j] = gp[r] / static_cast<float>(ties);
  }
  w.give(n, 0, gx.transpose(d, nd - 1), false);
}

}  // namespace

const OpDef softmax_op{"softmax", softmax_forward, dim_attrs, softmax_call, softmax_backward};
const OpDef amax_op{"amax", amax_forward, dim_attrs, amax_call, amax_backward};

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
