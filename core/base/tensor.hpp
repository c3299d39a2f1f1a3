// Tensor: float32, row-major, shape + strides over shared storage. view/transpose/slice make
// views without copying (as the seeds' view/transpose/chunk do); contiguous() copies only when
// the layout needs it. Ops live in ops.hpp; this file knows nothing of attention.
// Storage comes from a small pool of recently freed buffers (tensor.cpp): a forward pass that
// repeats (every keystroke on the page, every benchmark iteration) reuses its buffers instead of
// paying the allocator and the kernel's page faults again.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/threads.hpp"

namespace attn {

using Shape = std::vector<int64_t>;

std::string shape_str(const Shape& shape);  // "[2, 3, 8]"
// Bytes the pool keeps for reuse at most; 0 turns pooling off (leak checks use it to see malloc's own count).
void set_storage_pool_limit(size_t bytes);
// The memory budget: tensors alive at once may take this many bytes at most; an allocation above
// it throws attn::Error naming the shape (instead of an out-of-memory abort). 768 MiB by default,
// which keeps the WASM module (1 GiB maximum memory) well clear of its ceiling.
constexpr size_t kDefaultMemoryBudget = size_t{768} << 20;
void set_memory_budget(size_t bytes);
int64_t numel(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  static Tensor empty(const Shape& shape);
  static Tensor zeros(const Shape& shape);
  static Tensor full(const Shape& shape, float value);
  static Tensor from(const Shape& shape, std::vector<float> values);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end, as in PyTorch
  int64_t numel() const { return attn::numel(shape_); }
  bool is_contiguous() const;

  // Raw access; data() requires a contiguous tensor (check with is_contiguous()).
  float* data();
  const float* data() const;
  float* base() const { return storage_.get() + offset_; }  // first element, any layout
  const std::shared_ptr<float>& storage() const { return storage_; }  // its identity: math/packed.cpp

  // Views (no copy).
  Tensor view(Shape shape) const;              // contiguous only; one -1 is inferred
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor slice(int64_t d, int64_t start, int64_t end) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor expand(int64_t d, int64_t n) const;  // dim d, of size 1, seen n times (stride 0), as torch's expand

  Tensor contiguous() const;  // self if already contiguous, else a packed copy
  Tensor clone() const;       // always a packed copy
  std::vector<float> to_vector() const;

 private:
  std::shared_ptr<float> storage_;  // from the pool in tensor.cpp: freed buffers are kept for reuse
  int64_t offset_ = 0;
  Shape shape_, strides_;
};

// The rows (last dim) of a view of `shape` with `strides`, split across the threads (base/threads.hpp):
// f(row, offset of the row's first element from the view's start), each row once. Each chunk works
// out its first row's index and steps it from there.
template <class F>
void split_strided_rows(const Shape& shape, const Shape& strides, F&& f) {
  const int64_t nd = static_cast<int64_t>(shape.size()), n = numel(shape), inner = nd ? shape.back() : 1;
  if (n == 0) return;
  const size_t grain = std::max<size_t>(1, kElementGrain / static_cast<size_t>(inner));
  parallel_for(static_cast<size_t>(n / inner), grain, [&](size_t r0, size_t r1) {
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t i = nd - 2, rest = static_cast<int64_t>(r0); i >= 0; --i) {
      idx[static_cast<size_t>(i)] = rest % shape[static_cast<size_t>(i)];
      rest /= shape[static_cast<size_t>(i)];
    }
    for (size_t r = r0; r < r1; ++r) {
      int64_t off = 0;
      for (int64_t i = 0; i + 1 < nd; ++i) off += idx[static_cast<size_t>(i)] * strides[static_cast<size_t>(i)];
      f(r, off);
      for (int64_t i = nd - 2; i >= 0; --i) {
        if (++idx[static_cast<size_t>(i)] < shape[static_cast<size_t>(i)]) break;
        idx[static_cast<size_t>(i)] = 0;
      }
    }
  }, double(n));
}

}  // namespace attn
