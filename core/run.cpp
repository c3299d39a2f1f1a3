// Running a scenario, as the PyTorch program of SCENARIO.md does it: seed, construct, load
// weights and params, build the inputs in order, forward on the tape, collect outputs and steps.
#include <cmath>

#include "error.hpp"
#include "graph.hpp"
#include "ops.hpp"
#include "scenario.hpp"

namespace attn {

namespace {

// A state_dict loaded strictly, as load_state_dict(strict=True): every parameter from the file,
// shapes equal; buffers PyTorch keeps in a state_dict (the causal `mask`, the positional `pe`)
// are recomputed by the core, so they are accepted and skipped.
void load_weights(const Scenario& s, ParamList& params) {
  auto is_buffer = [](const std::string& n) {
    for (const std::string tail : {"mask", "pe"})
      if (n == tail || (n.size() > tail.size() + 1 && n.compare(n.size() - tail.size() - 1, std::string::npos, "." + tail) == 0))
        return true;
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
      fail_at("weights", "weights '", s.weights_name, "': '", w.name, "' is not a parameter of ", s.module,
              ": its parameters are ", names, " (was the file saved from another module or config?)");
    }
    if (target->shape() != w.value.shape())
      fail_at("weights", "weights '", s.weights_name, "': '", w.name, "' has shape ", shape_str(w.value.shape()), " but ",
              s.module, " with this config needs ", shape_str(target->shape()), ": set the config the model was trained with");
    *target = w.value;
  }
  for (auto& [pname, t] : params) {
    bool found = false;
    for (const SafeTensor& w : s.weights) found = found || w.name == pname;
    if (!found)
      fail_at("weights", "weights '", s.weights_name, "': parameter '", pname, "' ", shape_str(t->shape()), " of ", s.module,
              " is missing from the file: save the whole state_dict");
  }
}

void set_params(const Scenario& s, ParamList& params) {
  for (const auto& [name, value] : s.params) {
    Tensor* target = nullptr;
    std::string names;
    for (auto& [pname, t] : params) {
      if (pname == name) target = t;
      if (names.size() < 300) names += (names.empty() ? "" : ", ") + pname;
    }
    if (!target) fail_at("params." + name, "params: '", name, "' is not a parameter of ", s.module, ": its parameters are ", names);
    if (target->shape() != value.shape())
      fail_at("params." + name, "params: '", name, "' has shape ", shape_str(value.shape()), " but ", s.module, " needs ",
              shape_str(target->shape()));
    *target = value.clone();
  }
}

// The inputs in the module's order, built as the scenario lists them: drawn from gen after the
// module, given, looked up in a (seeded or given) embedding table, or the same tensor as another.
std::vector<Tensor> build_inputs(const Scenario& s, const ModuleInfo& info, Generator& gen, int64_t total) {
  std::vector<Tensor> inputs(info.inputs.size());
  std::vector<std::pair<std::string, Tensor>> built, tables;
  const auto find = [](const auto& list, const std::string& name) {
    for (const auto& [n, t] : list)
      if (n == name) return t;
    return Tensor();
  };
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
      case ScenarioInput::Kind::Data: t = Tensor::from(in.shape, in.data); break;
      case ScenarioInput::Kind::Same: t = find(built, in.same_as); break;
      case ScenarioInput::Kind::Embedding: {
        // nn.Embedding(V, d) constructed here from gen, a given table, or an earlier input's table
        const int64_t d = in.shape.back();
        Tensor weight = find(tables, in.same_as);
        if (!weight.defined() && in.data.empty()) {
          weight = Tensor::empty({in.num_embeddings, d});
          gen.embedding_init(weight.data(), static_cast<size_t>(weight.numel()));
        } else if (!weight.defined()) {
          weight = Tensor::from({in.num_embeddings, d}, in.data);
        }
        tables.emplace_back(in.name, weight);
        t = embedding(weight, in.ids, Shape(in.shape.begin(), in.shape.end() - 1));
        break;
      }
    }
    built.emplace_back(in.name, t);
    inputs[slot] = t;
  }
  for (size_t i = 0; i < info.inputs.size(); ++i)
    if (!inputs[i].defined() && !info.inputs[i].optional)
      fail_at("inputs." + info.inputs[i].name, "input '", info.inputs[i].name, "' ", info.inputs[i].shape, " is required by ",
              s.module, " but not given");
  return inputs;
}

// Which inputs the sequence dims of the steps follow by default (Context::Sequences): queries
// from the x/query/target input, keys from the key/memory/source input (else the queries').
std::pair<std::string, std::string> default_sequences(const ModuleInfo& info) {
  std::string q, k;
  for (const InputSpec& in : info.inputs) {
    if (q.empty() && (in.role == InputRole::x || in.role == InputRole::query || in.role == InputRole::target)) q = in.name;
    if (k.empty() && (in.role == InputRole::key || in.role == InputRole::memory || in.role == InputRole::source)) k = in.name;
  }
  return {q, k.empty() ? q : k};
}

void check_outputs(const Outputs& outputs) {
  for (const NamedVar& o : outputs) {
    if (!o.value.defined()) continue;
    const Tensor c = o.value.t.contiguous();
    for (int64_t i = 0; i < c.numel(); ++i)
      if (std::isnan(c.data()[i]))
        fail_at("inputs", "output '", o.name, "' has NaN at index ", i,
                ": the inputs overflow float32 (largest finite value 3.4e38)");
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
  set_params(s, params);
  const std::vector<Tensor> inputs = build_inputs(s, info, gen, total);

  Result r;
  r.module = s.module;
  if (s.return_inputs)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].defined()) r.inputs.push_back({info.inputs[i].name, inputs[i]});
  if (s.return_params)
    for (auto& [name, t] : params) r.params.push_back({name, *t});

  Context ctx(gen, s.train, s.trace);
  ctx.bind_parameters(params);
  const auto [seq_q, seq_k] = default_sequences(info);
  Context::Sequences sequences(ctx, seq_q, seq_k);
  std::vector<Var> vars;
  for (size_t i = 0; i < inputs.size(); ++i) vars.push_back(ctx.input(inputs[i], info.inputs[i].name));
  const Outputs outputs = module->forward(vars, ctx);
  check_outputs(outputs);
  r.steps = ctx.steps();
  for (const NamedVar& o : outputs) {
    r.outputs.push_back({o.name, o.value.t});
    r.output_steps.push_back(ctx.step_of(o.value.id));
  }
  r.attention = module->attention();
  return r;
}

std::string run_json(const std::string& scenario_json) { return result_to_json(run(parse_scenario(scenario_json))); }

}  // namespace attn
