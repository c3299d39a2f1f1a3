// Generate mode's model and sampling from the state (no DOM, no core): the GPT (a seeded one from
// the gen* fields, or the playground's GPT weights file), the prompt's ids, the sampling settings,
// and the scenario a generator runs (SCENARIO.md "Generation"). The worker (worker.js) runs it;
// session.js keeps what the worker sends.
import { t } from '../i18n.js';

// The seeded model's characters: token i is CHARS[i] (the first genvocab of them).
export const CHARS = Array.from(' abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?\'-"()[]&$#@*+/=<>_%');

export const CHECK_ATOL = 1e-5;   // cached vs recomputed logits agree within this

// The model of a state: the playground's GPT file when one is loaded (its tensors name
// transformer.wte.weight and the playground's module is GPT; config from the module form,
// vocabulary from the file's vocab.json), else the shipped language model (`lm`: app/weights.js
// loadShippedWeights; null while it loads, and then so is the spec) unless genmodel is 'seeded',
// else a seeded GPT from the gen* fields.
export function modelSpec(state, weights, gptConfig, lm = null) {
  const fromFile = !!weights && state.module === 'GPT' && weights.tensors.some((x) => x.name === 'transformer.wte.weight');
  if (fromFile) {
    const tokens = weights.vocab ?? CHARS.slice(0, gptConfig.vocab_size);
    return { source: 'file', name: weights.name, config: { ...gptConfig }, seed: state.genseed, tokens, bytes: weights.bytes };
  }
  if (state.genmodel !== 'seeded') {
    return lm && { source: 'shipped', name: lm.name, config: { ...lm.card.config }, seed: state.genseed, tokens: lm.vocab, bytes: lm.bytes };
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

// The cache's bytes per cached position (per batch row): keys and values of every layer, float32,
// num_kv_heads heads each — grouped-query attention's saving is n_head / num_kv_heads of this.
export const cacheBytesPerToken = (cache) => cache.bytes / (cache.shape[0] * cache.shape[2]);

// The scenario of one generator: the model, its seed, the prompt, the sampling, max_new_tokens,
// the KV cache on or off; traced, so each token brings its attention rows.
export function generatorScenario(spec, ids, settings, maxNew, cache) {
  return {
    module: 'GPT', seed: spec.seed, config: spec.config, trace: true,
    inputs: [{ name: 'idx', shape: [1, ids.length], data: ids }],
    generate: { max_new_tokens: maxNew, ...settings, cache },
  };
}
