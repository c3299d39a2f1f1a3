// One descriptor per op (tape/op_list.hpp), defined beside the op's code in tape/ops/:
//   name      what a step's `op` says ("softmax")
//   forward   its output from its inputs' tensors and the node's attributes: the tape functions
//             (tape/graph.hpp) compute with it, and a replay of the tape (tape.hpp) recomputes with it
//   attrs     the attributes a view reads, as JSON (core/SCENARIO.md's op table)
//   call      the core call that made the node, printed from its arguments (a step's `cpp`)
//   backward  its inputs' gradients from its output's (tape/autograd.hpp)
// Every field is required: OpDef has one constructor taking all five, so an op without a backward
// does not compile; a leaf or a constant says so with no_backward. tape.cpp builds the table
// from the op list, so an op listed without a descriptor does not link.
// Internal to the tape layer: modules call the tape functions of graph.hpp.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tape/tape.hpp"

namespace attn {

using Json = nlohmann::json;
class Grads;

struct OpDef {
  using Forward = Tensor (*)(const Node& n, const std::vector<Tensor>& in);
  using AttrsOf = Json (*)(const Node& n, const std::vector<Node>& nodes);
  using CallOf = std::string (*)(const Node& n, const std::vector<std::string>& args);
  using Backward = void (*)(const Node& n, const Tensor& g, Grads& grads);
  OpDef(const char* name, Forward forward, AttrsOf attrs, CallOf call, Backward backward)
      : name(name), forward(forward), attrs(attrs), call(call), backward(backward) {}
  const char* name;
  Forward forward;
  AttrsOf attrs;
  CallOf call;
  Backward backward;
};

// Each op's descriptor, `<name>_op`, declared here and defined in its family's file in tape/ops/.
#define ATTN_OP_DECLARE(name) extern const OpDef name##_op;
ATTN_OPS(ATTN_OP_DECLARE)
#undef ATTN_OP_DECLARE

const OpDef& op_def(Op op);

// The common cases of a descriptor's fields.
Tensor keep_output(const Node& n, const std::vector<Tensor>& in);  // a leaf or a constant: its recorded tensor
Json no_attrs(const Node& n, const std::vector<Node>& nodes);        // {}
std::string plain_call(const Node& n, const std::vector<std::string>& args);  // name(arg, arg, ...)
void no_backward(const Node& n, const Tensor& g, Grads& grads);      // a leaf or a constant: nothing to pass on
// The state_dict name of parameter input i of n (null when that input is absent or not a parameter).
Json param_name(const Node& n, const std::vector<Node>& nodes, size_t i);
// A float as C++ source ("0.125f", "-INFINITY", "-1e9f") and as JSON (infinity as "-Infinity").
std::string float_literal(float v);
Json float_json(float v);

// The reverse walk's state (autograd.cpp): every node's gradient so far, and how an op's backward
// hands its inputs theirs.
class Grads {
 public:
  explicit Grads(const std::vector<Node>& nodes) : nodes(nodes), grads(nodes.size()) {}
  const std::vector<Node>& nodes;
  std::vector<Tensor> grads;

  const Node& input(const Node& n, size_t i) const { return nodes[static_cast<size_t>(n.in[i])]; }
  bool needs(const Node& n, size_t i) const { return i < n.in.size() && n.in[i] >= 0 && input(n, i).requires_grad; }
  // Adds g to input i's gradient. fresh: g is a new packed tensor nobody else holds (kept as is).
  void give(const Node& n, size_t i, Tensor g, bool fresh);
};

// Backward helpers shared by several ops (autograd.cpp).
// g summed down to `shape` (a's trailing dims, or dims of size 1): the gradient of a broadcast operand.
Tensor reduce_to(const Tensor& g, const Shape& shape);
// dst[idx] += src[idx] over every index; dst may be a strided view (a slice of a gradient).
void add_strided(const Tensor& dst, const Tensor& src);
// (rows x cols) row-major -> its transpose, packed (cols x rows)
void transpose_into(float* p, const float* a, int64_t rows, int64_t cols);
// out[i] = f(g[i], other[i]) elementwise
template <class F>
Tensor map2(const Tensor& g, const Tensor& other, F f) {
  const Tensor o = other.contiguous();
  Tensor out = Tensor::empty(g.shape());
  float* dst = out.data();
  const float *gp = g.data(), *op = o.data();
  for (int64_t i = 0, n = g.numel(); i < n; ++i) dst[i] = f(gp[i], op[i]);
  return out;
}

// A tape function's body (tape/ops/*.cpp): the op's output from its descriptor's forward, then,
// when the context records, one node holding it. in: the inputs' Vars in argument order.
Var apply(Context& ctx, Op op, const std::vector<Var>& in, Attrs attrs = {}, Tensor saved = {}, std::vector<int64_t> ids = {});

}  // namespace attn
