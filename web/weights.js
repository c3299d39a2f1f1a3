// Trained weights on the page: a safetensors file (a module's state_dict, saved by
// scripts/export_state_dict.py) picked or dropped, listed tensor by tensor, and applied to the
// selected module on every recompute; with it, optionally, the model's vocabulary JSON (token i is
// row i of its embedding table), which the Transformer's plan (scenario.js) maps typed tokens
// through. The URL records only the file's name (state.weights): a shared link asks for the file.

import { t } from './i18n.js';

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

// The {tokens, index, ids} shape of tokenize.js's buildVocab, for a given token list.
export function vocabFromTokens(tokens) {
  const index = new Map(tokens.map((t, i) => [t, i]));
  return { tokens, index, ids: (ts) => ts.map((t) => index.get(t)) };
}

// Wires the picker (input + drop zone) and renders the listing. onChange(weights | null, error)
// is called when a file was loaded, refused, or cleared; weights is {name, bytes, tensors,
// vocab?, vocabName?}. Returns {render, refresh (on a language switch), loadBuffer(name, bytes),
// loadVocab(name, text), adopt(weights)}.
export function createWeightsPicker(core, els, onChange) {
  let current = null;
  const render = (w) => {
    els.clear.hidden = !w;
    els.details.hidden = !w;
    const body = els.table.tBodies[0];
    body.replaceChildren();
    if (els.vocab) {
      els.vocab.textContent = w?.vocab
        ? t('weights.vocab', { name: w.vocabName, n: w.vocab.length, tokens: `${w.vocab.slice(0, 8).join(' ')}${w.vocab.length > 8 ? ' …' : ''}` })
        : '';
    }
    if (!w) return;
    for (const tensor of w.tensors) {
      const tr = body.insertRow();
      for (const text of [tensor.name, tensor.dtype, `[${tensor.shape.join(', ')}]`]) tr.insertCell().textContent = text;
    }
  };
  // The one way in, for a picked or dropped file and for bytes fetched elsewhere (the embed's
  // `weights` URL attribute): true when the file was loaded, false when it was refused.
  const loadBuffer = (name, arrayBuffer) => {
    try {
      current = loadWeightsFromBuffer(core, name, arrayBuffer);
      render(current);
      onChange(current, null);
      return true;
    } catch (e) {
      current = null;
      render(null);
      onChange(null, new Error(t('weights.error', { name, message: e.message })));
      return false;
    }
  };
  // A vocabulary belongs to the weights loaded with or before it; a bad one leaves them loaded
  // and shows why.
  const loadVocab = (name, text) => {
    if (!current) {
      onChange(null, new Error(t('weights.vocabFirst', { name })));
      return false;
    }
    try {
      current = { ...current, vocab: parseVocab(name, text), vocabName: name };
      render(current);
      onChange(current, null);
      return true;
    } catch (e) {
      onChange(current, new Error(t('weights.vocabError', { message: e.message })));
      return false;
    }
  };
  const load = async (files) => {
    const list = Array.from(files);
    const vocab = list.find((f) => /\.json$/i.test(f.name));
    const model = list.find((f) => f !== vocab);
    if (model && !loadBuffer(model.name, await model.arrayBuffer())) return;
    if (vocab) loadVocab(vocab.name, await vocab.text());
  };
  els.input.addEventListener('change', () => { if (els.input.files.length) load(els.input.files); });
  els.drop.addEventListener('dragover', (e) => { e.preventDefault(); els.drop.classList.add('dragging'); });
  els.drop.addEventListener('dragleave', () => els.drop.classList.remove('dragging'));
  els.drop.addEventListener('drop', (e) => {
    e.preventDefault();
    els.drop.classList.remove('dragging');
    if (e.dataTransfer.files.length) load(e.dataTransfer.files);
  });
  els.clear.addEventListener('click', () => {
    els.input.value = '';
    current = null;
    render(null);
    onChange(null, null);
  });
  // Weights the page made itself (training mode hands over the model it trained: train-page.js),
  // shown as if picked; the caller applies them, so onChange is not called.
  const adopt = (w) => { current = w; render(w); };
  return { render, refresh: () => render(current), loadBuffer, loadVocab, adopt };
}
