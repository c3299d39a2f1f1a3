// Context::record: the only place a traced step is copied. See trace.hpp.
#include "trace.hpp"

#include "error.hpp"

namespace attn {

void Context::record(const char* name, const Tensor& t, std::initializer_list<const char*> dims, const char* code,
                     const char* cpp) {
  if (static_cast<int64_t>(dims.size()) != t.dim())
    fail("internal: step '", prefix_, name, "' names ", dims.size(), " dims for a tensor of shape ", shape_str(t.shape()));
  Step s{prefix_ + name, t.clone(), {}, code, cpp};
  for (const char* d : dims) s.dims.emplace_back(d);
  steps_.push_back(std::move(s));
}

void Context::step_dims(const char* name, const Tensor& t, const std::vector<std::string>& dims, const char* code,
                        const char* cpp) {
  if (!tracing_) return;
  steps_.push_back(Step{prefix_ + name, t.clone(), dims, code, cpp});
}

}  // namespace attn
