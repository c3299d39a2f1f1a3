// Scenario JSON -> Scenario. Every field is checked here, at the entry, with an error naming the
// field (Error::field, a path such as "inputs.mask"), the value and the rule; the modules then only
// check shapes. Running it: run.cpp; the result as JSON: result_json.cpp.
#include "scenario/scenario.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "base/build.hpp"
#include "base/error.hpp"
#include "scenario/fields.hpp"

namespace attn {

std::string brief(const json& j) {
  std::string s = j.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

void check_keys(const json& j, const std::string& where, std::initializer_list<const char*> allowed,
                const std::string& field) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string names;
      for (const char* a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      fail_at(field, where, " has an unknown field '", it.key(), "': allowed fields are ", names);
    }
  }
}

namespace {

// `where` names the value in messages ("inputs[0]"); `field` is the Error's path ("inputs.x").
Shape parse_shape(const json& j, const std::string& where, const std::string& field) {
  if (!j.is_array() || j.empty() || j.size() > 8)
    fail_at(field, where, ".shape (", brief(j), ") must be a list of 1 to 8 sizes, e.g. [1, 6, 3]");
  Shape shape;
  int64_t n = 1;
  for (const json& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > kMaxInputElements)
      fail_at(field, where, ".shape ", brief(j), ": each size must be an integer >= 1, got ", brief(d));
    shape.push_back(d.get<int64_t>());
    n *= shape.back();
    if (n > kMaxInputElements)
      fail_at(field, where, ".shape ", brief(j), " has more than ", kMaxInputElements, " elements: the limit per tensor");
  }
  return shape;
}

std::vector<float> parse_floats(const json& j, const std::string& where, int64_t expected, const std::string& field) {
  if (!j.is_array()) fail_at(field, where, " must be a list of numbers (flat, row-major)");
  if (static_cast<int64_t>(j.size()) != expected)
    fail_at(field, where, " has ", j.size(), " values but the shape needs ", expected, ": give one value per element, row-major");
  std::vector<float> v;
  v.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const json& e = j[i];
    double d;
    if (e.is_number()) d = e.get<double>();
    else if (e.is_boolean()) d = e.get<bool>() ? 1.0 : 0.0;
    else fail_at(field, where, "[", i, "] (", brief(e), ") is not a number");
    const float f = static_cast<float>(d);
    if (!std::isfinite(f))
      fail_at(field, where, "[", i, "] (", d, ") is not a finite float32 value: the first bad value is at index ", i);
    v.push_back(f);
  }
  return v;
}

std::vector<int64_t> parse_ids(const json& j, const std::string& where, int64_t expected, const std::string& field) {
  if (!j.is_array()) fail_at(field, where, " must be a list of integer token ids");
  if (static_cast<int64_t>(j.size()) != expected)
    fail_at(field, where, " has ", j.size(), " ids but the shape has ", expected, " positions: give one id per position");
  std::vector<int64_t> ids;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number_integer()) fail_at(field, where, "[", i, "] (", brief(j[i]), ") is not an integer token id");
    ids.push_back(j[i].get<int64_t>());
  }
  return ids;
}

// The input spec named `name` of the module, or an error listing its inputs.
const InputSpec& input_spec(const ModuleInfo& info, const std::string& name, const std::string& where) {
  std::string names;
  for (const InputSpec& is : info.inputs) {
    if (is.name == name) return is;
    names += (names.empty() ? "" : ", ") + std::string(is.name);
  }
  fail_at("inputs", where, ".name '", name, "' is not an input of ", info.id, ": its inputs are ", names);
}

void parse_buffer(const json& e, const std::string& where, const std::string& field,
                  std::vector<std::vector<float>>* buffers, ScenarioInput& in) {
  const json& b = e["buffer"];
  if (!buffers || !b.is_number_unsigned() || b.get<size_t>() >= buffers->size())
    fail_at(field, where, ".buffer (", brief(b), ") must index a typed array passed beside the scenario (",
            buffers ? buffers->size() : 0, " given)");
  std::vector<float>& data = (*buffers)[b.get<size_t>()];
  if (static_cast<int64_t>(data.size()) != numel(in.shape))
    fail_at(field, where, ".buffer has ", data.size(), " values but the shape needs ", numel(in.shape));
  for (size_t k = 0; k < data.size(); ++k)
    if (!std::isfinite(data[k]))
      fail_at(field, where, ".buffer[", k, "] (", data[k], ") is not a finite float32 value: the first bad value is at index ", k);
  in.kind = ScenarioInput::Kind::Data;
  in.data = std::move(data);
}

// "embedding": {"num_embeddings": V | "weight": [...] | "same_as": "<earlier input>", "ids": [...]}
void parse_embedding(const json& em, const std::string& where, const std::string& field,
                     const std::vector<ScenarioInput>& earlier, ScenarioInput& in) {
  const std::string w = where + ".embedding";
  if (!em.is_object())
    fail_at(field, w, " must be {\"num_embeddings\": V, \"ids\": [...]}, {\"weight\": [...], \"ids\": [...]} or ",
            "{\"same_as\": \"<input>\", \"ids\": [...]}");
  check_keys(em, w, {"num_embeddings", "weight", "same_as", "ids"}, field);
  if (in.shape.size() < 2) fail_at(field, where, ".shape must have at least 2 dims (rows..., embedding_dim) for an embedding input");
  const int64_t d = in.shape.back();
  in.kind = ScenarioInput::Kind::Embedding;
  in.ids = parse_ids(em.value("ids", json()), w + ".ids", numel(Shape(in.shape.begin(), in.shape.end() - 1)), field);
  if (em.contains("num_embeddings") + em.contains("weight") + em.contains("same_as") != 1)
    fail_at(field, w, " needs exactly one of num_embeddings (a seeded nn.Embedding), weight (a given table) or same_as ",
            "(the table of an earlier input)");
  if (em.contains("same_as")) {
    in.same_as = em["same_as"].is_string() ? em["same_as"].get<std::string>() : "";
    const ScenarioInput* from = nullptr;
    for (const ScenarioInput& e : earlier)
      if (e.name == in.same_as && e.kind == ScenarioInput::Kind::Embedding) from = &e;
    if (!from)
      fail_at(field, w, ".same_as (", brief(em["same_as"]), ") must name an earlier input given as an embedding");
    if (from->shape.back() != d)
      fail_at(field, w, ".same_as '", in.same_as, "' has embedding_dim ", from->shape.back(), " but this input's is ", d);
    in.num_embeddings = from->num_embeddings;
  } else if (em.contains("num_embeddings")) {
    const json& v = em["num_embeddings"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() * d > kMaxInputElements)
      fail_at(field, w, ".num_embeddings (", brief(v), ") must be an integer >= 1 with num_embeddings * ", d, " <= ",
              kMaxInputElements);
    in.num_embeddings = v.get<int64_t>();
  } else {
    const json& t = em["weight"];
    if (!t.is_array() || t.empty() || t.size() % static_cast<size_t>(d) != 0)
      fail_at(field, w, ".weight must be a flat list of V * ", d, " numbers (V rows of embedding_dim ", d, ")");
    in.num_embeddings = static_cast<int64_t>(t.size()) / d;
    in.data = parse_floats(t, w + ".weight", static_cast<int64_t>(t.size()), field);
  }
  for (size_t k = 0; k < in.ids.size(); ++k)
    if (in.ids[k] < 0 || in.ids[k] >= in.num_embeddings)
      fail_at(field, w, ".ids[", k, "] (", in.ids[k], ") must be in [0, ", in.num_embeddings, ") (num_embeddings)");
}

// {"name": "value", "same_as": "key"}: the very tensor of an earlier input (seed 003's mha(x_q, x_kv, x_kv))
void parse_same(const json& e, const std::string& where, const std::string& field,
                const std::vector<ScenarioInput>& earlier, ScenarioInput& in) {
  in.kind = ScenarioInput::Kind::Same;
  in.same_as = e["same_as"].is_string() ? e["same_as"].get<std::string>() : "";
  const ScenarioInput* from = nullptr;
  for (const ScenarioInput& x : earlier)
    if (x.name == in.same_as) from = &x;
  if (!from) fail_at(field, where, ".same_as (", brief(e["same_as"]), ") must name an earlier input");
  if (in.shape.empty()) in.shape = from->shape;
  if (in.shape != from->shape)
    fail_at(field, where, ".shape ", shape_str(in.shape), " must equal the shape of '", in.same_as, "' ",
            shape_str(from->shape), " (same_as gives the same tensor)");
}

ScenarioInput parse_input(const json& e, size_t i, const ModuleInfo& info, const std::vector<ScenarioInput>& earlier,
                          std::vector<std::vector<float>>* buffers) {
  const std::string where = "inputs[" + std::to_string(i) + "]";
  if (!e.is_object()) fail_at("inputs", where, " must be an object with name and shape");
  if (e.contains("text"))  // {"name", "text"}: tokenized before the core (bindings/tokenizer.mjs)
    fail_at("inputs", where, " is text: the core takes token ids; the Node CLI and the bindings' withTokens() tokenize it with the "
            "model folder's tokenizer (node bindings/cli.mjs run FILE.json), this CLI does not: give \"data\": [ids]");
  check_keys(e, where, {"name", "shape", "init", "data", "embedding", "buffer", "same_as"}, "inputs");
  if (!e.contains("name") || !e["name"].is_string()) fail_at("inputs", where, ".name must be a string");
  ScenarioInput in;
  in.name = e["name"].get<std::string>();
  const InputSpec& spec = input_spec(info, in.name, where);
  const std::string field = "inputs." + in.name;
  for (const ScenarioInput& x : earlier)
    if (x.name == in.name) fail_at(field, where, ".name '", in.name, "' is given twice");
  const int sources = e.contains("init") + e.contains("data") + e.contains("embedding") + e.contains("buffer") + e.contains("same_as");
  if (sources != 1)
    fail_at(field, where, " ('", in.name, "') needs exactly one of \"init\", \"data\", \"embedding\" or \"same_as\"");
  if (e.contains("same_as")) {
    if (e.contains("shape")) in.shape = parse_shape(e["shape"], where, field);
    parse_same(e, where, field, earlier, in);
    return in;
  }
  if (!e.contains("shape")) fail_at(field, where, " ('", in.name, "') needs a shape");
  in.shape = parse_shape(e["shape"], where, field);
  if (e.contains("buffer")) {
    parse_buffer(e, where, field, buffers, in);
  } else if (e.contains("init")) {
    in.kind = ScenarioInput::Kind::Init;
    in.init = e["init"].is_string() ? e["init"].get<std::string>() : "";
    if (in.init != "rand" && in.init != "randn") fail_at(field, where, ".init (", brief(e["init"]), ") must be \"rand\" or \"randn\"");
    if (spec.kind == InputKind::Ids) fail_at(field, where, ": '", in.name, "' holds token ids: give them as \"data\"");
  } else if (e.contains("data")) {
    in.kind = ScenarioInput::Kind::Data;
    in.data = parse_floats(e["data"], where + ".data", numel(in.shape), field);
  } else {
    parse_embedding(e["embedding"], where, field, earlier, in);
  }
  return in;
}

void parse_config(const json& j, Scenario& s) {
  if (!j.is_object()) fail_at("config", "scenario.config must be an object of constructor arguments");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const json& v = it.value();
    if (v.is_boolean()) s.config[it.key()] = v.get<bool>() ? 1.0 : 0.0;
    else if (v.is_number()) s.config[it.key()] = v.get<double>();
    else fail_at("config." + it.key(), "config '", it.key(), "' (", brief(v), ") must be a number or true/false");
  }
}

void parse_params(const json& j, Scenario& s) {
  if (!j.is_object()) fail_at("params", "scenario.params must be an object {\"<state_dict name>\": {\"shape\", \"data\"}}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string where = "params['" + it.key() + "']", field = "params." + it.key();
    const json& p = it.value();
    if (!p.is_object() || !p.contains("shape") || !p.contains("data")) fail_at(field, where, " must be {\"shape\": [...], \"data\": [...]}");
    check_keys(p, where, {"shape", "data"}, field);
    Shape shape = parse_shape(p["shape"], where, field);
    s.params.emplace_back(it.key(), Tensor::from(shape, parse_floats(p["data"], where + ".data", numel(shape), field)));
  }
}

void parse_weights(const json& w, const std::vector<Blob>* blobs, Scenario& s) {
  if (!w.is_object()) fail_at("weights", "scenario.weights must be {\"name\": \"model.safetensors\", \"buffer\": 0}");
  check_keys(w, "scenario.weights", {"name", "buffer"}, "weights");
  s.weights_name = w.contains("name") && w["name"].is_string() ? w["name"].get<std::string>() : "weights";
  const bool given = w.contains("buffer") && w["buffer"].is_number_unsigned() && blobs && w["buffer"].get<uint64_t>() < blobs->size();
  if (!given)
    fail_at("weights", "scenario.weights names external weights ('", s.weights_name, "') but the file is not loaded: ",
            "pick the file on the page, pass --weights FILE to the CLI, or run(scenario, {weights: bytes}) in JS");
  const Blob& b = (*blobs)[w["buffer"].get<size_t>()];
  try {
    s.weights = read_safetensors(b.data(), b.size());
  } catch (const Error& e) {
    throw Error(e.what(), "weights");
  }
}

void parse_flags(const json& j, Scenario& s) {
  if (j.contains("seed")) {
    const json& v = j["seed"];
    if (v.is_number_unsigned()) s.seed = v.get<uint64_t>();
    else if (v.is_number_integer() && v.get<int64_t>() >= 0) s.seed = static_cast<uint64_t>(v.get<int64_t>());
    else fail_at("seed", "scenario.seed (", brief(v), ") must be an integer from 0 to 2^64-1");
  }
  for (auto [flag, target] : {std::pair<const char*, bool*>{"train", &s.train}, {"trace", &s.trace},
                                {"return_inputs", &s.return_inputs}, {"return_params", &s.return_params}}) {
    if (!j.contains(flag)) continue;
    if (!j[flag].is_boolean()) fail_at(flag, "scenario.", flag, " (", brief(j[flag]), ") must be true or false");
    *target = j[flag].get<bool>();
  }
}

// A number field of an object: absent -> def; else finite and >= lo (> lo when open_lo).
double number_field(const json& j, const char* key, double def, double lo, bool open_lo, const std::string& field) {
  if (!j.contains(key)) return def;
  const json& v = j[key];
  const double d = v.is_number() ? v.get<double>() : NAN;
  if (!std::isfinite(d) || d < lo || (open_lo && d == lo))
    fail_at(field, field, " (", brief(v), ") must be a finite number ", open_lo ? "> " : ">= ", lo);
  return d;
}

// "loss": {"fn": "mse" | "cross_entropy" | "sum", "output": "output", "target": {...}, "ignore_index": -100}
void parse_loss(const json& l, const ModuleInfo& info, Scenario& s) {
  if (!l.is_object()) fail_at("loss", "scenario.loss must be {\"fn\": \"mse\" | \"cross_entropy\" | \"sum\", ...}");
  check_keys(l, "scenario.loss", {"fn", "output", "target", "ignore_index"}, "loss");
  s.has_loss = true;
  s.loss.fn = l.contains("fn") && l["fn"].is_string() ? l["fn"].get<std::string>() : "";
  if (s.loss.fn != "mse" && s.loss.fn != "cross_entropy" && s.loss.fn != "sum")
    fail_at("loss.fn", "loss.fn (", l.contains("fn") ? brief(l["fn"]) : std::string("missing"),
            ") must be \"mse\", \"cross_entropy\" or \"sum\"");
  if (l.contains("output")) {
    if (!l["output"].is_string()) fail_at("loss.output", "loss.output must be the name of a module output, e.g. \"output\"");
    s.loss.output = l["output"].get<std::string>();
  }
  bool known = false;
  std::string names;
  for (const char* o : info.outputs) {
    known = known || o == s.loss.output;
    names.append(names.empty() ? "" : ", ").append(o);
  }
  if (!known) fail_at("loss.output", "loss.output '", s.loss.output, "' is not an output of ", info.id, ": its outputs are ", names);
  if (l.contains("ignore_index")) {
    if (!l["ignore_index"].is_number_integer()) fail_at("loss.ignore_index", "loss.ignore_index must be an integer (default -100)");
    s.loss.ignore_index = l["ignore_index"].get<int64_t>();
  }
  s.target.name = "target";
  if (s.loss.fn == "sum") {
    if (l.contains("target")) fail_at("loss.target", "loss \"sum\" (output.sum()) takes no target");
    return;
  }
  if (!l.contains("target") || !l["target"].is_object())
    fail_at("loss.target", "loss \"", s.loss.fn, "\" needs a target: {\"shape\": [...], \"init\": \"randn\"} or {\"shape\": [...], \"data\": [...]}");
  const json& t = l["target"];
  check_keys(t, "loss.target", {"shape", "init", "data"}, "loss.target");
  if (!t.contains("shape")) fail_at("loss.target", "loss.target needs a shape");
  s.target.shape = parse_shape(t["shape"], "loss.target", "loss.target");
  if (t.contains("init") == t.contains("data")) fail_at("loss.target", "loss.target needs exactly one of \"init\" or \"data\"");
  if (t.contains("init")) {
    s.target.kind = ScenarioInput::Kind::Init;
    s.target.init = t["init"].is_string() ? t["init"].get<std::string>() : "";
    if (s.target.init != "rand" && s.target.init != "randn")
      fail_at("loss.target", "loss.target.init (", brief(t["init"]), ") must be \"rand\" or \"randn\"");
    if (s.loss.fn == "cross_entropy") fail_at("loss.target", "cross_entropy targets are class ids: give them as \"data\"");
  } else {
    s.target.kind = ScenarioInput::Kind::Data;
    s.target.data = parse_floats(t["data"], "loss.target.data", numel(s.target.shape), "loss.target");
  }
}

// "optimize": {"optimizer", "lr", "momentum", "dampening", "nesterov", "betas", "eps", "weight_decay",
//              "clip_grad_norm", "steps"}; PyTorch's defaults for what is left out
void parse_optimize(const json& o, Scenario& s) {
  if (!o.is_object()) fail_at("optimize", "scenario.optimize must be {\"optimizer\": \"SGD\" | \"Adam\" | \"AdamW\", \"lr\": ..., ...}");
  check_keys(o, "scenario.optimize",
             {"optimizer", "lr", "momentum", "dampening", "nesterov", "betas", "eps", "weight_decay", "clip_grad_norm", "steps"},
             "optimize");
  OptimizerSpec& p = s.optimizer;
  p.name = o.contains("optimizer") && o["optimizer"].is_string() ? o["optimizer"].get<std::string>() : "";
  if (p.name != "SGD" && p.name != "Adam" && p.name != "AdamW")
    fail_at("optimize.optimizer", "optimize.optimizer (", o.contains("optimizer") ? brief(o["optimizer"]) : std::string("missing"),
            ") must be \"SGD\", \"Adam\" or \"AdamW\"");
  if (p.name == "SGD" && !o.contains("lr")) fail_at("optimize.lr", "optimize.lr is required for SGD (torch.optim.SGD has no default)");
  p.lr = number_field(o, "lr", 1e-3, 0, true, "optimize.lr");
  p.momentum = number_field(o, "momentum", 0, 0, false, "optimize.momentum");
  p.dampening = number_field(o, "dampening", 0, -1e30, false, "optimize.dampening");
  p.weight_decay = number_field(o, "weight_decay", p.name == "AdamW" ? 1e-2 : 0, 0, false, "optimize.weight_decay");
  p.eps = number_field(o, "eps", 1e-8, 0, false, "optimize.eps");
  if (o.contains("nesterov")) {
    if (!o["nesterov"].is_boolean()) fail_at("optimize.nesterov", "optimize.nesterov must be true or false");
    p.nesterov = o["nesterov"].get<bool>();
    if (p.nesterov && (p.momentum <= 0 || p.dampening != 0))
      fail_at("optimize.nesterov", "optimize.nesterov needs momentum > 0 and dampening 0 (as torch.optim.SGD)");
  }
  if (o.contains("betas")) {
    const json& b = o["betas"];
    if (!b.is_array() || b.size() != 2 || !b[0].is_number() || !b[1].is_number() || b[0].get<double>() < 0 ||
        b[0].get<double>() >= 1 || b[1].get<double>() < 0 || b[1].get<double>() >= 1)
      fail_at("optimize.betas", "optimize.betas (", brief(b), ") must be two numbers in [0, 1), e.g. [0.9, 0.999]");
    p.beta1 = b[0].get<double>();
    p.beta2 = b[1].get<double>();
  }
  if (o.contains("clip_grad_norm") && !o["clip_grad_norm"].is_null())
    s.clip_grad_norm = number_field(o, "clip_grad_norm", 0, 0, true, "optimize.clip_grad_norm");
  if (o.contains("steps")) {
    const json& n = o["steps"];
    if (!n.is_number_integer() || n.get<int64_t>() < 1 || n.get<int64_t>() > kMaxOptimizeSteps)
      fail_at("optimize.steps", "optimize.steps (", brief(n), ") must be an integer from 1 to ", kMaxOptimizeSteps);
    s.steps = n.get<int64_t>();
  }
  s.optimize = true;
}

// "generate": {"max_new_tokens": N, "temperature": 1.0, "top_k": null, "top_p": null, "cache": true}
void parse_generate(const json& g, const ModuleInfo& info, Scenario& s) {
  if (!g.is_object())
    fail_at("generate", "scenario.generate must be {\"max_new_tokens\": N, \"temperature\": 1.0, \"top_k\": null, \"top_p\": null}");
  check_keys(g, "scenario.generate", {"max_new_tokens", "temperature", "top_k", "top_p", "cache"}, "generate");
  if (!info.generates) fail_at("generate", "scenario.generate needs a language model: ", info.id, " does not generate (GPT does)");
  GenerateSpec& p = s.generation;
  const json n = g.value("max_new_tokens", json());
  if (!n.is_number_integer() || n.get<int64_t>() < 1 || n.get<int64_t>() > kMaxNewTokens)
    fail_at("generate.max_new_tokens", "generate.max_new_tokens (", n.is_null() ? std::string("missing") : brief(n),
            ") must be an integer from 1 to ", kMaxNewTokens);
  p.max_new_tokens = n.get<int64_t>();
  if (g.contains("temperature"))
    p.temperature = number_field(g, "temperature", 1.0, 0, false, "generate.temperature");  // 0: greedy
  const json k = g.value("top_k", json());
  if (!k.is_null() && (!k.is_number_integer() || k.get<int64_t>() < 1))
    fail_at("generate.top_k", "generate.top_k (", brief(k), ") must be null or an integer >= 1");
  p.top_k = k.is_null() ? 0 : k.get<int64_t>();
  const json tp = g.value("top_p", json());
  const double top_p = tp.is_number() ? tp.get<double>() : NAN;
  if (!tp.is_null() && !(top_p > 0 && top_p <= 1))
    fail_at("generate.top_p", "generate.top_p (", brief(tp), ") must be null or a number in (0, 1]: the probability mass kept");
  p.top_p = tp.is_null() ? 0 : top_p;
  if (g.contains("cache")) {
    if (!g["cache"].is_boolean()) fail_at("generate.cache", "generate.cache (", brief(g["cache"]), ") must be true or false");
    p.cache = g["cache"].get<bool>();
  }
  s.generate = true;
}

void parse_training(const json& j, const ModuleInfo& info, Scenario& s) {
  if (j.contains("loss")) parse_loss(j["loss"], info, s);
  if (j.contains("grads")) {
    if (!j["grads"].is_boolean()) fail_at("grads", "scenario.grads (", brief(j["grads"]), ") must be true or false");
    s.grads = j["grads"].get<bool>();
  }
  if (j.contains("optimize")) parse_optimize(j["optimize"], s);
  if ((s.grads || s.optimize) && !s.has_loss)
    fail_at("loss", "scenario.", s.grads ? "grads" : "optimize", " needs a \"loss\": {\"fn\": \"mse\" | \"cross_entropy\" | \"sum\", ...}");
}

}  // namespace

// "pretrained": "folder": module, config and weights from the folder's files, which the caller reads.
void parse_pretrained(const json& j, const FolderReader* files, const FolderSizes* sizes, Scenario& s) {
  if constexpr (!kPretrained) {
    fail_at("pretrained", "scenario.pretrained needs the full core: loadAttention({fast: true})");
  } else {
    const json& p = j["pretrained"];
    if (!p.is_string() || p.get<std::string>().empty())
      fail_at("pretrained", "scenario.pretrained must name a model folder (config.json, model.safetensors), got ", brief(p));
    for (const char* clash : {"module", "config", "weights", "params"})
      if (j.contains(clash))
        fail_at(clash, "scenario.", clash, " cannot be given with pretrained: the model folder's config.json and weights set the module, its config and its parameters");
    s.pretrained = p.get<std::string>();
    if (!files)
      fail_at("pretrained", "scenario.pretrained names a model folder ('", s.pretrained, "') but no files were handed over: the CLIs read it ",
              "relative to the scenario file; in JS pass run(scenario, {files: {\"config.json\": bytes, ...}})");
    ModelFolder folder{s.pretrained, [&](const std::string& name, Blob& out) { return (*files)(s.pretrained, name, out); }, kMaxModelBytes, {}};
#if ATTN_PRETRAINED
    if (sizes) {
      folder.file_size = [&](const std::string& name) { return (*sizes)(s.pretrained, name); };
      const PretrainedPlan plan = plan_pretrained(folder);
      s.module = plan.module, s.model_type = plan.model_type, s.config = plan.config;
      s.weights_name = s.pretrained + "/" + (plan.files.size() == 1 ? plan.files[0] : "model.safetensors.index.json");
      auto streamed = std::make_shared<StreamedWeights>(StreamedWeights{s.weights_name, plan.tensors(), plan.files, {}});
      for (const SafeTensorsHeader& h : plan.headers) streamed->data_offsets.push_back(h.data_offset);
      s.streamed = std::move(streamed);
      return;
    }
#endif
    PretrainedModel m = load_pretrained(folder);
    s.module = m.module, s.model_type = m.model_type;
    s.config = std::move(m.config);
    s.weights = std::move(m.weights);
    s.weights_name = m.weights_name;
  }
}

Scenario parse_scenario(const std::string& text, std::vector<std::vector<float>>* buffers, const std::vector<Blob>* blobs,
                        const FolderReader* files, const FolderSizes* sizes) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers beyond double
    fail("scenario is not valid JSON: ", e.what());
  }
  if (!j.is_object()) fail("scenario must be a JSON object like {\"module\": \"softmax\", \"inputs\": [...]}");
  check_keys(j, "scenario",
             {"module", "config", "seed", "train", "trace", "inputs", "params", "return_inputs", "return_params", "weights", "loss",
              "grads", "optimize", "generate", "interventions", "patching", "attribution_patching", "logit_lens",
              "logit_attribution", "pretrained"},
             "");
  Scenario s;
  if (j.contains("pretrained")) {
    parse_pretrained(j, files, sizes, s);
  } else {
    if (!j.contains("module") || !j["module"].is_string())
      fail_at("module", "scenario.module must be a module id string, e.g. \"CausalAttention\"");
    s.module = j["module"].get<std::string>();
  }
  const ModuleInfo& info = module_info(s.module);
  if (j.contains("config")) parse_config(j["config"], s);
  parse_flags(j, s);
  if (j.contains("inputs")) {
    if (!j["inputs"].is_array()) fail_at("inputs", "scenario.inputs must be a list of {\"name\", \"shape\", ...}");
    for (size_t i = 0; i < j["inputs"].size(); ++i) s.inputs.push_back(parse_input(j["inputs"][i], i, info, s.inputs, buffers));
  }
  if (j.contains("params")) parse_params(j["params"], s);
  if (j.contains("weights")) parse_weights(j["weights"], blobs, s);
  parse_training(j, info, s);
  if (j.contains("generate")) {
    parse_generate(j["generate"], info, s);
    if (s.has_loss) fail_at("generate", "scenario.generate cannot be combined with loss, grads or optimize: generate or train");
    if (s.train) fail_at("train", "scenario.generate runs the model in eval mode (model.eval(), as nanoGPT's sample.py): set train to false");
  }
  parse_interp(j, info, s);
  return s;
}

}  // namespace attn
