// Each named step's typed description, derived from the tape when a run ends (tape.hpp
// Context::steps): its op, the unnamed ops folded into its line, its inputs, its attributes as JSON
// and its printed C++ call, from the ops' descriptors (op.hpp); and the descriptors' common fields.
#include <cmath>
#include <cstdio>

#include "base/error.hpp"
#include "tape/op.hpp"
#include "tape/tape.hpp"

namespace attn {

Json no_attrs(const Node&, const std::vector<Node>&) { return Json::object(); }

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
