// Context of one forward pass: the generator (dropout draws from it), train/eval mode, and the
// trace of named intermediate steps. Recording is a single branch when tracing is off: no copy,
// no allocation (dims are an initializer_list of literals).
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "random.hpp"
#include "tensor.hpp"

namespace attn {

struct Step {
  std::string name;               // the seed's variable name, prefixed by submodule ("attn.q")
  Tensor value;                   // a packed copy, taken when recorded
  std::vector<std::string> dims;  // one name per dimension: "batch", "heads", "seq", "d_head"…
  std::string code;               // the PyTorch line of the seed that computes it
  std::string cpp;                // the core call that computes it here
};

class Context {
 public:
  Context(Generator& gen, bool train, bool tracing) : gen(gen), train(train), tracing_(tracing) {}
  Generator& gen;
  const bool train;
  // false: the caller reads only "output" (the benchmark), so attention need not keep its
  // (B,H,T,S) weights, which at long T are the largest tensor of the pass.
  bool want_weights = true;
  bool tracing() const { return tracing_; }

  void step(const char* name, const Tensor& t, std::initializer_list<const char*> dims, const char* code,
            const char* cpp) {
    if (tracing_) record(name, t, dims, code, cpp);
  }
  // For tensors whose rank varies (softmax over any tensor): call only when tracing().
  void step_dims(const char* name, const Tensor& t, const std::vector<std::string>& dims, const char* code,
                 const char* cpp);
  const std::vector<Step>& steps() const { return steps_; }
  std::vector<Step> take_steps() { return std::move(steps_); }

  // Prefixes the names of the steps a submodule records while the scope lives ("encoder.0.").
  class Scope {
   public:
    Scope(Context& ctx, const std::string& prefix) : ctx_(ctx), saved_(ctx.prefix_.size()) { ctx.prefix_ += prefix; }
    ~Scope() { ctx_.prefix_.resize(saved_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Context& ctx_;
    size_t saved_;
  };

 private:
  void record(const char* name, const Tensor& t, std::initializer_list<const char*> dims, const char* code,
              const char* cpp);
  bool tracing_;
  std::string prefix_;
  std::vector<Step> steps_;
};

}  // namespace attn
