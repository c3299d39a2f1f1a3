// Experiments mode (docs/experiments.md), one direction: the state's fields (fields.js: the task,
// the model's source, the heads switched off, the clean and corrupted sequences, the position, the
// open view) and the model (the task's shipped one, or training's, or the picker's) -> questions to
// the mode's worker (worker.js; scenarios from lab.js, run by the core) -> views/lab-views.js.
// A press on a head tile writes `ablate`; the answer's numbers are drawn when they come back.
import { addLocale, t, translatePage } from '../i18n.js';
import { labEn } from '../locales/lab.en.js';
import { readSafetensorsHeader } from '../train/safetensors.js';
import { heldOutSet, getTask, nextTokenInputs } from '../train/tasks.js';
import { PATTERNS } from '../train/patterns.js';
import { fillSection } from '../views/lab-section.js';
import { fillOptions } from '../views/dom-write.js';
import { createLabBars, createLabGrid, createLabHeads, createLabLens, fillTerms } from '../views/lab-views.js';
import { formatAblate, parseAblate, patchingGrid, proposeCorruption, rankHeads, residualLabel, sequenceIds, sequenceText } from './lab.js';

const locale = addLocale({ en: labEn, zh: () => import('../locales/lab.zh.js').then((m) => m.labZh) });
const $ = (id) => document.getElementById(id);
export const HELDOUT = 256;
// A refusal in the page's language; key and params say it again after a language switch.
const fail = (key, params, field) => { throw Object.assign(new Error(t(key, params)), { field, key, params }); };

// A safetensors file's __metadata__ (the page's own exports and the shipped models name their task, module, config and seed).
export const safetensorsMetadata = (bytes) => readSafetensorsHeader(bytes).header.__metadata__ ?? {};

// The model the state names: {task, module, config, seed, weights, name, source}.
async function loadModel(page, state) {
  const task = getTask(state.experiment);
  if (state.expsource) {
    const w = page.weights, trained = state.expsource === 'trained';
    if (!w || !!w.fromTraining !== trained) fail(trained ? 'lab.noTrained' : 'lab.noFile', { task: task.id }, 'expsource');
    const meta = safetensorsMetadata(w.bytes);
    if (meta.task !== task.id || !meta.config) fail('lab.otherTask', { name: w.name, task: meta.task ?? '—', want: task.id }, 'expsource');
    return { task, module: meta.module ?? 'CausalTransformer', config: JSON.parse(meta.config), seed: Number(meta.seed ?? 1), weights: w.bytes.slice(), name: w.name, source: state.expsource };
  }
  const dir = new URL(`models/${task.id}/`, document.baseURI);
  const get = async (name) => {
    const r = await fetch(new URL(name, dir));
    if (!r.ok) fail('lab.fetchFailed', { url: new URL(name, dir).href, status: r.status }, 'experiment');
    return r;
  };
  const [card, bytes] = await Promise.all([get('card.json').then((r) => r.json()), get('model.safetensors').then((r) => r.arrayBuffer())]);
  return { task, module: card.module, config: card.config, seed: card.seed, weights: new Uint8Array(bytes), name: `models/${task.id}/model.safetensors`, card, source: 'shipped' };
}

const blockOf = (m) => m.config.block_size ?? m.config.context_length;
const MODEL_TEXT = { shipped: 'lab.model.shipped', trained: 'lab.model.trained', file: 'lab.model.file' };

// The sequences and position the state names (the defaults filled in), checked. Throws with the field.
function readInputs(L, state) {
  const { task } = L.model;
  const cleanText = state.expclean || L.defaultClean;
  const clean = sequenceIds(task, cleanText, blockOf(L.model), 'expclean');
  const T = clean.length - 1;
  const pos = state.exppos < 0 ? T - 1 : state.exppos;
  if (pos >= T) fail('lab.posPast', { pos, last: T - 1 }, 'exppos');
  const proposed = proposeCorruption(task, clean, pos);
  const corruptText = state.expcorrupt || (proposed ? sequenceText(task, proposed) : cleanText);
  const corrupted = sequenceIds(task, corruptText, blockOf(L.model), 'expcorrupt');
  if (corrupted.length !== clean.length) fail('lab.lengths', { a: corrupted.length, b: clean.length }, 'expcorrupt');
  return { clean, corrupted, pos, T, cleanText, corruptText, token: clean[pos + 1], wrong: corrupted[pos + 1], key: `${cleanText}|${corruptText}|${pos}` };
}

// The pattern each head shows over the held-out set (its strongest, when >= 0.5).
function labelsOf(scores) {
  return scores.map((layer) => layer.map((s) => {
    const best = PATTERNS.filter((p) => p !== 'offset' && s[p] >= 0.5).sort((a, b) => s[b] - s[a])[0];
    return best ? { key: best, score: s[best] } : null;
  }));
}

// --- the worker ---

function ask(L, msg, transfer = []) {
  const id = ++L.ids;
  return new Promise((resolve, reject) => {
    L.pending.set(id, { resolve, reject });
    L.worker.postMessage({ ...msg, id }, transfer);
  });
}

function onAnswer(L, m) {
  const p = L.pending.get(m.id);
  if (!p) return;
  L.pending.delete(m.id);
  if (m.type === 'error') p.reject(Object.assign(new Error(m.message), { field: m.field }));
  else p.resolve(m);
}

// --- the one update: whatever the state changed, asked in order ---

function refresh(L) {
  L.chain = L.chain.then(() => update(L)).catch((e) => { L.error = e; }).then(() => draw(L));
}

async function update(L) {
  const { state } = L.page;
  if (!L.open || !state.experiment) return;
  L.error = null;
  const source = `${state.experiment}|${state.expsource}|${state.expsource ? L.page.weights?.name ?? '' : ''}`;
  if (source !== L.sourceKey || L.page.weights !== L.weightsSeen && state.expsource) {
    L.sourceKey = source;
    L.weightsSeen = L.page.weights;
    Object.assign(L, { model: null, loaded: null, metrics: null, baseline: null, baselineKey: '', ranking: null, analysis: null,
      evalKey: '', anaKey: '', inputs: null });
    const model = await loadModel(L.page, state);
    const held = heldOutSet(model.task, model.seed, HELDOUT);
    const loaded = await ask(L, { type: 'load', model: { module: model.module, config: model.config, seed: model.seed }, weights: model.weights, heldout: held });
    const T = held.shape[1];
    L.defaultClean = sequenceText(model.task, [...held.idx.subarray(0, T), held.target[T - 1]]);
    Object.assign(L, { model, loaded, labels: labelsOf(loaded.scores) });
  }
  if (!L.model) return;
  L.inputs = null;
  const inputs = readInputs(L, state);
  L.inputs = inputs;
  const ablated = parseAblate(state.ablate, L.loaded.layers, L.loaded.heads);
  L.ablated = ablated;
  const input = nextTokenInputs(inputs.clean);
  const evaluate = (heads) => ask(L, { type: 'evaluate', ablated: heads, mean: state.expmean, input, pos: inputs.pos });
  if (L.baselineKey !== inputs.key) {
    L.baseline = { ...(await evaluate([])), ablated: [] };
    L.baselineKey = inputs.key;
  }
  const evalKey = `${inputs.key}|${formatAblate(ablated)}|${state.expmean}`;
  if (evalKey !== L.evalKey) {
    L.metrics = ablated.length ? { ...(await evaluate(ablated)), ablated } : L.baseline;
    L.evalKey = evalKey;
    if (L.pressedAt !== null) { L.latencyMs = performance.now() - L.pressedAt; L.pressedAt = null; }
  }
  if (L.ranking && L.ranking.mean !== state.expmean) L.ranking = null;   // ranked with the other ablation
  if (inputs.key !== L.anaKey) {
    L.analysis = null;
    if (inputs.token !== inputs.wrong) {
      L.analysis = await ask(L, { type: 'analyse', clean: inputs.clean.slice(0, -1), corrupted: inputs.corrupted.slice(0, -1), pos: inputs.pos, token: inputs.token, wrong: inputs.wrong });
    }
    L.anaKey = inputs.key;
  }
}

// --- drawing ---

const tok = (task, id) => task.vocab[id] ?? `#${id}`;

function drawMetric(L) {
  const m = L.metrics, b = L.baseline, el = L.els.metric;
  if (!m || !b) { el.replaceChildren(); return; }
  const rows = [
    ['lab.accuracy', m.accuracy.toFixed(4)],
    ['lab.baseline', b.accuracy.toFixed(4)],
    ['lab.loss', m.loss.toFixed(4)],
    ['lab.prob', m.prob === null ? '—' : m.prob.toFixed(4)],
    ['lab.predicted', tok(L.model.task, m.predicted)],
    ['lab.time', t('lab.ms', { ms: (L.latencyMs ?? m.ms).toFixed(1) })],
  ];
  fillTerms(el, rows.map(([key, text]) => [t(key, { n: HELDOUT }), text]));
  Object.assign(el.dataset, { accuracy: String(m.accuracy), baseline: String(b.accuracy), loss: String(m.loss), prob: String(m.prob ?? '') });
}

function drawAnalysis(L) {
  const a = L.analysis, task = L.model.task, inputs = L.inputs;
  const note = L.els.note;
  if (!inputs) return;
  if (!a) { note.textContent = t('lab.sameAnswer', { token: tok(task, inputs.token) }); return; }
  note.textContent = t('lab.metricNote', { pos: inputs.pos, token: tok(task, inputs.token), wrong: tok(task, inputs.wrong),
    clean: a.heads.patching.clean_metric.toFixed(3), corrupted: a.heads.patching.corrupted_metric.toFixed(3), ms: a.ms.toFixed(0) });
  const tokens = inputs.clean.slice(0, -1).map((id) => tok(task, id));
  const heads = patchingGrid(a.heads.patching, a.heads.attribution_patching, 'head');
  const layerLabels = heads.rows.map((s, l) => t('lab.layerN', { l }));
  const headLabels = Array.from({ length: heads.cols }, (_, h) => t('lab.headN', { h }));
  L.views.patchHeads.update({ name: 'patching_heads', rowLabels: layerLabels, colLabels: headLabels, data: heads.effect, label: t('lab.patchHeads') });
  L.views.attrHeads.update({ name: 'attribution_heads', rowLabels: layerLabels, colLabels: headLabels, data: heads.estimate, label: t('lab.attrHeads') });
  L.els.corrHeads.textContent = t('lab.correlation', { r: heads.correlation.toFixed(3), n: heads.effect.length });
  L.els.corrHeads.dataset.r = String(heads.correlation);
  const res = patchingGrid(a.residual.patching, a.residual.attribution_patching, 'position');
  // rows by their layer and step (the heatmap cuts a label at 12 characters); a cell's tooltip names the whole step
  const resRows = { rowLabels: res.rows.map(residualLabel), rowNames: res.rows, colLabels: tokens.map((c, i) => `${i} ${c}`) };
  L.views.patchRes.update({ name: 'patching_residual', ...resRows, data: res.effect, label: t('lab.patchResidual') });
  L.views.attrRes.update({ name: 'attribution_residual', ...resRows, data: res.estimate, label: t('lab.attrResidual') });
  L.els.corrRes.textContent = t('lab.correlation', { r: res.correlation.toFixed(3), n: res.effect.length });
  L.els.corrRes.dataset.r = String(res.correlation);
  L.views.lens.update({ caption: t('lab.lensCaption', { token: tok(task, inputs.token), pos: inputs.pos }), steps: a.lens.map((e) => e.step), tokens,
    top: a.lens.map((e) => e.top.map((id) => tok(task, id))), ids: a.lens.map((e) => e.top), prob: a.lens.map((e) => e.prob), pos: inputs.pos, answer: inputs.token });
  if (a.dla) {
    L.views.dla.update({ caption: t('lab.dlaCaption', { total: a.dla.total.toFixed(4), token: tok(task, inputs.token), wrong: tok(task, inputs.wrong) }),
      rows: a.dla.components.map((c) => ({ label: c.name, value: c.value, data: { name: c.name } })) });
  } else {
    L.views.dla.update({ caption: t('lab.dlaGptOnly'), rows: [] });
  }
}

function drawRank(L) {
  const r = L.ranking;
  L.els.rankRun.disabled = !L.loaded;
  if (!r) { L.views.rank.update({ caption: t('lab.rankEmpty'), rows: [] }); return; }
  L.views.rank.update({ caption: t('lab.rankCaption', { baseline: L.baseline.accuracy.toFixed(4), ms: r.ms.toFixed(0), n: HELDOUT }),
    rows: r.rows.map((x, i) => ({ label: t('lab.headName', { layer: x.layer, head: x.head }), value: x.accuracy, mark: i === 0,
      data: { layer: String(x.layer), head: String(x.head) } })) });
}

function draw(L) {
  if (!L.open) return;
  const { state } = L.page;
  const err = L.error;
  L.els.error.hidden = !err;
  L.els.error.textContent = err ? (err.key ? t(err.key, err.params) : err.message) : '';
  for (const el of [L.els.clean, L.els.corrupted, L.els.pos]) el.removeAttribute('aria-invalid');
  const bad = { expclean: L.els.clean, expcorrupt: L.els.corrupted, exppos: L.els.pos }[err?.field];
  if (bad) bad.setAttribute('aria-invalid', 'true');
  for (const b of document.querySelectorAll('[data-lab-view]')) b.setAttribute('aria-pressed', String(b.dataset.labView === state.expview));
  for (const p of document.querySelectorAll('[data-lab-panel]')) p.hidden = p.dataset.labPanel !== state.expview;
  L.els.mean.checked = state.expmean;
  if (!L.model) { L.els.model.textContent = err ? '' : t('lab.loading'); return; }
  const m = L.model;
  L.els.model.textContent = t(MODEL_TEXT[m.source], { task: m.task.id, name: m.name, config: JSON.stringify(m.config),
    accuracy: m.card ? m.card.heldout.accuracy.toFixed(4) : '—', steps: m.card?.steps ?? '—' });
  if (document.activeElement !== L.els.clean) L.els.clean.value = state.expclean || L.defaultClean;
  const inputs = L.inputs;
  if (inputs && document.activeElement !== L.els.corrupted) L.els.corrupted.value = inputs.corruptText;
  if (inputs) {
    fillOptions(L.els.pos, Array.from({ length: inputs.T }, (_, i) => ({ value: String(i === inputs.T - 1 ? -1 : i),
      text: `${i}: ${tok(m.task, inputs.clean[i])} → ${tok(m.task, inputs.clean[i + 1])}` })));
    L.els.pos.value = String(inputs.pos === inputs.T - 1 ? -1 : inputs.pos);
    L.els.answer.textContent = t('lab.answer', { token: tok(m.task, inputs.token), wrong: tok(m.task, inputs.wrong) });
  }
  if (L.loaded) {
    L.views.heads.update({ layers: L.loaded.layers, heads: L.loaded.heads, T: inputs ? inputs.T : 0, maps: L.baseline?.maps, ablated: new Set((L.ablated ?? []).map(([l, h]) => `${l}.${h}`)), labels: L.labels });
  }
  drawMetric(L);
  drawRank(L);
  drawAnalysis(L);
}

// --- controls ---

function toggle(L, l, h) {
  if (!L.loaded) return;
  const on = new Map((L.ablated ?? []).map(([a, b]) => [`${a}.${b}`, [a, b]]));
  const key = `${l}.${h}`;
  if (on.has(key)) on.delete(key); else on.set(key, [l, h]);
  L.pressedAt = performance.now();
  L.page.set({ ablate: formatAblate(parseAblate([...on.keys()].join(','), L.loaded.layers, L.loaded.heads)) }, { from: 'experiment' });
  refresh(L);
}

async function rank(L) {
  if (!L.loaded) return;
  L.els.rankRun.disabled = true;
  try {
    const r = await ask(L, { type: 'rank', mean: L.page.state.expmean });
    L.ranking = { rows: rankHeads(r.rows), ms: r.ms, mean: L.page.state.expmean };
  } catch (e) {
    L.error = e;
  }
  draw(L);
}

function wire(L) {
  const set = (patch) => { L.page.set(patch, { from: 'experiment' }); refresh(L); };
  $('lab-close').addEventListener('click', () => L.page.set({ experiment: '' }));
  L.els.clean.addEventListener('input', () => set({ expclean: L.els.clean.value === L.defaultClean ? '' : L.els.clean.value }));
  L.els.corrupted.addEventListener('input', () => set({ expcorrupt: L.els.corrupted.value }));
  L.els.pos.addEventListener('change', () => set({ exppos: Number(L.els.pos.value) }));
  L.els.mean.addEventListener('change', () => set({ expmean: L.els.mean.checked }));
  L.els.rankRun.addEventListener('click', () => rank(L));
  $('lab-reset').addEventListener('click', () => set({ ablate: '' }));
  for (const b of document.querySelectorAll('[data-lab-view]')) b.addEventListener('click', () => set({ expview: b.dataset.labView }));
}

function show(on) {
  $('experiments').hidden = !on;
  document.body.classList.toggle('experiment-mode', on);
}

function build(page) {
  fillSection($('experiments'));
  const els = { model: $('lab-model'), error: $('lab-error'), clean: $('lab-clean'), corrupted: $('lab-corrupted'), pos: $('lab-pos'),
    answer: $('lab-answer'), mean: $('lab-mean'), metric: $('lab-metric'), rankRun: $('lab-rank-run'), note: $('lab-metric-note'),
    corrHeads: $('lab-corr-heads'), corrRes: $('lab-corr-residual') };
  const L = { page, els, open: false, ids: 0, pending: new Map(), chain: Promise.resolve(), sourceKey: '', weightsSeen: null, model: null, loaded: null,
    pressedAt: null, latencyMs: null, ranking: null };
  L.worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  L.worker.onmessage = (e) => onAnswer(L, e.data);
  const fig = (id) => document.querySelector(`[data-testid="${id}"]`);
  L.views = {
    heads: createLabHeads($('lab-heads'), { onToggle: (l, h) => toggle(L, l, h) }),
    rank: createLabBars($('lab-rank'), { testid: 'exp-rank-bars' }),
    patchHeads: createLabGrid(fig('exp-patching')),
    attrHeads: createLabGrid(fig('exp-attribution')),
    patchRes: createLabGrid(fig('exp-patching-residual')),
    attrRes: createLabGrid(fig('exp-attribution-residual')),
    lens: createLabLens($('lab-lens')),
    dla: createLabBars($('lab-dla'), { testid: 'exp-dla-bars' }),
  };
  wire(L);
  return L;
}

let made = null;

export function start(page) {
  made ??= build(page);
  const L = made;
  L.open = true;
  L.sourceKey = '';
  locale.then(() => {
    if (!L.open) return;
    translatePage($('experiments'));
    show(true);
    refresh(L);
  });
  return {
    sync: () => refresh(L),
    relabel: () => draw(L),
    stop: () => { L.open = false; show(false); },
    summary: () => ({ experiment: () => summary(L) }),
  };
}

// For app/hooks.js: window.playground.experiment(); null until the model and its first numbers are in.
function summary(L) {
  if (!L.metrics || !L.baseline || !L.model) return null;
  return {
    task: L.model.task.id, source: L.model.source, ablated: L.metrics.ablated.map(([l, h]) => [l, h]), mean: L.page.state.expmean,
    accuracy: L.metrics.accuracy, baseline_accuracy: L.baseline.accuracy, loss: L.metrics.loss, prob: L.metrics.prob,
    predicted: L.metrics.predicted, latencyMs: L.latencyMs, workerMs: L.metrics.ms,
    ranking: (L.ranking?.rows ?? []).map(({ layer, head, accuracy }) => ({ layer, head, accuracy })), rankMs: L.ranking?.ms ?? null,
    scores: L.loaded.scores,
    inputs: L.inputs && { clean: L.inputs.cleanText, corrupted: L.inputs.corruptText, position: L.inputs.pos, token: L.inputs.token, wrong: L.inputs.wrong },
    patching: { cells: L.analysis?.heads.patching.cells ?? [], clean_metric: L.analysis?.heads.patching.clean_metric ?? null,
      corrupted_metric: L.analysis?.heads.patching.corrupted_metric ?? null, attribution: L.analysis?.heads.attribution_patching.cells ?? [],
      residual: L.analysis?.residual.patching.cells ?? [] },
    lens: L.analysis?.lens ?? [], dla: L.analysis?.dla ?? null,
  };
}
