// What each result view is given, computed from the plan (scenario.js) and the core's result:
// the output table, the vocabulary table, the token chips, the selected step and the displayed
// head. Pure: no DOM. page.js calls these on every draw and hands the data to views/.

import { isWeightsStep } from './attention-data.js';
import { t } from '../i18n.js';
import { outputRowInput } from './labels.js';
import { tables } from './presets.js';
import { tokenize } from '../tokenize.js';

// The module's output with its dims and labels: rows are tokens, columns the vocabulary for logits.
export function outputData(result, plan) {
  const out = result.outputs[0];
  const step = result.steps?.find((s) => s.name === out.step);
  const n = out.shape.length;
  const dims = step?.dims ?? out.shape.map((_, i) => (i === n - 1 ? 'features' : i === n - 2 ? 'seq' : 'batch'));
  const rows = plan.tokens[outputRowInput(plan, step, n)] ?? null;
  const vocab = dims.at(-1) === 'vocab' && plan.vocab?.tokens.length === out.shape.at(-1) ? plan.vocab.tokens : null;
  return { output: out, dims, rowLabels: rows, colLabels: vocab };
}

// Rows of a table by id, from tensors looked up with `ids` (row r of `data` is id ids[r]).
function rowsById(V, d, lookups) {
  const rows = new Float32Array(V * d);
  const seen = new Array(V).fill(false);
  for (const { data, ids } of lookups) {
    ids.forEach((id, r) => {
      if (id < 0 || seen[id]) return;
      rows.set(data.subarray(r * d, r * d + d), id * d);
      seen[id] = true;
    });
  }
  return { rows, seen };
}

// The vocabulary table: {title, tokens, rows (V×d), d, seen?} or null (random inputs), in the
// page's language. The Transformer's rows are its own embedding.weight; a preset's table is given;
// otherwise the rows come back with the inputs the seeded nn.Embedding built (seen: ids looked up).
// A notebook's float inputs (plan.given, given.js) have none: a title and no tokens.
export function vocabData(plan, result) {
  if (!plan.vocab && plan.given) return { title: t('vocab.given'), tokens: [], rows: null, d: 0 };
  if (!plan.vocab) return null;
  const tokens = plan.vocab.tokens;
  if (plan.mod.kind === 'ids') {
    const w = result.params?.find((p) => p.name === 'embedding.weight');
    return w && { title: t('vocab.transformer', { V: w.shape[0], d: w.shape[1] }), tokens, rows: w.data, d: w.shape[1] };
  }
  if (plan.table) return { title: t('vocab.presetTable', { title: tables[plan.table.name].title }), tokens, rows: plan.table.data, d: plan.table.dim };
  const inputs = result.inputs ?? [];
  if (!inputs[0]) return null;
  const d = inputs[0].shape.at(-1);
  const [first, ...others] = plan.mod.inputNames;
  const lookups = [{ data: inputs.find((x) => x.name === first)?.data, ids: plan.ids.q },
    ...others.map((name) => ({ data: inputs.find((x) => x.name === name)?.data, ids: plan.ids.k }))].filter((l) => l.data);
  const { rows, seen } = rowsById(tokens.length, d, lookups);
  const V = tokens.length, seed = plan.main.seed;
  const title = others.length ? t('vocab.seededTable', { title: t('scenario.drawnAfter', { V, d }), seed }) : t('vocab.afterModule', { V, d, seed });
  return { title, tokens, rows, d, seen };
}

// The chips under each text box: tokens, their ids in the plan's vocabulary, and pad chips up to
// the batch's length. plan null (a bad input): the typed tokens without ids. random: no chips.
export function chipsData(state, plan, random) {
  if (random) return [{ tokens: [], ids: null }, { tokens: [], ids: null }];
  const padTo = plan?.pairing === 'batch' ? plan.T : 0;
  return [state.text, state.text2].map((text, i) => {
    const tokens = plan?.sentences?.[i] ?? tokenize(text, state.tokenizer);
    return { tokens, ids: plan?.vocab ? plan.vocab.ids(tokens) : null, padTo: Math.max(tokens.length, padTo) };
  });
}

// The step whose code is shown: the state's, else the first attention weights, else the first.
export function selectedStep(steps, wanted) {
  if (wanted && steps.some((s) => s.name === wanted)) return wanted;
  return (steps.find(isWeightsStep) ?? steps[0])?.name ?? null;
}

// The batch item and head the attention view displays ({b, h}): the state's, clamped as the view
// clamps them to the first map's batch and heads.
export function viewSelection(state, sources) {
  const tensor = sources[0]?.tensor;
  const size = (dim) => (tensor && tensor.dims.includes(dim) ? tensor.shape[tensor.dims.indexOf(dim)] : 1);
  return { b: Math.max(0, Math.min(state.item, size('batch') - 1)), h: Math.max(0, Math.min(state.head, size('heads') - 1)) };
}
