// Native side of `npm run bench` (tests/bench/run.mjs): times MhaSession::forward (mha_session.hpp)
// on one thread, each shape in turn, and checks the output against PyTorch's (torch_bench.py wrote
// it as raw float32). Prints one JSON object.
//   attention-bench --shapes "1,16,768,12;64,10,512,8" [--ref-dir build/bench] [--warmup 2] [--warmup-ms 0]
//                   [--runs 7] [--min-run-ms 100] [--long-call-ms 5000] [--clock] [--peak] [--kernels avx2]
// --clock also measures the core clock (measure_ghz); --peak the multiply-add ceilings (peak.hpp:
// AVX2 FMA, and AVX-512 FMA where the CPU has it) before the first shape and after the last, for
// the GFLOP/s table's "% of measured peak". --kernels times one of the SIMD tables the CPU runs
// (avx512, avx2, sse2) instead of the widest.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mha_session.hpp"
#include "peak.hpp"

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// max |a - ref| over the output, or -1 when no reference file is there
double max_diff(const attn::Tensor& out, const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return -1;
  std::vector<float> ref(static_cast<size_t>(out.numel()));
  f.read(reinterpret_cast<char*>(ref.data()), static_cast<std::streamsize>(ref.size() * sizeof(float)));
  if (f.gcount() != static_cast<std::streamsize>(ref.size() * sizeof(float))) return -1;
  double m = 0;
  for (size_t i = 0; i < ref.size(); ++i) m = std::max(m, double(std::fabs(out.data()[i] - ref[i])));
  return m;
}

// The core clock, measured: a chain of dependent register-to-register adds retires one add per
// cycle on every x86-64 core, whatever the nominal frequency /proc/cpuinfo reports under a
// hypervisor or boost. Not `add $1`: newer Intel cores fold a chain of immediate adds at rename
// (an Intel Xeon with AMX read 20.9 "GHz" that way; register adds 4.06 GHz, an imul chain 3.96).
double measure_ghz() {
#if defined(__x86_64__)
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const long iters = 20000000;
    long x = 0, n = iters;
    const long one = 1;
    const double t0 = now_ms();
    asm volatile(
        "1:\n\t"
        "add %2, %0\n\t add %2, %0\n\t add %2, %0\n\t add %2, %0\n\t"
        "add %2, %0\n\t add %2, %0\n\t add %2, %0\n\t add %2, %0\n\t"
        "dec %1\n\t jnz 1b"
        : "+r"(x), "+r"(n)
        : "r"(one));
    const double ms = now_ms() - t0;
    best = std::max(best, 8.0 * double(iters) / (ms * 1e6));
  }
  return best;
#else
  return 0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes = "1,512,768,12", ref_dir, table;
  int warmup = 2, runs = 7;
  bool clock = false, peak = false;
  double min_run_ms = 100, long_call_ms = 5000, warmup_ms = 0;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--clock") { clock = true; --i; continue; }
    if (a == "--peak") { peak = true; --i; continue; }
    if (a == "--shapes") shapes = v;
    else if (a == "--ref-dir") ref_dir = v;
    else if (a == "--kernels") table = v;
    else if (a == "--warmup") warmup = std::atoi(v.c_str());
    else if (a == "--warmup-ms") warmup_ms = std::atof(v.c_str());
    else if (a == "--runs") runs = std::atoi(v.c_str());
    else if (a == "--min-run-ms") min_run_ms = std::atof(v.c_str());
    else if (a == "--long-call-ms") long_call_ms = std::atof(v.c_str());
    else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  attn::set_memory_budget(size_t{4} << 30);
  if (!table.empty()) {
    std::string names;
    for (const attn::Kernels* k : attn::available_kernels()) {
      if (table == k->name) attn::set_simd_kernels(k);
      names += std::string(names.empty() ? "" : ", ") + k->name;
    }
    if (table != attn::kernels().name) {
      std::fprintf(stderr, "--kernels %s: this CPU runs %s\n", table.c_str(), names.c_str());
      return 2;
    }
  }
  std::printf("{\"kernels\": \"%s\", ", attn::kernels().name);
  if (clock) std::printf("\"measured_ghz\": %.3f, ", measure_ghz());
  if (peak) std::printf("\"peak_before\": %s, ", attn::bench::peak::to_json(attn::bench::peak::measure()).c_str());
  std::printf("\"results\": [");
  std::stringstream ss(shapes);
  std::string item;
  bool first = true;
  while (std::getline(ss, item, ';')) {
    if (item.empty()) continue;
    long long B, T, C, H;
    if (std::sscanf(item.c_str(), "%lld,%lld,%lld,%lld", &B, &T, &C, &H) != 4) { std::fprintf(stderr, "bad shape %s\n", item.c_str()); return 2; }
    attn::bench::MhaSession s(B, T, C, H);
    double t0 = now_ms();
    s.forward();
    const double first_ms = now_ms() - t0;
    t0 = now_ms();
    s.forward();
    const double second_ms = now_ms() - t0;
    // The third call sizes the runs, where run.mjs's protocol takes the second: natively the second
    // packs the weights of a few tokens' Linears (math/packed.hpp), a cost paid once.
    t0 = now_ms();
    s.forward();
    const double once = now_ms() - t0;
    char ref[512];
    std::snprintf(ref, sizeof ref, "%s/ref_B%lld_T%lld_C%lld_H%lld.f32", ref_dir.c_str(), B, T, C, H);
    const double diff = ref_dir.empty() ? -1 : max_diff(s.output(), ref);
    int warm = warmup, kept = runs;  // run.mjs's protocol: a long call gets 1 warm-up + 3 runs
    if (once > long_call_ms) warm = std::min(warm, 1), kept = std::min(kept, 3);
    char diff_text[32] = "null";
    if (diff >= 0) std::snprintf(diff_text, sizeof diff_text, "%.3g", diff);
    const int inner = std::max(1, int(std::ceil(min_run_ms / std::max(once, 1e-3))));
    const double w0 = now_ms();
    int warm_runs = 0;
    for (; warm_runs < warm || (once <= long_call_ms && now_ms() - w0 < warmup_ms); ++warm_runs)
      for (int k = 0; k < inner; ++k) s.forward();
    std::vector<double> per_call;
    for (int r = 0; r < kept; ++r) {
      t0 = now_ms();
      for (int k = 0; k < inner; ++k) s.forward();
      per_call.push_back((now_ms() - t0) / inner);
    }
    std::vector<double> sorted = per_call;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    std::printf("%s{\"B\": %lld, \"T\": %lld, \"C\": %lld, \"H\": %lld, \"median_ms\": %.6g, \"min_ms\": %.6g, "
                "\"max_ms\": %.6g, \"runs\": %d, \"calls_per_run\": %d, \"warmup_runs\": %d, \"first_call_ms\": %.6g, \"second_call_ms\": %.6g, \"max_abs_diff_vs_torch\": %s, \"all_ms\": [",
                first ? "" : ", ", B, T, C, H, median, sorted[0], sorted[n - 1], kept, inner, warm_runs, first_ms, second_ms, diff_text);
    for (size_t i = 0; i < per_call.size(); ++i) std::printf("%s%.6g", i ? ", " : "", per_call[i]);
    std::printf("]}");
    std::fflush(stdout);
    first = false;
  }
  std::printf("]");
  if (peak) std::printf(", \"peak_after\": %s", attn::bench::peak::to_json(attn::bench::peak::measure()).c_str());
  std::printf("}\n");
  return 0;
}
