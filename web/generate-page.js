// Generate mode on the page (README "Generate mode"), one direction: the state's gen* fields
// (state.js) → a session (generation.js: a seeded GPT, or the weights picker's GPT file, run
// twice, with and without the KV cache) → views/generate-*.js. Step / Run to N / Reset drive the
// session; the sliders redraw the bars from the last logits while they move and generate again
// from the prompt (same seed) when released. main.js calls buildGeneration once.

import { t } from './i18n.js';
import { moduleConfig, schema } from './state.js';
import { setState } from './page.js';
import { CHECK_ATOL, cacheBytesPerToken, createSession, deleteSession, generatedCount, modelSpec, promptIds, sampling, sessionIds, stepSession, timings, topProbs } from './generation.js';
import { clearErrors, showError } from './views/errors.js';
import { createGenCache } from './views/generate-cache.js';
import { createGenProbs } from './views/generate-probs.js';
import { createGenRows } from './views/generate-rows.js';

const $ = (id) => document.getElementById(id);
const SLIDERS = ['gentemp', 'gentopk', 'gentopp'];
// The core's error fields as the panel's controls.
const FIELD_KEYS = { 'config.vocab_size': 'genvocab', 'config.block_size': 'genblock', 'config.n_layer': 'genlayers', 'config.n_head': 'genheads',
  'config.n_embd': 'genembd', 'config.rope': 'genrope', 'config.num_kv_heads': 'genkvheads', 'config.window': 'genwindow', 'generate.temperature': 'gentemp', 'generate.top_k': 'gentopk', 'generate.top_p': 'gentopp', 'generate.max_new_tokens': 'genmax', seed: 'genseed' };

const tokenLabel = (tok) => (tok === ' ' ? '␣' : tok === '\n' ? '↵' : tok);

function currentSpec(page) {
  const info = page.infoOf.get('GPT');
  return modelSpec(page.state, page.weights, info ? moduleConfig(page.state, info) : {});
}

// A new session from the state, run to `steps` tokens (a slider's release keeps the count).
function rebuild(page, steps = 0) {
  const g = page.gen;
  g.running = false;
  deleteSession(g.session);
  g.session = null;
  g.error = null;
  g.preview = null;
  clearErrors($('gen-controls'));
  try {
    const spec = currentSpec(page);
    const prompt = promptIds(page.state.genprompt, spec.tokens);
    g.session = createSession(page.core, spec, prompt, sampling(page.state), page.state.genmax);
    while (generatedCount(g.session) < steps && stepSession(g.session));
  } catch (e) {
    g.error = e;
    showError($('gen-controls'), FIELD_KEYS[e.field] ?? 'genprompt', e.message);
  }
  g.version++;
}

// The state's generate fields into the page: the section shown or hidden, a new session when
// the model, prompt or settings changed, the link.
export function syncGeneration(page, steps = 0) {
  const g = page.gen;
  const on = !!page.state.generate;
  $('generation').hidden = !on;
  document.body.classList.toggle('generate-mode', on);
  page.link.soon();
  if (!on) {
    g.running = false;
    deleteSession(g.session);
    g.session = null;
    g.key = '';
    return;
  }
  const { state, weights } = page;
  const key = JSON.stringify([Object.keys(schema).filter((k) => k.startsWith('gen')).map((k) => state[k]),
    state.module, state.config.GPT, weights?.name, weights?.vocabName, weights?.bytes.length]);
  if (key !== g.key) {
    g.key = key;
    rebuild(page, steps);
  }
  drawGeneration(page);
}

// A setting typed in the panel (on change; the prompt on input): checked against the schema.
function editField(page, el) {
  const key = el.dataset.genField;
  const field = schema[key];
  clearErrors($('gen-controls'));
  let value = el.value;
  if (field.type === 'bool') value = el.checked;
  if (field.type === 'int' || field.type === 'number') {
    value = el.value.trim() === '' ? NaN : Number(el.value);
    if (!(Number.isFinite(value) && value >= field.min && value <= field.max && (field.type !== 'int' || Number.isInteger(value)))) {
      showError($('gen-controls'), key, t('gen.range', { min: field.min, max: field.max }));
      return;
    }
  }
  setState(page, { [key]: value });
  syncGeneration(page);
}

// A slider moving: the bars from the last logits; released: the state, and a new run to the same step.
function slide(page, el, done) {
  const key = el.dataset.genSlider;
  const value = Number(el.value);
  const g = page.gen;
  if (done) {
    setState(page, { [key]: value });
    syncGeneration(page, g.session ? generatedCount(g.session) : 0);
    return;
  }
  g.previewState = { ...(g.previewState ?? {}), [key]: value };
  g.preview = sampling({ ...page.state, ...g.previewState });
  drawGeneration(page);
}

async function runToEnd(page) {
  const g = page.gen;
  if (!g.session || g.running) return;
  g.running = true;
  const { session } = g;
  while (g.running && g.session === session && stepSession(session)) {
    drawGeneration(page);
    await new Promise((resolve) => requestAnimationFrame(() => resolve()));
  }
  if (g.session === session) g.running = false;
  drawGeneration(page);
}

function command(page, name) {
  const g = page.gen;
  if (name === 'step' && g.session && !g.running) stepSession(g.session);
  if (name === 'run') runToEnd(page);
  if (name === 'reset') { g.key = ''; syncGeneration(page); return; }
  drawGeneration(page);
}

// Opening or closing the mode (the header's button, the panel's Close).
export function setGenerate(page, on) {
  setState(page, { generate: on });
  syncGeneration(page);
}

// The chosen generator's tokens (cache on: the cached one's) and the session's vocabulary.
function chosen(page) {
  const s = page.gen.session;
  return { s, toks: s.tokens[page.state.gencache], label: (id) => tokenLabel(s.spec.tokens[id] ?? `#${id}`) };
}

function drawText(page) {
  const { s } = chosen(page);
  const ids = sessionIds(s);
  $('gen-text').replaceChildren(...ids.map((id, i) => {
    const span = document.createElement('span');
    span.className = i < s.prompt.length ? 'gen-prompt-tok' : 'gen-new-tok';
    const tok = s.spec.tokens[id] ?? `#${id}`;
    span.textContent = tok === '\n' ? '↵\n' : tok;   // the running text: spaces as they are
    return span;
  }));
  $('gen-prompt-ids').textContent = t('gen.promptIds', { n: s.prompt.length, ids: s.prompt.join(' ') });
}

function drawRows(page) {
  const { s, toks, label } = chosen(page);
  const g = page.gen;
  const layers = s.spec.config.n_layer;
  const select = $('gen-layer');
  if (select.options.length !== layers || select.dataset.lang !== document.documentElement.lang) {
    select.replaceChildren(...Array.from({ length: layers }, (_, l) => Object.assign(document.createElement('option'), { value: String(l), textContent: t('gen.layerN', { l }) })));
    select.dataset.lang = document.documentElement.lang;
    select.value = String(Math.min(g.layer ?? layers - 1, layers - 1));
  }
  const layer = Number(select.value);
  const ids = sessionIds(s);
  const rows = toks.slice(1).map((tok, k) => {
    const position = s.prompt.length + k;
    const heads = tok.rows[layer];
    return { position, label: label(ids[position]), offset: position + 1 - heads[0].length, heads };
  });
  const total = s.prompt.length + s.maxNew;
  g.views.rows.update({ rows, total, key: `${g.version}|${layer}|${document.documentElement.lang}|${page.state.gencache}` });
}

function drawProbs(page) {
  const { s, toks, label } = chosen(page);
  const g = page.gen;
  const last = toks.at(-1);
  const bars = g.preview ? topProbs(last.logits, g.preview).map(({ id, p }) => ({ id, label: label(id), p }))
    : last.topIds.map((id, i) => ({ id, label: label(id), p: last.topProbs[i] }));
  const settings = g.preview ?? s.settings;
  const caption = [g.preview ? 'gen.probsPreview' : 'gen.probsCaption', { temperature: settings.temperature, top_k: settings.top_k ?? '—', top_p: settings.top_p ?? '—' }];
  g.views.probs.update({ bars, drawn: g.preview ? null : last.id, caption });
}

function drawCache(page) {
  const { s } = chosen(page);
  const last = s.tokens.true.at(-1);
  const on = page.state.gencache;
  const shape = last.cache?.shape ?? null;
  $('gen-cache-shape').textContent = on && shape ? `(${shape.join(', ')})` : t('gen.cacheOff');
  $('gen-cache-bytes').textContent = on && shape ? t('gen.cacheBytes', { bytes: last.cache.bytes.toLocaleString('en-US'), layers: s.spec.config.n_layer,
    perToken: cacheBytesPerToken(last.cache).toLocaleString('en-US') }) : '';
  const fresh = last.mode === 'prefill' ? shape?.[2] ?? 0 : 1;
  page.gen.views.cache.update(on && shape ? { layers: s.spec.config.n_layer, heads: shape[1], t: shape[2], fresh,
    labels: { k: 'K', v: 'V', layer: (l) => t('gen.layerN', { l }), shape: `(${shape.join(', ')})` } } : null);
}

function drawTimes(page) {
  const { s } = chosen(page);
  const tm = timings(s);
  const ms = (v) => (v === null ? '—' : v.toFixed(2));
  const row = (key, x) => {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = t(key);
    const cells = [t('gen.prefillMs', { ms: ms(x.first) }), t('gen.decodeMs', { ms: ms(x.median) })].map((text) => Object.assign(document.createElement('td'), { textContent: text }));
    tr.append(th, ...cells);
    tr.dataset.median = String(x.median ?? '');
    return tr;
  };
  $('gen-times').replaceChildren(row('gen.withCache', tm.cached), row('gen.withoutCache', tm.uncached));
  const check = $('gen-check');
  check.textContent = t(tm.ok ? 'gen.checkOk' : 'gen.checkBad', { diff: tm.maxDiff.toExponential(1), atol: CHECK_ATOL, n: s.tokens.true.length });
  check.className = tm.ok ? 'good' : 'error';
  check.dataset.maxDiff = String(tm.maxDiff);
}

function drawPanel(page) {
  const { state } = page;
  const g = page.gen;
  for (const el of document.querySelectorAll('[data-gen-field]')) {
    const v = state[el.dataset.genField];
    if (el.type === 'checkbox') el.checked = !!v;
    else if (document.activeElement !== el && el.value !== String(v)) el.value = String(v);
  }
  const shown = { ...state, ...(g.previewState ?? {}) };
  $('gentopk').max = String(g.session?.spec.config.vocab_size ?? state.genvocab);
  for (const key of SLIDERS) {
    if (document.activeElement !== $(key)) $(key).value = String(shown[key]);
    $(`${key}-out`).textContent = shown[key] ? String(shown[key]) : key === 'gentemp' ? t('gen.greedy') : t('gen.off');
  }
  $('gen-run').textContent = t('gen.run', { n: state.genmax });
  $('gen-model-fields').disabled = g.session?.spec.source === 'file';
  const spec = g.session?.spec;
  $('gen-model').textContent = !spec ? '' : spec.source === 'file' ? t('gen.modelFile', { name: spec.name, config: JSON.stringify(spec.config) })
    : t('gen.modelSeeded', { seed: spec.seed, config: JSON.stringify(spec.config) });
  const n = g.session ? generatedCount(g.session) : 0;
  const done = !g.session || n >= g.session.maxNew;
  for (const b of document.querySelectorAll('[data-gen-command]')) b.disabled = b.dataset.genCommand !== 'reset' && (done || g.running);
  $('gen-status').textContent = g.error ? t('gen.statusError') : g.running ? t('gen.statusRunning', { n, max: state.genmax })
    : t('gen.status', { n, max: state.genmax });
}

export function drawGeneration(page) {
  if (!page.state.generate) return;
  drawPanel(page);
  if (!page.gen.session) {
    for (const id of ['gen-text', 'gen-rows', 'gen-probs', 'gen-times']) $(id).replaceChildren();
    return;
  }
  drawText(page);
  drawRows(page);
  drawProbs(page);
  drawCache(page);
  drawTimes(page);
}

// For hooks.js: {ids, steps, cacheShape, running} (null outside Generate mode or without a session).
export function generationSummary(page) {
  const s = page?.gen?.session;
  if (!page?.state.generate || !s) return null;
  const last = s.tokens.true.at(-1);
  return { ids: sessionIds(s), steps: generatedCount(s), cacheShape: last.cache?.shape ?? null,
    cacheBytesPerToken: last.cache ? cacheBytesPerToken(last.cache) : null, running: page.gen.running };
}

// page.gen: {session (generation.js), error, running, key (the gen* fields the session has),
// version (sessions built), preview / previewState (a slider moving), layer, views}.
export function buildGeneration(page) {
  const g = { session: null, error: null, running: false, key: '', version: 0, preview: null, previewState: null, layer: null };
  page.gen = g;
  g.views = { rows: createGenRows($('gen-rows')), probs: createGenProbs($('gen-probs')), cache: createGenCache($('gen-cache')) };
  for (const el of document.querySelectorAll('[data-gen-field]')) {
    el.addEventListener(el.dataset.genField === 'genprompt' ? 'input' : 'change', () => editField(page, el));
  }
  for (const el of document.querySelectorAll('[data-gen-slider]')) {
    el.addEventListener('input', () => slide(page, el, false));
    el.addEventListener('change', () => { g.previewState = null; slide(page, el, true); });
  }
  for (const b of document.querySelectorAll('[data-gen-command]')) b.addEventListener('click', () => command(page, b.dataset.genCommand));
  $('gen-layer').addEventListener('change', () => { g.layer = Number($('gen-layer').value); drawGeneration(page); });
  $('gen-mode').addEventListener('click', () => setGenerate(page, true));
  $('gen-close').addEventListener('click', () => setGenerate(page, false));
  $('lang-select').addEventListener('change', () => drawGeneration(page));
  // A file picked in the weights picker (its status line changes once it is read): the mode's model follows.
  new MutationObserver(() => { if (page.state.generate) syncGeneration(page); }).observe($('weights-status'), { childList: true, characterData: true, subtree: true });
  syncGeneration(page);
}
