// Scenario JSON -> run -> result JSON. Every field is checked here, at the entry, with an error
// naming the field, the value and the rule; the modules then only check shapes.
#include "scenario.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "error.hpp"
#include "ops.hpp"

namespace attn {

using json = nlohmann::json;

namespace {

std::string brief(const json& j) {
  std::string s = j.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

Shape parse_shape(const json& j, const std::string& where) {
  if (!j.is_array() || j.empty() || j.size() > 8)
    fail(where, ".shape (", brief(j), ") must be a list of 1 to 8 sizes, e.g. [1, 6, 3]");
  Shape shape;
  int64_t n = 1;
  for (const json& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > kMaxInputElements)
      fail(where, ".shape ", brief(j), ": each size must be an integer >= 1, got ", brief(d));
    shape.push_back(d.get<int64_t>());
    n *= shape.back();
    if (n > kMaxInputElements)
      fail(where, ".shape ", brief(j), " has more than ", kMaxInputElements, " elements: the limit per tensor");
  }
  return shape;
}

std::vector<float> parse_floats(const json& j, const std::string& where, int64_t expected) {
  if (!j.is_array()) fail(where, " must be a list of numbers (flat, row-major)");
  if (static_cast<int64_t>(j.size()) != expected)
    fail(where, " has ", j.size(), " values but the shape needs ", expected, ": give one value per element, row-major");
  std::vector<float> v;
  v.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const json& e = j[i];
    double d;
    if (e.is_number()) d = e.get<double>();
    else if (e.is_boolean()) d = e.get<bool>() ? 1.0 : 0.0;
    else fail(where, "[", i, "] (", brief(e), ") is not a number");
    const float f = static_cast<float>(d);
    if (!std::isfinite(f)) fail(where, "[", i, "] (", d, ") is not a finite float32 value: the first bad value is at index ", i);
    v.push_back(f);
  }
  return v;
}

std::vector<int64_t> parse_ids(const json& j, const std::string& where, int64_t expected) {
  if (!j.is_array()) fail(where, " must be a list of integer token ids");
  if (static_cast<int64_t>(j.size()) != expected)
    fail(where, " has ", j.size(), " ids but the shape has ", expected, " positions: give one id per position");
  std::vector<int64_t> ids;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number_integer()) fail(where, "[", i, "] (", brief(j[i]), ") is not an integer token id");
    ids.push_back(j[i].get<int64_t>());
  }
  return ids;
}

void check_keys(const json& j, const std::string& where, std::initializer_list<const char*> allowed) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string names;
      for (const char* a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      fail(where, " has an unknown field '", it.key(), "': allowed fields are ", names);
    }
  }
}

}  // namespace

Scenario parse_scenario(const std::string& text, std::vector<std::vector<float>>* buffers, const std::vector<Blob>* blobs) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers beyond double
    fail("scenario is not valid JSON: ", e.what());
  }
  if (!j.is_object()) fail("scenario must be a JSON object like {\"module\": \"softmax\", \"inputs\": [...]}");
  check_keys(j, "scenario", {"module", "config", "seed", "train", "trace", "inputs", "params", "return_inputs", "return_params", "weights"});
  Scenario s;
  if (!j.contains("module") || !j["module"].is_string()) fail("scenario.module must be a module id string, e.g. \"CausalAttention\"");
  s.module = j["module"].get<std::string>();
  const ModuleInfo& info = module_info(s.module);
  if (j.contains("config")) {
    if (!j["config"].is_object()) fail("scenario.config must be an object of constructor arguments");
    for (auto it = j["config"].begin(); it != j["config"].end(); ++it) {
      const json& v = it.value();
      if (v.is_boolean()) s.config[it.key()] = v.get<bool>() ? 1.0 : 0.0;
      else if (v.is_number()) s.config[it.key()] = v.get<double>();
      else fail("config '", it.key(), "' (", brief(v), ") must be a number or true/false");
    }
  }
  if (j.contains("seed")) {
    const json& v = j["seed"];
    if (v.is_number_unsigned()) s.seed = v.get<uint64_t>();
    else if (v.is_number_integer() && v.get<int64_t>() >= 0) s.seed = static_cast<uint64_t>(v.get<int64_t>());
    else fail("scenario.seed (", brief(v), ") must be an integer from 0 to 2^64-1");
  }
  for (auto [flag, target] : {std::pair<const char*, bool*>{"train", &s.train}, {"trace", &s.trace},
                                {"return_inputs", &s.return_inputs}, {"return_params", &s.return_params}}) {
    if (!j.contains(flag)) continue;
    if (!j[flag].is_boolean()) fail("scenario.", flag, " (", brief(j[flag]), ") must be true or false");
    *target = j[flag].get<bool>();
  }
  if (j.contains("inputs")) {
    if (!j["inputs"].is_array()) fail("scenario.inputs must be a list of {\"name\", \"shape\", ...}");
    std::set<std::string> seen;
    for (size_t i = 0; i < j["inputs"].size(); ++i) {
      const json& e = j["inputs"][i];
      const std::string where = "inputs[" + std::to_string(i) + "]";
      if (!e.is_object()) fail(where, " must be an object with name and shape");
      check_keys(e, where, {"name", "shape", "init", "data", "embedding", "buffer"});
      ScenarioInput in;
      if (!e.contains("name") || !e["name"].is_string()) fail(where, ".name must be a string");
      in.name = e["name"].get<std::string>();
      const InputSpec* spec = nullptr;
      std::string names;
      for (const InputSpec& is : info.inputs) {
        if (is.name == in.name) spec = &is;
        names += (names.empty() ? "" : ", ") + is.name;
      }
      if (!spec) fail(where, ".name '", in.name, "' is not an input of ", s.module, ": its inputs are ", names);
      if (!seen.insert(in.name).second) fail(where, ".name '", in.name, "' is given twice");
      if (!e.contains("shape")) fail(where, " ('", in.name, "') needs a shape");
      in.shape = parse_shape(e["shape"], where);
      const int sources = e.contains("init") + e.contains("data") + e.contains("embedding") + e.contains("buffer");
      if (sources != 1) fail(where, " ('", in.name, "') needs exactly one of \"init\", \"data\" or \"embedding\"");
      if (e.contains("buffer")) {
        const json& b = e["buffer"];
        if (!buffers || !b.is_number_unsigned() || b.get<size_t>() >= buffers->size())
          fail(where, ".buffer (", brief(b), ") must index a typed array passed beside the scenario (",
               buffers ? buffers->size() : 0, " given)");
        std::vector<float>& data = (*buffers)[b.get<size_t>()];
        if (static_cast<int64_t>(data.size()) != numel(in.shape))
          fail(where, ".buffer has ", data.size(), " values but the shape needs ", numel(in.shape));
        for (size_t k = 0; k < data.size(); ++k)
          if (!std::isfinite(data[k])) fail(where, ".buffer[", k, "] (", data[k], ") is not a finite float32 value: the first bad value is at index ", k);
        in.kind = ScenarioInput::Kind::Data;
        in.data = std::move(data);
        s.inputs.push_back(std::move(in));
        continue;
      }
      if (e.contains("init")) {
        in.kind = ScenarioInput::Kind::Init;
        in.init = e["init"].is_string() ? e["init"].get<std::string>() : "";
        if (in.init != "rand" && in.init != "randn")
          fail(where, ".init (", brief(e["init"]), ") must be \"rand\" or \"randn\"");
        if (spec->kind == InputKind::Ids) fail(where, ": '", in.name, "' holds token ids: give them as \"data\"");
      } else if (e.contains("data")) {
        in.kind = ScenarioInput::Kind::Data;
        in.data = parse_floats(e["data"], where + ".data", numel(in.shape));
      } else {
        in.kind = ScenarioInput::Kind::Embedding;
        const json& em = e["embedding"];
        if (!em.is_object()) fail(where, ".embedding must be {\"num_embeddings\": V, \"ids\": [...]} or {\"weight\": [...], \"ids\": [...]}");
        check_keys(em, where + ".embedding", {"num_embeddings", "weight", "ids"});
        if (in.shape.size() < 2) fail(where, ".shape must have at least 2 dims (rows..., embedding_dim) for an embedding input");
        const int64_t d = in.shape.back();
        Shape rows(in.shape.begin(), in.shape.end() - 1);
        in.ids = parse_ids(em.value("ids", json()), where + ".embedding.ids", numel(rows));
        if (em.contains("num_embeddings") == em.contains("weight"))
          fail(where, ".embedding needs exactly one of num_embeddings (a seeded nn.Embedding) or weight (a given table)");
        if (em.contains("num_embeddings")) {
          if (!em["num_embeddings"].is_number_integer() || em["num_embeddings"].get<int64_t>() < 1 ||
              em["num_embeddings"].get<int64_t>() * d > kMaxInputElements)
            fail(where, ".embedding.num_embeddings (", brief(em["num_embeddings"]), ") must be an integer >= 1 with num_embeddings * ",
                 d, " <= ", kMaxInputElements);
          in.num_embeddings = em["num_embeddings"].get<int64_t>();
        } else {
          const json& w = em["weight"];
          if (!w.is_array() || w.empty() || w.size() % static_cast<size_t>(d) != 0)
            fail(where, ".embedding.weight must be a flat list of V * ", d, " numbers (V rows of embedding_dim ", d, ")");
          in.num_embeddings = static_cast<int64_t>(w.size()) / d;
          in.data = parse_floats(w, where + ".embedding.weight", static_cast<int64_t>(w.size()));
        }
        for (size_t k = 0; k < in.ids.size(); ++k)
          if (in.ids[k] < 0 || in.ids[k] >= in.num_embeddings)
            fail(where, ".embedding.ids[", k, "] (", in.ids[k], ") must be in [0, ", in.num_embeddings, ") (num_embeddings)");
      }
      s.inputs.push_back(std::move(in));
    }
  }
  if (j.contains("params")) {
    if (!j["params"].is_object()) fail("scenario.params must be an object {\"<state_dict name>\": {\"shape\", \"data\"}}");
    for (auto it = j["params"].begin(); it != j["params"].end(); ++it) {
      const std::string where = "params['" + it.key() + "']";
      const json& p = it.value();
      if (!p.is_object() || !p.contains("shape") || !p.contains("data")) fail(where, " must be {\"shape\": [...], \"data\": [...]}");
      check_keys(p, where, {"shape", "data"});
      Shape shape = parse_shape(p["shape"], where);
      s.params.emplace_back(it.key(), Tensor::from(shape, parse_floats(p["data"], where + ".data", numel(shape))));
    }
  }
  if (j.contains("weights")) {
    const json& w = j["weights"];
    if (!w.is_object()) fail("scenario.weights must be {\"name\": \"model.safetensors\", \"buffer\": 0}");
    check_keys(w, "scenario.weights", {"name", "buffer"});
    s.weights_name = w.contains("name") && w["name"].is_string() ? w["name"].get<std::string>() : "weights";
    const bool given = w.contains("buffer") && w["buffer"].is_number_unsigned() && blobs &&
                       w["buffer"].get<uint64_t>() < blobs->size();
    if (!given)
      fail("scenario.weights names external weights ('", s.weights_name, "') but the file is not loaded: ",
           "pick the file on the page, pass --weights FILE to the CLI, or run(scenario, {weights: bytes}) in JS");
    const Blob& b = (*blobs)[w["buffer"].get<size_t>()];
    s.weights = read_safetensors(b.data(), b.size());
  }
  return s;
}

namespace {

// A state_dict loaded strictly, as load_state_dict(strict=True): every parameter from the file,
// shapes equal; buffers PyTorch keeps in a state_dict (the causal `mask`, the positional `pe`)
// are recomputed by the core, so they are accepted and skipped.
void load_weights(const Scenario& s, ParamList& params) {
  auto is_buffer = [](const std::string& n) {
    for (const char* b : {"mask", "pe"}) {
      const std::string tail = b;
      if (n == tail || (n.size() > tail.size() + 1 && n.compare(n.size() - tail.size() - 1, std::string::npos, "." + tail) == 0))
        return true;
    }
    return false;
  };
  std::string names;
  for (auto& [pname, t] : params)
    if (names.size() < 300) names += (names.empty() ? "" : ", ") + pname;
  for (const SafeTensor& w : s.weights) {
    Tensor* target = nullptr;
    for (auto& [pname, t] : params)
      if (pname == w.name) target = t;
    if (!target) {
      if (is_buffer(w.name)) continue;
      fail("weights '", s.weights_name, "': '", w.name, "' is not a parameter of ", s.module, ": its parameters are ", names,
           " (was the file saved from another module or config?)");
    }
    if (target->shape() != w.value.shape())
      fail("weights '", s.weights_name, "': '", w.name, "' has shape ", shape_str(w.value.shape()), " but ", s.module,
           " with this config needs ", shape_str(target->shape()), ": set the config the model was trained with");
    *target = w.value;
  }
  for (auto& [pname, t] : params) {
    bool found = false;
    for (const SafeTensor& w : s.weights) found = found || w.name == pname;
    if (!found)
      fail("weights '", s.weights_name, "': parameter '", pname, "' ", shape_str(t->shape()), " of ", s.module,
           " is missing from the file: save the whole state_dict");
  }
}

}  // namespace

Result run(const Scenario& s) {
  const ModuleInfo& info = module_info(s.module);
  const Config config = make_config(info, s.config);
  Generator gen(s.seed);
  std::unique_ptr<Module> module = info.make(config, gen);

  ParamList params;
  module->parameters("", params);
  int64_t total = 0;
  for (auto& [name, t] : params) total += t->numel();
  if (!s.weights.empty()) load_weights(s, params);
  for (const auto& [name, value] : s.params) {
    Tensor* target = nullptr;
    std::string names;
    for (auto& [pname, t] : params) {
      if (pname == name) target = t;
      if (names.size() < 300) names += (names.empty() ? "" : ", ") + pname;
    }
    if (!target) fail("params: '", name, "' is not a parameter of ", s.module, ": its parameters are ", names);
    if (target->shape() != value.shape())
      fail("params: '", name, "' has shape ", shape_str(value.shape()), " but ", s.module, " needs ", shape_str(target->shape()));
    *target = value.clone();
  }

  std::vector<Tensor> inputs(info.inputs.size());
  for (const ScenarioInput& in : s.inputs) {
    size_t slot = 0;
    while (info.inputs[slot].name != in.name) ++slot;
    total += numel(in.shape);
    if (total > kMaxTotalElements)
      fail("the scenario needs more than ", kMaxTotalElements, " floats (parameters + inputs): make it smaller");
    Tensor t;
    switch (in.kind) {
      case ScenarioInput::Kind::Init:
        t = Tensor::empty(in.shape);
        if (in.init == "rand") gen.rand(t.data(), static_cast<size_t>(t.numel()));
        else gen.randn(t.data(), static_cast<size_t>(t.numel()));
        break;
      case ScenarioInput::Kind::Data:
        t = Tensor::from(in.shape, in.data);
        break;
      case ScenarioInput::Kind::Embedding: {
        const int64_t d = in.shape.back();
        Tensor weight = Tensor::empty({in.num_embeddings, d});
        if (in.data.empty()) gen.embedding_init(weight.data(), static_cast<size_t>(weight.numel()));
        else weight = Tensor::from({in.num_embeddings, d}, in.data);
        t = embedding(weight, in.ids, Shape(in.shape.begin(), in.shape.end() - 1));
        break;
      }
    }
    inputs[slot] = t;
  }
  Result r;
  if (s.return_inputs)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].defined()) r.inputs.push_back({info.inputs[i].name, inputs[i]});
  if (s.return_params)
    for (auto& [name, t] : params) r.params.push_back({name, *t});
  for (size_t i = 0; i < info.inputs.size(); ++i)
    if (!inputs[i].defined() && !info.inputs[i].optional)
      fail("input '", info.inputs[i].name, "' ", info.inputs[i].shape, " is required by ", s.module, " but not given");

  Context ctx(gen, s.train, s.trace);
  r.module = s.module;
  r.outputs = module->forward(inputs, ctx);
  for (const NamedTensor& o : r.outputs) {
    const Tensor c = o.value.contiguous();
    for (int64_t i = 0; i < c.numel(); ++i)
      if (std::isnan(c.data()[i]))
        fail("output '", o.name, "' has NaN at index ", i, ": the inputs overflow float32 (largest finite value 3.4e38)");
  }
  r.steps = ctx.take_steps();
  return r;
}

namespace {

void put_string(std::string& out, const std::string& s) { out += json(s).dump(); }

void put_floats(std::string& out, const Tensor& t_) {
  const Tensor t = t_.contiguous();
  out += '[';
  char buf[32];
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = t.data()[i];
    if (std::isfinite(v)) std::snprintf(buf, sizeof buf, "%s%.9g", i ? "," : "", static_cast<double>(v));
    else std::snprintf(buf, sizeof buf, "%s%s", i ? "," : "", std::isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    out += buf;
  }
  out += ']';
}

void put_shape(std::string& out, const Shape& s) {
  out += '[';
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  out += ']';
}

void put_tensors(std::string& out, const char* key, const std::vector<NamedTensor>& list) {
  out += std::string(",\"") + key + "\":[";
  for (size_t i = 0; i < list.size(); ++i) {
    out += i ? ",\n{\"name\":" : "\n{\"name\":";
    put_string(out, list[i].name);
    out += ",\"shape\":";
    put_shape(out, list[i].value.shape());
    out += ",\"data\":";
    put_floats(out, list[i].value);
    out += '}';
  }
  out += "]";
}

}  // namespace

std::string result_to_json(const Result& r) {
  std::string out = "{\"module\":";
  put_string(out, r.module);
  put_tensors(out, "outputs", r.outputs);
  if (!r.steps.empty()) {
    out += ",\"steps\":[";
    for (size_t i = 0; i < r.steps.size(); ++i) {
      const Step& s = r.steps[i];
      out += i ? ",\n{\"name\":" : "\n{\"name\":";
      put_string(out, s.name);
      out += ",\"shape\":";
      put_shape(out, s.value.shape());
      out += ",\"dims\":" + json(s.dims).dump() + ",\"code\":";
      put_string(out, s.code);
      out += ",\"cpp\":";
      put_string(out, s.cpp);
      out += ",\"data\":";
      put_floats(out, s.value);
      out += '}';
    }
    out += "]";
  }
  if (!r.inputs.empty()) put_tensors(out, "inputs", r.inputs);
  if (!r.params.empty()) put_tensors(out, "params", r.params);
  return out + "}\n";
}

std::string run_json(const std::string& scenario_json) { return result_to_json(run(parse_scenario(scenario_json))); }

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
                        {"optional", in.optional},
                        {"shape", in.shape}});
    list.push_back({{"id", m.id},
                    {"seed", m.seed},
                    {"seed_name", m.seed_name},
                    {"summary", m.summary},
                    {"args", args},
                    {"inputs", inputs},
                    {"outputs", m.outputs}});
  }
  return list.dump();
}

std::string version() { return ATTN_VERSION; }

}  // namespace attn
