// softmax(x, axis=-1), seed 003: the numerically stable softmax the tutorial writes in numpy
//   x_max = np.max(x, axis, keepdims=True); e_x = np.exp(x - x_max); e_x / np.sum(e_x, axis)
// x: any shape -> same shape; the normalised axis sums to 1.
#include "modules.hpp"

namespace attn {
namespace {

class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim) : dim_(dim) {}
  Outputs forward(const std::vector<Tensor>& in, Context& ctx) override {
    const Tensor& x = in[0];
    if (!x.defined() || x.dim() < 1) fail("input 'x' must have at least 1 dimension");
    const int64_t n = x.dim();
    if (dim_ < -n || dim_ >= n) fail("dim (", dim_, ") is out of range for a ", n, "-d input: use -", n, "..", n - 1);
    const int64_t d = dim_ < 0 ? dim_ + n : dim_;
    // Bring the axis last, normalise rows, move it back.
    Tensor moved = x.transpose(d, n - 1).contiguous();
    Tensor out = softmax(moved).transpose(d, n - 1).contiguous();
    if (ctx.tracing()) {
      std::vector<std::string> dims;
      for (int64_t i = 0; i < n; ++i) dims.push_back(i == d ? "axis" : "dim" + std::to_string(i));
      Tensor ex = Tensor::empty(moved.shape());
      const int64_t w = moved.size(-1), rows = moved.numel() / (w ? w : 1);
      Shape max_shape = moved.shape();
      max_shape.back() = 1;
      Tensor xm = Tensor::empty(max_shape);
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = moved.data() + r * w;
        float m = row[0];
        for (int64_t j = 1; j < w; ++j) m = row[j] > m ? row[j] : m;
        xm.data()[r] = m;
        for (int64_t j = 0; j < w; ++j) ex.data()[r * w + j] = std::exp(row[j] - m);
      }
      ctx.step_dims("x_max", xm.transpose(d, n - 1).contiguous(), dims, "x_max = np.max(x, axis=axis, keepdims=True)",
                    "max over the axis (kernels().softmax, pass 1)");
      ctx.step_dims("e_x", ex.transpose(d, n - 1).contiguous(), dims, "e_x = np.exp(x - x_max)",
                    "exp(x - max) (kernels().softmax, pass 2)");
      ctx.step_dims("softmax", out, dims, "return e_x / np.sum(e_x, axis=axis, keepdims=True)", "softmax(x)");
    }
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
          {{"x", InputKind::Float, false, "(any shape)"}},
          {"output"},
          make};
}

}  // namespace attn
