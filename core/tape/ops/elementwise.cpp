// Elementwise ops: add and sub (b broadcast right-aligned), mul, exp, scaling by a float, relu, gelu
// (exact or tanh), silu,
// dropout (its drawn mask kept on the node) and masked_fill (its mask kept on the node). Their
// loops are math/ops.cpp's.
#include "base/error.hpp"
#include "base/threads.hpp"
#include "kernels/kernels.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

Tensor add_forward(const Node&, const std::vector<Tensor>& in) { return add_broadcast(in[0], in[1]); }
void add_backward(const Node& n, const Tensor& g, Grads& w) {
  w.give(n, 0, g, false);
  w.give(n, 1, reduce_to(g, w.input(n, 1).out.shape()), false);
}

Tensor sub_forward(const Node&, const std::vector<Tensor>& in) { return sub_broadcast(in[0], in[1]); }
void sub_backward(const Node& n, const Tensor& g, Grads& w) {
  w.give(n, 0, g, false);
  w.give(n, 1, mul_scalar(reduce_to(g, w.input(n, 1).out.shape()), -1.f), true);
}

Tensor exp_forward(const Node&, const std::vector<Tensor>& in) { return exp(in[0]); }
void exp_backward(const Node& n, const Tensor& g, Grads& w) { w.give(n, 0, mul(g, n.out), true); }

Tensor scale_forward(const Node& n, const std::vector<Tensor>& in) {
  return n.attrs.divide ? div_scalar(in[0], n.attrs.scale) : mul_scalar(in[0], n.attrs.scale);
}
ATTN_SMALL Json scale_attrs(const Node& n, const std::vector<Node>&) {
  return {{"scale", static_cast<double>(n.attrs.scale)}, {"divide", n.attrs.divide}};
}
ATTN_SMALL std::string scale_call(const Node& n, const std::vector<std::string>& args) {
  return std::string(n.attrs.divide ? "div_scalar(" : "mul_scalar(") + args[0] + ", " + float_literal(n.attrs.scale) + ")";
}
void scale_backward(const Node& n, const Tensor& g, Grads& w) {
  w.give(n, 0, n.attrs.divide ? div_scalar(g, n.attrs.scale) : mul_scalar(g, n.attrs.scale), true);
}

Tensor relu_forward(const Node&, const std::vector<Tensor>& in) { return relu(in[0]); }
void relu_grad(const Node& n, const Tensor& g, Grads& w) { w.give(n, 0, relu_backward(g, n.out), true); }

Tensor gelu_forward(const Node& n, const std::vector<Tensor>& in) {
  if (!n.attrs.tanh) return gelu(in[0]);
  ATTN_FULL_CORE_OP();
  return gelu_tanh(in[0]);
}
ATTN_SMALL Json gelu_attrs(const Node& n, const std::vector<Node>&) { return {{"approximate", n.attrs.tanh ? "tanh" : "none"}}; }
ATTN_SMALL std::string gelu_call(const Node& n, const std::vector<std::string>& args) {
  return "gelu(" + args[0] + (n.attrs.tanh ? ", approximate='tanh')" : ")");
}
// An activation's backward by its kernel: dx from x (the node's input) and dy.
void activation_backward(const Node& n, const Tensor& g, Grads& w, void (*Kernels::*f)(float*, const float*, const float*, size_t) noexcept) {
  const Tensor x = w.input(n, 0).out.contiguous(), gc = g.contiguous();
  Tensor gx = Tensor::empty(x.shape());
  const Kernels& k = kernels();
  float* gxp = gx.data();
  const float *xp = x.data(), *gp = gc.data();
  split_elements(x.numel(), 16, [&](size_t i, size_t len) { (k.*f)(gxp + i, xp + i, gp + i, len); });  // as the forward
  w.give(n, 0, gx, true);
}

void gelu_backward(const Node& n, const Tensor& g, Grads& w) {
  if (!n.attrs.tanh) return activation_backward(n, g, w, &Kernels::gelu_backward);
  ATTN_FULL_CORE_OP();
  activation_backward(n, g, w, &Kernels::gelu_tanh_backward);
}

Tensor silu_forward(const Node&, const std::vector<Tensor>& in) {
  ATTN_FULL_CORE_OP();
  return silu(in[0]);
}
void silu_backward(const Node& n, const Tensor& g, Grads& w) {
  ATTN_FULL_CORE_OP();
  activation_backward(n, g, w, &Kernels::silu_backward);
}

Tensor mul_forward(const Node&, const std::vector<Tensor>& in) {
  ATTN_FULL_CORE_OP();
  return mul(in[0], in[1]);
}
void mul_backward(const Node& n, const Tensor& g, Grads& w) {
  ATTN_FULL_CORE_OP();
  if (w.needs(n, 0)) w.give(n, 0, mul(g, w.input(n, 1).out), true);
  if (w.needs(n, 1)) w.give(n, 1, mul(g, w.input(n, 0).out), true);
}

// The scaled keep-mask (0 or 1/(1-p)), drawn when the node was recorded, is what the forward and
// the backward multiply by: the same draw. p == 0: no mask, the identity.
Tensor dropout_forward(const Node& n, const std::vector<Tensor>& in) {
  return n.saved.defined() ? mul(in[0], n.saved) : in[0].contiguous();
}
ATTN_SMALL Json dropout_attrs(const Node& n, const std::vector<Node>&) { return {{"p", static_cast<double>(n.attrs.p)}}; }
ATTN_SMALL std::string dropout_call(const Node& n, const std::vector<std::string>& args) {
  return "dropout(" + args[0] + ", " + float_literal(n.attrs.p) + ")";
}
void dropout_backward(const Node& n, const Tensor& g, Grads& w) {
  w.give(n, 0, n.saved.defined() ? mul(g, n.saved) : g, n.saved.defined());
}

Tensor masked_fill_forward(const Node& n, const std::vector<Tensor>& in) { return masked_fill(in[0], n.saved, n.attrs.fill); }
ATTN_SMALL Json masked_fill_attrs(const Node& n, const std::vector<Node>&) {
  const Attrs& a = n.attrs;
  return {{"fill", float_json(a.fill)},
          {"window", a.window},
          {"sink_tokens", a.sink_tokens},
          {"causal", a.causal},
          {"mask_input", a.causal ? Json(nullptr) : Json(a.mask_input)},
          {"masked_where", a.causal ? "causal" : a.masked_where_zero ? "zero" : "nonzero"},
          {"unsqueezed", a.mask_unsqueezed}};
}
ATTN_SMALL std::string masked_fill_call(const Node& n, const std::vector<std::string>& args) {
  const Attrs& a = n.attrs;
  const auto i = [](int64_t v) { return std::to_string(v); };
  if (a.window > 0)
    return "masked_fill(" + args[0] + ", window_mask(positions, " + i(a.window) + ", " + i(a.sink_tokens) + "), " + float_literal(a.fill) + ")";
  const std::string mask = a.causal ? "causal_mask(" + i(n.out.size(-2)) + ", " + i(n.out.size(-1)) + ")"
                           : a.masked_where_zero ? "equal_zero(" + a.mask_input + ")"
                                                 : a.mask_input + (a.mask_unsqueezed ? ".unsqueeze(1)" : "");
  return "masked_fill(" + args[0] + ", " + mask + ", " + float_literal(a.fill) + ")";
}
void masked_fill_backward(const Node& n, const Tensor& g, Grads& w) { w.give(n, 0, masked_fill(g, n.saved, 0.f), true); }

}  // namespace

const OpDef add_op{"add", add_forward, no_attrs, plain_call, add_backward};
const OpDef sub_op{"sub", sub_forward, no_attrs, plain_call, sub_backward};
const OpDef exp_op{"exp", exp_forward, no_attrs, plain_call, exp_backward};
const OpDef scale_op{"scale", scale_forward, scale_attrs, scale_call, scale_backward};
const OpDef relu_op{"relu", relu_forward, no_attrs, plain_call, relu_grad};
const OpDef gelu_op{"gelu", gelu_forward, gelu_attrs, gelu_call, gelu_backward};
const OpDef silu_op{"silu", silu_forward, no_attrs, plain_call, silu_backward};
const OpDef mul_op{"mul", mul_forward, no_attrs, plain_call, mul_backward};
const OpDef dropout_op{"dropout", dropout_forward, dropout_attrs, dropout_call, dropout_backward};
const OpDef masked_fill_op{"masked_fill", masked_fill_forward, masked_fill_attrs, masked_fill_call, masked_fill_backward};

Var add(Context& ctx, const Var& a, const Var& b) { return apply(ctx, Op::add, {a, b}); }
Var sub(Context& ctx, const Var& a, const Var& b) { return apply(ctx, Op::sub, {a, b}); }
Var exp(Context& ctx, const Var& x) { return apply(ctx, Op::exp, {x}); }

Var div_scalar(Context& ctx, const Var& x, float s) {
  Attrs a;
  a.scale = s;
  a.divide = true;
  return apply(ctx, Op::scale, {x}, a);
}

Var mul_scalar(Context& ctx, const Var& x, float s) {
  Attrs a;
  a.scale = s;
  return apply(ctx, Op::scale, {x}, a);
}

Var relu(Context& ctx, const Var& x) { return apply(ctx, Op::relu, {x}); }
Var gelu(Context& ctx, const Var& x) { return apply(ctx, Op::gelu, {x}); }
Var gelu_tanh(Context& ctx, const Var& x) {
  Attrs a;
  a.tanh = true;
  return apply(ctx, Op::gelu, {x}, a);
}
Var silu(Context& ctx, const Var& x) { return apply(ctx, Op::silu, {x}); }
Var mul(Context& ctx, const Var& a, const Var& b) {
  if (a.shape() != b.shape()) fail("internal: mul takes two tensors of one shape, got ", shape_str(a.shape()), " and ", shape_str(b.shape()));
  return apply(ctx, Op::mul, {a, b});
}

Var dropout(Context& ctx, const Var& x, float p) {
  Attrs a;
  a.p = p;
  return apply(ctx, Op::dropout, {x}, a, p == 0.f ? Tensor() : dropout_mask(x.shape(), p, ctx.gen));
}

Var masked_fill(Context& ctx, const Var& x, const Tensor& mask, float fill, Attrs how) {
  how.fill = fill;
  return apply(ctx, Op::masked_fill, {x}, std::move(how), mask);
}

}  // namespace attn
