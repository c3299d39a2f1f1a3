// One benchmark session of seed 000's MultiHeadAttention, shared by the native driver
// (native_bench.cpp) and the WASM one (wasm_bench.cpp): the module built from the core's table
// with seed 0, then x = torch.randn(B, T, C) from the same generator -- what torch_bench.py draws
// after torch.manual_seed(0) -- so every backend computes output = mha(x, x, x) from one set of
// numbers. forward() is the timed call: the module's forward as the page runs it, no JSON.
#pragma once
#include <memory>
#include <vector>

#include "attention.hpp"

namespace attn::bench {

class MhaSession {
 public:
  // x: (B,T,C) -> output (B,T,C); H heads
  MhaSession(int64_t B, int64_t T, int64_t C, int64_t H) : gen_(0) {
    const ModuleInfo& info = module_info("MultiHeadAttention");
    module_ = info.make(make_config(info, {{"d_model", double(C)}, {"num_heads", double(H)}}), gen_);
    x_ = Tensor::empty({B, T, C});
    gen_.randn(x_.data(), static_cast<size_t>(x_.numel()));
    module_->parameters("", params_);
  }
  // Q = K = V = x, no mask, eval mode, tracing off, attention weights not kept (seed 000's forward
  // returns the output only).
  const Tensor& forward() {
    Context ctx(gen_, false, false);
    ctx.want_weights = false;
    Outputs out = module_->forward({x_, x_, x_, Tensor()}, ctx);
    output_ = out[0].value.t.contiguous();
    return output_;
  }
  Tensor& x() { return x_; }
  const Tensor& output() const { return output_; }
  const ParamList& params() const { return params_; }

 private:
  Generator gen_;
  std::unique_ptr<Module> module_;
  ParamList params_;
  Tensor x_, output_;
};

}  // namespace attn::bench
