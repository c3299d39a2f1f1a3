// Questions to a trained model (SCENARIO.md, "Interpretability"): what the answer's metric becomes
// when one activation of a corrupted run takes the clean run's value (activation patching, each
// cell by a replay of the tape from the patched step on), its first-order estimate from one
// backward (attribution patching), what each layer already predicts (logit lens), and which
// component of the final residual stream writes the answer (direct logit attribution). On the
// module's traced forward: its Context's nodes and named steps. Interventions on steps themselves
// are the tape's (tape.hpp, Intervention).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/module.hpp"
#include "tape/tape.hpp"

namespace attn {

// A number read from the logits (B, T, V) of one batch row at one position (negative: from the end).
struct Metric {
  enum class Kind { logit_diff, logit, prob };
  Kind kind = Kind::logit_diff;
  int64_t position = -1;
  int64_t token = 0;
  int64_t wrong = -1;  // logit_diff: logit[token] - logit[wrong]
};

// "patching" / "attribution_patching": row `corrupted` patched from row `clean`, cell by cell over
// the steps matching `steps` (fnmatch patterns), by head, position, both, or the whole step.
struct PatchingSpec {
  int64_t clean = 0, corrupted = 1;
  std::vector<std::string> steps;
  std::string by = "all";  // "head" | "position" | "head_position" | "all"
  Metric metric;
};

struct PatchCell {
  std::string step;
  int64_t head = Attrs::kAll, position = Attrs::kAll;  // kAll: the cell spans that dim
  float value = 0;  // patching: the metric; attribution patching: the estimate
};

struct PatchingResult {
  float clean_metric = 0, corrupted_metric = 0;
  std::vector<PatchCell> cells;
};

// "logit_attribution": the final residual stream of one row and position split into its components.
struct LogitAttributionSpec {
  int64_t position = -1, token = 0, wrong = -1, batch = 0;
};

struct LogitComponent {
  std::string name;
  float value;
};

struct LogitAttribution {
  float total = 0;
  std::vector<LogitComponent> components;
};

// The metric on logits (B, T, V) at row `batch`; `where` names the field in errors.
float metric_value(const Tensor& logits, int64_t batch, const Metric& m, const std::string& where);
// Activation patching and attribution patching on a traced forward (ctx recorded every node).
// row: when given, a traced forward of the corrupted row alone (B = 1; the model's rows do not
// mix): each cell is replayed there, on half the numbers, with the clean row's values from ctx.
PatchingResult activation_patching(const Context& ctx, const PatchingSpec& p, const std::string& where, const Context* row = nullptr);
PatchingResult attribution_patching(const Context& ctx, const PatchingSpec& p, const std::string& where);
// The logit lens of a traced forward of `module_id` (GPT, CausalTransformer): one (B, T, V) readout
// per point where the residual stream leaves a block, in trace order.
std::vector<std::pair<std::string, Tensor>> logit_lens(const Context& ctx, const std::string& module_id, const ParamList& params);
// Direct logit attribution of GPT's traced forward: the components of the final residual stream
// (the input of ln_f) at one row and position, each through ln_f's scale (with the actual
// residual's statistics) and the unembedding, summing to the logit (difference). They are the
// components the forward computed: an intervention on the residual stream itself (x, x_attn,
// x_mlp) makes the residual no longer their sum.
LogitAttribution logit_attribution(const Context& ctx, const ParamList& params, const LogitAttributionSpec& spec);

}  // namespace attn
