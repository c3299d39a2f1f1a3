// softmax(x, axis=-1), seed 003: the numerically stable softmax the tutorial writes in numpy
//   x_max = np.max(x, axis, keepdims=True); e_x = np.exp(x - x_max); e_x / np.sum(e_x, axis)
// x: any shape -> same shape; the normalised axis sums to 1.
#include "modules/modules.hpp"

namespace attn {
namespace {

class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim) : dim_(dim) {}
  Outputs forward(const std::vector<Var>& in, Context& ctx) override {
    const Var& x = in[0];
    if (!x.defined() || x.dim() < 1) fail_at("inputs.x", "input 'x' must have at least 1 dimension");
    const int64_t n = x.dim();
    if (dim_ < -n || dim_ >= n) fail_at("config.dim", "dim (", dim_, ") is out of range for a ", n, "-d input: use -", n, "..", n - 1);
    const int64_t d = dim_ < 0 ? dim_ + n : dim_;
    std::vector<std::string> dims;
    for (int64_t i = 0; i < n; ++i) dims.push_back(i == d ? "axis" : "dim" + std::to_string(i));
    if (ctx.tracing()) {
      // The tutorial's two passes, shown; the output comes from the kernels' softmax (the same numbers).
      Var x_max = amax(ctx, x, dim_);
      ctx.step("x_max", x_max, dims, "x_max = np.max(x, axis=axis, keepdims=True)");
      Var e_x = exp(ctx, sub(ctx, x, x_max));
      ctx.step("e_x", e_x, dims, "e_x = np.exp(x - x_max)");
    }
    Var out = softmax(ctx, x, dim_);
    ctx.step("softmax", out, dims, "return e_x / np.sum(e_x, axis=axis, keepdims=True)");
    return {{"output", out}};
  }
  void parameters(const std::string&, ParamList&) override {}

 private:
  int64_t dim_;
};

std::unique_ptr<Module> make(const Config& c, Generator&) { return std::make_unique<Softmax>(c.i("dim")); }

}  // namespace

ModuleInfo info_softmax() {
  return {"softmax", "003", "softmax",
          "Numerically stable softmax: subtract the row max, exponentiate, divide by the sum.",
          {{"dim", ArgType::Int, false, -1, -8, 7, "axis to normalise"}},
          {{"x", InputKind::Float, false, InputRole::x, {"..."}, "", "(any shape)"}},
          {"output"},
          make,
          {}};
}

}  // namespace attn
