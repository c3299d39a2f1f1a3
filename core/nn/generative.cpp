// The KV cache's sizes (nn/generative.hpp).
#include "nn/generative.hpp"

namespace attn {

Shape KVCache::shape() const {
  if (layers.empty()) return {};
  const Shape& s = layers[0].k.shape();
  return {s[0], s[1], len, s[3]};
}

int64_t KVCache::bytes() const {
  const Shape s = shape();
  return s.empty() ? 0 : 2 * static_cast<int64_t>(layers.size()) * numel(s) * static_cast<int64_t>(sizeof(float));
}

int64_t KVCache::allocated_bytes() const {
  return layers.empty() ? 0 : 2 * static_cast<int64_t>(layers.size()) * layers[0].k.numel() * static_cast<int64_t>(sizeof(float));
}

}  // namespace attn
