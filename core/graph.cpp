// The ops on the tape: compute with ops.hpp, record one node when the Context records. See graph.hpp.
#include "graph.hpp"

#include <algorithm>
#include <cmath>

#include "error.hpp"
#include "ops.hpp"

namespace attn {

namespace {

Var put(Context& ctx, Op op, std::vector<int32_t> in, Tensor out, Attrs a = {}, Tensor saved = {},
        std::vector<int64_t> ids = {}) {
  if (!ctx.recording()) return {std::move(out), -1};
  return ctx.record(op, std::move(in), std::move(out), std::move(a), std::move(saved), std::move(ids));
}

int64_t wrap_dim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

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
      boff += bstride[d];
      if (++idx[d] < as[d]) break;
      boff -= bstride[d] * as[d];
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

Var linear(Context& ctx, const Var& x, const Var& weight, const Var& bias) {
  return put(ctx, Op::linear, {x.id, weight.id, bias.id}, linear(x.t, weight.t, bias.t));
}

Var matmul(Context& ctx, const Var& a, const Var& b) { return put(ctx, Op::matmul, {a.id, b.id}, matmul(a.t, b.t)); }

Var matmul_bt(Context& ctx, const Var& a, const Var& b) {
  Attrs at;
  at.transpose_b = true;
  // matmul packs a transposed b once; a packed copy of b first keeps that pack a plain transpose.
  return put(ctx, Op::matmul, {a.id, b.id}, matmul(a.t, b.t.contiguous().transpose(-2, -1)), at);
}

Var weighted_sum(Context& ctx, const Var& weights, const Var& values) {
  return put(ctx, Op::weighted_sum, {weights.id, values.id}, matmul(weights.t, values.t));
}

Var split_heads(Context& ctx, const Var& x, int64_t H) {
  if (x.dim() != 3 || H <= 0 || x.size(2) % H != 0)
    fail("split_heads: ", shape_str(x.shape()), " must be (B, T, H*D) with H (", H, ") dividing the last dimension");
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / H;
  Attrs a;
  a.heads = H;
  return put(ctx, Op::split_heads, {x.id}, x.t.contiguous().view({B, T, H, D}).transpose(1, 2), a);
}

Var merge_heads(Context& ctx, const Var& x) {
  if (x.dim() != 4) fail("merge_heads: ", shape_str(x.shape()), " must be (B, H, T, D)");
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  Attrs a;
  a.heads = H;
  return put(ctx, Op::merge_heads, {x.id}, x.t.transpose(1, 2).contiguous().view({B, T, H * D}), a);
}

Var view(Context& ctx, const Var& x, Shape shape) {
  Tensor out = x.t.contiguous().view(shape);
  Attrs a;
  a.shape = std::move(shape);
  return put(ctx, Op::view, {x.id}, std::move(out), a);
}

Var transpose(Context& ctx, const Var& x, int64_t d0, int64_t d1) {
  Attrs a;
  a.dim0 = d0;
  a.dim1 = d1;
  return put(ctx, Op::transpose, {x.id}, x.t.transpose(d0, d1), a);
}

Var chunk(Context& ctx, const Var& x, int64_t chunks, int64_t index, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim());
  if (d < 0 || d >= x.dim() || chunks <= 0 || x.size(d) % chunks != 0 || index < 0 || index >= chunks)
    fail("chunk: dim ", dim, " of ", shape_str(x.shape()), " must split into ", chunks, " equal parts");
  const int64_t w = x.size(d) / chunks;
  Attrs a;
  a.chunks = chunks;
  a.index = index;
  a.dim = dim;
  return put(ctx, Op::chunk, {x.id}, x.t.slice(d, index * w, (index + 1) * w), a);
}

Var split(Context& ctx, const Var& x, const std::vector<int64_t>& sizes, int64_t index, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim());
  int64_t total = 0, start = 0;
  bool positive = true;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (static_cast<int64_t>(i) == index) start = total;
    positive = positive && sizes[i] > 0;
    total += sizes[i];
  }
  if (d < 0 || d >= x.dim() || !positive || total != x.size(d) || index < 0 || index >= static_cast<int64_t>(sizes.size()))
    fail("split: dim ", dim, " of ", shape_str(x.shape()), " must split into ", sizes.size(), " positive widths that add up to it");
  Attrs a;
  a.chunks = static_cast<int64_t>(sizes.size());
  a.index = index;
  a.dim = dim;
  a.sizes = sizes;
  return put(ctx, Op::chunk, {x.id}, x.t.slice(d, start, start + sizes[static_cast<size_t>(index)]), a);
}

Var concat(Context& ctx, const std::vector<Var>& xs) {
  std::vector<Tensor> ts;
  std::vector<int32_t> ids;
  for (const Var& v : xs) {
    ts.push_back(v.t);
    ids.push_back(v.id);
  }
  return put(ctx, Op::concat, std::move(ids), cat_last(ts));
}

Var stack(Context& ctx, const std::vector<Var>& xs, int64_t dim) {
  std::vector<Tensor> ts;
  std::vector<int32_t> ids;
  for (const Var& v : xs) {
    ts.push_back(v.t);
    ids.push_back(v.id);
  }
  Attrs a;
  a.dim = dim;
  return put(ctx, Op::stack, std::move(ids), attn::stack(ts, dim), a);
}

Var div_scalar(Context& ctx, const Var& x, float s) {
  Attrs a;
  a.scale = s;
  a.divide = true;
  return put(ctx, Op::scale, {x.id}, div_scalar(x.t, s), a);
}

Var mul_scalar(Context& ctx, const Var& x, float s) {
  Attrs a;
  a.scale = s;
  return put(ctx, Op::scale, {x.id}, mul_scalar(x.t, s), a);
}

Var masked_fill(Context& ctx, const Var& x, const Tensor& mask, float fill, Attrs how) {
  how.fill = fill;
  Tensor out = masked_fill(x.t, mask, fill);
  return put(ctx, Op::masked_fill, {x.id}, std::move(out), std::move(how), mask);
}

Var softmax(Context& ctx, const Var& x, int64_t dim) {
  const int64_t n = x.dim(), d = wrap_dim(dim, n);
  if (n == 0 || d < 0 || d >= n) fail("softmax: dim ", dim, " is out of range for a ", n, "-d tensor: use -", n, "..", n - 1);
  Attrs a;
  a.dim = dim;
  // The kernels normalise rows: bring the dim last, normalise, move it back.
  Tensor out = d == n - 1 ? softmax(x.t) : softmax(x.t.transpose(d, n - 1).contiguous()).transpose(d, n - 1).contiguous();
  return put(ctx, Op::softmax, {x.id}, std::move(out), a);
}

Var dropout(Context& ctx, const Var& x, float p) {
  Attrs a;
  a.p = p;
  if (p == 0.f) return put(ctx, Op::dropout, {x.id}, x.t.contiguous(), a);
  // The scaled keep-mask (0 or 1/(1-p)) is what the backward multiplies by: the same draw.
  Tensor mask = dropout_mask(x.shape(), p, ctx.gen);
  Tensor out = mul(x.t, mask);
  return put(ctx, Op::dropout, {x.id}, std::move(out), a, mask);
}

Var layer_norm(Context& ctx, const Var& x, const Var& weight, const Var& bias) {
  return put(ctx, Op::layer_norm, {x.id, weight.id, bias.id}, layer_norm(x.t, weight.t, bias.t));
}

Var relu(Context& ctx, const Var& x) { return put(ctx, Op::relu, {x.id}, relu(x.t)); }

Var gelu(Context& ctx, const Var& x) { return put(ctx, Op::gelu, {x.id}, gelu(x.t)); }

Var cache_append(Context& ctx, const Var& x, Tensor& cache, int64_t cached, const char* which) {
  const int64_t Tn = x.dim() == 4 ? x.size(2) : 0;
  if (x.dim() != 4 || cache.dim() != 4 || x.size(0) != cache.size(0) || x.size(1) != cache.size(1) ||
      x.size(3) != cache.size(3) || cached < 0 || cached + Tn > cache.size(2))
    fail("cache_append: ", shape_str(x.shape()), " does not fit rows [", cached, ", ", cached + Tn, ") of a cache ",
         shape_str(cache.shape()), ": at most block_size positions are cached");
  const Tensor src = x.t.contiguous();
  const int64_t B = x.size(0), H = x.size(1), D = x.size(3), cap = cache.size(2);
  for (int64_t bh = 0; bh < B * H; ++bh)  // rows of one (batch, head) are contiguous in both
    std::copy(src.data() + bh * Tn * D, src.data() + (bh + 1) * Tn * D, cache.data() + (bh * cap + cached) * D);
  Attrs a;
  a.cache = which;
  a.cached = cached;
  a.capacity = cap;
  return put(ctx, Op::cache_append, {x.id}, cache.slice(2, 0, cached + Tn), a);
}

Var add(Context& ctx, const Var& a, const Var& b) {
  Tensor out = a.shape() == b.shape() ? add(a.t, b.t) : broadcast_binary(a.t, b.t, [](float u, float v) { return u + v; }, "add");
  return put(ctx, Op::add, {a.id, b.id}, std::move(out));
}

Var embedding(Context& ctx, const Var& weight, const std::vector<int64_t>& ids, const Shape& rows,
              const std::string& ids_input) {
  Attrs a;
  a.ids_input = ids_input;
  return put(ctx, Op::embedding, {weight.id}, embedding(weight.t, ids, rows), a, {}, ids);
}

Var positional_encoding(Context& ctx, int64_t T, int64_t C) {
  Attrs a;
  a.shape = {1, T, C};
  return put(ctx, Op::positional_encoding, {}, positional_encoding(T, C).unsqueeze(0), a);
}

Var amax(Context& ctx, const Var& x, int64_t dim) {
  const int64_t n = x.dim(), d = wrap_dim(dim, n);
  if (d < 0 || d >= n) fail("amax: dim ", dim, " is out of range for ", shape_str(x.shape()));
  const Tensor moved = x.t.transpose(d, n - 1).contiguous();
  Shape s = moved.shape();
  const int64_t w = s.back(), rows = w ? moved.numel() / w : 0;
  s.back() = 1;
  Tensor m = Tensor::empty(s);
  float* mp = m.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = moved.data() + r * w;
    mp[r] = *std::max_element(row, row + w);
  }
  Attrs a;
  a.dim = dim;
  return put(ctx, Op::amax, {x.id}, m.transpose(d, n - 1).contiguous(), a);
}

Var sub(Context& ctx, const Var& a, const Var& b) {
  return put(ctx, Op::sub, {a.id, b.id}, broadcast_binary(a.t, b.t, [](float u, float v) { return u - v; }, "sub"));
}

Var exp(Context& ctx, const Var& x) {
  Tensor out = x.t.clone();
  float* p = out.data();
  for (int64_t i = 0; i < out.numel(); ++i) p[i] = std::exp(p[i]);
  return put(ctx, Op::exp, {x.id}, std::move(out));
}

Var mse_loss(Context& ctx, const Var& a, const Tensor& target) {
  if (target.shape() != a.shape())
    fail_at("loss.target", "loss target has shape ", shape_str(target.shape()), " but the output has shape ", shape_str(a.shape()),
            ": mse needs them equal");
  const Tensor x = a.t.contiguous(), t = target.contiguous();
  const float *xp = x.data(), *tp = t.data();
  double acc = 0;
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    const float d = xp[i] - tp[i];
    acc += static_cast<double>(d) * d;
  }
  Tensor out = Tensor::full({}, static_cast<float>(acc / static_cast<double>(x.numel())));
  return put(ctx, Op::mse_loss, {a.id}, std::move(out), {}, t);
}

Var cross_entropy(Context& ctx, const Var& logits, const std::vector<int64_t>& targets, int64_t ignore_index) {
  const int64_t V = logits.size(-1), N = V ? logits.t.numel() / V : 0;
  if (static_cast<int64_t>(targets.size()) != N)
    fail_at("loss.target", "cross_entropy: ", targets.size(), " targets for ", N, " rows of logits ", shape_str(logits.shape()),
            ": give one class id per row");
  const Tensor x = logits.t.contiguous();
  double acc = 0;
  int64_t counted = 0;
  for (int64_t r = 0; r < N; ++r) {
    const int64_t t = targets[static_cast<size_t>(r)];
    if (t == ignore_index) continue;
    if (t < 0 || t >= V)
      fail_at("loss.target", "cross_entropy: target ", t, " at row ", r, " is not a class: ids must be in [0, ", V,
              ") or ignore_index (", ignore_index, ")");
    const float* row = x.data() + r * V;
    const float m = *std::max_element(row, row + V);
    double se = 0;
    for (int64_t j = 0; j < V; ++j) se += std::exp(static_cast<double>(row[j] - m));
    acc += std::log(se) + m - row[t];
    ++counted;
  }
  if (counted == 0)
    fail_at("loss.target", "cross_entropy: every target is ignore_index (", ignore_index, "): the mean over no rows is undefined");
  Attrs a;
  a.ignore_index = ignore_index;
  Tensor out = Tensor::full({}, static_cast<float>(acc / static_cast<double>(counted)));
  return put(ctx, Op::cross_entropy, {logits.id}, std::move(out), a, {}, targets);
}

Var sum(Context& ctx, const Var& a) {
  const Tensor x = a.t.contiguous();
  const float* xp = x.data();
  double acc = 0;
  for (int64_t i = 0, n = x.numel(); i < n; ++i) acc += xp[i];
  return put(ctx, Op::sum, {a.id}, Tensor::full({}, static_cast<float>(acc)));
}

Var rope_table(Context& ctx, const std::vector<int64_t>& positions, int64_t D, double base, bool sine) {
  if (D <= 0 || D % 2 != 0) fail_at("config.rope", "rope needs an even head width, got d_head = ", D);
  const int64_t T = static_cast<int64_t>(positions.size()), half = D / 2;
  Tensor t = Tensor::empty({T, D});
  std::vector<float> inv_freq(static_cast<size_t>(half));
  const float fbase = static_cast<float>(base);
  for (int64_t i = 0; i < half; ++i)  // 1.0 / (base ** (arange(0, D, 2).float() / D))
    inv_freq[static_cast<size_t>(i)] = 1.f / std::pow(fbase, static_cast<float>(2 * i) / static_cast<float>(D));
  float* p = t.data();
  for (int64_t r = 0; r < T; ++r)
    for (int64_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(positions[static_cast<size_t>(r)]) * inv_freq[static_cast<size_t>(i)];
      p[r * D + i] = p[r * D + half + i] = sine ? std::sin(angle) : std::cos(angle);
    }
  Attrs a;
  a.base = base, a.sine = sine;
  return put(ctx, Op::rope_table, {}, t, a, {}, positions);
}

Var rope(Context& ctx, const Var& x, const Var& cos, const Var& sin) {
  return put(ctx, Op::rope, {x.id, cos.id, sin.id}, rope_rotate(x.t, cos.t, sin.t));
}

Var repeat_kv(Context& ctx, const Var& x, int64_t n) {
  const Tensor xc = x.t.contiguous();
  const int64_t B = xc.size(0), Hk = xc.size(1), block = xc.size(2) * xc.size(3);
  Tensor out = Tensor::empty({B, Hk * n, xc.size(2), xc.size(3)});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hk; ++h)
      for (int64_t r = 0; r < n; ++r)
        std::copy_n(xc.data() + (b * Hk + h) * block, block, out.data() + ((b * Hk + h) * n + r) * block);
  Attrs a;
  a.repeats = n;
  return put(ctx, Op::repeat_kv, {x.id}, out, a);
}

std::vector<double> alibi_slopes(int64_t H) {
  const auto power_of_2 = [](int64_t n) {
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3)));
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(start * std::pow(start, static_cast<double>(i)));
    return v;
  };
  const double l = std::log2(static_cast<double>(H));
  if (l == std::floor(l)) return power_of_2(H);
  const int64_t closest = int64_t{1} << static_cast<int>(std::floor(l));
  std::vector<double> v = power_of_2(closest);
  const std::vector<double> next = alibi_slopes(2 * closest);
  for (size_t i = 0; i < next.size() && static_cast<int64_t>(v.size()) < H; i += 2) v.push_back(next[i]);
  return v;
}

Var alibi_bias(Context& ctx, const std::vector<int64_t>& positions, int64_t H) {
  const int64_t T = static_cast<int64_t>(positions.size());
  const std::vector<double> slopes = alibi_slopes(H);
  Tensor bias = Tensor::empty({H, T, T}), kept = Tensor::empty({H});
  for (int64_t h = 0; h < H; ++h) {
    const float slope = static_cast<float>(slopes[static_cast<size_t>(h)]);
    kept.data()[h] = slope;
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j)
        bias.data()[(h * T + i) * T + j] =
            slope * static_cast<float>(positions[static_cast<size_t>(j)] - positions[static_cast<size_t>(i)]);
  }
  return put(ctx, Op::alibi_bias, {}, bias, {}, kept, positions);
}

Tensor window_mask(const std::vector<int64_t>& positions, bool causal, int64_t window, int64_t sink_tokens) {
  return window_mask(positions, positions, causal, window, sink_tokens);
}

Tensor window_mask(const std::vector<int64_t>& q_positions, const std::vector<int64_t>& k_positions, bool causal,
                   int64_t window, int64_t sink_tokens) {
  const int64_t T = static_cast<int64_t>(q_positions.size()), S = static_cast<int64_t>(k_positions.size());
  Tensor m = Tensor::zeros({T, S});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < S; ++j) {
      const int64_t pi = q_positions[static_cast<size_t>(i)], pj = k_positions[static_cast<size_t>(j)];
      bool hidden = (causal || window > 0) && pj > pi;
      if (window > 0 && pj <= pi - window && !(pj < sink_tokens)) hidden = true;
      m.data()[i * S + j] = hidden ? 1.f : 0.f;
    }
  return m;
}

}  // namespace attn
