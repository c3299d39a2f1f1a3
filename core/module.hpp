// Module: what every seed class becomes here. A module is built from its seed's constructor
// arguments (Config) and a Generator, in the seed's construction order, so a seed gives
// PyTorch's weights; forward takes the inputs in the seed's argument order. The table of all
// modules (registry.cpp) tells the bindings and the page each module's arguments and inputs.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "random.hpp"
#include "tensor.hpp"
#include "trace.hpp"

namespace attn {

struct NamedTensor {
  std::string name;
  Tensor value;
};
using Outputs = std::vector<NamedTensor>;                      // "output" first
using ParamList = std::vector<std::pair<std::string, Tensor*>>;  // state_dict names

class Module {
 public:
  virtual ~Module() = default;
  // inputs: in the order of ModuleInfo::inputs; optional ones may be undefined Tensors
  virtual Outputs forward(const std::vector<Tensor>& inputs, Context& ctx) = 0;
  virtual void parameters(const std::string& prefix, ParamList& out) = 0;
};

enum class ArgType { Int, Float, Bool };
struct ArgSpec {
  std::string name;
  ArgType type;
  bool required;
  double default_value;  // when !required
  double min, max;       // inclusive bounds (limits keep memory in budget)
  std::string help;
};

enum class InputKind { Float, Mask, Ids };
struct InputSpec {
  std::string name;
  InputKind kind;
  bool optional;
  std::string shape;  // documentation, e.g. "(B,T,d_in)"
};

// Constructor arguments after validation against a ModuleInfo (types and bounds already checked).
class Config {
 public:
  std::map<std::string, double> values;
  int64_t i(const std::string& name) const { return static_cast<int64_t>(values.at(name)); }
  float f(const std::string& name) const { return static_cast<float>(values.at(name)); }
  double d(const std::string& name) const { return values.at(name); }
  bool b(const std::string& name) const { return values.at(name) != 0.0; }
};

struct ModuleInfo {
  std::string id;       // e.g. "CausalMultiHeadAttention"
  std::string seed;     // "004"
  std::string seed_name;// the class or function name in the seed, e.g. "MultiHeadAttention"
  std::string summary;
  std::vector<ArgSpec> args;
  std::vector<InputSpec> inputs;
  std::vector<std::string> outputs;
  std::unique_ptr<Module> (*make)(const Config&, Generator&);
};

const std::vector<ModuleInfo>& module_registry();
const ModuleInfo& module_info(const std::string& id);  // throws Error naming the known ids
// Fills defaults, rejects unknown names, wrong types and values out of bounds.
Config make_config(const ModuleInfo& info, const std::map<std::string, double>& given);

}  // namespace attn
