// The tape: recording nodes, naming steps, and deriving each step's typed description (its op,
// the ops folded into it, its inputs, its attributes as JSON and its printed C++ call). See tape.hpp.
#include "tape.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "error.hpp"

namespace attn {

const char* op_name(Op op) {
  switch (op) {
    case Op::input: return "input";
    case Op::parameter: return "parameter";
    case Op::embedding: return "embedding";
    case Op::positional_encoding: return "positional_encoding";
    case Op::add: return "add";
    case Op::linear: return "linear";
    case Op::matmul: return "matmul";
    case Op::weighted_sum: return "weighted_sum";
    case Op::split_heads: return "split_heads";
    case Op::merge_heads: return "merge_heads";
    case Op::view: return "view";
    case Op::transpose: return "transpose";
    case Op::chunk: return "chunk";
    case Op::concat: return "concat";
    case Op::stack: return "stack";
    case Op::cache_append: return "cache_append";
    case Op::scale: return "scale";
    case Op::masked_fill: return "masked_fill";
    case Op::softmax: return "softmax";
    case Op::dropout: return "dropout";
    case Op::layer_norm: return "layer_norm";
    case Op::relu: return "relu";
    case Op::gelu: return "gelu";
    case Op::amax: return "amax";
    case Op::sub: return "sub";
    case Op::exp: return "exp";
    case Op::mse_loss: return "mse_loss";
    case Op::cross_entropy: return "cross_entropy";
    case Op::sum: return "sum";
    case Op::rope_table: return "rope_table";
    case Op::rope: return "rope";
    case Op::repeat_kv: return "repeat_kv";
    case Op::alibi_bias: return "alibi_bias";
  }
  return "?";
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

using json = nlohmann::json;

std::string num(float v) {
  if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
  if (v == -1e9f) return "-1e9f";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9gf", static_cast<double>(v));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s.insert(s.size() - 1, ".0");
  return s;
}

json number(float v) {  // JSON has no infinity: as the result's data does, "-Infinity"
  if (std::isinf(v)) return v < 0 ? "-Infinity" : "Infinity";
  return static_cast<double>(v);
}

// A name as seen from inside scope `scope` ("encoder.0."): the scope is dropped.
std::string relative(const std::string& name, const std::string& scope) {
  return name.compare(0, scope.size(), scope) == 0 ? name.substr(scope.size()) : name;
}

// The attributes a view reads for node n's op (SCENARIO.md's op table).
json attrs_of(const Node& n, const std::vector<Node>& nodes) {
  const Attrs& a = n.attrs;
  const auto param = [&](size_t i) -> json {
    if (i >= n.in.size() || n.in[i] < 0) return nullptr;
    const Node& m = nodes[static_cast<size_t>(n.in[i])];
    return m.op == Op::parameter ? json(m.leaf) : json(nullptr);
  };
  switch (n.op) {
    case Op::embedding:
      return {{"weight", param(0)}, {"ids_input", a.ids_input.empty() ? json(nullptr) : json(a.ids_input)},
              {"embedding_dim", n.out.size(-1)}};
    case Op::positional_encoding: return {{"seq_len", a.shape[1]}, {"emb_dim", a.shape[2]}};
    case Op::linear: {
      const Tensor& w = nodes[static_cast<size_t>(n.in[1])].out;
      return {{"weight", param(1)}, {"bias", param(2)}, {"in_features", w.size(1)}, {"out_features", w.size(0)}};
    }
    case Op::matmul: return {{"transpose_b", a.transpose_b}};
    case Op::split_heads:
    case Op::merge_heads: return {{"heads", a.heads}};
    case Op::view: return {{"shape", a.shape}};
    case Op::transpose: return {{"dim0", a.dim0}, {"dim1", a.dim1}};
    case Op::chunk:
      if (!a.sizes.empty()) return {{"chunks", a.chunks}, {"index", a.index}, {"dim", a.dim}, {"sizes", a.sizes}};
      return {{"chunks", a.chunks}, {"index", a.index}, {"dim", a.dim}};
    case Op::concat: return {{"dim", -1}};
    case Op::stack:
    case Op::softmax:
    case Op::amax: return {{"dim", a.dim}};
    case Op::scale: return {{"scale", static_cast<double>(a.scale)}, {"divide", a.divide}};
    case Op::rope_table:
      return {{"table", a.sine ? "sin" : "cos"}, {"base", a.base}, {"d_head", n.out.size(1)}, {"positions", n.ids}};
    case Op::repeat_kv: return {{"repeats", a.repeats}, {"dim", 1}};
    case Op::alibi_bias: {
      json slopes = json::array();
      const int64_t T = n.out.size(1), S = n.out.size(2);
      // the float32 slopes the bias was made with (kept beside it: a T = 1 bias is all zeros)
      for (int64_t h = 0; h < n.out.size(0); ++h) slopes.push_back(static_cast<double>(n.saved.data()[h]));
      return {{"heads", n.out.size(0)}, {"slopes", slopes}, {"positions", n.ids}, {"seq_q", T}, {"seq_k", S}};
    }
    case Op::masked_fill:
      return {{"fill", number(a.fill)},
              {"window", a.window},
              {"sink_tokens", a.sink_tokens},
              {"causal", a.causal},
              {"mask_input", a.causal ? json(nullptr) : json(a.mask_input)},
              {"masked_where", a.causal ? "causal" : a.masked_where_zero ? "zero" : "nonzero"},
              {"unsqueezed", a.mask_unsqueezed}};
    case Op::dropout: return {{"p", static_cast<double>(a.p)}};
    case Op::layer_norm: return {{"weight", param(1)}, {"bias", param(2)}, {"eps", static_cast<double>(a.eps)}};
    case Op::cross_entropy: return {{"ignore_index", a.ignore_index}};
    case Op::cache_append:
      return {{"cache", a.cache}, {"cached", a.cached}, {"new", n.out.size(2) - a.cached}, {"capacity", a.capacity}, {"dim", 2}};
    default: return json::object();
  }
}

// The core call that made node n, its arguments already printed (absent ones empty).
std::string call_of(const Node& n, const std::vector<std::string>& args) {
  const Attrs& a = n.attrs;
  const auto list = [&](size_t from) {
    std::string s;
    for (size_t i = from; i < args.size(); ++i)
      if (!args[i].empty()) s += (s.empty() ? "" : ", ") + args[i];
    return s;
  };
  const auto i = [](int64_t v) { return std::to_string(v); };
  switch (n.op) {
    case Op::embedding: return "embedding(" + args[0] + ", " + (a.ids_input.empty() ? "ids" : a.ids_input) + ")";
    case Op::positional_encoding: return "positional_encoding(" + i(a.shape[1]) + ", " + i(a.shape[2]) + ")";
    case Op::matmul: return std::string(a.transpose_b ? "matmul_bt(" : "matmul(") + list(0) + ")";
    case Op::split_heads: return "split_heads(" + args[0] + ", " + i(a.heads) + ")";
    case Op::view: {
      std::string shape;
      for (size_t k = 0; k < a.shape.size(); ++k) shape += (k ? ", " : "") + i(a.shape[k]);
      return "view(" + args[0] + ", {" + shape + "})";
    }
    case Op::transpose: return "transpose(" + args[0] + ", " + i(a.dim0) + ", " + i(a.dim1) + ")";
    case Op::chunk: {
      if (a.sizes.empty()) return "chunk(" + args[0] + ", " + i(a.chunks) + ", " + i(a.index) + ", " + i(a.dim) + ")";
      std::string sizes;
      for (size_t k = 0; k < a.sizes.size(); ++k) sizes += (k ? ", " : "") + i(a.sizes[k]);
      return "split(" + args[0] + ", {" + sizes + "}, " + i(a.index) + ", " + i(a.dim) + ")";
    }
    case Op::concat: return "concat({" + list(0) + "})";
    case Op::stack: return "stack({" + list(0) + "}, " + i(a.dim) + ")";
    case Op::scale: return std::string(a.divide ? "div_scalar(" : "mul_scalar(") + args[0] + ", " + num(a.scale) + ")";
    case Op::rope_table: return std::string("rope_table(positions, ") + i(n.out.size(1)) + ", " + num(static_cast<float>(a.base)) + (a.sine ? ", sin)" : ", cos)");
    case Op::repeat_kv: return "repeat_kv(" + args[0] + ", " + i(a.repeats) + ")";
    case Op::alibi_bias: return "alibi_bias(positions, " + i(n.out.size(0)) + ")";
    case Op::masked_fill: {
      if (a.window > 0)
        return "masked_fill(" + args[0] + ", window_mask(positions, " + i(a.window) + ", " + i(a.sink_tokens) + "), " + num(a.fill) + ")";
      const std::string mask = a.causal ? "causal_mask(" + i(n.out.size(-2)) + ", " + i(n.out.size(-1)) + ")"
                               : a.masked_where_zero ? "equal_zero(" + a.mask_input + ")"
                                                     : a.mask_input + (a.mask_unsqueezed ? ".unsqueeze(1)" : "");
      return "masked_fill(" + args[0] + ", " + mask + ", " + num(a.fill) + ")";
    }
    case Op::softmax: return "softmax(" + args[0] + (a.dim == -1 ? "" : ", " + i(a.dim)) + ")";
    case Op::dropout: return "dropout(" + args[0] + ", " + num(a.p) + ")";
    case Op::amax: return "amax(" + args[0] + ", " + i(a.dim) + ")";
    case Op::cache_append: return "cache_append(" + a.cache + "_cache, " + args[0] + ")";
    case Op::mse_loss:
    case Op::cross_entropy: return std::string(op_name(n.op)) + "(" + args[0] + ", target)";
    default: return std::string(op_name(n.op)) + "(" + list(0) + ")";  // linear, add, relu, layer_norm, ...
  }
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
    attrs_.update(attrs_of(n, nodes_));
    ops_.push_back(n.op);
    return call_of(n, args);
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
