// Every SIMD kernel of every table this CPU runs (AVX-512, AVX2, SSE2 natively; WASM SIMD128)
// against its scalar twin on awkward sizes (1, lane-count +- 1, odd widths), including -inf
// entries and fully masked rows for softmax.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "attention.hpp"
#include "fixtures.hpp"
#include "kernels/kernels_simd.hpp"

namespace {

const size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 513};

std::vector<float> random_vector(size_t n, unsigned seed, float lo = -3.f, float hi = 3.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  return m;
}

const attn::Kernels& S() { return attn::scalar_kernels(); }
const attn::Kernels* g_table = nullptr;  // the SIMD table under test (EACH_SIMD_TABLE)
const attn::Kernels& V() { return *g_table; }
// Runs the rest of the test case once per SIMD table the CPU has.
#define EACH_SIMD_TABLE()                                             \
  g_table = GENERATE(Catch::Generators::from_range(attn::available_kernels())); \
  INFO("kernels: " << g_table->name)

}  // namespace

TEST_CASE("the SIMD tables are real vector architectures, the widest the CPU has first", "[kernels]") {
  EACH_SIMD_TABLE();
  CHECK(std::string(V().name) != "scalar");
  CHECK(&attn::simd_kernels() == attn::available_kernels().front());
}

TEST_CASE("SIMD softmax_backward equals the scalar twin, and a fully masked row gives zeros", "[kernels][softmax][backward]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    auto y = random_vector(n, 1, -3.f, 3.f), dy = random_vector(n, 2);
    S().softmax(y.data(), n);  // a real softmax row
    std::vector<float> a(n), b(n);
    S().softmax_backward(a.data(), y.data(), dy.data(), n);
    V().softmax_backward(b.data(), y.data(), dy.data(), n);
    INFO("n = " << n << " max diff " << max_diff(a, b));
    CHECK(max_diff(a, b) <= 1e-6);
    const std::vector<float> zeros(n, 0.f);
    V().softmax_backward(b.data(), zeros.data(), dy.data(), n);
    CHECK(max_diff(b, zeros) == 0.0);
  }
}

TEST_CASE("SIMD layer_norm_backward equals the scalar twin", "[kernels][backward]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    if (n < 2) continue;
    auto x = random_vector(n, 3), dy = random_vector(n, 4), gamma = random_vector(n, 5, 0.5f, 1.5f);
    std::vector<float> dx1(n), dx2(n), dg1(n, 0.1f), dg2(n, 0.1f), db1(n, -0.2f), db2(n, -0.2f);
    S().layer_norm_backward(dx1.data(), dg1.data(), db1.data(), x.data(), dy.data(), gamma.data(), n, 1e-5f);
    V().layer_norm_backward(dx2.data(), dg2.data(), db2.data(), x.data(), dy.data(), gamma.data(), n, 1e-5f);
    INFO("n = " << n << " dx " << max_diff(dx1, dx2) << " dgamma " << max_diff(dg1, dg2) << " dbeta " << max_diff(db1, db2));
    CHECK(max_diff(dx1, dx2) <= 1e-5);
    CHECK(max_diff(dg1, dg2) <= 1e-5);
    CHECK(max_diff(db1, db2) <= 1e-6);
  }
}

TEST_CASE("SIMD axpy, add, scale and relu equal their scalar twins", "[kernels]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    auto x = random_vector(n, 3), y = random_vector(n, 4);
    auto y1 = y, y2 = y;
    S().axpy(y1.data(), 0.37f, x.data(), n);
    V().axpy(y2.data(), 0.37f, x.data(), n);
    INFO("n = " << n);
    CHECK(max_diff(y1, y2) <= 1e-6);
    std::vector<float> s1(n), s2(n);
    S().add(s1.data(), x.data(), y.data(), n);
    V().add(s2.data(), x.data(), y.data(), n);
    CHECK(max_diff(s1, s2) == 0.0);
    auto c1 = x, c2 = x;
    S().scale(c1.data(), -1.7f, n);
    V().scale(c2.data(), -1.7f, n);
    CHECK(max_diff(c1, c2) == 0.0);
    S().relu(c1.data(), n);
    V().relu(c2.data(), n);
    CHECK(max_diff(c1, c2) == 0.0);
  }
}

TEST_CASE("SIMD gelu and gelu_backward equal their scalar twins (erf as PyTorch's AVX2 kernel)", "[kernels][backward]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    auto x = random_vector(n, 11, -6.f, 6.f), dy = random_vector(n, 12);
    if (n > 2) x[0] = 0.f, x[1] = -12.f;  // erf's centre and a tail where exp(-x^2) underflows
    std::vector<float> a(n), b(n), ga(n), gb(n);
    S().gelu(a.data(), x.data(), n);
    V().gelu(b.data(), x.data(), n);
    S().gelu_backward(ga.data(), x.data(), dy.data(), n);
    V().gelu_backward(gb.data(), x.data(), dy.data(), n);
    INFO("n = " << n << " gelu " << max_diff(a, b) << " backward " << max_diff(ga, gb));
    CHECK(max_diff(a, b) <= 1e-6);  // |A&S erf - erf| < 1.5e-7, times |x| / 2 <= 3
    CHECK(max_diff(ga, gb) <= 2e-6);
  }
}

TEST_CASE("SIMD gelu_tanh, silu and their backwards equal their scalar twins", "[kernels][backward]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    auto x = random_vector(n, 21, -8.f, 8.f), dy = random_vector(n, 22);
    if (n > 3) x[0] = 0.f, x[1] = -90.f, x[2] = 90.f;  // the centre, and tails where exp under- or overflows
    for (int which = 0; which < 2; ++which) {
      const auto f = which ? &attn::Kernels::silu : &attn::Kernels::gelu_tanh;
      const auto fb = which ? &attn::Kernels::silu_backward : &attn::Kernels::gelu_tanh_backward;
      std::vector<float> a(n), b(n), ga(n), gb(n);
      (S().*f)(a.data(), x.data(), n);
      (V().*f)(b.data(), x.data(), n);
      (S().*fb)(ga.data(), x.data(), dy.data(), n);
      (V().*fb)(gb.data(), x.data(), dy.data(), n);
      double rel = 0;  // against the larger of |y| and 1: values up to 90
      for (size_t i = 0; i < n; ++i) rel = std::max(rel, std::fabs(double(a[i]) - b[i]) / std::max(1.0, std::fabs(double(a[i]))));
      INFO("n = " << n << (which ? " silu " : " gelu_tanh ") << rel << " backward " << max_diff(ga, gb));
      CHECK(rel <= 1e-6);
      CHECK(max_diff(ga, gb) <= 4e-6);
    }
  }
}

TEST_CASE("SIMD rms_norm and its backward equal their scalar twins", "[kernels][backward]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    const auto x = random_vector(n, 31), gamma = random_vector(n, 32), dy = random_vector(n, 33);
    std::vector<float> a(n), b(n), ga(n), gb(n), dga(n, 0.5f), dgb(n, 0.5f);
    S().rms_norm(a.data(), x.data(), gamma.data(), n, 1e-6f);
    V().rms_norm(b.data(), x.data(), gamma.data(), n, 1e-6f);
    S().rms_norm_backward(ga.data(), dga.data(), x.data(), dy.data(), gamma.data(), n, 1e-6f);
    V().rms_norm_backward(gb.data(), dgb.data(), x.data(), dy.data(), gamma.data(), n, 1e-6f);
    INFO("n = " << n << " rms_norm " << max_diff(a, b) << " dx " << max_diff(ga, gb) << " dgamma " << max_diff(dga, dgb));
    CHECK(max_diff(a, b) <= 2e-6);
    CHECK(max_diff(ga, gb) <= 1e-5);
    CHECK(max_diff(dga, dgb) <= 2e-6);
  }
}

TEST_CASE("SIMD adam equals its scalar twin: AdamW, Adam with weight decay, none, over several steps", "[kernels][optim]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    for (int mode = 0; mode < 3; ++mode) {  // AdamW's decay on the weights, Adam's on the gradient, neither
      attn::AdamStep s{};
      s.decay = 1.f - 1e-3f * 0.1f, s.wd = mode == 2 ? 0.f : 0.1f, s.beta1 = 0.9f, s.beta2 = 0.999f;
      s.one_beta1 = 1.f - 0.9f, s.one_beta2 = 1.f - 0.999f, s.eps = 1e-8f;
      s.decoupled = mode == 0, s.coupled = mode == 1;
      auto pa = random_vector(n, 41), pb = pa;
      std::vector<float> ma(n, 0.f), mb(n, 0.f), va(n, 0.f), vb(n, 0.f);
      for (int step = 1; step <= 3; ++step) {
        const auto g = random_vector(n, 42 + static_cast<unsigned>(step), -1e-2f, 1e-2f);
        s.step_size = -1e-3f / (1.f - std::pow(0.9f, float(step))), s.bias2_sqrt = std::sqrt(1.f - std::pow(0.999f, float(step)));
        S().adam(pa.data(), ma.data(), va.data(), g.data(), n, s);
        V().adam(pb.data(), mb.data(), vb.data(), g.data(), n, s);
      }
      INFO("n = " << n << " mode " << mode << " p " << max_diff(pa, pb) << " m " << max_diff(ma, mb) << " v " << max_diff(va, vb));
      // against the largest moment: one is as small as its gradients (the other their squares), and
      // with -mfma the compiler may fuse a multiply and an add, a rounding fewer (AVX2, AVX-512)
      const auto rel = [](const std::vector<float>& a, const std::vector<float>& b) {
        double top = 1e-30;
        for (float x : a) top = std::max(top, std::fabs(double(x)));
        return max_diff(a, b) / top;
      };
      CHECK(max_diff(pa, pb) <= 1e-6);  // weights of up to 3 moved by about 1e-3 a step
      CHECK(rel(ma, mb) <= 1e-6);
      CHECK(rel(va, vb) <= 1e-6);
      CHECK(pa != random_vector(n, 41));  // the step moved them
    }
  }
}

TEST_CASE("SIMD softmax equals the scalar softmax, rows sum to 1", "[kernels][softmax]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    for (float spread : {1.f, 30.f, 1000.f}) {
      auto x = random_vector(n, 5, -spread, spread);
      auto a = x, b = x;
      S().softmax(a.data(), n);
      V().softmax(b.data(), n);
      double sum = 0;
      for (float v : b) sum += v;
      INFO("n = " << n << " spread " << spread << " max diff " << max_diff(a, b) << " sum " << sum);
      CHECK(max_diff(a, b) <= 1e-6);
      CHECK(std::fabs(sum - 1.0) <= 1e-5);
    }
  }
}

TEST_CASE("softmax of a partly -inf row puts zero weight there; a fully -inf row gives zeros, not NaN", "[kernels][softmax]") {
  EACH_SIMD_TABLE();
  const float ninf = -std::numeric_limits<float>::infinity();
  for (const attn::Kernels* k : {&S(), &V()}) {
    for (size_t n : kSizes) {
      std::vector<float> x(n, ninf);
      k->softmax(x.data(), n);
      for (float v : x) CHECK(v == 0.f);
      auto y = random_vector(n, 6);
      for (size_t i = 1; i < n; i += 2) y[i] = ninf;
      k->softmax(y.data(), n);
      double sum = 0;
      for (size_t i = 0; i < n; ++i) {
        CHECK(std::isfinite(y[i]));
        if (i % 2 == 1) CHECK(y[i] == 0.f);
        sum += y[i];
      }
      INFO(k->name << " n = " << n);
      CHECK(std::fabs(sum - 1.0) <= 1e-5);
    }
  }
}

TEST_CASE("SIMD layer_norm equals the scalar layer_norm", "[kernels]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    auto x = random_vector(n, 7), g = random_vector(n, 8), b = random_vector(n, 9);
    std::vector<float> y1(n), y2(n);
    S().layer_norm(y1.data(), x.data(), g.data(), b.data(), n, 1e-5f);
    V().layer_norm(y2.data(), x.data(), g.data(), b.data(), n, 1e-5f);
    INFO("n = " << n << " max diff " << max_diff(y1, y2));
    CHECK(max_diff(y1, y2) <= 2e-5);
  }
}

TEST_CASE("matmul and linear agree on both kernel tables, transposed views included", "[kernels][ops]") {
  for (int64_t M : {1, 3, 7}) for (int64_t K : {1, 5, 17}) for (int64_t N : {1, 4, 9}) {
    attn::Tensor a = attn::Tensor::from({2, M, K}, random_vector(static_cast<size_t>(2 * M * K), 10));
    attn::Tensor bt = attn::Tensor::from({2, N, K}, random_vector(static_cast<size_t>(2 * N * K), 11));
    attn::set_use_simd(false);
    auto ref = attn::matmul(a, bt.transpose(1, 2)).to_vector();
    auto ref_packed = attn::matmul(a, bt.transpose(1, 2).contiguous()).to_vector();
    attn::set_use_simd(true);
    auto simd = attn::matmul(a, bt.transpose(1, 2)).to_vector();
    INFO("M K N = " << M << " " << K << " " << N);
    CHECK(max_diff(ref, simd) <= 1e-5);
    CHECK(max_diff(ref, ref_packed) <= 1e-5);
    // naive triple loop as the reference of the reference
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += a.data()[(M + i) * K + k] * bt.data()[(N + j) * K + k];
        CHECK(std::fabs(ref[static_cast<size_t>((M + i) * N + j)] - s) <= 1e-4);
      }
  }
}

TEST_CASE("matmul reads a KV cache's view in place: the numbers of its packed copy, bit for bit", "[kernels][ops]") {
  // (B, H, S, D) rows [0, S) of a cache of 11 rows per head: each head's rows packed, the heads 11
  // rows apart, as a decode step's values; the keys transposed, as its scores' b (one query row:
  // a dot product per key, read in place, as from a packed copy of the keys; within float rounding
  // of the product on keys^T packed, which more query rows take)
  const int64_t B = 2, H = 3, cap = 11, S = 7, D = 9, M = 1;
  attn::Tensor cache = attn::Tensor::from({B, H, cap, D}, random_vector(static_cast<size_t>(B * H * cap * D), 30));
  attn::Tensor q = attn::Tensor::from({B, H, M, D}, random_vector(static_cast<size_t>(B * H * M * D), 31));
  attn::Tensor w = attn::Tensor::from({B, H, M, S}, random_vector(static_cast<size_t>(B * H * M * S), 32));
  const attn::Tensor view = cache.slice(2, 0, S);
  REQUIRE_FALSE(view.is_contiguous());
  for (bool simd : {false, true}) {
    attn::set_use_simd(simd);
    CHECK(attn::matmul(w, view).to_vector() == attn::matmul(w, view.contiguous()).to_vector());
    const std::vector<float> scores = attn::matmul(q, view.transpose(-2, -1)).to_vector();
    CHECK(scores == attn::matmul(q, view.contiguous().transpose(-2, -1)).to_vector());
    CHECK(max_diff(scores, attn::matmul(q, view.contiguous().transpose(-2, -1).contiguous()).to_vector()) < 1e-5);
  }
  attn::set_use_simd(true);
}

TEST_CASE("matmul_repeated gives the products on repeat_kv's copy bit for bit, from a KV cache's view", "[kernels][ops]") {
  // grouped-query heads: H = 6 query heads on Hk = 2 kv heads of a cache of 11 rows per head
  // (rows [0, S) used); one query row (a decode step) and 4 (a window), keys transposed and values
  const int64_t B = 2, H = 6, Hk = 2, cap = 11, S = 7, D = 9;
  attn::Tensor cache = attn::Tensor::from({B, Hk, cap, D}, random_vector(static_cast<size_t>(B * Hk * cap * D), 33));
  const attn::Tensor view = cache.slice(2, 0, S);
  attn::Tensor copy = attn::Tensor::empty({B, H, S, D});  // x.repeat_interleave(H / Hk, dim=1)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d)
          copy.data()[((b * H + h) * S + s) * D + d] = cache.data()[((b * Hk + h / (H / Hk)) * cap + s) * D + d];
  for (bool simd : {false, true}) {
    attn::set_use_simd(simd);
    for (int64_t M : {1, 4}) {
      const attn::Tensor q = attn::Tensor::from({B, H, M, D}, random_vector(static_cast<size_t>(B * H * M * D), 34));
      const attn::Tensor w = attn::Tensor::from({B, H, M, S}, random_vector(static_cast<size_t>(B * H * M * S), 35));
      const attn::Tensor scores = attn::matmul_repeated(q, view, true);
      CHECK(scores.shape() == attn::Shape{B, H, M, S});
      CHECK(scores.to_vector() == attn::matmul(q, copy.transpose(-2, -1)).to_vector());
      CHECK(attn::matmul_repeated(w, view, false).to_vector() == attn::matmul(w, copy).to_vector());
    }
  }
  attn::set_use_simd(true);
  const attn::Tensor q5 = attn::Tensor::zeros({B, 5, 1, D});  // 2 kv heads do not divide 5 query heads
  CHECK_THROWS_WITH(attn::matmul_repeated(q5, view, true), Catch::Contains("with Hk dividing H"));
  CHECK_THROWS_WITH(cache.expand(1, 3), Catch::Contains("needs a dimension of size 1"));
}

TEST_CASE("SIMD mul and masked_fill equal their scalar twins", "[kernels]") {
  EACH_SIMD_TABLE();
  for (size_t n : kSizes) {
    auto a = random_vector(n, 12), b = random_vector(n, 13);
    std::vector<float> m1(n), m2(n);
    S().mul(m1.data(), a.data(), b.data(), n);
    V().mul(m2.data(), a.data(), b.data(), n);
    INFO("n = " << n);
    CHECK(max_diff(m1, m2) == 0.0);
    std::vector<float> mask(n);
    for (size_t i = 0; i < n; ++i) mask[i] = (i * 7 + 3) % 3 == 0 ? 1.f : 0.f;
    auto f1 = a, f2 = a;
    S().masked_fill(f1.data(), mask.data(), -1e9f, n);
    V().masked_fill(f2.data(), mask.data(), -1e9f, n);
    CHECK(f1 == f2);
    for (size_t i = 0; i < n; ++i) CHECK(f1[i] == (mask[i] != 0.f ? -1e9f : a[i]));
  }
}

TEST_CASE("masked_fill broadcasts a mask over batch and heads like PyTorch", "[ops]") {
  attn::Tensor x = attn::Tensor::zeros({2, 3, 2, 4});
  attn::Tensor causal = attn::causal_mask(2, 4);  // (T, S): ones above the diagonal
  auto y = attn::masked_fill(x, causal, -1.f).to_vector();
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t t = (i / 4) % 2, s = i % 4;
    CHECK(y[i] == (s > t ? -1.f : 0.f));
  }
  attn::Tensor row = attn::Tensor::from({2, 1, 2, 1}, {1, 0, 0, 1});  // one flag per (batch, query) row
  auto z = attn::masked_fill(x, row, 5.f).to_vector();
  for (size_t i = 0; i < z.size(); ++i) {
    const size_t b = i / 24, t = (i / 4) % 2;
    CHECK(z[i] == ((b == 0 && t == 0) || (b == 1 && t == 1) ? 5.f : 0.f));
  }
}

TEST_CASE("SIMD gemm_nt equals the scalar gemm_nt on awkward tile remainders, with and without bias", "[kernels]") {
  EACH_SIMD_TABLE();
  for (size_t M : {1, 3, 4, 5, 9}) for (size_t N : {1, 2, 3, 4, 7}) for (size_t K : {1, 3, 8, 17, 70}) {
    const size_t lda = K + 2, ldb = K + 1, ldc = N + 3;  // strided rows, as views give
    auto A = random_vector(M * lda, 14), Bm = random_vector(N * ldb, 15), bias = random_vector(N, 16);
    for (const float* b : {static_cast<const float*>(nullptr), static_cast<const float*>(bias.data())}) {
      std::vector<float> c1(M * ldc, 7.f), c2(M * ldc, 7.f);
      S().gemm_nt(c1.data(), A.data(), Bm.data(), b, M, N, K, lda, ldb, ldc);
      V().gemm_nt(c2.data(), A.data(), Bm.data(), b, M, N, K, lda, ldb, ldc);
      INFO("M N K = " << M << " " << N << " " << K << (b ? " with bias" : "") << ", max diff " << max_diff(c1, c2));
      CHECK(max_diff(c1, c2) <= 1e-6 * static_cast<double>(K) * 9.0);  // |a|,|b| <= 3: K rounding steps of 9
      for (size_t m = 0; m < M; ++m)
        for (size_t n = N; n < ldc; ++n) CHECK(c2[m * ldc + n] == 7.f);  // padding untouched
    }
  }
}

TEST_CASE("SIMD gemm_nn equals the scalar gemm_nn on awkward sizes and strides", "[kernels]") {
  EACH_SIMD_TABLE();
  for (size_t M : {1, 3, 4, 5, 9}) for (size_t N : {1, 3, 4, 8, 9, 17, 33}) for (size_t K : {1, 2, 7, 64}) {
    const size_t lda = K + 1, ldb = N + 2, ldc = N + 3;
    auto A = random_vector(M * lda, 17), Bm = random_vector(K * ldb, 18);
    std::vector<float> c1(M * ldc, 7.f), c2(M * ldc, 7.f);
    S().gemm_nn(c1.data(), A.data(), Bm.data(), M, N, K, lda, ldb, ldc);
    V().gemm_nn(c2.data(), A.data(), Bm.data(), M, N, K, lda, ldb, ldc);
    INFO("M N K = " << M << " " << N << " " << K << ", max diff " << max_diff(c1, c2));
    CHECK(max_diff(c1, c2) <= 1e-6 * static_cast<double>(K) * 9.0);
    for (size_t m = 0; m < M; ++m)
      for (size_t n = N; n < ldc; ++n) CHECK(c2[m * ldc + n] == 7.f);
  }
}

TEST_CASE("SIMD gemm_nt equals the scalar one on nn.Linear sizes: many row panels, column tiles and K blocks", "[kernels]") {
  // The AVX2 / AVX-512 gemm_nt packs A in panels of 2-3 vectors of rows, runs 6-8 columns per tile
  // and K in blocks of up to 256 / 768: sizes that cross each of those edges.
  EACH_SIMD_TABLE();
  for (size_t M : {16, 17, 50, 100}) for (size_t N : {8, 9, 13, 24, 35}) for (size_t K : {16, 33, 800, 1601}) {
    const size_t lda = K + 3, ldb = K + 1, ldc = N + 2;
    auto A = random_vector(M * lda, 23, -1.f, 1.f), Bm = random_vector(N * ldb, 24, -1.f, 1.f), bias = random_vector(N, 25);
    std::vector<float> c1(M * ldc, 7.f), c2(M * ldc, 7.f);
    S().gemm_nt(c1.data(), A.data(), Bm.data(), bias.data(), M, N, K, lda, ldb, ldc);
    V().gemm_nt(c2.data(), A.data(), Bm.data(), bias.data(), M, N, K, lda, ldb, ldc);
    INFO("M N K = " << M << " " << N << " " << K << ", max diff " << max_diff(c1, c2));
    CHECK(max_diff(c1, c2) <= 1e-6 * static_cast<double>(K));  // |a|,|b| <= 1: K rounding steps of 1
    for (size_t m = 0; m < M; ++m)
      for (size_t n = N; n < ldc; ++n) CHECK(c2[m * ldc + n] == 7.f);
  }
}

TEST_CASE("gemm_nt gives a row the same numbers wherever it falls in a call of more than 8 rows", "[kernels]") {
  // The packed AVX2 / AVX-512 gemm_nt sums each output in one order whatever its panel, tile or
  // place: a token's projection does not depend on the tokens computed beside it. Calls of at most
  // 8 rows (a decode step) run the dot-product tiles instead, equal within rounding (tests above).
  const attn::Kernels* tables[] = {&S(), nullptr};
  tables[1] = GENERATE(Catch::Generators::from_range(attn::available_kernels()));
  for (const attn::Kernels* kt : tables) {
    INFO("kernels: " << kt->name);
    for (size_t K : {7, 64, 800}) {
      const size_t M = 53, N = 29, R = 13;
      auto A = random_vector(M * K, 26), Bm = random_vector(N * K, 27), bias = random_vector(N, 28);
      std::vector<float> all(M * N), some(R * N);
      kt->gemm_nt(all.data(), A.data(), Bm.data(), bias.data(), M, N, K, K, K, N);
      for (size_t m0 : {0, 1, 15, 16, 17, 40}) {
        kt->gemm_nt(some.data(), A.data() + m0 * K, Bm.data(), bias.data(), R, N, K, K, K, N);
        INFO("K = " << K << ", rows " << m0 << " to " << m0 + R - 1);
        CHECK(std::equal(some.begin(), some.end(), all.begin() + m0 * N));
      }
    }
  }
}

TEST_CASE("gemm_nt_packed gives gemm_nt's numbers bit for bit from weights packed ahead, over any column range", "[kernels]") {
  EACH_SIMD_TABLE();
  if (!V().pack_nt) {
    REQUIRE(V().gemm_nt_packed == nullptr);
    return;  // SSE2: no packed kernels
  }
  const size_t W = V().width, PC = V().packed_cols;
  REQUIRE(PC % W == 0);
  REQUIRE(attn::kGemmRows % PC == 0);  // linear()'s column chunks start on a packed panel
  for (size_t K : {0, 7, 64, 300, 800, 1030}) for (size_t N : {5, 29, 64, 100}) for (size_t M = W / 2 + 1; M <= W; ++M) {
    const size_t ldc = N + 3;
    auto A = random_vector(M * (K + 2), 40), Bm = random_vector(N * K + 1, 41), bias = random_vector(N, 42);
    std::vector<float> Bp(V().packed_floats(N, K) + 16);
    float* bp = Bp.data() + (16 - reinterpret_cast<uintptr_t>(Bp.data()) / 4 % 16) % 16;  // 64-byte aligned
    V().pack_nt(bp, Bm.data(), N, K, K);
    for (const float* b : {static_cast<const float*>(bias.data()), static_cast<const float*>(nullptr)}) {
      std::vector<float> ref(M * ldc, 7.f), got(M * ldc, 7.f);
      V().gemm_nt(ref.data(), A.data(), Bm.data(), b, M, N, K, K + 2, K, ldc);
      // the whole width in one call, then split where threads split it (at multiples of PC)
      V().gemm_nt_packed(got.data(), A.data(), bp, b, M, 0, N, K, K + 2, ldc);
      INFO("M K N = " << M << " " << K << " " << N << (b ? " with bias" : ""));
      CHECK(got == ref);
      std::fill(got.begin(), got.end(), 7.f);
      for (size_t n0 = 0; n0 < N; n0 += PC) V().gemm_nt_packed(got.data(), A.data(), bp, b, M, n0, std::min(N, n0 + PC), K, K + 2, ldc);
      CHECK(got == ref);
    }
  }
}

TEST_CASE("linear packs a weight at its second use and drops the copy after weights_changed(): the same numbers throughout", "[kernels][ops]") {
  EACH_SIMD_TABLE();
  attn::set_simd_kernels(g_table);
  const int64_t R = static_cast<int64_t>(V().width), IC = 70, OC = 150;  // one vector of rows
  attn::Tensor x = attn::Tensor::from({1, R, IC}, random_vector(static_cast<size_t>(R * IC), 50));
  attn::Tensor w = attn::Tensor::from({OC, IC}, random_vector(static_cast<size_t>(OC * IC), 51));
  attn::Tensor b = attn::Tensor::from({OC}, random_vector(static_cast<size_t>(OC), 52));
  const auto in_place = [&] {  // gemm_nt on the weights as they are now
    std::vector<float> y(static_cast<size_t>(R * OC));
    V().gemm_nt(y.data(), x.data(), w.data(), b.data(), static_cast<size_t>(R), OC, IC, IC, IC, OC);
    return y;
  };
  const std::vector<float> first = attn::linear(x, w, b).to_vector();
  CHECK(first == in_place());
  CHECK(attn::linear(x, w, b).to_vector() == first);  // the second use packs
  const bool packs = V().pack_nt != nullptr;
  CHECK((attn::packed_weights(w, V()) != nullptr) == packs);
  CHECK(attn::linear(x, w, b).to_vector() == first);
  // written in place: the copy is dropped, the next uses read the new values
  w.data()[3 * IC + 5] += 1.f;
  attn::weights_changed();
  CHECK(attn::packed_weights(w, V()) == nullptr);
  const std::vector<float> changed = attn::linear(x, w, b).to_vector();
  CHECK(changed == in_place());
  CHECK(changed != first);
  CHECK(attn::linear(x, w, b).to_vector() == changed);
  CHECK((attn::packed_weights(w, V()) != nullptr) == packs);
  // another tensor of the same shape, maybe in the same buffer: its own numbers
  w = attn::Tensor::from({OC, IC}, random_vector(static_cast<size_t>(OC * IC), 53));
  for (int use = 0; use < 3; ++use) CHECK(attn::linear(x, w, b).to_vector() == in_place());
  // a slice of a fused weight (rows 50 to 149 of a 3-way in_proj_weight) is packed on its own
  attn::Tensor fused = attn::Tensor::from({3 * OC, IC}, random_vector(static_cast<size_t>(3 * OC * IC), 54));
  for (int64_t part = 0; part < 3; ++part) {
    w = fused.slice(0, part * OC, (part + 1) * OC);
    const std::vector<float> y = in_place();
    for (int use = 0; use < 3; ++use) CHECK(attn::linear(x, w, b).to_vector() == y);
  }
#if defined(ATTN_CHECK_PACKED)
  if (packs) {  // a write without weights_changed() is caught at the next use
    w.data()[0] += 1.f;
    CHECK_THROWS_WITH(attn::linear(x, w, b), Catch::Contains("changed after it was packed"));
  }
#endif
  attn::set_simd_kernels(nullptr);
}

TEST_CASE("gemm_nt of one row (a decode step's far rows) gives the numbers of that row in a call of 3", "[kernels]") {
  // One row sums each output as the dot-product tiles do (kernels_simd.hpp K::gemm_nt), its rows
  // taken N / S apart: every output once, at its place, with its bias; the rest when N % S != 0.
  EACH_SIMD_TABLE();
  for (size_t N : {1, 3, 4, 5, 7, 64, 67, 130}) for (size_t K : {3, 16, 70, 771}) {
    const size_t ldb = K + 1;
    auto A = random_vector(3 * K, 29), Bm = random_vector(N * ldb, 30), bias = random_vector(N, 31);
    for (const float* b : {static_cast<const float*>(nullptr), static_cast<const float*>(bias.data())}) {
      std::vector<float> one(N + 2, 7.f), three(3 * N);
      V().gemm_nt(one.data(), A.data(), Bm.data(), b, 1, N, K, K, ldb, N);
      V().gemm_nt(three.data(), A.data(), Bm.data(), b, 3, N, K, K, ldb, N);
      INFO("N K = " << N << " " << K << (b ? " with bias" : ""));
      CHECK(std::equal(one.begin(), one.begin() + N, three.begin()));
      CHECK((one[N] == 7.f && one[N + 1] == 7.f));  // nothing past the row
    }
  }
}

TEST_CASE("gemm_tn equals gemm_nn on a transposed copy of A, in every table", "[kernels][backward]") {
  // The backward's A^T B (dW = g^T x, d(V) = weights^T g) reads A transposed in place with
  // gemm_nn's tiles. The vector tiles give identical sums; the scalar tail (the last N % lanes
  // columns) may round differently, as GCC's -O3 contracts a strided and a contiguous loop into
  // FMAs differently: so equal within rounding, padding untouched.
  const attn::Kernels* tables[] = {&S(), nullptr};
  tables[1] = GENERATE(Catch::Generators::from_range(attn::available_kernels()));
  for (const attn::Kernels* kt : tables) {
    INFO("kernels: " << kt->name);
    for (size_t M : {1, 3, 4, 5, 9}) for (size_t N : {1, 3, 4, 8, 9, 17, 33}) for (size_t K : {1, 2, 7, 64}) {
      const size_t lda = M + 2, ldb = N + 1, ldc = N + 3;  // A is (K x M) with strided rows
      auto A = random_vector(K * lda, 19), Bm = random_vector(K * ldb, 20);
      std::vector<float> at(M * K);
      for (size_t k = 0; k < K; ++k)
        for (size_t m = 0; m < M; ++m) at[m * K + k] = A[k * lda + m];
      std::vector<float> c1(M * ldc, 7.f), c2(M * ldc, 7.f);
      kt->gemm_nn(c1.data(), at.data(), Bm.data(), M, N, K, K, ldb, ldc);
      kt->gemm_tn(c2.data(), A.data(), Bm.data(), M, N, K, lda, ldb, ldc);
      INFO("M N K = " << M << " " << N << " " << K << ", max diff " << max_diff(c1, c2));
      CHECK(max_diff(c1, c2) <= 1e-6 * static_cast<double>(K) * 9.0);
      for (size_t m = 0; m < M; ++m)
        for (size_t n = N; n < ldc; ++n) CHECK(c2[m * ldc + n] == 7.f);
    }
  }
  std::vector<float> c3(3 * 5), c4(3 * 5);
  auto A = random_vector(7 * 3, 21), Bm = random_vector(7 * 5, 22);
  S().gemm_tn(c3.data(), A.data(), Bm.data(), 3, 5, 7, 3, 5, 5);
  for (size_t m = 0; m < 3; ++m)  // and it is A^T B: one entry by hand, in double
    for (size_t n = 0; n < 5; ++n) {
      double s = 0;
      for (size_t k = 0; k < 7; ++k) s += double(A[k * 3 + m]) * Bm[k * 5 + n];
      c4[m * 5 + n] = float(s);
    }
  CHECK(max_diff(c3, c4) <= 1e-5);
}

TEST_CASE("every GEMM register tile computes the same sums: a tile choice never changes a number", "[kernels]") {
  // kernels_wasm.cpp picks its tiles by timing them at start-up; natively the same templates with
  // other tiles must agree bit for bit with the tiles in use.
  using Arch = xsimd::sse2;
  const size_t M = 37, N = 29, K = 70;
  auto a = random_vector(M * K, 11), b = random_vector(N * K, 12);
  std::vector<float> ref_nt(M * N), ref_nn(M * N), c(M * N);
  attn::simd::K<Arch, 2, 4>::gemm_nt(ref_nt.data(), a.data(), b.data(), nullptr, M, N, K, K, K, N);
  attn::simd::K<Arch, 4, 3, 4, 2>::gemm_nn(ref_nn.data(), a.data(), b.data(), M, N, K, K, N, N);
  const auto nt = {attn::simd::K<Arch, 4, 3>::gemm_nt, attn::simd::K<Arch, 4, 2>::gemm_nt, attn::simd::K<Arch, 3, 3>::gemm_nt,
                   attn::simd::K<Arch, 1, 8>::gemm_nt};
  for (auto f : nt) {
    f(c.data(), a.data(), b.data(), nullptr, M, N, K, K, K, N);
    CHECK(max_diff(c, ref_nt) == 0.0);
  }
  // 8 x 3 with and without 6 x 4 tiles for a last block of 4 vectors (N = 29: 3 + 4 vectors + 1 column)
  const auto nn = {attn::simd::K<Arch, 4, 3, 2, 4>::gemm_nn, attn::simd::K<Arch, 4, 3, 6, 2>::gemm_nn,
                   attn::simd::K<Arch, 4, 3, 3, 3>::gemm_nn, attn::simd::K<Arch, 4, 3, 2, 2>::gemm_nn,
                   attn::simd::K<Arch, 4, 3, 8, 3>::gemm_nn, attn::simd::K<Arch, 4, 3, 8, 3, 0, false, 6>::gemm_nn};
  for (auto f : nn) {
    f(c.data(), a.data(), b.data(), M, N, K, K, N, N);
    CHECK(max_diff(c, ref_nn) == 0.0);
  }
}

TEST_CASE("packed gemm_nn / gemm_tn (kernels_wasm.cpp's tiles) give the unpacked tiles' numbers bit for bit", "[kernels]") {
  // PACK_NN copies each block of A k-major before the tiles read it: the same sums in the same
  // order, over several K blocks and row blocks, tile remainders of 4 and 1 rows, empty K, and
  // columns of C beyond N (ldc > N) left as they were.
  using Arch = xsimd::sse2;
  for (const size_t M : {size_t{1}, size_t{37}, size_t{100}})
    for (const size_t K : {size_t{0}, size_t{70}}) {
      const size_t N = 29, ldc = 33;
      CAPTURE(M, K);
      auto a = random_vector(M * K + 1, 21), b = random_vector(K * N + 1, 22);
      auto run = [&](auto gemm, bool trans) {
        std::vector<float> c(M * ldc, -7.f);
        if (trans) gemm(c.data(), a.data(), b.data(), M, N, K, M, N, ldc);  // A stored K x M
        else gemm(c.data(), a.data(), b.data(), M, N, K, K, N, ldc);
        return c;
      };
      for (const bool trans : {false, true}) {
        const auto ref = run(trans ? attn::simd::K<Arch, 4, 3, 4, 2, 16>::gemm_tn : attn::simd::K<Arch, 4, 3, 4, 2, 16>::gemm_nn, trans);
        for (size_t m = 0; m < M; ++m) CHECK(ref[m * ldc + N] == -7.f);
        const auto packed = trans
            ? std::vector<decltype(&attn::simd::K<Arch>::gemm_nn)>{attn::simd::K<Arch, 4, 3, 4, 2, 16, true>::gemm_tn,
                                                                                attn::simd::K<Arch, 4, 3, 6, 2, 16, true>::gemm_tn,
                                                                                attn::simd::K<Arch, 4, 3, 3, 3, 256, true>::gemm_tn,
                                                                                attn::simd::K<Arch, 4, 3, 2, 4, 256, true>::gemm_tn}
            : std::vector<decltype(&attn::simd::K<Arch>::gemm_nn)>{attn::simd::K<Arch, 4, 3, 4, 2, 16, true>::gemm_nn,
                                                                                attn::simd::K<Arch, 4, 3, 6, 2, 16, true>::gemm_nn,
                                                                                attn::simd::K<Arch, 4, 3, 3, 3, 256, true>::gemm_nn,
                                                                                attn::simd::K<Arch, 4, 3, 2, 4, 256, true>::gemm_nn};
        for (auto f : packed) CHECK(max_diff(run(f, trans), ref) == 0.0);
      }
    }
}
