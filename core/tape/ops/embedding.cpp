// Where a model's first vectors come from: rows of an embedding table by token id (the ids kept on
// the node), and seed 002's sinusoidal positional-encoding table (a constant).
#include "kernels/kernels.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

size_t u(int64_t v) { return static_cast<size_t>(v); }

// attrs.shape: the rows the ids fill, (rows...) -> (rows..., d)
Tensor embedding_forward(const Node& n, const std::vector<Tensor>& in) { return embedding(in[0], n.ids, n.attrs.shape); }
ATTN_SMALL Json embedding_attrs(const Node& n, const std::vector<Node>& nodes) {
  return {{"weight", param_name(n, nodes, 0)}, {"ids_input", n.attrs.ids_input.empty() ? Json(nullptr) : Json(n.attrs.ids_input)},
          {"embedding_dim", n.out.size(-1)}};
}
ATTN_SMALL std::string embedding_call(const Node& n, const std::vector<std::string>& args) {
  return "embedding(" + args[0] + ", " + (n.attrs.ids_input.empty() ? "ids" : n.attrs.ids_input) + ")";
}
void embedding_backward(const Node& n, const Tensor& g, Grads& w) {
  const Tensor& weight = w.input(n, 0).out;
  const int64_t D = weight.size(1);
  Tensor gw = Tensor::zeros(weight.shape());
  float* gwp = gw.data();
  const float* gp = g.data();
  const Kernels& k = kernels();
  for (size_t i = 0; i < n.ids.size(); ++i)  // accumulated per id, in order
    k.axpy(gwp + n.ids[i] * D, 1.f, gp + static_cast<int64_t>(i) * D, u(D));
  w.give(n, 0, gw, true);
}

// attrs.shape: (1, T, C)
Tensor positional_encoding_forward(const Node& n, const std::vector<Tensor>&) {
  return positional_encoding(n.attrs.shape[1], n.attrs.shape[2]).unsqueeze(0);
}
ATTN_SMALL Json positional_encoding_attrs(const Node& n, const std::vector<Node>&) {
  return {{"seq_len", n.attrs.shape[1]}, {"emb_dim", n.attrs.shape[2]}};
}
ATTN_SMALL std::string positional_encoding_call(const Node& n, const std::vector<std::string>&) {
  return "positional_encoding(" + std::to_string(n.attrs.shape[1]) + ", " + std::to_string(n.attrs.shape[2]) + ")";
}

}  // namespace

const OpDef embedding_op{"embedding", embedding_forward, embedding_attrs, embedding_call, embedding_backward};
const OpDef positional_encoding_op{"positional_encoding", positional_encoding_forward, positional_encoding_attrs,
                                   positional_encoding_call, no_backward};

Var embedding(Context& ctx, const Var& weight, const std::vector<int64_t>& ids, const Shape& rows, const std::string& ids_input) {
  Attrs a;
  a.ids_input = ids_input;
  a.shape = rows;
  return apply(ctx, Op::embedding, {weight}, a, {}, ids);
}

Var positional_encoding(Context& ctx, int64_t T, int64_t C) {
  Attrs a;
  a.shape = {1, T, C};
  return apply(ctx, Op::positional_encoding, {}, a);
}

}  // namespace attn
