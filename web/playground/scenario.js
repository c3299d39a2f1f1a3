// From page state to the one scenario the core runs (core/SCENARIO.md), with what the views need
// to label its result: token labels per module input, real lengths, which cells a mask hides.
// Pure: no DOM, no core. page.js runs the plan (runPlan) and hands plan + result to the views;
// labels.js maps a step's axes to the plan's tokens.

import { t, tCore } from '../i18n.js';
import { PAD, buildVocab, tokenLabel, tokenize, vocabFromTokens } from '../tokenize.js';
import { moduleConfig } from './fields.js';
import { tables } from './presets.js';

const MAX_TOKENS = 64;

// An error the page finds before the core does; `control` names the field to show it beside.
export class PageError extends Error {
  constructor(message, control) {
    super(message);
    this.control = control;
  }
}

// What a module's forward wants, read from its row of core.modules(): the inputs by role, their
// rank and width argument, its mask input and convention, and whether it masks causally itself.
export function describeModule(info) {
  const role = (r) => info.inputs.find((i) => i.role === r) ?? null;
  const floats = info.inputs.filter((i) => i.kind === 'float');
  // Token ids: a `positions` input (ModernAttention) holds positions, not tokens; left to its default.
  const ids = info.inputs.filter((i) => i.kind === 'ids' && i.role !== 'positions');
  let kind = 'x';
  if (ids.length > 0) kind = 'ids';   // token ids: source + target (Transformer) or one sequence
  else if (role('query')) kind = 'qkv';
  else if (role('memory')) kind = 'decoder';
  const dims = floats[0]?.dims ?? [];
  const rank = dims[0] === '...' ? 3 : dims.length;   // '...': any leading dims, the page uses (B, T, d)
  const maskInput = role('mask');
  const block = info.attention.find((a) => a.mask?.input === maskInput?.name);
  const mask = maskInput && {
    name: maskInput.name,
    maskedValue: block?.mask.masked_where === 'zero' ? 0 : 1,   // the value that hides a key
    withHeads: maskInput.dims.includes('heads'),                // seed 000 broadcasts (B,1,T,S)
  };
  const pairings = { x: rank >= 3 ? ['one', 'batch'] : ['one'], qkv: ['one', 'batch', 'cross'], decoder: ['cross'], ids: ids.length > 1 ? ['cross'] : ['one'] }[kind];
  return {
    kind, rank, mask, pairings,
    inputNames: floats.map((i) => i.name),
    idNames: ids.map((i) => i.name),
    dims: Object.fromEntries(info.inputs.map((i) => [i.name, [...i.dims]])),   // per input, '...' = any leading dims
    builtinCausal: info.attention.some((a) => a.causal),
    // Masks by its own arguments (ModernAttention's causal / window / sink_tokens): scenario.js builtinMask.
    argMask: info.args.some((a) => a.name === 'window'),
    widthArg: floats[0]?.width ?? null,
  };
}

export const pairingOf = (mod, pairing) => (mod.pairings.includes(pairing) ? pairing : mod.pairings[0]);
export const isRandom = (state) => state.source === 'randn' || state.source === 'rand';

function checkConfig(info, config) {
  for (const arg of info.args) {
    const v = config[arg.name];
    if (v === null && arg.name === 'vocab_size') continue;  // filled from the typed vocabulary
    if (v === null || v === undefined || Number.isNaN(v)) {
      throw new PageError(t(arg.type === 'int' ? 'scenario.enterInt' : 'scenario.enterNumber', { name: arg.name, help: tCore(arg.help) }), `arg:${arg.name}`);
    }
  }
}

const positions = (n) => Array.from({ length: n }, (_, i) => String(i));
const note = (key, params = {}) => ({ key, params });

function sentence(state, which) {
  const text = which === 1 ? state.text : state.text2;
  const all = tokenize(text, state.tokenizer);
  if (all.length === 0) throw new PageError(t('scenario.noTokens', { n: which }), which === 1 ? 'text' : 'text2');
  return { tokens: all.slice(0, MAX_TOKENS), dropped: Math.max(0, all.length - MAX_TOKENS) };
}

// Rows of a V×d table for the given ids, as one flat Float32Array (zeros for id -1, a pad row).
function lookup(table, d, idRows) {
  const out = new Float32Array(idRows.length * d);
  idRows.forEach((id, r) => { if (id >= 0) out.set(table.subarray(id * d, id * d + d), r * d); });
  return out;
}

const padIds = (rows, T, padId) => rows.flatMap((ids) => [...ids, ...Array(T - ids.length).fill(padId)]);

// Token labels per module input name (one list per batch item): queries' side q, keys' side k.
function inputTokens(mod, q, k) {
  const [first, ...others] = mod.inputNames;
  return Object.fromEntries([[first, q], ...others.map((name) => [name, k])]);
}

// Random inputs drawn after the module, as the seeds' demos do. Seed 003's mha(x_q, x_kv, x_kv)
// passes one tensor as key and value: the value input is `same_as` the key.
function planRandom(state, mod, d) {
  const B = mod.rank >= 3 ? state.batch : 1;
  const T = state.seqT;
  const S = mod.kind === 'x' ? T : state.seqS;
  const init = state.source;
  const [first, ...others] = mod.inputNames;
  const inputs = [{ name: first, shape: mod.rank >= 3 ? [B, T, d] : [T, d], init }];
  others.forEach((name, i) => {
    if (mod.kind === 'qkv' && i === 1 && state.kv !== 'separate') inputs.push({ name, same_as: others[0] });
    else inputs.push({ name, shape: [B, S, d], init });
  });
  const q = Array.from({ length: B }, () => positions(T));
  const k = Array.from({ length: B }, () => positions(S));
  return { inputs, B, T, S, tokens: inputTokens(mod, q, k), lengths: { q: Array(B).fill(T), k: Array(B).fill(S) }, sentences: [], notes: [] };
}

// The preset's own embedding table when the state picks it: checked against the width and the tokens.
function presetTable(state, mod, d, sentences) {
  const given = tables[state.table];
  if (!given) throw new PageError(t('scenario.noTable'), 'source');
  if (given.dim !== d) {
    throw new PageError(t('scenario.tableDim', { table: state.table, dim: given.dim, width: mod.widthArg ?? t('scenario.theWidth') }), mod.widthArg ? `arg:${mod.widthArg}` : 'width');
  }
  sentences.forEach((tokens, i) => {
    const unknown = tokens.find((tok) => !given.tokens.includes(tok));
    if (unknown !== undefined) {
      throw new PageError(t('scenario.notInTable', { token: unknown, table: state.table, tokens: given.tokens.join(', ') }), i === 1 ? 'text2' : 'text');
    }
  });
  return { name: state.table, data: new Float32Array(given.weight), dim: given.dim, vocab: vocabFromTokens([...given.tokens]) };
}

// Query-side and key-side id rows, one per batch item.
function pairRows(pairing, ids1, ids2) {
  if (pairing === 'batch') return { qRows: [ids1, ids2], kRows: [ids1, ids2] };
  if (pairing === 'cross') return { qRows: [ids1], kRows: [ids2] };
  return { qRows: [ids1], kRows: [ids1] };
}

// The module's float inputs as rows of one table: the preset's (given as data), or a seeded
// nn.Embedding the first input builds and the others take more rows of (`embedding.same_as`).
function embeddedInputs(mod, table, { V, d, shapeQ, shapeK, qIds, kIds }) {
  const [first, ...others] = mod.inputNames;
  if (table) {
    return [{ name: first, shape: shapeQ, data: lookup(table.data, d, qIds) },
      ...others.map((name) => ({ name, shape: shapeK, data: lookup(table.data, d, kIds) }))];
  }
  return [{ name: first, shape: shapeQ, embedding: { num_embeddings: V, ids: qIds } },
    ...others.map((name) => ({ name, shape: shapeK, embedding: { same_as: first, ids: kIds } }))];
}

// Typed sentences: tokens → ids of a vocabulary → embedding rows, padded into a batch or paired.
function planText(state, mod, d, pairing) {
  const s1 = sentence(state, 1);
  const s2 = pairing !== 'one' ? sentence(state, 2) : null;
  const sentences = s2 ? [s1.tokens, s2.tokens] : [s1.tokens];
  const notes = [s1, s2].filter((s) => s?.dropped).map((s) => note('scenario.dropped', { max: MAX_TOKENS, n: s.dropped }));
  if (pairing === 'batch') notes.push(note('scenario.batchNote', { pad: PAD }));
  const table = state.source === 'table' ? presetTable(state, mod, d, sentences) : null;
  const vocab = table ? table.vocab : buildVocab(sentences, { pad: pairing === 'batch' && state.source === 'embedding' });
  const { qRows, kRows } = pairRows(pairing, vocab.ids(s1.tokens), s2 ? vocab.ids(s2.tokens) : null);
  const padId = state.source === 'embedding' ? 0 : -1;   // -1: a zero row (the table has no <pad>)
  const B = qRows.length;
  const T = Math.max(...qRows.map((r) => r.length));
  const S = Math.max(...kRows.map((r) => r.length));
  const qIds = padIds(qRows, T, padId);
  const kIds = padIds(kRows, S, padId);
  const tok = (id) => (id < 0 ? PAD : tokenLabel(vocab.tokens[id]));
  const perItem = (ids, n) => Array.from({ length: B }, (_, b) => ids.slice(b * n, b * n + n).map(tok));
  const shapes = { V: vocab.tokens.length, d, shapeQ: mod.rank >= 3 ? [B, T, d] : [T, d], shapeK: [B, S, d], qIds, kIds };
  return {
    inputs: embeddedInputs(mod, table, shapes), B, T, S, sentences, vocab, table, notes, ids: { q: qIds, k: kIds },
    tokens: inputTokens(mod, perItem(qIds, T), perItem(kIds, S)),
    lengths: { q: qRows.map((r) => r.length), k: kRows.map((r) => r.length) },
  };
}

// Token ids, one sentence per ids input (the Transformer's source and target, or one sequence):
// of a trained model's vocabulary when one is loaded, else of the typed tokens (vocab_size then
// defaults to their number).
function planIds(state, mod, config, trained) {
  const typed = mod.idNames.map((_, i) => sentence(state, i + 1));
  const sentences = typed.map((s) => s.tokens);
  const vocab = trained ? vocabFromTokens([...trained.vocab]) : buildVocab(sentences);
  if (trained) checkInVocab(trained, vocab, typed);
  const V = vocab.tokens.length;
  const size = config.vocab_size ?? V;
  if (trained && V !== size) {
    throw new PageError(t('scenario.vocabMismatch', { vocab: trained.vocabName, V, size }), 'arg:vocab_size');
  } else if (V > size) {
    throw new PageError(t('scenario.vocabSmall', { V, size }), 'arg:vocab_size');
  }
  const ids = sentences.map((tokens) => vocab.ids(tokens));
  // Queries run over the last sentence (the target), keys over the first (the source); the steps
  // say which input each axis follows (step.tokens).
  const [q, k] = [ids.at(-1), ids[0]];
  return {
    config: { ...config, vocab_size: size },
    inputs: mod.idNames.map((name, i) => ({ name, shape: [1, ids[i].length], data: ids[i] })),
    B: 1, T: q.length, S: k.length, sentences, vocab, table: null, notes: [], ids: { q, k },
    tokens: Object.fromEntries(mod.idNames.map((name, i) => [name, [sentences[i].map(tokenLabel)]])),
    lengths: { q: [q.length], k: [k.length] },
  };
}

function checkInVocab(trained, vocab, sentences) {
  sentences.forEach((s, i) => {
    const missing = s.tokens.find((tok) => !vocab.index.has(tok));
    if (missing === undefined) return;
    const shown = trained.vocab.slice(0, 12).join(' ') + (trained.vocab.length > 12 ? ' …' : '');
    throw new PageError(t('scenario.notInVocab', { token: missing, vocab: trained.vocabName, n: trained.vocab.length, shown }), i === 0 ? 'text' : 'text2');
  });
}

// A module that masks by itself: causal always, or (ModernAttention) as its `causal`, `window` and
// `sink_tokens` arguments say. Which cells the rule hides comes from the core (rules.mask: its
// window_mask for positions 0..T-1), never from a formula here.
function builtinMask(config, { T, S }, rules) {
  const argMasked = 'causal' in config || 'window' in config;
  const causal = !argMasked || config.causal !== false;
  const window = argMasked && config.window > 0 ? config.window : 0;
  const sinks = window > 0 && config.sink_tokens > 0 ? config.sink_tokens : 0;
  if (!causal && !window) return null;
  const cells = rules.mask(T, S, { causal, window, sinkTokens: sinks });
  return { causal: true, padding: false, builtin: true, window, sinks, at: (b, q, k) => cells[q * S + k] === 1 };
}

// Which (batch, query, key) cells are masked, and the mask input in the module's convention:
// {mask: {causal, padding, builtin, convention, at(b, q, k), shape?} | null, input | null, notes}.
// The causal part of a mask input is the core's rule (rules.mask); padding is this batch's own.
function planMask(state, mod, { B, T, S, lengths }, pairing, config = {}, rules) {
  const batch = pairing === 'batch';
  if (mod.builtinCausal || mod.argMask) {
    const mask = builtinMask(config, { T, S }, rules);
    return { mask, input: null, notes: batch && mask ? [note('scenario.padVisible', { pad: PAD })] : [] };
  }
  if (!mod.mask) return { mask: null, input: null, notes: batch ? [note('scenario.padAttended', { pad: PAD })] : [] };
  const padding = batch && lengths.k.some((n) => n < S);
  const causal = state.causal;
  if (!causal && !padding) return { mask: null, input: null, notes: [] };
  const hidden = causal ? rules.mask(T, S, { causal: true }) : null;
  const at = (b, q, k) => (causal && hidden[q * S + k] === 1) || (padding && k >= lengths.k[b]);
  const masked = mod.mask.maskedValue;
  const data = new Float32Array(B * T * S);
  for (let b = 0; b < B; b++) for (let q = 0; q < T; q++) for (let k = 0; k < S; k++) {
    data[(b * T + q) * S + k] = at(b, q, k) ? masked : 1 - masked;
  }
  const shape = mod.mask.withHeads ? [B, 1, T, S] : [B, T, S];
  const convention = masked === 0 ? 'zero' : 'nonzero';
  return { mask: { causal, padding, builtin: false, convention, at, shape }, input: { name: mod.mask.name, shape, data }, notes: [] };
}

// Freezes the plan and everything in it, except typed arrays (which cannot be frozen, and which
// nothing writes to) and the vocabulary's Map (read through vocab.ids / vocab.index only).
function deepFreeze(value) {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value) || value instanceof Map || Object.isFrozen(value)) return value;
  for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
}

// The plan: one scenario (`main`) for one core.run, and what the views label its result with:
// {module, mod, config, pairing, main, sentences, vocab, table, tokens (labels per input name, per
// batch item), lengths {q, k}, B, T, S, d, mask, notes [{key, params}], ids {q, k}, loss: null, or
// 'next' / 'sum' when the run computes gradients (lossFor)}. Made whole in
// one call and deep-frozen (deepFreeze): nothing edits a plan after it is made.
// options.weights: the loaded trained weights (app/weights.js), whose vocabulary the Transformer's ids
// follow; options.returnParams: also return the module's parameters (the GPU computes from them);
// options.rules: the core's attention rules ({mask(T, S, {causal, window, sinkTokens})}: core.attentionMask).
export function planRun(state, info, { weights = null, returnParams = false, rules } = {}) {
  const mod = describeModule(info);
  const config = moduleConfig(state, info);
  checkConfig(info, config);
  const pairing = pairingOf(mod, state.pairing);
  const d = mod.widthArg ? config[mod.widthArg] : state.width;
  let part;
  if (mod.kind === 'ids') part = planIds(state, mod, config, weights?.vocab ? weights : null);
  else part = isRandom(state) ? planRandom(state, mod, d) : planText(state, mod, d, pairing);
  const masking = planMask(state, mod, part, pairing, part.config ?? config, rules);
  const finalConfig = part.config ?? config;
  const train = state.trainmode && finalConfig.dropout > 0 ? [note('scenario.trainNote', { pct: Math.round(finalConfig.dropout * 100), p: finalConfig.dropout })] : [];
  const notes = [...part.notes, ...train, ...masking.notes];
  const main = {
    module: info.id, config: finalConfig, seed: state.seed, train: state.trainmode, trace: true, return_inputs: true,
    // The Transformer's own embedding.weight is its vocabulary table (the vocabulary view shows it).
    ...(returnParams || mod.kind === 'ids' ? { return_params: true } : {}),
    ...(state.grads ? { loss: lossFor(mod, part), grads: true } : {}),
    inputs: masking.input ? [...part.inputs, masking.input] : part.inputs,
  };
  return deepFreeze({
    module: info.id, mod, config: finalConfig, pairing, main,
    sentences: part.sentences, vocab: part.vocab ?? null, table: part.table ?? null, ids: part.ids ?? null,
    tokens: part.tokens, lengths: part.lengths, B: part.B, T: part.T, S: part.S, d: mod.kind === 'ids' ? finalConfig.emb_dim : d,
    mask: masking.mask, notes, loss: state.grads ? (mod.kind === 'ids' ? 'next' : 'sum') : null,
  });
}

// The loss whose gradients the step cards show (state.grads): for token models the next-token
// cross_entropy of the sequence the output runs over (target[i] = ids[i + 1], the last position
// ignored), as training uses; for the others output.sum(), so dL/d(step) is how each value moves it.
function lossFor(mod, part) {
  if (mod.kind !== 'ids') return { fn: 'sum' };
  const ids = part.ids.q;
  return { fn: 'cross_entropy', target: { shape: [1, ids.length], data: [...ids.slice(1), -100] }, ignore_index: -100 };
}

// Runs the plan on the core: one traced run. weights: {name, bytes} of a loaded safetensors file.
export function runPlan(core, plan, weights = null) {
  return core.run(plan.main, weights ? { weights: weights.bytes, weightsName: weights.name } : {});
}

// For given.js, whose plans (a notebook's given inputs) share these parts with planRun's.
export { deepFreeze, lossFor, planMask };
