// The tape of one forward pass. Every op a module runs through a Context (graph.hpp) is recorded
// as a typed node: its Op, its attributes, the nodes it read and the tensor it made. A module then
// names the nodes that are the seed's variables (ctx.step("attn_weights", ...)): those are the
// steps the page shows. Everything else is derived from this one record: a step's `op` and
// attributes, the ops folded into it, its inputs, its `cpp` text (so it cannot drift from the
// code), and, for training, the backward pass, which walks the same nodes in reverse.
// Nothing is recorded when the run neither traces nor wants gradients: each op just computes.
#pragma once
#include <array>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/build.hpp"
#include "base/random.hpp"
#include "base/tensor.hpp"
#include "tape/op_list.hpp"

namespace attn {

// Hugging Face's rope_scaling (modeling_rope_utils), {factor, low_freq_factor, high_freq_factor,
// original_max_position_embeddings}: factor 0 none (the default frequencies), original 0 "linear", else "llama3".
using RopeScaling = std::array<double, 4>;

// The numbers and names an op was called with; each op reads the fields its comment names.
struct Attrs {
  float scale = 1.f;          // scale: the divisor (divide) or the factor
  bool divide = false;        // scale: x / scale (PyTorch's div) or x * scale (mul)
  float fill = 0.f;           // masked_fill: the value masked cells get
  bool causal = false;        // masked_fill: the mask is the causal triangle (key after query)
  std::string mask_input;     // masked_fill: the module input the mask came from ("" when causal)
  bool masked_where_zero = false;  // masked_fill: mask == 0 is masked (seed 000); else nonzero is (003)
  bool mask_unsqueezed = false;    // masked_fill: the (B,T,S) mask was unsqueezed to (B,1,T,S) (seed 003)
  float p = 0.f;              // dropout: the probability of zeroing
  float eps = 1e-5f;          // layer_norm, rms_norm
  bool tanh = false;          // gelu: approximate='tanh' (GPT-2's gelu_new)
  int64_t heads = 0;          // split_heads, merge_heads
  int64_t dim0 = 0, dim1 = 0; // transpose
  int64_t chunks = 0, index = 0;  // chunk: which of how many
  std::vector<int64_t> sizes;     // chunk: the widths of a torch.split (empty: `chunks` equal ones)
  int64_t dim = -1;           // softmax, amax, chunk, concat, stack: the dim
  bool transpose_b = false;   // matmul: a @ b.transpose(-2, -1)
  Shape shape;                // view: the new shape
  int64_t ignore_index = -100;  // cross_entropy
  std::string ids_input;      // embedding: the module input that held the ids ("" when given otherwise)
  std::string cache;          // cache_append: which cache, "k" or "v"
  int64_t cached = 0;         // cache_append: rows it held before this append
  int64_t capacity = 0;       // cache_append: rows it can hold (block_size)
  double base = 0;            // rope_table: the base of the frequencies (rope_base)
  // rope_table: Hugging Face's rope_scaling of the frequencies, {factor, low_freq_factor,
  // high_freq_factor, original_max_position_embeddings}: factor 0 none, original 0 "linear", else "llama3"
  RopeScaling rope_scaling{};
  bool sine = false;          // rope_table: the sin table (else cos)
  int64_t repeats = 1;        // repeat_kv: how many query heads share each kv head
  int64_t window = 0;         // masked_fill: a sliding window (0: none) over the causal mask
  int64_t sink_tokens = 0;    // masked_fill: keys below this position stay visible under the window
  // intervene: how the selected cells are set (Intervention::Set), where as given (kAll: every
  // index), the row patched from, the dims a mean runs over; `scale` is the factor
  int set = 0;
  int64_t at_head = kAll, at_position = kAll, at_batch = kAll, from_batch = 0;
  std::vector<int64_t> mean_dims;
  static constexpr int64_t kAll = INT64_MIN;
};

// An intervention on a named step (SCENARIO.md, "Interventions"): as a PyTorch forward hook on that
// line, the selected cells (every index of a dim whose key is absent) of the step's value are
// replaced before any later line reads it. head indexes the `heads` (or `kv_heads`) dim, position
// the `seq` (or `seq_q`) dim in the whole sequence (negative: from its end), batch the `batch` dim.
struct Intervention {
  enum class Set { zero = 0, mean = 1, from_batch = 2, scale = 3 };
  std::string step;
  int64_t head = Attrs::kAll, position = Attrs::kAll, batch = Attrs::kAll;
  Set set = Set::zero;
  int64_t from_batch = 0;  // from_batch: the row whose values the cells take
  float scale = 1.f;       // scale: the factor
};

// A tensor and the node that made it (-1 when nothing is recorded). A plain Tensor converts to a
// Var that is on no tape (a constant).
struct Var {
  Var() = default;
  Var(Tensor tensor, int32_t node = -1) : t(std::move(tensor)), id(node) {}  // NOLINT: implicit on purpose
  Tensor t;
  int32_t id = -1;
  bool defined() const { return t.defined(); }
  const Shape& shape() const { return t.shape(); }
  int64_t size(int64_t d) const { return t.size(d); }
  int64_t dim() const { return t.dim(); }
};

struct Node {
  Op op;
  std::vector<int32_t> in;    // input nodes in the op's argument order; -1 for an absent one (no bias)
  Tensor out;
  Attrs attrs;
  Tensor saved;               // what the backward needs beyond inputs and output (dropout's mask, ...)
  std::vector<int64_t> ids;   // embedding: the ids looked up; cross_entropy: the targets
  std::string leaf;           // input and parameter nodes: the name
  bool requires_grad = false; // depends on a parameter or a float input (PyTorch's requires_grad)
};

// A named step, as a result gives it (core/SCENARIO.md, "Result"): typed, with everything a view
// needs, derived from the tape when the run ends.
struct StepInput {
  enum class Kind { step, input, param } kind;
  std::string name;
};
struct Step {
  std::string name;               // the seed's variable name, prefixed by submodule ("attn.q")
  Tensor value;                   // packed
  Op op;                          // the op of the node the name points at
  std::vector<Op> ops;            // the ops of this line, in order: unnamed nodes folded in, then op
  std::string attrs;              // the attributes of those ops, a JSON object
  std::vector<StepInput> inputs;  // the named tensors the line read: steps, module inputs, parameters
  std::vector<std::string> dims;  // one name per dimension: "batch", "heads", "seq", "d_head"…
  std::vector<std::string> tokens;// per dimension: the module input whose positions it runs over, or ""
  std::string code;               // the PyTorch line of the seed that computes it
  std::string cpp;                // the core call that computes it here, printed from the tape
  Tensor grad;                    // dL/d(this tensor), when gradients were computed and it is on the path
};

class Context {
 public:
  // trace: name the steps (the page's view, the result's "steps"); grad: keep every node for a
  // backward pass (autograd.hpp). With neither, nothing is recorded.
  Context(Generator& gen, bool train, bool trace, bool grad = false) : gen(gen), train(train), trace_(trace), grad_(grad) {}
  Generator& gen;
  const bool train;
  // false: the caller reads only "output" (the benchmark), so attention need not keep its
  // (B,H,T,S) weights, which at long T are the largest tensor of the pass.
  bool want_weights = true;
  bool tracing() const { return trace_; }
  bool recording() const { return trace_ || grad_; }

  // Leaves. Parameters are registered once (state_dict names) and become nodes on first use;
  // they require gradients, as do float inputs when the caller says so.
  Var input(const Tensor& t, const std::string& name, bool requires_grad = false);
  void bind_parameters(const std::vector<std::pair<std::string, Tensor*>>& params);
  Var param(const Tensor& t);
  // Records an op's node (graph.cpp calls it; only when recording()).
  Var record(Op op, std::vector<int32_t> in, Tensor out, Attrs attrs = {}, Tensor saved = {},
             std::vector<int64_t> ids = {});

  // Names v as the seed's variable `name` with one dim name per dimension and the seed's line. An
  // intervention on that step replaces v (what every later line reads) first.
  void step(const char* name, Var& v, std::initializer_list<const char*> dims, const char* code) {
    if (recording() || (kInterp && interventions)) step(name, v, std::vector<std::string>(dims.begin(), dims.end()), code);
  }
  void step(const char* name, Var& v, const std::vector<std::string>& dims, const char* code) {
    if (kInterp && interventions) intervene_step(name, v, dims);
    if (recording()) name_step(name, v, dims, code);
  }

  // The interventions to apply at the steps they name (the list outlives the context), and which of
  // them met their step in this forward (unknown_interventions() says which did not).
  const std::vector<Intervention>* interventions = nullptr;
  std::vector<bool> intervened;
  // After a forward: an error for the first intervention whose step it did not name, with the
  // nearest step names (`module` names the model in the message).
  void check_interventions(const std::string& module) const;
  // What an intervention's position counts in: the absolute position of the seq dims' first row,
  // and the whole sequence's length (-1: the step's own rows from position_offset on). Generation
  // sets both for each new token's forward.
  int64_t position_offset = 0, sequence_length = -1;

  const std::vector<Node>& nodes() const { return nodes_; }
  // The full names of the steps named so far, in order (prefixes included).
  std::vector<std::string> step_names() const;
  // The name of the first step naming node `id` ("" when none does).
  std::string step_of(int32_t id) const;
  // The node of a registered parameter, -1 when the forward did not use it.
  int32_t param_node(const Tensor& t) const;
  // The node of the input leaf named `name`, -1 when there is none.
  int32_t input_node(const std::string& name) const;
  // The named steps, typed and printed (tape.cpp); values packed. node_grads: dL/d(node) from
  // backward(), to give each step on the loss's path its gradient.
  std::vector<Step> steps(const std::vector<Tensor>* node_grads = nullptr) const;

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
  // Which module inputs the sequence dims of the steps run over while it lives: "seq" and "seq_q"
  // follow `queries`, "seq_k" follows `keys` (the Transformer's encoder: src; its decoder: tgt,
  // with cross-attention keys from src). The page labels those axes with that input's tokens.
  class Sequences {
   public:
    Sequences(Context& ctx, std::string queries, std::string keys)
        : ctx_(ctx), saved_(ctx.seq_q_, ctx.seq_k_) {
      ctx.seq_q_ = std::move(queries);
      ctx.seq_k_ = std::move(keys);
    }
    ~Sequences() { std::tie(ctx_.seq_q_, ctx_.seq_k_) = saved_; }
    Sequences(const Sequences&) = delete;
    Sequences& operator=(const Sequences&) = delete;

   private:
    Context& ctx_;
    std::pair<std::string, std::string> saved_;
  };
  const std::string& seq_q() const { return seq_q_; }
  const std::string& seq_k() const { return seq_k_; }

  // A named step: its full name, its node, its dims' names (and the inputs they run over), its line.
  struct Named {
    std::string name;
    int32_t node;
    std::vector<std::string> dims, tokens;
    std::string code;
  };
  const std::vector<Named>& named_steps() const { return named_; }

 private:
  void name_step(const char* name, const Var& v, std::vector<std::string> dims, const char* code);
  void intervene_step(const char* name, Var& v, const std::vector<std::string>& dims);
  bool trace_, grad_;
  std::string prefix_, seq_q_, seq_k_;
  std::vector<Node> nodes_;
  std::vector<Named> named_;
  struct Registered {
    const float* base;
    std::string name;
    int32_t node = -1;
  };
  std::vector<Registered> params_;
};

}  // namespace attn
