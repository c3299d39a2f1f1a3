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

#include "base/limits.hpp"
#include "nn/generative.hpp"
#include "nn/module.hpp"

namespace attn {

// "generate": {"max_new_tokens", "temperature", "top_k", "top_p", "cache"}
struct GenerateSpec {
  int64_t max_new_tokens = 0;
  double temperature = 1.0;  // 0: greedy (argmax), no draws
  int64_t top_k = 0;         // 0: none
  double top_p = 0;          // 0: none; else in (0, 1]
  bool cache = true;
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
  std::vector<Step> steps;                  // traced: this step's forward
  // next(true) only: the window's whole forward, as a scenario's result shows the prompt's
  Collected outputs;                        // logits at every position and attention_weights
  std::vector<AttentionSpec> attention;     // the model's attention blocks
};

// The probabilities one row is sampled from (logits: V values, changed in place into them):
// / temperature (when > 0), top_k, top_p, softmax.
void next_token_distribution(float* logits, int64_t V, const GenerateSpec& spec);
// The k most probable ids of one row of V probabilities, p > 0, by p then id (a new token's top,
// the logit lens's readouts in the bindings).
std::vector<TopToken> top_tokens(const float* p, int64_t V, size_t k = kTopTokens);

class Generation {
 public:
  // model: a module with generative(); params: its state_dict names (named steps); gen: the
  // scenario's generator (multinomial draws); idx: the prompt (B,T) as the scenario gives it.
  // interventions: applied at their steps in every token's forward (positions in the whole sequence).
  Generation(Module& model, const ParamList& params, Generator& gen, const Tensor& idx, GenerateSpec spec, bool trace,
             const std::vector<Intervention>* interventions = nullptr);
  // The next token of every row: one forward (the window, with or without the cache, or one decode
  // step), the sampling, the ids appended. full: that forward computes the logits of every
  // position and the attention weights, returned in the token's outputs (a scenario's result shows
  // the prompt's forward so); else only the last position's logits, as nanoGPT's generate.
  GeneratedToken next(bool full = false);
  const std::vector<std::vector<int64_t>>& ids() const { return ids_; }
  const KVCache& cache() const { return cache_; }
  int64_t produced() const { return produced_; }

 private:
  Var forward(Context& ctx, GeneratedToken& tok, bool full);
  void sample(GeneratedToken& tok);
  Module& model_;
  Generative& lm_;
  const ParamList& params_;
  Generator& gen_;
  GenerateSpec spec_;
  bool trace_;
  const std::vector<Intervention>* interventions_;
  std::vector<std::vector<int64_t>> ids_;  // B rows, the prompt then the new ids
  KVCache cache_;
  int64_t produced_ = 0;
};

}  // namespace attn
