// What a language model offers generation (run/generate.hpp): its forward over a window of ids,
// filling a KV cache, and one decode step on that cache. GPT (modules/gpt.cpp) implements it; the
// sampling loop that drives it lives a layer up, in run/.
#pragma once
#include <cstdint>
#include <vector>

#include "nn/module.hpp"

namespace attn {

// Every layer's keys and values so far: (B,H,capacity,D) buffers, rows [0, len) in use.
struct KVCache {
  struct Layer {
    Tensor k, v;
  };
  std::vector<Layer> layers;
  int64_t len = 0;
  Shape shape() const;              // (B,H,len,D) of one buffer; {} when there are no layers
  int64_t bytes() const;            // the rows in use, keys and values of every layer, float32
  int64_t allocated_bytes() const;  // the buffers as allocated (capacity rows)
};

// A language model generate can drive (a Module whose generative() returns it).
class Generative {
 public:
  virtual ~Generative() = default;
  virtual int64_t block_size() const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual const char* ids_input() const { return "idx"; }  // the name of its token-ids input
  virtual KVCache make_cache(int64_t B) const = 0;  // block_size rows per layer, unwritten (uninitialised)
  // The module's forward over a window idx (B,T), T <= block_size. last_only: logits of the last
  // position only, (B,1,V), as nanoGPT's forward without targets. cache: filled with every layer's
  // k and v (cache->len = T).
  virtual Outputs forward_window(const Var& idx, Context& ctx, KVCache* cache, bool last_only) = 0;
  // idx (B,1): each row's newest token, at position cache.len: logits (B,1,V); appends its k and v.
  virtual Var decode(const Var& idx, Context& ctx, KVCache& cache) = 0;
};

}  // namespace attn
