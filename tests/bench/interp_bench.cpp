// Native side of the interpretability table of `npm run bench -- --interp` (tests/bench/run.mjs):
// the scenarios torch_bench.py --interp wrote (build/bench/interp.json: a small GPT, seed 1, so the
// core builds PyTorch's weights), each run as the CLI runs it: a Session built from the scenario
// (its seeded construction included) and one forward, which with `patching` is the traced forward
// plus the sweep (each cell replays only the tape after its step), with `attribution_patching`
// the forward plus one backward. "forward" is the same scenario without those fields. Each case's
// cells are checked against PyTorch's (max |core - PyTorch| over the cells' metrics or estimates).
// Prints one JSON object.
//   attention-interp-bench [--ref-dir build/bench] [--warmup 2] [--warmup-ms 0] [--runs 7] [--min-run-ms 100]
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "attention.hpp"
#include "protocol.hpp"
#include "scenario/scenario.hpp"
#include "scenario/session.hpp"

int main(int argc, char** argv) {
  using json = nlohmann::json;
  std::string ref_dir = "build/bench";
  attn::bench::Protocol p;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--ref-dir") ref_dir = v;
    else if (!p.parse(a, v)) { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  json out = {{"kernels", attn::kernels().name}, {"results", json::array()}};
  try {
    std::ifstream f(ref_dir + "/interp.json");
    if (!f) throw std::runtime_error("no " + ref_dir + "/interp.json (torch_bench.py --interp writes it)");
    const json ref = json::parse(f);
    for (const auto& [name, c] : ref.items()) {
      const bool fwd = name == "forward";
      const std::string text = (fwd ? c : c["scenario"]).dump();
      attn::Session checked(attn::parse_scenario(text));
      const attn::Result r = checked.forward(false);
      json row = {{"case", name}};
      if (!fwd) {
        const bool attr = r.has_attribution;
        const attn::PatchingResult& got = attr ? r.attribution_patching : r.patching;
        const json& want = c["expected"]["cells"];
        if (want.size() != got.cells.size()) throw std::runtime_error(name + ": " + std::to_string(got.cells.size()) + " cells, PyTorch has " + std::to_string(want.size()));
        double d = 0, scale = 0;
        for (size_t k = 0; k < got.cells.size(); ++k) {
          const double w = want[k][attr ? "estimate" : "metric"].get<double>();
          d = std::max(d, std::fabs(got.cells[k].value - w));
          scale = std::max(scale, std::fabs(w));
        }
        row.update({{"cells", got.cells.size()}, {"max_abs_diff_vs_torch", d}, {"max_abs_torch", scale}});
      }
      row.update(attn::bench::timed([&] { attn::Session(attn::parse_scenario(text)).forward(false); }, p));
      // the model built once, as PyTorch's side is: the forward and the sweep alone
      const nlohmann::json reused = attn::bench::timed([&] { checked.forward(false); }, p);
      for (const char* k : {"median_ms", "min_ms", "max_ms"}) row[std::string("built_once_") + k] = reused[k];
      out["results"].push_back(row);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attention-interp-bench: %s\n", e.what());
    out["error"] = e.what();
    std::printf("%s\n", out.dump().c_str());
    return 1;
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
