// A scenario's module built once and kept (session.hpp): seed, construct, weights, params, inputs
// in order, the loss's target; then forwards, gradients, training steps or a generation on it.
#include "scenario/session.hpp"

#include <algorithm>
#include <cmath>

#include "base/build.hpp"
#include "base/error.hpp"
#include "base/limits.hpp"
#include "base/safetensors.hpp"
#include "math/ops.hpp"
#include "scenario/fields.hpp"
#include "tape/graph.hpp"

namespace attn {

namespace {

// A state_dict matched strictly, as load_state_dict(strict=True): each weight (name, shape) -> the
// parameter it loads into, every parameter given once, shapes equal; buffers PyTorch keeps in a
// state_dict (the causal `mask`, the positional `pe`) are recomputed by the core, so they are
// accepted and skipped (nullptr).
// weight(i) -> {name, shape} of the file's i-th weight, i < n.
template <class Weight>
std::vector<Tensor*> weight_targets(const Scenario& s, ParamList& params, const Module& module, size_t n, Weight weight) {
  auto is_buffer = [](const std::string& n) {
    for (const std::string tail : {"mask", "pe"})
      if (n == tail || ends_with(n, "." + tail))
        return true;
    return false;
  };
  std::string names;
  for (auto& [pname, t] : params)
    if (names.size() < 300) names += (names.empty() ? "" : ", ") + pname;
  std::vector<Tensor*> targets;
  for (size_t i = 0; i < n; ++i) {
    const auto [wname, shape] = weight(i);
    Tensor* target = nullptr;
    for (auto& [pname, t] : params)
      if (pname == wname) target = t;
    targets.push_back(target);
    if (!target) {
      if (is_buffer(wname) || module.skips_in_state_dict(wname)) continue;
      fail_at("weights", "weights '", s.weights_name, "': '", wname, "' is not a parameter of ", s.module,
              ": its parameters are ", names, " (was the file saved from another module or config?)");
    }
    if (target->shape() != shape) {
      if (kPretrained && !s.pretrained.empty())
        fail_at("weights", "weights '", s.weights_name, "': '", wname, "' has shape ", shape_str(shape), " but config.json (",
                s.module, " from model_type ", s.model_type, ") needs ", shape_str(target->shape()), ": config.json disagrees with the weights");
      fail_at("weights", "weights '", s.weights_name, "': '", wname, "' has shape ", shape_str(shape), " but ",
              s.module, " with this config needs ", shape_str(target->shape()), ": set the config the model was trained with");
    }
  }
  for (auto& [pname, t] : params) {
    bool found = false;
    for (size_t i = 0; i < n && !found; ++i) found = weight(i).first == pname;
    if (!found)
      fail_at("weights", "weights '", s.weights_name, "': parameter '", pname, "' ", shape_str(t->shape()), " of ", s.module,
              " is missing from the file: save the whole state_dict");
  }
  return targets;
}

void load_weights(const Scenario& s, ParamList& params, const Module& module) {
  const std::vector<Tensor*> targets = weight_targets(s, params, module, s.weights.size(), [&](size_t i) {
    return std::pair<const std::string&, const Shape&>(s.weights[i].name, s.weights[i].value.shape());
  });
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i]) *targets[i] = s.weights[i].value;
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
      fail_at(std::string("inputs.") + info.inputs[i].name, "input '", info.inputs[i].name, "' ", info.inputs[i].shape, " is required by ",
              s.module, " but not given");
  return inputs;
}

// The loss's target, drawn from gen after the inputs (as the PyTorch program draws it), or given.
Tensor build_target(const Scenario& s, Generator& gen) {
  if (!s.has_loss || s.target.shape.empty()) return Tensor();
  if (s.target.kind == ScenarioInput::Kind::Data) return Tensor::from(s.target.shape, s.target.data);
  Tensor t = Tensor::empty(s.target.shape);
  if (s.target.init == "rand") gen.rand(t.data(), static_cast<size_t>(t.numel()));
  else gen.randn(t.data(), static_cast<size_t>(t.numel()));
  return t;
}

}  // namespace

Session::Session(const Scenario& s) : s_(s), info_(&module_info(s.module)), gen_(std::make_unique<Generator>(s.seed)) {
  const Config config = make_config(*info_, s.config);
  // With weights, every parameter is replaced (load_weights is strict): construction only needs to
  // leave the generator where PyTorch's construction leaves it.
#if ATTN_PRETRAINED
  const bool streamed = s.streamed != nullptr;
#else
  const bool streamed = false;  // the page's small build has no model folders
#endif
  gen_->set_skip_values(!s.weights.empty() || streamed);
  // a model folder: construction draws nothing, as from_pretrained (random.hpp, set_no_draws)
  gen_->set_no_draws(!s.pretrained.empty());
  std::unique_ptr<Module> module = info_->make(config, *gen_);
  gen_->set_skip_values(false);
  gen_->set_no_draws(false);
  ParamList params;
  module->parameters("", params);
  // Parameters drawn here count against kMaxTotalElements; loaded ones were bounded by the weights
  // file's limits (kMaxWeightElements, kMaxModelBytes) as it was read.
  int64_t total = 0;
  if (s.weights.empty() && !streamed)
    for (auto& [name, t] : params) total += t->numel();
  if (!s.weights.empty()) load_weights(s, params, *module);
#if ATTN_PRETRAINED
  if (streamed) {
    const std::vector<PlannedTensor>& planned = s.streamed->tensors;
    stream_targets_ = weight_targets(s, params, *module, planned.size(), [&](size_t i) {
      return std::pair<const std::string&, const Shape&>(planned[i].target, planned[i].shape);
    });
    stream_written_.assign(planned.size(), 0);
    weights_ready_ = false;
  }
#endif
  set_params(s, params);
  inputs_ = build_inputs(s, *info_, *gen_, total);
  target_ = build_target(s, *gen_);
  trainer_ = std::make_unique<Trainer>(*info_, std::move(module), *gen_, s.train, s.has_loss ? s.loss : LossSpec{""});
  if (s.optimize) trainer_->set_optimizer(s.optimizer, s.clip_grad_norm);
}

#if ATTN_PRETRAINED
void Session::write_weights(size_t i, int64_t first, const uint8_t* bytes, size_t n) {
  if (!s_.streamed) fail_at("weights", "write_weights: this session's weights were not planned from a folder's headers");
  const std::vector<PlannedTensor>& planned = s_.streamed->tensors;
  if (i >= planned.size()) fail_at("weights", "write_weights: tensor ", i, " is not one of the ", planned.size(), " the folder's headers list");
  const PlannedTensor& t = planned[i];
  const size_t elem = t.entry.dtype == "F32" ? 4 : 2;
  const int64_t count = static_cast<int64_t>(n / elem);
  if (n % elem || first < 0 || first != stream_written_[i] || first + count > t.entry.count)
    fail_at("weights", "weights '", s_.streamed->name, "': '", t.entry.name, "' got ", n, " bytes at value ", first, " after ", stream_written_[i],
            " of its ", t.entry.count, " values: each tensor's bytes must come once, in order, whole values");
  const std::string where = "weights file tensor '" + t.entry.name + "'";
  Tensor* target = stream_targets_[i];
  stream_written_[i] += count;
  if (!target) return;  // a buffer the core recomputes
  if (!t.transpose) {
    decode_values(t.entry.dtype, bytes, count, target->data() + first, where, first);
    return;
  }
  // a GPT-2 Conv1D weight: the file's [in, out] row-major values go to the module's [out, in]
  stream_buffer_.resize(static_cast<size_t>(count));
  decode_values(t.entry.dtype, bytes, count, stream_buffer_.data(), where, first);
  const int64_t in = t.entry.shape[0], out = t.entry.shape[1];
  float* dst = target->data();
  const float* src = stream_buffer_.data();
  int64_t at = first, k = 0;
  const auto one_by_one = [&](int64_t n) {
    for (; n > 0; --n, ++at, ++k) dst[(at % out) * in + at / out] = src[k];
  };
  one_by_one(std::min(count, (out - at % out) % out));  // to the start of a row
  // whole rows R at a time: each of their columns is R consecutive values of a destination row
  constexpr int64_t R = 16;
  for (; count - k >= R * out; at += R * out, k += R * out)
    for (int64_t c = 0; c < out; ++c) {
      float* d = dst + c * in + at / out;
      for (int64_t r = 0; r < R; ++r) d[r] = src[k + r * out + c];
    }
  one_by_one(count - k);
}

void Session::finish_weights() {
  if (!s_.streamed) return;
  const std::vector<PlannedTensor>& planned = s_.streamed->tensors;
  for (size_t i = 0; i < planned.size(); ++i)
    if (stream_written_[i] != planned[i].entry.count)
      fail_at("weights", "weights '", s_.streamed->name, "': '", planned[i].entry.name, "' got ", stream_written_[i], " of its ", planned[i].entry.count,
              " values: the download was cut");
  std::vector<float>().swap(stream_buffer_);
  weights_ready_ = true;
}
#endif

// Nothing computes on parameters whose streamed values have not all come (uninitialised memory).
void Session::require_weights() const {
#if ATTN_PRETRAINED
  if (!weights_ready_)
    fail_at("weights", "weights '", s_.streamed->name, "': the model's weights are still coming (", s_.streamed->tensors.size(),
            " tensors planned from the headers): write them all and finish (write_weights, finish_weights) before a forward or a generation");
#endif
}

#if ATTN_PRETRAINED
void Session::stream_weights(const FolderRange& range) {
  if (!s_.streamed) fail_at("weights", "stream_weights: this session's weights were not planned from a folder's headers");
  const StreamedWeights& w = *s_.streamed;
  std::vector<size_t> order(w.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // each file front to back: the disk reads ahead
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const PlannedTensor &x = w.tensors[a], &y = w.tensors[b];
    return x.file != y.file ? x.file < y.file : x.entry.begin < y.entry.begin;
  });
  constexpr size_t kChunk = size_t{4} << 20;
  std::vector<uint8_t> chunk;
  for (size_t i : order) {
    const PlannedTensor& t = w.tensors[i];
    const size_t elem = t.entry.dtype == "F32" ? 4 : 2;
    const uint64_t bytes = t.entry.end - t.entry.begin;
    chunk.resize(static_cast<size_t>(std::min<uint64_t>(kChunk, bytes)));
    for (uint64_t done = 0; done < bytes;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), bytes - done));  // whole values: kChunk is a multiple of 4
      const uint64_t at = w.data_offsets[t.file] + t.entry.begin + done;
      if (!range(s_.pretrained, w.files[t.file], at, chunk.data(), n))
        fail_at("pretrained", "model folder '", s_.pretrained, "': ", w.files[t.file], " could not be read at byte ", at, " (", n,
                " bytes of tensor '", t.entry.name, "'): the file is shorter than its header says, or changed while it was read");
      write_weights(i, static_cast<int64_t>(done / elem), chunk.data(), n);
      done += n;
    }
  }
  finish_weights();
}
#endif

namespace {
// Values handed over with their shape (the bindings' setInput, setTarget): 1 to 8 sizes, each at
// least 1, within the inputs' element limit, one value per element, each finite (as a scenario's
// data: a NaN was taken, and the step after it said the model diverged). (Messages built as
// strings: each fail_at's list of types is code in the page's first-view WebAssembly.)
void check_values(const std::string& field, const std::string& what, const Shape& shape, const float* data, size_t count) {
  std::string rule;
  int64_t n = 1;
  if (shape.empty() || shape.size() > 8) rule = " must have 1 to 8 sizes, e.g. [1, 6]";
  for (size_t i = 0; rule.empty() && i < shape.size(); ++i) {
    if (shape[i] < 1 || shape[i] > kMaxInputElements) rule = ": each size must be an integer >= 1, got " + std::to_string(shape[i]);
    else if ((n *= shape[i]) > kMaxInputElements) rule = " has more than " + std::to_string(kMaxInputElements) + " elements: the limit per tensor";
  }
  if (!rule.empty()) fail_at(field, what + ": the shape " + shape_str(shape) + rule);
  if (static_cast<int64_t>(count) != n)
    fail_at(field, what + " has " + std::to_string(count) + " values but the shape " + shape_str(shape) + " needs " + std::to_string(n) +
                       ": give one value per element, row-major");
  for (size_t i = 0; i < count; ++i)
    if (!std::isfinite(data[i]))
      fail_at(field, what + ": the value at index " + std::to_string(i) + " (" + (std::isnan(data[i]) ? "NaN" : data[i] > 0 ? "Infinity" : "-Infinity") +
                            ") is not a finite float32 value");
}
}  // namespace

void Session::set_input(const std::string& name, const Shape& shape, const float* data, size_t count) {
  for (size_t i = 0; i < info_->inputs.size(); ++i) {
    if (info_->inputs[i].name != name) continue;
    check_values("inputs." + name, "input '" + name + "'", shape, data, count);
    Tensor& t = inputs_[i];
    if (!t.defined() || t.shape() != shape) t = Tensor::empty(shape);  // the same buffer while the shape stays
    std::copy(data, data + t.numel(), t.data());
    return;
  }
  fail_at("inputs", "'", name, "' is not an input of ", info_->id);
}

void Session::set_target(const Shape& shape, const float* data, size_t count) {
  check_values("target", "the target", shape, data, count);
  if (!target_.defined() || target_.shape() != shape) target_ = Tensor::empty(shape);
  std::copy(data, data + target_.numel(), target_.data());
}

void Session::set_interventions(const std::string& json_list) {
  Scenario next;  // what the interventions are checked against: generation with its cache, training
  next.generate = s_.generate, next.generation = s_.generation, next.optimize = s_.optimize;
  parse_interventions(json_list, next);
  s_.interventions = std::move(next.interventions);
}

namespace {
// A scenario's readings of one forward (what Session::read swaps in for one forward).
struct Readings {
  bool lens, attribution, patching, attribution_patching;
  LogitAttributionSpec of;
  PatchingSpec patch, estimate;
};
Readings readings_of(const Scenario& s) {
  return {s.logit_lens, s.logit_attribution, s.patching, s.attribution_patching, s.attribution_of, s.patch, s.attribution};
}
void set_readings(Scenario& s, Readings r) {
  s.logit_lens = r.lens, s.logit_attribution = r.attribution, s.patching = r.patching, s.attribution_patching = r.attribution_patching;
  s.attribution_of = std::move(r.of), s.patch = std::move(r.patch), s.attribution = std::move(r.estimate);
}
}  // namespace

Result Session::read(const std::string& readings) {
  require_weights();
  Scenario next;
  parse_readings(readings, *info_, next);
  // this forward's readings in place of the session's own, which come back after it
  struct Restore {
    Scenario& s;
    Readings own;
    ~Restore() { set_readings(s, std::move(own)); }
  } restore{s_, readings_of(s_)};
  set_readings(s_, readings_of(next));
  return forward(false);
}

// A forward with the scenario's interventions (every step named, so every one is reachable).
void Session::intervene_in(Context& ctx) const {
  if (kInterp && !s_.interventions.empty()) ctx.interventions = &s_.interventions;
}

// A traced forward of batch row `row` alone (B = 1), for a patching sweep to replay on half the
// numbers (rows of GPT and CausalTransformer never mix): the scenario's interventions on that row (their batch 0 there) or on every row; null
// when one of them mixes rows (from_batch, mean), or the row is out of range (the sweep says so).
std::unique_ptr<Context> Session::row_forward(int64_t row, std::vector<Intervention>& kept) {
  if (s_.train) return nullptr;  // dropout draws for the whole batch at once
  for (const Intervention& iv : s_.interventions) {
    if (iv.set == Intervention::Set::from_batch || iv.set == Intervention::Set::mean) return nullptr;
    if (iv.batch != Attrs::kAll && iv.batch != row) continue;
    kept.push_back(iv);
    if (iv.batch != Attrs::kAll) kept.back().batch = 0;
  }
  std::vector<Tensor> sliced;
  for (const Tensor& t : inputs_) {
    if (t.defined() && (t.dim() < 1 || row >= t.size(0))) return nullptr;
    sliced.push_back(t.defined() ? t.slice(0, row, row + 1).contiguous() : t);
  }
  auto ctx = std::make_unique<Context>(*gen_, false, true);
  if (!kept.empty()) ctx->interventions = &kept;
  trainer_->forward(*ctx, sliced);
  return ctx;
}

Result Session::forward(bool trace) {
  require_weights();
  Context ctx(*gen_, s_.train, trace || s_.records());
  intervene_in(ctx);
  Result r;
  r.module = s_.module;
  add_outputs(r, collect_outputs(trainer_->forward(ctx, inputs_), ctx));
  if (kInterp) ctx.check_interventions(s_.module);
  if (trace) r.steps = ctx.steps();
  r.attention = trainer_->module().attention();
  if (kInterp) interpret(ctx, r);
  return r;
}

// The interpretability readings of a traced forward (core/run/interp.hpp) into its result.
void Session::interpret(const Context& ctx, Result& r) {
  if (s_.patching) {
    std::vector<Intervention> kept;
    const std::unique_ptr<Context> row = row_forward(s_.patch.corrupted, kept);
    r.patching = activation_patching(ctx, s_.patch, "patching", row.get());
    r.has_patching = true;
  }
  if (s_.attribution_patching) {
    r.attribution_patching = attribution_patching(ctx, s_.attribution, "attribution_patching");
    r.has_attribution = true;
  }
  if (s_.logit_lens) r.logit_lens = logit_lens(ctx, s_.module, params());
  if (s_.logit_attribution) {
    r.logit_attribution = logit_attribution(ctx, params(), s_.attribution_of);
    r.has_logit_attribution = true;
  }
}

Result Session::gradients(bool trace, bool backward) {
  require_weights();
  Context ctx(*gen_, s_.train, trace, backward);
  intervene_in(ctx);
  const TrainStep t = backward ? trainer_->forward_backward(ctx, inputs_, target_) : trainer_->forward_loss(ctx, inputs_, target_);
  if (kInterp) ctx.check_interventions(s_.module);
  Result r;
  r.module = s_.module;
  r.has_loss = true;
  r.loss = t.loss;
  add_outputs(r, collect_outputs(t.outputs, ctx));
  r.attention = trainer_->module().attention();
  if (!backward) return r;
  r.steps = ctx.steps(&t.node_grads);
  for (size_t i = 0; i < params().size(); ++i) {
    const Tensor& g = grads()[i];
    r.grads.push_back({params()[i].first, g.defined() ? g : Tensor::zeros(params()[i].second->shape())});
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!inputs_[i].defined() || info_->inputs[i].kind != InputKind::Float) continue;
    const int32_t node = ctx.input_node(info_->inputs[i].name);
    const Tensor g = node >= 0 ? t.node_grads[static_cast<size_t>(node)] : Tensor();
    r.grads.push_back({std::string("input:") + info_->inputs[i].name, g.defined() ? g.contiguous() : Tensor::zeros(inputs_[i].shape())});
  }
  return r;
}

float Session::step() {
  require_weights();
  return trainer_->step(inputs_, target_);
}

std::unique_ptr<Generation> Session::generation() {
  require_weights();
  for (size_t i = 0; i < info_->inputs.size(); ++i)
    if (info_->inputs[i].kind == InputKind::Ids)
      return std::make_unique<Generation>(trainer_->module(), params(), *gen_, inputs_[i], s_.generation, s_.trace,
                                          !kInterp || s_.interventions.empty() ? nullptr : &s_.interventions);
  fail_at("generate", s_.module, " has no token ids input to generate from");
}

}  // namespace attn
