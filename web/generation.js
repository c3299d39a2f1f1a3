// Generate mode's engine (README "Generation: nanoGPT's GPT, step by step", "Generate mode"), no
// DOM: the GPT and its prompt from the state's gen* fields (or the weights picker's GPT file), two
// core.generator runs side by side (KV cache on and off: the same seed, so the same ids; their
// logits compared and their time per token measured), and the next token's probabilities
// recomputed from the last logits for the sliders (SCENARIO.md "Generation": temperature, top_k,
// top_p, exactly as the core filters).
//
// The session runs one token ahead: after `steps` generated tokens the generators have made
// steps + 1 forwards, so the newest token's own attention row over every earlier token (and
// itself) is known, the cache holds (1, n_head, prompt + steps, head_dim), and the bars show the
// distribution the next Step draws from.

import { t } from './i18n.js';

// The seeded model's characters: token i is CHARS[i] (the first genvocab of them).
export const CHARS = Array.from(' abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?\'-"()[]&$#@*+/=<>_%');

export const CHECK_ATOL = 1e-5;   // cached vs recomputed logits (the check)

// The model of a state: the playground's GPT file when one is loaded (its tensors name
// transformer.wte.weight and the playground's module is GPT; config from the module form,
// vocabulary from the file's vocab.json), else a seeded GPT from the gen* fields.
export function modelSpec(state, weights, gptConfig) {
  const fromFile = !!weights && state.module === 'GPT' && weights.tensors.some((x) => x.name === 'transformer.wte.weight');
  if (fromFile) {
    const tokens = weights.vocab ?? CHARS.slice(0, gptConfig.vocab_size);
    return { source: 'file', name: weights.name, config: { ...gptConfig }, seed: state.genseed, tokens, bytes: weights.bytes };
  }
  const config = { vocab_size: state.genvocab, block_size: state.genblock, n_layer: state.genlayers, n_head: state.genheads,
    n_embd: state.genembd, dropout: 0, bias: state.genbias };
  // Llama-style options only when on, so the default config stays nanoGPT's own
  if (state.genrope) config.rope = true;
  if (state.genkvheads) config.num_kv_heads = state.genkvheads;
  if (state.genwindow) config.window = state.genwindow;
  return { source: 'seeded', config, seed: state.genseed, tokens: CHARS.slice(0, state.genvocab) };
}

// The sampling settings of a state, as the scenario's "generate" takes them (0 = off).
export function sampling(state) {
  return { temperature: state.gentemp, top_k: state.gentopk || null, top_p: state.gentopp || null };
}

// Characters → ids through the model's vocabulary; a character it lacks throws an Error whose field is genprompt.
export function promptIds(text, tokens) {
  const index = new Map(tokens.map((tok, i) => [tok, i]));
  // A newline cannot be typed in the prompt box: ↵ (as the page shows it) stands for it.
  const chars = Array.from(text, (c) => (c === '↵' && !index.has(c) ? '\n' : c));
  const fail = (message) => Object.assign(new Error(message), { field: 'genprompt' });
  if (chars.length === 0) throw fail(t('gen.promptEmpty'));
  const missing = chars.find((c) => !index.has(c));
  if (missing !== undefined) throw fail(t('gen.promptChar', { char: JSON.stringify(missing), n: tokens.length }));
  return chars.map((c) => index.get(c));
}

function scenarioOf(spec, ids, settings, maxNew, cache) {
  return {
    module: 'GPT', seed: spec.seed, config: spec.config, trace: true,
    inputs: [{ name: 'idx', shape: [1, ids.length], data: ids }],
    generate: { max_new_tokens: maxNew, ...settings, cache },
  };
}

// The last query row of every layer's attention ([layer][head] → Float32Array over the window)
// and the last position's logits, from one traced token.
function tokenData(token) {
  const rows = [];
  let logits = null;
  for (const s of token.steps) {
    if (s.name === 'logits') {
      const V = s.shape.at(-1);
      logits = s.data.slice(s.data.length - V);
    }
    if (!s.name.endsWith('.attn.att_softmax')) continue;
    const [, H, Tq, Tk] = s.shape;
    rows.push(Array.from({ length: H }, (_, h) => s.data.slice((h * Tq + Tq - 1) * Tk, (h * Tq + Tq) * Tk)));
  }
  return { rows, logits };
}

// One forward of a generator, timed: {id, topIds, topProbs, mode, position, cache, rows, logits, ms}.
function advance(gen) {
  const t0 = performance.now();
  const token = gen.next();
  const ms = performance.now() - t0;
  const { rows, logits } = tokenData(token);
  return { id: token.ids[0], topIds: token.top_ids[0], topProbs: token.top_probs[0], mode: token.mode,
    position: token.position, cache: token.cache, rows, logits, ms };
}

// A session: the prompt's ids, both generators and their tokens. Throws the core's Error (with its
// field) for a config or setting it refuses; nothing is left allocated then.
export function createSession(core, spec, prompt, settings, maxNew) {
  const options = spec.bytes ? { weights: spec.bytes } : {};
  const gens = {};
  try {
    for (const cache of [true, false]) gens[cache] = core.generator(scenarioOf(spec, prompt, settings, maxNew + 1, cache), options);
  } catch (e) {
    Object.values(gens).forEach((g) => g.delete());
    throw e;
  }
  const session = { spec, prompt, settings, maxNew, gens, tokens: { true: [], false: [] }, maxDiff: 0 };
  forward(session);   // the prefill and the first token's distribution
  return session;
}

function forward(session) {
  const a = advance(session.gens.true), b = advance(session.gens.false);
  session.tokens.true.push(a);
  session.tokens.false.push(b);
  for (let i = 0; i < a.logits.length; i++) session.maxDiff = Math.max(session.maxDiff, Math.abs(a.logits[i] - b.logits[i]));
}

// The cache's bytes per cached position (per batch row): keys and values of every layer, float32,
// num_kv_heads heads each — grouped-query attention's saving is n_head / num_kv_heads of this.
export const cacheBytesPerToken = (cache) => cache.bytes / (cache.shape[0] * cache.shape[2]);

// Tokens generated so far (the forwards minus the one ahead).
export const generatedCount = (session) => session.tokens.true.length - 1;

// One more token; false when max_new_tokens are done.
export function stepSession(session) {
  if (generatedCount(session) >= session.maxNew) return false;
  forward(session);
  return true;
}

export function deleteSession(session) {
  if (!session) return;
  Object.values(session.gens).forEach((g) => g.delete());
  session.gens = {};
}

// The sequence so far: prompt + generated ids (the token drawn ahead is not part of it yet).
export function sessionIds(session) {
  const toks = session.tokens.true;
  return [...session.prompt, ...toks.slice(0, -1).map((x) => x.id)];
}

const median = (xs) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Per-token times (ms): the prefill, then the median of the tokens after it, cached and not.
export function timings(session) {
  const of = (list) => ({ first: list[0].ms, median: median(list.slice(1).map((x) => x.ms)), last: list.at(-1).ms });
  return { cached: of(session.tokens.true), uncached: of(session.tokens.false), maxDiff: session.maxDiff, ok: session.maxDiff <= CHECK_ATOL };
}

// The next token's ten most probable ids from logits under temperature / top_k / top_p, as the
// core filters them (temperature 0: the logits' own probabilities). [{id, p}], most probable first.
export function topProbs(logits, { temperature, top_k, top_p }, n = 10) {
  const V = logits.length;
  let z = Array.from(logits, (v) => (temperature > 0 ? v / temperature : v));
  if (top_k) {
    const kth = [...z].sort((a, b) => b - a)[Math.min(top_k, V) - 1];
    z = z.map((v) => (v < kth ? -Infinity : v));
  }
  const softmax = (xs) => {
    const m = Math.max(...xs);
    const e = xs.map((v) => (v === -Infinity ? 0 : Math.exp(v - m)));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / s);
  };
  if (top_p) {
    const p = softmax(z);
    const order = p.map((v, i) => i).sort((a, b) => p[a] - p[b]);
    let cum = 0;
    order.forEach((i, k) => {
      cum += p[i];
      if (cum <= 1 - top_p && k < V - 1) z[i] = -Infinity;
    });
  }
  const probs = softmax(z);
  return probs.map((p, id) => ({ id, p })).filter((x) => x.p > 0).sort((a, b) => b.p - a.p || a.id - b.id).slice(0, n);
}
