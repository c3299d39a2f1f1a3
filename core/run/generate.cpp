// Generation (generate.hpp): the choice of forward per token (window or KV-cache decode), the
// sampling as nanoGPT's generate (temperature, top_k) with Hugging Face's top-p filter, and the
// per-token report (top probabilities, cache shape and bytes, traced steps).
#include "run/generate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/build.hpp"
#include "base/error.hpp"
#include "tape/graph.hpp"
#include "kernels/kernels.hpp"
#include "run/train.hpp"

namespace attn {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// nanoGPT: v, _ = torch.topk(logits, min(top_k, logits.size(-1))); logits[logits < v[:, [-1]]] = -inf
void keep_top_k(float* x, int64_t V, int64_t k) {
  std::vector<float> sorted(x, x + V);
  const int64_t kk = std::min(k, V);
  std::nth_element(sorted.begin(), sorted.begin() + (kk - 1), sorted.end(), std::greater<float>());
  const float kth = sorted[static_cast<size_t>(kk - 1)];
  for (int64_t j = 0; j < V; ++j)
    if (x[j] < kth) x[j] = kNegInf;
}

// Hugging Face's TopPLogitsWarper (min_tokens_to_keep=1):
//   sorted_logits, sorted_indices = torch.sort(scores, descending=False)
//   cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
//   sorted_indices_to_remove = cumulative_probs <= (1 - top_p); sorted_indices_to_remove[..., -1:] = 0
//   scores = scores.masked_fill(indices_to_remove (scattered back), -inf)
// cumsum accumulates in double on the CPU (at::acc_type<float>) and stores float; the threshold
// is compared in float, as a float tensor against a Python number is.
void keep_top_p(float* x, int64_t V, double top_p) {
  std::vector<int64_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x[a] < x[b]; });
  std::vector<float> p(static_cast<size_t>(V));
  for (int64_t j = 0; j < V; ++j) p[static_cast<size_t>(j)] = x[order[static_cast<size_t>(j)]];
  kernels().softmax(p.data(), static_cast<size_t>(V));
  const float threshold = static_cast<float>(1.0 - top_p);
  double cum = 0;
  for (int64_t j = 0; j + 1 < V; ++j) {  // the most probable (last) is always kept
    cum += p[static_cast<size_t>(j)];
    if (static_cast<float>(cum) <= threshold) x[order[static_cast<size_t>(j)]] = kNegInf;
  }
}

}  // namespace

std::vector<TopToken> top_tokens(const float* p, int64_t V, size_t k) {
  std::vector<TopToken> all;
  for (int64_t j = 0; j < V; ++j)
    if (p[j] > 0.f) all.push_back({j, p[j]});
  k = std::min(all.size(), k);
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [](const TopToken& a, const TopToken& b) { return a.p > b.p || (a.p == b.p && a.id < b.id); });
  all.resize(k);
  return all;
}

void next_token_distribution(float* x, int64_t V, const GenerateSpec& spec) {
  if (spec.temperature > 0) {  // logits[:, -1, :] / temperature: float32 divided by the float32 scalar
    const float t = static_cast<float>(spec.temperature);
    for (int64_t j = 0; j < V; ++j) x[j] /= t;
  }
  if (spec.top_k > 0) keep_top_k(x, V, spec.top_k);
  if (spec.top_p > 0) keep_top_p(x, V, spec.top_p);
  kernels().softmax(x, static_cast<size_t>(V));
}

Generation::Generation(Module& model, const ParamList& params, Generator& gen, const Tensor& idx, GenerateSpec spec, bool trace,
                       const std::vector<Intervention>* interventions)
    : model_(model), lm_(*model.generative()), params_(params), gen_(gen), spec_(spec), trace_(trace), interventions_(interventions) {
  if (!idx.defined() || idx.dim() != 2)
    fail_at("inputs.idx", "generate needs the prompt as token ids of shape (B, T)");
  // integers in [0, vocab_size), checked as the module's forward checks them (token_ids, the same
  // words; one fail_at's types, not a second copy of its code): a fraction is refused, never cut
  const std::vector<float> v = idx.to_vector();
  const char* name = lm_.ids_input();
  const int64_t vocab = lm_.vocab_size();
  for (size_t i = 0; i < v.size(); ++i) {
    const float f = v[i];
    if (!(f >= 0 && f < static_cast<float>(vocab)) || f != std::trunc(f))
      fail_at(std::string("inputs.") + name, "input '", name, "' value ", f, " at position ", i, " is not a token id: ids must be integers in [0, ",
              vocab, ") (vocab_size)");
  }
  const int64_t B = idx.size(0), T = idx.size(1);
  for (int64_t b = 0; b < B; ++b) ids_.emplace_back(v.begin() + b * T, v.begin() + (b + 1) * T);
}

// The forward this token needs: decode on the cache when it holds every earlier position of the
// window, else the window itself (nanoGPT's idx_cond), filling a fresh cache when there is one.
Var Generation::forward(Context& ctx, GeneratedToken& tok, bool full) {
  const int64_t B = static_cast<int64_t>(ids_.size()), L = static_cast<int64_t>(ids_[0].size());
  const int64_t block = lm_.block_size(), W = std::min(L, block);
  ctx.sequence_length = L;  // an intervention's position counts in the whole sequence
  if (spec_.cache && cache_.len > 0 && cache_.len == L - 1 && L <= block) {
    tok.mode = "decode";
    ctx.position_offset = L - 1;
    Tensor last = Tensor::empty({B, 1});
    float* lp = last.data();
    for (int64_t b = 0; b < B; ++b) lp[b] = static_cast<float>(ids_[b].back());
    return lm_.decode(ctx.input(last, lm_.ids_input()), ctx, cache_);
  }
  tok.mode = spec_.cache ? "prefill" : "full";
  ctx.position_offset = L - W;
  Tensor window = Tensor::empty({B, W});
  float* wp = window.data();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < W; ++t) wp[b * W + t] = static_cast<float>(ids_[b][L - W + t]);
  if (spec_.cache) cache_ = lm_.make_cache(B);  // fresh buffers: earlier steps' views stay as they were
  const Outputs out = lm_.forward_window(ctx.input(window, lm_.ids_input()), ctx, spec_.cache ? &cache_ : nullptr, !full);
  if (full) {
    tok.outputs = collect_outputs(out, ctx);
    tok.attention = model_.attention();
  }
  return out[0].value;
}

void Generation::sample(GeneratedToken& tok) {
  const int64_t B = tok.logits.size(0), V = tok.logits.size(1);
  Tensor probs = tok.logits.clone();
  for (int64_t b = 0; b < B; ++b) next_token_distribution(probs.data() + b * V, V, spec_);
  tok.ids.assign(static_cast<size_t>(B), 0);
  if (spec_.temperature > 0) {
    gen_.multinomial1(probs.data(), static_cast<size_t>(B), static_cast<size_t>(V), tok.ids.data());
  } else {  // greedy: the first largest logit (the filters never remove it)
    for (int64_t b = 0; b < B; ++b) {
      const float* row = tok.logits.data() + b * V;
      tok.ids[static_cast<size_t>(b)] = std::max_element(row, row + V) - row;
    }
  }
  for (int64_t b = 0; b < B; ++b) tok.top.push_back(top_tokens(probs.data() + b * V, V));
}

GeneratedToken Generation::next(bool full) {
  GeneratedToken tok;
  tok.position = static_cast<int64_t>(ids_[0].size());
  Context ctx(gen_, false, trace_ || interventions_);
  ctx.bind_parameters(params_);
  ctx.want_weights = full;  // only a full forward returns attention weights
  ctx.interventions = interventions_;
  Context::Sequences sequences(ctx, lm_.ids_input(), lm_.ids_input());
  const Var logits = forward(ctx, tok, full);
  if (kInterp && produced_ == 0) ctx.check_interventions("the model");
  if (trace_) tok.steps = ctx.steps();
  const int64_t B = logits.size(0), T = logits.size(1), V = logits.size(2);
  tok.logits = logits.t.slice(1, T - 1, T).contiguous().view({B, V}).clone();  // logits[:, -1, :]
  // data() and numel() out of the loop: in the threaded WASM build (JavaScript exceptions) each call
  // was a trip through JS
  const float* lp = tok.logits.data();
  for (int64_t i = 0, n = tok.logits.numel(); i < n; ++i)
    if (std::isnan(lp[i]))
      fail_at("inputs", "the logits of token ", tok.position, " hold NaN: the weights or inputs overflow float32");
  sample(tok);
  for (size_t b = 0; b < ids_.size(); ++b) ids_[b].push_back(tok.ids[b]);
  if (spec_.cache) {
    tok.cache_shape = cache_.shape();
    tok.cache_bytes = cache_.bytes();
  }
  ++produced_;
  return tok;
}

}  // namespace attn
