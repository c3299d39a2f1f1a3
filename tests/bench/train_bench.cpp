// Native side of the training table of `npm run bench` (tests/bench/run.mjs): one optimizer step
// (zero_grad + forward + loss + backward + AdamW) of each case torch_bench.py --train wrote
// (build/bench/train_<case>.json: the scenario, the parameter names; .grads.f32: PyTorch's first
// step), built into an attn::Session (core/session.hpp) and timed as Session::step(). The first
// step's loss and gradients are checked against PyTorch's. Prints one JSON object.
//   attention-train-bench --cases causal,mha --ref-dir build/bench [--warmup 2] [--warmup-ms 0]
//                         [--runs 7] [--min-run-ms 100] [--long-call-ms 5000] [--phases]
//   attention-train-bench --cases mha --ref-dir build/bench --profile-steps 20   (for perf/callgrind)
// --phases also times Session::forward(false) on the same session by the same protocol: the
// forward alone, no tape for gradients, for the step's share of it. (Session::gradients is no
// measure of forward + backward: its Result keeps every gradient alive, and the storage pool then
// hands out fresh pages; it took longer than the whole step.) Where the rest goes: perf, README.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "attention.hpp"
#include "protocol.hpp"
#include "scenario/scenario.hpp"
#include "scenario/session.hpp"

namespace {

using json = nlohmann::json;

using attn::bench::now_ms;
using attn::bench::Protocol;
using attn::bench::timed;

std::vector<float> read_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw std::runtime_error("cannot read " + path + " (run tests/bench/torch_bench.py --train first)");
  std::vector<float> v(static_cast<size_t>(f.tellg()) / sizeof(float));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

// The first step's gradients against PyTorch's, per parameter: max |diff|, and that over the
// parameter's largest |gradient| -- floored at 1e-3 of the largest of all parameters, since a
// gradient that is 0 in exact arithmetic (seed 000's W_K.bias: softmax ignores a shift shared by a
// row) is float32 rounding noise in every backend and would make any relative figure meaningless.
json check_grads(const attn::Session& s, const json& manifest, const std::vector<float>& ref) {
  double global = 0;
  for (float v : ref) global = std::max(global, double(std::fabs(v)));
  json per = json::array();
  double worst_rel = 0, worst_abs = 0;
  std::string worst_name;
  size_t off = 0;
  const auto& params = s.params();
  if (params.size() != manifest["params"].size()) throw std::runtime_error("parameter count differs from PyTorch's");
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string name = manifest["params"][i]["name"];
    if (params[i].first != name) throw std::runtime_error("parameter " + params[i].first + " where PyTorch has " + name);
    const attn::Tensor& g = s.grads()[i];
    const size_t n = static_cast<size_t>(params[i].second->numel());
    if (off + n > ref.size()) throw std::runtime_error("the reference gradients are shorter than the parameters");
    const attn::Tensor gc = g.defined() ? g.contiguous() : attn::Tensor();
    double d = 0, m = 0;
    for (size_t k = 0; k < n; ++k) {
      const double v = gc.defined() ? gc.data()[k] : 0.0;
      d = std::max(d, std::fabs(v - ref[off + k]));
      m = std::max(m, double(std::fabs(ref[off + k])));
    }
    const double rel = d / std::max(m, 1e-3 * global);
    if (rel > worst_rel) worst_rel = rel, worst_name = name;
    worst_abs = std::max(worst_abs, d);
    per.push_back({{"name", name}, {"max_abs_diff", d}, {"max_abs_ref", m}, {"rel", rel}});
    off += n;
  }
  return {{"grad_max_abs_diff", worst_abs}, {"grad_max_rel_diff", worst_rel}, {"grad_worst_param", worst_name},
          {"grad_params", per}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string cases = "causal,mha", ref_dir = "build/bench";
  Protocol p;
  bool phases = false;
  int profile_steps = 0;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--phases") { phases = true; --i; continue; }
    if (a == "--cases") cases = v;
    else if (a == "--ref-dir") ref_dir = v;
    else if (p.parse(a, v)) continue;
    else if (a == "--profile-steps") profile_steps = std::atoi(v.c_str());
    else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  attn::set_memory_budget(size_t{4} << 30);
  std::printf("{\"kernels\": \"%s\", \"results\": [", attn::kernels().name);
  std::stringstream ss(cases);
  std::string name;
  bool first = true;
  try {
    while (std::getline(ss, name, ',')) {
      if (name.empty()) continue;
      std::ifstream mf(ref_dir + "/train_" + name + ".json");
      if (!mf) throw std::runtime_error("no " + ref_dir + "/train_" + name + ".json (torch_bench.py --train " + name + " writes it)");
      const json manifest = json::parse(mf);
      attn::Session s(attn::parse_scenario(manifest["scenario"].dump()));
      const double t0 = now_ms();
      const float loss = s.step();  // the reference step: PyTorch's first
      const double first_step_ms = now_ms() - t0;
      const double ref_loss = manifest["loss"];
      json r = {{"case", name}, {"loss", loss}, {"loss_ref", ref_loss},
                {"loss_rel_diff", std::fabs(loss - ref_loss) / std::max(std::fabs(ref_loss), 1e-30)},
                {"reference_step_ms", first_step_ms}};
      r.update(check_grads(s, manifest, read_f32(ref_dir + "/train_" + name + ".grads.f32")));
      if (profile_steps > 0) {
        const double p0 = now_ms();
        for (int k = 0; k < profile_steps; ++k) s.step();
        r["profile_steps"] = profile_steps;
        r["profile_ms_per_step"] = (now_ms() - p0) / profile_steps;
      } else {
        r.update(timed([&] { s.step(); }, p));
        if (phases) {
          r["phases"] = {{"forward", timed([&] { s.forward(false); }, p)}};
        }
      }
      std::printf("%s%s", first ? "" : ", ", r.dump().c_str());
      std::fflush(stdout);
      first = false;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attention-train-bench: %s\n", e.what());
    std::printf("], \"error\": %s}\n", json(std::string(e.what())).dump().c_str());
    return 1;
  }
  std::printf("]}\n");
  return 0;
}
