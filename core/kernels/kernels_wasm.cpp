// WebAssembly instantiation of kernels_simd.hpp: built with -msimd128 -msse4.1, Emscripten maps
// xsimd's SSE4.1 code to WASM SIMD128 (xsimd 8.1 has no wasm backend of its own). Built twice:
// into the library (attention.wasm, plain SIMD128: every engine) and, with ATTN_WASM_RELAXED,
// into attention-relaxed.wasm, whose multiply-adds are f32x4.relaxed_madd (fused where the CPU has
// FMA; bindings/attention.mjs loads it where the engine validates relaxed SIMD).
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

#include "kernels/kernels_simd.hpp"

namespace attn {
namespace {

using Arch = xsimd::sse4_1;
using GemmNt = decltype(Kernels::gemm_nt);
using GemmNn = decltype(Kernels::gemm_nn);
// gemm_nn / gemm_tn run K in blocks of 256, A packed per block (kernels_simd.hpp PACK_NN): the
// attention's weights x V has K = keys, and a column block of 2048 keys' values (64 KiB) no longer
// stays in L1 beside the score rows (1x2048x768: the forward went from 1219 to 819 ms in Chromium).
constexpr size_t KB = 256;

template <class Fn>
struct Candidate {
  const char* tile;
  Fn fn;
  Fn tn = nullptr;            // gemm_nn's tiles: the same tile's gemm_tn (A read transposed)
  double warm_ms = 0;         // calls not timed (V8's baseline code), summed
  double ms = 0, flops = 0;  // timed calls, summed
  int calls = 0;
};

Candidate<GemmNt> nt[] = {{"2x4", simd::K<Arch, 2, 4>::gemm_nt},
                          {"4x3", simd::K<Arch, 4, 3>::gemm_nt},
                          {"4x2", simd::K<Arch, 4, 2>::gemm_nt},
                          {"3x3", simd::K<Arch, 3, 3>::gemm_nt}};
// gemm_nn's best tile depends on the attention's length: in Chromium on the Intel Xeon, 6x2 timed
// fastest on 512 keys' products and 4x2 on 2048 keys' (6x2 there left the 1x2048x768 forward at
// 682 ms where 4x2 took 602-640), so products over more than kLongNn keys (N or K) choose apart.
template <size_t MR, size_t NV>
constexpr Candidate<GemmNn> nn_tile(const char* name) {
  using T = simd::K<Arch, 4, 3, MR, NV, KB, true>;
  return {name, T::gemm_nn, T::gemm_tn};
}
constexpr Candidate<GemmNn> nn_tiles[] = {nn_tile<4, 2>("4x2"), nn_tile<2, 4>("2x4"), nn_tile<6, 2>("6x2"), nn_tile<3, 3>("3x3")};
// one set of timings per class: [0] up to kLongNn keys, [1] past it
Candidate<GemmNn> nn[2][4] = {{nn_tiles[0], nn_tiles[1], nn_tiles[2], nn_tiles[3]},
                              {nn_tiles[0], nn_tiles[1], nn_tiles[2], nn_tiles[3]}};
constexpr size_t kLongNn = 1024;

// Calls below this many multiply-adds are too short for the browser's coarse clock to time.
constexpr double kTimedFlops = double(1 << 20);
// Nor are calls of few rows timed: with fewer than this many, each weight (gemm_nt: nn.Linear's
// W, read once per call) serves too few rows for the tile to matter; such calls wait on memory,
// and every tile timed alike there (34-36 GFLOP/s at 1x16x768), so a choice made on them was a
// draw: the 1x512x768 forward then took 88-90 ms in Chromium (Intel Xeon) where the tiles chosen
// on 512 rows take 75-81. Until a large enough call has come, calls run on the first candidate.
constexpr size_t kTimedRows = 48;
// V8 runs a function first as Liftoff's baseline code and swaps in TurboFan's only after it has
// spent a budget of loop iterations (dynamic tiering): for the attention's short calls (64 query
// rows of one head, ~80 us) that is dozens of calls. So a candidate's first kWarmMs of calls are
// not counted, and it is judged on at least kTimedMs and kTimedRounds calls after that: enough
// for Chromium's 100 us clock (without cross-origin isolation) to time it to a few per cent.
constexpr double kWarmMs = 30;
constexpr double kTimedMs = 20;
constexpr int kTimedRounds = 6;

// Runs one call on the chosen candidate, or on the next one in turn while choosing.
template <class Fn, size_t N, class Call>
void dispatch(Candidate<Fn> (&c)[N], int& chosen, int& turn, size_t rows, double flops, Call call) {
  if (chosen >= 0 || flops < kTimedFlops || rows < kTimedRows) {
    call(c[chosen >= 0 ? chosen : 0].fn);
    return;
  }
  Candidate<Fn>& k = c[turn++ % static_cast<int>(N)];
  const double t0 = emscripten_get_now();
  call(k.fn);
  const double ms = emscripten_get_now() - t0;
  if (k.warm_ms < kWarmMs) {
    k.warm_ms += ms;
    return;
  }
  k.ms += ms;
  k.flops += flops;
  ++k.calls;
  for (const Candidate<Fn>& x : c)
    if (x.calls < kTimedRounds || x.ms < kTimedMs) return;
  int best = 0;
  for (int i = 1; i < static_cast<int>(N); ++i)
    if (c[i].ms / c[i].flops < c[best].ms / c[best].flops) best = i;
  chosen = best;
}

int nt_chosen = -1, nt_turn = 0, nn_chosen[2] = {-1, -1}, nn_turn[2] = {0, 0};
int nn_class(size_t N, size_t K) { return std::max(N, K) > kLongNn ? 1 : 0; }

void gemm_nt(float* C, const float* A, const float* B, const float* bias, size_t M, size_t N, size_t K, size_t lda,
             size_t ldb, size_t ldc) noexcept {
  dispatch(nt, nt_chosen, nt_turn, M, double(M) * N * K, [&](GemmNt f) { f(C, A, B, bias, M, N, K, lda, ldb, ldc); });
}

void gemm_nn(float* C, const float* A, const float* B, size_t M, size_t N, size_t K, size_t lda, size_t ldb, size_t ldc) noexcept {
  // rows: the smaller side of C (the attention's products: 64 query rows against S keys, or S
  // keys' weights against head-dim columns), so a few tokens' products are never timed
  const int c = nn_class(N, K);
  dispatch(nn[c], nn_chosen[c], nn_turn[c], std::min(M, N), double(M) * N * K, [&](GemmNn f) { f(C, A, B, M, N, K, lda, ldb, ldc); });
}

// gemm_tn follows gemm_nn's choice for its class: the same tile, so the same sums in the same order.
void gemm_tn(float* C, const float* A, const float* B, size_t M, size_t N, size_t K, size_t lda, size_t ldb, size_t ldc) noexcept {
  const int c = nn_class(N, K), chosen = nn_chosen[c];
  nn[c][chosen >= 0 ? chosen : 0].tn(C, A, B, M, N, K, lda, ldb, ldc);
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
#if defined(ATTN_WASM_RELAXED)
    Kernels k = simd::K<Arch, 2, 4>::table("wasm-relaxed-simd");
#else
    Kernels k = simd::K<Arch, 2, 4>::table("wasm-simd128");
#endif
    k.gemm_nt = gemm_nt;
    k.gemm_nn = gemm_nn;
    k.gemm_tn = gemm_tn;
    return k;
  }();
  return table;
}

std::string kernels_detail() {
  const std::string n = std::to_string(kLongNn);
  return describe("gemm_nt", nt, nt_chosen) + ", " + describe(("gemm_nn up to " + n).c_str(), nn[0], nn_chosen[0]) + ", " +
         describe(("gemm_nn past " + n).c_str(), nn[1], nn_chosen[1]);
}

}  // namespace attn
