// The plan for a scenario whose inputs are given as tensors — a notebook's module and inputs
// (web/notebook.js, bindings/python) — instead of made from typed text or random draws: the same
// plan shape as scenario.js's planRun, so every view draws it as it draws the page's own.
// Pure: no DOM, no core. Token labels come with the data (the notebook's `tokens=` / `vocab=`),
// else each axis shows positions.

import { describeModule, deepFreeze, lossFor, planMask } from './scenario.js';
import { tokenLabel, vocabFromTokens } from '../tokenize.js';

const positions = (n) => Array.from({ length: n }, (_, i) => String(i));
const product = (dims) => dims.reduce((a, b) => a * b, 1);

// given.scenario's inputs by name, a `same_as` one resolved to the input it repeats.
function inputsByName(inputs) {
  const byName = new Map();
  for (const input of inputs) byName.set(input.name, input.same_as ? { ...byName.get(input.same_as), name: input.name, same: input.same_as } : input);
  return byName;
}

// Labels per batch item of one input: the notebook's tokens, the vocabulary's for ids, else positions.
function labelsOf(input, kind, given) {
  const rank = input.shape.length;
  const n = kind === 'ids' ? input.shape.at(-1) : input.shape.at(-2) ?? input.shape[0];
  const B = rank >= (kind === 'ids' ? 2 : 3) ? input.shape[0] : 1;
  const named = given.tokens?.[input.same ?? input.name];
  if (named) return named;
  if (kind === 'ids') {
    return Array.from({ length: B }, (_, b) => input.data.slice(b * n, b * n + n).map((id) => (given.vocab ? tokenLabel(given.vocab[id]) : String(id))));
  }
  return Array.from({ length: B }, () => positions(n));
}

// Which (b, q, k) cells a given mask input hides, in the module's convention, broadcast as PyTorch
// broadcasts it against (B, [H], T, S); null when it differs per head (one picture cannot say it).
function givenMask(mod, input, { T, S }, rules) {
  const { shape, data } = input;
  const full = mod.mask.withHeads ? 4 : 3;
  const dims = [...Array(Math.max(0, full - shape.length)).fill(1), ...shape];
  if (mod.mask.withHeads && dims[1] > 1) return null;
  const [bN, tN, sN] = mod.mask.withHeads ? [dims[0], dims[2], dims[3]] : [dims.at(-3) ?? 1, dims.at(-2), dims.at(-1)];
  const hides = mod.mask.maskedValue === 0 ? (v) => v === 0 : (v) => v !== 0;
  const at = (b, q, k) => hides(Number(data[((bN > 1 ? b : 0) * tN + (tN > 1 ? q : 0)) * sN + (sN > 1 ? k : 0)]));
  // causal: it hides exactly what the core's causal rule hides (rules.mask)
  const rule = rules.mask(T, S, { causal: true });
  let causal = true;
  for (let q = 0; q < T && causal; q++) for (let k = 0; k < S; k++) if (at(0, q, k) !== (rule[q * S + k] === 1)) { causal = false; break; }
  return { causal, padding: false, builtin: false, given: true, convention: mod.mask.maskedValue === 0 ? 'zero' : 'nonzero', at, shape };
}

// given: {scenario: {module, config, seed, train, inputs: [{name, shape, data} | {name, same_as}]},
// tokens?: {input name: [[label, ...] per batch item]}, vocab?: [token of id 0, ...]}.
// options as planRun's, plus train (dropout on) and grads (the step cards' dL/d(step)).
export function planGiven(given, info, { returnParams = false, train = false, grads = false, rules } = {}) {
  const mod = describeModule(info);
  const { scenario } = given;
  const byName = inputsByName(scenario.inputs);
  const kindOf = (name) => info.inputs.find((i) => i.name === name)?.kind ?? 'float';
  const present = info.inputs.filter((i) => byName.has(i.name) && i.kind !== 'mask');
  const tokens = Object.fromEntries(present.map((i) => [i.name, labelsOf(byName.get(i.name), i.kind, given)]));
  // Queries run over the last ids input (the Transformer's target) or the first float input, keys
  // over the first ids input or the second float input (self-attention: the queries').
  const names = mod.kind === 'ids' ? [mod.idNames.at(-1), mod.idNames[0]] : [mod.inputNames[0], mod.inputNames[1] ?? mod.inputNames[0]];
  const [qIn, kIn] = names.map((name) => byName.get(name) ?? byName.get(mod.inputNames[0]));
  const seqOf = (input) => (kindOf(input.name) === 'ids' ? input.shape.at(-1) : input.shape.at(-2) ?? input.shape[0]);
  const T = seqOf(qIn), S = seqOf(kIn);
  const B = tokens[qIn.name]?.length ?? 1;
  const cross = kIn.name !== qIn.name && (kIn.same ?? kIn.name) !== (qIn.same ?? qIn.name);
  const part = { B, T, S, lengths: { q: Array(B).fill(T), k: Array(B).fill(S) } };
  const maskInput = mod.mask && byName.get(mod.mask.name);
  const mask = maskInput ? givenMask(mod, maskInput, part, rules) : planMask({ causal: false }, mod, part, 'one', scenario.config, rules).mask;
  const vocab = given.vocab ? vocabFromTokens([...given.vocab]) : null;
  const idsOf = (input) => (kindOf(input.name) === 'ids' ? [...input.data] : null);
  part.ids = mod.kind === 'ids' ? { q: idsOf(qIn), k: idsOf(kIn) } : null;
  const main = {
    module: info.id, config: scenario.config, seed: scenario.seed ?? 0, train, trace: true, return_inputs: true,
    ...(returnParams || mod.kind === 'ids' ? { return_params: true } : {}),
    ...(grads ? { loss: lossFor(mod, part), grads: true } : {}),
    inputs: scenario.inputs.map((input) => (kindOf(input.name) === 'float' && input.data ? { ...input, data: Float32Array.from(input.data) } : input)),
  };
  const shapes = scenario.inputs.map((input) => `${input.name} (${(input.shape ?? byName.get(input.name).shape).join(', ')})`).join(', ');
  const notes = [{ key: 'given.inputs', params: { inputs: shapes } }];
  if (maskInput && !mask) notes.push({ key: 'given.maskPerHead', params: { name: maskInput.name } });
  // The chips: the sentences in input order (the Transformer's source, then its target).
  const shown = mod.kind === 'ids' ? mod.idNames.filter((name) => byName.has(name)).map((name) => byName.get(name)) : cross ? [qIn, kIn] : [qIn];
  const sentences = shown.map((input) => (vocab && part.ids ? idsOf(input).slice(0, seqOf(input)).map((id) => vocab.tokens[id]) : tokens[input.name][0]));
  return deepFreeze({
    module: info.id, mod, config: scenario.config, pairing: shown.length > 1 ? 'cross' : 'one', main, given: true,
    sentences, vocab, table: null, ids: part.ids,
    tokens, lengths: part.lengths, B, T, S, d: mod.kind === 'ids' ? scenario.config.emb_dim : product(qIn.shape.slice(-1)),
    mask, notes, loss: grads ? (mod.kind === 'ids' ? 'next' : 'sum') : null,
  });
}
