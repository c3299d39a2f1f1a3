// "Open a model" (docs/pretrained.md): a Hugging Face model folder from an https address, picked
// files or a dropped folder (loader.js: checked by the core from config.json, the index and each
// weight file's header before the weights are read; progress and cancel) -> the mode's worker
// (worker.js: the full core builds the checkpoint once) -> the sentence's tokens as the folder's
// tokenizer cuts them, every layer x head's attention as a tile, one head open large, the next
// token and a greedy continuation. A failed or cancelled open leaves the model that was open.
import { scaleFor } from '../colors.js';
import { addLocale, t, translatePage } from '../i18n.js';
import { modelEn } from '../locales/model.en.js';
import { createHeatmap } from '../views/heatmap.js';
import { createLabGrid, fillTerms } from '../views/lab-views.js';
import { createModelGrid, fillLens, probText, tokenProb } from '../views/model-views.js';
import { fillSection } from '../views/model-section.js';
import { createChips } from '../views/tokens.js';
import { droppedFiles } from './loader.js';

const locale = addLocale({ en: modelEn, zh: () => import('../locales/model.zh.js').then((m) => m.modelZh) });
const $ = (id) => document.getElementById(id);
// The float32 weights the page opens: the full build's heap grows to 2 GiB; the weights stream into
// the module (about their float32 size in the heap), and the model open before stays until the new
// one is built: two models of this size fit beside the activations of a sentence.
export const PAGE_MAX_BYTES = 640 << 20;
export const DEFAULT_SENTENCE = "The animal didn't cross the street because it was too tired";
// The default sentence's corruption for patching: the two nouns swapped (one token each in GPT-2's
// and Llama's vocabularies), so "it" has the other antecedent.
export const DEFAULT_CORRUPT = "The street didn't cross the animal because it was too tired";
const GENERATE = 16;
const MB = (n) => (n >= 1e6 ? (n / 1e6).toFixed(1) : (n / 1e6).toFixed(2));

// --- the worker ---

// A request the worker has not answered for BUSY_MS lets the student press Cancel; a worker that
// does not answer the cancel within STUCK_MS is busy in one long step it cannot leave (a hostile
// tokenizer.json's regular expression that backtracks for ever: cancel is a message it would read
// only after) and is replaced by a new one, the model it held going with it.
const BUSY_MS = 1000, STUCK_MS = 2000;

// The mode's worker: started at the first request, and again at the first after one was replaced.
function worker(M) {
  if (M.worker) return M.worker;
  const w = (M.worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }));
  w.onmessage = (e) => onAnswer(M, e.data);
  // a worker whose script or imports did not load (offline, refused) answers nothing: its requests
  // fail with that, and the next request starts another
  w.onerror = (e) => {
    e.preventDefault?.();
    replaceWorker(M, Object.assign(new Error(t('hub.workerFailed', { why: e.message || t('hub.workerNoScript') })), { name: 'WorkerStopped' }));
  };
  return w;
}

function ask(M, msg, { onProgress = null } = {}) {
  const id = ++M.ids;
  return new Promise((resolve, reject) => {
    M.pending.set(id, { resolve, reject, onProgress });
    worker(M).postMessage({ ...msg, id });
    M.busy ??= setTimeout(() => { M.slow = true; drawProgress(M); }, BUSY_MS);
  });
}

function onAnswer(M, m) {
  if (m.type === 'cancelled') { clearTimeout(M.stuck); M.stuck = null; return; }
  const p = M.pending.get(m.id);
  if (!p) return;
  if (m.type === 'progress') { p.onProgress?.(m); return; }
  M.pending.delete(m.id);
  if (M.pending.size === 0) idle(M);
  if (m.type === 'error') p.reject(Object.assign(new Error(m.message), { field: m.field, name: m.name ?? 'Error' }));
  else p.resolve(m);
}

// A request's error, or null where the request was stopped with its worker (replaceWorker says so once).
const failure = (e) => (e?.name === 'WorkerStopped' ? null : e);

function idle(M) {
  clearTimeout(M.busy);
  M.busy = null;
  M.slow = false;
}

// Cancel: the open under way stops (the model open before stays); a worker that does not answer is replaced.
function cancel(M) {
  if (!M.worker || (!M.opening && !M.slow)) return;
  M.worker.postMessage({ type: 'cancel' });
  M.stuck ??= setTimeout(() => replaceWorker(M), STUCK_MS);
}

function replaceWorker(M, stopped = Object.assign(new Error(t('hub.stopped', { s: STUCK_MS / 1000 })), { name: 'WorkerStopped' })) {
  clearTimeout(M.stuck);
  M.stuck = null;
  M.worker?.terminate();
  M.worker = null;
  const waiting = [...M.pending.values()];
  M.pending.clear();
  idle(M);
  Object.assign(M, { info: null, result: null, generated: null, lens: null, patched: null, status: '' });
  for (const p of waiting) p.reject(stopped);
  M.error = stopped;
  M.page.set({ pretrained: '' }, { from: 'model' });
  draw(M);
}

// --- opening a folder ---

// One open at a time: a new one cancels the one under way. source: {url} or {files: [{file, path}]}.
async function open(M, source) {
  if (M.opening) cancel(M);
  const mine = (M.opening = {});
  M.error = null;
  M.status = '';
  M.progress = { phase: 'start' };
  draw(M);
  const onProgress = (p) => { if (M.opening === mine) { M.progress = p; drawProgress(M); } };
  try {
    const msg = source.url ? { url: source.url, base: document.baseURI } : { files: source.files };
    const { info } = await ask(M, { type: 'open', source: msg, maxBytes: PAGE_MAX_BYTES }, { onProgress });
    M.info = { ...info, url: source.url ?? '' };
    M.status = t('hub.loaded', { label: info.label, ms: info.ms.toFixed(0) });
    M.generated = null;
    M.result = null;
    M.page.set({ models: true, pretrained: source.url ?? '', pthead: '' }, { from: 'model' });
    await run(M);
  } catch (e) {
    if (e.name === 'AbortError') M.status = t('hub.cancelled');
    else M.error = failure(e) ?? M.error;
  } finally {
    if (M.opening === mine) { M.opening = null; M.progress = null; }
    draw(M);
  }
}

// The sentence through the open model (the latest text wins; runs one at a time).
function refreshRun(M) {
  M.chain = M.chain.then(() => run(M)).catch((e) => { M.error = e; }).then(() => draw(M));
}

// The sentence a model opens with: the page's default, or (a folder without a tokenizer) ids 0 to 7.
const defaultSentence = (M) => (M.info?.tokenizer ? DEFAULT_SENTENCE : Array.from({ length: Math.min(8, M.info?.vocab ?? 8) }, (_, i) => i).join(' '));
const sentence = (M) => M.page.state.pttext || defaultSentence(M);
// The corrupted sentence: typed, or the default sentence's (ids: the first two swapped), or none.
function defaultCorrupt(M) {
  if (M.page.state.pttext) return '';
  if (M.info?.tokenizer) return DEFAULT_CORRUPT;
  const ids = defaultSentence(M).split(' ');
  return ids.length > 1 ? [ids[1], ids[0], ...ids.slice(2)].join(' ') : '';
}
const corrupted = (M) => M.page.state.ptcorrupt || defaultCorrupt(M);

// The state's switched-off heads as [[layer, head]], each a head of the open model, or an Error.
function ablated(M) {
  const { layers, heads } = M.info;
  return (M.page.state.ptablate || '').split(',').filter(Boolean).map((item) => {
    const [l, h] = item.split('.').map(Number);
    if (!(Number.isInteger(l) && Number.isInteger(h) && l >= 0 && l < layers && h >= 0 && h < heads && /^\d+\.\d+$/.test(item)))
      throw Object.assign(new Error(t('hub.badHead', { item, layer: layers - 1, head: heads - 1 })), { field: 'ptablate' });
    return [l, h];
  });
}

// What a result was computed for: the model, the sentence, the heads switched off.
const runKey = (M) => `${M.info.label}|${sentence(M)}|${M.page.state.ptablate}`;

async function run(M) {
  if (!M.info) return;
  const text = sentence(M);
  const key = runKey(M);
  if (M.result?.key === key) return;
  M.runError = null;
  try {
    const ablate = ablated(M);
    const r = await ask(M, { type: 'run', text, ablate });
    M.result = { ...r, text, key, ablate };
  } catch (e) {
    M.runError = failure(e);
  }
}

async function generate(M) {
  if (!M.info) return;
  M.els.generate.disabled = true;
  try {
    const key = runKey(M);
    M.generated = { ...(await ask(M, { type: 'generate', text: sentence(M), n: GENERATE, ablate: ablated(M) })), key };
  } catch (e) {
    M.runError = failure(e);
  }
  M.els.generate.disabled = false;
  draw(M);
}

// The logit lens at the sentence's last token (kept with the sentence it read).
async function readLens(M) {
  if (!M.info) return;
  M.els.lens.disabled = true;
  try {
    const key = runKey(M);
    M.lens = { ...(await ask(M, { type: 'lens', text: sentence(M), ablate: ablated(M) })), key };
  } catch (e) {
    M.runError = failure(e);
  }
  M.els.lens.disabled = false;
  draw(M);
}

// The lens read for the model, sentence and heads switched off as they are now, or null.
const freshLens = (M) => (M.info && M.lens?.key === runKey(M) ? M.lens : null);
// The continuation, while it is of the sentence as it is (heads switched off the same).
const freshGenerated = (M) => (M.info && M.generated?.key === runKey(M) ? M.generated : null);

// Every head patched from the sentence into the corrupted one (kept with what it compared).
const patchKey = (M) => `${runKey(M)}|${corrupted(M)}`;
async function patchHeads(M) {
  if (!M.info) return;
  M.patchError = null;
  M.patching = true;
  draw(M);
  try {
    const key = patchKey(M), corrupt = corrupted(M);
    if (!corrupt) throw Object.assign(new Error(t('hub.patchNeeds')), { field: 'ptcorrupt' });
    M.patched = { ...(await ask(M, { type: 'patch', text: sentence(M), corrupt, ablate: ablated(M) })), key };
  } catch (e) {
    M.patchError = failure(e);
  }
  M.patching = false;
  draw(M);
}
const freshPatch = (M) => (M.info && M.patched?.key === patchKey(M) ? M.patched : null);

// --- drawing ---

function drawProgress(M) {
  const p = M.progress, box = M.els.progressBox;
  box.hidden = !p;
  M.els.cancel.disabled = !M.opening && !M.slow;
  if (!p) return;
  const bar = M.els.progress;
  if (p.phase === 'weights' && p.total) {
    bar.value = p.loaded / p.total;
    M.els.progressText.textContent = p.secondsLeft === null || !Number.isFinite(p.secondsLeft)
      ? t('hub.progressNoEta', { loaded: MB(p.loaded), total: MB(p.total) })
      : t('hub.progress', { loaded: MB(p.loaded), total: MB(p.total), speed: MB(p.bytesPerSecond), left: `${Math.ceil(p.secondsLeft)} s` });
    Object.assign(bar.dataset, { loaded: String(p.loaded), total: String(p.total) });
  } else {
    bar.removeAttribute('value');   // indeterminate
    M.els.progressText.textContent = p.phase === 'build' ? t('hub.building') : p.file ? t('hub.checking', { file: p.file }) : '';
  }
}

function drawCard(M) {
  const i = M.info, el = M.els.card;
  if (!i) { el.replaceChildren(); return; }
  const rows = [
    ['hub.card.model', `${i.label} (${i.model_type} → ${i.module})`],
    ['hub.card.shape', t('hub.card.shapeValue', { layers: i.layers, heads: i.heads, kv: i.kvHeads, width: i.config.n_embd ?? i.config.hidden_size, vocab: i.vocab.toLocaleString('en') })],
    ['hub.card.params', i.parameters.toLocaleString('en')],
    ['hub.card.memory', `${MB(i.f32_bytes)} MB`],
    ['hub.card.tokenizer', i.tokenizer ?? t('hub.card.noTokenizer')],
  ];
  fillTerms(el, rows.map(([key, text]) => [t(key), text]));
  Object.assign(el.dataset, { module: i.module, layers: String(i.layers), heads: String(i.heads) });
}

function drawHead(M) {
  const r = M.result;
  const [l, h] = (M.page.state.pthead || '').split('.').map(Number);
  const valid = r && Number.isInteger(l) && Number.isInteger(h) && l < r.layers && h < r.heads;
  M.els.headTitle.textContent = valid ? t('hub.headTitle', { layer: l, head: h }) : t('hub.headPick');
  M.els.head.hidden = !valid;
  if (!valid) return;
  const { T, H, maps, pieces } = { ...r, H: r.heads };
  const data = maps.subarray((l * H + h) * T * T, (l * H + h + 1) * T * T);
  const labels = pieces.map((p, i) => `${i} ${p}`);
  M.headView.update({ slice: { rows: T, cols: T, data }, scale: scaleFor(data, { probabilities: true }), width: Math.min(720, 120 + T * 28),
    rowLabels: labels, colLabels: labels, masked: (row, col) => col > row, weights: true, label: t('hub.headTitle', { layer: l, head: h }) });
  Object.assign(M.els.head.dataset, { layer: String(l), head: String(h) });
}

function drawPatch(M) {
  const p = freshPatch(M), els = M.els;
  const bad = M.patchError?.field === 'ptcorrupt';
  if (bad) els.corrupt.setAttribute('aria-invalid', 'true'); else els.corrupt.removeAttribute('aria-invalid');
  if (document.activeElement !== els.corrupt && M.info) els.corrupt.value = corrupted(M);
  els.patch.disabled = !M.info || M.patching;
  els.patchResult.hidden = !p;
  if (M.patching) {
    els.patchNote.classList.remove('error-text');
    els.patchNote.textContent = t('hub.patching', { cells: M.info.layers * M.info.heads });
    return;
  }
  if (!p) {
    els.patchNote.textContent = M.patchError ? M.patchError.message : '';
    els.patchNote.classList.toggle('error-text', !!M.patchError);
    els.dlaOthers.textContent = '';
    return;
  }
  els.patchNote.classList.remove('error-text');
  els.patchNote.textContent = t('hub.patchNote', { token: p.token.piece, prob: probText(p.token.prob), wrong: p.wrong.piece,
    clean: p.clean_metric.toFixed(3), corrupted: p.corrupted_metric.toFixed(3), cells: p.layers * p.heads, ms: p.ms.toFixed(0) });
  const rows = Array.from({ length: p.layers }, (_, l) => t('hub.layerN', { l }));
  const cols = Array.from({ length: p.heads }, (_, h) => t('hub.headN', { h }));
  M.views.patching.update({ name: 'patching_heads', rowLabels: rows, colLabels: cols, data: p.effect, label: t('hub.patchHeads') });
  M.views.attribution.update({ name: 'attribution_heads', rowLabels: rows, colLabels: cols, data: p.estimate, label: t('hub.attrHeads') });
  M.views.dla.update({ name: 'logit_attribution_heads', rowLabels: rows, colLabels: cols, data: p.dla, label: t('hub.dlaHeads') });
  els.dlaOthers.textContent = t('hub.dlaOthers', { total: p.dla_total.toFixed(3), list: p.others.map((c) => `${c.name} ${c.value.toFixed(3)}`).join(', ') });
}

function draw(M) {
  if (!M.open) return;
  const err = M.error ?? M.runError;
  M.els.error.hidden = !err;
  M.els.error.textContent = err ? err.message : '';
  if (M.runError) M.els.text.setAttribute('aria-invalid', 'true'); else M.els.text.removeAttribute('aria-invalid');
  M.els.status.textContent = M.status || (M.info ? '' : t('hub.none'));
  if (document.activeElement !== M.els.url && M.page.state.pretrained) M.els.url.value = M.page.state.pretrained;
  if (document.activeElement !== M.els.text && M.info) M.els.text.value = sentence(M);
  drawProgress(M);
  drawCard(M);
  const r = M.result;
  M.chips.update(r ? r.pieces : [], r ? r.ids : null);
  M.els.next.textContent = r ? t('hub.next', { list: r.next.map(tokenProb).join(', '), ms: r.ms.toFixed(0) }) : '';
  M.els.generate.disabled = !M.info;
  const g = freshGenerated(M);
  // fewer tokens than asked for: the sentence took most of the positions the model (or the page) has
  const short = g && g.ids.length < GENERATE ? ` ${t('hub.generatedShort', { n: g.ids.length, max: g.room })}` : '';
  M.els.generated.textContent = g ? `${t('hub.generated', { ms: g.ms.toFixed(0) })} ${g.text}${short}` : '';
  M.els.lens.disabled = !M.info;
  const lens = freshLens(M);
  fillLens(M.els.lensTable, lens?.readouts ?? null, lens ? t('hub.lensDone', { ms: lens.ms.toFixed(0) }) : '');
  M.grid.update(r && { layers: r.layers, heads: r.heads, T: r.T, maps: r.maps, open: M.page.state.pthead, off: new Set(r.ablate.map(([l, h]) => `${l}.${h}`)) });
  M.els.ablateMode.setAttribute('aria-pressed', String(M.ablateMode));
  drawHead(M);
  drawPatch(M);
}

// --- controls ---

function wire(M) {
  const { els } = M;
  $('model-close').addEventListener('click', () => M.page.set({ models: false, pretrained: '' }));
  els.urlOpen.addEventListener('click', () => open(M, { url: els.url.value }));
  els.url.addEventListener('keydown', (e) => { if (e.key === 'Enter') open(M, { url: els.url.value }); });
  els.cancel.addEventListener('click', () => cancel(M));
  for (const input of [els.files, els.folder]) {
    input.addEventListener('change', () => {
      if (input.files.length) open(M, { files: [...input.files].map((file) => ({ file, path: file.webkitRelativePath || file.name })) });
      input.value = '';
    });
  }
  els.drop.addEventListener('dragover', (e) => { e.preventDefault(); els.drop.classList.add('over'); });
  els.drop.addEventListener('dragleave', () => els.drop.classList.remove('over'));
  els.drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    els.drop.classList.remove('over');
    try {
      open(M, { files: await droppedFiles(e.dataTransfer) });
    } catch (err) {
      M.error = err;
      draw(M);
    }
  });
  els.text.addEventListener('input', () => {
    M.page.set({ pttext: els.text.value === defaultSentence(M) ? '' : els.text.value }, { from: 'model' });
    refreshRun(M);
  });
  els.generate.addEventListener('click', () => generate(M));
  els.corrupt.addEventListener('input', () => {
    M.page.set({ ptcorrupt: els.corrupt.value === defaultCorrupt(M) ? '' : els.corrupt.value }, { from: 'model' });
    M.patchError = null;
    draw(M);
  });
  els.patch.addEventListener('click', () => patchHeads(M));
  els.lens.addEventListener('click', () => readLens(M));
  els.ablateMode.addEventListener('click', () => { M.ablateMode = !M.ablateMode; draw(M); });
  els.ablateReset.addEventListener('click', () => { M.page.set({ ptablate: '' }, { from: 'model' }); refreshRun(M); });
}

// A tile pressed: its head opened large, or (switching heads off) switched off or on again.
function press(M, l, h) {
  if (!M.ablateMode) {
    M.page.set({ pthead: `${l}.${h}` }, { from: 'model' });
    draw(M);
    return;
  }
  const on = new Set((M.page.state.ptablate || '').split(',').filter(Boolean));
  const key = `${l}.${h}`;
  if (on.has(key)) on.delete(key); else on.add(key);
  M.page.set({ ptablate: [...on].sort().join(',') }, { from: 'model' });
  refreshRun(M);
}

function show(on) {
  $('models').hidden = !on;
  document.body.classList.toggle('model-mode', on);
}

function build(page) {
  fillSection($('models'));
  const ids = ['url', 'urlOpen:url-open', 'cancel', 'files', 'folder', 'drop', 'progressBox:progress-box', 'progress', 'progressText:progress-text',
    'status', 'error', 'card', 'text', 'tokens', 'next', 'generate', 'generated', 'lens', 'lensTable:lens-table', 'grid', 'head', 'headTitle:h-model-head',
    'ablateMode:ablate-mode', 'ablateReset:ablate-reset', 'corrupt', 'patch', 'patchNote:patch-note', 'patchResult:patch-result', 'dlaOthers:dla-others'];
  const els = Object.fromEntries(ids.map((s) => {
    const [key, id = key] = s.split(':');
    return [key, $(id.startsWith('h-') ? id : `model-${id}`)];
  }));
  const M = { page, els, open: false, worker: null, ids: 0, pending: new Map(), busy: null, slow: false, stuck: null, chain: Promise.resolve(), info: null,
    result: null, opening: null, progress: null, ablateMode: false, patching: false };
  M.chips = createChips(els.tokens);
  M.headView = createHeatmap({ className: 'attention' });
  M.grid = createModelGrid(els.grid, { onPress: (l, h) => press(M, l, h) });
  els.head.append(M.headView.element);
  const fig = (id) => document.querySelector(`[data-testid="${id}"]`);
  M.views = { patching: createLabGrid(fig('model-patching'), { cellKey: 'hub.cell' }), attribution: createLabGrid(fig('model-attribution'), { cellKey: 'hub.cell' }),
    dla: createLabGrid(fig('model-dla'), { cellKey: 'hub.cell' }) };
  wire(M);
  return M;
}

let made = null;

export function start(page) {
  made ??= build(page);
  const M = made;
  M.open = true;
  locale.then(() => {
    if (!M.open) return;
    translatePage($('models'));
    show(true);
    const url = page.state.pretrained;
    if (url && url !== M.info?.url && !M.opening) open(M, { url });
    else draw(M);
  });
  return {
    sync: (state, prev) => {
      if (state.pretrained && state.pretrained !== prev.pretrained && state.pretrained !== M.info?.url) open(M, { url: state.pretrained });
      else if (state.pttext !== prev.pttext || state.ptablate !== prev.ptablate) refreshRun(M);
      else draw(M);
    },
    relabel: () => draw(M),
    stop: () => { M.open = false; if (M.opening) cancel(M); show(false); },
    summary: () => ({ model: () => summary(M), map: (l, h) => headMap(M, l, h) }),
  };
}

// For app/hooks.js: window.playground.model(); null until a model is open.
function summary(M) {
  if (!M.info) return null;
  const r = M.result;
  return {
    label: M.info.label, url: M.info.url, model_type: M.info.model_type, module: M.info.module, layers: M.info.layers, heads: M.info.heads,
    parameters: M.info.parameters, f32_bytes: M.info.f32_bytes, tokenizer: M.info.tokenizer, buildMs: M.info.ms, threads: M.info.threads,
    text: r?.text ?? null, ids: r ? [...r.ids] : [], pieces: r ? [...r.pieces] : [], next: r ? r.next.map((x) => ({ ...x })) : [],
    generated: freshGenerated(M) ? { ids: [...M.generated.ids], text: M.generated.text } : null,
    lens: freshLens(M)?.readouts.map((e) => ({ ...e, top: e.top.map((x) => ({ ...x })) })) ?? null,
    patching: patchSummary(freshPatch(M)), corrupted: M.info ? corrupted(M) : null,
    ablated: r ? r.ablate.map(([l, h]) => [l, h]) : [], heapBytes: M.info.heapBytes, loading: !!M.opening, error: (M.error ?? M.runError)?.message ?? null,
  };
}

// Head (l, h)'s T x T map as drawn, row-major, or null.
function headMap(M, l, h) {
  const r = M.result;
  if (!r || !(l >= 0 && l < r.layers && h >= 0 && h < r.heads)) return null;
  return Array.from(r.maps.subarray((l * r.heads + h) * r.T * r.T, (l * r.heads + h + 1) * r.T * r.T));
}

// The patching drawn, as plain numbers: [layer][head] grids; null until one is read for the state as it is.
function patchSummary(p) {
  if (!p) return null;
  const grid = (data) => Array.from({ length: p.layers }, (_, l) => Array.from(data.subarray(l * p.heads, (l + 1) * p.heads)));
  return { ids: [...p.ids], corruptIds: [...p.corruptIds], token: { ...p.token }, wrong: { ...p.wrong }, clean_metric: p.clean_metric,
    corrupted_metric: p.corrupted_metric, effect: grid(p.effect), estimate: grid(p.estimate), dla: grid(p.dla), dla_total: p.dla_total,
    others: p.others.map((c) => ({ ...c })), ms: p.ms };
}
