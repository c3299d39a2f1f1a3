// The experiments lab without DOM or worker (docs/experiments.md): which steps of a model are its
// heads and its residual stream, the heads switched off as the core's `interventions`, the
// scenarios the lab runs (the page's worker and tests/node/lab.test.mjs run the same ones, the
// latter also through `node bindings/cli.mjs`), the clean and corrupted sequences of a task and
// the corruption proposed for each, and what is read off the core's results.
import { previousOccurrence } from '../train/patterns.js';

// A refusal: an Error whose message is English (the CLI's and the tests' language) and whose
// `key` and `params` give the page the same sentence in its own language (locales/lab.*.js).
const fail = (message, field, key, params) => { throw Object.assign(new Error(message), { field, key, params }); };

// A model's layers and heads, the step holding head h's output (its `heads` dim: what an
// ablation or a head's patching cell selects), each layer's attention weights, and the residual
// stream's steps (as patterns) in the order the lens reads them. DLA needs a GPT (SCENARIO.md).
export function archOf({ module, config }) {
  if (module === 'GPT') {
    return { layers: config.n_layer, heads: config.n_head, head: (l) => `transformer.h.${l}.attn.y`, headPattern: 'transformer.h.*.attn.y',
      weights: (l) => `transformer.h.${l}.attn.att_softmax`, residual: ['x', 'transformer.h.*.x_attn', 'transformer.h.*.x_mlp'], dla: true };
  }
  if (module === 'CausalTransformer') {
    return { layers: config.num_layers, heads: config.num_heads, head: (l) => `layers.${l}.attn.context_vec_heads`, headPattern: 'layers.*.attn.context_vec_heads',
      weights: (l) => `layers.${l}.attn.attn_weights`, residual: ['x', 'layers.*.norm1', 'layers.*.norm2'], dla: false };
  }
  return fail(`module "${module}" has no experiments: the lab questions a GPT or a CausalTransformer`, 'module', 'lab.badModule', { module });
}

// "0.2,1.1" -> [[0, 2], [1, 1]], sorted, each head once. Throws naming the item and the rule.
export function parseAblate(text, layers, heads) {
  const out = new Map();
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(\d+)\.(\d+)$/.exec(item);
    if (!m) fail(`ablate: "${item}" is not <layer>.<head> (two whole numbers, as 1.2)`, 'ablate', 'lab.badAblate', { item });
    const l = Number(m[1]), h = Number(m[2]);
    if (l >= layers || h >= heads) {
      fail(`ablate: "${item}" is not a head of this model (layers 0 to ${layers - 1}, heads 0 to ${heads - 1})`, 'ablate', 'lab.noHead', { item, layer: layers - 1, head: heads - 1 });
    }
    out.set(l * heads + h, [l, h]);
  }
  return [...out.keys()].sort((a, b) => a - b).map((k) => out.get(k));
}

export const formatAblate = (heads) => heads.map(([l, h]) => `${l}.${h}`).join(',');

// One intervention per head switched off: its output zeroed, or set to its mean over the batch
// and positions of the run (SCENARIO.md "Interpretability").
export const interventionsOf = (model, ablated, mean = false) =>
  ablated.map(([l, h]) => ({ step: archOf(model).head(l), head: h, set: mean ? 'mean' : 'zero' }));

const base = (model, idx, shape) => ({ module: model.module, config: model.config, seed: model.seed ?? 1,
  inputs: [{ name: 'idx', shape, data: Float32Array.from(idx) }] });

// The held-out sequences and the current input as one batch (the input last, its targets
// ignored): the core's loss is the held-out loss, the last row's logits the input's, and a mean
// ablation is the mean over all of them.
export function evaluationBatch(held, input) {
  const [B, T] = held.shape;
  if (input.idx.length !== T) return { idx: held.idx, target: held.target, shape: held.shape, inputRow: -1 };
  const idx = new Float32Array((B + 1) * T), target = new Float32Array((B + 1) * T).fill(-100);
  idx.set(held.idx);
  idx.set(input.idx, B * T);
  target.set(held.target);
  return { idx, target, shape: [B + 1, T], inputRow: B };
}

// The scenario of a press: the batch through the model with the heads switched off, and the loss.
export function evaluationScenario(model, batch, ablated, mean) {
  return { ...base(model, batch.idx, batch.shape), interventions: interventionsOf(model, ablated, mean),
    loss: { fn: 'cross_entropy', target: { shape: batch.shape, data: Array.from(batch.target) }, ignore_index: -100 } };
}

// Sequences (the input alone by default), traced: each head's attention on them (the tiles, the pattern scores).
export const mapsScenario = (model, idx, shape = [1, idx.length]) => ({ ...base(model, idx, shape), trace: true });

// The clean (row 0) and corrupted (row 1) inputs: activation and attribution patching of every
// head's output (`by: 'head'`) and of the residual stream at every position (`by: 'position'`), the
// logit lens, and (GPT) the direct logit attribution of the clean row; metric logit[token] -
// logit[wrong] at `position`. Two scenarios: one `patching` field each.
export function analysisScenarios(model, clean, corrupted, position, token, wrong) {
  const arch = archOf(model);
  const metric = { kind: 'logit_diff', position, token, wrong };
  const patch = (steps, by) => ({ clean: 0, corrupted: 1, steps, by, metric });
  const idx = [...clean, ...corrupted];
  const heads = { ...base(model, idx, [2, clean.length]), patching: patch([arch.headPattern], 'head'),
    attribution_patching: patch([arch.headPattern], 'head'), logit_lens: true };
  if (arch.dla) heads.logit_attribution = { position, token, wrong, batch: 0 };
  const residual = { ...base(model, idx, [2, clean.length]), patching: patch(arch.residual, 'position'), attribution_patching: patch(arch.residual, 'position') };
  return { heads, residual };
}

// --- sequences ---

// A sequence typed as text, one character per token of the task's vocabulary -> ids; the model
// reads all but the last, and position i's answer is token i + 1. Throws naming the rule broken.
export function sequenceIds(task, text, blockSize, which) {
  const chars = Array.from(text);
  if (chars.length < 2 || chars.length > blockSize + 1) {
    fail(`${which}: ${chars.length} tokens; a sequence here has 2 to ${blockSize + 1} (the model reads all but the last)`, which, 'lab.seqLength', { which, n: chars.length, max: blockSize + 1 });
  }
  return chars.map((c) => {
    const id = task.vocab.indexOf(c);
    if (id < 0) fail(`${which}: "${c}" is not a token of the task (${task.vocab.join('')})`, which, 'lab.seqToken', { which, token: c, vocab: task.vocab.join('') });
    return id;
  });
}

export const sequenceText = (task, ids) => ids.map((id) => task.vocab[id]).join('');

// Where the answer at position `pos` (token pos + 1) is read from, by the task's rule, or -1.
function sourceOf(task, s, pos) {
  const a = pos + 1, n = task.params.n;
  switch (task.id) {
    case 'copy': return a > n && a - n - 1 < n ? a - n - 1 : -1;
    case 'reverse': return a > n && a - n - 1 < n ? n - 1 - (a - n - 1) : -1;
    case 'sort': case 'max': return a > n ? s.slice(0, n).indexOf(s[a]) : -1;
    case 'induction': { const q = previousOccurrence(s)[pos]; return q >= 0 ? q + 1 : -1; }
    default: return -1;
  }
}

// The sequence again after its input changed, by the task's rule (induction: each later copy of
// the changed token changes with it).
function complete(task, s, changedAt, was) {
  const n = task.params.n;
  const out = s.slice();
  if (task.id === 'copy') for (let i = 0; i < n && n + 1 + i < out.length; i++) out[n + 1 + i] = out[i];
  if (task.id === 'reverse') for (let i = 0; i < n && n + 1 + i < out.length; i++) out[n + 1 + i] = out[n - 1 - i];
  if (task.id === 'sort') { const sorted = out.slice(0, n).sort((a, b) => a - b); for (let i = 0; i < n && n + 1 + i < out.length; i++) out[n + 1 + i] = sorted[i]; }
  if (task.id === 'max' && out.length > n + 1) out[n + 1] = Math.max(...out.slice(0, n));
  if (task.id === 'induction') for (let k = changedAt + 1; k < out.length; k++) if (s[k] === was) out[k] = out[changedAt];
  return out;
}

// The corruption the page proposes for the clean ids and the answer at `pos`: the token the
// answer is read from (induction: the one after the earlier copy of the current token) becomes
// a symbol the sequence does not use, and the rest of the sequence follows the task's rule, so the
// corrupted answer differs. null when the answer at `pos` is not read from anywhere.
export function proposeCorruption(task, ids, pos) {
  const j = sourceOf(task, ids, pos);
  if (j < 0 || j > pos) return null;
  const used = new Set(ids);
  for (let c = 0; c < task.params.symbols; c++) {
    if (used.has(c)) continue;
    const s = ids.slice();
    s[j] = c;
    const out = complete(task, s, j, ids[j]);
    if (out[pos + 1] !== ids[pos + 1]) return out;
  }
  return null;
}

// --- readings ---

// Pearson's correlation of two equal-length lists (0 when either is constant).
export function correlation(a, b) {
  const n = a.length;
  const ma = a.reduce((s, x) => s + x, 0) / n, mb = b.reduce((s, x) => s + x, 0) / n;
  let sab = 0, saa = 0, sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) ** 2;
    sbb += (b[i] - mb) ** 2;
  }
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : 0;
}

// Heads ranked by the accuracy left with each alone switched off, lowest first (ties: layer, head).
export const rankHeads = (rows) => rows.slice().sort((a, b) => a.accuracy - b.accuracy || a.layer - b.layer || a.head - b.head);

// A residual-stream step as a heatmap's row label (which the heatmap cuts at 12 characters):
// transformer.h.0.x_attn -> 0.x_attn, layers.1.norm2 -> 1.norm2, x as it is.
export const residualLabel = (step) => step.replace(/^(?:transformer\.h|layers)\.(\d+)\./, '$1.');

// A patching result as a grid: rows (steps in order, or layers), columns (heads or positions), and
// each cell's effect (metric - corrupted metric: how much of the answer the clean cell restores)
// beside its attribution estimate of the same effect.
export function patchingGrid(patching, attribution, key) {
  const rows = [...new Set(patching.cells.map((c) => c.step))];
  const cols = Math.max(...patching.cells.map((c) => c[key])) + 1;
  const effect = new Float32Array(rows.length * cols), estimate = new Float32Array(rows.length * cols);
  const at = (c) => rows.indexOf(c.step) * cols + c[key];
  for (const c of patching.cells) effect[at(c)] = c.metric - patching.corrupted_metric;
  for (const c of attribution.cells) estimate[at(c)] = c.estimate;
  return { rows, cols, effect, estimate, correlation: correlation(Array.from(effect), Array.from(estimate)) };
}
