// The tape: recording nodes and naming steps (see tape.hpp), and the table of the ops' descriptors
// (op.hpp), built here from the op list. Each step's typed description is derived in steps.cpp.
#include "tape/tape.hpp"

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
void no_backward(const Node&, const Tensor&, Grads&) {}

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

std::vector<std::string> Context::step_names() const {
  std::vector<std::string> names;
  for (const Named& n : named_) names.push_back(n.name);
  return names;
}

std::string Context::step_of(int32_t id) const {
  for (const Named& n : named_)
    if (n.node == id && id >= 0) return n.name;
  return "";
}

}  // namespace attn
