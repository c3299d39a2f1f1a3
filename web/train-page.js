// Training mode on the page (README "Training in the page"), one direction: the state's train*
// fields (state.js) → settings → the worker (training.js) → the run → views/train-*.js, drawn in
// an animation frame, at most 10 times a second while it trains (the heads 4 times). A run that stops (paused, done) or starts is handed to the
// playground through the page's trained-weights path (weights.js, page.js recompute), so typing a
// sequence of the task's symbols shows what its heads do. main.js calls buildTraining once.

import { showWeightsStatus } from './controls.js';
import { download } from './export.js';
import { t } from './i18n.js';
import { recompute, renderControls, setState } from './page.js';
import { TRAIN_MODEL_FIELDS, TRAIN_OVERRIDES, schema, trainSettings } from './state.js';
import { chartData, headsData, plottedPatterns, sampleData, sampleTokens, scoreSeries, shownSnapshot, statsData } from './train-data.js';
import { resolveConfig } from './train/engine.js';
import { TASKS, TASK_IDS } from './train/tasks.js';
import { createTraining } from './training.js';
import { createTrainChart } from './views/train-chart.js';
import { createTrainControls } from './views/train-controls.js';
import { createTrainHeads } from './views/train-heads.js';
import { createTrainSample } from './views/train-sample.js';
import { createTrainScrubber } from './views/train-scrubber.js';

const $ = (id) => document.getElementById(id);
// While a run trains, news arrives 20-100 times a second; a reader needs far fewer redraws, and
// every redraw is style, layout and raster work the main thread (and, in software, the CPU the
// worker needs) pays for.
const DRAW_EVERY_MS = 100;    // the numbers, the chart and the scrubber
const HEADS_EVERY_MS = 250;   // the heads' maps and scores, and the sample
// A reader typing or scrolling has the main thread first: training redraws wait until the input
// has been quiet this long (a keystroke's recompute then never queues behind a chart), and the
// worker rests between its chunks meanwhile (training.js yieldFor), leaving the CPU to the page.
const INPUT_QUIET_MS = 250;

// The settings' displayed values: the state's, else (0 or '') the task's own (engine.js resolveConfig).
function shownValues(state) {
  const c = resolveConfig(trainSettings(state));
  const gpt = c.module === 'GPT';
  return { train: state.train, trainseed: c.seed, trainwidth: gpt ? c.model.n_embd : c.model.emb_dim, trainheads: gpt ? c.model.n_head : c.model.num_heads,
    trainlayers: gpt ? c.model.n_layer : c.model.num_layers, trainffn: gpt ? 4 * c.model.n_embd : c.model.ffn_dim,
    trainmodel: state.trainmodel, trainrope: state.trainrope, trainkvheads: state.trainkvheads, trainwindow: state.trainwindow, trainopt: c.optimizer.optimizer, trainlr: c.optimizer.lr, trainbatch: c.batch, trainsteps: c.steps };
}

// A setting typed in the panel: the state keeps 0 / '' for "the task's default" (short links);
// a new task starts from its own defaults. Returns the patch, or throws a message for the field.
function settingPatch(state, key, raw) {
  if (key === 'train') return { train: raw, ...Object.fromEntries(TRAIN_OVERRIDES.map((k) => [k, schema[k].default])) };
  const defaults = shownValues({ ...state, ...Object.fromEntries(TRAIN_OVERRIDES.map((k) => [k, schema[k].default])) });
  if (key === 'trainopt') return { trainopt: raw === defaults.trainopt ? '' : raw };
  if (key === 'trainmodel') return { trainmodel: raw === 'GPT' ? 'GPT' : '' };
  if (key === 'trainrope') return { trainrope: !!raw };
  const field = schema[key];
  const min = TRAIN_MODEL_FIELDS.includes(key) || key === 'trainseed' ? 0 : key === 'trainlr' ? Number.MIN_VALUE : 1;
  const v = raw.trim() === '' ? NaN : Number(raw);
  if (!(Number.isFinite(v) && v >= min && v <= field.max && (field.type !== 'int' || Number.isInteger(v)))) {
    throw new Error(t(field.type === 'int' ? 'training.rangeInt' : 'training.rangeNumber', { min: key === 'trainlr' ? 0 : min, max: field.max }));
  }
  return { [key]: key !== 'trainseed' && !TRAIN_MODEL_FIELDS.includes(key) && v === defaults[key] ? 0 : v };
}

function editSetting(page, key, raw) {
  page.train.views.controls.clearErrors();
  try {
    setState(page, settingPatch(page.state, key, raw));
  } catch (e) {
    page.train.views.controls.showError(key, e.message);
    return;
  }
  syncTraining(page);
}

// Opening or closing training mode (the header's button, the panel's Close).
export function setTrainTask(page, task) {
  setState(page, settingPatch(page.state, 'train', task));
  syncTraining(page);
}

// The state's training fields into the page: the section shown or hidden, a new run when the
// settings changed, the link.
export function syncTraining(page) {
  const tr = page.train;
  const on = !!page.state.train;
  $('training').hidden = !on;
  document.body.classList.toggle('training-mode', on);
  page.link.soon();
  if (!on) {
    tr.controller.stop();
    tr.settingsKey = '';
    return;
  }
  const settings = trainSettings(page.state);
  const key = JSON.stringify(settings);
  if (key !== tr.settingsKey) {
    tr.settingsKey = key;
    tr.at = null;
    tr.controller.configure(settings);
  }
  scheduleDraw(page);
}

// The run's model into the playground: its weights and the task's vocabulary through the weights
// path, the module and its config set, the task's sample typed unless the text already is a
// sequence of the task's symbols. The link keeps the training settings, not the file's name.
async function toPlayground(page) {
  const { controller } = page.train;
  let exported;
  try { exported = await controller.export(); } catch { return; }
  const task = controller.run.task;
  if (!page.state.train || !task || exported.run.config.task !== task.id) return;
  const name = `${task.id}-step${exported.run.steps}.safetensors`;
  const weights = { name, bytes: exported.safetensors, tensors: page.core.weightsListing(exported.safetensors),
    vocab: [...task.vocab], vocabName: t('training.vocabName', { task: t(task.nameKey) }), fromTraining: true };
  const { state } = page;
  const chars = Array.from(state.text);
  const module = exported.run.config.module ?? 'CausalTransformer';
  const keepText = state.module === module && chars.length > 0 && chars.length <= task.length && chars.every((c) => task.vocab.includes(c));
  setState(page, { module, tokenizer: 'char', weights: '', source: 'embedding',
    config: { ...state.config, [module]: { ...exported.run.config.model } },
    ...(keepText ? {} : { text: sampleTokens(task).join(''), step: '' }) });
  page.weights = weights;
  page.weightsError = null;
  page.weightsPicker.adopt(weights);
  showWeightsStatus(weights);
  renderControls(page);
  recompute(page);
}

async function exportFile(page, what) {
  const { controller } = page.train;
  const exported = await controller.export();
  const id = exported.run.config.task;
  if (what === 'weights') download(`${id}-step${exported.run.steps}.safetensors`, exported.safetensors, 'application/octet-stream');
  else download(`${id}-run.json`, `${JSON.stringify(exported.run, null, 1)}\n`, 'application/json');
}

function command(page, name) {
  const { controller } = page.train;
  const actions = {
    train: () => controller.train(),
    pause: () => controller.pause(),
    step: () => controller.stepOnce(),
    reset: () => { page.train.at = null; controller.configure(trainSettings(page.state)); },
    exportWeights: () => exportFile(page, 'weights'),
    exportRun: () => exportFile(page, 'run'),
    playground: () => toPlayground(page),
  };
  Promise.resolve(actions[name]?.()).catch(() => {});
  scheduleDraw(page, true);
}

// The worker's news: a run that starts or stops goes to the playground (and a stop's own step to
// the heads); a refused setting is shown beside its field; then a redraw.
function onRunUpdate(page, kind, run) {
  const stopped = kind === 'stopped' && (run.status === 'paused' || run.status === 'done');
  if (stopped) page.train.controller.snapshot();   // the heads at the very step it stopped at
  if (kind === 'ready' || stopped) toPlayground(page);
  if (kind === 'ready' || kind === 'error') {
    const { controls } = page.train.views;
    controls.clearErrors();
    if (run.invalid) controls.showError(fieldOf(run.invalid.field), run.invalid.message);
  }
  scheduleDraw(page);
}

// The engine's error fields (engine.js: task, seed, batch, model.emb_dim, optimizer.lr, ...) as
// the panel's controls.
const FIELD_KEYS = { task: 'train', seed: 'trainseed', batch: 'trainbatch', steps: 'trainsteps', 'model.emb_dim': 'trainwidth',
  'model.num_heads': 'trainheads', 'model.num_layers': 'trainlayers', 'model.ffn_dim': 'trainffn', 'optimizer.optimizer': 'trainopt', 'optimizer.lr': 'trainlr',
  module: 'trainmodel', 'model.n_embd': 'trainwidth', 'model.n_head': 'trainheads', 'model.n_layer': 'trainlayers', 'model.rope': 'trainrope',
  'model.num_kv_heads': 'trainkvheads', 'model.window': 'trainwindow' };
const fieldOf = (field) => FIELD_KEYS[field] ?? 'train';

// A redraw in the next animation frame; while the run trains, no sooner than DRAW_EVERY_MS after
// the last one nor INPUT_QUIET_MS after the last keystroke or scroll, unless `urgent` (a reader's
// own action on the panel: a click, the scrubber).
export function scheduleDraw(page, urgent = false) {
  const tr = page.train;
  if (tr.frame) return;
  const now = performance.now();
  const wait = tr.controller.run.running && !urgent ? Math.max(tr.drawnAt + DRAW_EVERY_MS, tr.inputAt + INPUT_QUIET_MS) - now : 0;
  if (wait > 0) {
    tr.timer ||= setTimeout(() => { tr.timer = 0; scheduleDraw(page); }, wait);
    return;
  }
  tr.urgent ||= urgent;
  tr.frame = requestAnimationFrame(() => { tr.frame = 0; tr.drawnAt = performance.now(); drawTraining(page); tr.urgent = false; });
}

// The status line (a polite live region): it changes when the run does, not on every step.
function statusText(run) {
  const acc = run.accuracies.at(-1)?.heldoutAccuracy;
  if (run.invalid) return t('training.statusInvalid');
  if (run.error) return t('training.statusError', { message: run.error.message });
  const keys = { loading: 'training.statusLoading', ready: 'training.statusReady', running: 'training.statusRunning',
    paused: 'training.statusPaused', done: 'training.statusDone', failed: 'training.statusLoading' };
  return t(keys[run.status] ?? 'training.statusLoading', { step: run.step, steps: run.config?.steps ?? 0, accuracy: acc === undefined ? '—' : acc.toFixed(3) });
}

function controlsData(page, run) {
  const s = statsData(run);
  const task = TASKS[page.state.train];
  const has = !!run.task && run.status !== 'failed';
  const idle = has && !run.running && !run.invalid && !run.error?.field;
  const num = (v, d) => (v === null || !Number.isFinite(v) ? '—' : v.toFixed(d));
  return {
    values: shownValues(page.state), explainKey: task?.explainKey, patternKey: task?.patternKey, running: run.running,
    // Train stays enabled (pressed) while it runs: a second press changes nothing.
    enabled: { train: (idle || run.running) && run.step < s.steps, pause: run.running, step: idle, reset: has, exportWeights: has, exportRun: has, playground: has },
    stats: { step: `${s.step} / ${s.steps}`, loss: num(s.loss, 4), heldout: num(s.heldout, 3), batch: num(s.trainAccuracy, 3), speed: run.step ? num(s.stepsPerSecond, 0) : '—' },
    raw: { loss: s.loss, heldout: s.heldout }, status: statusText(run),
  };
}

// The heads and the sample at the shown step (at most every HEADS_EVERY_MS while running).
function drawHeads(page, run, snapshot, now) {
  const tr = page.train;
  const key = `${snapshot?.step}|${run.snapshots.length}|${document.documentElement.lang}`;
  if (key === tr.headsKey) return;
  if (run.running && !tr.urgent && now - tr.headsAt < HEADS_EVERY_MS) { scheduleDraw(page); return; }
  tr.headsKey = key;
  tr.headsAt = now;
  const patterns = plottedPatterns(run.task);
  tr.views.heads.update({ heads: headsData(snapshot), series: scoreSeries(run, patterns), patterns, tokens: sampleTokens(run.task),
    step: snapshot.step, maxStep: Math.max(run.config.steps, run.step), offset: run.task.pattern.offset });
  tr.views.sample.update(sampleData(snapshot, run.task));
}

export function drawTraining(page) {
  const tr = page.train;
  const { run } = tr.controller;
  if (!page.state.train) return;
  const controls = controlsData(page, run);
  tr.views.controls.update(controls);
  if (!run.task) return;
  const snapshot = shownSnapshot(run, tr.at);
  const { stats } = controls;
  tr.views.chart.update(chartData(run, tr.at === null ? null : snapshot.step), t('training.chartSummary', { step: run.step, loss: stats.loss, accuracy: stats.heldout }));
  tr.views.scrubber.update({ count: run.snapshots.length, at: tr.at, step: snapshot.step });
  drawHeads(page, run, snapshot, performance.now());
}

// A language switch: the task names, then everything drawn from data.
export function relabelTraining(page) {
  page.train.views.controls.fillTasks(TASK_IDS.map((id) => TASKS[id]));
  page.train.headsKey = '';
  drawTraining(page);
}

// page.train: {controller (training.js), views, at (the scrubbed snapshot, null = live),
// settingsKey (the settings the worker has), frame / timer / drawnAt / inputAt / urgent
// (scheduleDraw), headsKey / headsAt (the heads' last draw)}.
export function buildTraining(page) {
  const tr = { at: null, settingsKey: '', frame: 0, timer: 0, drawnAt: 0, inputAt: -Infinity, urgent: false, headsKey: '', headsAt: 0 };
  page.train = tr;
  const onInput = () => { tr.inputAt = performance.now(); tr.controller?.yieldFor(2 * INPUT_QUIET_MS); };
  for (const type of ['keydown', 'wheel', 'touchmove']) document.addEventListener(type, onInput, { capture: true, passive: true });
  tr.views = {
    controls: createTrainControls($('train-controls'), { onField: (key, raw) => editSetting(page, key, raw), onCommand: (name) => command(page, name) }),
    chart: createTrainChart($('train-chart')),
    scrubber: createTrainScrubber($('train-scrubber-holder'), { onScrub: (at) => { tr.at = at; scheduleDraw(page, true); } }),
    heads: createTrainHeads($('train-heads')),
    sample: createTrainSample($('train-sample')),
  };
  tr.views.controls.fillTasks(TASK_IDS.map((id) => TASKS[id]));
  tr.controller = createTraining({ onUpdate: (kind, run) => onRunUpdate(page, kind, run) });
  $('train-mode').addEventListener('click', () => setTrainTask(page, page.state.train || 'induction'));
  $('train-close').addEventListener('click', () => setTrainTask(page, ''));
  syncTraining(page);
}
