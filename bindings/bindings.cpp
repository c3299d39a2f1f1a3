// Embind bindings: thin, no math. A run is a C++ object (Run) that owns the result; JS reads
// its metadata as JSON and each tensor as a Float32Array view into the WASM heap (valid until
// the Run is deleted or memory grows: attention.mjs copies them out, then deletes the Run).
// A Trainer keeps a Session (core/session.hpp) alive between training steps; its parameters and
// gradients are views too (valid until its next step or memory growth).
// A Generation keeps a Session and its KV cache between tokens (core/generate.hpp): next() gives one
// token's entry, its traced steps views until the next call.
// Errors never cross as C++ exceptions: a failed call leaves the core's message and field instead.
#include <emscripten/bind.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/build.hpp"
#include "base/error.hpp"
#include "kernels/kernels.hpp"
#include "base/safetensors.hpp"
#include "base/threads.hpp"
#include "scenario/pretrained.hpp"
#include "scenario/scenario.hpp"
#include "scenario/session.hpp"
#include "tape/graph.hpp"

using namespace emscripten;

namespace {

// [step meta + "hasGrad": false, ...] of a generated token's steps (data: views, by index)
std::string steps_meta(const std::vector<attn::Step>& steps) {
  std::string out = "[";
  for (size_t i = 0; i < steps.size(); ++i) {
    std::string m = attn::step_meta_json(steps[i]);
    m.pop_back();
    out += (i ? "," : "") + m + ",\"hasGrad\":false}";
  }
  return out + "]";
}

// A generated token's entry (SCENARIO.md, "Generation"), its steps without data.
std::string token_meta(const attn::GeneratedToken& g) {
  std::string m = attn::generated_meta_json(g);
  if (g.steps.empty()) return m;
  m.pop_back();
  return m + ",\"steps\":" + steps_meta(g.steps) + "}";
}

std::string ids_json(const std::vector<std::vector<int64_t>>& ids) { return nlohmann::json(ids).dump(); }

// An error for JS to throw ({"error", "field"?}) as JSON text. Its message may quote a damaged file's bytes
// (a JSON parser's "last read: '...'" of a safetensors header or config.json), which need not be
// UTF-8: dump() writes those as U+FFFD, where a strict one threw json's type_error out of the catch
// that called it (JS then caught a bare WebAssembly.Exception, with no message).
std::string error_json(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

val view(const attn::Tensor& t) {
  return val(typed_memory_view(static_cast<size_t>(t.numel()), t.base()));  // callers pass packed tensors
}

// The core's error of the last failed call: message and scenario field.
class Failure {
 public:
  bool ok() const { return error_.empty(); }
  std::string error() const { return error_; }
  std::string errorField() const { return field_; }  // the scenario field the error is about ("" none)

 protected:
  // Runs f; a core error (or running out of memory) is kept instead of thrown. Returns success.
  template <class F>
  bool guard(F&& f) {
    error_.clear();
    field_.clear();
    try {
      f();
      return true;
    } catch (const std::bad_alloc&) {
      error_ = "out of memory: the scenario is too large for the WebAssembly heap";
    } catch (const attn::Error& e) {
      error_ = e.what();
      field_ = e.field();
    } catch (const std::exception& e) {
      error_ = e.what();
    }
    if (error_.empty()) error_ = "unknown error";
    return false;
  }

 private:
  std::string error_, field_;
};

// A Uint8Array copied into the heap with one TypedArray.set (a memcpy), not element by element.
attn::Blob heap_copy(const val& bytes) {
  attn::Blob out(bytes["length"].as<size_t>());
  if (!out.empty()) val(typed_memory_view(out.size(), out.data())).call<void>("set", bytes);
  return out;
}

// A model folder handed over from JS: a function (name) -> Uint8Array | null, or {name: Uint8Array}.
attn::FolderReader folder_reader(const val& files) {
  const std::string kind = files.typeOf().as<std::string>();
  if (kind != "function" && kind != "object")
    throw attn::Error("options.files (" + kind + ") must be {name: Uint8Array} or a function (name) => Uint8Array | null", "pretrained");
  return [files, kind](const std::string&, const std::string& name, attn::Blob& out) {
    const val f = kind == "function" ? files(name) : files.call<bool>("hasOwnProperty", name) ? files[name] : val::null();
    if (f.isUndefined() || f.isNull()) return false;
    if (!f.instanceof(val::global("Uint8Array")))
      throw attn::Error("the model folder's file '" + name + "' must be a Uint8Array (bytes), got " + f.typeOf().as<std::string>(), "pretrained");
    out = heap_copy(f);
    return true;
  };
}

// A weight file's size in bytes, checked: sizes[name], or sizes(name) when sizes is a function.
uint64_t file_size(const val& sizes, const std::string& name) {
  const val n = sizes.typeOf().as<std::string>() == "function" ? sizes(name) : sizes[name];
  if (!n.isNumber() || !(n.as<double>() >= 0) || n.as<double>() > 9e15)
    throw attn::Error("the size of the model folder's file '" + name + "' is unknown: give sizes[name] in bytes", "pretrained");
  return static_cast<uint64_t>(n.as<double>());
}

// range: (name, offset, length) -> Uint8Array of those bytes of a weight file (fewer: it ended),
// copied into the core's buffer with one TypedArray.set.
attn::FolderRange folder_range(const val& range) {
  if (range.typeOf().as<std::string>() != "function")
    throw attn::Error("options.range must be a function (name, offset, length) => Uint8Array", "pretrained");
  return [range](const std::string&, const std::string& name, uint64_t offset, uint8_t* dst, size_t n) {
    const val bytes = range(name, static_cast<double>(offset), n);
    if (!bytes.instanceof(val::global("Uint8Array")))
      throw attn::Error("options.range('" + name + "', ...) must give a Uint8Array, got " + bytes.typeOf().as<std::string>(), "pretrained");
    if (bytes["length"].as<size_t>() != n) return false;
    val(typed_memory_view(n, dst)).call<void>("set", bytes);
    return true;
  };
}

// buffers: a JS array of Float32Arrays (inputs' "buffer": i); blobs: Uint8Arrays (safetensors
// files: "weights": {"buffer": i}); each copied into the heap once. blobs.files: the model folder
// of "pretrained", a function (name) -> Uint8Array | null, or an object {name: Uint8Array} (a
// property of the array, not a fourth argument: the page's small build, which has no model
// folders, keeps the constructors it had).
attn::Scenario parse(const std::string& scenario_json, val buffers, val blobs) {
  std::vector<std::vector<float>> data;
  const size_t n = buffers["length"].as<size_t>();
  for (size_t i = 0; i < n; ++i) data.push_back(convertJSArrayToNumberVector<float>(buffers[i]));
  std::vector<attn::Blob> bytes;
  const size_t m = blobs["length"].as<size_t>();
  for (size_t i = 0; i < m; ++i) bytes.push_back(heap_copy(blobs[i]));
  if constexpr (attn::kPretrained) {  // the small build refuses "pretrained" by itself
    const val files = blobs["files"];
    if (!files.isUndefined() && !files.isNull()) {
      const attn::FolderReader read = folder_reader(files);
      const val sizes = blobs["sizes"];  // the weight files' sizes: files gave their headers only
      if (sizes.isUndefined() || sizes.isNull()) return attn::parse_scenario(scenario_json, &data, &bytes, &read);
      const attn::FolderSizes size = [&sizes](const std::string&, const std::string& name) { return file_size(sizes, name); };
      return attn::parse_scenario(scenario_json, &data, &bytes, &read, &size);
    }
  }
  return attn::parse_scenario(scenario_json, &data, &bytes);
}

class Run : public Failure {
 public:
  // blobs.range (with files and sizes: a folder planned from its headers): the weights' bytes read
  // a range at a time straight into the module (the Node CLI's folder on disk).
  Run(const std::string& scenario_json, val buffers, val blobs) {
    guard([&] {
      const attn::Scenario s = parse(scenario_json, buffers, blobs);
      const val range = blobs["range"];
      if (attn::kPretrained && !range.isUndefined() && !range.isNull()) {
        const attn::FolderRange read = folder_range(range);
        keep(attn::run(s, &read));
      } else {
        keep(attn::run(s));
      }
    });
  }
  explicit Run(attn::Result r) { keep(std::move(r)); }
  Run() = default;

  // {"module", "outputs": [{name, shape, step?}], "steps": [typed step, no data, hasGrad], "attention",
  //  "inputs", "params", "loss"?, "losses", "grads": [{name, shape}]}
  std::string meta() const {
    using json = nlohmann::json;
    json j = {{"module", r_.module}, {"outputs", json::array()}, {"steps", json::array()},
              {"attention", json::parse(attn::attention_json(r_.attention))}, {"inputs", json::array()},
              {"params", json::array()}, {"grads", json::array()}, {"losses", r_.losses}};
    for (const char* key : {"outputs", "inputs", "params", "grads"})
      for (const auto& o : list(key)) j[key].push_back({{"name", o.name}, {"shape", o.value.shape()}});
    for (size_t i = 0; i < r_.output_steps.size(); ++i)
      if (!r_.output_steps[i].empty()) j["outputs"][i]["step"] = r_.output_steps[i];
    if (r_.has_loss) j["loss"] = r_.loss;
    // The steps spliced in as the core writes them (a page asks for every step on every keystroke).
    std::string steps = "[";
    for (size_t i = 0; i < r_.steps.size(); ++i) {
      std::string m = attn::step_meta_json(r_.steps[i]);
      m.pop_back();
      steps += (i ? "," : "") + m + (r_.steps[i].grad.defined() ? ",\"hasGrad\":true}" : ",\"hasGrad\":false}");
    }
    std::string out = j.dump();
    const std::string empty = "\"steps\":[]";
    out.replace(out.find(empty), empty.size(), "\"steps\":" + steps + "]");
    if (r_.ids.empty()) return out;
    out.pop_back();  // generation: "ids" and "generated" (step data: generatedStep)
    out += ",\"ids\":" + ids_json(r_.ids) + ",\"generated\":[";
    for (size_t i = 0; i < r_.generated.size(); ++i) out += (i ? "," : "") + token_meta(r_.generated[i]);
    return out + "]}";
  }
  std::string interp() const { return attn::interp_json(r_); }
  val output(int i) const { return view(r_.outputs.at(static_cast<size_t>(i)).value); }
  val input(int i) const { return view(r_.inputs.at(static_cast<size_t>(i)).value); }
  val param(int i) const { return view(r_.params.at(static_cast<size_t>(i)).value); }
  val grad(int i) const { return view(r_.grads.at(static_cast<size_t>(i)).value); }
  val step(int i) const { return view(r_.steps.at(static_cast<size_t>(i)).value); }
  val stepGrad(int i) const {
    const attn::Step& s = r_.steps.at(static_cast<size_t>(i));
    return s.grad.defined() ? view(s.grad) : val::undefined();
  }
  val generatedStep(int token, int i) const {
    return view(r_.generated.at(static_cast<size_t>(token)).steps.at(static_cast<size_t>(i)).value);
  }

 private:
  void keep(attn::Result r) {
    r_ = std::move(r);
    for (auto* l : {&r_.outputs, &r_.inputs, &r_.params, &r_.grads})
      for (auto& t : *l) t.value = t.value.contiguous();  // views handed out need packed data
  }
  const std::vector<attn::NamedTensor>& list(const std::string& key) const {
    return key == "outputs" ? r_.outputs : key == "inputs" ? r_.inputs : key == "params" ? r_.params : r_.grads;
  }
  attn::Result r_;
};

// Incremental training for the page: built once from a scenario with "loss" (+ "optimize"); then
// inputs and target replaced and step() called many times, no JSON per step.
class Trainer : public Failure {
 public:
  Trainer(const std::string& scenario_json, val buffers, val blobs) {
    guard([&] { session_ = std::make_unique<attn::Session>(parse(scenario_json, buffers, blobs)); });
  }
  bool setInput(const std::string& name, val shape, val data) {
    return guard([&] {
      const std::vector<float> v = floats(data);
      session_->set_input(name, shape_of(shape, "inputs." + name, "input '" + name + "'"), v.data(), v.size());
    });
  }
  bool setTarget(val shape, val data) {
    return guard([&] {
      const std::vector<float> v = floats(data);
      session_->set_target(shape_of(shape, "target", "the target"), v.data(), v.size());
    });
  }
  double step() {
    double loss = NAN;
    guard([&] { loss = session_->step(); });
    return loss;
  }
  // A Run of the current inputs (outputs and steps; with grads: loss and every gradient); JS deletes it.
  Run* forward(bool trace, bool grads) {
    Run* r = new Run();
    if (!guard([&] { *r = Run(grads ? session_->gradients(trace) : session_->forward(trace)); })) {
      delete r;
      return nullptr;
    }
    return r;
  }
  // [{name, shape}] of the parameters, state_dict order
  std::string paramsMeta() const {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [name, t] : session_->params()) j.push_back({{"name", name}, {"shape", t->shape()}});
    return j.dump();
  }
  val param(int i) const { return view(*session_->params().at(static_cast<size_t>(i)).second); }
  val grad(int i) const {
    const auto& g = session_->grads();
    return static_cast<size_t>(i) < g.size() && g[static_cast<size_t>(i)].defined() ? view(g[static_cast<size_t>(i)]) : val::undefined();
  }
  double stepsDone() const { return static_cast<double>(session_->steps_done()); }
#if ATTN_PRETRAINED
  // One forward of the current inputs read as `readings` asks (Session::read), compact for a model
  // of any vocabulary: {"logit_lens": [{"step", "top": [[id, prob], ...]}] (each readout's k likeliest
  // tokens at batch row 0, `position`, negative from the end), "logit_attribution": {"total",
  // "components": [{"name", "value"}]}}; "" after an error.
  std::string read(const std::string& readings, int position, int k) {
    std::string out;
    guard([&] {
      const attn::Result r = session_->read(readings);
      nlohmann::json j = nlohmann::json::object();
      if (!r.logit_lens.empty()) {
        j["logit_lens"] = nlohmann::json::array();
        for (const auto& [step, t] : r.logit_lens) {
          const int64_t T = t.size(1), V = t.size(2), p = position < 0 ? T + position : position;
          if (p < 0 || p >= T) attn::fail_at("position", "position ", position, " is outside the ", T, " tokens");
          std::vector<float> probs(t.data() + p * V, t.data() + (p + 1) * V);
          attn::kernels().softmax(probs.data(), static_cast<size_t>(V));
          nlohmann::json top = nlohmann::json::array();
          for (const attn::TopToken& e : attn::top_tokens(probs.data(), V, static_cast<size_t>(std::max(k, 1)))) top.push_back({e.id, e.p});
          j["logit_lens"].push_back({{"step", step}, {"top", top}});
        }
      }
      if (r.has_logit_attribution) {
        nlohmann::json c = nlohmann::json::array();
        for (const attn::LogitComponent& e : r.logit_attribution.components) c.push_back({{"name", e.name}, {"value", e.value}});
        j["logit_attribution"] = {{"total", r.logit_attribution.total}, {"components", c}};
      }
      // a patching sweep's cells as [step, head | null, position | null, value]
      const auto cells = [](const attn::PatchingResult& p) {
        nlohmann::json c = nlohmann::json::array();
        const auto dim = [](int64_t v) { return v == attn::Attrs::kAll ? nlohmann::json() : nlohmann::json(v); };
        for (const attn::PatchCell& e : p.cells) c.push_back({e.step, dim(e.head), dim(e.position), e.value});
        return c;
      };
      if (r.has_patching)
        j["patching"] = {{"clean_metric", r.patching.clean_metric}, {"corrupted_metric", r.patching.corrupted_metric}, {"cells", cells(r.patching)}};
      if (r.has_attribution) j["attribution_patching"] = {{"cells", cells(r.attribution_patching)}};
      out = j.dump();
    });
    return out;
  }
  // A folder planned from its headers (run's options.sizes): its tensors as
  // [{file, name, dtype, begin, end, count}] (begin/end: bytes in the file), the bytes of tensor i from
  // value `first` on (writeWeights), then finishWeights().
  std::string streamed() const {
    nlohmann::json j = nlohmann::json::array();
    const attn::StreamedWeights* streamed = session_->streamed();
    if (!streamed) return j.dump();
    const attn::StreamedWeights& w = *streamed;
    for (const attn::PlannedTensor& t : w.tensors)
      j.push_back({{"file", w.files[t.file]}, {"name", t.entry.name}, {"dtype", t.entry.dtype}, {"begin", w.data_offsets[t.file] + t.entry.begin},
                   {"end", w.data_offsets[t.file] + t.entry.end}, {"count", t.entry.count}});
    return j.dump();
  }
  bool writeWeights(int i, double first, val bytes) {
    return guard([&] {
      if (!bytes.instanceof(val::global("Uint8Array")))  // a list of numbers would be copied as bytes
        attn::fail_at("weights", "writeWeights: tensor ", i, "'s bytes must be a Uint8Array, got ", bytes.typeOf().as<std::string>());
      const attn::Blob b = heap_copy(bytes);
      session_->write_weights(static_cast<size_t>(i), static_cast<int64_t>(first), b.data(), b.size());
    });
  }
  bool finishWeights() { return guard([&] { session_->finish_weights(); }); }
  bool setInterventions(const std::string& list) { return guard([&] { session_->set_interventions(list); }); }
  // Token by token from the current ids input on this trainer's module (its scenario's "generate"
  // spec, at most maxNew tokens; the KV cache as the spec says): a Generation that borrows the
  // module, to be deleted before the trainer. nullptr after an error (error() says it).
  class Generation* generator(int max_new);
#endif

 private:
  // whole sizes from 1 to the inputs' limit (Session checks the rest): 1.5 or NaN is not cut to one
  static attn::Shape shape_of(val shape, const std::string& field, const std::string& what) {
    const std::vector<double> d = convertJSArrayToNumberVector<double>(shape);
    for (double x : d)
      if (!(x >= 1 && x <= static_cast<double>(attn::kMaxInputElements) && x == std::floor(x)))
        attn::fail_at(field, what + ": the shape's sizes must be whole numbers >= 1, got " + (std::isnan(x) ? std::string("NaN") : attn::detail::message(x)));
    return attn::Shape(d.begin(), d.end());
  }
  static std::vector<float> floats(val data) { return convertJSArrayToNumberVector<float>(data); }
  std::unique_ptr<attn::Session> session_;
};

// Token-by-token generation for the page (a worker streams the tokens): built once from a scenario
// with "generate"; next() runs one forward (prefill, decode on the KV cache, or the whole window)
// and samples; at most generate.max_new_tokens times.
class Generation : public Failure {
 public:
  Generation(const std::string& scenario_json, val buffers, val blobs) {
    guard([&] {
      const attn::Scenario s = parse(scenario_json, buffers, blobs);
      if (!s.generate) attn::fail_at("generate", "core.generator needs a scenario with \"generate\": {\"max_new_tokens\": N, ...}");
#if ATTN_PRETRAINED
      if (s.streamed) attn::fail_at("pretrained", "core.generator needs the folder's whole files, not sizes (streamed weights go into a trainer)");
#endif
      max_ = s.generation.max_new_tokens;
      session_ = std::make_unique<attn::Session>(s);
      gen_ = session_->generation();
    });
  }
  // The next token's entry as JSON ("" after an error); its steps' data: step(i), until the next call.
  std::string next() {
    std::string out;
    guard([&] {
      if (!gen_) attn::fail("the generator was not built: ", error());
      if (gen_->produced() >= max_)
        attn::fail_at("generate.max_new_tokens", "generate.max_new_tokens (", max_, ") tokens are done: build a new generator for more");
      last_ = gen_->next();
      out = token_meta(last_);
    });
    return out;
  }
  val step(int i) const { return view(last_.steps.at(static_cast<size_t>(i)).value); }
  std::string ids() const { return gen_ ? ids_json(gen_->ids()) : "[]"; }
  // On a session someone else owns (Trainer::generator): its module, its current ids.
  Generation(attn::Session& session, int64_t max_new) : gen_(session.generation()), max_(max_new) {}
  double produced() const { return gen_ ? static_cast<double>(gen_->produced()) : 0; }
#if ATTN_PRETRAINED
  // The last token's logits (B x vocab), until the next call.
  val logits() const { return view(last_.logits); }
  // A copy at this token (its ids, and its KV cache's handles: the buffers are shared, and a next()
  // on either writes the same row): every next() on a fresh fork is the same step (the bench's
  // decode at one position). It borrows this one's session: delete it first.
  Generation* fork() {
    Generation* g = nullptr;
    guard([&] {
      if (!gen_) attn::fail("the generator was not built: ", error());
      g = new Generation(std::make_unique<attn::Generation>(*gen_), max_);
    });
    return g;
  }
#endif

 private:
  Generation(std::unique_ptr<attn::Generation> gen, int64_t max_new) : gen_(std::move(gen)), max_(max_new) {}
  std::unique_ptr<attn::Session> session_;
  std::unique_ptr<attn::Generation> gen_;
  attn::GeneratedToken last_;
  int64_t max_ = 0;
};

#if ATTN_PRETRAINED
Generation* Trainer::generator(int max_new) {
  Generation* g = nullptr;
  guard([&] {
    if (max_new < 1) attn::fail_at("generate.max_new_tokens", "generator(", max_new, "): at least 1 new token");
    g = new Generation(*session_, max_new);
  });
  return g;
}
#endif

std::string kernels_name() { return attn::kernels().name; }
std::string kernels_detail() { return attn::kernels_detail(); }
int thread_count() { return attn::threads(); }
// Once, by bindings/attention.mjs before the first computation, to the pool of Web Workers the
// threaded build was started with (1 in the other builds; the JS checks the count).
void set_thread_count(int n) { attn::set_threads(n); }
double split_loops() { return static_cast<double>(attn::split_loops()); }  // tests: loops split across the pool

// {"tensors": [{name, dtype, shape}]} or {"error": "..."} for a safetensors file (a Uint8Array).
std::string safetensors_listing(val bytes) {
  try {
    const std::vector<uint8_t> b = convertJSArrayToNumberVector<uint8_t>(bytes);
    return "{\"tensors\":" + attn::safetensors_listing_json(b.data(), b.size()) + "}";
  } catch (const std::exception& e) {
    return error_json({{"error", e.what()}});
  }
}
// A model folder checked before its weights are fetched (attn::plan_pretrained): files gives
// config.json, the shard index and each weight file's first bytes (at least its header); sizes
// {name: bytes} each weight file's full size; max_bytes the float32 weights the caller can hold;
// headers false: config.json and the index only (which weight files to fetch).
// The plan as JSON, or {"error", "field"}.
#if ATTN_PRETRAINED
std::string pretrained_plan(std::string label, val files, val sizes, double max_bytes, bool headers) {
  try {
    const attn::FolderReader read = folder_reader(files);
    attn::ModelFolder folder{label, [&](const std::string& name, attn::Blob& out) { return read(label, name, out); },
                             static_cast<uint64_t>(std::clamp(max_bytes, 0.0, static_cast<double>(attn::kMaxModelBytes))),
                             [&](const std::string& name) { return file_size(sizes, name); }};
    return attn::pretrained_plan_json(attn::plan_pretrained(folder, headers));
  } catch (const attn::Error& e) {
    return error_json({{"error", e.what()}, {"field", e.field()}});
  } catch (const std::exception& e) {
    return error_json({{"error", e.what()}, {"field", "pretrained"}});
  }
}
#endif

// A copy (a Float32Array of its own) of a packed tensor's values.
val copied(const attn::Tensor& t) { return view(t).call<val>("slice"); }

// The attention rule of a causal window with sinks (tape/graph.hpp window_mask) for T queries at
// positions 0..T-1 and S keys at 0..S-1: (T, S), 1 = masked. The page draws masked cells from it.
val attention_mask(int T, int S, bool causal, int window, int sink_tokens) {
  std::vector<int64_t> q(static_cast<size_t>(std::max(T, 0))), k(static_cast<size_t>(std::max(S, 0)));
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int64_t>(i);
  for (size_t j = 0; j < k.size(); ++j) k[j] = static_cast<int64_t>(j);
  return copied(attn::window_mask(q, k, causal, window, sink_tokens));
}

// The probabilities the next token is drawn from, given the last logits (run/generate.hpp
// next_token_distribution: temperature, top_k, top_p as a scenario's "generate" sets them; 0 = off).
val next_token_distribution(val logits, double temperature, int top_k, double top_p) {
  std::vector<float> v = convertJSArrayToNumberVector<float>(logits);
  attn::GenerateSpec spec;
  spec.temperature = temperature, spec.top_k = top_k, spec.top_p = top_p;
  attn::next_token_distribution(v.data(), static_cast<int64_t>(v.size()), spec);
  return copied(attn::Tensor::from({static_cast<int64_t>(v.size())}, v));
}

// Bytes malloc has handed out and not had back: leak checks compare it across many runs.
double heap_used() { return static_cast<double>(mallinfo().uordblks); }
#if ATTN_PRETRAINED
// The most the heap's allocator has held from the system at once (dlmalloc's max footprint).
double heap_peak() { return static_cast<double>(mallinfo().usmblks); }
// The bytes the core's tensors may hold at once (core/base/tensor.hpp; 768 MiB unless set): a worker
// that keeps one checkpoint while it builds the next needs room for both.
// More than the address space holds (4 GiB here): no budget short of the heap's own limit.
void set_memory_budget(double bytes) {
  attn::set_memory_budget(bytes >= static_cast<double>(SIZE_MAX) ? SIZE_MAX : static_cast<size_t>(bytes));
}
// Grows the heap once by `bytes` (a block allocated and freed: malloc takes the model's tensors
// from it later). Memory grown a tensor at a time overshoots by up to a fifth of its size at each
// step (Emscripten's geometric growth): a model of 500 MB then holds 690. False when the heap cannot.
bool reserve_heap(double bytes) {
  void* p = bytes > 0 && bytes < 4e9 ? std::malloc(static_cast<size_t>(bytes)) : nullptr;
  std::free(p);
  return p != nullptr;
}
#endif

}  // namespace

EMSCRIPTEN_BINDINGS(attention) {
  class_<Failure>("Failure")
      .function("ok", &Failure::ok)
      .function("error", &Failure::error)
      .function("errorField", &Failure::errorField);
  class_<Run, base<Failure>>("Run")
      .constructor<std::string, val, val>()
      .function("meta", &Run::meta)
      .function("interp", &Run::interp)
      .function("output", &Run::output)
      .function("input", &Run::input)
      .function("param", &Run::param)
      .function("grad", &Run::grad)
      .function("step", &Run::step)
      .function("stepGrad", &Run::stepGrad)
      .function("generatedStep", &Run::generatedStep);
  class_<Generation, base<Failure>>("Generation")
      .constructor<std::string, val, val>()
      .function("next", &Generation::next)
      .function("step", &Generation::step)
      .function("ids", &Generation::ids)
      .function("produced", &Generation::produced)
#if ATTN_PRETRAINED
      .function("logits", &Generation::logits)
      .function("fork", &Generation::fork, allow_raw_pointers())
#endif
      ;
  class_<Trainer, base<Failure>>("Trainer")
      .constructor<std::string, val, val>()
      .function("setInput", &Trainer::setInput)
      .function("setTarget", &Trainer::setTarget)
      .function("step", &Trainer::step)
      .function("forward", &Trainer::forward, allow_raw_pointers())
      .function("paramsMeta", &Trainer::paramsMeta)
      .function("param", &Trainer::param)
      .function("grad", &Trainer::grad)
      .function("stepsDone", &Trainer::stepsDone)
#if ATTN_PRETRAINED
      .function("streamed", &Trainer::streamed)
      .function("writeWeights", &Trainer::writeWeights)
      .function("finishWeights", &Trainer::finishWeights)
      .function("generator", &Trainer::generator, allow_raw_pointers())
      .function("setInterventions", &Trainer::setInterventions)
      .function("read", &Trainer::read)
#endif
      ;
  function("modulesJson", &attn::modules_json);
  function("version", &attn::version);
  function("kernelsName", &kernels_name);
  function("kernelsDetail", &kernels_detail);
  function("threads", &thread_count);
  function("setThreads", &set_thread_count);
  function("splitLoops", &split_loops);
  function("setUseSimd", &attn::set_use_simd);
  function("heapUsed", &heap_used);
  function("safetensorsListing", &safetensors_listing);
#if ATTN_PRETRAINED  // the page's small build has no model folders
  function("pretrainedPlan", &pretrained_plan);
  function("reserveHeap", &reserve_heap);
  function("heapPeak", &heap_peak);
  function("setMemoryBudget", &set_memory_budget);
#endif
  function("attentionMask", &attention_mask);
  function("nextTokenDistribution", &next_token_distribution);
}
