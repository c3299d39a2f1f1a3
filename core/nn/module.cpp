// A forward's outputs, checked and taken off the tape (nn/module.hpp).
#include "nn/module.hpp"

#include "base/error.hpp"
#include "math/ops.hpp"

namespace attn {

Collected collect_outputs(const Outputs& outputs, const Context& ctx) {
  Collected c;
  for (const NamedVar& o : outputs) {
    const int64_t i = o.value.defined() ? first_nan(o.value.t) : -1;
    if (i >= 0) fail_at("inputs", "output '", o.name, "' has NaN at index ", i, ": the inputs overflow float32 (largest finite value 3.4e38)");
    c.outputs.push_back({o.name, o.value.t});
    c.steps.push_back(ctx.step_of(o.value.id));
  }
  return c;
}

}  // namespace attn
