// Trained weights on the page: a safetensors file (a module's state_dict, saved by
// scripts/export_state_dict.py, or by training mode) with, optionally, the model's vocabulary JSON
// (token i is row i of its embedding table). Read and checked here; set with setWeights, the one
// setter, which every mode reads (the playground's module, Generate mode's GPT); listed by
// views/weights-picker.js. The URL records only the file's name (state.weights): a shared link asks
// for the file again.

import { t } from '../i18n.js';

// Reads a file (or any ArrayBuffer) and lists it with the core; throws the core's Error for a
// damaged file. Returns {name, bytes, tensors: [{name, dtype, shape}]}.
function loadWeightsFromBuffer(core, name, arrayBuffer) {
  const bytes = new Uint8Array(arrayBuffer);
  return { name, bytes, tensors: core.weightsListing(bytes) };
}

// A vocabulary as export_state_dict.py writes it ({"tokens": [...]}, or a bare list of strings):
// the tokens in embedding-row order. Throws an Error naming the file and the rule.
function parseVocab(name, text) {
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(t('weights.badJson', { name, message: e.message }));
  }
  const tokens = Array.isArray(v) ? v : v?.tokens;
  if (!Array.isArray(tokens) || tokens.length === 0 || !tokens.every((t) => typeof t === 'string')) {
    throw new Error(t('weights.badVocab', { name }));
  }
  const seen = new Set();
  for (const token of tokens) {
    if (seen.has(token)) throw new Error(t('weights.twice', { name, token }));
    seen.add(token);
  }
  return tokens;
}

// The one setter of the weights every mode computes with: the file (or null) and why one was
// refused (or null); every open mode hears of it (app/page.js setState) and compares page.weights
// with the weights it last used. The state keeps a picked file's name (a link asks for the file
// again); weights the page made itself (training's model) leave it empty: their link keeps the
// training settings instead. patch: more of the state that changes with them, in the same step
// (training's model: its module and config).
export function setWeights(page, weights, error = null, { from = null, patch = {} } = {}) {
  page.weights = weights;
  page.weightsError = error;
  page.set({ ...patch, weights: weights && !weights.fromTraining ? weights.name : '' }, { from });
}

// A model the page ships (web/public/models/<id>/, npm run train-models / train-lm) names its
// weights by this path: the state's `weights` holding it fetches the file (a link with it works
// anywhere), with the vocabulary of its card (card.json `vocab`, one character per token) when it has one.
export const SHIPPED_WEIGHTS = /^models\/([a-z]+)\/model\.safetensors$/;
export const LANGUAGE_MODEL = 'models/fortunes/model.safetensors';

const shippedCache = new Map();

// The shipped weights of `name` (a SHIPPED_WEIGHTS path) as readWeightFiles gives a file, fetched once per page.
export function loadShippedWeights(core, name) {
  if (!SHIPPED_WEIGHTS.test(name)) return Promise.reject(new Error(t('weights.notShipped', { name })));
  if (!shippedCache.has(name)) {
    const url = (file) => new URL(name.replace(/model\.safetensors$/, file), document.baseURI);
    const get = async (file) => {
      const r = await fetch(url(file));
      if (!r.ok) throw new Error(t('weights.fetchFailed', { url: url(file).href, status: r.status }));
      return r;
    };
    const p = Promise.all([get('model.safetensors').then((r) => r.arrayBuffer()), get('card.json').then((r) => r.json())]).then(([buffer, card]) => {
      const weights = loadWeightsFromBuffer(core, name, buffer);
      return { ...weights, shipped: true, card, ...(card.vocab ? { vocab: Array.from(card.vocab), vocabName: name.replace(/model\.safetensors$/, 'card.json') } : {}) };
    });
    p.catch(() => shippedCache.delete(name));
    shippedCache.set(name, p);
  }
  return shippedCache.get(name);
}

// Files picked or dropped: the model (a .safetensors file) and its vocabulary (a .json file),
// either or both. current: the weights loaded now (a vocabulary alone belongs to them).
// Returns {weights, error}: the new weights (or the current ones when only the vocabulary was
// refused, or null) and why a file was refused (an Error, or null).
export async function readWeightFiles(core, files, current) {
  const list = Array.from(files);
  const vocabFile = list.find((f) => /\.json$/i.test(f.name));
  const model = list.find((f) => f !== vocabFile);
  let weights = current;
  if (model) {
    try {
      weights = loadWeightsFromBuffer(core, model.name, await model.arrayBuffer());
    } catch (e) {
      return { weights: null, error: new Error(t('weights.error', { name: model.name, message: e.message })) };
    }
  }
  if (!vocabFile) return { weights, error: null };
  if (!weights) return { weights: null, error: new Error(t('weights.vocabFirst', { name: vocabFile.name })) };
  try {
    return { weights: { ...weights, vocab: parseVocab(vocabFile.name, await vocabFile.text()), vocabName: vocabFile.name }, error: null };
  } catch (e) {
    return { weights, error: new Error(t('weights.vocabError', { message: e.message })) };
  }
}
