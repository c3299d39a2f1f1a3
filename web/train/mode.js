// Training mode (docs/training.md), one direction: the state's train* fields
// (fields.js) -> settings -> the worker (training.js, worker.js) -> the run -> views/train-*.js,
// drawn through the page's scheduler at most 10 times a second while it trains (the heads 4 times).
// A run that stops (paused, done) or starts is handed to the playground through the one weights
// setter (app/weights.js) with its module, config and a sentence of the task's symbols, so the
// playground shows what its heads do. app/modes.js starts it when the state names a task.
import { controlFor } from '../app/errors.js';
import { fieldMessage, fieldProblem } from '../app/state.js';
import { setWeights } from '../app/weights.js';
import { addLocale, t, translatePage } from '../i18n.js';
import { trainEn } from '../locales/train.en.js';
import { download } from '../views/download.js';
import { fillSection } from '../views/train-section.js';
import { createTrainChart } from '../views/train-chart.js';
import { createTrainControls } from '../views/train-controls.js';
import { createTrainHeads } from '../views/train-heads.js';
import { createTrainSample } from '../views/train-sample.js';
import { createTrainScrubber } from '../views/train-scrubber.js';
import { chartData, headsData, headsSummary, plottedPatterns, sampleData, sampleTokens, scoreSeries, shownSnapshot, statsData, trainingSummary } from './data.js';
import { resolveConfig } from './engine.js';
import { TRAIN_MODEL_FIELDS, TRAIN_OVERRIDES, fields, trainSettings } from './fields.js';
import { TASKS, TASK_IDS } from './tasks.js';
import { createTraining } from './training.js';

const locale = addLocale({ en: trainEn, zh: () => import('../locales/train.zh.js').then((m) => m.trainZh) });
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
// a new task starts from its own defaults. Returns the patch, or throws a message for the field
// (the one validator, app/state.js).
function settingPatch(state, key, raw) {
  if (key === 'train') return { train: raw, ...Object.fromEntries(TRAIN_OVERRIDES.map((k) => [k, fields[k].default])) };
  const defaults = shownValues({ ...state, ...Object.fromEntries(TRAIN_OVERRIDES.map((k) => [k, fields[k].default])) });
  if (key === 'trainopt') return { trainopt: raw === defaults.trainopt ? '' : raw };
  if (key === 'trainmodel') return { trainmodel: raw === 'GPT' ? 'GPT' : '' };
  if (key === 'trainrope') return { trainrope: !!raw };
  const v = raw.trim() === '' ? NaN : Number(raw);
  const problem = fieldProblem(key, v, { typed: true });
  if (problem) throw new Error(fieldMessage(key, problem));
  return { [key]: key !== 'trainseed' && !TRAIN_MODEL_FIELDS.includes(key) && v === defaults[key] ? 0 : v };
}

function editSetting(tr, key, raw) {
  tr.views.controls.clearErrors();
  try {
    tr.page.set(settingPatch(tr.page.state, key, raw), { from: 'train' });
  } catch (e) {
    tr.views.controls.showError(key, e.message);
    return;
  }
  syncTraining(tr);
}

// The state's training fields into the run: a new run when the settings changed.
function syncTraining(tr) {
  const settings = trainSettings(tr.page.state);
  const key = JSON.stringify(settings);
  if (key !== tr.settingsKey) {
    tr.settingsKey = key;
    tr.at = null;
    tr.controller.configure(settings);
  }
  scheduleDraw(tr);
}

// The run's model into the playground, through the one weights setter: its weights and the task's
// vocabulary, the module and its config, the task's sample typed unless the text already is a
// sequence of the task's symbols. The link keeps the training settings, not the file's name.
async function toPlayground(tr) {
  const { controller, page } = tr;
  let exported;
  try { exported = await controller.export(); } catch { return; }
  const task = controller.run.task;
  if (!page.state.train || !task || exported.run.config.task !== task.id) return;
  const module = exported.run.config.module ?? 'CausalTransformer';
  const weights = { name: `${task.id}-step${exported.run.steps}.safetensors`, bytes: exported.safetensors, tensors: page.core.weightsListing(exported.safetensors),
    vocab: [...task.vocab], vocabName: t('training.vocabName', { task: t(task.nameKey) }), fromTraining: true, module };
  const { state } = page;
  const chars = Array.from(state.text);
  const keepText = state.module === module && chars.length > 0 && chars.length <= task.length && chars.every((c) => task.vocab.includes(c));
  setWeights(page, weights, null, { from: 'train', patch: { module, tokenizer: 'char', source: 'embedding',
    config: { ...state.config, [module]: { ...exported.run.config.model } }, ...(keepText ? {} : { text: sampleTokens(task).join(''), step: '' }) } });
}

async function exportFile(tr, what) {
  const exported = await tr.controller.export();
  const id = exported.run.config.task;
  if (what === 'weights') download(`${id}-step${exported.run.steps}.safetensors`, exported.safetensors, 'application/octet-stream');
  else download(`${id}-run.json`, `${JSON.stringify(exported.run, null, 1)}\n`, 'application/json');
}

function command(tr, name) {
  const { controller } = tr;
  const actions = {
    train: () => controller.train(),
    pause: () => controller.pause(),
    step: () => controller.stepOnce(),
    reset: () => { tr.at = null; controller.configure(trainSettings(tr.page.state)); },
    exportWeights: () => exportFile(tr, 'weights'),
    exportRun: () => exportFile(tr, 'run'),
    playground: () => toPlayground(tr),
    // the run's model into the experiments lab (it reads training's weights: app/weights.js)
    experiment: () => toPlayground(tr).then(() => { if (tr.page.weights?.fromTraining) tr.page.set({ experiment: tr.page.state.train, expsource: 'trained' }); }),
  };
  Promise.resolve(actions[name]?.()).catch(() => {});
  scheduleDraw(tr, true);
}

// The worker's news: a run that starts or stops goes to the playground (and a stop's own step to
// the heads); a refused setting is shown beside its field; then a redraw.
function onRunUpdate(tr, kind, run) {
  const stopped = kind === 'stopped' && (run.status === 'paused' || run.status === 'done');
  if (stopped) tr.controller.snapshot();   // the heads at the very step it stopped at
  if (kind === 'ready' || stopped) toPlayground(tr);
  if (kind === 'ready' || kind === 'error') {
    const { controls } = tr.views;
    controls.clearErrors();
    if (run.invalid) controls.showError(controlFor('train', run.invalid.field), run.invalid.message);
  }
  scheduleDraw(tr);
}

// A redraw through the page's scheduler: while the run trains, no sooner than DRAW_EVERY_MS after
// the last one nor INPUT_QUIET_MS after the last keystroke or scroll, unless `urgent` (a reader's
// own action on the panel: a click, the scrubber).
function scheduleDraw(tr, urgent = false) {
  tr.urgent ||= urgent;
  const busy = tr.controller.run.running;
  tr.page.scheduler.soon('train', () => { drawTraining(tr); tr.urgent = false; },
    { every: busy ? DRAW_EVERY_MS : 0, quiet: busy ? INPUT_QUIET_MS : 0, urgent });
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

function controlsData(tr, run) {
  const s = statsData(run);
  const task = TASKS[tr.page.state.train];
  const has = !!run.task && run.status !== 'failed';
  const idle = has && !run.running && !run.invalid && !run.error?.field;
  const num = (v, d) => (v === null || !Number.isFinite(v) ? '—' : v.toFixed(d));
  return {
    values: shownValues(tr.page.state), explainKey: task?.explainKey, patternKey: task?.patternKey, running: run.running,
    // Train stays enabled (pressed) while it runs: a second press changes nothing.
    enabled: { train: (idle || run.running) && run.step < s.steps, pause: run.running, step: idle, reset: has, exportWeights: has, exportRun: has, playground: has, experiment: has },
    stats: { step: `${s.step} / ${s.steps}`, loss: num(s.loss, 4), heldout: num(s.heldout, 3), batch: num(s.trainAccuracy, 3), speed: run.step ? num(s.stepsPerSecond, 0) : '—' },
    raw: { loss: s.loss, heldout: s.heldout }, status: statusText(run),
  };
}

// The heads and the sample at the shown step (at most every HEADS_EVERY_MS while running).
function drawHeads(tr, run, snapshot, now) {
  const key = `${snapshot?.step}|${run.snapshots.length}|${document.documentElement.lang}`;
  if (key === tr.headsKey) return;
  if (run.running && !tr.urgent && now - tr.headsAt < HEADS_EVERY_MS) { scheduleDraw(tr); return; }
  tr.headsKey = key;
  tr.headsAt = now;
  const patterns = plottedPatterns(run.task);
  tr.views.heads.update({ heads: headsData(snapshot), series: scoreSeries(run, patterns), patterns, tokens: sampleTokens(run.task),
    step: snapshot.step, maxStep: Math.max(run.config.steps, run.step), offset: run.task.pattern.offset });
  tr.views.sample.update(sampleData(snapshot, run.task));
}

function drawTraining(tr) {
  const { run } = tr.controller;
  if (!tr.open) return;
  const controls = controlsData(tr, run);
  tr.views.controls.update(controls);
  if (!run.task) return;
  const snapshot = shownSnapshot(run, tr.at);
  const { stats } = controls;
  tr.views.chart.update(chartData(run, tr.at === null ? null : snapshot.step), t('training.chartSummary', { step: run.step, loss: stats.loss, accuracy: stats.heldout }));
  tr.views.scrubber.update({ count: run.snapshots.length, at: tr.at, step: snapshot.step });
  drawHeads(tr, run, snapshot, performance.now());
}

function show(on) {
  $('training').hidden = !on;
  document.body.classList.toggle('training-mode', on);
}

// tr: {page, controller (training.js), views, at (the scrubbed snapshot, null = live), settingsKey
// (the settings the worker has), urgent, headsKey / headsAt (the heads' last draw), open}. Built
// once per page (views and their listeners); the mode opens and closes on it.
function build(page) {
  fillSection($('training'));
  const tr = { page, at: null, settingsKey: '', urgent: false, headsKey: '', headsAt: 0, open: false };
  page.scheduler.onInput(() => { if (tr.open) tr.controller.yieldFor(2 * INPUT_QUIET_MS); });
  tr.views = {
    controls: createTrainControls($('train-controls'), { onField: (key, raw) => editSetting(tr, key, raw), onCommand: (name) => command(tr, name) }),
    chart: createTrainChart($('train-chart')),
    scrubber: createTrainScrubber($('train-scrubber-holder'), { onScrub: (at) => { tr.at = at; scheduleDraw(tr, true); } }),
    heads: createTrainHeads($('train-heads')),
    sample: createTrainSample($('train-sample')),
  };
  tr.controller = createTraining({ onUpdate: (kind, run) => onRunUpdate(tr, kind, run) });
  $('train-close').addEventListener('click', () => page.set({ train: '' }));
  return tr;
}

let made = null;

export function start(page) {
  made ??= build(page);
  const tr = made;
  tr.open = true;
  tr.settingsKey = '';
  locale.then(() => {
    if (!tr.open) return;
    translatePage($('training'));
    tr.views.controls.fillTasks(TASK_IDS.map((id) => TASKS[id]));
    show(true);
    syncTraining(tr);
  });
  return {
    sync: (state, prev) => { if (Object.keys(fields).some((k) => state[k] !== prev[k])) syncTraining(tr); },
    relabel: () => { tr.views.controls.fillTasks(TASK_IDS.map((id) => TASKS[id])); tr.headsKey = ''; scheduleDraw(tr, true); },
    stop: () => {
      tr.open = false;
      tr.controller.stop();
      page.scheduler.cancel('train');
      show(false);
    },
    summary: () => ({
      training: () => trainingSummary(tr.controller.run, page.state.train),
      heads: () => headsSummary(tr.controller.run),
      accuracies: () => tr.controller.run.accuracies,
    }),
  };
}
