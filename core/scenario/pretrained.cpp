// See pretrained.hpp. config.json's names and defaults are Hugging Face's (GPT2Config,
// LlamaConfig, MistralConfig, Qwen2Config): a key the file leaves out takes the value the
// checkpoint's own code would give it.
#include "scenario/pretrained.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.hpp"
#include "base/limits.hpp"
#include "nn/module.hpp"
#include "scenario/fields.hpp"

namespace attn {
namespace {

// A small JSON file of the folder (config.json, the shard index), parsed under a size bound.
json read_json(const ModelFolder& f, const std::string& name, bool& found) {
  Blob b;
  found = f.read(name, b);
  if (!found) return json();
  if (b.size() > kMaxConfigBytes)
    fail("model folder '", f.label, "': ", name, " has ", b.size(), " bytes, above the ", kMaxConfigBytes, "-byte limit for it");
  try {
    json j = json::parse(b.begin(), b.end(), [](int depth, json::parse_event_t, json&) {
      if (depth > 16) fail("nests deeper than 16 levels");
      return true;
    });
    if (!j.is_object()) fail("must be a JSON object, got ", brief(j));
    return j;
  } catch (const json::exception& e) {
    fail("model folder '", f.label, "': ", name, " is not valid JSON: ", e.what());
  } catch (const Error& e) {
    fail("model folder '", f.label, "': ", name, " ", e.what());
  }
}

// config.json's reading: a key's value, or the Hugging Face default when absent or null.
struct HfConfig {
  const json& j;
  const std::string& label;
  [[noreturn]] void bad(const std::string& key, const std::string& rule) const {
    fail_at("pretrained", "model folder '", label, "': config.json's ", key, " (", brief(j[key]), ") ", rule);
  }
  double number(const std::string& key, double def, double lo, double hi, bool integer) const {
    if (!j.contains(key) || j[key].is_null()) return def;
    if (!j[key].is_number()) bad(key, "must be a number");
    const double v = j[key].get<double>();
    if (!std::isfinite(v) || v < lo || v > hi || (integer && v != std::floor(v)))
      fail_at("pretrained", "model folder '", label, "': config.json's ", key, " (", v, ") must be ", integer ? "an integer" : "a number",
              " from ", lo, " to ", hi, " for the core");
    return v;
  }
  int64_t integer(const std::string& key, int64_t def, int64_t lo, int64_t hi) const {
    return static_cast<int64_t>(number(key, static_cast<double>(def), static_cast<double>(lo), static_cast<double>(hi), true));
  }
  bool flag(const std::string& key, bool def) const {
    if (!j.contains(key) || j[key].is_null()) return def;
    if (!j[key].is_boolean()) bad(key, "must be true or false");
    return j[key].get<bool>();
  }
  std::string text(const std::string& key, const std::string& def) const {
    if (!j.contains(key) || j[key].is_null()) return def;
    if (!j[key].is_string()) bad(key, "must be a string");
    return j[key].get<std::string>();
  }
};

// GPT2Config -> GPT's config (nanoGPT's names: Hugging Face's GPT-2 is nanoGPT's model with
// Conv1D weights and gelu_new).
std::map<std::string, double> gpt2_config(const HfConfig& c) {
  const int64_t C = c.integer("n_embd", 768, 1, 4096);
  const std::string act = c.text("activation_function", "gelu_new");
  if (act != "gelu_new" && act != "gelu_pytorch_tanh" && act != "gelu")
    c.bad("activation_function", "is not one the core computes: gelu_new, gelu_pytorch_tanh (tanh approximation) or gelu (exact)");
  if (c.j.contains("n_inner") && !c.j["n_inner"].is_null() && c.integer("n_inner", 0, 0, 1 << 20) != 4 * C)
    c.bad("n_inner", "must be null or 4 * n_embd: the core's GPT MLP is 4 * n_embd wide");
  if (c.flag("scale_attn_by_inverse_layer_idx", false)) c.bad("scale_attn_by_inverse_layer_idx", "must be false: the core scales scores by 1 / sqrt(head_dim) only");
  if (!c.flag("scale_attn_weights", true)) c.bad("scale_attn_weights", "must be true: the core scales scores by 1 / sqrt(head_dim)");
  if (c.flag("add_cross_attention", false)) c.bad("add_cross_attention", "must be false: a decoder-only GPT-2 has no cross-attention");
  return {{"vocab_size", c.integer("vocab_size", 50257, 1, 65536)},
          {"block_size", c.integer("n_positions", 1024, 1, 4096)},
          {"n_layer", c.integer("n_layer", 12, 1, 48)},
          {"n_head", c.integer("n_head", 12, 1, 256)},
          {"n_embd", C},
          {"dropout", 0.0},
          {"bias", 1},
          {"gelu_tanh", act == "gelu" ? 0 : 1},
          {"layer_norm_epsilon", c.number("layer_norm_epsilon", 1e-5, 0, 1, false)}};
}

// LlamaConfig (MistralConfig, Qwen2Config) -> Llama's config, which keeps Hugging Face's names.
std::map<std::string, double> llama_config(const HfConfig& c, const std::string& type) {
  if (c.text("hidden_act", "silu") != "silu") c.bad("hidden_act", "must be \"silu\": the core's Llama MLP is SwiGLU with silu");
  // rope_scaling: "default", "linear" (factor) and "llama3" (factor, low_freq_factor,
  // high_freq_factor, original_max_position_embeddings) as modeling_rope_utils computes them
  double factor = 1, low = 0, high = 0, original = 0;
  if (c.j.contains("rope_scaling") && !c.j["rope_scaling"].is_null()) {
    const json& r = c.j["rope_scaling"];
    const std::string kind = r.is_object() && r.contains("rope_type") && r["rope_type"].is_string() ? r["rope_type"].get<std::string>()
                             : r.is_object() && r.contains("type") && r["type"].is_string()     ? r["type"].get<std::string>()
                                                                                                 : brief(r);
    const auto number = [&](const char* key) {
      if (!r.contains(key) || !r[key].is_number() || !(r[key].get<double>() > 0))
        fail_at("pretrained", "model folder '", c.label, "': config.json's rope_scaling.", key, " (", r.contains(key) ? brief(r[key]) : "missing",
                ") must be a number above 0 (rope_type \"", kind, "\")");
      return r[key].get<double>();
    };
    if (kind == "linear" || kind == "llama3") factor = number("factor");
    if (kind == "llama3") {
      low = number("low_freq_factor"), high = number("high_freq_factor"), original = number("original_max_position_embeddings");
      if (!(high > low))
        fail_at("pretrained", "model folder '", c.label, "': config.json's rope_scaling.high_freq_factor (", high, ") must be above its low_freq_factor (", low, ")");
    } else if (kind != "default" && kind != "linear") {
      fail_at("pretrained", "model folder '", c.label, "': config.json's rope_scaling (", kind,
              ") is not implemented: the core computes the default rotary frequencies, \"linear\" and \"llama3\" rope_scaling");
    }
  }
  const int64_t max_pos = c.integer("max_position_embeddings", type == "llama" ? 2048 : type == "qwen2" ? 32768 : 4096 * 32, 1, 1 << 24);
  // Mistral's sliding window (every layer; null: none) and Qwen2's (use_sliding_window: the layers
  // from max_window_layers on), as configuration_mistral.py / configuration_qwen2.py set them
  int64_t window = 0, window_from = 0;
  if (type == "mistral" && c.j.contains("sliding_window") && !c.j["sliding_window"].is_null())
    window = c.integer("sliding_window", 4096, 1, 1 << 24);
  if (type == "qwen2" && c.flag("use_sliding_window", false)) {
    window = c.integer("sliding_window", 4096, 1, 1 << 24);
    window_from = c.integer("max_window_layers", 28, 0, 128);
    // newer transformers also save layer_types ("sliding_attention" / "full_attention" per layer):
    // the sliding ones must be the last ones, as max_window_layers makes them
    if (c.j.contains("layer_types") && !c.j["layer_types"].is_null()) {
      const json& t = c.j["layer_types"];
      if (!t.is_array()) c.bad("layer_types", "must be a list of \"sliding_attention\" / \"full_attention\"");
      int64_t first = static_cast<int64_t>(t.size());
      for (size_t i = t.size(); i-- > 0;) {
        if (!t[i].is_string()) c.bad("layer_types", "must be a list of \"sliding_attention\" / \"full_attention\"");
        if (t[i] != "sliding_attention") break;
        first = static_cast<int64_t>(i);
      }
      for (int64_t i = 0; i < first; ++i)
        if (t[static_cast<size_t>(i)] != "full_attention")
          c.bad("layer_types", "has " + t[static_cast<size_t>(i)].dump() + " at layer " + std::to_string(i) +
                                   ": the core slides the last layers only (full_attention, then sliding_attention)");
      window_from = first;
    }
  }
  const int64_t H = c.integer("num_attention_heads", 32, 1, 256);
  return {{"vocab_size", c.integer("vocab_size", type == "qwen2" ? 151936 : 32000, 1, 262144)},
          {"hidden_size", c.integer("hidden_size", 4096, 1, 8192)},
          {"intermediate_size", c.integer("intermediate_size", type == "mistral" ? 14336 : 11008, 1, 32768)},
          {"num_hidden_layers", c.integer("num_hidden_layers", 32, 1, 128)},
          {"num_attention_heads", H},
          {"num_key_value_heads", c.integer("num_key_value_heads", type == "mistral" ? 8 : H, 1, 256)},
          {"head_dim", c.integer("head_dim", 0, 0, 1024)},
          {"max_position_embeddings", max_pos},
          {"rms_norm_eps", c.number("rms_norm_eps", 1e-6, 0, 1, false)},  // all three configs' default
          {"rope_theta", c.number("rope_theta", 10000.0, 1, 1e9, false)},
          {"tie_word_embeddings", c.flag("tie_word_embeddings", false)},
          {"attention_bias", c.flag("attention_bias", false)},
          {"mlp_bias", c.flag("mlp_bias", false)},
          {"qkv_bias", type == "qwen2"},
          {"sliding_window", static_cast<double>(window)},
          {"max_window_layers", static_cast<double>(window_from)},
          {"rope_scaling_factor", factor},
          {"rope_low_freq_factor", low},
          {"rope_high_freq_factor", high},
          {"rope_original_max_position_embeddings", original}};
}

// The state_dict name a checkpoint's tensor has in the core, and whether it is a Conv1D weight
// stored [in, out] (GPT-2) to be transposed to nn.Linear's [out, in]; "" to skip it.
std::string gpt2_name(std::string n, bool& conv1d) {
  if (n.rfind("transformer.", 0) == 0) n = n.substr(12);
  conv1d = false;
  if (n == "lm_head.weight") return "";  // tied to wte (GPT2LMHeadModel ties them)
  for (const char* tail : {".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight"})
    conv1d = conv1d || ends_with(n, tail);
  return "transformer." + n;
}
std::string llama_name(const std::string& n) {
  // LlamaModel saved on its own (no LM head) has no `model.` prefix
  for (const char* bare : {"embed_tokens.", "layers.", "norm."})
    if (n.rfind(bare, 0) == 0) return "model." + n;
  return n;
}

// A shard named by the index: a plain file name in the folder, never a path out of it.
void check_shard_name(const std::string& label, const std::string& tensor, const std::string& file) {
  const bool plain = !file.empty() && file.size() <= 255 && file.find('/') == std::string::npos && file.find('\\') == std::string::npos &&
                     file[0] != '.' && file.find('\0') == std::string::npos && ends_with(file, ".safetensors");
  if (!plain)
    fail_at("pretrained", "model folder '", label, "': model.safetensors.index.json puts '", tensor, "' in '", file,
            "': a shard must be a .safetensors file in the model folder itself (no '/', '\\\\' or leading '.')");
}

// A size for messages: "2048 MiB", "0.07 MiB".
std::string mib(uint64_t bytes) {
  const double m = static_cast<double>(bytes) / (1 << 20);
  char buf[32];
  std::snprintf(buf, sizeof buf, m >= 100 ? "%.0f MiB" : m >= 1 ? "%.1f MiB" : "%.2g MiB", m);
  return buf;
}

// Reads a weight file whole (or, when the folder gives sizes, its first bytes) and checks its header.
SafeTensorsHeader header_of(const ModelFolder& folder, const std::string& file, bool first, bool indexed, Blob& bytes) {
  if (!folder.read(file, bytes))
    fail_at("pretrained", "model folder '", folder.label, "' has no ", file,
            first && !indexed ? " (nor model.safetensors.index.json): the weights must be safetensors (PyTorch .bin files are not read)"
                              : ": the shard index names it");
  try {
    return read_safetensors_header(bytes.data(), bytes.size(), folder.file_size ? folder.file_size(file) : bytes.size());
  } catch (const Error& e) {
    fail_at("pretrained", "model folder '", folder.label, "': ", file, ": ", e.what());
  }
}

PretrainedPlan plan(const ModelFolder& folder, std::vector<Blob>* shards, bool headers) {
  PretrainedPlan m;
  m.label = folder.label;
  bool found = false;
  const json cfg = read_json(folder, "config.json", found);
  if (!found)
    fail_at("pretrained", "model folder '", folder.label,
            "' has no config.json: give a folder laid out as the Hugging Face Hub serves a model (config.json, model.safetensors)");
  const HfConfig c{cfg, folder.label};
  m.model_type = c.text("model_type", "");
  if (m.model_type == "gpt2") {
    m.module = "GPT", m.config = gpt2_config(c);
  } else if (m.model_type == "llama" || m.model_type == "mistral" || m.model_type == "qwen2") {
    m.module = "Llama", m.config = llama_config(c, m.model_type);
  } else {
    fail_at("pretrained", "model folder '", folder.label, "': config.json's model_type '", m.model_type,
            "' is not supported: the core loads gpt2, llama, mistral and qwen2 checkpoints");
  }

  // The weight files: model.safetensors, or the shards its index names (each read once).
  const json index = read_json(folder, "model.safetensors.index.json", found);
  const bool indexed = found;
  if (indexed) {
    if (!index.contains("weight_map") || !index["weight_map"].is_object() || index["weight_map"].empty())
      fail_at("pretrained", "model folder '", folder.label, "': model.safetensors.index.json must have a weight_map {tensor: shard file}");
    if (index.contains("metadata") && index["metadata"].is_object() && index["metadata"].contains("total_size")) {
      const json& t = index["metadata"]["total_size"];
      // F16 / BF16 double when widened to float32: the stored size bounds the F32 size from below
      if (!t.is_number() || t.get<double>() < 0 || t.get<double>() > static_cast<double>(folder.max_bytes))
        fail_at("pretrained", "model folder '", folder.label, "': model.safetensors.index.json's total_size (",
                t.is_number() ? std::to_string(static_cast<uint64_t>(std::max(0.0, std::min(t.get<double>(), 1e19)))) : brief(t),
                " bytes) is beyond the ", mib(folder.max_bytes), " of weights the core can hold here: pick a smaller model");
    }
    std::set<std::string> seen;
    for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
      if (!it.value().is_string()) fail_at("pretrained", "model folder '", folder.label, "': the index's entry for '", it.key(), "' must be a file name");
      const std::string file = it.value().get<std::string>();
      check_shard_name(folder.label, it.key(), file);
      if (seen.insert(file).second) m.files.push_back(file);
    }
  } else {
    m.files.push_back("model.safetensors");
  }

  if (!headers) return m;
  // Every shard's header is checked and the float32 total bounded before any tensor is decoded.
  if (shards) shards->resize(m.files.size());
  for (size_t i = 0; i < m.files.size(); ++i) {
    Blob prefix;
    m.headers.push_back(header_of(folder, m.files[i], i == 0, indexed, shards ? (*shards)[i] : prefix));
    m.f32_bytes += m.headers.back().f32_bytes();
    for (const SafeTensorEntry& e : m.headers.back().entries) m.parameters += e.count;
    if (m.f32_bytes > folder.max_bytes)
      fail_at("pretrained", "model folder '", folder.label, "': the weights take ", i + 1 < m.files.size() ? "at least " : "", mib(m.f32_bytes),
              " as float32, more than the ", mib(folder.max_bytes), " the core can hold here: pick a smaller model");
  }
  return m;
}

}  // namespace

PretrainedPlan plan_pretrained(const ModelFolder& folder, bool headers) { return plan(folder, nullptr, headers); }

std::string pretrained_plan_json(const PretrainedPlan& p) {
  json files = json::array();
  for (size_t i = 0; i < p.files.size(); ++i)
    files.push_back(i < p.headers.size() ? json{{"name", p.files[i]}, {"size", p.headers[i].data_offset + p.headers[i].data_size},
                                                {"header_bytes", p.headers[i].data_offset}, {"tensors", p.headers[i].entries.size()}}
                                         : json{{"name", p.files[i]}});
  return json({{"model_type", p.model_type}, {"module", p.module}, {"config", p.config}, {"files", files},
               {"f32_bytes", p.f32_bytes}, {"parameters", p.parameters}}).dump();
}

std::vector<PlannedTensor> PretrainedPlan::tensors() const {
  std::vector<PlannedTensor> out;
  for (size_t i = 0; i < headers.size(); ++i)
    for (const SafeTensorEntry& e : headers[i].entries) {
      PlannedTensor t{i, e, e.name, e.shape, false};
      t.target = module == "GPT" ? gpt2_name(e.name, t.transpose) : llama_name(e.name);
      // GPT-2's lm_head.weight, wte's tensor again: the module skips that name (skips_in_state_dict)
      if (t.target.empty()) t.target = "lm_head.weight";
      t.transpose = t.transpose && e.shape.size() == 2;
      if (t.transpose) t.shape = {e.shape[1], e.shape[0]};
      out.push_back(std::move(t));
    }
  return out;
}

PretrainedModel load_pretrained(const ModelFolder& folder) {
  if (folder.file_size) fail_at("pretrained", "model folder '", folder.label, "': loading needs whole files (file_size is for plan_pretrained)");
  std::vector<Blob> shards;
  const PretrainedPlan p = plan(folder, &shards, true);
  PretrainedModel m{p.model_type, p.module, p.config, {}, ""};
  for (size_t i = 0; i < p.files.size(); ++i) {
    try {
      for (SafeTensor& t : read_safetensors(p.headers[i], shards[i].data())) {
        bool conv1d = false;
        t.name = m.module == "GPT" ? gpt2_name(t.name, conv1d) : llama_name(t.name);
        if (t.name.empty()) continue;
        if (conv1d && t.value.dim() == 2) t.value = t.value.transpose(0, 1).contiguous();
        m.weights.push_back(std::move(t));
      }
    } catch (const Error& e) {
      fail_at("pretrained", "model folder '", folder.label, "': ", p.files[i], ": ", e.what());
    }
    Blob().swap(shards[i]);  // the file's bytes go once its tensors are decoded
  }
  m.weights_name = folder.label + "/" + (p.files.size() == 1 ? p.files[0] : "model.safetensors.index.json");
  return m;
}

}  // namespace attn
