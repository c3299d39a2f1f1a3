// The timing protocol of `npm run bench` (run.mjs) for the native drivers built with nlohmann/json
// (train_bench.cpp, generate_bench.cpp): the same steps as timed.mjs (the page, onnxruntime-node),
// torch_bench.py's timed() and native_bench.cpp's loop. Two first calls, the second sizing a run
// (a run repeats the call until it lasts min_run_ms); warm-up of `warmup` runs and at least
// warmup_ms; `runs` runs kept; a call over long_call_ms gets 1 warm-up run + 3 kept.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn::bench {

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Protocol {
  int warmup = 2, runs = 7;
  double warmup_ms = 0, min_run_ms = 100, long_call_ms = 5000;
  // One of run.mjs's protocol options (--warmup, --warmup-ms, --runs, --min-run-ms, --long-call-ms)
  // with its value: true when `option` is one of them.
  bool parse(const std::string& option, const std::string& value) {
    if (option == "--warmup") warmup = std::atoi(value.c_str());
    else if (option == "--warmup-ms") warmup_ms = std::atof(value.c_str());
    else if (option == "--runs") runs = std::atoi(value.c_str());
    else if (option == "--min-run-ms") min_run_ms = std::atof(value.c_str());
    else if (option == "--long-call-ms") long_call_ms = std::atof(value.c_str());
    else return false;
    return true;
  }
};

// median/min/max ms per call (and the protocol's counts) as JSON fields.
inline nlohmann::json timed(const std::function<void()>& fn, const Protocol& p) {
  double t0 = now_ms();
  fn();
  const double first = now_ms() - t0;
  t0 = now_ms();
  fn();
  const double once = now_ms() - t0;
  int warm = p.warmup, kept = p.runs;
  if (once > p.long_call_ms) warm = std::min(warm, 1), kept = std::min(kept, 3);
  const int inner = std::max(1, int(std::ceil(p.min_run_ms / std::max(once, 1e-3))));
  const double w0 = now_ms();
  int warm_runs = 0;
  for (; warm_runs < warm || (once <= p.long_call_ms && now_ms() - w0 < p.warmup_ms); ++warm_runs)
    for (int k = 0; k < inner; ++k) fn();
  std::vector<double> per_call;
  for (int r = 0; r < kept; ++r) {
    t0 = now_ms();
    for (int k = 0; k < inner; ++k) fn();
    per_call.push_back((now_ms() - t0) / inner);
  }
  std::vector<double> s = per_call;
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  const double median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return {{"median_ms", median}, {"min_ms", s[0]}, {"max_ms", s[n - 1]}, {"runs", kept}, {"calls_per_run", inner},
          {"warmup_runs", warm_runs}, {"first_call_ms", first}, {"second_call_ms", once}, {"all_ms", per_call}};
}

}  // namespace attn::bench
