// The cache of packed weights (math/packed.hpp): a short list searched under a lock (one entry
// per weight a model has used, a few dozen), a global count of writes to compare with. Native
// builds only (WebAssembly: packed.hpp); the scalar and SSE2 tables have no pack_nt.
#include "math/packed.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/error.hpp"

namespace attn {

namespace {

std::atomic<uint64_t> g_writes{0};

constexpr size_t kPackedBytes = size_t{256} << 20;
constexpr size_t kEntries = 1024;

struct Entry {
  std::weak_ptr<float> storage;
  const float* first;
  int64_t rows, cols;
  const Kernels* table;
  uint64_t writes;  // g_writes when last seen
  std::shared_ptr<float> packed;  // from its second use
  size_t bytes() const { return table->packed_floats(static_cast<size_t>(rows), static_cast<size_t>(cols)) * sizeof(float); }
};

struct Cache {
  std::mutex mutex;
  std::vector<Entry> entries;
  size_t bytes = 0;

  void drop_packed(Entry& e) {
    if (e.packed) bytes -= e.bytes();
    e.packed.reset();
  }
  // entries whose tensors are gone
  void drop_expired() {
    for (size_t i = entries.size(); i-- > 0;)
      if (entries[i].storage.expired()) {
        drop_packed(entries[i]);
        entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i));
      }
  }
};

Cache& cache() {
  static Cache c;
  return c;
}

bool same_storage(const std::weak_ptr<float>& a, const std::shared_ptr<float>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

std::shared_ptr<float> pack(const Tensor& w, const Kernels& k, size_t floats) {
  float* p = static_cast<float*>(std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64));
  if (!p) return nullptr;
  std::shared_ptr<float> out(p, [](float* q) { std::free(q); });
  k.pack_nt(p, w.data(), static_cast<size_t>(w.size(0)), static_cast<size_t>(w.size(1)), static_cast<size_t>(w.size(1)));
  return out;
}

}  // namespace

void weights_changed() { g_writes.fetch_add(1); }

std::shared_ptr<const float> packed_weights(const Tensor& w, const Kernels& k) {
  if (!k.pack_nt || w.dim() != 2 || !w.is_contiguous() || !w.storage()) return nullptr;
  const uint64_t writes = g_writes.load();
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  const auto find = [&]() -> Entry* {
    for (Entry& x : c.entries)
      if (x.first == w.data() && x.rows == w.size(0) && x.cols == w.size(1) && x.table == &k && same_storage(x.storage, w.storage()))
        return &x;
    return nullptr;
  };
  Entry* e = find();
  if (!e) {  // its first use; the copies of tensors gone since are freed here
    c.drop_expired();
    if (c.entries.size() < kEntries) c.entries.push_back(Entry{w.storage(), w.data(), w.size(0), w.size(1), &k, writes, nullptr});
    return nullptr;
  }
  if (e->writes != writes) {  // written since: a first use again
    c.drop_packed(*e);
    e->writes = writes;
    return nullptr;
  }
  const size_t bytes = e->bytes(), floats = bytes / sizeof(float);
  if (!e->packed) {
    if (c.bytes + bytes > kPackedBytes) {
      c.drop_expired();  // may move the entries (never this one, whose tensor lives)
      e = find();
      if (c.bytes + bytes > kPackedBytes) return nullptr;
    }
    e->packed = pack(w, k, floats);
    if (!e->packed) return nullptr;
    c.bytes += bytes;
  }
#if defined(ATTN_CHECK_PACKED)
  else {
    const std::shared_ptr<float> fresh = pack(w, k, floats);
    if (fresh && std::memcmp(fresh.get(), e->packed.get(), floats * sizeof(float)) != 0)
      fail("linear: a ", w.size(0), " x ", w.size(1), " weight changed after it was packed, with no weights_changed() "
           "after the write (math/packed.hpp): its packed copy is out of date");
  }
#endif
  return e->packed;
}

}  // namespace attn
