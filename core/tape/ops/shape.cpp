// Ops that move numbers without arithmetic: the heads split off and merged back, view, transpose,
// chunk / split (views of one input), concat and stack. Their backward moves the gradient back.
#include "base/error.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

int64_t wrap_dim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }
ATTN_SMALL std::string str(int64_t v) { return std::to_string(v); }
ATTN_SMALL std::string list(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + str(v[k]);
  return s;
}
ATTN_SMALL std::string args_list(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args)
    if (!a.empty()) s += (s.empty() ? "" : ", ") + a;
  return s;
}

// (B,T,H*D) -> (B,H,T,D): x.view(B, T, H, D).transpose(1, 2)
Tensor split_heads_forward(const Node& n, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const int64_t B = x.size(0), T = x.size(1), H = n.attrs.heads, D = x.size(2) / H;
  return x.contiguous().view({B, T, H, D}).transpose(1, 2);
}
ATTN_SMALL Json heads_attrs(const Node& n, const std::vector<Node>&) { return {{"heads", n.attrs.heads}}; }
ATTN_SMALL std::string split_heads_call(const Node& n, const std::vector<std::string>& args) {
  return "split_heads(" + args[0] + ", " + str(n.attrs.heads) + ")";
}
void split_heads_backward(const Node& n, const Tensor& g, Grads& w) {  // (B,H,T,D) -> (B,T,H*D)
  w.give(n, 0, g.transpose(1, 2).contiguous().view(w.input(n, 0).out.shape()), true);
}

// (B,H,T,D) -> (B,T,H*D): x.transpose(1, 2).contiguous().view(B, T, H*D)
Tensor merge_heads_forward(const Node&, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  return x.transpose(1, 2).contiguous().view({x.size(0), x.size(2), x.size(1) * x.size(3)});
}
void merge_heads_backward(const Node& n, const Tensor& g, Grads& w) {  // (B,T,H*D) -> (B,H,T,D)
  const Shape& s = n.out.shape();
  w.give(n, 0, g.view({s[0], s[1], n.attrs.heads, s[2] / n.attrs.heads}).transpose(1, 2), false);
}

Tensor view_forward(const Node& n, const std::vector<Tensor>& in) { return in[0].contiguous().view(n.attrs.shape); }
ATTN_SMALL Json view_attrs(const Node& n, const std::vector<Node>&) { return {{"shape", n.attrs.shape}}; }
ATTN_SMALL std::string view_call(const Node& n, const std::vector<std::string>& args) { return "view(" + args[0] + ", {" + list(n.attrs.shape) + "})"; }
void view_backward(const Node& n, const Tensor& g, Grads& w) { w.give(n, 0, g.view(w.input(n, 0).out.shape()), false); }

Tensor transpose_forward(const Node& n, const std::vector<Tensor>& in) { return in[0].transpose(n.attrs.dim0, n.attrs.dim1); }
ATTN_SMALL Json transpose_attrs(const Node& n, const std::vector<Node>&) { return {{"dim0", n.attrs.dim0}, {"dim1", n.attrs.dim1}}; }
ATTN_SMALL std::string transpose_call(const Node& n, const std::vector<std::string>& args) {
  return "transpose(" + args[0] + ", " + str(n.attrs.dim0) + ", " + str(n.attrs.dim1) + ")";
}
void transpose_backward(const Node& n, const Tensor& g, Grads& w) { w.give(n, 0, g.transpose(n.attrs.dim0, n.attrs.dim1), false); }

// Where slice `index` starts along its dim, and how wide it is: `chunks` equal slices, or `sizes`.
std::pair<int64_t, int64_t> slice_of(const Attrs& a, int64_t length) {
  if (a.sizes.empty()) return {a.index * (length / a.chunks), length / a.chunks};
  int64_t start = 0;
  for (int64_t i = 0; i < a.index; ++i) start += a.sizes[static_cast<size_t>(i)];
  return {start, a.sizes[static_cast<size_t>(a.index)]};
}
Tensor chunk_forward(const Node& n, const std::vector<Tensor>& in) {
  const int64_t d = wrap_dim(n.attrs.dim, in[0].dim());
  const auto [start, width] = slice_of(n.attrs, in[0].size(d));
  return in[0].slice(d, start, start + width);
}
ATTN_SMALL Json chunk_attrs(const Node& n, const std::vector<Node>&) {
  const Attrs& a = n.attrs;
  if (!a.sizes.empty()) return {{"chunks", a.chunks}, {"index", a.index}, {"dim", a.dim}, {"sizes", a.sizes}};
  return {{"chunks", a.chunks}, {"index", a.index}, {"dim", a.dim}};
}
ATTN_SMALL std::string chunk_call(const Node& n, const std::vector<std::string>& args) {
  const Attrs& a = n.attrs;
  if (a.sizes.empty()) return "chunk(" + args[0] + ", " + str(a.chunks) + ", " + str(a.index) + ", " + str(a.dim) + ")";
  return "split(" + args[0] + ", {" + list(a.sizes) + "}, " + str(a.index) + ", " + str(a.dim) + ")";
}
void chunk_backward(const Node& n, const Tensor& g, Grads& w) {  // the slice's gradient, zeros elsewhere
  const Tensor& x = w.input(n, 0).out;
  const int64_t d = wrap_dim(n.attrs.dim, x.dim());
  const auto [start, width] = slice_of(n.attrs, x.size(d));
  Tensor gx = Tensor::zeros(x.shape());
  add_strided(gx.slice(d, start, start + width), g);
  w.give(n, 0, gx, true);
}

Tensor concat_forward(const Node&, const std::vector<Tensor>& in) { return cat_last(in); }
ATTN_SMALL Json concat_attrs(const Node&, const std::vector<Node>&) { return {{"dim", -1}}; }
ATTN_SMALL std::string concat_call(const Node&, const std::vector<std::string>& args) { return "concat({" + args_list(args) + "})"; }
void concat_backward(const Node& n, const Tensor& g, Grads& w) {
  int64_t col = 0;
  for (size_t i = 0; i < n.in.size(); ++i) {
    const int64_t width = w.input(n, i).out.size(-1);
    w.give(n, i, g.slice(g.dim() - 1, col, col + width), false);
    col += width;
  }
}

Tensor stack_forward(const Node& n, const std::vector<Tensor>& in) { return stack(in, n.attrs.dim); }
ATTN_SMALL Json dim_attrs(const Node& n, const std::vector<Node>&) { return {{"dim", n.attrs.dim}}; }
ATTN_SMALL std::string stack_call(const Node& n, const std::vector<std::string>& args) {
  return "stack({" + args_list(args) + "}, " + str(n.attrs.dim) + ")";
}
void stack_backward(const Node& n, const Tensor& g, Grads& w) {
  const int64_t d = wrap_dim(n.attrs.dim, g.dim());
  for (size_t i = 0; i < n.in.size(); ++i) {
    const int64_t j = static_cast<int64_t>(i);
    w.give(n, i, g.slice(d, j, j + 1).contiguous().view(w.input(n, i).out.shape()), false);
  }
}

}  // namespace

const OpDef split_heads_op{"split_heads", split_heads_forward, heads_attrs, split_heads_call, split_heads_backward};
const OpDef merge_heads_op{"merge_heads", merge_heads_forward, heads_attrs, plain_call, merge_heads_backward};
const OpDef view_op{"view", view_forward, view_attrs, view_call, view_backward};
const OpDef transpose_op{"transpose", transpose_forward, transpose_attrs, transpose_call, transpose_backward};
const OpDef chunk_op{"chunk", chunk_forward, chunk_attrs, chunk_call, chunk_backward};
const OpDef concat_op{"concat", concat_forward, concat_attrs, concat_call, concat_backward};
const OpDef stack_op{"stack", stack_forward, dim_attrs, stack_call, stack_backward};

Var split_heads(Context& ctx, const Var& x, int64_t H) {
  if (x.dim() != 3 || H <= 0 || x.size(2) % H != 0)
    fail("split_heads: ", shape_str(x.shape()), " must be (B, T, H*D) with H (", H, ") dividing the last dimension");
  Attrs a;
  a.heads = H;
  return apply(ctx, Op::split_heads, {x}, a);
}

Var merge_heads(Context& ctx, const Var& x) {
  if (x.dim() != 4) fail("merge_heads: ", shape_str(x.shape()), " must be (B, H, T, D)");
  Attrs a;
  a.heads = x.size(1);
  return apply(ctx, Op::merge_heads, {x}, a);
}

Var view(Context& ctx, const Var& x, Shape shape) {
  Attrs a;
  a.shape = std::move(shape);
  return apply(ctx, Op::view, {x}, a);
}

Var transpose(Context& ctx, const Var& x, int64_t d0, int64_t d1) {
  Attrs a;
  a.dim0 = d0;
  a.dim1 = d1;
  return apply(ctx, Op::transpose, {x}, a);
}

Var chunk(Context& ctx, const Var& x, int64_t chunks, int64_t index, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim());
  if (d < 0 || d >= x.dim() || chunks <= 0 || x.size(d) % chunks != 0 || index < 0 || index >= chunks)
    fail("chunk: dim ", dim, " of ", shape_str(x.shape()), " must split into ", chunks, " equal parts");
  Attrs a;
  a.chunks = chunks;
  a.index = index;
  a.dim = dim;
  return apply(ctx, Op::chunk, {x}, a);
}

Var split(Context& ctx, const Var& x, const std::vector<int64_t>& sizes, int64_t index, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim());
  int64_t total = 0;
  bool positive = true;
  for (int64_t s : sizes) {
    positive = positive && s > 0;
    total += s;
  }
  if (d < 0 || d >= x.dim() || !positive || total != x.size(d) || index < 0 || index >= static_cast<int64_t>(sizes.size()))
    fail("split: dim ", dim, " of ", shape_str(x.shape()), " must split into ", sizes.size(), " positive widths that add up to it");
  Attrs a;
  a.chunks = static_cast<int64_t>(sizes.size());
  a.index = index;
  a.dim = dim;
  a.sizes = sizes;
  return apply(ctx, Op::chunk, {x}, a);
}

Var concat(Context& ctx, const std::vector<Var>& xs) { return apply(ctx, Op::concat, xs); }

Var stack(Context& ctx, const std::vector<Var>& xs, int64_t dim) {
  Attrs a;
  a.dim = dim;
  return apply(ctx, Op::stack, xs, a);
}

}  // namespace attn
