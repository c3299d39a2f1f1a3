// The tape: recording nodes, naming steps, and deriving each step's typed description (its op,
// the ops folded into it, its inputs, its attributes as JSON and its printed C++ call) from the
// ops' descriptors (op.hpp), whose table is built here from the op list. See tape.hpp.
#include "tape/tape.hpp"

#include <cmath>
#include <cstdio>

#include "base/error.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {
const OpDef* const kOpDefs[] = {
#define ATTN_OP_ENTRY(name) &name##_op,
    ATTN_OPS(ATTN_OP_ENTRY)
#undef ATTN_OP_ENTRY
};
static_assert(sizeof(kOpDefs) / sizeof(kOpDefs[0]) == kOpCount, "one descriptor per op of op_list.hpp");
}  // namespace

const OpDef& op_def(Op op) { return *kOpDefs[static_cast<size_t>(op)]; }
const char* op_name(Op op) { return op_def(op).name; }

Tensor keep_output(const Node& n, const std::vector<Tensor>&) { return n.out; }
Json no_attrs(const Node&, const std::vector<Node>&) { return Json::object(); }
void no_backward(const Node&, const Tensor&, Grads&) {}

std::string plain_call(const Node& n, const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args)
    if (!a.empty()) s += (s.empty() ? "" : ", ") + a;
  return std::string(op_name(n.op)) + "(" + s + ")";
}

Json param_name(const Node& n, const std::vector<Node>& nodes, size_t i) {
  if (i >= n.in.size() || n.in[i] < 0) return nullptr;
  const Node& m = nodes[static_cast<size_t>(n.in[i])];
  return m.op == Op::parameter ? Json(m.leaf) : Json(nullptr);
}

std::string float_literal(float v) {
  if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
  if (v == -1e9f) return "-1e9f";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9gf", static_cast<double>(v));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s.insert(s.size() - 1, ".0");
  return s;
}

Json float_json(float v) {  // JSON has no infinity: as the result's data does, "-Infinity"
  if (std::isinf(v)) return v < 0 ? "-Infinity" : "Infinity";
  return static_cast<double>(v);
}

Var apply(Context& ctx, Op op, const std::vector<Var>& in, Attrs attrs, Tensor saved, std::vector<int64_t> ids) {
  Node n{op, {}, Tensor(), std::move(attrs), std::move(saved), std::move(ids), {}, false};
  std::vector<Tensor> tensors;
  tensors.reserve(in.size());
  for (const Var& v : in) tensors.push_back(v.t);
  Tensor out = op_def(op).forward(n, tensors);
  if (!ctx.recording()) return {std::move(out), -1};
  std::vector<int32_t> ids_in;
  for (const Var& v : in) ids_in.push_back(v.id);
  return ctx.record(op, std::move(ids_in), std::move(out), std::move(n.attrs), std::move(n.saved), std::move(n.ids));
}

Var Context::input(const Tensor& t, const std::string& name, bool requires_grad) {
  if (!recording() || !t.defined()) return {t, -1};
  Node n{Op::input, {}, t, {}, {}, {}, name, requires_grad};
  nodes_.push_back(std::move(n));
  return {t, static_cast<int32_t>(nodes_.size() - 1)};
}

void Context::bind_parameters(const std::vector<std::pair<std::string, Tensor*>>& params) {
  params_.clear();
  for (const auto& [name, t] : params) params_.push_back({t->base(), name, -1});
}

Var Context::param(const Tensor& t) {
  if (!recording() || !t.defined()) return {t, -1};
  for (Registered& r : params_) {
    if (r.base != t.base()) continue;
    if (r.node < 0) {
      nodes_.push_back(Node{Op::parameter, {}, t, {}, {}, {}, r.name, true});
      r.node = static_cast<int32_t>(nodes_.size() - 1);
    }
    return {t, r.node};
  }
  // A module run on its own (tests, benchmarks) without bind_parameters: an unnamed parameter.
  params_.push_back({t.base(), "param", -1});
  return param(t);
}

Var Context::record(Op op, std::vector<int32_t> in, Tensor out, Attrs attrs, Tensor saved, std::vector<int64_t> ids) {
  bool requires_grad = false;
  for (int32_t i : in) requires_grad = requires_grad || (i >= 0 && nodes_[static_cast<size_t>(i)].requires_grad);
  nodes_.push_back(Node{op, std::move(in), out, std::move(attrs), std::move(saved), std::move(ids), {}, requires_grad});
  return {std::move(out), static_cast<int32_t>(nodes_.size() - 1)};
}

void Context::name_step(const char* name, const Var& v, std::vector<std::string> dims, const char* code) {
  if (v.id < 0) fail("internal: step '", prefix_, name, "' names a tensor that is not on the tape");
  if (static_cast<int64_t>(dims.size()) != v.dim())
    fail("internal: step '", prefix_, name, "' names ", dims.size(), " dims for a tensor of shape ", shape_str(v.shape()));
  std::vector<std::string> tokens;
  for (const std::string& d : dims)
    tokens.push_back(d == "seq" || d == "seq_q" ? seq_q_ : d == "seq_k" ? seq_k_ : std::string());
  named_.push_back({prefix_ + name, v.id, std::move(dims), std::move(tokens), code});
}

int32_t Context::param_node(const Tensor& t) const {
  for (const Registered& r : params_)
    if (r.base == t.base()) return r.node;
  return -1;
}

int32_t Context::input_node(const std::string& name) const {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].op == Op::input && nodes_[i].leaf == name) return static_cast<int32_t>(i);
  return -1;
}

std::string Context::step_of(int32_t id) const {
  for (const Named& n : named_)
    if (n.node == id && id >= 0) return n.name;
  return "";
}

namespace {

using json = Json;

// A name as seen from inside scope `scope` ("encoder.0."): the scope is dropped.
std::string relative(const std::string& name, const std::string& scope) {
  return name.compare(0, scope.size(), scope) == 0 ? name.substr(scope.size()) : name;
}

class Printer {
 public:
  Printer(const std::vector<Node>& nodes, const std::vector<int>& named, const std::vector<std::string>& names)
      : nodes_(nodes), named_(named), names_(names) {}

  // Typed description of the step on node `id`, named `self`.
  void describe(int32_t id, const std::string& self, Step& s) {
    scope_ = self.substr(0, self.rfind('.') + 1);
    attrs_ = json::object();
    ops_.clear();
    inputs_.clear();
    s.cpp = expr(id, true);
    s.ops = ops_;
    s.inputs = inputs_;
    s.attrs = attrs_.dump();
  }

 private:
  // The call that made node `id`; inputs that are named (steps, module inputs, parameters) print
  // as names, unnamed nodes as their own calls, folded into this step (their ops and attributes too).
  std::string expr(int32_t id, bool top = false) {
    if (id < 0) return "";
    const Node& n = nodes_[static_cast<size_t>(id)];
    if (n.op == Op::input || n.op == Op::parameter) {
      add_input(n.op == Op::input ? StepInput::Kind::input : StepInput::Kind::param, n.leaf);
      return relative(n.leaf, scope_);
    }
    if (!top && named_[static_cast<size_t>(id)] >= 0) {
      const std::string& name = names_[static_cast<size_t>(named_[static_cast<size_t>(id)])];
      add_input(StepInput::Kind::step, name);
      return relative(name, scope_);
    }
    std::vector<std::string> args;
    for (int32_t in : n.in) args.push_back(expr(in));  // in argument order: inputs are listed so
    const OpDef& def = op_def(n.op);
    attrs_.update(def.attrs(n, nodes_));
    ops_.push_back(n.op);
    return def.call(n, args);
  }

  void add_input(StepInput::Kind kind, const std::string& name) {
    for (const StepInput& i : inputs_)
      if (i.kind == kind && i.name == name) return;
    inputs_.push_back({kind, name});
  }

  const std::vector<Node>& nodes_;
  const std::vector<int>& named_;
  const std::vector<std::string>& names_;
  std::string scope_;
  json attrs_;
  std::vector<Op> ops_;
  std::vector<StepInput> inputs_;
};

}  // namespace

std::vector<Step> Context::steps(const std::vector<Tensor>* node_grads) const {
  // named[node] = the first step naming it (its name is how later steps refer to it)
  std::vector<int> named(nodes_.size(), -1);
  std::vector<std::string> names;
  for (size_t i = 0; i < named_.size(); ++i) {
    names.push_back(named_[i].name);
    int& first = named[static_cast<size_t>(named_[i].node)];
    if (first < 0) first = static_cast<int>(i);
  }
  Printer printer(nodes_, named, names);
  std::vector<Step> out;
  out.reserve(named_.size());
  for (const Named& n : named_) {
    const Node& node = nodes_[static_cast<size_t>(n.node)];
    Step s;
    s.name = n.name;
    s.value = node.out.contiguous();
    s.op = node.op;
    s.dims = n.dims;
    s.tokens = n.tokens;
    s.code = n.code;
    printer.describe(n.node, n.name, s);
    if (node_grads && (*node_grads)[static_cast<size_t>(n.node)].defined()) s.grad = (*node_grads)[static_cast<size_t>(n.node)].contiguous();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace attn
