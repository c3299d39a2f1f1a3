// Run-time choice of the kernel table: the widest architecture the CPU reports (xsimd's cpuid),
// or the scalar reference when a test asks for it.
#include "kernels/kernels.hpp"

#include <atomic>
#include <xsimd/xsimd.hpp>

namespace attn {

#ifdef __EMSCRIPTEN__
const Kernels& kernels_wasm();
const Kernels& simd_kernels() { return kernels_wasm(); }
void set_simd_kernels(const Kernels*) {}
std::vector<const Kernels*> available_kernels() { return {&kernels_wasm()}; }
#else
const Kernels& kernels_sse2();
const Kernels& kernels_avx2();
const Kernels& kernels_avx512();
// Every table this CPU runs, widest first (xsimd's cpuid: AVX-512F, AVX2 + FMA, the SSE2 baseline).
std::vector<const Kernels*> available_kernels() {
  const auto cpu = xsimd::available_architectures();
  std::vector<const Kernels*> out;
  if (cpu.avx512f && cpu.avx512dq) out.push_back(&kernels_avx512());
  if (cpu.fma3_avx2) out.push_back(&kernels_avx2());
  out.push_back(&kernels_sse2());
  return out;
}
static std::atomic<const Kernels*> g_chosen{nullptr};
const Kernels& simd_kernels() {
  static const Kernels& best = *available_kernels().front();
  const Kernels* chosen = g_chosen;
  return chosen ? *chosen : best;
}
void set_simd_kernels(const Kernels* table) { g_chosen = table; }
std::string kernels_detail() { return simd_kernels().name; }
#endif

static std::atomic<bool> g_use_simd{true};
void set_use_simd(bool on) { g_use_simd = on; }
bool use_simd() { return g_use_simd; }
const Kernels& kernels() { return g_use_simd ? simd_kernels() : scalar_kernels(); }

}  // namespace attn
