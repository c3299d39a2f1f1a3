// Products: nn.Linear, matmul (a @ b and a @ b^T) and the attention's weights @ values. The GEMMs
// run through kernels() (math/ops.cpp forward; gemm_nn / gemm_tn / gemm_nt backward).
#include "base/error.hpp"
#include "base/threads.hpp"
#include "kernels/kernels.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

size_t u(int64_t v) { return static_cast<size_t>(v); }

Tensor linear_forward(const Node&, const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); }

ATTN_SMALL Json linear_attrs(const Node& n, const std::vector<Node>& nodes) {
  const Tensor& w = nodes[u(n.in[1])].out;
  return {{"weight", param_name(n, nodes, 1)}, {"bias", param_name(n, nodes, 2)}, {"in_features", w.size(1)}, {"out_features", w.size(0)}};
}

// x: (R, IC), W: (OC, IC), g: (R, OC)
void linear_backward(const Node& n, const Tensor& g, Grads& w) {
  const Tensor x = w.input(n, 0).out.contiguous(), W = w.input(n, 1).out.contiguous();
  const int64_t OC = W.size(0), IC = W.size(1), R = IC ? x.numel() / IC : 0;
  const Kernels& k = kernels();
  const double work = double(R) * double(OC) * double(IC);  // multiply-adds of each product
  // Both products split their output rows across the threads (kGemmRows at a time, math/ops.hpp):
  // each output is the same sum over the inner dimension in the same order whatever rows share its
  // call (kernels.hpp), so the gradients are the same at any thread count.
  if (w.needs(n, 0)) {  // dx = g W: (R x OC)(OC x IC)
    Tensor gx = Tensor::empty(x.shape());
    parallel_for(u(R), kGemmRows, [&](size_t r0, size_t r1) {
      k.gemm_nn(gx.data() + r0 * u(IC), g.data() + r0 * u(OC), W.data(), r1 - r0, u(IC), u(OC), u(OC), u(IC), u(IC));
    }, work);
    w.give(n, 0, gx, true);
  }
  if (w.needs(n, 1)) {  // dW = g^T x: (OC x R)(R x IC)
    Tensor gW = Tensor::empty({OC, IC});
    parallel_for(u(OC), kGemmRows, [&](size_t o0, size_t o1) {
      k.gemm_tn(gW.data() + o0 * u(IC), g.data() + o0, x.data(), o1 - o0, u(IC), u(R), u(OC), u(IC), u(IC));
    }, work);
    w.give(n, 1, gW, true);
  }
  if (w.needs(n, 2)) {  // db = sum of g's rows
    Tensor gb = Tensor::zeros({OC});
    float* b = gb.data();
    const float* gp = g.data();
    for (int64_t r = 0; r < R; ++r) k.axpy(b, 1.f, gp + r * OC, u(OC));
    w.give(n, 2, gb, true);
  }
}

// matmul packs a transposed b once, straight from b as it is (a decode step's keys: a view of the
// KV cache; the heads' split of a forward's k): no packed copy of b before it.
Tensor matmul_forward(const Node& n, const std::vector<Tensor>& in) {
  return n.attrs.transpose_b ? matmul(in[0], in[1].transpose(-2, -1)) : matmul(in[0], in[1]);
}

ATTN_SMALL Json matmul_attrs(const Node& n, const std::vector<Node>&) { return {{"transpose_b", n.attrs.transpose_b}}; }

ATTN_SMALL std::string matmul_call(const Node& n, const std::vector<std::string>& args) {
  return std::string(n.attrs.transpose_b ? "matmul_bt(" : "matmul(") + args[0] + ", " + args[1] + ")";
}

// a @ b (b: (..., K, N) or (K, N)) and a @ b^T (b: (..., N, K)): out (..., M, N)
void matmul_backward(const Node& n, const Tensor& g, Grads& w) {
  const Tensor a = w.input(n, 0).out.contiguous(), b = w.input(n, 1).out.contiguous();
  const bool bt = n.attrs.transpose_b;
  const int64_t M = a.size(-2), K = a.size(-1), N = g.size(-1), nb = a.numel() / (M * K);
  const bool shared = b.dim() == 2 && a.dim() > 2;  // one b for every batch: its gradient sums them
  const int64_t bstride = shared ? 0 : K * N;
  const Kernels& k = kernels();
  // The batch's products (the heads' in attention) are independent: they split across the threads,
  // each by the same calls as on one. A b shared by the batch sums its products in batch order,
  // on one thread.
  const double work = double(nb) * double(M) * double(K) * double(N);
  if (w.needs(n, 0)) {
    Tensor ga = Tensor::empty(a.shape());
    // g b^T with a short inner dimension N (a head's width: d(weights) = d(context) V^T) runs as
    // gemm_nn on a packed b^T: gemm_nt's horizontal sums cost more than the copy below 256.
    const bool pack = !bt && N < 256;
    parallel_for(u(nb), 1, [&](size_t i0, size_t i1) {
      Tensor b_t = pack ? Tensor::empty({N, K}) : Tensor();
      for (size_t i = i0; i < i1; ++i) {
        const float* gi = g.data() + i * u(M * N);
        const float* bi = b.data() + i * u(bstride);
        float* gai = ga.data() + i * u(M * K);
        if (bt) {
          k.gemm_nn(gai, gi, bi, u(M), u(K), u(N), u(N), u(K), u(K));  // g b
        } else if (pack) {
          if (i == i0 || bstride) transpose_into(b_t.data(), bi, K, N);
          k.gemm_nn(gai, gi, b_t.data(), u(M), u(K), u(N), u(N), u(K), u(K));  // g (b^T)
        } else {
          k.gemm_nt(gai, gi, bi, nullptr, u(M), u(K), u(N), u(N), u(N), u(K));  // g b^T
        }
      }
    }, work);
    w.give(n, 0, ga, true);
  }
  if (w.needs(n, 1)) {
    Tensor gb = Tensor::zeros(b.shape());
    const auto grad_b = [&](float* out, size_t i) {
      const float* ai = a.data() + i * u(M * K);
      const float* gi = g.data() + i * u(M * N);
      if (bt) k.gemm_tn(out, gi, ai, u(N), u(K), u(M), u(N), u(K), u(K));  // d(b) = g^T a: (N x M)(M x K)
      else k.gemm_tn(out, ai, gi, u(K), u(N), u(M), u(K), u(N), u(N));     // d(b) = a^T g: (K x M)(M x N)
    };
    if (shared) {
      Tensor part = Tensor::empty(bt ? Shape{N, K} : Shape{K, N});
      for (int64_t i = 0; i < nb; ++i) {
        grad_b(part.data(), u(i));
        k.add(gb.data(), gb.data(), part.data(), u(K * N));
      }
    } else {
      parallel_for(u(nb), 1, [&](size_t i0, size_t i1) {
        for (size_t i = i0; i < i1; ++i) grad_b(gb.data() + i * u(K * N), i);
      }, work);
    }
    w.give(n, 1, gb, true);
  }
}

Tensor weighted_sum_forward(const Node&, const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }

}  // namespace

const OpDef linear_op{"linear", linear_forward, linear_attrs, plain_call, linear_backward};
const OpDef matmul_op{"matmul", matmul_forward, matmul_attrs, matmul_call, matmul_backward};
const OpDef weighted_sum_op{"weighted_sum", weighted_sum_forward, no_attrs, plain_call, matmul_backward};

Var linear(Context& ctx, const Var& x, const Var& weight, const Var& bias) { return apply(ctx, Op::linear, {x, weight, bias}); }

Var matmul(Context& ctx, const Var& a, const Var& b) { return apply(ctx, Op::matmul, {a, b}); }

Var matmul_bt(Context& ctx, const Var& a, const Var& b) {
  Attrs at;
  at.transpose_b = true;
  return apply(ctx, Op::matmul, {a, b}, at);
}

Var weighted_sum(Context& ctx, const Var& weights, const Var& values) { return apply(ctx, Op::weighted_sum, {weights, values}); }

}  // namespace attn
