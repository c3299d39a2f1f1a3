// Interventions (SCENARIO.md, "Interventions"): a named step's value replaced, as a PyTorch forward
// hook on that line replaces it, before any later line reads it. Context::step calls
// intervene_step for every step an intervention names; each intervention is one `intervene` node
// whose inputs are the value so far and the step's value as computed (what "mean" and
// "from_batch" read), its selected cells kept as a 0/1 tensor. Its loops are math/ops.cpp's.
#include <algorithm>
#include <string>
#include <utility>

#include "base/build.hpp"
#include "base/error.hpp"
#include "math/ops.hpp"
#include "tape/graph.hpp"
#include "tape/op.hpp"

namespace attn {

namespace {

const char* const kSetNames[] = {"zero", "mean", "from_batch", "scale"};

Tensor intervene_forward(const Node& n, const std::vector<Tensor>& in) {
  const Attrs& a = n.attrs;
  return intervene(in[0], in[1], n.saved, a.set, a.scale, a.from_batch, a.dim, a.mean_dims);
}
ATTN_SMALL Json where_json(int64_t v) { return v == Attrs::kAll ? Json(nullptr) : Json(v); }
ATTN_SMALL Json intervene_attrs(const Node& n, const std::vector<Node>&) {
  const Attrs& a = n.attrs;
  return {{"set", kSetNames[a.set]},
          {"head", where_json(a.at_head)},
          {"position", where_json(a.at_position)},
          {"batch", where_json(a.at_batch)},
          {"from_batch", a.set == 2 ? Json(a.from_batch) : Json(nullptr)},
          {"scale", a.set == 3 ? Json(static_cast<double>(a.scale)) : Json(nullptr)}};
}
ATTN_SMALL std::string intervene_call(const Node& n, const std::vector<std::string>& args) {
  const Attrs& a = n.attrs;
  std::string how = kSetNames[a.set];
  if (a.set == 2) how += " " + std::to_string(a.from_batch);
  if (a.set == 3) how += " " + float_literal(a.scale);
  return "intervene(" + args[0] + ", \"" + how + "\")";
}
void intervene_backward(const Node& n, const Tensor& g, Grads& w) {
  const Attrs& a = n.attrs;
  w.give(n, 0, intervene_grad_prev(g, n.saved, a.set, a.scale), true);
  if (a.set == 1 || a.set == 2) w.give(n, 1, intervene_grad_src(g, n.saved, a.set, a.from_batch, a.dim, a.mean_dims), true);
}

std::string dims_text(const std::vector<std::string>& dims) {
  std::string s;
  for (const std::string& d : dims) s += (s.empty() ? "" : ", ") + d;
  return "(" + s + ")";
}

int64_t dim_named(const std::vector<std::string>& dims, std::initializer_list<const char*> names) {
  for (size_t d = 0; d < dims.size(); ++d)
    for (const char* name : names)
      if (dims[d] == name) return static_cast<int64_t>(d);
  return -1;
}

}  // namespace

CellDims cell_dims(const std::vector<std::string>& dims) {
  return {dim_named(dims, {"batch"}), dim_named(dims, {"heads", "kv_heads"}), dim_named(dims, {"seq", "seq_q"})};
}

Tensor select_cells(const Shape& shape, const CellDims& d, int64_t batch, int64_t head, int64_t position) {
  const auto at = [](const std::vector<int64_t>& coord, int64_t dim, int64_t index) {
    return index == Attrs::kAll || (dim >= 0 && coord[static_cast<size_t>(dim)] == index);
  };
  Tensor sel = Tensor::zeros(shape);
  float* m = sel.data();
  std::vector<int64_t> coord(shape.size(), 0);
  for (int64_t i = 0, n = sel.numel(); i < n; ++i) {
    m[i] = at(coord, d.batch, batch) && at(coord, d.heads, head) && at(coord, d.seq, position) ? 1.f : 0.f;
    for (size_t k = shape.size(); k-- > 0;) {
      if (++coord[k] < shape[k]) break;
      coord[k] = 0;
    }
  }
  return sel;
}

// The small build never records one (base/build.hpp): its descriptor keeps the name only.
const OpDef intervene_op = kInterp ? OpDef{"intervene", intervene_forward, intervene_attrs, intervene_call, intervene_backward}
                                   : OpDef{"intervene", nullptr, no_attrs, plain_call, nullptr};

Var intervene(Context& ctx, const Var& prev, const Var& src, const Tensor& sel, Attrs how) {
  return apply(ctx, Op::intervene, {prev, src}, std::move(how), sel);
}

// Every intervention naming this step, in the scenario's order: its cells checked against the
// step's named dims and selected, then one intervene node each.
void Context::intervene_step(const char* name, Var& v, const std::vector<std::string>& dims) {
  const std::string full = prefix_ + name;
  if (intervened.size() != interventions->size()) intervened.assign(interventions->size(), false);
  const Var computed = v;
  for (size_t k = 0; k < interventions->size(); ++k) {
    const Intervention& iv = (*interventions)[k];
    if (iv.step != full) continue;
    intervened[k] = true;
    const std::string at = "interventions." + std::to_string(k), said = "interventions[" + std::to_string(k) + "]";
    const CellDims cd = cell_dims(dims);
    const int64_t hd = cd.heads, sd = cd.seq, bd = cd.batch;
    Attrs a;
    a.set = static_cast<int>(iv.set);
    a.at_head = iv.head;
    a.at_position = iv.position;
    a.at_batch = iv.batch;
    a.from_batch = iv.from_batch;
    a.scale = iv.scale;
    a.dim = bd;
    int64_t row = Attrs::kAll;  // the position's row in this forward's tensor (kAll: every row)
    if (iv.head != Attrs::kAll) {
      if (hd < 0) fail_at(at + ".head", said, ".head (", iv.head, "): step '", full, "' has no heads dim: its dims are ", dims_text(dims));
      if (iv.head < 0 || iv.head >= v.size(hd))
        fail_at(at + ".head", said, ".head (", iv.head, ") is out of range: step '", full, "' has ", v.size(hd), " heads (0..", v.size(hd) - 1, ")");
    }
    if (iv.position != Attrs::kAll) {
      if (sd < 0) fail_at(at + ".position", said, ".position (", iv.position, "): step '", full, "' has no seq dim: its dims are ", dims_text(dims));
      const int64_t total = sequence_length >= 0 ? sequence_length : position_offset + v.size(sd);
      const int64_t p = iv.position < 0 ? iv.position + total : iv.position;
      // generation: a position past the sequence so far is a token still to come
      if (p < 0 || (p >= total && sequence_length < 0))
        fail_at(at + ".position", said, ".position (", iv.position, ") is out of range: the sequence has ", total, " positions (0..",
                total - 1, ", or -", total, "..-1 from its end)");
      row = p - position_offset;
      if (row < 0 || row >= v.size(sd)) row = -1;  // a position this forward does not compute (cached, or cropped)
    }
    if ((iv.batch != Attrs::kAll || iv.set == Intervention::Set::from_batch) && bd < 0)
      fail_at(at + (iv.batch != Attrs::kAll ? ".batch" : ".set"), said, iv.batch != Attrs::kAll ? ".batch" : ".set from_batch",
              " needs a batch dim: step '", full, "' has dims ", dims_text(dims));
    if (iv.batch != Attrs::kAll && (iv.batch < 0 || iv.batch >= v.size(bd)))
      fail_at(at + ".batch", said, ".batch (", iv.batch, ") is out of range: the batch has ", v.size(bd), " rows (0..", v.size(bd) - 1, ")");
    if (iv.set == Intervention::Set::from_batch && (iv.from_batch < 0 || iv.from_batch >= v.size(bd)))
      fail_at(at + ".set", said, ".set.from_batch (", iv.from_batch, ") is out of range: the batch has ", v.size(bd), " rows (0..",
              v.size(bd) - 1, ")");
    if (iv.set == Intervention::Set::mean) {
      if (bd >= 0) a.mean_dims.push_back(bd);
      if (sd >= 0) a.mean_dims.push_back(sd);
      if (a.mean_dims.empty())
        fail_at(at + ".set", said, ".set \"mean\" averages over the batch and position dims: step '", full, "' has neither (its dims are ",
                dims_text(dims), ")");
    }
    v = intervene(*this, v, computed, select_cells(v.shape(), cd, iv.batch, iv.head, row), std::move(a));
  }
}

namespace {

// Levenshtein distance (names are short).
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

void Context::check_interventions(const std::string& module) const {
  if (!interventions) return;
  for (size_t k = 0; k < interventions->size(); ++k) {
    if (k < intervened.size() && intervened[k]) continue;
    const std::string& name = (*interventions)[k].step;
    std::vector<std::pair<size_t, std::string>> near;
    for (const Named& n : named_) {
      bool seen = false;
      for (const auto& [d, other] : near) seen = seen || other == n.name;
      if (!seen) near.emplace_back(distance(name, n.name), n.name);
    }
    std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string list;
    for (size_t i = 0; i < near.size() && i < 3; ++i) list += (i ? ", '" : "'") + near[i].second + "'";
    fail_at("interventions." + std::to_string(k) + ".step", "interventions[", k, "].step '", name, "' is not a step of ", module,
            near.empty() ? std::string() : ": the nearest are " + list, " (a run with \"trace\": true lists every step)");
  }
}

}  // namespace attn
