// Generation token by token, as nanoGPT's GPT.generate does it (SCENARIO.md, "Generation"):
//   for _ in range(max_new_tokens):
//       idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
//       logits, _ = self(idx_cond); logits = logits[:, -1, :] / temperature
//       [top_k: logits[logits < v[:, [-1]]] = -inf]   [top_p: Hugging Face's TopPLogitsWarper]
//       probs = F.softmax(logits, dim=-1); idx_next = torch.multinomial(probs, num_samples=1)
//       idx = torch.cat((idx, idx_next), dim=1)
// with greedy decoding (argmax) at temperature 0, and a KV cache: the prompt's window runs once
// (prefill), then each new token computes only its own q, k, v and attends to the cached keys and
// values of the earlier positions (decode). The model is a Module with generative() (GPT,
// modules/gpt.cpp); the draws come from the scenario's Generator (random.hpp: multinomial1).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "module.hpp"

namespace attn {

struct Result;  // scenario.hpp

// "generate": {"max_new_tokens", "temperature", "top_k", "top_p", "cache"}
struct GenerateSpec {
  int64_t max_new_tokens = 0;
  double temperature = 1.0;  // 0: greedy (argmax), no draws
  int64_t top_k = 0;         // 0: none
  double top_p = 0;          // 0: none; else in (0, 1]
  bool cache = true;
};
constexpr int64_t kMaxNewTokens = 1024;  // per scenario (a page generates step by step)
constexpr int kTopTokens = 10;           // probabilities reported per new token

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
  virtual KVCache make_cache(int64_t B) const = 0;  // empty, block_size rows per layer
  // The module's forward over a window idx (B,T), T <= block_size. last_only: logits of the last
  // position only, (B,1,V), as nanoGPT's forward without targets. cache: filled with every layer's
  // k and v (cache->len = T).
  virtual Outputs forward_window(const Var& idx, Context& ctx, KVCache* cache, bool last_only) = 0;
  // idx (B,1): each row's newest token, at position cache.len: logits (B,1,V); appends its k and v.
  virtual Var decode(const Var& idx, Context& ctx, KVCache& cache) = 0;
};

struct TopToken {
  int64_t id;
  float p;
};

// One new token per batch row.
struct GeneratedToken {
  int64_t position = 0;                     // its index in each row of ids
  std::string mode;                         // "prefill" | "decode" (KV cache) | "full" (no cache)
  std::vector<int64_t> ids;                 // B: the new ids
  std::vector<std::vector<TopToken>> top;   // per row: the (at most kTopTokens) most probable ids, p > 0
  Tensor logits;                            // (B, V): the last position's logits, before temperature
  Shape cache_shape;                        // (B,H,t,D) after this step; {} without a cache
  int64_t cache_bytes = 0;                  // KVCache::bytes() after this step
  std::vector<Step> steps;                  // traced: this step's forward (the first token's: the result's)
};

// The probabilities one row is sampled from (logits: V values, changed in place into them):
// / temperature (when > 0), top_k, top_p, softmax.
void next_token_distribution(float* logits, int64_t V, const GenerateSpec& spec);

class Generation {
 public:
  // model: a module with generative(); params: its state_dict names (named steps); gen: the
  // scenario's generator (multinomial draws); idx: the prompt (B,T) as the scenario gives it.
  Generation(Module& model, const ParamList& params, Generator& gen, const Tensor& idx, GenerateSpec spec, bool trace);
  // The next token of every row: one forward (the window, with or without the cache, or one decode
  // step), the sampling, the ids appended. first: receives that forward's outputs, steps and
  // attention (run() makes them the result's: the prompt's forward).
  GeneratedToken next(Result* first = nullptr);
  const std::vector<std::vector<int64_t>>& ids() const { return ids_; }
  const KVCache& cache() const { return cache_; }
  int64_t produced() const { return produced_; }

 private:
  Var forward(Context& ctx, GeneratedToken& tok, Result* first);
  void sample(GeneratedToken& tok);
  Module& model_;
  Generative& lm_;
  const ParamList& params_;
  Generator& gen_;
  GenerateSpec spec_;
  bool trace_;
  std::vector<std::vector<int64_t>> ids_;  // B rows, the prompt then the new ids
  KVCache cache_;
  int64_t produced_ = 0;
};

}  // namespace attn
