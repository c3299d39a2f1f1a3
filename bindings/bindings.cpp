// Embind bindings: thin, no math. A run is a C++ object (Run) that owns the result; JS reads
// its metadata as JSON and each tensor as a Float32Array view into the WASM heap (valid until
// the Run is deleted or memory grows: attention.mjs copies them out, then deletes the Run).
// Errors never cross as C++ exceptions: a failed Run carries the core's message instead.
#include <emscripten/bind.h>
#include <malloc.h>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "safetensors.hpp"
#include "scenario.hpp"
#include "kernels.hpp"

using namespace emscripten;

namespace {

class Run {
 public:
  // buffers: a JS array of Float32Arrays, each copied into the heap once (inputs' "buffer": i);
  // blobs: a JS array of Uint8Arrays (safetensors files: "weights": {"buffer": i}), copied once.
  Run(const std::string& scenario_json, val buffers, val blobs) {
    try {
      std::vector<std::vector<float>> data;
      const size_t n = buffers["length"].as<size_t>();
      for (size_t i = 0; i < n; ++i) data.push_back(convertJSArrayToNumberVector<float>(buffers[i]));
      std::vector<attn::Blob> bytes;
      const size_t m = blobs["length"].as<size_t>();
      for (size_t i = 0; i < m; ++i) bytes.push_back(convertJSArrayToNumberVector<uint8_t>(blobs[i]));
      result_ = attn::run(attn::parse_scenario(scenario_json, &data, &bytes));
      for (auto* list : {&result_.outputs, &result_.inputs, &result_.params})
        for (auto& t : *list) t.value = t.value.contiguous();  // views handed out need packed data
      ok_ = true;
    } catch (const std::bad_alloc&) {
      error_ = "out of memory: the scenario is too large for the WebAssembly heap";
    } catch (const attn::Error& e) {
      error_ = e.what();
      field_ = e.field();
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }
  bool ok() const { return ok_; }
  std::string error() const { return error_; }
  std::string errorField() const { return field_; }  // the scenario field the error is about ("" none)
  // {"module", "outputs": [{name, shape, step?}], "steps": [typed step, no data], "attention", "inputs", "params"}
  std::string meta() const {
    using json = nlohmann::json;
    json j = {{"module", result_.module}, {"outputs", json::array()}, {"steps", json::array()},
              {"attention", json::parse(attn::attention_json(result_.attention))}, {"inputs", json::array()},
              {"params", json::array()}};
    for (const char* key : {"outputs", "inputs", "params"})
      for (const auto& o : list(key)) j[key].push_back({{"name", o.name}, {"shape", o.value.shape()}});
    for (size_t i = 0; i < result_.output_steps.size(); ++i)
      if (!result_.output_steps[i].empty()) j["outputs"][i]["step"] = result_.output_steps[i];
    for (const auto& s : result_.steps) j["steps"].push_back(json::parse(attn::step_meta_json(s)));
    return j.dump();
  }
  val output(int i) const { return view(result_.outputs.at(static_cast<size_t>(i)).value); }
  val input(int i) const { return view(result_.inputs.at(static_cast<size_t>(i)).value); }
  val param(int i) const { return view(result_.params.at(static_cast<size_t>(i)).value); }
  val step(int i) const { return view(result_.steps.at(static_cast<size_t>(i)).value); }

 private:
  const std::vector<attn::NamedTensor>& list(const std::string& key) const {
    return key == "outputs" ? result_.outputs : key == "inputs" ? result_.inputs : result_.params;
  }
  static val view(const attn::Tensor& t) {
    return val(typed_memory_view(static_cast<size_t>(t.numel()), t.base()));  // packed: see the constructor
  }
  bool ok_ = false;
  std::string error_, field_;
  attn::Result result_;
};

std::string kernels_name() { return attn::kernels().name; }

// {"tensors": [{name, dtype, shape}]} or {"error": "..."} for a safetensors file (a Uint8Array).
std::string safetensors_listing(val bytes) {
  try {
    const std::vector<uint8_t> b = convertJSArrayToNumberVector<uint8_t>(bytes);
    return "{\"tensors\":" + attn::safetensors_listing_json(b.data(), b.size()) + "}";
  } catch (const std::exception& e) {
    return nlohmann::json({{"error", e.what()}}).dump();
  }
}
// Bytes malloc has handed out and not had back: leak checks compare it across many runs.
double heap_used() { return static_cast<double>(mallinfo().uordblks); }

}  // namespace

EMSCRIPTEN_BINDINGS(attention) {
  class_<Run>("Run")
      .constructor<std::string, val, val>()
      .function("ok", &Run::ok)
      .function("error", &Run::error)
      .function("errorField", &Run::errorField)
      .function("meta", &Run::meta)
      .function("output", &Run::output)
      .function("input", &Run::input)
      .function("param", &Run::param)
      .function("step", &Run::step);
  function("modulesJson", &attn::modules_json);
  function("version", &attn::version);
  function("kernelsName", &kernels_name);
  function("setUseSimd", &attn::set_use_simd);
  function("heapUsed", &heap_used);
  function("safetensorsListing", &safetensors_listing);
}
