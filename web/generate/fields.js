// Generate mode's fields of the one state (app/state.js): on/off, the model (genmodel: the shipped
// language model, or the seeded GPT), the seeded GPT (genseed,
// genvocab characters, genblock, genlayers, genheads, genembd, genbias, and the core GPT's
// Llama-style options: rope instead of wpe, num_kv_heads 0 = n_head, window 0 = none), the prompt
// and the sampling (gentemp; gentopk / gentopp 0 = off), max new tokens and the KV cache.

export const fields = {
  generate: { type: 'bool', default: false },
  // '' = the language model the page ships (models/fortunes/, loaded when the mode opens), 'seeded' = the gen* GPT
  genmodel: { type: 'enum', values: ['', 'seeded'], default: '' },
  genseed: { type: 'int', default: 1, min: 0, max: 4294967295, label: 'seed' },
  genprompt: { type: 'string', default: 'to be or not to' },
  gentemp: { type: 'number', default: 1, min: 0, max: 5, label: 'temperature' },
  gentopk: { type: 'int', default: 0, min: 0, max: 100000, label: 'top_k' },
  gentopp: { type: 'number', default: 0, min: 0, max: 1, label: 'top_p' },
  genmax: { type: 'int', default: 16, min: 1, max: 1024, label: 'max_new_tokens' },
  gencache: { type: 'bool', default: true },
  genvocab: { type: 'int', default: 27, min: 2, max: 88, label: 'vocab_size' },   // model.js CHARS
  genblock: { type: 'int', default: 32, min: 1, max: 1024, label: 'block_size' },
  genlayers: { type: 'int', default: 2, min: 1, max: 12, label: 'n_layer' },
  genheads: { type: 'int', default: 2, min: 1, max: 16, label: 'n_head' },
  genembd: { type: 'int', default: 32, min: 1, max: 1024, label: 'n_embd' },
  genbias: { type: 'bool', default: true },
  genrope: { type: 'bool', default: false },
  genkvheads: { type: 'int', default: 0, min: 0, max: 16, label: 'num_kv_heads' },
  genwindow: { type: 'int', default: 0, min: 0, max: 1024, label: 'window' },
};
