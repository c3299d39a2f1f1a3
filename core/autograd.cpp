// The backward of every Op (tape.hpp), and the reverse walk over the tape. GEMMs and the softmax
// and layer_norm rows go through kernels() (scalar reference or SIMD, as the forward); the rest
// are elementwise loops. Shape letters as in attention.hpp.
#include "autograd.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "error.hpp"
#include "kernels.hpp"
#include "ops.hpp"

namespace attn {

namespace {

size_t u(int64_t v) { return static_cast<size_t>(v); }

// (rows x cols) row-major -> its transpose, packed (cols x rows), in blocks that stay in L1
void transpose_into(float* p, const float* a, int64_t rows, int64_t cols) {
  constexpr int64_t kB = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kB)
    for (int64_t c0 = 0; c0 < cols; c0 += kB)
      for (int64_t r = r0; r < std::min(rows, r0 + kB); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + kB); ++c) p[c * rows + r] = a[r * cols + c];
}

// dst[idx] += src[idx] over every index; dst may be a strided view (a chunk of a gradient).
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

// g summed down to `shape` (a's trailing dims, or dims of size 1): the gradient of a broadcast operand.
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

// The walk's state: the tape, every node's gradient so far, and how an op hands its inputs theirs.
class Walk {
 public:
  Walk(const std::vector<Node>& nodes) : nodes(nodes), grads(nodes.size()) {}
  const std::vector<Node>& nodes;
  std::vector<Tensor> grads;

  const Node& input(const Node& n, size_t i) const { return nodes[u(n.in[i])]; }
  bool needs(const Node& n, size_t i) const { return i < n.in.size() && n.in[i] >= 0 && input(n, i).requires_grad; }
  // Adds g to input i's gradient. fresh: g is a new packed tensor nobody else holds (kept as is).
  void give(const Node& n, size_t i, Tensor g, bool fresh) {
    if (!needs(n, i)) return;
    Tensor& acc = grads[u(n.in[i])];
    if (!acc.defined()) {
      acc = fresh && g.is_contiguous() ? std::move(g) : g.clone();
      return;
    }
    const Tensor gc = g.contiguous();
    kernels().add(acc.data(), acc.data(), gc.data(), u(acc.numel()));
  }
};

void linear_backward(const Node& n, const Tensor& g, Walk& w) {
  const Tensor x = w.input(n, 0).out.contiguous(), W = w.input(n, 1).out.contiguous();
  const int64_t OC = W.size(0), IC = W.size(1), R = IC ? x.numel() / IC : 0;
  const Kernels& k = kernels();
  if (w.needs(n, 0)) {  // dx = g W: (R x OC)(OC x IC)
    Tensor gx = Tensor::empty(x.shape());
    k.gemm_nn(gx.data(), g.data(), W.data(), u(R), u(IC), u(OC), u(OC), u(IC), u(IC));
    w.give(n, 0, gx, true);
  }
  if (w.needs(n, 1)) {  // dW = g^T x: (OC x R)(R x IC)
    Tensor gW = Tensor::empty({OC, IC});
    k.gemm_tn(gW.data(), g.data(), x.data(), u(OC), u(IC), u(R), u(OC), u(IC), u(IC));
    w.give(n, 1, gW, true);
  }
  if (w.needs(n, 2)) {  // db = sum of g's rows
    Tensor gb = Tensor::zeros({OC});
    for (int64_t r = 0; r < R; ++r) k.axpy(gb.data(), 1.f, g.data() + r * OC, u(OC));
    w.give(n, 2, gb, true);
  }
}

// a @ b (b: (..., K, N) or (K, N)) and a @ b^T (b: (..., N, K)): out (..., M, N)
void matmul_backward(const Node& n, const Tensor& g, Walk& w) {
  const Tensor a = w.input(n, 0).out.contiguous(), b = w.input(n, 1).out.contiguous();
  const bool bt = n.attrs.transpose_b;
  const int64_t M = a.size(-2), K = a.size(-1), N = g.size(-1), nb = a.numel() / (M * K);
  const bool shared = b.dim() == 2 && a.dim() > 2;  // one b for every batch: its gradient sums them
  const int64_t bstride = shared ? 0 : K * N;
  const Kernels& k = kernels();
  if (w.needs(n, 0)) {
    Tensor ga = Tensor::empty(a.shape());
    // g b^T with a short inner dimension N (a head's width: d(weights) = d(context) V^T) runs as
    // gemm_nn on a packed b^T: gemm_nt's horizontal sums cost more than the copy below 256.
    const bool pack = !bt && N < 256;
    Tensor b_t = pack ? Tensor::empty({N, K}) : Tensor();
    for (int64_t i = 0; i < nb; ++i) {
      const float* gi = g.data() + i * M * N;
      const float* bi = b.data() + i * bstride;
      if (bt) {
        k.gemm_nn(ga.data() + i * M * K, gi, bi, u(M), u(K), u(N), u(N), u(K), u(K));  // g b
      } else if (pack) {
        if (i == 0 || bstride) transpose_into(b_t.data(), bi, K, N);
        k.gemm_nn(ga.data() + i * M * K, gi, b_t.data(), u(M), u(K), u(N), u(N), u(K), u(K));  // g (b^T)
      } else {
        k.gemm_nt(ga.data() + i * M * K, gi, bi, nullptr, u(M), u(K), u(N), u(N), u(N), u(K));  // g b^T
      }
    }
    w.give(n, 0, ga, true);
  }
  if (w.needs(n, 1)) {
    Tensor gb = Tensor::zeros(b.shape());
    Tensor part = Tensor::empty(bt ? Shape{N, K} : Shape{K, N});
    for (int64_t i = 0; i < nb; ++i) {
      const float* ai = a.data() + i * M * K;
      const float* gi = g.data() + i * M * N;
      float* out = shared ? part.data() : gb.data() + i * K * N;
      if (bt) k.gemm_tn(out, gi, ai, u(N), u(K), u(M), u(N), u(K), u(K));  // d(b) = g^T a: (N x M)(M x K)
      else k.gemm_tn(out, ai, gi, u(K), u(N), u(M), u(K), u(N), u(N));     // d(b) = a^T g: (K x M)(M x N)
      if (shared) k.add(gb.data(), gb.data(), part.data(), u(K * N));
    }
    w.give(n, 1, gb, true);
  }
}

void softmax_backward(const Node& n, const Tensor& g, Walk& w) {
  const int64_t nd = n.out.dim(), d = n.attrs.dim < 0 ? n.attrs.dim + nd : n.attrs.dim;
  const bool last = d == nd - 1;
  const Tensor y = last ? n.out.contiguous() : n.out.transpose(d, nd - 1).contiguous();
  const Tensor gy = last ? g : g.transpose(d, nd - 1).contiguous();
  Tensor gx = Tensor::empty(y.shape());
  const int64_t S = y.size(-1), rows = S ? y.numel() / S : 0;
  const Kernels& k = kernels();
  for (int64_t r = 0; r < rows; ++r) k.softmax_backward(gx.data() + r * S, y.data() + r * S, gy.data() + r * S, u(S));
  w.give(n, 0, last ? gx : gx.transpose(d, nd - 1), last);
}

void layer_norm_backward(const Node& n, const Tensor& g, Walk& w) {
  const Tensor x = w.input(n, 0).out.contiguous(), gamma = w.input(n, 1).out.contiguous();
  const int64_t C = x.size(-1), rows = C ? x.numel() / C : 0;
  Tensor gx = Tensor::empty(x.shape()), gg = Tensor::zeros({C}), gb = Tensor::zeros({C});
  const Kernels& k = kernels();
  for (int64_t r = 0; r < rows; ++r)
    k.layer_norm_backward(gx.data() + r * C, gg.data(), gb.data(), x.data() + r * C, g.data() + r * C, gamma.data(), u(C),
                          n.attrs.eps);
  w.give(n, 0, gx, true);
  w.give(n, 1, gg, true);
  w.give(n, 2, gb, true);
}

// A slice of one input (chunk) or of the inputs side by side (concat, stack): gradients are slices of g.
void chunk_backward(const Node& n, const Tensor& g, Walk& w) {
  const Tensor& x = w.input(n, 0).out;
  const int64_t d = n.attrs.dim < 0 ? n.attrs.dim + x.dim() : n.attrs.dim;
  int64_t start = 0, width = x.size(d) / n.attrs.chunks;
  if (n.attrs.sizes.empty()) {
    start = n.attrs.index * width;
  } else {  // torch.split: the widths before this one
    for (int64_t i = 0; i < n.attrs.index; ++i) start += n.attrs.sizes[static_cast<size_t>(i)];
    width = n.attrs.sizes[static_cast<size_t>(n.attrs.index)];
  }
  Tensor gx = Tensor::zeros(x.shape());
  add_strided(gx.slice(d, start, start + width), g);
  w.give(n, 0, gx, true);
}

void concat_backward(const Node& n, const Tensor& g, Walk& w) {
  int64_t col = 0;
  for (size_t i = 0; i < n.in.size(); ++i) {
    const int64_t width = w.input(n, i).out.size(-1);
    w.give(n, i, g.slice(g.dim() - 1, col, col + width), false);
    col += width;
  }
}

void stack_backward(const Node& n, const Tensor& g, Walk& w) {
  const int64_t d = n.attrs.dim < 0 ? n.attrs.dim + g.dim() : n.attrs.dim;
  for (size_t i = 0; i < n.in.size(); ++i) {
    const int64_t j = static_cast<int64_t>(i);
    w.give(n, i, g.slice(d, j, j + 1).contiguous().view(w.input(n, i).out.shape()), false);
  }
}

void embedding_backward(const Node& n, const Tensor& g, Walk& w) {
  const Tensor& weight = w.input(n, 0).out;
  const int64_t D = weight.size(1);
  Tensor gw = Tensor::zeros(weight.shape());
  for (size_t i = 0; i < n.ids.size(); ++i)  // accumulated per id, in order
    kernels().axpy(gw.data() + n.ids[i] * D, 1.f, g.data() + static_cast<int64_t>(i) * D, u(D));
  w.give(n, 0, gw, true);
}

// Elementwise: out = f(g, x or y) per element.
template <class F>
Tensor map2(const Tensor& g, const Tensor& other, F f) {
  const Tensor o = other.contiguous();
  Tensor out = Tensor::empty(g.shape());
  float* dst = out.data();
  const float *gp = g.data(), *op = o.data();
  for (int64_t i = 0, n = g.numel(); i < n; ++i) dst[i] = f(gp[i], op[i]);
  return out;
}

void amax_backward(const Node& n, const Tensor& g, Walk& w) {
  // the gradient goes to the maxima of each row, shared evenly between ties (as torch.amax)
  const Tensor& x = w.input(n, 0).out;
  const int64_t nd = x.dim(), d = n.attrs.dim < 0 ? n.attrs.dim + nd : n.attrs.dim;
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

void cross_entropy_backward(const Node& n, const Tensor& g, Walk& w) {
  // d(mean over counted rows of -log softmax(row)[t]) = (softmax(row) - onehot(t)) / counted
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

// The ops whose backward is one line.
void simple_backward(const Node& n, const Tensor& g, Walk& w) {
  const Attrs& a = n.attrs;
  switch (n.op) {
    case Op::split_heads: {  // (B,H,T,D) -> (B,T,H*D)
      w.give(n, 0, g.transpose(1, 2).contiguous().view(w.input(n, 0).out.shape()), true);
      break;
    }
    case Op::merge_heads: {  // (B,T,H*D) -> (B,H,T,D)
      const Shape& s = n.out.shape();
      w.give(n, 0, g.view({s[0], s[1], a.heads, s[2] / a.heads}).transpose(1, 2), false);
      break;
    }
    case Op::view: w.give(n, 0, g.view(w.input(n, 0).out.shape()), false); break;
    case Op::transpose: w.give(n, 0, g.transpose(a.dim0, a.dim1), false); break;
    case Op::scale: w.give(n, 0, a.divide ? div_scalar(g, a.scale) : mul_scalar(g, a.scale), true); break;
    case Op::masked_fill: w.give(n, 0, masked_fill(g, n.saved, 0.f), true); break;
    case Op::dropout: w.give(n, 0, n.saved.defined() ? mul(g, n.saved) : g, n.saved.defined()); break;
    case Op::relu: w.give(n, 0, map2(g, n.out, [](float gi, float y) { return y > 0.f ? gi : 0.f; }), true); break;
    case Op::exp: w.give(n, 0, map2(g, n.out, [](float gi, float y) { return gi * y; }), true); break;
    case Op::gelu: {
      const Tensor x = w.input(n, 0).out.contiguous();
      Tensor gx = Tensor::empty(x.shape());
      kernels().gelu_backward(gx.data(), x.data(), g.data(), u(x.numel()));
      w.give(n, 0, gx, true);
      break;
    }
    case Op::cache_append:  // only the appended rows came from the input; the cached ones are constants
      w.give(n, 0, g.slice(2, a.cached, g.size(2)), false);
      break;
    case Op::add:
      w.give(n, 0, g, false);
      w.give(n, 1, reduce_to(g, w.input(n, 1).out.shape()), false);
      break;
    case Op::sub:
      w.give(n, 0, g, false);
      w.give(n, 1, mul_scalar(reduce_to(g, w.input(n, 1).out.shape()), -1.f), true);
      break;
    case Op::mse_loss: {  // 2 (a - target) / numel * g
      const float norm = 2.f / static_cast<float>(n.saved.numel()) * g.data()[0];
      const Tensor diff = map2(w.input(n, 0).out.contiguous(), n.saved, [](float x, float t) { return x - t; });
      w.give(n, 0, mul_scalar(diff, norm), true);
      break;
    }
    case Op::sum: w.give(n, 0, Tensor::full(w.input(n, 0).out.shape(), g.data()[0]), true); break;
    default: fail("internal: no backward for op ", op_name(n.op));
  }
}

// y = x * cos + rotate_half(x) * sin: dx = g * cos + rotate_half^T(g * sin), which is g rotated
// back by the same angles (ops.hpp rope_rotate). The tables are constants.
void rope_backward(const Node& n, const Tensor& g, Walk& w) {
  if (w.needs(n, 0)) w.give(n, 0, rope_rotate(g, w.input(n, 1).out, w.input(n, 2).out, -1.f), true);
}

// repeat_interleave(n, dim=1): each kv head's gradient sums its n copies'.
void repeat_kv_backward(const Node& n, const Tensor& g, Walk& w) {
  if (!w.needs(n, 0)) return;
  const Tensor gc = g.contiguous();
  const int64_t reps = n.attrs.repeats, B = gc.size(0), Hk = gc.size(1) / reps, block = gc.size(2) * gc.size(3);
  Tensor gx = Tensor::zeros({B, Hk, gc.size(2), gc.size(3)});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hk; ++h)
      for (int64_t r = 0; r < reps; ++r)
        kernels().add(gx.data() + (b * Hk + h) * block, gx.data() + (b * Hk + h) * block,
                      gc.data() + ((b * Hk + h) * reps + r) * block, u(block));
  w.give(n, 0, gx, true);
}

void node_backward(const Node& n, const Tensor& g, Walk& w) {
  switch (n.op) {
    case Op::input:
    case Op::parameter:
    case Op::positional_encoding:
    case Op::rope_table:
    case Op::alibi_bias: return;
    case Op::rope: return rope_backward(n, g, w);
    case Op::repeat_kv: return repeat_kv_backward(n, g, w);
    case Op::linear: return linear_backward(n, g, w);
    case Op::matmul:
    case Op::weighted_sum: return matmul_backward(n, g, w);
    case Op::softmax: return softmax_backward(n, g, w);
    case Op::layer_norm: return layer_norm_backward(n, g, w);
    case Op::chunk: return chunk_backward(n, g, w);
    case Op::concat: return concat_backward(n, g, w);
    case Op::stack: return stack_backward(n, g, w);
    case Op::embedding: return embedding_backward(n, g, w);
    case Op::amax: return amax_backward(n, g, w);
    case Op::cross_entropy: return cross_entropy_backward(n, g, w);
    default: return simple_backward(n, g, w);
  }
}

}  // namespace

std::vector<Tensor> backward(const std::vector<Node>& nodes, int32_t loss) {
  if (loss < 0 || static_cast<size_t>(loss) >= nodes.size() || nodes[u(loss)].out.numel() != 1)
    fail("internal: backward needs a 0-d loss node on the tape");
  return backward(nodes, loss, Tensor::full(nodes[u(loss)].out.shape(), 1.f));
}

std::vector<Tensor> backward(const std::vector<Node>& nodes, int32_t root, const Tensor& root_grad) {
  if (root < 0 || static_cast<size_t>(root) >= nodes.size() || nodes[u(root)].out.shape() != root_grad.shape())
    fail("internal: backward from a node that is not on the tape, or a gradient of another shape");
  Walk w(nodes);
  if (!nodes[u(root)].requires_grad) return std::move(w.grads);
  w.grads[u(root)] = root_grad.clone();
  for (int32_t id = root; id >= 0; --id) {
    const Node& n = nodes[u(id)];
    if (!w.grads[u(id)].defined()) continue;
    node_backward(n, w.grads[u(id)].contiguous(), w);
  }
  return std::move(w.grads);
}

}  // namespace attn
