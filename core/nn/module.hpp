// Module: what every seed class becomes here. A module is built from its seed's constructor
// arguments (Config) and a Generator, in the seed's construction order, so a seed gives
// PyTorch's weights; forward takes the inputs in the seed's argument order, as tensors on the
// tape (tape.hpp). The table of all modules (registry.cpp) tells the bindings and the page each
// module's arguments, inputs and attention conventions, as typed fields.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/attention_spec.hpp"
#include "base/random.hpp"
#include "tape/tape.hpp"
#include "base/tensor.hpp"

namespace attn {

class Generative;  // generate.hpp: a module that generates token by token (GPT)

struct NamedTensor {
  std::string name;
  Tensor value;
};
struct NamedVar {
  std::string name;
  Var value;
};
using Outputs = std::vector<NamedVar>;                           // "output" first
using ParamList = std::vector<std::pair<std::string, Tensor*>>;  // state_dict names

// A forward's outputs as plain tensors, each with the step that holds the same tensor ("" none).
struct Collected {
  std::vector<NamedTensor> outputs;
  std::vector<std::string> steps;
};
// Throws (field "inputs") when an output holds NaN: the inputs overflow float32.
Collected collect_outputs(const Outputs& outputs, const Context& ctx);

class Module {
 public:
  virtual ~Module() = default;
  // inputs: in the order of ModuleInfo::inputs; optional ones may be undefined
  virtual Outputs forward(const std::vector<Var>& inputs, Context& ctx) = 0;
  virtual void parameters(const std::string& prefix, ParamList& out) = 0;
  // Its attention blocks with this config's numbers (heads, head dims, the float scale).
  virtual std::vector<AttentionSpec> attention() const { return {}; }
  // Non-null for a language model that generate (SCENARIO.md, "Generation") can drive.
  virtual Generative* generative() { return nullptr; }
  // A state_dict name this module's files may hold that is not a parameter here and is skipped
  // when loading weights: a buffer the core recomputes, or a tied alias (GPT's lm_head.weight).
  virtual bool skips_in_state_dict(const std::string& name) const { return false; }
};

// Whether name ends with tail after at least one character of its own ("x.attn.bias" ends with
// ".attn.bias"): a state_dict name's kind, a file name's extension.
inline bool ends_with(const std::string& name, const std::string& tail) {
  return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

// The module table's texts are string literals (const char*): the table is static data, not
// code that builds strings (in the WASM, 20 KB less to download).
enum class ArgType { Int, Float, Bool };
struct ArgSpec {
  const char* name;
  ArgType type;
  bool required;
  double default_value;  // when !required
  double min, max;       // inclusive bounds (limits keep memory in budget)
  const char* help;
};

enum class InputKind { Float, Mask, Ids };
// What an input is for, so a page can build it without reading its documentation.
enum class InputRole {
  x,       // the one input of a self-attention module (or of softmax, PositionalEncoding)
  query,   // queries of an attention over separate inputs (Q, query)
  key,     // keys (K, key)
  value,   // values (V, value)
  memory,  // the encoder output a decoder attends to (enc_output)
  source,  // source token ids (the Transformer's src)
  target,  // target token ids (tgt)
  tokens,  // the token ids of a decoder-only model (CausalTransformer's idx)
  mask,    // an attention mask (its rule: the module's AttentionSpec)
  positions,  // the position of each token (ModernAttention: RoPE, ALiBi, the window), default 0..T-1
};
const char* input_role_name(InputRole r);
struct InputSpec {
  const char* name;
  InputKind kind;
  bool optional;
  InputRole role;
  std::vector<const char*> dims;  // one name per dimension; a leading "..." = any number more
  const char* width;              // the config argument its last dimension must equal ("" none)
  const char* shape;              // the same, for people: "(B,T,d_in)"
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
  const char* id;        // e.g. "CausalMultiHeadAttention"
  const char* seed;      // "004"
  const char* seed_name; // the class or function name in the seed, e.g. "MultiHeadAttention"
  const char* summary;
  std::vector<ArgSpec> args;
  std::vector<InputSpec> inputs;
  std::vector<const char*> outputs;
  std::unique_ptr<Module> (*make)(const Config&, Generator&);
  // Its attention blocks' conventions, without the config's numbers (heads, scale: 0). For a module
  // with layers, one entry per kind of block, prefix written with "*" for the layer index.
  std::vector<AttentionSpec> attention;
  // A language model "generate" can drive (its module's generative() is non-null).
  bool generates = false;
};

const std::vector<ModuleInfo>& module_registry();
const ModuleInfo& module_info(const std::string& id);  // throws Error naming the known ids
// Fills defaults, rejects unknown names, wrong types and values out of bounds.
Config make_config(const ModuleInfo& info, const std::map<std::string, double>& given);
// Whether train() changes what the module computes (it has dropout).
bool has_dropout(const ModuleInfo& info);

}  // namespace attn
