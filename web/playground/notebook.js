// The playground in a Jupyter notebook's output (bindings/python: attention_playground.show). The
// page is built as one file (vite.notebook.config.mjs) and the Python package writes the notebook's
// data into it, in <script type="application/json" id="notebook-data">: the module's scenario with
// its inputs as given (core/SCENARIO.md), its weights (safetensors, base64), token labels or a
// vocabulary, the language, and the WASM core (base64). main.js starts the page from that data
// instead of the link; the playground plans it with given.js; everything else is the page as it is.

import { defaultState } from '../app/state.js';

export { planGiven } from './given.js';

// The data, or null on the page itself.
export function notebookData(doc = document) {
  const el = doc.getElementById('notebook-data');
  return el ? JSON.parse(el.textContent) : null;
}

const base64Bytes = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

export const notebookWasm = (data) => base64Bytes(data.wasm);

// What the notebook fixed stays out of sight: the inputs' controls, the module, its arguments, the
// seed and the weights (the view is of that module and those tensors). Steps, heads, the gradients
// box, the backend and the exports stay.
const FIXED = ['text', 'text2', 'tokenizer', 'source', 'pairing', 'kv', 'batch', 'seqT', 'seqS', 'width', 'causal', 'module', 'seed', 'weights', 'compare'];

// The page state for the data, as readLink gives one for a link ({state, problems}).
export function notebookLink(data, info) {
  const { scenario } = data;
  if (!info) throw new Error(`the notebook shows module '${scenario.module}', which this build of the core does not have: rebuild the package's page (npm run build)`);
  const state = {
    ...defaultState(),
    module: info.id, config: { [info.id]: { ...scenario.config } }, seed: scenario.seed ?? 0, trainmode: !!scenario.train,
    lang: data.lang ?? 'en', embed: true, backend: data.backend ?? 'auto', weights: data.weights ? data.weights_name : '',
    hide: [...FIXED, ...info.args.map((a) => a.name)].join(','),
  };
  return { state, problems: () => [] };
}

// The notebook's weights as the weights picker holds a file ({name, bytes, tensors}), or null.
export function notebookWeights(core, data) {
  if (!data.weights) return null;
  const bytes = base64Bytes(data.weights);
  return { name: data.weights_name, bytes, tensors: core.weightsListing(bytes) };
}

// The inputs the notebook gave, which the playground plans instead of its state (given.js).
export const notebookGiven = (data) => ({ scenario: data.scenario, tokens: data.tokens ?? null, vocab: data.vocab ?? null });
