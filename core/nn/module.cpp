// A forward's outputs, checked and taken off the tape (nn/module.hpp).
#include "nn/module.hpp"

#include <cmath>

#include "base/error.hpp"

namespace attn {

Collected collect_outputs(const Outputs& outputs, const Context& ctx) {
  Collected c;
  for (const NamedVar& o : outputs) {
    if (o.value.defined()) {
      const Tensor t = o.value.t.contiguous();
      const float* p = t.data();
      for (int64_t i = 0, n = t.numel(); i < n; ++i)
        if (std::isnan(p[i]))
          fail_at("inputs", "output '", o.name, "' has NaN at index ", i, ": the inputs overflow float32 (largest finite value 3.4e38)");
    }
    c.outputs.push_back({o.name, o.value.t});
    c.steps.push_back(ctx.step_of(o.value.id));
  }
  return c;
}

}  // namespace attn
