// The module table: every seed module with its constructor arguments and inputs, in the order
// the page lists them; and the validation of a config against it.
#include <cmath>
#include <set>
#include <string_view>

#include "base/build.hpp"
#include "base/error.hpp"
#include "modules/modules.hpp"

namespace attn {

const std::vector<ModuleInfo>& module_registry() {
  static const std::vector<ModuleInfo> table = {
      info_softmax(),
      info_scaled_dot_product_attention(),
      info_SelfAttention_v1(),
      info_SelfAttention_v2(),
      info_CausalAttention(),
      info_MultiHeadAttentionWrapper(),
      info_CausalMultiHeadAttention(),
      info_MultiHeadAttention(),
      info_SplitHeadsMultiHeadAttention(),
      info_MultiHeadSelfAttention(),
      info_FusedMultiHeadSelfAttention(),
      info_PositionalEncoding(),
      info_EncoderLayer(),
      info_DecoderLayer(),
      info_Transformer(),
      info_CausalTransformer(),
      info_GPT(),
      info_ModernAttention(),
#if ATTN_PRETRAINED  // the page's small build leaves it out (base/build.hpp)
      info_Llama(),
#endif
  };
  return table;
}

const ModuleInfo& module_info(const std::string& id) {
  std::string known;
  for (const ModuleInfo& m : module_registry()) {
    if (m.id == id) return m;
    known += (known.empty() ? "" : ", ") + std::string(m.id);
  }
  fail_at("module", "module '", id, "' is unknown: use one of ", known);
}

bool has_dropout(const ModuleInfo& info) {
  for (const ArgSpec& a : info.args)
    if (std::string_view(a.name) == "dropout") return true;
  return false;
}

const char* input_role_name(InputRole r) {
  switch (r) {
    case InputRole::x: return "x";
    case InputRole::query: return "query";
    case InputRole::key: return "key";
    case InputRole::value: return "value";
    case InputRole::memory: return "memory";
    case InputRole::source: return "source";
    case InputRole::target: return "target";
    case InputRole::tokens: return "tokens";
    case InputRole::mask: return "mask";
    case InputRole::positions: return "positions";
  }
  return "?";
}

static const char* type_name(ArgType t) {
  return t == ArgType::Int ? "an integer" : t == ArgType::Float ? "a number" : "true or false";
}

Config make_config(const ModuleInfo& info, const std::map<std::string, double>& given) {
  Config c;
  std::set<std::string> known;
  for (const ArgSpec& a : info.args) known.insert(a.name);
  for (const auto& [name, value] : given) {
    if (!known.count(name)) {
      std::string names;
      for (const ArgSpec& a : info.args) names += (names.empty() ? "" : ", ") + std::string(a.name);
      fail_at("config." + name, "config '", name, "' is not an argument of ", info.id, ": its arguments are ",
           names.empty() ? std::string("(none)") : names);
    }
  }
  for (const ArgSpec& a : info.args) {
    auto it = given.find(a.name);
    if (it == given.end()) {
      if (a.required) fail_at(std::string("config.") + a.name, "config '", a.name, "' is required by ", info.id, " (", a.help, ")");
      c.values[a.name] = a.default_value;
      continue;
    }
    const double v = it->second;
    const std::string field = std::string("config.") + a.name;
    if (!std::isfinite(v)) fail_at(field, "config '", a.name, "' (", v, ") must be ", type_name(a.type));
    if (a.type != ArgType::Float && v != std::floor(v))
      fail_at(field, "config '", a.name, "' (", v, ") must be ", type_name(a.type));
    if (v < a.min || v > a.max)
      fail_at(field, "config '", a.name, "' (", v, ") must be between ", a.min, " and ", a.max);
    c.values[a.name] = v;
  }
  return c;
}

}  // namespace attn
