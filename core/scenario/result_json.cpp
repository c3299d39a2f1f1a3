// Results and the module table as JSON (SCENARIO.md, "Result", "Typed steps", "Attention",
// "Modules"). Floats with 9 significant digits (float32 round-trips); -inf, inf and NaN as strings.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <nlohmann/json.hpp>

#include "base/build.hpp"
#include "scenario/scenario.hpp"

namespace attn {

using json = nlohmann::json;

namespace {

// Where write_result_json hands the text on as it is made (the CLI's stdout): the string it builds
// and its stream, a megabyte at a time from inside the largest arrays; null for a string kept whole.
// A 124M model's logits and attention weights at T = 1024 are 1.9 GB of JSON, never held whole.
struct Spill {
  std::string* text;
  std::ostream* os;
  void operator()(size_t at_least = size_t{1} << 20) const {
    if (text->size() < at_least) return;
    os->write(text->data(), static_cast<std::streamsize>(text->size()));
    text->clear();
  }
};
thread_local const Spill* spill_to = nullptr;

// A JSON string: quotes, backslashes and control characters escaped, UTF-8 as it is.
void put_string(std::string& out, const std::string& s) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

void put_float(std::string& out, float v) {
  char buf[32];
  if (std::isfinite(v)) std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  else std::snprintf(buf, sizeof buf, "%s", std::isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  out += buf;
}

void put_floats(std::string& out, const float* p, int64_t n) {
  out += '[';
  const Spill* spill = spill_to && spill_to->text == &out ? spill_to : nullptr;  // not a piece built apart
  for (int64_t i = 0; i < n; ++i) {
    if (i) out += ',';
    put_float(out, p[i]);
    if (spill && i % 4096 == 4095) (*spill)();
  }
  out += ']';
}

void put_floats(std::string& out, const Tensor& t_) {
  const Tensor t = t_.contiguous();
  put_floats(out, t.data(), t.numel());
}

void put_tensors(std::string& out, const char* key, const std::vector<NamedTensor>& list,
                 const std::vector<std::string>* steps = nullptr) {
  out += std::string(",\"") + key + "\":[";
  for (size_t i = 0; i < list.size(); ++i) {
    out += i ? ",\n{\"name\":" : "\n{\"name\":";
    put_string(out, list[i].name);
    out += ",\"shape\":" + json(list[i].value.shape()).dump();
    if (steps && i < steps->size() && !(*steps)[i].empty()) out += ",\"step\":" + json((*steps)[i]).dump();
    out += ",\"data\":";
    put_floats(out, list[i].value);
    out += '}';
  }
  out += "]";
}

// ["a","b"] / [null,"x"]: a list of strings ("" as null when nulls is set)
template <class List, class F>
void put_list(std::string& out, const List& list, F&& put) {
  out += '[';
  bool first = true;
  for (const auto& e : list) {
    if (!first) out += ',';
    first = false;
    put(e);
  }
  out += ']';
}

// "patching" / "attribution_patching": the cells, each with its step, head and position when it has
// them, and the metric (`value_key`); the clean and corrupted metrics for patching.
void put_patching(std::string& out, const char* key, const PatchingResult& p, const char* value_key, bool metrics) {
  out += std::string(",\n\"") + key + "\":{";
  if (metrics) {
    out += "\"clean_metric\":";
    put_float(out, p.clean_metric);
    out += ",\"corrupted_metric\":";
    put_float(out, p.corrupted_metric);
    out += ',';
  }
  out += "\"cells\":[";
  for (size_t i = 0; i < p.cells.size(); ++i) {
    const PatchCell& c = p.cells[i];
    out += i ? ",\n{\"step\":" : "\n{\"step\":";
    put_string(out, c.step);
    if (c.head != Attrs::kAll) out += ",\"head\":" + std::to_string(c.head);
    if (c.position != Attrs::kAll) out += ",\"position\":" + std::to_string(c.position);
    out += std::string(",\"") + value_key + "\":";
    put_float(out, c.value);
    out += '}';
  }
  out += "]}";
}

void put_interp(std::string& out, const Result& r) {
  if (!kInterp) return;  // base/build.hpp
  if (r.has_patching) put_patching(out, "patching", r.patching, "metric", true);
  if (r.has_attribution) put_patching(out, "attribution_patching", r.attribution_patching, "estimate", false);
  if (!r.logit_lens.empty()) {
    out += ",\n\"logit_lens\":[";
    for (size_t i = 0; i < r.logit_lens.size(); ++i) {
      out += i ? ",\n{\"step\":" : "\n{\"step\":";
      put_string(out, r.logit_lens[i].first);
      out += ",\"shape\":" + json(r.logit_lens[i].second.shape()).dump() + ",\"data\":";
      put_floats(out, r.logit_lens[i].second);
      out += '}';
    }
    out += "]";
  }
  if (r.has_logit_attribution) {
    out += ",\n\"logit_attribution\":{\"total\":";
    put_float(out, r.logit_attribution.total);
    out += ",\"components\":[";
    for (size_t i = 0; i < r.logit_attribution.components.size(); ++i) {
      out += i ? ",\n{\"name\":" : "\n{\"name\":";
      put_string(out, r.logit_attribution.components[i].name);
      out += ",\"value\":";
      put_float(out, r.logit_attribution.components[i].value);
      out += '}';
    }
    out += "]}";
  }
}

}  // namespace

// Written by hand, not through nlohmann objects: the page asks for every step on every keystroke.
std::string step_meta_json(const Step& s) {
  std::string out = "{\"name\":";
  put_string(out, s.name);
  out += ",\"op\":\"" + std::string(op_name(s.op)) + "\",\"ops\":";
  put_list(out, s.ops, [&](Op op) { out += std::string("\"") + op_name(op) + "\""; });
  out += ",\"attrs\":" + s.attrs + ",\"inputs\":";
  put_list(out, s.inputs, [&](const StepInput& in) {
    out += in.kind == StepInput::Kind::step ? "{\"step\":" : in.kind == StepInput::Kind::input ? "{\"input\":" : "{\"param\":";
    put_string(out, in.name);
    out += '}';
  });
  out += ",\"shape\":";
  put_list(out, s.value.shape(), [&](int64_t d) { out += std::to_string(d); });
  out += ",\"dims\":";
  put_list(out, s.dims, [&](const std::string& d) { put_string(out, d); });
  out += ",\"tokens\":";
  put_list(out, s.tokens, [&](const std::string& t) {
    if (t.empty()) out += "null";
    else put_string(out, t);
  });
  out += ",\"code\":";
  put_string(out, s.code);
  out += ",\"cpp\":";
  put_string(out, s.cpp);
  return out + "}";
}

std::string attention_json(const std::vector<AttentionSpec>& specs) {
  std::string out = "[";
  for (size_t i = 0; i < specs.size(); ++i) out += (i ? "," : "") + attention_spec_json(specs[i]);
  return out + "]";
}

namespace {

// ,"steps":[...] : each step's description, then its data (and gradient)
void put_steps(std::string& out, const std::vector<Step>& steps) {
  out += ",\"steps\":[";
  for (size_t i = 0; i < steps.size(); ++i) {
    std::string meta = step_meta_json(steps[i]);
    meta.pop_back();  // the closing brace: data follows
    out += (i ? ",\n" : "\n") + meta + ",\"data\":";
    put_floats(out, steps[i].value);
    if (steps[i].grad.defined()) {
      out += ",\"grad\":";
      put_floats(out, steps[i].grad);
    }
    out += '}';
  }
  out += "]";
}

}  // namespace

// {"position", "mode", "ids", "top_ids", "top_probs", "cache": {"shape", "bytes"} | null} of one new
// token, without its steps (SCENARIO.md, "Generation").
std::string generated_meta_json(const GeneratedToken& g) {
  std::string out = "{\"position\":" + std::to_string(g.position) + ",\"mode\":\"" + g.mode + "\",\"ids\":";
  put_list(out, g.ids, [&](int64_t id) { out += std::to_string(id); });
  out += ",\"top_ids\":";
  put_list(out, g.top, [&](const std::vector<TopToken>& row) { put_list(out, row, [&](const TopToken& t) { out += std::to_string(t.id); }); });
  out += ",\"top_probs\":";
  put_list(out, g.top, [&](const std::vector<TopToken>& row) { put_list(out, row, [&](const TopToken& t) { put_float(out, t.p); }); });
  out += ",\"cache\":";
  if (g.cache_shape.empty()) {
    out += "null";
  } else {
    out += "{\"shape\":";
    put_list(out, g.cache_shape, [&](int64_t d) { out += std::to_string(d); });
    out += ",\"bytes\":" + std::to_string(g.cache_bytes) + "}";
  }
  return out + "}";
}

std::string interp_json(const Result& r) {
  std::string out;
  put_interp(out, r);
  return out.empty() ? "{}" : "{" + out.substr(1) + "}";
}

namespace {

void put_result(std::string& out, const Result& r) {
  out += "{\"module\":";
  put_string(out, r.module);
  put_tensors(out, "outputs", r.outputs, &r.output_steps);
  if (!r.steps.empty()) put_steps(out, r.steps);
  out += ",\"attention\":" + attention_json(r.attention);
  if (r.has_loss) {
    out += ",\"loss\":";
    put_float(out, r.loss);
  }
  if (!r.losses.empty()) {
    out += ",\"losses\":";
    put_floats(out, r.losses.data(), static_cast<int64_t>(r.losses.size()));
  }
  if (!r.grads.empty()) put_tensors(out, "grads", r.grads);
  if (!r.inputs.empty()) put_tensors(out, "inputs", r.inputs);
  if (!r.params.empty()) put_tensors(out, "params", r.params);
  put_interp(out, r);
  if (!r.ids.empty()) {
    out += ",\"ids\":";
    put_list(out, r.ids, [&](const std::vector<int64_t>& row) { put_list(out, row, [&](int64_t id) { out += std::to_string(id); }); });
    out += ",\"generated\":[";
    for (size_t i = 0; i < r.generated.size(); ++i) {
      std::string meta = generated_meta_json(r.generated[i]);
      if (!r.generated[i].steps.empty()) {
        meta.pop_back();
        put_steps(meta, r.generated[i].steps);
        meta += '}';
      }
      out += (i ? ",\n" : "\n") + meta;
    }
    out += "]";
  }
  out += "}\n";
}

}  // namespace

std::string result_to_json(const Result& r) {
  std::string out;
  put_result(out, r);
  return out;
}

#ifndef __EMSCRIPTEN__  // the native CLI's (the page's WebAssembly never writes to a stream)
void write_result_json(const Result& r, std::ostream& os) {
  std::string out;
  const Spill spill{&out, &os};
  struct Unset {
    ~Unset() { spill_to = nullptr; }
  } unset;
  spill_to = &spill;
  put_result(out, r);
  spill(0);
}
#endif

std::string modules_json() {
  json list = json::array();
  for (const ModuleInfo& m : module_registry()) {
    json args = json::array(), inputs = json::array();
    for (const ArgSpec& a : m.args) {
      json arg = {{"name", a.name},
                  {"type", a.type == ArgType::Int ? "int" : a.type == ArgType::Float ? "float" : "bool"},
                  {"required", a.required},
                  {"min", a.min},
                  {"max", a.max},
                  {"help", a.help}};
      if (!a.required) {
        if (a.type == ArgType::Bool) arg["default"] = a.default_value != 0.0;
        else if (a.type == ArgType::Int) arg["default"] = static_cast<int64_t>(a.default_value);
        else arg["default"] = a.default_value;
      }
      args.push_back(arg);
    }
    for (const InputSpec& in : m.inputs)
      inputs.push_back({{"name", in.name},
                        {"kind", in.kind == InputKind::Float ? "float" : in.kind == InputKind::Mask ? "mask" : "ids"},
                        {"role", input_role_name(in.role)},
                        {"optional", in.optional},
                        {"dims", in.dims},
                        {"width", *in.width ? json(in.width) : json(nullptr)},
                        {"shape", in.shape}});
    list.push_back({{"id", m.id},
                    {"seed", m.seed},
                    {"seed_name", m.seed_name},
                    {"summary", m.summary},
                    {"args", args},
                    {"inputs", inputs},
                    {"outputs", m.outputs},
                    {"dropout", has_dropout(m)},
                    {"generates", m.generates},
                    {"attention", json::parse(attention_json(m.attention))}});
  }
  return list.dump();
}

std::string version() { return ATTN_VERSION; }

}  // namespace attn
