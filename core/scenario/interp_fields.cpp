// The interpretability fields of a scenario (SCENARIO.md, "Interpretability"), checked at the
// entry with an error naming the field, the value and the rule. What can only be checked against
// the forward (a step's name and dims, a token against the vocabulary, a position against the
// sequence) is checked where it runs (tape/ops/intervene.cpp, run/interp.cpp).
#include <cmath>

#include "base/build.hpp"
#include "base/error.hpp"
#include "scenario/fields.hpp"

namespace attn {

namespace {

// The modules with a `logits` step read out from a residual stream.
bool has_logits(const ModuleInfo& info) {
  const std::string id = info.id;
  return id == "GPT" || id == "CausalTransformer" || id == "Llama";
}

int64_t int_field(const json& o, const char* key, const std::string& where, const std::string& field, bool negative_ok) {
  const json& v = o[key];
  if (!v.is_number_integer() || (!negative_ok && v.get<int64_t>() < 0))
    fail_at(field, where, ".", key, " (", brief(v), ") must be an integer", negative_ok ? " (negative counts from the end)" : " >= 0");
  return v.get<int64_t>();
}

Intervention parse_intervention(const json& e, size_t k) {
  const std::string where = "interventions[" + std::to_string(k) + "]", field = "interventions." + std::to_string(k);
  if (!e.is_object())
    fail_at(field, where, " must be {\"step\": name, \"head\"?, \"position\"?, \"batch\"?, \"set\": \"zero\" | \"mean\" | {\"from_batch\": j} | {\"scale\": s}}");
  check_keys(e, where, {"step", "head", "position", "batch", "set"}, field);
  Intervention iv;
  if (!e.contains("step") || !e["step"].is_string() || e["step"].get<std::string>().empty())
    fail_at(field + ".step", where, ".step must be the name of a traced step, e.g. \"transformer.h.1.attn.y\"");
  iv.step = e["step"].get<std::string>();
  if (e.contains("head")) iv.head = int_field(e, "head", where, field + ".head", false);
  if (e.contains("position")) iv.position = int_field(e, "position", where, field + ".position", true);
  if (e.contains("batch")) iv.batch = int_field(e, "batch", where, field + ".batch", false);
  const json set = e.value("set", json());
  const auto bad_set = [&]() {
    fail_at(field + ".set", where, ".set (", set.is_null() ? std::string("missing") : brief(set),
            ") must be \"zero\", \"mean\", {\"from_batch\": j} or {\"scale\": s}");
  };
  if (set.is_string()) {
    if (set == "zero") iv.set = Intervention::Set::zero;
    else if (set == "mean") iv.set = Intervention::Set::mean;
    else bad_set();
  } else if (set.is_object() && set.size() == 1 && set.contains("from_batch")) {
    iv.set = Intervention::Set::from_batch;
    iv.from_batch = int_field(set, "from_batch", where + ".set", field + ".set", false);
  } else if (set.is_object() && set.size() == 1 && set.contains("scale")) {
    iv.set = Intervention::Set::scale;
    const double sc = set["scale"].is_number() ? set["scale"].get<double>() : NAN;
    if (!std::isfinite(sc)) fail_at(field + ".set", where, ".set.scale (", brief(set["scale"]), ") must be a finite number");
    iv.scale = static_cast<float>(sc);
  } else {
    bad_set();
  }
  return iv;
}

Metric parse_metric(const json& m, const std::string& where, const std::string& field) {
  if (!m.is_object())
    fail_at(field, where, " must be {\"kind\": \"logit_diff\" | \"logit\" | \"prob\", \"position\", \"token\", \"wrong\"?}");
  check_keys(m, where, {"kind", "position", "token", "wrong"}, field);
  Metric r;
  const json kind = m.value("kind", json());
  if (kind == "logit_diff") r.kind = Metric::Kind::logit_diff;
  else if (kind == "logit") r.kind = Metric::Kind::logit;
  else if (kind == "prob") r.kind = Metric::Kind::prob;
  else fail_at(field + ".kind", where, ".kind (", kind.is_null() ? std::string("missing") : brief(kind), ") must be \"logit_diff\", \"logit\" or \"prob\"");
  for (const char* key : {"position", "token"})
    if (!m.contains(key)) fail_at(field + "." + key, where, ".", key, " is missing: the metric reads one token's logit at one position");
  r.position = int_field(m, "position", where, field + ".position", true);
  r.token = int_field(m, "token", where, field + ".token", false);
  if (r.kind == Metric::Kind::logit_diff) {
    if (!m.contains("wrong")) fail_at(field + ".wrong", where, ".wrong is missing: logit_diff is logit[token] - logit[wrong]");
    r.wrong = int_field(m, "wrong", where, field + ".wrong", false);
  } else if (m.contains("wrong")) {
    fail_at(field + ".wrong", where, ".wrong belongs to kind \"logit_diff\" only (", brief(kind), " reads one token)");
  }
  return r;
}

PatchingSpec parse_patching(const json& p, const char* name, const ModuleInfo& info) {
  const std::string where = std::string("scenario.") + name, field = name;
  if (!has_logits(info))
    fail_at(field, where, " needs a model with logits (GPT, Llama, CausalTransformer): ", info.id, " has none");
  if (!p.is_object())
    fail_at(field, where, " must be {\"clean\": i, \"corrupted\": j, \"steps\": [pattern, ...], \"by\": \"head\" | \"position\" | \"head_position\" | \"all\", \"metric\": {...}}");
  check_keys(p, where, {"clean", "corrupted", "steps", "by", "metric"}, field);
  PatchingSpec s;
  for (const char* key : {"clean", "corrupted", "steps", "metric"})
    if (!p.contains(key)) fail_at(field + "." + key, where, ".", key, " is missing");
  s.clean = int_field(p, "clean", where, field + ".clean", false);
  s.corrupted = int_field(p, "corrupted", where, field + ".corrupted", false);
  if (s.clean == s.corrupted)
    fail_at(field + ".corrupted", where, ".clean and .corrupted are both ", s.clean, ": patching puts the clean row's activations into another row");
  const json& steps = p["steps"];
  if (!steps.is_array() || steps.empty()) fail_at(field + ".steps", where, ".steps must be a non-empty list of step names or patterns (\"transformer.h.*.attn.y\")");
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!steps[i].is_string() || steps[i].get<std::string>().empty())
      fail_at(field + ".steps", where, ".steps[", i, "] (", brief(steps[i]), ") must be a step name or a pattern with *");
    s.steps.push_back(steps[i].get<std::string>());
  }
  if (p.contains("by")) {
    const json& by = p["by"];
    if (by != "head" && by != "position" && by != "head_position" && by != "all")
      fail_at(field + ".by", where, ".by (", brief(by), ") must be \"head\", \"position\", \"head_position\" or \"all\"");
    s.by = by.get<std::string>();
  }
  s.metric = parse_metric(p["metric"], where + ".metric", field + ".metric");
  return s;
}

LogitAttributionSpec parse_logit_attribution(const json& a, const ModuleInfo& info) {
  const std::string where = "scenario.logit_attribution", field = "logit_attribution";
  if (std::string(info.id) == "CausalTransformer")
    fail_at(field, where, " needs a pre-norm model (GPT): CausalTransformer normalises after each residual add (post-norm), so its "
            "final residual stream is not a sum of the blocks' outputs and cannot be split into them");
  if (std::string(info.id) != "GPT" && std::string(info.id) != "Llama")
    fail_at(field, where, " needs GPT or Llama (a residual stream read out by a final norm and lm_head): ", info.id, " has none");
  if (!a.is_object()) fail_at(field, where, " must be {\"position\", \"token\", \"wrong\"?, \"batch\"?}");
  check_keys(a, where, {"position", "token", "wrong", "batch"}, field);
  LogitAttributionSpec s;
  for (const char* key : {"position", "token"})
    if (!a.contains(key)) fail_at(field + "." + key, where, ".", key, " is missing");
  s.position = int_field(a, "position", where, field + ".position", true);
  s.token = int_field(a, "token", where, field + ".token", false);
  if (a.contains("wrong")) s.wrong = int_field(a, "wrong", where, field + ".wrong", false);
  if (a.contains("batch")) s.batch = int_field(a, "batch", where, field + ".batch", false);
  return s;
}

// "interventions": a list, each checked, and against the rest of the scenario.
void parse_interventions_list(const json& list, Scenario& s) {
  if (!list.is_array()) fail_at("interventions", "scenario.interventions must be a list of {\"step\", \"head\"?, \"position\"?, \"batch\"?, \"set\"}");
  s.interventions.clear();
  for (size_t k = 0; k < list.size(); ++k) s.interventions.push_back(parse_intervention(list[k], k));
  if (s.optimize && !s.interventions.empty())
    fail_at("interventions", "scenario.interventions cannot be combined with optimize: an intervention changes one forward, "
            "training changes the weights (ask for grads to see the gradients under it)");
  for (size_t k = 0; k < s.interventions.size() && s.generate && s.generation.cache; ++k) {
    const Intervention& iv = s.interventions[k];
    const std::string at = "interventions." + std::to_string(k), said = "interventions[" + std::to_string(k) + "]";
    if (iv.set == Intervention::Set::mean)
      fail_at(at + ".set", said, ".set \"mean\" with generate needs \"cache\": false: the mean over positions changes as the "
              "sequence grows, and a KV cache keeps the keys and values of the old one");
    if (iv.position != Attrs::kAll && iv.position < 0)
      fail_at(at + ".position", said, ".position (", iv.position, ") counts from the end, which moves at each new token: with generate "
              "and a KV cache the cached keys and values keep the old one; give a position from the start, or \"cache\": false");
  }
}

// "patching", "attribution_patching", "logit_lens" and "logit_attribution": what one forward is read for.
void parse_reading_fields(const json& j, const ModuleInfo& info, Scenario& s) {
  if (j.contains("patching")) {
    s.patch = parse_patching(j["patching"], "patching", info);
    s.patching = true;
  }
  if (j.contains("attribution_patching")) {
    s.attribution = parse_patching(j["attribution_patching"], "attribution_patching", info);
    s.attribution_patching = true;
  }
  if (j.contains("logit_lens")) {
    if (!j["logit_lens"].is_boolean()) fail_at("logit_lens", "scenario.logit_lens (", brief(j["logit_lens"]), ") must be true or false");
    s.logit_lens = j["logit_lens"].get<bool>();
    if (s.logit_lens && !has_logits(info))
      fail_at("logit_lens", "scenario.logit_lens needs a model with a residual stream read out to logits (GPT, Llama, CausalTransformer): ", info.id, " has none");
  }
  if (j.contains("logit_attribution")) {
    s.attribution_of = parse_logit_attribution(j["logit_attribution"], info);
    s.logit_attribution = true;
  }
}

// The fields themselves, in a build that has them (base/build.hpp).
void parse_fields(const json& j, const ModuleInfo& info, Scenario& s) {
  if (j.contains("interventions")) parse_interventions_list(j["interventions"], s);
  parse_reading_fields(j, info, s);
  const bool reads = s.patching || s.attribution_patching || s.logit_lens || s.logit_attribution;
  if (reads && (s.generate || s.optimize))
    fail_at(s.generate ? "generate" : "optimize", "patching, attribution_patching, logit_lens and logit_attribution read one forward: "
            "leave ", s.generate ? "generate" : "optimize", " out (interventions apply during generation)");
  if (reads && s.train)
    fail_at("train", "patching, attribution_patching, logit_lens and logit_attribution run the model in eval mode: set train to false");
}

}  // namespace

// `text` as JSON, or an error at `field` saying it is not.
static json parsed(const std::string& text, const char* field) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail_at(field, field, " are not valid JSON: ", e.what());
  }
}

void parse_interventions(const std::string& text, Scenario& s) {
  if constexpr (kInterp) {
    parse_interventions_list(parsed(text, "interventions"), s);
  } else {
    fail_at("interventions", "interventions need the full core: load it with loadAttention({fast: true})");
  }
}

void parse_readings(const std::string& text, const ModuleInfo& info, Scenario& s) {
  if constexpr (kInterp) {
    const json j = parsed(text, "readings");
    if (!j.is_object())
      fail_at("readings", "readings must be {\"logit_lens\"?: true, \"logit_attribution\"?: {...}, \"patching\"?: {...}, \"attribution_patching\"?: {...}}");
    for (const auto& [key, value] : j.items())
      if (key != "logit_lens" && key != "logit_attribution" && key != "patching" && key != "attribution_patching")
        fail_at("readings." + key, "readings.", key, " is not a reading of one forward: logit_lens, logit_attribution, patching or attribution_patching");
    parse_reading_fields(j, info, s);
  } else {
    fail_at("readings", "logit_lens, logit_attribution and patching need the full core: load it with loadAttention({fast: true})");
  }
}

void parse_interp(const json& j, const ModuleInfo& info, Scenario& s) {
  if constexpr (kInterp) {
    parse_fields(j, info, s);
  } else {  // the page's small build leaves them out
    for (const char* key : {"interventions", "patching", "attribution_patching", "logit_lens", "logit_attribution"})
      if (j.contains(key) && !(j[key].is_boolean() && !j[key].get<bool>()) && !(j[key].is_array() && j[key].empty()))
        fail_at(key, "scenario.", key, " needs the full core: this is the page's small build (attention.wasm), which leaves the "
                "interpretability fields out to keep the first view small; load the core with loadAttention({fast: true}) "
                "(the CLIs and the page's workers do)");
  }
}

}  // namespace attn
