// One descriptor per op (tape/op_list.hpp), defined beside the op's code in tape/ops/:
//   name      what a step's `op` says ("softmax")
//   forward   its output from its inputs' tensors and the node's attributes: the tape functions
//             (tape/graph.hpp) compute with it, and a replay of the tape (tape.hpp) recomputes with it
//   attrs     the attributes a view reads, as JSON (named in the op's entry of tape/op_list.hpp)
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

#include "base/build.hpp"
#include "base/error.hpp"
#include "math/ops.hpp"
#include "tape/tape.hpp"

namespace attn {

using Json = nlohmann::json;
class Grads;

// A descriptor's attrs and call run once per step when a traced run ends, never in a loop: in the
// WASM they are built for size (clang's minsize), beside forward and backward at full speed.
#if defined(__clang__)
#define ATTN_SMALL __attribute__((minsize))
#else
#define ATTN_SMALL
#endif

// The first line of an op only Hugging Face's models use (silu, mul, rms_norm, gelu's tanh form):
// the page's small build (base/build.hpp) has no module that records one (Llama is not in its
// table, GPT refuses gelu_tanh there), so this leaves the op's code out, a trap where it was.
#define ATTN_FULL_CORE_OP() \
  if constexpr (!kPretrained) __builtin_trap()

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
  explicit Grads(const std::vector<Node>& nodes, bool params = true) : nodes(nodes), grads(nodes.size()), params(params) {}
  const std::vector<Node>& nodes;
  std::vector<Tensor> grads;
  bool params;  // false: the steps' gradients only (attribution patching), no parameter's

  const Node& input(const Node& n, size_t i) const { return nodes[static_cast<size_t>(n.in[i])]; }
  bool needs(const Node& n, size_t i) const {
    return i < n.in.size() && n.in[i] >= 0 && input(n, i).requires_grad && (params || input(n, i).op != Op::parameter);
  }
  // Adds g to input i's gradient. fresh: g is a new packed tensor nobody else holds (kept as is).
  void give(const Node& n, size_t i, Tensor g, bool fresh);
};

// A tape function's body (tape/ops/*.cpp): the op's output from its descriptor's forward, then,
// when the context records, one node holding it. in: the inputs' Vars in argument order.
Var apply(Context& ctx, Op op, const std::vector<Var>& in, Attrs attrs = {}, Tensor saved = {}, std::vector<int64_t> ids = {});

}  // namespace attn
