// A KV cache's append: the new keys or values written into the cache's rows [cached, cached + Tn),
// the output the rows [0, cached + Tn) so far (a view of the cache). Only the new rows come from
// the input; the cached ones are constants of this pass.
#include <algorithm>

#include "base/error.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

// Recomputed (a replay of the tape): the cached rows as recorded, then the input's, in a new tensor,
// leaving the cache itself as it is.
Tensor cache_append_forward(const Node& n, const std::vector<Tensor>& in) {
  const Tensor old = n.out.slice(2, 0, n.attrs.cached).contiguous(), x = in[0].contiguous();
  const int64_t B = x.size(0), H = x.size(1), D = x.size(3), Tn = x.size(2), C = n.attrs.cached;
  Tensor out = Tensor::empty({B, H, C + Tn, D});
  for (int64_t bh = 0; bh < B * H; ++bh) {
    std::copy_n(old.data() + bh * C * D, C * D, out.data() + bh * (C + Tn) * D);
    std::copy_n(x.data() + bh * Tn * D, Tn * D, out.data() + (bh * (C + Tn) + C) * D);
  }
  return out;
}
ATTN_SMALL Json cache_append_attrs(const Node& n, const std::vector<Node>&) {
  const Attrs& a = n.attrs;
  return {{"cache", a.cache}, {"cached", a.cached}, {"new", n.out.size(2) - a.cached}, {"capacity", a.capacity}, {"dim", 2}};
}
ATTN_SMALL std::string cache_append_call(const Node& n, const std::vector<std::string>& args) {
  return "cache_append(" + n.attrs.cache + "_cache, " + args[0] + ")";
}
void cache_append_backward(const Node& n, const Tensor& g, Grads& w) {
  w.give(n, 0, g.slice(2, n.attrs.cached, g.size(2)), false);
}

}  // namespace

const OpDef cache_append_op{"cache_append", cache_append_forward, cache_append_attrs, cache_append_call, cache_append_backward};

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
  Tensor out = cache.slice(2, 0, cached + Tn);
  if (!ctx.recording()) return {out, -1};
  Attrs a;
  a.cache = which;
  a.cached = cached;
  a.capacity = cap;
  return ctx.record(Op::cache_append, {x.id}, out, a);
}

}  // namespace attn
