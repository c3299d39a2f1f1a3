// From page state to the scenario(s) the core runs (core/SCENARIO.md), with everything the views
// need to label the result: tokens per axis, real lengths, and which cells a mask hides. Pure: no
// DOM, no core. main.js runs the plan (runPlan) and hands plan + result to the views.

import { t, tCore } from './i18n.js';
import { PAD, buildVocab, tokenLabel, tokenize } from './tokenize.js';
import { vocabFromTokens } from './weights.js';
import { moduleConfig } from './state.js';
import { tables } from './presets.js';

export const MAX_TOKENS = 64;

// An error the page finds before the core does; `control` names the field to show it beside.
export class PageError extends Error {
  constructor(message, control) {
    super(message);
    this.control = control;
  }
}

const WIDTH_ARGS = ['d_in', 'd_model', 'dim_in', 'emb_dim'];

// What a module's forward wants, read from core.modules(): the input layout, its mask convention,
// and whether it masks causally on its own (seed 004 modules carry context_length for that).
export function describeModule(info) {
  const floats = info.inputs.filter((i) => i.kind === 'float');
  const maskInput = info.inputs.find((i) => i.kind === 'mask');
  const ids = info.inputs.filter((i) => i.kind === 'ids');
  let kind = 'x';
  if (ids.length === 2) kind = 'ids';
  else if (floats.length === 3) kind = 'qkv';
  else if (floats.length === 2) kind = 'decoder';
  const shape = floats[0]?.shape ?? '';
  const rank = shape.startsWith('(any') ? 3 : shape.split(',').length;
  const mask = maskInput && {
    name: maskInput.name,
    maskedValue: /0 = masked/.test(maskInput.shape) ? 0 : 1,   // seed 000: mask == 0 masked; 003: True masked
    withHeads: /\(B,H,T,S\)/.test(maskInput.shape),              // seed 000 broadcasts (B,1,T,S)
  };
  const pairings = { x: rank >= 3 ? ['one', 'batch'] : ['one'], qkv: ['one', 'batch', 'cross'], decoder: ['cross'], ids: ['cross'] }[kind];
  return {
    kind, rank, mask, pairings,
    inputNames: floats.map((i) => i.name),
    idNames: ids.map((i) => i.name),
    builtinCausal: info.args.some((a) => a.name === 'context_length'),
    widthArg: WIDTH_ARGS.find((name) => info.args.some((a) => a.name === name)) ?? null,
  };
}

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

function padIds(rows, T, padId) {
  return rows.flatMap((ids) => [...ids, ...Array(T - ids.length).fill(padId)]);
}

// The plan: {main, pre?, fill?, labels: {q, k} (per batch item), lengths, mask, vocab, notes, ...}.
// weights: the loaded trained weights (weights.js), whose vocabulary the Transformer's ids follow.
export function planRun(state, info, weights = null) {
  const mod = describeModule(info);
  const config = moduleConfig(state, info);
  checkConfig(info, config);
  const notes = [];
  const plan = { module: info.id, mod, config, notes, vocab: null, pre: null, fill: null, sentences: [], sides: null };
  const scenario = { module: info.id, config, seed: state.seed, train: state.train, trace: true, return_inputs: true, inputs: [] };
  plan.main = scenario;

  const pairing = mod.pairings.includes(state.pairing) ? state.pairing : mod.pairings[0];
  plan.pairing = pairing;

  if (mod.kind === 'ids') return planTransformer(state, info, plan, config, weights?.vocab ? weights : null);

  const d = mod.widthArg ? config[mod.widthArg] : state.width;
  const widthControl = mod.widthArg ? `arg:${mod.widthArg}` : 'width';
  const random = state.source === 'randn' || state.source === 'rand';
  let T, S, B;

  if (random) {
    B = mod.rank >= 3 ? state.batch : 1;
    T = state.seqT;
    S = mod.kind === 'x' ? T : state.seqS;
    const shapeQ = mod.rank >= 3 ? [B, T, d] : [T, d];
    const init = state.source;
    if (mod.kind === 'x') {
      scenario.inputs.push({ name: mod.inputNames[0], shape: shapeQ, init });
    } else if (mod.kind === 'decoder') {
      scenario.inputs.push({ name: mod.inputNames[0], shape: shapeQ, init }, { name: mod.inputNames[1], shape: [B, S, d], init });
    } else {
      const [q, k, v] = mod.inputNames;
      scenario.inputs.push({ name: q, shape: shapeQ, init }, { name: k, shape: [B, S, d], init });
      if (state.kv === 'separate') {
        scenario.inputs.push({ name: v, shape: [B, S, d], init });
      } else {
        // key and value are one tensor x_kv (seed 003's mha(x_q, x_kv, x_kv)): a first run draws
        // it, the second passes it as the value; both draw the generator identically.
        plan.pre = { ...scenario, trace: false, inputs: [...scenario.inputs, { name: v, shape: [B, S, d], data: new Float32Array(B * S * d) }] };
        plan.fill = (pre) => { scenario.inputs[2] = { name: v, shape: [B, S, d], data: pre.inputs[1].data }; };
        scenario.inputs.push(null);
      }
    }
    plan.labels = { q: Array.from({ length: B }, () => positions(T)), k: Array.from({ length: B }, () => positions(S)) };
    plan.lengths = { q: Array(B).fill(T), k: Array(B).fill(S) };
    plan.sentences = [];
  } else {
    const s1 = sentence(state, 1);
    const needs2 = pairing !== 'one';
    const s2 = needs2 ? sentence(state, 2) : null;
    for (const s of [s1, s2]) if (s?.dropped) notes.push(t('scenario.dropped', { max: MAX_TOKENS, n: s.dropped }));
    plan.sentences = needs2 ? [s1.tokens, s2.tokens] : [s1.tokens];
    const padded = pairing === 'batch';

    // The embedding table: either the preset's own, or a seeded nn.Embedding over the typed vocabulary.
    let table = null;
    const vocab = buildVocab(plan.sentences, { pad: padded && state.source === 'embedding' });
    plan.vocab = vocab;
    if (state.source === 'table') {
      const given = tables[state.table];
      if (!given) throw new PageError(t('scenario.noTable'), 'source');
      if (given.dim !== d) throw new PageError(t('scenario.tableDim', { table: state.table, dim: given.dim, width: mod.widthArg ?? t('scenario.theWidth') }), widthControl);
      for (const tokens of plan.sentences) {
        const unknown = tokens.find((tok) => !given.tokens.includes(tok));
        if (unknown !== undefined) {
          throw new PageError(t('scenario.notInTable', { token: unknown, table: state.table, tokens: given.tokens.join(', ') }), plan.sentences.length > 1 && tokens === plan.sentences[1] ? 'text2' : 'text');
        }
      }
      table = new Float32Array(given.weight);
      plan.vocab = { tokens: given.tokens, index: new Map(given.tokens.map((tok, i) => [tok, i])), ids: (ts) => ts.map((tok) => given.tokens.indexOf(tok)) };
      plan.tableName = state.table;
      plan.table = { data: table, dim: given.dim, title: given.title };
    }
    const V = plan.vocab.tokens.length;
    const ids1 = plan.vocab.ids(s1.tokens);
    const ids2 = s2 ? plan.vocab.ids(s2.tokens) : null;
    const padId = state.source === 'embedding' ? 0 : -1;   // -1: a zero row (the table has no <pad>)

    // Query-side rows and key-side rows, per batch item.
    let qRows, kRows;
    if (pairing === 'batch') {
      qRows = [ids1, ids2];
      kRows = qRows;
      notes.push(t('scenario.batchNote', { pad: PAD }));
    } else if (pairing === 'cross') {
      qRows = [ids1];
      kRows = [ids2];
    } else {
      qRows = [ids1];
      kRows = qRows;
    }
    B = qRows.length;
    T = Math.max(...qRows.map((r) => r.length));
    S = Math.max(...kRows.map((r) => r.length));
    const qIds = padIds(qRows, T, padId);
    const kIds = padIds(kRows, S, padId);
    plan.qIds = qIds;
    const tok = (id) => (id < 0 ? PAD : tokenLabel(plan.vocab.tokens[id]));
    plan.labels = {
      q: Array.from({ length: B }, (_, b) => qIds.slice(b * T, b * T + T).map(tok)),
      k: Array.from({ length: B }, (_, b) => kIds.slice(b * S, b * S + S).map(tok)),
    };
    plan.lengths = { q: qRows.map((r) => r.length), k: kRows.map((r) => r.length) };

    const shapeQ = mod.rank >= 3 ? [B, T, d] : [T, d];
    const first = mod.inputNames[0];
    if (table) {
      scenario.inputs.push({ name: first, shape: shapeQ, data: lookup(table, d, qIds) });
    } else {
      scenario.inputs.push({ name: first, shape: shapeQ, embedding: { num_embeddings: V, ids: qIds } });
    }
    const others = mod.inputNames.slice(1);
    if (others.length > 0) {
      const kShape = [B, S, d];
      if (table) {
        for (const name of others) scenario.inputs.push({ name, shape: kShape, data: lookup(table, d, kIds) });
      } else {
        // The other inputs need rows of the same seeded table the first input draws. A first run
        // with every id looks the table up; the second run draws it again (same generator state)
        // for the first input and gets the other rows as data.
        const all = Array.from({ length: V }, (_, i) => i);
        plan.pre = {
          ...scenario, trace: false, train: false,
          inputs: [{ name: first, shape: [1, V, d], embedding: { num_embeddings: V, ids: all } },
            ...others.map((name) => ({ name, shape: [1, V, d], data: new Float32Array(V * d) }))],
        };
        const at = scenario.inputs.length;
        others.forEach(() => scenario.inputs.push(null));
        plan.fill = (pre) => {
          const rows = pre.inputs[0].data;
          plan.table = { data: rows, dim: d, title: t('scenario.drawnAfter', { V, d }) };
          others.forEach((name, i) => { scenario.inputs[at + i] = { name, shape: kShape, data: lookup(rows, d, kIds) }; });
        };
      }
    }
  }

  plan.B = B; plan.T = T; plan.S = S; plan.d = d;
  if (state.train && config.dropout > 0) {
    notes.push(t('scenario.trainNote', { pct: Math.round(config.dropout * 100), p: config.dropout }));
  }
  plan.mask = planMask(state, mod, plan, scenario, pairing);
  return plan;
}

// Which (batch, query, key) cells are masked, and the mask input in the module's convention.
function planMask(state, mod, plan, scenario, pairing) {
  const { B, T, S } = plan;
  if (mod.builtinCausal) {
    if (pairing === 'batch') plan.notes.push(t('scenario.padVisible', { pad: PAD }));
    return { kind: t('mask.builtin'), causal: true, padding: false, at: (b, q, k) => k > q };
  }
  const padding = pairing === 'batch' && !!plan.lengths && plan.lengths.k.some((n) => n < S);
  if (!mod.mask) {
    if (pairing === 'batch') plan.notes.push(t('scenario.padAttended', { pad: PAD }));
    return null;
  }
  const causal = state.causal;
  if (!causal && !padding) return null;
  const lengths = plan.lengths.k;
  const at = (b, q, k) => (causal && k > q) || (padding && k >= lengths[b]);
  const data = new Float32Array(B * T * S);
  const masked = mod.mask.maskedValue;
  for (let b = 0; b < B; b++) for (let q = 0; q < T; q++) for (let k = 0; k < S; k++) {
    data[(b * T + q) * S + k] = at(b, q, k) ? masked : 1 - masked;
  }
  const shape = mod.mask.withHeads ? [B, 1, T, S] : [B, T, S];
  scenario.inputs.push({ name: mod.mask.name, shape, data });
  const parts = [causal && t('mask.causal'), padding && t('mask.padding')].filter(Boolean).join(' + ');
  const convention = t(masked === 0 ? 'mask.seed000' : 'mask.seed003');
  return { kind: t('mask.kind', { parts, convention }), causal, padding, at, shape };
}

function planTransformer(state, info, plan, config, trained) {
  const src = sentence(state, 1);
  const tgt = sentence(state, 2);
  plan.sentences = [src.tokens, tgt.tokens];
  // A trained model's ids are its vocabulary's rows; otherwise ids follow the typed tokens.
  const vocab = trained ? vocabFromTokens(trained.vocab) : buildVocab(plan.sentences);
  if (trained) {
    for (const [which, s] of [[1, src], [2, tgt]]) {
      const missing = s.tokens.find((t) => !vocab.index.has(t));
      if (missing !== undefined) {
        const shown = trained.vocab.slice(0, 12).join(' ') + (trained.vocab.length > 12 ? ' …' : '');
        throw new PageError(t('scenario.notInVocab', { token: missing, vocab: trained.vocabName, n: trained.vocab.length, shown }), which === 1 ? 'text' : 'text2');
      }
    }
  }
  plan.vocab = vocab;
  const V = vocab.tokens.length;
  if (config.vocab_size === null) config.vocab_size = V;
  else if (trained && V !== config.vocab_size) {
    throw new PageError(t('scenario.vocabMismatch', { vocab: trained.vocabName, V, size: config.vocab_size }), 'arg:vocab_size');
  } else if (V > config.vocab_size) {
    throw new PageError(t('scenario.vocabSmall', { V, size: config.vocab_size }), 'arg:vocab_size');
  }
  const [srcName, tgtName] = plan.mod.idNames;
  const srcIds = vocab.ids(src.tokens);
  const tgtIds = vocab.ids(tgt.tokens);
  plan.main.inputs = [
    { name: srcName, shape: [1, srcIds.length], data: srcIds },
    { name: tgtName, shape: [1, tgtIds.length], data: tgtIds },
  ];
  plan.main.return_params = true;   // the module's own embedding.weight is the vocab table
  const lab = (ts) => [ts.map(tokenLabel)];
  // Encoder steps read the source sentence; decoder steps the target, and cross-attention keys the source.
  plan.sides = { src: lab(src.tokens), tgt: lab(tgt.tokens) };
  plan.labels = { q: lab(tgt.tokens), k: lab(src.tokens) };
  plan.lengths = { q: [tgtIds.length], k: [srcIds.length] };
  plan.B = 1; plan.T = tgtIds.length; plan.S = srcIds.length; plan.d = config.emb_dim;
  plan.mask = null;
  return plan;
}

// Runs the plan on the core: the optional first run, then the traced one.
// weights: {name, bytes} of a loaded safetensors file, applied to the main module (not `pre`).
export function runPlan(core, plan, weights = null) {
  if (plan.pre) plan.fill(core.run(plan.pre));
  return core.run(plan.main, weights ? { weights: weights.bytes, weightsName: weights.name } : {});
}

// Token labels for the seq axes of one step: {q, k} per batch item. For the Transformer, encoder
// steps see the source sentence and decoder steps the target (cross-attention keys: the source).
export function stepLabels(plan, stepName) {
  if (plan.sides) {
    if (/^(src_|encoder\.)/.test(stepName)) return { q: plan.sides.src, k: plan.sides.src };
    if (stepName === 'logits' || /^(tgt_|decoder\.)/.test(stepName)) {
      return { q: plan.sides.tgt, k: /cross_attn\./.test(stepName) ? plan.sides.src : plan.sides.tgt };
    }
  }
  if (plan.mod.kind === 'decoder' && /^self_attn\./.test(stepName)) return { q: plan.labels.q, k: plan.labels.q };
  return plan.labels;
}

// Which control a core error belongs beside: the argument it names first, else the tokens box.
export function controlForError(message, info) {
  if (/^weights /.test(message)) return 'weights';
  let best = null;
  for (const arg of info.args) {
    const m = new RegExp(`\\b${arg.name}\\b`).exec(message);
    if (m && (best === null || m.index < best.index)) best = { index: m.index, control: `arg:${arg.name}` };
  }
  if (best) return best.control;
  if (/mask/.test(message)) return 'causal';
  return 'text';
}
