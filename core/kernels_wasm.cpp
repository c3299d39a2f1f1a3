// WebAssembly instantiation of kernels_simd.hpp: built with -msimd128 -msse4.1, Emscripten maps
// xsimd's SSE4.1 code to WASM SIMD128 (xsimd 8.1 has no wasm backend of its own).
// The GEMM register tiles are chosen on the machine, by timing: V8's register allocator spills
// differently on different CPUs (the 4 x 3 gemm_nt tile ran nn.Linear at 18-26 GFLOP/s in
// Chromium on an AMD EPYC where 2 x 4 ran at 46; on an Intel Xeon the order changed). The first
// large GEMM calls of a session take the candidate tiles in turn; once each has run enough calls
// (after V8 has tiered the code up), the fastest per flop serves every later call. Every tile
// computes each output with the same sum in the same order, so the choice never changes a number
// (test_kernels.cpp checks the templates bit for bit).
#include <emscripten.h>

#include <iterator>
#include <string>

#include "kernels_simd.hpp"

namespace attn {
namespace {

using Arch = xsimd::sse4_1;
using GemmNt = decltype(Kernels::gemm_nt);
using GemmNn = decltype(Kernels::gemm_nn);

template <class Fn>
struct Candidate {
  const char* tile;
  Fn fn;
  double ms = 0, flops = 0;  // timed calls, summed
  int calls = 0;
};

Candidate<GemmNt> nt[] = {{"2x4", simd::K<Arch, 2, 4>::gemm_nt},
                          {"4x3", simd::K<Arch, 4, 3>::gemm_nt},
                          {"4x2", simd::K<Arch, 4, 2>::gemm_nt},
                          {"3x3", simd::K<Arch, 3, 3>::gemm_nt}};
Candidate<GemmNn> nn[] = {{"4x2", simd::K<Arch, 4, 3, 4, 2>::gemm_nn},
                          {"2x4", simd::K<Arch, 4, 3, 2, 4>::gemm_nn},
                          {"6x2", simd::K<Arch, 4, 3, 6, 2>::gemm_nn},
                          {"3x3", simd::K<Arch, 4, 3, 3, 3>::gemm_nn}};
// gemm_tn runs gemm_nn's tiles with A read transposed: it follows gemm_nn's choice (same order).
const GemmNn tn[] = {simd::K<Arch, 4, 3, 4, 2>::gemm_tn, simd::K<Arch, 4, 3, 2, 4>::gemm_tn,
                     simd::K<Arch, 4, 3, 6, 2>::gemm_tn, simd::K<Arch, 4, 3, 3, 3>::gemm_tn};

// Calls below this many multiply-adds are too short for the browser's coarse clock to time.
constexpr double kTimedFlops = double(1 << 20);
constexpr int kSkipRounds = 2;   // the first calls run V8's baseline code
constexpr int kTimedRounds = 6;  // calls per candidate before choosing

// Runs one call on the chosen candidate, or on the next one in turn while choosing.
template <class Fn, size_t N, class Call>
void dispatch(Candidate<Fn> (&c)[N], int& chosen, int& turn, double flops, Call call) {
  if (chosen >= 0 || flops < kTimedFlops) {
    call(c[chosen >= 0 ? chosen : 0].fn);
    return;
  }
  Candidate<Fn>& k = c[turn % static_cast<int>(N)];
  const double t0 = emscripten_get_now();
  call(k.fn);
  const double ms = emscripten_get_now() - t0;
  if (turn++ >= kSkipRounds * static_cast<int>(N)) {
    k.ms += ms;
    k.flops += flops;
    ++k.calls;
  }
  if (turn < (kSkipRounds + kTimedRounds) * static_cast<int>(N)) return;
  int best = 0;
  for (int i = 1; i < static_cast<int>(N); ++i)
    if (c[i].ms / c[i].flops < c[best].ms / c[best].flops) best = i;
  chosen = best;
}

int nt_chosen = -1, nt_turn = 0, nn_chosen = -1, nn_turn = 0;

void gemm_nt(float* C, const float* A, const float* B, const float* bias, size_t M, size_t N, size_t K, size_t lda,
             size_t ldb, size_t ldc) {
  dispatch(nt, nt_chosen, nt_turn, double(M) * N * K, [&](GemmNt f) { f(C, A, B, bias, M, N, K, lda, ldb, ldc); });
}

void gemm_nn(float* C, const float* A, const float* B, size_t M, size_t N, size_t K, size_t lda, size_t ldb, size_t ldc) {
  dispatch(nn, nn_chosen, nn_turn, double(M) * N * K, [&](GemmNn f) { f(C, A, B, M, N, K, lda, ldb, ldc); });
}

void gemm_tn(float* C, const float* A, const float* B, size_t M, size_t N, size_t K, size_t lda, size_t ldb, size_t ldc) {
  tn[nn_chosen >= 0 ? nn_chosen : 0](C, A, B, M, N, K, lda, ldb, ldc);
}

template <class Fn, size_t N>
std::string describe(const char* what, const Candidate<Fn> (&c)[N], int chosen) {
  std::string s = std::string(what) + " " + (chosen >= 0 ? c[chosen].tile : "(timing)");
  for (size_t i = 0; i < N; ++i)
    if (c[i].calls) s += std::string(i ? "; " : " [") + c[i].tile + " " + std::to_string(int(2 * c[i].flops / c[i].ms / 1e6)) + " GFLOP/s";
  return s + (c[0].calls ? "]" : "");
}

}  // namespace

const Kernels& kernels_wasm() {
  static const Kernels table = [] {
    Kernels k = simd::K<Arch, 2, 4>::table("wasm-simd128");
    k.gemm_nt = gemm_nt;
    k.gemm_nn = gemm_nn;
    k.gemm_tn = gemm_tn;
    return k;
  }();
  return table;
}

std::string kernels_detail() { return describe("gemm_nt", nt, nt_chosen) + ", " + describe("gemm_nn", nn, nn_chosen); }

}  // namespace attn
