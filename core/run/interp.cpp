// Activation patching, attribution patching, the logit lens and direct logit attribution on a
// traced forward (interp.hpp). Shape letters as in attention.hpp.
#include "run/interp.hpp"

#include <cmath>

#include "base/error.hpp"
#include "math/ops.hpp"
#include "tape/autograd.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

size_t u(int64_t v) { return static_cast<size_t>(v); }

// Python's fnmatch for names: * any run of characters, ? one character, the rest literally.
bool matches(const char* pattern, const char* name) {
  if (*pattern == '\0') return *name == '\0';
  if (*pattern == '*') return matches(pattern + 1, name) || (*name != '\0' && matches(pattern, name + 1));
  if (*name == '\0') return false;
  return (*pattern == '?' || *pattern == *name) && matches(pattern + 1, name + 1);
}

// The node of the last step named `name`, -1 when none is.
int32_t step_node(const Context& ctx, const std::string& name) {
  int32_t node = -1;
  for (const Context::Named& n : ctx.named_steps())
    if (n.name == name) node = n.node;
  return node;
}

const Tensor& step_value(const Context& ctx, const std::string& name, const std::string& field) {
  const int32_t node = step_node(ctx, name);
  if (node < 0) fail_at(field, "internal: the forward has no step '", name, "'");
  return ctx.nodes()[u(node)].out;
}

int64_t row_in(int64_t b, int64_t B, const std::string& where, const std::string& field) {
  if (b < 0 || b >= B) fail_at(field, where, " (", b, ") is out of range: the batch has ", B, " rows (0..", B - 1, ")");
  return b;
}

int64_t position_in(int64_t p, int64_t T, const std::string& where, const std::string& field) {
  const int64_t q = p < 0 ? p + T : p;
  if (q < 0 || q >= T)
    fail_at(field, where, " (", p, ") is out of range: the sequence has ", T, " positions (0..", T - 1, ", or -", T, "..-1 from its end)");
  return q;
}

void token_in(int64_t t, int64_t V, const std::string& where, const std::string& field) {
  if (t < 0 || t >= V) fail_at(field, where, " (", t, ") is not a token of the vocabulary: ids run 0..", V - 1);
}

// One patching cell: a step's node and dims, and the head and position it spans (kAll: all).
struct Cell {
  const Context::Named* step;
  int64_t head, position;
};

// The cells of a sweep, in trace order: each step matching a pattern that has the dims the cells
// index (batch always, heads for "head", seq/seq_q for "position"), by head then position.
std::vector<Cell> cells_of(const Context& ctx, const PatchingSpec& p, const std::string& field) {
  const bool by_head = p.by == "head" || p.by == "head_position", by_pos = p.by == "position" || p.by == "head_position";
  std::vector<Cell> cells;
  bool matched = false;
  for (const Context::Named& n : ctx.named_steps()) {
    bool hit = false;
    for (const std::string& pattern : p.steps) hit = hit || matches(pattern.c_str(), n.name.c_str());
    if (!hit) continue;
    matched = true;
    const CellDims cd = cell_dims(n.dims);
    const int64_t bd = cd.batch, hd = cd.heads, sd = cd.seq;
    if (bd < 0 || (by_head && hd < 0) || (by_pos && sd < 0)) continue;
    const Tensor& t = ctx.nodes()[u(n.node)].out;
    const int64_t H = by_head ? t.size(hd) : 1, T = by_pos ? t.size(sd) : 1;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t q = 0; q < T; ++q) cells.push_back({&n, by_head ? h : Attrs::kAll, by_pos ? q : Attrs::kAll});
  }
  if (!matched) {
    std::string names;
    for (const Context::Named& n : ctx.named_steps())
      if (names.size() < 240) names += (names.empty() ? "" : ", ") + n.name;
    fail_at(field + ".steps", field, ".steps match no step of the forward: its steps are ", names, names.size() >= 240 ? ", ..." : "");
  }
  if (cells.empty())
    fail_at(field + ".by", field, ".by \"", p.by, "\": no matching step has the dims it needs (batch", by_head ? ", heads" : "",
            by_pos ? ", seq" : "", ")");
  return cells;
}

// The cell's elements of row `row` (1 = in the cell), on the step's tensor.
Tensor cell_mask(const Cell& c, const Tensor& t, int64_t row) {
  return select_cells(t.shape(), cell_dims(c.step->dims), row, c.head, c.position);
}

// Ops whose output row t (along dim 1 of a (B, T, C) tensor) reads only row t of their (B, T, ·)
// inputs, their other inputs being parameters: after the model's last attention, a metric at one
// position needs one row of them.
bool row_local(const Node& n, const std::vector<Node>& nodes, int64_t T) {
  const bool params_ok = n.op == Op::linear || n.op == Op::layer_norm;
  if (!(params_ok || n.op == Op::add || n.op == Op::gelu || n.op == Op::relu)) return false;
  if (n.out.dim() != 3 || n.out.size(1) != T) return false;
  for (int32_t i : n.in) {
    if (i < 0) continue;
    const Node& a = nodes[u(i)];
    if (a.op == Op::parameter ? !params_ok : a.out.shape() != n.out.shape() && !(params_ok && &a == &nodes[u(n.in[0])] && a.out.dim() == 3 && a.out.size(1) == T))
      return false;
  }
  return true;
}

struct Replayed {
  Tensor out;
  int64_t position;  // the metric's row in `out` along dim 1
  bool vocab = false;  // `out` has the columns of replay's `vocab` only
};

// The nodes after `from` that the target reads and that depend on it, recomputed with node
// `from`'s output replaced by `value` (each by its descriptor's forward): the new output of node
// `target`. With `position` >= 0 (the metric reads that row of the target only), the row-local
// tail of the tape (row_local: the last block's projection, MLP, final norm and unembedding)
// computes that row alone: the replay's result then has one row, at position 0. With `vocab`
// (the tokens a logit or logit_diff metric reads) and a target that is an unembedding (a linear
// node), only those rows of its weight are multiplied: the result has one column per token of
// `vocab` (a 124M model's sweep no longer reads its 154 MB unembedding once per cell).
Replayed replay(const std::vector<Node>& nodes, int32_t from, const Tensor& value, int32_t target, int64_t position,
                const std::vector<int64_t>& vocab = {}) {
  std::vector<Tensor> redone(nodes.size());
  redone[u(from)] = value;
  std::vector<char> needed(nodes.size(), 0);  // what the target reads (not the views kept for display)
  needed[u(target)] = 1;
  for (int32_t id = target; id > from; --id)
    if (needed[u(id)])
      for (int32_t i : nodes[u(id)].in)
        if (i >= 0) needed[u(i)] = 1;
  // the row-local tail: nodes whose every reader up to the target is in it (readers come later)
  const int64_t T = nodes[u(target)].out.dim() == 3 ? nodes[u(target)].out.size(1) : 0;
  std::vector<char> tail(nodes.size(), 0), outside(nodes.size(), 0);  // outside: read by a node not in the tail
  if (position >= 0 && T > 1) {
    for (int32_t id = target; id > from; --id) {
      if (!needed[u(id)]) continue;
      tail[u(id)] = !outside[u(id)] && row_local(nodes[u(id)], nodes, T);
      for (int32_t i : nodes[u(id)].in)
        if (i >= 0 && !tail[u(id)]) outside[u(i)] = 1;
    }
  }
  const auto row = [&](const Tensor& t) { return t.slice(1, position, position + 1).contiguous(); };
  std::vector<Tensor> in;
  bool columns = false;  // the target computed for `vocab`'s columns only
  for (int32_t id = from + 1; id <= target; ++id) {
    const Node& n = nodes[u(id)];
    if (!needed[u(id)]) continue;
    bool dirty = false;
    for (int32_t i : n.in) dirty = dirty || (i >= 0 && redone[u(i)].defined());
    if (!dirty && !tail[u(id)]) continue;
    in.clear();
    for (int32_t i : n.in) {
      if (i < 0) { in.push_back(Tensor()); continue; }
      const Tensor& a = redone[u(i)].defined() ? redone[u(i)] : nodes[u(i)].out;
      in.push_back(tail[u(id)] && !tail[u(i)] && nodes[u(i)].op != Op::parameter ? row(a) : a);
    }
    columns = id == target && !vocab.empty() && n.op == Op::linear;
    if (columns) {  // the weight's (and bias's) rows of `vocab`
      for (size_t k = 1; k < in.size(); ++k) {
        if (!in[k].defined()) continue;
        const Tensor all = in[k].contiguous();
        const int64_t width = all.dim() == 2 ? all.size(1) : 1;
        Tensor rows = Tensor::empty(all.dim() == 2 ? Shape{static_cast<int64_t>(vocab.size()), width} : Shape{static_cast<int64_t>(vocab.size())});
        for (size_t r = 0; r < vocab.size(); ++r) std::copy_n(all.data() + vocab[r] * width, width, rows.data() + static_cast<int64_t>(r) * width);
        in[k] = rows;
      }
    }
    redone[u(id)] = op_def(n.op).forward(n, in);
  }
  if (tail[u(target)]) return {redone[u(target)], 0, columns};
  return {redone[u(target)].defined() ? redone[u(target)] : nodes[u(target)].out, position, columns};
}

struct Sweep {
  int32_t logits;
  int64_t clean, corrupted;
};

Sweep sweep_of(const Context& ctx, const PatchingSpec& p, const std::string& field) {
  const int32_t logits = step_node(ctx, "logits");
  if (logits < 0) fail_at(field, "internal: the forward has no logits step");
  const int64_t B = ctx.nodes()[u(logits)].out.size(0);
  return {logits, row_in(p.clean, B, field + ".clean", field + ".clean"), row_in(p.corrupted, B, field + ".corrupted", field + ".corrupted")};
}

}  // namespace

float metric_value(const Tensor& logits_, int64_t batch, const Metric& m, const std::string& where) {
  const Tensor logits = logits_.contiguous();
  const int64_t T = logits.size(1), V = logits.size(2);
  const int64_t p = position_in(m.position, T, where + ".position", where + ".position");
  token_in(m.token, V, where + ".token", where + ".token");
  if (m.kind == Metric::Kind::logit_diff) token_in(m.wrong, V, where + ".wrong", where + ".wrong");
  const float* row = logits.data() + (batch * T + p) * V;
  switch (m.kind) {
    case Metric::Kind::logit_diff: return row[m.token] - row[m.wrong];
    case Metric::Kind::logit: return row[m.token];
    case Metric::Kind::prob: {
      double mx = row[0], sum = 0;
      for (int64_t v = 1; v < V; ++v) mx = std::max(mx, static_cast<double>(row[v]));
      for (int64_t v = 0; v < V; ++v) sum += std::exp(static_cast<double>(row[v]) - mx);
      return static_cast<float>(std::exp(static_cast<double>(row[m.token]) - mx) / sum);
    }
  }
  return 0;
}

PatchingResult activation_patching(const Context& ctx, const PatchingSpec& p, const std::string& field, const Context* row) {
  const Sweep s = sweep_of(ctx, p, field);
  const std::vector<Node>& nodes = ctx.nodes();
  PatchingResult r;
  r.clean_metric = metric_value(nodes[u(s.logits)].out, s.clean, p.metric, field + ".metric");
  r.corrupted_metric = metric_value(nodes[u(s.logits)].out, s.corrupted, p.metric, field + ".metric");
  const std::vector<Context::Named>& named = ctx.named_steps();
  const int32_t row_logits = row ? step_node(*row, "logits") : -1;
  if (row && (row->named_steps().size() != named.size() || row_logits < 0)) fail("internal: the corrupted row's forward has other steps");
  const Tensor& full = nodes[u(s.logits)].out;
  const int64_t at = position_in(p.metric.position, full.size(1), field + ".metric.position", field + ".metric.position");
  // a logit or logit_diff metric reads one or two columns of the logits: the replays compute those
  // alone (prob needs them all); their values were checked against the vocabulary above
  std::vector<int64_t> vocab;
  if (p.metric.kind == Metric::Kind::logit) vocab = {p.metric.token};
  if (p.metric.kind == Metric::Kind::logit_diff) vocab = {p.metric.token, p.metric.wrong};
  const auto measure = [&](const Replayed& got, int64_t b) {
    Metric m = p.metric;
    m.position = got.position;
    if (got.vocab) m.token = 0, m.wrong = 1;
    return metric_value(got.out, b, m, field + ".metric");
  };
  for (const Cell& c : cells_of(ctx, p, field)) {
    const Tensor& act = nodes[u(c.step->node)].out;
    const int64_t bd = cell_dims(c.step->dims).batch;
    float value;
    if (row) {  // the cell of the corrupted row alone (batch 0 there) from the clean row's values
      const Context::Named& mine = row->named_steps()[u(c.step - named.data())];
      if (mine.name != c.step->name) fail("internal: the corrupted row's forward has other steps");
      const Tensor& own = row->nodes()[u(mine.node)].out;
      const Tensor clean = act.slice(bd, s.clean, s.clean + 1);
      value = measure(replay(row->nodes(), mine.node, intervene(own, clean, cell_mask(c, own, 0), 2, 1.f, 0, bd, {}), row_logits, at, vocab), 0);
    } else {
      value = measure(replay(nodes, c.step->node, intervene(act, act, cell_mask(c, act, s.corrupted), 2, 1.f, s.clean, bd, {}), s.logits, at, vocab), s.corrupted);
    }
    r.cells.push_back({c.step->name, c.head, c.position, value});
  }
  return r;
}

PatchingResult attribution_patching(const Context& ctx, const PatchingSpec& p, const std::string& field) {
  const Sweep s = sweep_of(ctx, p, field);
  const std::vector<Node>& nodes = ctx.nodes();
  const Tensor logits = nodes[u(s.logits)].out.contiguous();
  PatchingResult r;
  r.clean_metric = metric_value(logits, s.clean, p.metric, field + ".metric");
  r.corrupted_metric = metric_value(logits, s.corrupted, p.metric, field + ".metric");
  // d(metric of the corrupted row)/d(logits), then one backward to every node
  const int64_t T = logits.size(1), V = logits.size(2), pos = p.metric.position < 0 ? p.metric.position + T : p.metric.position;
  Tensor seed = Tensor::zeros(logits.shape());
  float* g = seed.data() + (s.corrupted * T + pos) * V;
  const float* row = logits.data() + (s.corrupted * T + pos) * V;
  switch (p.metric.kind) {
    case Metric::Kind::logit_diff: g[p.metric.token] += 1.f, g[p.metric.wrong] -= 1.f; break;
    case Metric::Kind::logit: g[p.metric.token] = 1.f; break;
    case Metric::Kind::prob: {  // d softmax(row)[t] / d row[v] = p_t (1[v == t] - p_v)
      double mx = row[0], sum = 0;
      for (int64_t v = 1; v < V; ++v) mx = std::max(mx, static_cast<double>(row[v]));
      for (int64_t v = 0; v < V; ++v) sum += std::exp(static_cast<double>(row[v]) - mx);
      const double pt = std::exp(static_cast<double>(row[p.metric.token]) - mx) / sum;
      for (int64_t v = 0; v < V; ++v) g[v] = static_cast<float>(-pt * std::exp(static_cast<double>(row[v]) - mx) / sum);
      g[p.metric.token] += static_cast<float>(pt);
      break;
    }
  }
  const std::vector<Tensor> grads = backward(nodes, s.logits, seed, false);
  // per step, one pass over the corrupted row: (clean - corrupted) · gradient summed per (head, position)
  const Context::Named* step = nullptr;
  std::vector<double> sums;  // [head][position] of the step (1 where it has no such dim)
  int64_t H = 1, P = 1;
  for (const Cell& c : cells_of(ctx, p, field)) {
    if (c.step != step) {
      step = c.step;
      const Tensor act = nodes[u(step->node)].out.contiguous();
      const Tensor grad = grads[u(step->node)].defined() ? grads[u(step->node)].contiguous() : Tensor::zeros(act.shape());
      const CellDims cd = cell_dims(step->dims);
      const int64_t bd = cd.batch, hd = cd.heads, sd = cd.seq;
      const Shape& shape = act.shape();
      H = hd < 0 ? 1 : shape[u(hd)], P = sd < 0 ? 1 : shape[u(sd)];
      sums.assign(u(H * P), 0.0);
      int64_t stride = 1;  // of the batch dim
      for (size_t d = u(bd) + 1; d < shape.size(); ++d) stride *= shape[d];
      const int64_t shift = (s.clean - s.corrupted) * stride;
      const float *a = act.data(), *gr = grad.data();
      std::vector<int64_t> coord(shape.size(), 0);
      for (int64_t i = 0, n = act.numel(); i < n; ++i) {
        if (coord[u(bd)] == s.corrupted)
          sums[u((hd < 0 ? 0 : coord[u(hd)]) * P + (sd < 0 ? 0 : coord[u(sd)]))] += (static_cast<double>(a[i + shift]) - a[i]) * gr[i];
        for (size_t d = shape.size(); d-- > 0;) {
          if (++coord[d] < shape[d]) break;
          coord[d] = 0;
        }
      }
    }
    double est = 0;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t q = 0; q < P; ++q)
        if ((c.head == Attrs::kAll || c.head == h) && (c.position == Attrs::kAll || c.position == q)) est += sums[u(h * P + q)];
    r.cells.push_back({c.step->name, c.head, c.position, static_cast<float>(est)});
  }
  return r;
}

namespace {

const Tensor* param(const ParamList& params, const std::string& name) {
  for (const auto& [n, t] : params)
    if (n == name) return t;
  return nullptr;
}

// A residual stream read out as the model reads out its last one: GPT lm_head(ln_f(x)) with the
// tied wte; Llama lm_head(norm(x)) (RMSNorm with the eps its `norm` step used; lm_head tied or
// not); CausalTransformer fc_out(x).
Tensor read_out(const Tensor& x, const std::string& module_id, const ParamList& params, float rms_eps) {
  Generator gen(0);
  Context plain(gen, false, false);
  if (module_id == "Llama") {
    const Tensor* w = param(params, "model.norm.weight");
    const Tensor* head = param(params, "lm_head.weight");
    if (!head) head = param(params, "model.embed_tokens.weight");  // tie_word_embeddings
    return linear(plain, rms_norm(plain, Var(x), Var(*w), rms_eps), Var(*head), Var()).t;
  }
  if (module_id == "GPT") {
    const Tensor* w = param(params, "transformer.ln_f.weight");
    const Tensor* b = param(params, "transformer.ln_f.bias");
    const Tensor* wte = param(params, "transformer.wte.weight");
    const Var h = layer_norm(plain, Var(x), Var(*w), b ? Var(*b) : Var());
    return linear(plain, h, Var(*wte), Var()).t;
  }
  const Tensor* w = param(params, "fc_out.weight");
  const Tensor* b = param(params, "fc_out.bias");
  return linear(plain, Var(x), Var(*w), b ? Var(*b) : Var()).t;
}

// Where the residual stream leaves a block: GPT's x and each block's x_attn, x_mlp;
// CausalTransformer's x and each layer's norm1, norm2.
bool residual_point(const std::string& module_id, const std::string& name) {
  if (module_id == "Llama")
    return name == "inputs_embeds" || matches("model.layers.*.residual_attn", name.c_str()) ||
           matches("model.layers.*.residual_mlp", name.c_str());
  if (name == "x") return true;
  if (module_id == "GPT") return matches("transformer.h.*.x_attn", name.c_str()) || matches("transformer.h.*.x_mlp", name.c_str());
  return matches("layers.*.norm1", name.c_str()) || matches("layers.*.norm2", name.c_str());
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> logit_lens(const Context& ctx, const std::string& module_id, const ParamList& params) {
  const int32_t norm = step_node(ctx, "norm");  // Llama's final RMSNorm: its eps
  const float eps = norm >= 0 ? ctx.nodes()[u(norm)].attrs.eps : 1e-6f;
  std::vector<std::pair<std::string, Tensor>> out;
  for (const Context::Named& n : ctx.named_steps())
    if (residual_point(module_id, n.name)) out.emplace_back(n.name, read_out(ctx.nodes()[u(n.node)].out, module_id, params, eps));
  return out;
}

namespace {

// A layer's heads through its output projection (weight (C, H*D), the heads' concatenated
// outputs y at one position): head h's part of the residual stream, each added.
template <class Add>
void add_heads(const std::string& prefix, const std::vector<double>& y, const Tensor& w, int64_t H, Add add) {
  const int64_t C = w.size(0), HD = w.size(1), D = HD / H;
  const float* wp = w.data();
  for (int64_t h = 0; h < H; ++h) {
    std::vector<double> c(u(C), 0.0);
    for (int64_t o = 0; o < C; ++o)
      for (int64_t k = h * D; k < (h + 1) * D; ++k) c[u(o)] += static_cast<double>(wp[o * HD + k]) * y[u(k)];
    add(prefix + std::to_string(h), c);
  }
}

}  // namespace

LogitAttribution logit_attribution(const Context& ctx, const ParamList& params, const LogitAttributionSpec& spec) {
  const std::string field = "logit_attribution";
  const Tensor logits = step_value(ctx, "logits", field).contiguous();
  const int64_t B = logits.size(0), T = logits.size(1), V = logits.size(2);
  const int64_t b = row_in(spec.batch, B, field + ".batch", field + ".batch");
  const int64_t p = position_in(spec.position, T, field + ".position", field + ".position");
  token_in(spec.token, V, field + ".token", field + ".token");
  if (spec.wrong >= 0) token_in(spec.wrong, V, field + ".wrong", field + ".wrong");
  const bool llama = param(params, "model.norm.weight") != nullptr;
  const Tensor* lm_head = llama ? param(params, "lm_head.weight") : nullptr;  // tied: embed_tokens'
  const Tensor wte = (lm_head ? lm_head : param(params, llama ? "model.embed_tokens.weight" : "transformer.wte.weight"))->contiguous();
  const int64_t C = wte.size(1);
  // u = W_U[token] - W_U[wrong]
  std::vector<double> unembed(u(C));
  const float* up = wte.data();
  for (int64_t k = 0; k < C; ++k)
    unembed[u(k)] = static_cast<double>(up[spec.token * C + k]) - (spec.wrong >= 0 ? up[spec.wrong * C + k] : 0.f);
  // the rows (b, p) of the steps the final residual stream sums
  const auto at = [&](const std::string& name, bool batched) {
    const Tensor t = step_value(ctx, name, field).contiguous();
    const float* base = t.data() + ((batched ? b * T : 0) + p) * t.size(-1);
    return std::vector<double>(base, base + t.size(-1));
  };
  const float* row = logits.data() + (b * T + p) * V;
  LogitAttribution out;
  out.total = row[spec.token] - (spec.wrong >= 0 ? row[spec.wrong] : 0.f);
  if (llama) {
    // model.norm: each component times the final residual's RMS scale, the norm's weight and u
    int64_t L = 0;
    while (step_node(ctx, "model.layers." + std::to_string(L) + ".residual_mlp") >= 0) ++L;
    const std::vector<double> r = L ? at("model.layers." + std::to_string(L - 1) + ".residual_mlp", true) : at("inputs_embeds", true);
    double ms = 0;
    for (double v : r) ms += v * v;
    const int32_t norm = step_node(ctx, "norm");
    const double scale = 1.0 / std::sqrt(ms / static_cast<double>(C) + (norm >= 0 ? ctx.nodes()[u(norm)].attrs.eps : 1e-6f));
    const Tensor w = param(params, "model.norm.weight")->contiguous();
    const float* wp = w.data();
    const auto add = [&](const std::string& name, const std::vector<double>& c) {
      double value = 0;
      for (int64_t k = 0; k < C; ++k) value += c[u(k)] * scale * wp[k] * unembed[u(k)];
      out.components.push_back({name, static_cast<float>(value)});
    };
    add("model.embed_tokens", at("inputs_embeds", true));
    for (int64_t i = 0; i < L; ++i) {
      const std::string layer = "model.layers." + std::to_string(i) + ".";
      const int32_t heads = step_node(ctx, layer + "self_attn.attn_output_heads");
      add_heads(layer + "self_attn.head.", at(layer + "self_attn.attn_output", true), param(params, layer + "self_attn.o_proj.weight")->contiguous(),
                ctx.nodes()[u(heads)].out.size(1), add);
      if (const Tensor* bias = param(params, layer + "self_attn.o_proj.bias")) {
        const Tensor bb = bias->contiguous();
        add(layer + "self_attn.o_proj.bias", std::vector<double>(bb.data(), bb.data() + C));
      }
      add(layer + "mlp", at(layer + "mlp.down_proj", true));
    }
    return out;
  }
  // GPT: each component's ((c - mean c) / sigma) . gamma . u
  const Tensor gamma = param(params, "transformer.ln_f.weight")->contiguous();
  const float* gp = gamma.data();
  const Tensor* beta = param(params, "transformer.ln_f.bias");
  int64_t L = 0;
  while (step_node(ctx, "transformer.h." + std::to_string(L) + ".x_mlp") >= 0) ++L;
  const std::vector<double> r = L ? at("transformer.h." + std::to_string(L - 1) + ".x_mlp", true) : at("x", true);
  double mean = 0, var = 0;
  for (double v : r) mean += v;
  mean /= static_cast<double>(C);
  for (double v : r) var += (v - mean) * (v - mean);
  const double sigma = std::sqrt(var / static_cast<double>(C) + 1e-5);
  const auto add = [&](const std::string& name, const std::vector<double>& c) {
    double m = 0, value = 0;
    for (double v : c) m += v;
    m /= static_cast<double>(C);
    for (int64_t k = 0; k < C; ++k) value += (c[u(k)] - m) / sigma * gp[k] * unembed[u(k)];
    out.components.push_back({name, static_cast<float>(value)});
  };
  add("wte", at("tok_emb", true));
  if (step_node(ctx, "pos_emb") >= 0) add("wpe", at("pos_emb", false));
  for (int64_t i = 0; i < L; ++i) {
    const std::string blk = "transformer.h." + std::to_string(i) + ".";
    add_heads(blk + "attn.head.", at(blk + "attn.y_merged", true), param(params, blk + "attn.c_proj.weight")->contiguous(),
              ctx.nodes()[u(step_node(ctx, blk + "attn.y"))].out.size(1), add);
    if (const Tensor* bias = param(params, blk + "attn.c_proj.bias")) {
      const Tensor b = bias->contiguous();
      add(blk + "attn.c_proj.bias", std::vector<double>(b.data(), b.data() + C));
    }
    add(blk + "mlp", at(blk + "mlp.c_proj", true));
  }
  if (beta) {  // ln_f's bias reaches the logits as it is: beta . u
    double value = 0;
    for (int64_t k = 0; k < C; ++k) value += static_cast<double>(beta->data()[k]) * unembed[u(k)];
    out.components.push_back({"transformer.ln_f.bias", static_cast<float>(value)});
  }
  return out;
}

}  // namespace attn
