// Measured multiply-add ceilings for `npm run bench`'s GFLOP/s table (report.mjs): a register-only
// microkernel per engine, N independent accumulators each updated acc = acc * a + b in a loop with
// no memory traffic, N large enough to hide the latency of the operation (several N are timed and
// the fastest kept, so an engine that spills the largest set of registers is not penalised).
//   native  (native_bench.cpp): AVX2 FMA on __m256 (8 lanes, 2 flop per lane per FMA) and, when the
//           CPU has it, AVX-512F FMA on __m512 (16 lanes); chosen at run time with
//           __builtin_cpu_supports, compiled with target attributes (the library's build flags are
//           untouched)
//   WASM    (wasm_bench.cpp, run in the bench page's Chromium): SIMD128 f32x4.mul then f32x4.add
//           (4 lanes, 2 flop per lane): the instructions the core's WASM kernels use (WASM SIMD128
//           has no fused multiply-add; x86 engines run the mul and the add on separate ports) and,
//           in the relaxed-SIMD bench build (attention-bench-relaxed.wasm), f32x4.relaxed_madd
// Each kernel is timed for about `ms` milliseconds, `reps` times; the best rep is the peak.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <utility>
#include <string>
#include <vector>

#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
#include <immintrin.h>
#endif
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace attn::bench::peak {

struct Result {
  std::string kind;   // "avx2-fma", "avx512-fma", "wasm-simd128-mul-add", "wasm-relaxed-madd"
  int accumulators;   // the N of the fastest variant
  int lanes;          // float lanes per vector
  double gflops;      // best rep, 1e9 flop/s (2 flop per lane per multiply-add)
};

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One kernel variant: runs fn(iters) (which returns a checksum, so the loop is kept) and returns
// the best GFLOP/s over `reps` reps of about `ms` each; flop_per_iter = N * lanes * 2.
template <typename Fn>
double best_gflops(Fn fn, double flop_per_iter, double ms, int reps, volatile float* sink) {
  long long iters = 1 << 14;
  for (;;) {  // size a rep: double until one takes ms / 4, then scale
    const double t0 = now_ms();
    *sink = *sink + fn(iters);
    const double t = now_ms() - t0;
    if (t >= ms / 4 || iters > (1LL << 40)) {
      iters = std::max(1LL, (long long)(double(iters) * ms / std::max(t, 1e-3)));
      break;
    }
    iters *= 2;
  }
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_ms();
    *sink = *sink + fn(iters);
    const double t = now_ms() - t0;
    if (t > 0) best = std::max(best, flop_per_iter * double(iters) / (t * 1e6));  // a coarse clock can read 0: inf is no JSON
  }
  return best;
}

#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
template <int N>
__attribute__((target("avx2,fma"))) float fma256(long long iters) {
  __m256 acc[N];
  for (int i = 0; i < N; ++i) acc[i] = _mm256_set1_ps(1.0f + 0.01f * float(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);  // converges to 1: no overflow, no denormals
  for (long long it = 0; it < iters; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  __m256 s = acc[0];
  for (int i = 1; i < N; ++i) s = _mm256_add_ps(s, acc[i]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return out[0] + out[7];
}

template <int N>
__attribute__((target("avx512f"))) float fma512(long long iters) {
  __m512 acc[N];
  for (int i = 0; i < N; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.01f * float(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
  for (long long it = 0; it < iters; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < N; ++i) s = _mm512_add_ps(s, acc[i]);
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  return out[0] + out[15];
}
#endif

#if defined(__wasm_simd128__)
// acc = acc * a + b as SIMD128 writes it: a multiply, then an add
inline v128_t mul_add(v128_t acc, v128_t a, v128_t b) { return wasm_f32x4_add(wasm_f32x4_mul(acc, a), b); }
#if defined(ATTN_WASM_RELAXED)
// f32x4.relaxed_madd (written as clang 14's prototype and rewritten by scripts/relax-wasm.mjs, as
// the core's kernels are): one fused instruction per multiply-add where the engine has FMA.
inline v128_t relaxed_madd(v128_t acc, v128_t a, v128_t b) { return (v128_t)__builtin_wasm_fma_f32x4((__f32x4)acc, (__f32x4)a, (__f32x4)b); }
#endif
template <int N, v128_t (*Step)(v128_t, v128_t, v128_t)>
float step128(long long iters) {
  v128_t acc[N];
  for (int i = 0; i < N; ++i) acc[i] = wasm_f32x4_splat(1.0f + 0.01f * float(i));
  const v128_t a = wasm_f32x4_splat(0.999999f), b = wasm_f32x4_splat(1e-6f);
  for (long long it = 0; it < iters; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) acc[i] = Step(acc[i], a, b);
  }
  v128_t s = acc[0];
  for (int i = 1; i < N; ++i) s = wasm_f32x4_add(s, acc[i]);
  return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 3);
}
#endif

// Every ceiling this build and CPU can measure.
inline std::vector<Result> measure(double ms = 10, int reps = 12) {
  std::vector<Result> out;
  static volatile float sink = 0;
  auto pick = [&](const char* kind, int lanes, std::initializer_list<std::pair<int, float (*)(long long)>> variants) {
    Result best{kind, 0, lanes, 0};
    for (const auto& [n, fn] : variants) {
      const double g = best_gflops(fn, double(n) * lanes * 2, ms, reps, &sink);
      if (g > best.gflops) best.gflops = g, best.accumulators = n;
    }
    out.push_back(best);
  };
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    pick("avx2-fma", 8, {{8, &fma256<8>}, {10, &fma256<10>}, {12, &fma256<12>}});
  if (__builtin_cpu_supports("avx512f"))
    pick("avx512-fma", 16, {{8, &fma512<8>}, {12, &fma512<12>}, {16, &fma512<16>}, {24, &fma512<24>}});
#endif
#if defined(__wasm_simd128__)
  pick("wasm-simd128-mul-add", 4, {{6, &step128<6, mul_add>}, {8, &step128<8, mul_add>}, {10, &step128<10, mul_add>},
                                   {12, &step128<12, mul_add>}, {14, &step128<14, mul_add>}, {16, &step128<16, mul_add>}});
#endif
#if defined(ATTN_WASM_RELAXED)
  pick("wasm-relaxed-madd", 4, {{6, &step128<6, relaxed_madd>}, {8, &step128<8, relaxed_madd>}, {10, &step128<10, relaxed_madd>},
                                {12, &step128<12, relaxed_madd>}, {14, &step128<14, relaxed_madd>}, {16, &step128<16, relaxed_madd>}});
#endif
  return out;
}

// JSON array of measure()'s results: [{"kind": ..., "accumulators": N, "lanes": L, "gflops": G}, ...]
inline std::string to_json(const std::vector<Result>& rs) {
  std::string s = "[";
  char buf[192];
  for (size_t i = 0; i < rs.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s{\"kind\": \"%s\", \"accumulators\": %d, \"lanes\": %d, \"gflops\": %.4g}", i ? ", " : "",
                  rs[i].kind.c_str(), rs[i].accumulators, rs[i].lanes, rs[i].gflops);
    s += buf;
  }
  return s + "]";
}

}  // namespace attn::bench::peak
