// Ops: shape checks and loops over rows; the arithmetic inside a row goes through kernels().
// Each op allocates its output once and nothing inside its loops.
#include "math/ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "base/build.hpp"
#include "base/error.hpp"
#include "base/threads.hpp"
#include "kernels/kernels.hpp"
#include "math/packed.hpp"

namespace attn {

Tensor linear(const Tensor& x_, const Tensor& weight, const Tensor& bias) {
  const int64_t IC = weight.size(1), OC = weight.size(0);
  if (x_.size(-1) != IC)
    fail("linear: input's last dimension (", x_.size(-1), ") must equal the layer's in_features (", IC, ")");
  Tensor x = x_.contiguous(), w = weight.contiguous();
  Shape out_shape = x.shape();
  out_shape.back() = OC;
  Tensor out = Tensor::empty(out_shape);
  const int64_t R = IC ? x.numel() / IC : numel(Shape(x.shape().begin(), x.shape().end() - 1));
  const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  const auto u = [](int64_t v) { return static_cast<size_t>(v); };
  // Rows in chunks of kGemmRows across the threads: each output of gemm_nt is the same chain of
  // multiply-adds whatever rows share its call, in calls of more than half a vector of rows
  // (kernels_simd.hpp), and every chunk has at least kGemmRows: the same numbers at any thread count.
  // Fewer rows than two chunks (a few tokens, a decode step): the output columns instead, in
  // chunks of kGemmRows weight rows, every call with all the rows: a column's chain of
  // multiply-adds depends on K and on the call's row count only, never on the columns beside it.
  const Kernels& k = kernels();
  const float* bp = b.defined() ? b.data() : nullptr;
  const double work = double(R) * double(OC) * double(IC);
  // More than half a vector of rows and at most one: the weights packed ahead where the table can
  // (math/packed.hpp), the columns across the threads as below (kGemmRows a multiple of the
  // packed panels' width: tests/native/test_kernels.cpp): the same numbers as gemm_nt's, bit for bit.
#if !defined(__EMSCRIPTEN__)
  if (k.gemm_nt_packed && u(R) > k.width / 2 && u(R) <= k.width)
    if (const std::shared_ptr<const float> packed = packed_weights(w, k)) {
      parallel_for(u(OC), kGemmRows, [&](size_t c0, size_t c1) {
        k.gemm_nt_packed(out.data(), x.data(), packed.get(), bp, u(R), c0, c1, u(IC), u(IC), u(OC));
      }, work);
      return out;
    }
#endif
  if (u(R) >= 2 * kGemmRows) {
    parallel_for(u(R), kGemmRows, [&](size_t r0, size_t r1) {
      k.gemm_nt(out.data() + r0 * u(OC), x.data() + r0 * u(IC), w.data(), bp, r1 - r0, u(OC), u(IC), u(IC), u(IC), u(OC));
    }, work);
  } else {
    parallel_for(u(OC), kGemmRows, [&](size_t c0, size_t c1) {
      k.gemm_nt(out.data() + c0, x.data(), w.data() + c0 * u(IC), bp ? bp + c0 : nullptr, u(R), c1 - c0, u(IC), u(IC), u(IC), u(OC));
    }, work);
  }
  return out;
}

Tensor matmul(const Tensor& a_, const Tensor& b) {
  if (a_.dim() < 2 || b.dim() < 2) fail("matmul needs tensors of at least 2 dimensions, got ", shape_str(a_.shape()), " and ", shape_str(b.shape()));
  const int64_t M = a_.size(-2), K = a_.size(-1), N = b.size(-1);
  if (b.size(-2) != K)
    fail("matmul: ", shape_str(a_.shape()), " @ ", shape_str(b.shape()), ": inner dimensions (", K, " and ", b.size(-2), ") must match");
  Shape batch(a_.shape().begin(), a_.shape().end() - 2);
  const bool b_batched = b.dim() > 2;
  if (b_batched && Shape(b.shape().begin(), b.shape().end() - 2) != batch)
    fail("matmul: batch dimensions of ", shape_str(a_.shape()), " and ", shape_str(b.shape()), " must match");
  const int64_t nb = numel(batch);
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape);
  Tensor a = a_.contiguous();
  // gemm_nn wants b as K rows of N: values already are; keys.transpose(-2, -1) is packed once
  // (S x D values: small next to the product), unless a is one row (below). Each batch entry's
  // K x N block read where it is when its rows are packed, whatever the entries' strides: a decode
  // step's values are a view of the KV cache, each head's rows `capacity` rows after the last
  // head's, and copying every layer's (12 x 129 x 64 floats at GPT-2's step 128) cost a 124M
  // model's WASM decode 0.7 ms of 31.
  const bool rows_packed = b.strides().back() == 1 && (K <= 1 || b.strides()[b.strides().size() - 2] == N);
  // One row of a against keys^T read where the keys are (a decode step's q @ k.transpose(-2, -1): k
  // a view of the KV cache, each key a packed row): gemm_nt's dot products, one per key, where
  // gemm_nn needed keys^T packed, a copy of every layer's cached keys at every decode step.
  const size_t key_stride = static_cast<size_t>(N > 1 ? b.strides().back() : K);
  const bool keys_in_place = M == 1 && !rows_packed && (K <= 1 || b.strides()[b.strides().size() - 2] == 1);
  Tensor bc = rows_packed || keys_in_place ? b : b.contiguous();
  const auto u = [](int64_t v) { return static_cast<size_t>(v); };
  const Kernels& k = kernels();
  float* op = out.data();
  const float *ap = a.data(), *bp = bc.base();
  // batch entry i's first float in bc: i split over b's batch dims, each times its stride
  const auto b_entry = [&](int64_t i) {
    if (!b_batched) return int64_t{0};
    int64_t off = 0;
    for (int64_t d = bc.dim() - 3; d >= 0; --d) {
      const int64_t n = bc.size(d);
      off += (i % n) * bc.strides()[u(d)];
      i /= n;
    }
    return off;
  };
  // one product per batch entry, the entries across the threads
  parallel_for(u(nb), 1, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) {
      const float* bi = bp + b_entry(static_cast<int64_t>(i));
      if (keys_in_place) k.gemm_nt(op + i * u(N), ap + i * u(K), bi, nullptr, 1, u(N), u(K), u(K), key_stride, u(N));
      else k.gemm_nn(op + i * u(M * N), ap + i * u(M * K), bi, u(M), u(N), u(K), u(K), u(N), u(N));
    }
  }, double(nb) * double(M) * double(N) * double(K));
  return out;
}

Tensor matmul_repeated(const Tensor& a, const Tensor& b, bool transpose_b) {
  if (a.dim() != 4 || b.dim() != 4 || a.size(0) != b.size(0) || b.size(1) < 1 || a.size(1) % b.size(1) != 0)
    fail("matmul_repeated: ", shape_str(a.shape()), " and ", shape_str(b.shape()),
         " must be (B,H,M,K) and (B,Hk,.,.) with Hk dividing H");
  const int64_t B = a.size(0), H = a.size(1), Hk = b.size(1), M = a.size(2);
  Tensor heads = b.unsqueeze(2).expand(2, H / Hk);  // (B,Hk,H/Hk,.,.): query head h reads kv head h / (H/Hk)
  if (transpose_b) heads = heads.transpose(-2, -1);
  const Tensor out = matmul(a.contiguous().view({B, Hk, H / Hk, M, a.size(3)}), heads);
  return out.view({B, H, M, out.size(-1)});
}

Tensor attention_heads(const Tensor& q_, const Tensor& k_, const Tensor& v_, int64_t H, const ScoreRule& rule, Tensor* weights) {
  const bool shapes = q_.dim() == 3 && k_.dim() == 3 && v_.dim() == 3 && k_.shape() == v_.shape() && q_.size(0) == k_.size(0) &&
                      H > 0 && q_.size(2) % H == 0;
  // Hk key/value heads: as many as query heads, or (grouped, where pretrained models are built) a
  // divisor of them. Builds without them (the page's first view) call it from seed 000 only
  // (divided, no mask, as many kv heads as heads; attention_spec.hpp): what they need compiled alone.
  const int64_t D = shapes ? q_.size(2) / H : 0, Hk = kPretrained && D > 0 ? k_.size(2) / D : H;
  if constexpr (kPretrained) {
    if (!shapes || Hk == 0 || k_.size(2) != Hk * D || H % Hk != 0)
      fail("attention_heads: q ", shape_str(q_.shape()), ", k ", shape_str(k_.shape()), ", v ", shape_str(v_.shape()),
           " must be (B,T,H*D), (B,S,Hk*D), (B,S,Hk*D) with H (", H, ") dividing the last dimension and Hk dividing H");
  } else if (!shapes || q_.size(2) != k_.size(2)) {
    fail("attention_heads: q ", shape_str(q_.shape()), ", k ", shape_str(k_.shape()), ", v ", shape_str(v_.shape()),
         " must be (B,T,H*D), (B,S,H*D), (B,S,H*D) with H (", H, ") dividing the last dimension");
  }
  const Tensor q = q_.contiguous(), k = k_.contiguous(), v = v_.contiguous();
  const int64_t B = q.size(0), T = q.size(1), C = q.size(2), S = k.size(1), Ck = kPretrained ? k.size(2) : C;
  const bool causal = kPretrained && rule.causal, divide = !kPretrained || rule.divide;
  const int64_t group = kPretrained ? H / Hk : 1;
  Tensor out = Tensor::empty({B, T, C});
  if (weights) *weights = Tensor::empty({B, H, T, S});
  // Query rows per block: a block's scores (TB x S) stay in cache from the QK^T product through
  // the softmax to the weights-V product, where the unfused ops stream (B,H,T,S) through memory.
  constexpr int64_t TB = 64;
  const Kernels& kern = kernels();
  // This head's K^T (D x Sp, rows LK floats apart) and values (S x D, packed): B of the two products.
  // Sp: S rounded up to whole vectors of the table in use; the columns from S on stay 0 (the
  // buffer starts zeroed, only keys are written), so the scores' product runs in vector tiles
  // only, rows Sp floats apart, where the last S % width columns (all of them for a few tokens
  // on AVX-512) went through gemm_nn's tail: a copy of those columns padded to a vector, and back.
  // The tail ran the same tiles on that copy: the same numbers, to the bit, with two copies fewer.
  // LK = Sp + 16: rows of S = 512 floats (2 KiB) apart would all fall in 2 of L1's 64 sets, which then
  // hold 24 lines, not the 192 a block of 64 rows x 3 vectors reads again for every 8 query rows;
  // the values, read in place, are C floats apart (3 KiB at d_model 768: 4 sets). Packed, both
  // products run 10-25 % faster (AVX-512, 1x512x768).
  const int64_t vw = static_cast<int64_t>(kern.width), Sp = (S + vw - 1) / vw * vw, LK = Sp + 16;
  const auto line = [](int64_t n) { return (n + 15) / 16 * 16; };
  const auto u = [](int64_t x) { return static_cast<size_t>(x); };
  // x / scale is x * (1 / scale) to the bit when scale is a power of two (sqrt of head dims 4, 16,
  // 64, 256): a multiply then, a division otherwise
  int scale_exp = 0;
  const bool exact_inverse = std::frexp(rule.scale, &scale_exp) == 0.5f && std::isnormal(1.f / rule.scale);
  // The keys a block computes: all S, or for a causal block those up to its last row's (ops.hpp):
  // the masked keys past them add +0 to every sum. A block ends on a multiple of TB, itself a
  // multiple of the softmax's stride of two vectors (32 floats at most), so every key before the
  // end meets the same partial sum as in the whole row.
  static_assert(TB % 32 == 0, "a causal block's keys end on the softmax's stride");
  const bool stop_early = causal && !weights && std::isinf(rule.fill) && rule.fill < 0;
  const auto keys = [&](int64_t t_end) { return stop_early ? std::min(S, t_end) : S; };
  // One head of one batch entry, with its buffers: K^T (kt), the values (vh), a block's scores.
  const auto head = [&](int64_t b, int64_t h, float* kt, float* vh, float* scores) {
    // K.transpose(-2, -1) of this head's key head, packed (D x S) as matmul packs it; 16 keys at a
    // time, so each row of kt is written a cache line at a time while those keys' rows stay in L1
    const float* kp = k.data() + b * S * Ck + h / group * D;
    for (int64_t s0 = 0; s0 < S; s0 += 16) {
      const int64_t s1 = std::min(S, s0 + 16);
      for (int64_t d = 0; d < D; ++d)
        for (int64_t s = s0; s < s1; ++s) kt[d * LK + s] = kp[s * Ck + d];
    }
    const float* vp = v.data() + b * S * Ck + h / group * D;
    for (int64_t s = 0; s < S; ++s) std::memcpy(vh + s * D, vp + s * Ck, u(D) * sizeof(float));
    for (int64_t t0 = 0; t0 < T; t0 += TB) {
      const int64_t tb = std::min(TB, T - t0), n = keys(t0 + tb);
      kern.gemm_nn(scores, q.data() + (b * T + t0) * C + h * D, kt, u(tb), u(stop_early ? (n + vw - 1) / vw * vw : Sp), u(D), u(C),
                   u(LK), u(Sp));
      float* sc = scores;  // tb rows of Sp: n scores, then padding that nothing below reads
      // row by row, each scaled (and masked) just before its softmax reads it (from L1: at S = 4096
      // the block of scores is L2's size)
      for (int64_t r = 0; r < tb; ++r) {
        float* row = sc + r * Sp;
        if (!divide) kern.scale(row, rule.scale, u(n));
        else if (exact_inverse) kern.scale(row, 1.f / rule.scale, u(n));
        else
          for (int64_t i = 0; i < n; ++i) row[i] /= rule.scale;  // divided, as div_scalar (not * 1/scale)
        if (causal) std::fill(row + std::min(n, t0 + r + 1), row + n, rule.fill);  // key j > query t
        kern.softmax(row, u(n));
      }
      if (weights)
        for (int64_t r = 0; r < tb; ++r)
          std::memcpy(weights->data() + ((b * H + h) * T + t0 + r) * S, sc + r * Sp, u(S) * sizeof(float));
      kern.gemm_nn(out.data() + (b * T + t0) * C + h * D, sc, vh, u(tb), u(D), u(n), u(Sp), u(D), u(C));
    }
  };
  // The (batch, head) pairs across the threads, each chunk with its own buffers (one buffer for
  // the three, each start on a cache line: a vector load across two lines costs two); a pair is
  // computed the same way whichever chunk holds it.
  parallel_for(u(B * H), 1, [&](size_t p0, size_t p1) {
    std::vector<float> buf(static_cast<size_t>(line(D * LK) + line(S * D) + line(std::min(TB, T) * Sp) + 16));
    float* const kt = buf.data() + (16 - (reinterpret_cast<uintptr_t>(buf.data()) / sizeof(float)) % 16) % 16;
    float* const vh = kt + line(D * LK);
    float* const scores = vh + line(S * D);
    for (size_t pair = p0; pair < p1; ++pair) head(static_cast<int64_t>(pair) / H, static_cast<int64_t>(pair) % H, kt, vh, scores);
  }, (stop_early ? 1.0 : 2.0) * double(B) * double(T) * double(S) * double(C));
  return out;
}

Tensor softmax(const Tensor& x) {
  const int64_t n = x.dim() ? x.size(-1) : 1;
  if (n == 0) return x.clone();
  const Tensor xc = x.contiguous();
  Tensor out = Tensor::empty(x.shape());
  float* p = out.data();
  const float* xp = xc.data();
  const int64_t rows = out.numel() / n;
  const Kernels& k = kernels();
  split_rows(rows, n, 8, [&](size_t r) {  // each row copied and normalised on the thread that has it
    std::memcpy(p + r * n, xp + r * n, static_cast<size_t>(n) * sizeof(float));
    k.softmax(p + r * n, static_cast<size_t>(n));
  });
  return out;
}

// Strides of `from` broadcast to `to` (right-aligned; 0 where `from` has size 1 or no dim).
static std::vector<int64_t> broadcast_strides(const Shape& from, const Shape& to, const char* what) {
  if (from.size() > to.size())
    fail(what, " of shape ", shape_str(from), " has more dimensions than the scores ", shape_str(to));
  std::vector<int64_t> strides(to.size(), 0);
  int64_t s = 1;
  for (size_t i = from.size(); i-- > 0;) {
    size_t j = i + (to.size() - from.size());
    if (from[i] != to[j] && from[i] != 1)
      fail(what, " of shape ", shape_str(from), " cannot broadcast to ", shape_str(to),
           ": each dimension must equal the scores' or be 1");
    strides[j] = from[i] == 1 ? 0 : s;
    s *= from[i];
  }
  return strides;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask_, float value) {
  Tensor out = x.clone();
  Tensor mask = mask_.contiguous();
  const std::vector<int64_t> ms = broadcast_strides(mask.shape(), x.shape(), "mask");
  const Shape& shape = x.shape();
  const int64_t nd = x.dim(), n = nd ? shape[nd - 1] : 1, rows = n ? out.numel() / n : 0;
  const Kernels& k = kernels();
  // A mask row is either a packed row of n flags or one flag for the whole row (broadcast).
  std::vector<float> row_flags(static_cast<size_t>(n));
  std::vector<int64_t> idx(static_cast<size_t>(nd ? nd - 1 : 0), 0);
  float* op = out.data();
  const float* mp = mask.data();
  for (int64_t r = 0; r < rows; ++r) {
    int64_t moff = 0;
    for (int64_t d = 0; d + 1 < nd; ++d) moff += idx[d] * ms[d];
    const float* mrow = mp + moff;
    if (nd && ms[nd - 1] == 0) {
      std::fill(row_flags.begin(), row_flags.end(), mrow[0]);
      mrow = row_flags.data();
    }
    k.masked_fill(op + r * n, mrow, value, static_cast<size_t>(n));
    for (int64_t d = nd - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

Tensor equal_zero(const Tensor& mask) {
  Tensor out = mask.clone();
  float* p = out.data();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) p[i] = p[i] == 0.f ? 1.f : 0.f;
  return out;
}

Tensor causal_mask(int64_t T, int64_t S) {
  Tensor m = Tensor::zeros({T, S});
  float* p = m.data();
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = i + 1; j < S; ++j) p[i * S + j] = 1.f;
  return m;
}

Tensor mul_scalar(const Tensor& x, float s) {
  Tensor out = x.clone();
  kernels().scale(out.data(), s, static_cast<size_t>(out.numel()));
  return out;
}

Tensor div_scalar(const Tensor& x, float s) {
  // PyTorch divides element by element; a / s and a * (1/s) differ in the last bit, so divide.
  const Tensor xc = x.contiguous();
  Tensor out = Tensor::empty(x.shape());
  float* p = out.data();
  const float* xp = xc.data();
  split_elements(out.numel(), 1, [&](size_t i0, size_t count) {
    for (size_t i = i0; i < i0 + count; ++i) p[i] = xp[i] / s;
  });
  return out;
}

Tensor add(const Tensor& a_, const Tensor& b_) {
  if (a_.shape() != b_.shape()) fail("add: shapes ", shape_str(a_.shape()), " and ", shape_str(b_.shape()), " must be equal");
  Tensor a = a_.contiguous(), b = b_.contiguous();
  Tensor out = Tensor::empty(a.shape());
  kernels().add(out.data(), a.data(), b.data(), static_cast<size_t>(a.numel()));
  return out;
}

Tensor relu(const Tensor& x) {
  Tensor out = x.clone();
  kernels().relu(out.data(), static_cast<size_t>(out.numel()));
  return out;
}

// y = f(x) elementwise by one of the kernels' activations (gelu, gelu_tanh, silu)
static Tensor activation(const Tensor& x_, void (*Kernels::*f)(float*, const float*, size_t) noexcept) {
  const Tensor x = x_.contiguous();
  Tensor out = Tensor::empty(x.shape());
  const Kernels& k = kernels();
  float* y = out.data();
  const float* xp = x.data();
  split_elements(x.numel(), 16, [&](size_t i, size_t len) { (k.*f)(y + i, xp + i, len); });
  return out;
}

Tensor gelu(const Tensor& x) { return activation(x, &Kernels::gelu); }
Tensor gelu_tanh(const Tensor& x) { return activation(x, &Kernels::gelu_tanh); }
Tensor silu(const Tensor& x) { return activation(x, &Kernels::silu); }

Tensor rms_norm(const Tensor& x_, const Tensor& gamma, float eps) {
  const int64_t n = x_.size(-1);
  if (gamma.numel() != n) fail("rms_norm: the weight's size (", gamma.numel(), ") must equal the input's last dimension (", n, ")");
  const Tensor x = x_.contiguous(), g = gamma.contiguous();
  Tensor out = Tensor::empty(x.shape());
  const Kernels& k = kernels();
  const int64_t rows = x.numel() / (n ? n : 1);
  float* op = out.data();
  const float *xp = x.data(), *gp = g.data();
  split_rows(rows, n, 4, [&](size_t r) { k.rms_norm(op + r * n, xp + r * n, gp, static_cast<size_t>(n), eps); });
  return out;
}

Tensor layer_norm(const Tensor& x_, const Tensor& gamma, const Tensor& beta_, float eps) {
  const int64_t n = x_.size(-1);
  const Tensor beta = beta_.defined() ? beta_ : Tensor::zeros({n});  // + 0 is what F.layer_norm adds without a bias
  if (gamma.numel() != n || beta.numel() != n)
    fail("layer_norm: normalized_shape (", gamma.numel(), ") must equal the input's last dimension (", n, ")");
  Tensor x = x_.contiguous();
  Tensor out = Tensor::empty(x.shape());
  const Kernels& k = kernels();
  const int64_t rows = x.numel() / (n ? n : 1);
  float* op = out.data();
  const float *xp = x.data(), *gp = gamma.data(), *bp = beta.data();
  split_rows(rows, n, 4, [&](size_t r) { k.layer_norm(op + r * n, xp + r * n, gp, bp, static_cast<size_t>(n), eps); });
  return out;
}

Tensor dropout_mask(const Shape& shape, float p, Generator& gen) {
  Tensor mask = Tensor::empty(shape);
  const size_t n = static_cast<size_t>(mask.numel());
  float* m = mask.data();
  if (p >= 1.f) {
    std::memset(m, 0, n * sizeof(float));
    return mask;
  }
  gen.bernoulli_(m, n, 1.0 - static_cast<double>(p));
  const float keep = static_cast<float>(1.0 - static_cast<double>(p));
  for (size_t i = 0; i < n; ++i) m[i] /= keep;
  return mask;
}

Tensor mul(const Tensor& a_, const Tensor& b_) {
  if (a_.shape() != b_.shape()) fail("mul: shapes ", shape_str(a_.shape()), " and ", shape_str(b_.shape()), " must be equal");
  Tensor a = a_.contiguous(), b = b_.contiguous();
  Tensor out = Tensor::empty(a.shape());
  kernels().mul(out.data(), a.data(), b.data(), static_cast<size_t>(a.numel()));
  return out;
}

Tensor embedding(const Tensor& weight, const std::vector<int64_t>& ids, const Shape& rows) {
  const int64_t V = weight.size(0), d = weight.size(1);
  if (static_cast<int64_t>(ids.size()) != numel(rows))
    fail("embedding: ", ids.size(), " token ids given for ", numel(rows), " positions ", shape_str(rows), ": give one id per position");
  Shape out_shape = rows;
  out_shape.push_back(d);
  Tensor out = Tensor::empty(out_shape);
  Tensor w = weight.contiguous();
  float* op = out.data();
  const float* wp = w.data();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= V)
      fail("token id ", ids[i], " at position ", i, " is out of range: ids must be in [0, ", V, ") (num_embeddings)");
    std::memcpy(op + static_cast<int64_t>(i) * d, wp + ids[i] * d, static_cast<size_t>(d) * sizeof(float));
  }
  return out;
}

Tensor cat_last(const std::vector<Tensor>& xs) {
  if (xs.empty()) fail("cat of no tensors");
  Shape shape = xs[0].shape();
  int64_t total = 0;
  for (const Tensor& t : xs) {
    Shape a(t.shape().begin(), t.shape().end() - 1), b(shape.begin(), shape.end() - 1);
    if (a != b) fail("cat: shapes ", shape_str(t.shape()), " and ", shape_str(shape), " differ outside the last dimension");
    total += t.size(-1);
  }
  shape.back() = total;
  Tensor out = Tensor::empty(shape);
  const int64_t rows = out.numel() / (total ? total : 1);
  int64_t col = 0;
  for (const Tensor& t_ : xs) {
    Tensor t = t_.contiguous();
    const int64_t w = t.size(-1);
    float* op = out.data();
    const float* tp = t.data();
    for (int64_t r = 0; r < rows; ++r) std::memcpy(op + r * total + col, tp + r * w, static_cast<size_t>(w) * sizeof(float));
    col += w;
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  if (xs.empty()) fail("stack of no tensors");
  Shape shape = xs[0].shape();
  for (const Tensor& t : xs)
    if (t.shape() != shape) fail("stack: shapes ", shape_str(t.shape()), " and ", shape_str(shape), " must be equal");
  if (dim < 0) dim += static_cast<int64_t>(shape.size()) + 1;
  const int64_t outer = numel(Shape(shape.begin(), shape.begin() + dim));
  const int64_t inner = numel(Shape(shape.begin() + dim, shape.end()));
  Shape out_shape = shape;
  out_shape.insert(out_shape.begin() + dim, static_cast<int64_t>(xs.size()));
  Tensor out = Tensor::empty(out_shape);
  const int64_t n = static_cast<int64_t>(xs.size());
  for (int64_t j = 0; j < n; ++j) {
    Tensor t = xs[static_cast<size_t>(j)].contiguous();
    float* op = out.data();
    const float* tp = t.data();
    for (int64_t o = 0; o < outer; ++o) std::memcpy(op + (o * n + j) * inner, tp + o * inner, static_cast<size_t>(inner) * sizeof(float));
  }
  return out;
}

Tensor rope_rotate(const Tensor& x, const Tensor& cos, const Tensor& sin, float sign) {
  const int64_t D = x.size(-1), T = x.size(-2), half = D / 2;
  if (cos.shape() != Shape{T, D} || sin.shape() != Shape{T, D})
    fail("rope: tables ", shape_str(cos.shape()), " do not match ", shape_str(x.shape()));
  const Tensor xc = x.contiguous();
  Tensor out = Tensor::empty(xc.shape());
  const float* c = cos.data();
  const float* s = sin.data();
  const int64_t rows = xc.numel() / D;
  float* op = out.data();
  const float* xp = xc.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = xp + r * D;
    const int64_t tr = (r % T) * D;
    for (int64_t j = 0; j < D; ++j) {
      const float rot = j < half ? -xr[j + half] : xr[j - half];
      const float a = xr[j] * c[tr + j], b = rot * (sign * s[tr + j]);  // two products, then their sum (as torch)
      op[r * D + j] = a + b;
    }
  }
  return out;
}

Tensor positional_encoding(int64_t T, int64_t C) {
  // As seed 002 computes it, in float32: div_term = exp(arange(0, C, 2) * (-log(10000) / C)).
  const float factor = static_cast<float>(-std::log(10000.0) / static_cast<double>(C));
  Tensor pe = Tensor::zeros({T, C});
  float* p = pe.data();
  for (int64_t j = 0; j < C; j += 2) {
    const float div = std::exp(static_cast<float>(j) * factor);
    for (int64_t t = 0; t < T; ++t) {
      const float arg = static_cast<float>(t) * div;
      p[t * C + j] = std::sin(arg);
      if (j + 1 < C) p[t * C + j + 1] = std::cos(arg);
    }
  }
  return pe;
}


namespace {

// a op b where b is a's shape with some dims of size 1 (or fewer leading dims): right-aligned broadcast.
template <class F>
Tensor broadcast_binary(const Tensor& a_, const Tensor& b_, F f, const char* what) {
  const Tensor a = a_.contiguous(), b = b_.contiguous();
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  if (bs.size() > as.size()) fail(what, ": ", shape_str(bs), " has more dimensions than ", shape_str(as));
  std::vector<int64_t> bstride(as.size(), 0);
  int64_t s = 1;
  for (size_t i = bs.size(); i-- > 0;) {
    const size_t j = i + as.size() - bs.size();
    if (bs[i] != as[j] && bs[i] != 1) fail(what, ": ", shape_str(bs), " cannot broadcast to ", shape_str(as));
    bstride[j] = bs[i] == 1 ? 0 : s;
    s *= bs[i];
  }
  Tensor out = Tensor::empty(as);
  const int64_t n = a.numel(), nd = a.dim();
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t boff = 0;
  const float* ap = a.data();
  const float* bp = b.data();
  float* op = out.data();
  for (int64_t i = 0; i < n; ++i) {
    op[i] = f(ap[i], bp[boff]);
    for (int64_t d = nd - 1; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      boff += bstride[ud];
      if (++idx[ud] < as[ud]) break;
      boff -= bstride[ud] * as[ud];
      idx[ud] = 0;
    }
  }
  return out;
}

int64_t wrap(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

}  // namespace

Tensor add_broadcast(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() ? add(a, b) : broadcast_binary(a, b, [](float x, float y) { return x + y; }, "add");
}

Tensor sub_broadcast(const Tensor& a, const Tensor& b) {
  return broadcast_binary(a, b, [](float x, float y) { return x - y; }, "sub");
}

Tensor exp(const Tensor& x) {
  Tensor out = x.clone();
  float* p = out.data();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) p[i] = std::exp(p[i]);
  return out;
}

Tensor amax(const Tensor& x, int64_t dim) {
  const int64_t nd = x.dim(), d = wrap(dim, nd);
  const Tensor moved = x.transpose(d, nd - 1).contiguous();
  Shape s = moved.shape();
  const int64_t w = s.back(), rows = w ? moved.numel() / w : 0;
  s.back() = 1;
  Tensor m = Tensor::empty(s);
  float* mp = m.data();
  const float* xp = moved.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = xp + r * w;
    mp[r] = *std::max_element(row, row + w);
  }
  return m.transpose(d, nd - 1).contiguous();
}

Tensor amax_backward(const Tensor& g, const Tensor& x, const Tensor& m_, int64_t dim) {
  const int64_t nd = x.dim(), d = wrap(dim, nd);
  const Tensor xm = x.transpose(d, nd - 1).contiguous(), gm = g.transpose(d, nd - 1).contiguous();
  const Tensor m = m_.transpose(d, nd - 1).contiguous();
  Tensor gx = Tensor::zeros(xm.shape());
  const int64_t S = xm.size(-1), rows = S ? xm.numel() / S : 0;
  const float *mp = m.data(), *gp = gm.data();
  float* gxp = gx.data();
  const float* xp = xm.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = xp + r * S;
    int64_t ties = 0;
    for (int64_t j = 0; j < S; ++j) ties += row[j] == mp[r];
    for (int64_t j = 0; j < S; ++j)
      if (row[j] == mp[r]) gxp[r * S + j] = gp[r] / static_cast<float>(ties);
  }
  return gx.transpose(d, nd - 1);
}

Tensor relu_backward(const Tensor& g_, const Tensor& y_) {
  const Tensor g = g_.contiguous(), y = y_.contiguous();
  Tensor out = Tensor::empty(g.shape());
  float* o = out.data();
  const float *gp = g.data(), *yp = y.data();
  // both loads unconditional: a select the compiler vectorises (`y > 0 ? gp[i] : 0` loads gp[i]
  // only where y > 0, and stayed a scalar loop: a third of a small model's training step)
  for (int64_t i = 0, n = g.numel(); i < n; ++i) {
    const float gi = gp[i], y = yp[i];
    o[i] = y > 0.f ? gi : 0.f;
  }
  return out;
}

float mse_loss(const Tensor& a, const Tensor& target) {
  const Tensor x = a.contiguous(), t = target.contiguous();
  const float *xp = x.data(), *tp = t.data();
  double acc = 0;
  for (int64_t i = 0, k = x.numel(); i < k; ++i) {
    const float d = xp[i] - tp[i];
    acc += static_cast<double>(d) * d;
  }
  return static_cast<float>(acc / static_cast<double>(x.numel()));
}

Tensor mse_loss_backward(const Tensor& a, const Tensor& target, float g) {  // 2 (a - target) / numel * g
  const float norm = 2.f / static_cast<float>(target.numel()) * g;
  const Tensor x = a.contiguous(), t = target.contiguous();
  Tensor diff = Tensor::empty(x.shape());
  float* dp = diff.data();
  const float *xp = x.data(), *tp = t.data();
  for (int64_t i = 0, k = x.numel(); i < k; ++i) dp[i] = xp[i] - tp[i];
  return mul_scalar(diff, norm);
}

float cross_entropy(const Tensor& logits, const std::vector<int64_t>& targets, int64_t ignore_index) {
  const Tensor x = logits.contiguous();
  const int64_t V = x.size(-1), N = V ? x.numel() / V : 0;
  double acc = 0;
  int64_t counted = 0;
  const float* xp = x.data();
  for (int64_t r = 0; r < N; ++r) {
    const int64_t t = targets[static_cast<size_t>(r)];
    if (t == ignore_index) continue;
    const float* row = xp + r * V;
    const float m = *std::max_element(row, row + V);
    double se = 0;
    for (int64_t j = 0; j < V; ++j) se += std::exp(static_cast<double>(row[j] - m));
    acc += std::log(se) + m - row[t];
    ++counted;
  }
  return static_cast<float>(acc / static_cast<double>(counted));
}

// d(mean over counted rows of -log softmax(row)[t]) = (softmax(row) - onehot(t)) / counted
Tensor cross_entropy_backward(const Tensor& logits, const std::vector<int64_t>& targets, int64_t ignore_index, float g) {
  const Tensor x = logits.contiguous();
  const int64_t V = x.size(-1), N = V ? x.numel() / V : 0;
  int64_t counted = 0;
  for (int64_t t : targets) counted += t != ignore_index;
  const float scale = g / static_cast<float>(counted);
  Tensor gx = Tensor::zeros(x.shape());
  float* gp = gx.data();
  const float* xp = x.data();
  const Kernels& k = kernels();
  for (int64_t r = 0; r < N; ++r) {
    const int64_t t = targets[static_cast<size_t>(r)];
    if (t == ignore_index) continue;
    float* row = gp + r * V;
    std::memcpy(row, xp + r * V, static_cast<size_t>(V) * sizeof(float));
    k.softmax(row, static_cast<size_t>(V));
    row[t] -= 1.f;
    for (int64_t j = 0; j < V; ++j) row[j] *= scale;
  }
  return gx;
}

int64_t first_nan(const Tensor& x_) {
  const Tensor x = x_.contiguous();
  const float* p = x.data();
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    if (std::isnan(p[i])) return i;
  return -1;
}

float sum(const Tensor& x_) {
  const Tensor x = x_.contiguous();
  const float* xp = x.data();
  double acc = 0;
  for (int64_t i = 0, k = x.numel(); i < k; ++i) acc += xp[i];
  return static_cast<float>(acc);
}

void transpose_into(float* p, const float* a, int64_t rows, int64_t cols) {
  constexpr int64_t kB = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kB)
    for (int64_t c0 = 0; c0 < cols; c0 += kB)
      for (int64_t r = r0; r < std::min(rows, r0 + kB); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + kB); ++c) p[c * rows + r] = a[r * cols + c];
}

void add_strided(const Tensor& dst, const Tensor& src_) {
  const Tensor src = src_.contiguous();
  const Shape& shape = dst.shape();
  const int64_t nd = dst.dim(), n = dst.numel();
  float* base = dst.base();
  const float* s = src.data();
  const Shape& st = dst.strides();
  if (nd > 0 && shape[static_cast<size_t>(nd - 1)] > 0 && st[static_cast<size_t>(nd - 1)] == 1) {
    // Each row of the last dim lies packed in dst (a slice along any dim, as chunk's backward
    // writes q, k and v's gradients into c_attn's): row by row through the kernel, the rows across
    // the threads; each element gets the one addition it gets below.
    const int64_t cols = shape[static_cast<size_t>(nd - 1)];
    const Kernels& k = kernels();
    split_strided_rows(shape, st, [&](size_t r, int64_t off) {
      k.add(base + off, base + off, s + static_cast<int64_t>(r) * cols, static_cast<size_t>(cols));
    });
    return;
  }
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    base[off] += s[i];
    for (int64_t d = nd - 1; d >= 0; --d) {
      off += dst.strides()[static_cast<size_t>(d)];
      if (++idx[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
      off -= dst.strides()[static_cast<size_t>(d)] * shape[static_cast<size_t>(d)];
      idx[static_cast<size_t>(d)] = 0;
    }
  }
}

Tensor reduce_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  Tensor out = Tensor::zeros(shape);
  // A view of `out` broadcast to g's shape (stride 0 on the broadcast dims), then one strided add
  // per element of g.
  const Tensor gc = g.contiguous();
  const Shape& gs = g.shape();
  std::vector<int64_t> ostride(gs.size(), 0);
  int64_t st = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    const size_t j = i + gs.size() - shape.size();
    ostride[j] = shape[i] == 1 ? 0 : st;
    st *= shape[i];
  }
  std::vector<int64_t> idx(gs.size(), 0);
  int64_t off = 0;
  float* o = out.data();
  const float* gp = gc.data();
  for (int64_t i = 0, n = gc.numel(); i < n; ++i) {
    o[off] += gp[i];
    for (int64_t d = static_cast<int64_t>(gs.size()) - 1; d >= 0; --d) {
      off += ostride[static_cast<size_t>(d)];
      if (++idx[static_cast<size_t>(d)] < gs[static_cast<size_t>(d)]) break;
      off -= ostride[static_cast<size_t>(d)] * gs[static_cast<size_t>(d)];
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}


// ---- interventions (tape/ops/intervene.cpp) ----
namespace {

// Row-major strides of a shape, and a flat index's coordinate along dim d.
std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// The flat index with the coordinates of `dims` set to 0 (the cell's group for a mean over them).
int64_t group_of(int64_t i, const Shape& s, const std::vector<int64_t>& st, const std::vector<int64_t>& dims) {
  int64_t k = i;
  for (int64_t d : dims) k -= ((i / st[static_cast<size_t>(d)]) % s[static_cast<size_t>(d)]) * st[static_cast<size_t>(d)];
  return k;
}

// The flat index with dim b's coordinate replaced by `row`.
int64_t row_of(int64_t i, const Shape& s, const std::vector<int64_t>& st, int64_t b, int64_t row) {
  const int64_t stride = st[static_cast<size_t>(b)];
  return i - ((i / stride) % s[static_cast<size_t>(b)]) * stride + row * stride;
}

int64_t count_of(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t c = 1;
  for (int64_t d : dims) c *= s[static_cast<size_t>(d)];
  return c;
}

}  // namespace

Tensor intervene(const Tensor& prev_, const Tensor& src_, const Tensor& sel_, int set, float scale, int64_t from,
                 int64_t batch_dim, const std::vector<int64_t>& mean_dims) {
  const Tensor prev = prev_.contiguous(), src = src_.contiguous(), sel = sel_.contiguous();
  const Shape& s = prev.shape();
  const std::vector<int64_t> st = strides_of(s);
  Tensor out = prev.clone();
  float* o = out.data();
  const float *pp = prev.data(), *sp = src.data(), *m = sel.data();
  const int64_t n = prev.numel();
  std::vector<double> sums;
  if (set == 1) {
    sums.assign(static_cast<size_t>(n), 0.0);
    for (int64_t i = 0; i < n; ++i) sums[static_cast<size_t>(group_of(i, s, st, mean_dims))] += sp[i];
  }
  const double count = static_cast<double>(count_of(s, mean_dims));
  for (int64_t i = 0; i < n; ++i) {
    if (m[i] == 0.f) continue;
    switch (set) {
      case 0: o[i] = 0.f; break;
      case 1: o[i] = static_cast<float>(sums[static_cast<size_t>(group_of(i, s, st, mean_dims))] / count); break;
      case 2: o[i] = sp[row_of(i, s, st, batch_dim, from)]; break;
      default: o[i] = pp[i] * scale; break;
    }
  }
  return out;
}

Tensor intervene_grad_prev(const Tensor& g_, const Tensor& sel_, int set, float scale) {
  const Tensor g = g_.contiguous(), sel = sel_.contiguous();
  Tensor out = g.clone();
  float* o = out.data();
  const float* m = sel.data();
  for (int64_t i = 0, n = g.numel(); i < n; ++i)
    if (m[i] != 0.f) o[i] = set == 3 ? o[i] * scale : 0.f;
  return out;
}

Tensor intervene_grad_src(const Tensor& g_, const Tensor& sel_, int set, int64_t from, int64_t batch_dim,
                          const std::vector<int64_t>& mean_dims) {
  if (set != 1 && set != 2) return Tensor();
  const Tensor g = g_.contiguous(), sel = sel_.contiguous();
  const Shape& s = g.shape();
  const std::vector<int64_t> st = strides_of(s);
  const int64_t n = g.numel();
  const float *gp = g.data(), *m = sel.data();
  Tensor out = Tensor::zeros(s);
  float* o = out.data();
  if (set == 2) {
    for (int64_t i = 0; i < n; ++i)
      if (m[i] != 0.f) o[row_of(i, s, st, batch_dim, from)] += gp[i];
    return out;
  }
  std::vector<double> sums(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    if (m[i] != 0.f) sums[static_cast<size_t>(group_of(i, s, st, mean_dims))] += gp[i];
  const double count = static_cast<double>(count_of(s, mean_dims));
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(sums[static_cast<size_t>(group_of(i, s, st, mean_dims))] / count);
  return out;
}

}  // namespace attn
