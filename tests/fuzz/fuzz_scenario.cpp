// libFuzzer target: any bytes as a scenario. Parsing and running must either succeed or throw
// attn::Error; never crash, leak, hit undefined behaviour or return NaN outputs silently.
// Training fields too ("loss", "grads", "optimize": the backward of every op and the optimizers run
// under the sanitizers), and generation ("generate": sampling, top_k, top_p, the KV cache, the
// window sliding past block_size). Built by scripts/fuzz.sh with clang 14 (-fsanitize=fuzzer,address,
// undefined); seeds: tests/fixtures and tests/fixtures/train.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "scenario/scenario.hpp"
#include "base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    attn::Scenario s = attn::parse_scenario(text);
    // Keep each run small so the fuzzer explores breadth, not one huge tensor.
    int64_t elements = 0;
    for (const auto& in : s.inputs) elements += attn::numel(in.shape);
    for (const auto& [name, value] : s.config)
      if (value > 256) return 0;
    if (elements > (1 << 16)) return 0;
    if (s.optimize && s.steps > 8) s.steps = 8;  // breadth: a few steps exercise every update rule
    if (s.generate && s.generation.max_new_tokens > 12) s.generation.max_new_tokens = 12;  // enough to slide past a small block_size
    attn::Result r = attn::run(s);
    for (const auto& o : r.outputs) {
      const attn::Tensor c = o.value.contiguous();
      for (int64_t i = 0; i < c.numel(); ++i)
        if (std::isnan(c.data()[i])) std::abort();  // run() must have rejected it
    }
    if (r.has_loss && !std::isfinite(r.loss)) std::abort();  // a diverged loss must be an attn::Error
    for (const auto& g : r.generated)  // every new id is a token of the vocabulary (its top list's too)
      for (size_t b = 0; b < g.ids.size(); ++b)
        if (g.ids[b] < 0 || g.ids[b] >= g.logits.size(1) || g.top[b].empty()) std::abort();
    (void)attn::result_to_json(r);
  } catch (const attn::Error&) {
  }
  return 0;
}
