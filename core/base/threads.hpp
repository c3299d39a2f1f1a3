// The core's threads: parallel_for splits a range of independent items (a GEMM's rows, the
// (batch, head) pairs of an attention, a batch of products) into contiguous chunks, runs them on a
// pool of std::threads and the calling one, and returns when all are done. The work is split,
// never the order of a sum: each item is computed by the same code in the same order whatever the
// thread count, so every number is the same to the bit at any count (tests/native/test_threads.cpp
// runs every fixture at 1, 2 and 3 threads). threads(): the environment's ATTENTION_THREADS (1 to
// 64), else the cores (at most 8). In WebAssembly's single-thread builds it is 1 and parallel_for is
// a plain call.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace attn {

int threads();

// A loop of fewer multiply-adds than this runs on the calling thread: waking the pool costs more
// (measured: a training step of the page's induction model, 2 x 32 wide on 16 tokens, ran slower
// on 2 threads than on 1 with no floor). 2^17 since the pool's threads spin between jobs (2^20
// before): on 2 threads a GPT decode step at T = 256 0.37-0.41 -> 0.33-0.35 ms natively, the
// induction model's training steps 7-12 % faster in WASM (docs/threads.md). Splitting or not never
// changes a number.
constexpr double kMinSplitWork = 1 << 17;
// Sets the pool's size (1 to 64; an error otherwise). Not while the pool computes.
void set_threads(int n);
// How many loops the pool has split so far (tests: the loops they mean to split did).
size_t split_loops();

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
template <class F>
void parallel_for(size_t n, size_t /*grain*/, F&& f, double /*work*/ = kMinSplitWork) {
  if (n) f(size_t{0}, n);
}
#else
// f(begin, end) for chunks of [0, n) whose boundaries are multiples of `grain`, every chunk at
// least `grain` items long (the last takes the rest): fewer than two grains, or `work` (the loop's
// multiply-adds, all items together) under kMinSplitWork, run as one call here.
void parallel_for_chunks(size_t n, size_t grain, const std::function<void(size_t, size_t)>& f);
template <class F>
void parallel_for(size_t n, size_t grain, F&& f, double work = kMinSplitWork) {
  if (n == 0) return;
  if (threads() == 1 || n < 2 * grain || work < kMinSplitWork) {
    f(size_t{0}, n);
    return;
  }
  parallel_for_chunks(n, grain, std::function<void(size_t, size_t)>(f));
}
#endif

// Elementwise and row-wise loops across the threads, each element or row by the same code as in one
// call: chunks of elements start at multiples of kElementGrain (a multiple of every vector width, so
// an element is in a kernel's vector loop or its tail exactly as in one call over all), rows are
// independent. The same bits at any thread count; loops of less work than kMinSplitWork stay on
// the calling thread. `cost`: a rough count of multiply-adds per element.
constexpr size_t kElementGrain = 4096;
template <class F>
void split_elements(int64_t n, double cost, F&& f) {  // f(first, count)
  parallel_for(static_cast<size_t>(n), kElementGrain, [&](size_t i0, size_t i1) { f(i0, i1 - i0); }, double(n) * cost);
}
template <class F>
void split_rows(int64_t rows, int64_t n, double cost, F&& f) {  // f(row), rows of n elements
  const size_t grain = std::max<size_t>(1, kElementGrain / static_cast<size_t>(std::max<int64_t>(n, 1)));
  parallel_for(static_cast<size_t>(rows), grain, [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) f(r);
  }, double(rows) * double(n) * cost);
}

}  // namespace attn
