// Tensor storage and views. See tensor.hpp; the math on tensors is in ops.cpp.
#include "base/tensor.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <new>
#include <mutex>
#include <numeric>

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#endif

#include "base/error.hpp"
#include "base/threads.hpp"

namespace attn {

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t numel(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

namespace {

// Freed buffers by element count, up to a byte limit; uninitialised memory (empty() promises nothing).
class StoragePool {
 public:
  // Refuses (attn::Error) what would take the tensors alive at once above the budget.
  std::shared_ptr<float> take(int64_t count, const Shape& shape) {
    float* p = nullptr;
    const size_t n = static_cast<size_t>(count);  // fits: count * 4 <= budget, checked first
    {
      std::lock_guard<std::mutex> lock(mu_);
      const double want = static_cast<double>(count) * sizeof(float);
      if (want + static_cast<double>(live_) > static_cast<double>(budget_))
        fail("a tensor of shape ", shape_str(shape), " needs ", mib(want), " MiB, and with the ", mib(live_),
             " MiB in use that is above the core's memory budget of ", mib(budget_),
             " MiB: make the batch, the sequence length or the number of heads smaller");
      live_ += n * sizeof(float);
      auto it = free_.find(n);
      if (it != free_.end()) {
        p = it->second;
        free_.erase(it);
        bytes_ -= n * sizeof(float);
      }
    }
    if (!p) {
      try {
        p = allocate(n);
      } catch (const std::bad_alloc&) {
        std::lock_guard<std::mutex> lock(mu_);
        live_ -= n * sizeof(float);
#ifdef __EMSCRIPTEN__
        fail("a tensor of shape ", shape_str(shape), " (", mib(static_cast<double>(n) * sizeof(float)),
             " MiB) does not fit in this WebAssembly memory (", mib(static_cast<double>(emscripten_get_heap_max())),
             " MiB at most, its tensors and the rest): make the scenario smaller");
#else
        fail("a tensor of shape ", shape_str(shape), " (", mib(static_cast<double>(n) * sizeof(float)),
             " MiB) does not fit in this machine's free memory: make the scenario smaller");
#endif
      }
    }
    return std::shared_ptr<float>(p, [this, n](float* q) { give(q, n); });
  }
  void set_budget(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    budget_ = bytes;
  }
  void set_limit(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = bytes;
    trim();
  }
  ~StoragePool() {
    for (auto& [n, p] : free_) release(p);
  }

 private:
  // Buffers start on a cache line: a vector load that straddles two lines costs two (malloc's 16
  // bytes put every 64-byte AVX-512 load of a row across two).
  static float* allocate(size_t n) {
    return static_cast<float*>(::operator new[]((n ? n : 1) * sizeof(float), std::align_val_t(64)));
  }
  static void release(float* p) { ::operator delete[](p, std::align_val_t(64)); }
  static long long mib(double bytes) { return static_cast<long long>(bytes / (1 << 20) + 0.5); }
  void give(float* p, size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    live_ -= n * sizeof(float);
    if (n * sizeof(float) > limit_) {
      release(p);
      return;
    }
    free_.emplace(n, p);
    bytes_ += n * sizeof(float);
    trim();
  }
  void trim() {  // drop the largest buffers first until within the limit
    while (bytes_ > limit_ && !free_.empty()) {
      auto it = std::prev(free_.end());
      bytes_ -= it->first * sizeof(float);
      release(it->second);
      free_.erase(it);
    }
  }
  std::mutex mu_;
  std::multimap<size_t, float*> free_;
  // Natively a training step of a 768-wide layer at T=512 frees and takes back ~150 MB of
  // attention-sized buffers; page-faulting them in again each step cost 5% of the step. In WASM
  // freed memory stays in the heap anyway, so the pool only has to cover a page's forward.
#ifdef __EMSCRIPTEN__
  size_t bytes_ = 0, limit_ = size_t{64} << 20;
#else
  size_t bytes_ = 0, limit_ = size_t{256} << 20;
#endif
  size_t live_ = 0;                              // bytes of the tensors alive now
  size_t budget_ = kDefaultMemoryBudget;
};

StoragePool& pool() {
  static StoragePool* p = new StoragePool();  // never destroyed: tensors may outlive static destruction
  return *p;
}

}  // namespace

void set_storage_pool_limit(size_t bytes) { pool().set_limit(bytes); }
void set_memory_budget(size_t bytes) { pool().set_budget(bytes); }

static Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

Tensor Tensor::empty(const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) fail("tensor shape ", shape_str(shape), " has a negative size: sizes must be >= 0");
  Tensor t;
  t.storage_ = pool().take(attn::numel(shape), shape);
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  return t;
}

Tensor Tensor::zeros(const Shape& shape) { return full(shape, 0.f); }

Tensor Tensor::full(const Shape& shape, float value) {
  Tensor t = empty(shape);
  std::fill(t.storage_.get(), t.storage_.get() + t.numel(), value);
  return t;
}

Tensor Tensor::from(const Shape& shape, std::vector<float> values) {
  if (static_cast<int64_t>(values.size()) != attn::numel(shape))
    fail("data has ", values.size(), " values but shape ", shape_str(shape), " needs ",
         attn::numel(shape), ": give one value per element, row-major");
  Tensor t = empty(shape);
  std::copy(values.begin(), values.end(), t.storage_.get());
  return t;
}

int64_t Tensor::size(int64_t d) const {
  int64_t n = dim();
  if (d < -n || d >= n) fail("dimension ", d, " is out of range for a ", n, "-d tensor");
  return shape_[static_cast<size_t>(d < 0 ? d + n : d)];
}

// Row-major packed: each dim's stride is the product of the sizes after it (a dim of size 1 may
// have any stride). No allocation: data() asks this on every call.
bool Tensor::is_contiguous() const {
  int64_t s = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] != 1 && strides_[i] != s) return false;
    s *= shape_[i];
  }
  return true;
}

float* Tensor::data() {
  if (!is_contiguous()) fail("internal: data() on a non-contiguous tensor; call contiguous() first");
  return storage_.get() + offset_;
}
const float* Tensor::data() const { return const_cast<Tensor*>(this)->data(); }

Tensor Tensor::view(Shape shape) const {
  if (!is_contiguous()) fail("view() of a non-contiguous tensor: call contiguous() first");
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail("view shape ", shape_str(shape), " has more than one -1");
      infer = static_cast<int64_t>(i);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) shape[static_cast<size_t>(infer)] = known ? numel() / known : 0;
  if (attn::numel(shape) != numel())
    fail("cannot view a tensor of shape ", shape_str(shape_), " as ", shape_str(shape),
         ": element counts differ");
  Tensor t = *this;
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  return t;
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  int64_t n = dim();
  if (a < 0) a += n;
  if (b < 0) b += n;
  if (a < 0 || b < 0 || a >= n || b >= n) fail("transpose(", a, ", ", b, ") out of range for a ", n, "-d tensor");
  Tensor t = *this;
  std::swap(t.shape_[a], t.shape_[b]);
  std::swap(t.strides_[a], t.strides_[b]);
  return t;
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end) const {
  int64_t n = dim();
  if (d < 0) d += n;
  if (d < 0 || d >= n || start < 0 || end > shape_[d] || start > end)
    fail("slice [", start, ", ", end, ") of dimension ", d, " is out of range for shape ", shape_str(shape_));
  Tensor t = *this;
  t.offset_ += start * strides_[d];
  t.shape_[d] = end - start;
  return t;
}

Tensor Tensor::unsqueeze(int64_t d) const {
  int64_t n = dim();
  if (d < 0) d += n + 1;
  Tensor t = *this;
  int64_t stride = d < n ? strides_[d] * shape_[d] : 1;
  t.shape_.insert(t.shape_.begin() + d, 1);
  t.strides_.insert(t.strides_.begin() + d, stride);
  return t;
}

Tensor Tensor::expand(int64_t d, int64_t n) const {
  if (d < 0) d += dim();
  if (d < 0 || d >= dim() || shape_[d] != 1 || n < 1)
    fail("expand of dimension ", d, " to ", n, ": needs a dimension of size 1 of shape ", shape_str(shape_), " and n >= 1");
  Tensor t = *this;
  t.shape_[d] = n;
  t.strides_[d] = 0;
  return t;
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  Tensor out = empty(shape_);
  float* dst = out.storage_.get();
  const int64_t n = numel(), nd = dim();
  if (n == 0) return out;
  const float* src = storage_.get() + offset_;
  // A copy: split across the threads (base/threads.hpp) as any elementwise loop, no number changes.
  if (is_contiguous()) {
    split_elements(n, 1, [&](size_t i, size_t len) { std::memcpy(dst + i, src + i, len * sizeof(float)); });
    return out;
  }
  // Row by row in row-major order, copying the innermost dimension as a run (a memcpy when it is
  // packed: the element loop with a run-time stride was 11 % of seed 000's MHA training step).
  const int64_t inner = nd ? shape_[nd - 1] : 1, inner_stride = nd ? strides_[nd - 1] : 1;
  split_strided_rows(shape_, strides_, [&](size_t r, int64_t off) {
    float* row = dst + static_cast<int64_t>(r) * inner;
    if (inner_stride == 1) std::memcpy(row, src + off, static_cast<size_t>(inner) * sizeof(float));
    else
      for (int64_t j = 0; j < inner; ++j) row[j] = src[off + j * inner_stride];
  });
  return out;
}

std::vector<float> Tensor::to_vector() const {
  Tensor c = contiguous();
  return std::vector<float>(c.data(), c.data() + c.numel());
}

}  // namespace attn
