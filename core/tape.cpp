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
    case Op::scale: return "scale";
    case Op::masked_fill: return "masked_fill";
    case Op::softmax: return "softmax";
    case Op::dropout: return "dropout";
    case Op::layer_norm: return "layer_norm";
    case Op::relu: return "relu";
    case Op::amax: return "amax";
    case Op::sub: return "sub";
    case Op::exp: return "exp";
    case Op::mse_loss: return "mse_loss";
    case Op::cross_entropy: return "cross_entropy";
    case Op::sum: return "sum";
  }
  return "?";
}

Var Context::input(const Tensor& t, const std::string& name) {
  if (!recording()) return {t, -1};
  Node n{Op::input, {}, t, {}, {}, {}, name};
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
      nodes_.push_back(Node{Op::parameter, {}, t, {}, {}, {}, r.name});
      r.node = static_cast<int32_t>(nodes_.size() - 1);
    }
    return {t, r.node};
  }
  // A module run on its own (tests, benchmarks) without bind_parameters: an unnamed parameter.
  params_.push_back({t.base(), "param", -1});
  return param(t);
}

Var Context::record(Op op, std::vector<int32_t> in, Tensor out, Attrs attrs, Tensor saved, std::vector<int64_t> ids) {
  nodes_.push_back(Node{op, std::move(in), out, std::move(attrs), std::move(saved), std::move(ids), {}});
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
  // as names, unnamed nodes as their own calls, folded into this step.
  std::string expr(int32_t id, bool top = false) {
    if (id < 0) return "";
    const Node& n = nodes_[static_cast<size_t>(id)];
    if (!top) {
      if (n.op == Op::input || n.op == Op::parameter) {
        add_input(n.op == Op::input ? StepInput::Kind::input : StepInput::Kind::param, n.leaf);
        return relative(n.leaf, scope_);
      }
      if (named_[static_cast<size_t>(id)] >= 0) {
        const std::string& name = names_[static_cast<size_t>(named_[static_cast<size_t>(id)])];
        add_input(StepInput::Kind::step, name);
        return relative(name, scope_);
      }
    }
    const auto arg = [&](size_t i) { return i < n.in.size() ? expr(n.in[i]) : std::string(); };
    const auto leaf = [&](size_t i) -> json {
      if (i >= n.in.size() || n.in[i] < 0) return nullptr;
      const Node& m = nodes_[static_cast<size_t>(n.in[i])];
      return m.op == Op::parameter ? json(m.leaf) : json(nullptr);
    };
    std::string out;
    switch (n.op) {
      case Op::input:
      case Op::parameter: out = relative(n.leaf, scope_); break;
      case Op::embedding:
        out = "embedding(" + arg(0) + ", " + (n.attrs.ids_input.empty() ? "ids" : n.attrs.ids_input) + ")";
        attrs_["weight"] = leaf(0);
        attrs_["ids_input"] = n.attrs.ids_input.empty() ? json(nullptr) : json(n.attrs.ids_input);
        attrs_["embedding_dim"] = n.out.size(-1);
        break;
      case Op::positional_encoding:
        out = "positional_encoding(" + std::to_string(n.attrs.shape[1]) + ", " + std::to_string(n.attrs.shape[2]) + ")";
        attrs_["seq_len"] = n.attrs.shape[1];
        attrs_["emb_dim"] = n.attrs.shape[2];
        break;
      case Op::linear: {
        const std::string x = arg(0), w = arg(1), b = n.in.size() > 2 && n.in[2] >= 0 ? arg(2) : "";
        out = "linear(" + x + ", " + w + (b.empty() ? "" : ", " + b) + ")";
        attrs_["weight"] = leaf(1);
        attrs_["bias"] = leaf(2);
        attrs_["in_features"] = nodes_[static_cast<size_t>(n.in[1])].out.size(1);
        attrs_["out_features"] = nodes_[static_cast<size_t>(n.in[1])].out.size(0);
        break;
      }
      case Op::matmul: {
        const std::string a = arg(0), b = arg(1);
        out = std::string(n.attrs.transpose_b ? "matmul_bt(" : "matmul(") + a + ", " + b + ")";
        attrs_["transpose_b"] = n.attrs.transpose_b;
        break;
      }
      case Op::weighted_sum: {
        const std::string a = arg(0), b = arg(1);
        out = "weighted_sum(" + a + ", " + b + ")";
        break;
      }
      case Op::split_heads:
        out = "split_heads(" + arg(0) + ", " + std::to_string(n.attrs.heads) + ")";
        attrs_["heads"] = n.attrs.heads;
        break;
      case Op::merge_heads:
        out = "merge_heads(" + arg(0) + ")";
        attrs_["heads"] = n.attrs.heads;
        break;
      case Op::view: {
        std::string shape;
        for (size_t i = 0; i < n.attrs.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(n.attrs.shape[i]);
        out = "view(" + arg(0) + ", {" + shape + "})";
        attrs_["shape"] = n.attrs.shape;
        break;
      }
      case Op::transpose:
        out = "transpose(" + arg(0) + ", " + std::to_string(n.attrs.dim0) + ", " + std::to_string(n.attrs.dim1) + ")";
        attrs_["dim0"] = n.attrs.dim0;
        attrs_["dim1"] = n.attrs.dim1;
        break;
      case Op::chunk:
        out = "chunk(" + arg(0) + ", " + std::to_string(n.attrs.chunks) + ", " + std::to_string(n.attrs.index) + ", " +
              std::to_string(n.attrs.dim) + ")";
        attrs_["chunks"] = n.attrs.chunks;
        attrs_["index"] = n.attrs.index;
        attrs_["dim"] = n.attrs.dim;
        break;
      case Op::concat:
      case Op::stack: {
        std::string list;
        for (size_t i = 0; i < n.in.size(); ++i) list += (i ? ", " : "") + arg(i);
        out = std::string(n.op == Op::concat ? "concat({" : "stack({") + list + "}" +
              (n.op == Op::stack ? ", " + std::to_string(n.attrs.dim) : "") + ")";
        attrs_["dim"] = n.op == Op::concat ? -1 : n.attrs.dim;
        break;
      }
      case Op::scale:
        out = std::string(n.attrs.divide ? "div_scalar(" : "mul_scalar(") + arg(0) + ", " + num(n.attrs.scale) + ")";
        attrs_["scale"] = static_cast<double>(n.attrs.scale);
        attrs_["divide"] = n.attrs.divide;
        break;
      case Op::masked_fill: {
        const Attrs& a = n.attrs;
        const std::string x = arg(0);
        std::string mask;
        if (a.causal) mask = "causal_mask(" + std::to_string(n.out.size(-2)) + ", " + std::to_string(n.out.size(-1)) + ")";
        else if (a.masked_where_zero) mask = "equal_zero(" + a.mask_input + ")";
        else mask = a.mask_input + (a.mask_unsqueezed ? ".unsqueeze(1)" : "");
        out = "masked_fill(" + x + ", " + mask + ", " + num(a.fill) + ")";
        attrs_["fill"] = number(a.fill);
        attrs_["causal"] = a.causal;
        attrs_["mask_input"] = a.causal ? json(nullptr) : json(a.mask_input);
        attrs_["masked_where"] = a.causal ? "causal" : a.masked_where_zero ? "zero" : "nonzero";
        attrs_["unsqueezed"] = a.mask_unsqueezed;
        break;
      }
      case Op::softmax:
        out = "softmax(" + arg(0) + (n.attrs.dim == -1 ? "" : ", " + std::to_string(n.attrs.dim)) + ")";
        attrs_["dim"] = n.attrs.dim;
        break;
      case Op::dropout:
        out = "dropout(" + arg(0) + ", " + num(n.attrs.p) + ")";
        attrs_["p"] = static_cast<double>(n.attrs.p);
        break;
      case Op::layer_norm: {
        const std::string x = arg(0), w = arg(1), b = arg(2);
        out = "layer_norm(" + x + ", " + w + ", " + b + ")";
        attrs_["weight"] = leaf(1);
        attrs_["bias"] = leaf(2);
        attrs_["eps"] = static_cast<double>(n.attrs.eps);
        break;
      }
      case Op::relu: out = "relu(" + arg(0) + ")"; break;
      case Op::amax:
        out = "amax(" + arg(0) + ", " + std::to_string(n.attrs.dim) + ")";
        attrs_["dim"] = n.attrs.dim;
        break;
      case Op::add:
      case Op::sub:
      case Op::mse_loss:
      case Op::cross_entropy: {
        const std::string a = arg(0), b = arg(1);
        out = std::string(op_name(n.op)) + "(" + a + ", " + (b.empty() ? "target" : b) + ")";
        if (n.op == Op::cross_entropy) attrs_["ignore_index"] = n.attrs.ignore_index;
        break;
      }
      case Op::exp: out = "exp(" + arg(0) + ")"; break;
      case Op::sum: out = "sum(" + arg(0) + ")"; break;
    }
    ops_.push_back(n.op);
    return out;
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

std::vector<Step> Context::steps() const {
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
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace attn
