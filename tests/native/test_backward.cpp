// The backward of every op (autograd.cpp) against central finite differences of a float64
// reference of the op written here from its definition: for L = sum(w * op(x)) with random w,
// dL/dx from the tape (float32, on the scalar and the SIMD kernels) must equal
// (L(x + h) - L(x - h)) / 2h computed in float64 (h = 1e-6), within atol 1e-4 + rtol 1e-3.
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "attention.hpp"
#include "tape/autograd.hpp"
#include "fixtures.hpp"

namespace {

using attn::Shape;
using attn::Var;
using Vec = std::vector<double>;
using Ref = std::function<Vec(const std::vector<Vec>&, const attn::Node&)>;
using Op = std::function<Var(attn::Context&, const std::vector<Var>&)>;

struct Case {
  const char* name;
  std::vector<Shape> shapes;  // the float inputs, all requiring gradients
  Op op;
  Ref ref;                    // float64 forward from the same inputs (and the op's node, for dropout's mask)
};

int64_t count(const Shape& s) { return attn::numel(s); }

// Row-major index helpers for the references.
struct Idx {
  Shape shape;
  int64_t operator()(std::initializer_list<int64_t> i) const {
    int64_t off = 0, k = 0;
    for (int64_t v : i) off = off * shape[static_cast<size_t>(k++)] + v;
    return off;
  }
};

void check_case(const Case& c, bool simd) {
  attn::set_use_simd(simd);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.5f, 1.5f);
  std::vector<attn::Tensor> xs;
  std::vector<Vec> x64;
  for (const Shape& s : c.shapes) {
    attn::Tensor t = attn::Tensor::empty(s);
    Vec d(static_cast<size_t>(count(s)));
    for (int64_t i = 0; i < t.numel(); ++i) d[static_cast<size_t>(i)] = t.data()[i] = u(rng);
    xs.push_back(t);
    x64.push_back(d);
  }
  attn::Generator gen(3);
  attn::Context ctx(gen, true, false, true);
  std::vector<Var> vars;
  for (size_t i = 0; i < xs.size(); ++i) vars.push_back(ctx.input(xs[i], "x" + std::to_string(i), true));
  const Var out = c.op(ctx, vars);
  const attn::Node& node = ctx.nodes()[static_cast<size_t>(out.id)];
  attn::Tensor w = attn::Tensor::empty(out.shape());
  Vec w64(static_cast<size_t>(w.numel()));
  for (int64_t i = 0; i < w.numel(); ++i) w64[static_cast<size_t>(i)] = w.data()[i] = u(rng);
  const std::vector<attn::Tensor> grads = attn::backward(ctx.nodes(), out.id, w);
  attn::set_use_simd(true);
  const auto loss = [&](const std::vector<Vec>& x) {
    const Vec y = c.ref(x, node);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += w64[i] * y[i];
    return s;
  };
  const double h = 1e-6;
  for (size_t k = 0; k < xs.size(); ++k) {
    INFO(c.name << (simd ? " [simd]" : " [scalar]") << ": d/d input " << k);
    const attn::Tensor& g = grads[static_cast<size_t>(vars[k].id)];
    REQUIRE(g.defined());
    const attn::Tensor gc = g.contiguous();
    double worst = 0;
    bool ok = true;
    for (size_t i = 0; i < x64[k].size(); ++i) {
      std::vector<Vec> xp = x64, xm = x64;
      xp[k][i] += h;
      xm[k][i] -= h;
      const double fd = (loss(xp) - loss(xm)) / (2 * h), got = gc.data()[i];
      const double d = std::fabs(got - fd);
      worst = std::max(worst, d);
      ok = ok && d <= 1e-4 + 1e-3 * std::fabs(fd);
    }
    INFO("max |tape - finite difference| = " << worst);
    CHECK(ok);
  }
}

Vec softmax_rows(const Vec& x, int64_t n, const std::vector<bool>* masked = nullptr) {
  Vec y(x.size(), 0.0);
  for (size_t r = 0; r * n < x.size(); ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < n; ++j)
      if (!masked || !(*masked)[r * n + j]) m = std::max(m, x[r * n + j]);
    if (m == -INFINITY) continue;  // a fully masked row: zeros
    for (int64_t j = 0; j < n; ++j)
      if (!masked || !(*masked)[r * n + j]) s += (y[r * n + j] = std::exp(x[r * n + j] - m));
    for (int64_t j = 0; j < n; ++j) y[r * n + j] /= s;
  }
  return y;
}

// (..., M, K) @ (..., K, N), b shared over the batch when bdims == 2
Vec matmul_ref(const Vec& a, const Vec& b, int64_t nb, int64_t M, int64_t K, int64_t N, bool shared, bool bt) {
  Vec y(static_cast<size_t>(nb * M * N), 0.0);
  for (int64_t i = 0; i < nb; ++i)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) {
          const int64_t bo = shared ? 0 : i * K * N;
          s += a[i * M * K + m * K + k] * (bt ? b[bo + n * K + k] : b[bo + k * N + n]);
        }
        y[i * M * N + m * N + n] = s;
      }
  return y;
}

// out[perm(index)] = x[index]: transposes and head splits as index maps
Vec permute(const Vec& x, const Shape& shape, std::vector<int> order) {
  Shape out_shape;
  for (int o : order) out_shape.push_back(shape[static_cast<size_t>(o)]);
  Vec y(x.size());
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < order.size(); ++d) off = off * out_shape[d] + idx[static_cast<size_t>(order[d])];
    y[static_cast<size_t>(off)] = x[i];
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  return y;
}

attn::Tensor causal(int64_t T) { return attn::causal_mask(T, T); }

std::vector<Case> elementwise_cases() {
  using attn::Context;
  using attn::Node;
  return {
      {"scale (div)", {{2, 3, 5}}, [](Context& c, const std::vector<Var>& v) { return attn::div_scalar(c, v[0], 1.7f); },
       [](const std::vector<Vec>& x, const Node&) { Vec y = x[0]; for (double& e : y) e /= static_cast<double>(1.7f); return y; }},
      {"scale (mul)", {{4, 3}}, [](Context& c, const std::vector<Var>& v) { return attn::mul_scalar(c, v[0], -0.3f); },
       [](const std::vector<Vec>& x, const Node&) { Vec y = x[0]; for (double& e : y) e *= static_cast<double>(-0.3f); return y; }},
      {"relu", {{3, 7}}, [](Context& c, const std::vector<Var>& v) { return attn::relu(c, v[0]); },
       [](const std::vector<Vec>& x, const Node&) { Vec y = x[0]; for (double& e : y) e = e > 0 ? e : 0; return y; }},
      {"exp", {{2, 5}}, [](Context& c, const std::vector<Var>& v) { return attn::exp(c, v[0]); },
       [](const std::vector<Vec>& x, const Node&) { Vec y = x[0]; for (double& e : y) e = std::exp(e); return y; }},
      {"gelu (erf), 37 elements: vector body and scalar tail", {{37}}, [](Context& c, const std::vector<Var>& v) { return attn::gelu(c, v[0]); },
       [](const std::vector<Vec>& x, const Node&) { Vec y = x[0]; for (double& e : y) e = e * 0.5 * (1 + std::erf(e / std::sqrt(2.0))); return y; }},
      {"add (broadcast over the batch, as x + pe)", {{2, 3, 4}, {1, 3, 4}},
       [](Context& c, const std::vector<Var>& v) { return attn::add(c, v[0], v[1]); },
       [](const std::vector<Vec>& x, const Node&) { Vec y = x[0]; for (size_t i = 0; i < y.size(); ++i) y[i] += x[1][i % 12]; return y; }},
      {"sub (keepdim broadcast, as x - x_max)", {{3, 5}, {3, 1}},
       [](Context& c, const std::vector<Var>& v) { return attn::sub(c, v[0], v[1]); },
       [](const std::vector<Vec>& x, const Node&) { Vec y = x[0]; for (size_t i = 0; i < y.size(); ++i) y[i] -= x[1][i / 5]; return y; }},
      {"dropout (the forward's mask)", {{4, 9}}, [](Context& c, const std::vector<Var>& v) { return attn::dropout(c, v[0], 0.4f); },
       [](const std::vector<Vec>& x, const Node& n) { Vec y = x[0]; for (size_t i = 0; i < y.size(); ++i) y[i] *= n.saved.data()[i]; return y; }},
      {"masked_fill -inf, then softmax with a fully masked row", {{2, 3, 4}},
       [](Context& c, const std::vector<Var>& v) {
         attn::Tensor m = attn::Tensor::zeros({3, 4});
         for (int64_t j = 0; j < 4; ++j) m.data()[4 + j] = 1.f;  // row 1 fully masked
         m.data()[2] = m.data()[11] = 1.f;
         attn::Attrs how;
         how.mask_input = "mask";
         return attn::softmax(c, attn::masked_fill(c, v[0], m, -INFINITY, how));
       },
       [](const std::vector<Vec>& x, const Node&) {
         std::vector<bool> masked(24, false);
         for (int b = 0; b < 2; ++b) {
           for (int j = 0; j < 4; ++j) masked[b * 12 + 4 + j] = true;
           masked[b * 12 + 2] = masked[b * 12 + 11] = true;
         }
         return softmax_rows(x[0], 4, &masked);
       }},
      {"softmax over dim 1 of 3", {{2, 4, 3}}, [](Context& c, const std::vector<Var>& v) { return attn::softmax(c, v[0], 1); },
       [](const std::vector<Vec>& x, const Node&) {
         const Shape s{2, 4, 3};
         return permute(softmax_rows(permute(x[0], s, {0, 2, 1}), 4), {2, 3, 4}, {0, 2, 1});
       }},
      {"amax over the last dim", {{3, 6}}, [](Context& c, const std::vector<Var>& v) { return attn::amax(c, v[0], -1); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y(3);
         for (int r = 0; r < 3; ++r) y[r] = *std::max_element(x[0].begin() + r * 6, x[0].begin() + r * 6 + 6);
         return y;
       }},
  };
}

std::vector<Case> matrix_cases() {
  using attn::Context;
  using attn::Node;
  return {
      {"linear with bias", {{2, 3, 5}, {4, 5}, {4}},
       [](Context& c, const std::vector<Var>& v) { return attn::linear(c, v[0], v[1], v[2]); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y = matmul_ref(x[0], x[1], 1, 6, 5, 4, false, true);
         for (size_t i = 0; i < y.size(); ++i) y[i] += x[2][i % 4];
         return y;
       }},
      {"matmul, a batch against a shared matrix (x @ W)", {{2, 3, 5}, {5, 4}},
       [](Context& c, const std::vector<Var>& v) { return attn::matmul(c, v[0], v[1]); },
       [](const std::vector<Vec>& x, const Node&) { return matmul_ref(x[0], x[1], 2, 3, 5, 4, true, false); }},
      {"matmul_bt, batched (queries @ keys^T)", {{2, 2, 3, 5}, {2, 2, 4, 5}},
       [](Context& c, const std::vector<Var>& v) { return attn::matmul_bt(c, v[0], v[1]); },
       [](const std::vector<Vec>& x, const Node&) { return matmul_ref(x[0], x[1], 4, 3, 5, 4, false, true); }},
      {"weighted_sum (weights @ values)", {{2, 3, 4}, {2, 4, 5}},
       [](Context& c, const std::vector<Var>& v) { return attn::weighted_sum(c, v[0], v[1]); },
       [](const std::vector<Vec>& x, const Node&) { return matmul_ref(x[0], x[1], 2, 3, 4, 5, false, false); }},
      {"layer_norm", {{2, 3, 6}, {6}, {6}},
       [](Context& c, const std::vector<Var>& v) { return attn::layer_norm(c, v[0], v[1], v[2]); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y(x[0].size());
         for (size_t r = 0; r < 6; ++r) {
           double m = 0, var = 0;
           for (int j = 0; j < 6; ++j) m += x[0][r * 6 + j] / 6;
           for (int j = 0; j < 6; ++j) var += (x[0][r * 6 + j] - m) * (x[0][r * 6 + j] - m) / 6;
           for (int j = 0; j < 6; ++j) y[r * 6 + j] = (x[0][r * 6 + j] - m) / std::sqrt(var + static_cast<double>(1e-5f)) * x[1][j] + x[2][j];
         }
         return y;
       }},
      {"gelu (tanh, GPT-2's gelu_new), 37 elements: vector body and scalar tail", {{37}},
       [](Context& c, const std::vector<Var>& v) { return attn::gelu_tanh(c, v[0]); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y = x[0];
         for (double& e : y) e = 0.5 * e * (1 + std::tanh(std::sqrt(2 / M_PI) * (e + 0.044715 * e * e * e)));
         return y;
       }},
      {"silu, 37 elements", {{37}}, [](Context& c, const std::vector<Var>& v) { return attn::silu(c, v[0]); },
       [](const std::vector<Vec>& x, const Node&) { Vec y = x[0]; for (double& e : y) e = e / (1 + std::exp(-e)); return y; }},
      {"mul (SwiGLU's gate * up)", {{2, 3, 7}, {2, 3, 7}}, [](Context& c, const std::vector<Var>& v) { return attn::mul(c, v[0], v[1]); },
       [](const std::vector<Vec>& x, const Node&) { Vec y = x[0]; for (size_t i = 0; i < y.size(); ++i) y[i] *= x[1][i]; return y; }},
      {"rms_norm (Llama), rows of 19: vector body and scalar tail", {{2, 2, 19}, {19}},
       [](Context& c, const std::vector<Var>& v) { return attn::rms_norm(c, v[0], v[1], 1e-6f); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y(x[0].size());
         for (size_t r = 0; r < 4; ++r) {
           double ss = 0;
           for (size_t j = 0; j < 19; ++j) ss += x[0][r * 19 + j] * x[0][r * 19 + j] / 19;
           for (size_t j = 0; j < 19; ++j) y[r * 19 + j] = x[1][j] * x[0][r * 19 + j] / std::sqrt(ss + static_cast<double>(1e-6f));
         }
         return y;
       }},
      {"layer_norm without bias (nanoGPT's bias=False)", {{3, 5}, {5}},
       [](Context& c, const std::vector<Var>& v) { return attn::layer_norm(c, v[0], v[1], Var()); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y(x[0].size());
         for (size_t r = 0; r < 3; ++r) {
           double m = 0, var = 0;
           for (int j = 0; j < 5; ++j) m += x[0][r * 5 + j] / 5;
           for (int j = 0; j < 5; ++j) var += (x[0][r * 5 + j] - m) * (x[0][r * 5 + j] - m) / 5;
           for (int j = 0; j < 5; ++j) y[r * 5 + j] = (x[0][r * 5 + j] - m) / std::sqrt(var + static_cast<double>(1e-5f)) * x[1][j];
         }
         return y;
       }},
      {"embedding (repeated ids accumulate)", {{5, 3}},
       [](Context& c, const std::vector<Var>& v) { return attn::embedding(c, v[0], {4, 1, 4, 0, 2, 4}, {2, 3}); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y;
         for (int id : {4, 1, 4, 0, 2, 4})
           for (int j = 0; j < 3; ++j) y.push_back(x[0][id * 3 + j]);
         return y;
       }},
  };
}

std::vector<Case> layout_cases() {
  using attn::Context;
  using attn::Node;
  return {
      {"split_heads", {{2, 3, 6}}, [](Context& c, const std::vector<Var>& v) { return attn::split_heads(c, v[0], 3); },
       [](const std::vector<Vec>& x, const Node&) { return permute(x[0], {2, 3, 3, 2}, {0, 2, 1, 3}); }},
      {"merge_heads", {{2, 3, 4, 2}}, [](Context& c, const std::vector<Var>& v) { return attn::merge_heads(c, v[0]); },
       [](const std::vector<Vec>& x, const Node&) { return permute(x[0], {2, 3, 4, 2}, {0, 2, 1, 3}); }},
      {"transpose then view", {{2, 3, 4}},
       [](Context& c, const std::vector<Var>& v) { return attn::view(c, attn::transpose(c, v[0], 1, 2), {2, 12}); },
       [](const std::vector<Vec>& x, const Node&) { return permute(x[0], {2, 3, 4}, {0, 2, 1}); }},
      {"chunk (the middle third of the last dim)", {{2, 3, 9}},
       [](Context& c, const std::vector<Var>& v) { return attn::chunk(c, v[0], 3, 1, -1); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y;
         for (int r = 0; r < 6; ++r)
           for (int j = 3; j < 6; ++j) y.push_back(x[0][r * 9 + j]);
         return y;
       }},
      {"split (torch.split's uneven middle slice: GPT's k columns under grouped-query heads)", {{2, 3, 9}},
       [](Context& c, const std::vector<Var>& v) { return attn::split(c, v[0], {4, 2, 3}, 1, 2); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y;
         for (int r = 0; r < 6; ++r)
           for (int j = 4; j < 6; ++j) y.push_back(x[0][r * 9 + j]);
         return y;
       }},
      {"concat", {{2, 3}, {2, 2}}, [](Context& c, const std::vector<Var>& v) { return attn::concat(c, {v[0], v[1], v[0]}); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y;
         for (int r = 0; r < 2; ++r) {
           for (int j = 0; j < 3; ++j) y.push_back(x[0][r * 3 + j]);
           for (int j = 0; j < 2; ++j) y.push_back(x[1][r * 2 + j]);
           for (int j = 0; j < 3; ++j) y.push_back(x[0][r * 3 + j]);
         }
         return y;
       }},
      {"cache_append: 2 new rows after 3 cached ones (constants), of a 6-row cache", {{2, 2, 2, 3}},
       [](Context& c, const std::vector<Var>& v) {
         attn::Tensor cache = attn::Tensor::zeros({2, 2, 6, 3});
         for (int64_t i = 0; i < cache.numel(); ++i) cache.data()[i] = 0.1f * static_cast<float>(i % 7);
         return attn::cache_append(c, v[0], cache, 3, "k");
       },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y;
         for (int bh = 0; bh < 4; ++bh) {
           for (int r = 0; r < 3; ++r)
             for (int d = 0; d < 3; ++d) y.push_back(static_cast<double>(0.1f * static_cast<float>((bh * 18 + r * 3 + d) % 7)));
           for (int r = 0; r < 2; ++r)
             for (int d = 0; d < 3; ++d) y.push_back(x[0][bh * 6 + r * 3 + d]);
         }
         return y;
       }},
      {"rope (positions 0, 3, 5; base 100) on (2, 2, 3, 4)", {{2, 2, 3, 4}},
       [](Context& c, const std::vector<Var>& v) {
         const std::vector<int64_t> pos = {0, 3, 5};
         return attn::rope(c, v[0], attn::rope_table(c, pos, 4, 100.0, false), attn::rope_table(c, pos, 4, 100.0, true));
       },
       [](const std::vector<Vec>& x, const Node&) {
         const double pos[] = {0, 3, 5};
         Vec y;
         for (int r = 0; r < 12; ++r)
           for (int j = 0; j < 4; ++j) {
             const double angle = pos[r % 3] / std::pow(100.0, static_cast<double>(2 * (j % 2)) / 4.0);
             const double rot = j < 2 ? -x[0][r * 4 + j + 2] : x[0][r * 4 + j - 2];
             y.push_back(x[0][r * 4 + j] * std::cos(angle) + rot * std::sin(angle));
           }
         return y;
       }},
      {"repeat_kv: 2 kv heads for 6 query heads", {{2, 2, 2, 3}},
       [](Context& c, const std::vector<Var>& v) { return attn::repeat_kv(c, v[0], 3); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y;
         for (int b = 0; b < 2; ++b)
           for (int h = 0; h < 6; ++h)
             for (int e = 0; e < 6; ++e) y.push_back(x[0][(b * 2 + h / 3) * 6 + e]);
         return y;
       }},
      {"stack on dim 1", {{2, 3}, {2, 3}}, [](Context& c, const std::vector<Var>& v) { return attn::stack(c, {v[0], v[1]}, 1); },
       [](const std::vector<Vec>& x, const Node&) {
         Vec y;
         for (int r = 0; r < 2; ++r)
           for (int k = 0; k < 2; ++k)
             for (int j = 0; j < 3; ++j) y.push_back(x[static_cast<size_t>(k)][r * 3 + j]);
         return y;
       }},
  };
}

std::vector<Case> loss_cases() {
  using attn::Context;
  using attn::Node;
  static const attn::Tensor target = [] {
    attn::Tensor t = attn::Tensor::empty({3, 4});
    for (int i = 0; i < 12; ++i) t.data()[i] = std::sin(static_cast<float>(i));
    return t;
  }();
  static const std::vector<int64_t> classes = {2, -100, 0, 3};
  return {
      {"mse_loss", {{3, 4}}, [](Context& c, const std::vector<Var>& v) { return attn::mse_loss(c, v[0], target); },
       [](const std::vector<Vec>& x, const Node&) {
         double s = 0;
         for (int i = 0; i < 12; ++i) s += (x[0][i] - target.data()[i]) * (x[0][i] - target.data()[i]);
         return Vec{s / 12};
       }},
      {"cross_entropy with ignore_index", {{4, 5}},
       [](Context& c, const std::vector<Var>& v) { return attn::cross_entropy(c, v[0], classes, -100); },
       [](const std::vector<Vec>& x, const Node&) {
         double s = 0;
         int n = 0;
         for (int r = 0; r < 4; ++r) {
           if (classes[r] == -100) continue;
           double m = -INFINITY, se = 0;
           for (int j = 0; j < 5; ++j) m = std::max(m, x[0][r * 5 + j]);
           for (int j = 0; j < 5; ++j) se += std::exp(x[0][r * 5 + j] - m);
           s += std::log(se) + m - x[0][r * 5 + classes[r]];
           ++n;
         }
         return Vec{s / n};
       }},
      {"sum", {{2, 5}}, [](Context& c, const std::vector<Var>& v) { return attn::sum(c, v[0]); },
       [](const std::vector<Vec>& x, const Node&) { double s = 0; for (double e : x[0]) s += e; return Vec{s}; }},
  };
}

// Interventions on a (B=2, T=3, C=4) step: each kind, the cells chosen by a 0/1 mask as
// Context::step builds it (position 1; batch 1; position 2; batch 1 at position 0).
attn::Tensor cells(int64_t b, int64_t t) {
  attn::Tensor m = attn::Tensor::zeros({2, 3, 4});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        if ((b < 0 || i == b) && (t < 0 || j == t)) m.data()[(i * 3 + j) * 4 + k] = 1.f;
  return m;
}

Var intervene_as(attn::Context& c, const Var& x, int set, int64_t b, int64_t t, float scale = 1.f, int64_t from = 0) {
  attn::Attrs a;
  a.set = set;
  a.scale = scale;
  a.from_batch = from;
  a.dim = 0;
  a.mean_dims = {0, 1};
  return attn::intervene(c, x, x, cells(b, t), a);
}

std::vector<Case> intervention_cases() {
  using attn::Context;
  using attn::Node;
  const auto at = [](int64_t i, int64_t j, int64_t k) { return static_cast<size_t>((i * 3 + j) * 4 + k); };
  return {
      {"intervene zero", {{2, 3, 4}}, [](Context& c, const std::vector<Var>& v) { return intervene_as(c, v[0], 0, -1, 1); },
       [at](const std::vector<Vec>& x, const Node&) {
         Vec y = x[0];
         for (int64_t i = 0; i < 2; ++i)
           for (int64_t k = 0; k < 4; ++k) y[at(i, 1, k)] = 0;
         return y;
       }},
      {"intervene scale", {{2, 3, 4}}, [](Context& c, const std::vector<Var>& v) { return intervene_as(c, v[0], 3, 1, -1, 0.5f); },
       [at](const std::vector<Vec>& x, const Node&) {
         Vec y = x[0];
         for (int64_t j = 0; j < 3; ++j)
           for (int64_t k = 0; k < 4; ++k) y[at(1, j, k)] *= 0.5;
         return y;
       }},
      {"intervene mean", {{2, 3, 4}}, [](Context& c, const std::vector<Var>& v) { return intervene_as(c, v[0], 1, -1, 2); },
       [at](const std::vector<Vec>& x, const Node&) {
         Vec y = x[0];
         for (int64_t k = 0; k < 4; ++k) {
           double m = 0;
           for (int64_t i = 0; i < 2; ++i)
             for (int64_t j = 0; j < 3; ++j) m += x[0][at(i, j, k)] / 6;
           for (int64_t i = 0; i < 2; ++i) y[at(i, 2, k)] = m;
         }
         return y;
       }},
      {"intervene from_batch", {{2, 3, 4}}, [](Context& c, const std::vector<Var>& v) { return intervene_as(c, v[0], 2, 1, 0, 1.f, 0); },
       [at](const std::vector<Vec>& x, const Node&) {
         Vec y = x[0];
         for (int64_t k = 0; k < 4; ++k) y[at(1, 0, k)] = x[0][at(0, 0, k)];
         return y;
       }},
  };
}

}  // namespace

TEST_CASE("the backward of every op equals float64 finite differences, scalar and SIMD", "[backward]") {
  std::vector<Case> cases = elementwise_cases();
  for (auto* more : {&matrix_cases, &layout_cases, &loss_cases, &intervention_cases})
    for (Case& c : (*more)()) cases.push_back(std::move(c));
  for (const Case& c : cases)
    for (bool simd : {false, true}) check_case(c, simd);
}

TEST_CASE("every differentiable op has a finite-difference case", "[backward]") {
  std::set<std::string> covered;
  for (auto* list : {&elementwise_cases, &matrix_cases, &layout_cases, &loss_cases, &intervention_cases})
    for (const Case& c : (*list)()) {
      attn::Generator gen(1);
      attn::Context ctx(gen, true, false, true);
      std::vector<Var> vars;
      for (const Shape& s : c.shapes) vars.push_back(ctx.input(attn::Tensor::zeros(s), "x", true));
      c.op(ctx, vars);
      for (const attn::Node& n : ctx.nodes()) covered.insert(attn::op_name(n.op));
    }
  for (int i = static_cast<int>(attn::Op::embedding); i < attn::kOpCount; ++i) {
    const attn::Op op = static_cast<attn::Op>(i);
    // constant tables: nothing to differentiate
    if (op == attn::Op::positional_encoding || op == attn::Op::rope_table || op == attn::Op::alibi_bias) continue;
    INFO("op " << attn::op_name(op));
    CHECK(covered.count(attn::op_name(op)) == 1);
  }
}
