// Native side of the generation table of `npm run bench` (tests/bench/run.mjs): one decode step of
// nanoGPT's GPT at T = 256 with the KV cache and without (the whole 256-token window recomputed),
// on the scenario torch_bench.py --generate wrote (build/bench/generate.json: seed 0, so the core
// builds PyTorch's weights; a 255-id prompt, temperature 0). As tests/native/test_generate.cpp's
// "[.timing]" case: Session::generation(), next() once (the prompt: prefill with the cache, else
// the window), then the timed call is the next() at position 255. A Generation is copied after
// the prompt and each timed call runs next() on a fresh copy (the copy: the ids and the cache's
// tensor handles, whose buffers it shares; the step writes row 255 of them, the same values every
// time), so every call is that same step. The step's logits are checked against PyTorch's
// uncached ones, and its id against PyTorch's greedy one. Prints one JSON object.
//   attention-generate-bench [--cases cache,nocache] [--ref-dir build/bench] [--warmup 2] [--warmup-ms 0]
//                            [--runs 7] [--min-run-ms 100] [--long-call-ms 5000]
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "attention.hpp"
#include "run/generate.hpp"
#include "protocol.hpp"
#include "scenario/scenario.hpp"
#include "scenario/session.hpp"

int main(int argc, char** argv) {
  using json = nlohmann::json;
  std::string cases = "cache,nocache", ref_dir = "build/bench";
  attn::bench::Protocol p;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--cases") cases = v;
    else if (a == "--ref-dir") ref_dir = v;
    else if (!p.parse(a, v)) { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  attn::set_memory_budget(size_t{4} << 30);
  json out = {{"kernels", attn::kernels().name}, {"results", json::array()}};
  try {
    std::ifstream mf(ref_dir + "/generate.json");
    if (!mf) throw std::runtime_error("no " + ref_dir + "/generate.json (torch_bench.py --generate writes it)");
    const json ref = json::parse(mf);
    const std::vector<float> ref_logits = ref["logits"].get<std::vector<float>>();
    std::stringstream ss(cases);
    std::string name;
    while (std::getline(ss, name, ',')) {
      if (name.empty()) continue;
      if (name != "cache" && name != "nocache") throw std::runtime_error("unknown case " + name + " (cache, nocache)");
      json sc = ref["scenario"];
      sc["generate"]["cache"] = name == "cache";
      attn::Session session(attn::parse_scenario(sc.dump()));
      std::unique_ptr<attn::Generation> g = session.generation();
      const attn::GeneratedToken prompt_tok = g->next();  // the prompt's window (255 positions): the prefill with the cache
      if (prompt_tok.ids[0] != ref["next_id"].get<int64_t>())
        throw std::runtime_error("the prompt's greedy id " + std::to_string(prompt_tok.ids[0]) + " is not PyTorch's " + ref["next_id"].dump());
      const attn::GeneratedToken step = attn::Generation(*g).next();  // the step at position 255, checked
      double d = 0;
      if (static_cast<size_t>(step.logits.numel()) != ref_logits.size()) throw std::runtime_error("logits size differs from PyTorch's");
      for (size_t k = 0; k < ref_logits.size(); ++k) d = std::max(d, double(std::fabs(step.logits.data()[k] - ref_logits[k])));
      json r = {{"case", name}, {"mode", step.mode}, {"position", step.position - 1}, {"id", step.ids[0]}, {"id_ref", ref["step_id"]},
                {"max_abs_diff_vs_torch", d}};
      if (name == "cache") r["cache_shape"] = step.cache_shape;
      r.update(attn::bench::timed([&] { attn::Generation(*g).next(); }, p));
      out["results"].push_back(r);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attention-generate-bench: %s\n", e.what());
    out["error"] = e.what();
    std::printf("%s\n", out.dump().c_str());
    return 1;
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
