// Generate mode (docs/generation.md, "Generate mode"), one direction: the state's gen* fields (fields.js) and
// the weights the playground's GPT has -> a session in the worker (session.js, worker.js: a seeded
// GPT, or the weights file's, run twice, with and without the KV cache) -> views/generate-*.js,
// drawn through the page's scheduler as tokens arrive. Step / Run to N / Reset drive the session;
// the sliders redraw the bars from the last logits while they move (the core's own filter:
// core.nextTokenDistribution) and generate again from the prompt (same seed) when released.
import { controlFor } from '../app/errors.js';
import { LANGUAGE_MODEL, loadShippedWeights } from '../app/weights.js';
import { fieldMessage, fieldProblem, schema } from '../app/state.js';
import { addLocale, t, translatePage } from '../i18n.js';
import { genEn } from '../locales/gen.en.js';
import { moduleConfig } from '../playground/fields.js';
import { createGenCache } from '../views/generate-cache.js';
import { fillSection } from '../views/generate-section.js';
import { createGenPanel } from '../views/generate-panel.js';
import { createGenProbs } from '../views/generate-probs.js';
import { createGenRows } from '../views/generate-rows.js';
import { createGenText } from '../views/generate-text.js';
import { createGenTimes } from '../views/generate-times.js';
import { fields } from './fields.js';
import { CHECK_ATOL, cacheBytesPerToken, modelSpec, promptIds, sampling } from './model.js';
import { createGenerator, generatedCount, sessionIds, timings } from './session.js';

const locale = addLocale({ en: genEn, zh: () => import('../locales/gen.zh.js').then((m) => m.genZh) });
const $ = (id) => document.getElementById(id);
const tokenLabel = (tok) => (tok === ' ' ? '␣' : tok === '\n' ? '↵' : tok);

// The state's model: the playground's GPT weights file (its config from the module form), the
// shipped language model (fetched the first time: null until then, and a rebuild when it is in), or a seeded one.
function currentSpec(g) {
  const { state, weights, core } = g.page;
  const info = core.modules().find((m) => m.id === 'GPT');
  const spec = modelSpec(state, weights, info ? moduleConfig(state, info) : {}, g.lm);
  if (!spec && !g.lmLoading) {
    g.lmLoading = loadShippedWeights(core, LANGUAGE_MODEL).then((lm) => { g.lm = lm; g.key = ''; syncGeneration(g); },
      (e) => { g.promptError = e; g.views.panel.showError('genprompt', e.message); });
  }
  return spec;
}

// A new session from the state, run to `steps` tokens (a slider's release keeps the count). A run
// under way goes on in the new session: a Run pressed just before the model changed (training hands
// its model over again when it stops) is not lost, nor one pressed while the shipped model loads.
function rebuild(g, steps = 0, running = !!g.gen.session?.running) {
  g.preview = null;
  g.promptError = null;
  g.views.panel.clearErrors();
  try {
    const spec = currentSpec(g);
    if (spec) g.gen.start(spec, promptIds(g.page.state.genprompt, spec.tokens), sampling(g.page.state), g.page.state.genmax);
    else g.gen.drop();
    for (let i = 0; i < steps; i++) g.gen.step();   // without a model (being fetched) they wait for it
    if (running) g.gen.run();
  } catch (e) {
    g.gen.clear();
    g.promptError = e;
    g.views.panel.showError(controlFor('generate', e.field), e.message);
  }
  g.version++;
  scheduleDraw(g);
}

// The state's generate fields into the mode: a new session when the model, prompt or settings changed
// (`running`: whether it runs on; by default as the last one did).
function syncGeneration(g, steps = 0, running = undefined) {
  const { state } = g.page;
  const key = JSON.stringify([Object.keys(fields).map((k) => state[k]), state.module, state.config.GPT]);
  if (key !== g.key || g.page.weights !== g.weightsSeen) {
    g.key = key;
    g.weightsSeen = g.page.weights;
    rebuild(g, steps, running);
  }
  scheduleDraw(g);
}

// A setting typed in the panel (on change; the prompt on input): checked by the one validator.
function editField(g, key, el) {
  g.views.panel.clearErrors();
  const field = schema[key];
  let value = el.value;
  if (field.type === 'bool') value = el.checked;
  if (field.type === 'int' || field.type === 'number') {
    value = el.value.trim() === '' ? NaN : Number(el.value);
    const problem = fieldProblem(key, value, { typed: true });
    if (problem) { g.views.panel.showError(key, fieldMessage(key, problem)); return; }
  }
  g.page.set({ [key]: value }, { from: 'generate' });
  syncGeneration(g);
}

// A slider moving: the bars from the last logits; released: the state, and a new run to the same step.
function slide(g, key, value, done) {
  if (done) {
    g.previewState = null;
    g.page.set({ [key]: value }, { from: 'generate' });
    syncGeneration(g, g.gen.session ? generatedCount(g.gen.session) : 0);
    return;
  }
  g.previewState = { ...(g.previewState ?? {}), [key]: value };
  g.preview = sampling({ ...g.page.state, ...g.previewState });
  scheduleDraw(g);
}

function command(g, name) {
  if (name === 'step') g.gen.step();
  if (name === 'run') g.gen.run();
  if (name === 'reset') { g.gen.stop(); g.key = ''; syncGeneration(g, 0, false); return; }
  scheduleDraw(g);
}

function scheduleDraw(g) {
  g.page.scheduler.soon('generate', () => drawGeneration(g));
}

// The ten most probable next tokens under a preview's settings, as the core filters them.
function previewBars(g, logits, label) {
  const p = g.page.core.nextTokenDistribution(logits, g.preview);
  const ids = Array.from(p.keys()).filter((id) => p[id] > 0).sort((a, b) => p[b] - p[a] || a - b).slice(0, 10);
  return ids.map((id) => ({ id, label: label(id), p: p[id] }));
}

// A model as nanoGPT builds it: GPT(GPTConfig(vocab_size=96, ..., bias=True)).
export const configText = (config) => `GPT(GPTConfig(${Object.entries(config).map(([k, v]) => `${k}=${typeof v === 'boolean' ? (v ? 'True' : 'False') : v}`).join(', ')}))`;

function panelData(g, s) {
  const { state } = g.page;
  const shown = { ...state, ...(g.previewState ?? {}) };
  const last = s?.tokens.true.at(-1);
  const shape = state.gencache ? last?.cache?.shape ?? null : null;
  const layers = s?.spec.config.n_layer ?? state.genlayers;
  const generated = s ? generatedCount(s) : 0;
  return {
    state, shown, vocabSize: s?.spec.config.vocab_size ?? state.genvocab, maxNew: state.genmax, generated, layers,
    layer: Math.min(g.layer ?? layers - 1, layers - 1), fromFile: !!s && s.spec.source !== 'seeded', running: !!s?.running,
    done: !s || !!s.error || s.tokens.true.length + s.pending >= s.maxNew + 1, error: !!(s?.error || g.promptError),
    modelText: !s ? t('gen.modelLoading') : s.spec.source === 'file' ? t('gen.modelFile', { name: s.spec.name, config: configText(s.spec.config) })
      : s.spec.source === 'shipped' ? t('gen.modelShipped', { name: s.spec.name, config: configText(s.spec.config), loss: g.lm.card.heldout.loss_nats_per_char })
      : t('gen.modelSeeded', { seed: s.spec.seed, config: configText(s.spec.config) }),
    cache: shape ? { shape, bytes: last.cache.bytes, layers, perToken: cacheBytesPerToken(last.cache) } : null,
  };
}

function drawGeneration(g) {
  if (!g.open) return;
  const s = g.gen.session;
  const panel = panelData(g, s);
  g.views.panel.update(panel);
  const toks = s?.tokens[g.page.state.gencache];
  if (!s || !toks?.length) {
    for (const v of [g.views.text, g.views.times]) v.update(null);
    g.views.probs.update({ bars: [], drawn: null, caption: ['gen.probsCaption', { temperature: '—', top_k: '—', top_p: '—' }] });
    g.views.cache.update(null);
    return;
  }
  const label = (id) => tokenLabel(s.spec.tokens[id] ?? `#${id}`);
  const ids = sessionIds(s);
  g.views.text.update({ tokens: ids.map((id) => s.spec.tokens[id] ?? `#${id}`), promptLength: s.prompt.length, promptIds: s.prompt });
  const rows = toks.slice(1).map((tok, k) => {
    const position = s.prompt.length + k, heads = tok.rows[panel.layer];
    return { position, label: label(ids[position]), offset: position + 1 - heads[0].length, heads };
  });
  g.views.rows.update({ rows, total: s.prompt.length + s.maxNew, key: `${g.version}|${panel.layer}|${document.documentElement.lang}|${g.page.state.gencache}` });
  const last = toks.at(-1);
  const bars = g.preview ? previewBars(g, last.logits, label) : last.topIds.map((id, i) => ({ id, label: label(id), p: last.topProbs[i] }));
  const settings = g.preview ?? s.settings;
  g.views.probs.update({ bars, drawn: g.preview ? null : last.id,
    caption: [g.preview ? 'gen.probsPreview' : 'gen.probsCaption', { temperature: settings.temperature, top_k: settings.top_k ?? '—', top_p: settings.top_p ?? '—' }] });
  const fresh = last.mode === 'prefill' ? panel.cache?.shape[2] ?? 0 : 1;
  g.views.cache.update(panel.cache ? { layers: panel.layers, heads: panel.cache.shape[1], t: panel.cache.shape[2], fresh,
    labels: { k: 'K', v: 'V', layer: (l) => t('gen.layerN', { l }), shape: `(${panel.cache.shape.join(', ')})` } } : null);
  g.views.times.update({ ...timings(s), atol: CHECK_ATOL, n: s.tokens.true.length });
}

function show(on) {
  $('generation').hidden = !on;
  document.body.classList.toggle('generate-mode', on);
}

// g: {page, gen (session.js), key (the fields the session has), version (sessions built), preview /
// previewState (a slider moving), layer, promptError, views, open}. Built once per page.
function build(page) {
  fillSection($('generation'));
  const g = { page, key: '', version: 0, preview: null, previewState: null, layer: null, promptError: null, open: false };
  g.gen = createGenerator({ onUpdate: (kind, session) => {
    if (kind === 'error') g.views.panel.showError(controlFor('generate', session.error.field), session.error.message);
    scheduleDraw(g);
  } });
  g.views = {
    panel: createGenPanel($('gen-controls'), {
      onField: (key, el) => editField(g, key, el), onSlide: (key, value, done) => slide(g, key, value, done),
      onCommand: (name) => command(g, name), onLayer: (layer) => { g.layer = layer; scheduleDraw(g); },
    }),
    text: createGenText($('gen-text'), $('gen-prompt-ids')),
    rows: createGenRows($('gen-rows')),
    probs: createGenProbs($('gen-probs')),
    cache: createGenCache($('gen-cache')),
    times: createGenTimes($('gen-times'), $('gen-check')),
  };
  $('gen-close').addEventListener('click', () => page.set({ generate: false }));
  return g;
}

let made = null;

export function start(page) {
  made ??= build(page);
  const g = made;
  g.open = true;
  g.key = '';
  locale.then(() => {
    if (!g.open) return;
    translatePage($('generation'));
    show(true);
    syncGeneration(g);
  });
  return {
    sync: () => syncGeneration(g),
    relabel: () => { g.version++; scheduleDraw(g); },
    stop: () => {
      g.open = false;
      g.gen.close();
      page.scheduler.cancel('generate');
      show(false);
    },
    summary: () => ({ generation: () => summary(g) }),
  };
}

// For app/hooks.js: {ids, steps, cacheShape, cacheBytesPerToken, running}; null without a session.
function summary(g) {
  const s = g.gen.session;
  if (!s || !s.tokens.true.length) return null;
  const last = s.tokens.true.at(-1);
  return { ids: sessionIds(s), steps: generatedCount(s), cacheShape: last.cache?.shape ?? null,
    cacheBytesPerToken: last.cache ? cacheBytesPerToken(last.cache) : null, running: s.running || s.pending > 0 };
}
