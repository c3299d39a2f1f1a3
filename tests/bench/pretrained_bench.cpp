// Native side of `npm run bench -- --pretrained` (tests/bench/pretrained.mjs): the GPT-2-small-
// shaped folder pretrained_bench.py --write made (config.json + a 498 MB float32 model.safetensors)
// opened as the native CLI opens a scenario's "pretrained" folder (cli/disk_folder.hpp: the module
// planned from the headers, the weights read straight into it a chunk at a time), the load timed once; then
// the prefill (Session::generation() and its first next(): the 128 prompt ids into a fresh KV cache,
// the last position's logits) and one decode step at position 128 on that cache (a copy of the
// Generation after the prefill, next() on it: every call the same step, as generate_bench.cpp),
// by the bench protocol, checked against PyTorch's logits and greedy ids; the process's peak
// resident memory. One thread unless ATTENTION_THREADS says more. Prints one JSON object.
//   attention-pretrained-bench --dir build/bench/pretrained [--warmup 2] [--warmup-ms 0] [--runs 7]
//                              [--min-run-ms 100] [--long-call-ms 5000]
#include <immintrin.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "attention.hpp"
#include "base/limits.hpp"
#include "base/threads.hpp"
#include "cli/disk_folder.hpp"
#include "protocol.hpp"
#include "run/generate.hpp"
#include "scenario/scenario.hpp"
#include "scenario/session.hpp"

namespace {

bool read_into(const std::string& path, attn::Blob& out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  out.resize(static_cast<size_t>(f.tellg()));
  f.seekg(0);
  return static_cast<bool>(f.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size())));
}

std::vector<float> floats(const std::string& path) {
  attn::Blob b;
  if (!read_into(path, b)) throw std::runtime_error("no " + path + " (pretrained_bench.py --write writes it)");
  std::vector<float> v(b.size() / sizeof(float));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(float));
  return v;
}

double max_abs_diff(const attn::Tensor& got, const std::vector<float>& want) {
  if (static_cast<size_t>(got.numel()) != want.size()) throw std::runtime_error("logits size differs from PyTorch's");
  double d = 0;
  for (size_t k = 0; k < want.size(); ++k) d = std::max(d, double(std::fabs(got.data()[k] - want[k])));
  return d;
}

// Every parameter read once, as a decode step reads them, on the core's threads (ATTENTION_THREADS,
// as the step's products): thread t reads the t-th of `threads` contiguous parts of each tensor,
// each part in 8 stretches read side by side (8 streams in flight, as the decode's products read 4
// far rows: one sequential stream leaves the memory idle between the prefetcher's requests), SSE2
// sums (far above what memory delivers to one core). A reference for a memory-bound decode step,
// not a bound: onnxruntime-node's 2-thread step and the core's 1-thread step have beaten it
// (docs/benchmarks.md). Returns the sum, so the reads are not optimised out.
float read_all(const attn::ParamList& params) {
  constexpr size_t S = 8;
  const size_t T = static_cast<size_t>(attn::threads());
  std::vector<float> sums(T);
  attn::parallel_for(T, 1, [&](size_t t0, size_t t1) {
    for (size_t t = t0; t < t1; ++t) {
      __m128 s[S];
      for (auto& v : s) v = _mm_setzero_ps();
      float tail = 0;
      for (const auto& [name, tensor] : params) {
        const size_t all = static_cast<size_t>(tensor->numel()), b = all * t / T, n = all * (t + 1) / T - b;
        const float* p = tensor->data() + b;
        const size_t len = n / (4 * S) * 4;  // floats per stretch, whole vectors
        for (size_t i = 0; i < len; i += 4)
          for (size_t j = 0; j < S; ++j) s[j] = _mm_add_ps(s[j], _mm_loadu_ps(p + j * len + i));
        for (size_t i = S * len; i < n; ++i) tail += p[i];
      }
      for (size_t j = 1; j < S; ++j) s[0] = _mm_add_ps(s[0], s[j]);
      float out[4];
      _mm_storeu_ps(out, s[0]);
      sums[t] = out[0] + out[1] + out[2] + out[3] + tail;
    }
  }, 1e12);  // work far above the pool's floor: always one part per thread
  float total = 0;
  for (float v : sums) total += v;
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  using json = nlohmann::json;
  std::string dir = "build/bench/pretrained";
  attn::bench::Protocol p;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--dir") dir = v;
    else if (!p.parse(a, v)) { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  attn::set_memory_budget(attn::kDefaultMemoryBudget + attn::kMaxModelBytes);  // as the native CLI for a folder
  json out = {{"kernels", attn::kernels().name}, {"threads", attn::threads()}, {"results", json::array()}};
  try {
    std::ifstream idf(dir + "/ids.json");
    if (!idf) throw std::runtime_error("no " + dir + "/ids.json (pretrained_bench.py --write writes it)");
    const json ref = json::parse(idf);
    const std::vector<int64_t> ids = ref["ids"].get<std::vector<int64_t>>();
    const json sc = {{"pretrained", dir},
                     {"inputs", json::array({{{"name", "idx"}, {"shape", {1, ids.size()}}, {"data", ids}}})},
                     {"generate", {{"max_new_tokens", 2}, {"temperature", 0}}}};
    const attn::DiskFolder folder = attn::disk_folder("");  // as the native CLI reads it: headers, then the weights streamed in
    double t0 = attn::bench::now_ms();
    auto session = std::make_unique<attn::Session>(attn::parse_scenario(sc.dump(), nullptr, nullptr, &folder.files, &folder.sizes));
    session->stream_weights(folder.range);
    out["load_ms"] = attn::bench::now_ms() - t0;

    std::unique_ptr<attn::Generation> g = session->generation();
    const attn::GeneratedToken prefill = g->next();
    const attn::GeneratedToken step = attn::Generation(*g).next();
    const json cases[] = {
        {{"case", "prefill"}, {"mode", prefill.mode}, {"id", prefill.ids[0]}, {"id_ref", ref["next_id"]},
         {"max_abs_diff_vs_ref", max_abs_diff(prefill.logits, floats(dir + "/prefill_logits.f32"))}},
        {{"case", "decode"}, {"mode", step.mode}, {"position", step.position - 1}, {"id", step.ids[0]}, {"id_ref", ref["step_id"]},
         {"max_abs_diff_vs_ref", max_abs_diff(step.logits, floats(dir + "/decode_logits.f32"))}, {"cache_shape", step.cache_shape}}};
    for (json r : cases) {
      if (r["id"] != r["id_ref"]) throw std::runtime_error("the " + r["case"].get<std::string>() + "'s greedy id " + r["id"].dump() + " is not PyTorch's " + r["id_ref"].dump());
      if (r["case"] == "prefill") r.update(attn::bench::timed([&] { session->generation()->next(); }, p));
      else r.update(attn::bench::timed([&] { attn::Generation(*g).next(); }, p));
      out["results"].push_back(r);
    }
    double bytes = 0;
    for (const auto& [name, t] : session->params()) bytes += 4.0 * static_cast<double>(t->numel());
    volatile float sink = 0;
    json read = {{"bytes", bytes}};
    read.update(attn::bench::timed([&] { sink = sink + read_all(session->params()); }, p));
    read["gb_per_s"] = bytes / read["median_ms"].get<double>() / 1e6;
    out["weights_read"] = read;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attention-pretrained-bench: %s\n", e.what());
    out["error"] = e.what();
    std::printf("%s\n", out.dump().c_str());
    return 1;
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  out["peak_rss_bytes"] = static_cast<double>(u.ru_maxrss) * 1024;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
