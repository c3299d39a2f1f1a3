// nn.LayerNorm over the last dim (eps 1e-5 or GPT-2's layer_norm_epsilon; nanoGPT's bias=False: no
// beta) and Llama's RMSNorm. Rows through kernels().
#include "kernels/kernels.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

size_t u(int64_t v) { return static_cast<size_t>(v); }

Tensor layer_norm_forward(const Node& n, const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2], n.attrs.eps); }
ATTN_SMALL Json layer_norm_attrs(const Node& n, const std::vector<Node>& nodes) {
  return {{"weight", param_name(n, nodes, 1)}, {"bias", param_name(n, nodes, 2)}, {"eps", static_cast<double>(n.attrs.eps)}};
}
void layer_norm_backward(const Node& n, const Tensor& g, Grads& w) {
  const Tensor x = w.input(n, 0).out.contiguous(), gamma = w.input(n, 1).out.contiguous();
  const int64_t C = x.size(-1), rows = C ? x.numel() / C : 0;
  Tensor gx = Tensor::empty(x.shape()), gg = Tensor::zeros({C}), gb = Tensor::zeros({C});
  const Kernels& k = kernels();
  float *gxp = gx.data(), *ggp = gg.data(), *gbp = gb.data();
  const float *xp = x.data(), *gp = g.data(), *gammap = gamma.data();
  for (int64_t r = 0; r < rows; ++r) k.layer_norm_backward(gxp + r * C, ggp, gbp, xp + r * C, gp + r * C, gammap, u(C), n.attrs.eps);
  w.give(n, 0, gx, true);
  w.give(n, 1, gg, true);
  w.give(n, 2, gb, true);
}

Tensor rms_norm_forward(const Node& n, const std::vector<Tensor>& in) {
  ATTN_FULL_CORE_OP();
  return rms_norm(in[0], in[1], n.attrs.eps);
}
ATTN_SMALL Json rms_norm_attrs(const Node& n, const std::vector<Node>& nodes) {
  ATTN_FULL_CORE_OP();
  return {{"weight", param_name(n, nodes, 1)}, {"eps", static_cast<double>(n.attrs.eps)}};
}
void rms_norm_backward(const Node& n, const Tensor& g, Grads& w) {
  ATTN_FULL_CORE_OP();
  const Tensor x = w.input(n, 0).out.contiguous(), gamma = w.input(n, 1).out.contiguous();
  const int64_t C = x.size(-1), rows = C ? x.numel() / C : 0;
  Tensor gx = Tensor::empty(x.shape()), gg = Tensor::zeros({C});
  const Kernels& k = kernels();
  const Tensor gc = g.contiguous();
  for (int64_t r = 0; r < rows; ++r) k.rms_norm_backward(gx.data() + r * C, gg.data(), x.data() + r * C, gc.data() + r * C, gamma.data(), u(C), n.attrs.eps);
  w.give(n, 0, gx, true);
  w.give(n, 1, gg, true);
}

}  // namespace

const OpDef layer_norm_op{"layer_norm", layer_norm_forward, layer_norm_attrs, plain_call, layer_norm_backward};
const OpDef rms_norm_op{"rms_norm", rms_norm_forward, rms_norm_attrs, plain_call, rms_norm_backward};

Var layer_norm(Context& ctx, const Var& x, const Var& weight, const Var& bias, float eps) {
  Attrs a;
  a.eps = eps;
  return apply(ctx, Op::layer_norm, {x, weight, bias}, a);
}
Var rms_norm(Context& ctx, const Var& x, const Var& weight, float eps) {
  Attrs a;
  a.eps = eps;
  return apply(ctx, Op::rms_norm, {x, weight}, a);
}

}  // namespace attn
