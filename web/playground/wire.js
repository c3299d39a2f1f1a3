// The playground's inputs, wired to the state (page.set: app/page.js setState) and to its recompute
// (pg.mode: mode.js's operations, handed over by buildControls, so this file does not import mode.js):
// the config panel's fields and arguments, the presets, trained weights, the backend choice, the
// softmax card, the share dialog, resizing, the header's buttons (copy link, scenario JSON, and
// the buttons that open training and Generate mode: they set the state, app/modes.js opens them).
import { presetState } from '../app/link.js';
import { readWeightFiles, setWeights } from '../app/weights.js';
import { t } from '../i18n.js';
import { TRAIN_OVERRIDES, fields as trainFields } from '../train/fields.js';
import { download } from '../views/download.js';
import { createPresetButtons } from '../views/presets.js';
import { createSoftmaxCard } from '../views/softmax-card.js';
import { createWeightsPicker } from '../views/weights-picker.js';
import { createBackend } from './backend.js';
import { createControls } from './controls.js';
import { presets } from './presets.js';
import { createSettingsPanel } from './settings.js';

const $ = (id) => document.getElementById(id);

// Weights a mode made (training's model) belong to that module: another module (picked, or a
// preset's) runs with its seeded weights; "Show in the playground" brings them back.
function leavesTrainedWeights(pg, module) {
  const w = pg.page.weights;
  return !!w?.fromTraining && module !== w.module;
}

// A static field edited (data-field="<key>"): the state, and what a new module or source implies.
// Compare mode switched on for a module without B's arguments waits for its code (firstFlip).
function editField(pg, key, value) {
  if (key === 'compare' && value && !pg.compare) {
    pg.mode.loadCompare(pg).then(() => editField(pg, key, value));
    return;
  }
  const { state } = pg.page;
  const patch = { [key]: value };
  if (key === 'module') {
    // A preset's table fits its own module only; other modules start from seeded embeddings.
    if (state.source === 'table') patch.source = 'embedding';
    patch.step = '';
  }
  if (key === 'source' && value === 'table' && !state.table) patch.table = 'journey';
  // Compare mode switched on: B starts as A with its first switch flipped (compare.js firstFlip).
  if (key === 'compare' && value && !state.config2[state.module]) {
    patch.config2 = { ...state.config2, [state.module]: pg.compare.firstFlip(state, pg.infoOf.get(state.module)) };
  }
  if (key === 'module' && leavesTrainedWeights(pg, value)) setWeights(pg.page, null, null, { from: 'playground', patch });
  else pg.page.set(patch, { from: 'playground' });
  if (key !== 'text' && key !== 'text2') pg.mode.renderControls(pg);
  pg.mode.recompute(pg);
}

// A preset button: its state, keeping the typed texts, the language, other modules' arguments
// and training mode (its task and settings).
function pickPreset(pg, preset) {
  const { text, text2, lang: language, config, weights } = pg.page.state;
  const kept = Object.fromEntries(['train', 'trainseed', ...TRAIN_OVERRIDES].map((k) => [k, pg.page.state[k]]));
  const patch = presetState(preset, { under: { text, text2, lang: language, config, weights, ...kept } });
  // the shipped weights a preset brought (the language model) go with a preset that has none
  const leavesShipped = !!pg.page.weights?.shipped && preset.state.weights === undefined;
  if (leavesTrainedWeights(pg, patch.module) || leavesShipped) setWeights(pg.page, null, null, { from: 'playground', patch });
  else pg.page.set(patch, { from: 'playground' });
  pg.mode.renderControls(pg);
  pg.mode.recompute(pg);
}

// Weights files picked or dropped, or cleared: read and checked (app/weights.js), then set.
async function pickWeights(pg, files) {
  const { weights, error } = files ? await readWeightFiles(pg.page.core, files, pg.page.weights) : { weights: null, error: null };
  setWeights(pg.page, weights, error, { from: 'playground' });
  pg.weightsPicker.render(weights);
  pg.mode.recompute(pg);
}

function showLinkProblems(link) {
  const problems = link.problems();
  if (!problems.length) return;
  const banner = $('link-error');
  banner.textContent = t('link.ignored', { problems: problems.join(t('link.separator')) });
  banner.hidden = false;
}

function buildBackend(pg) {
  const backend = createBackend(pg.page.core, {
    radios: [$('backend-wasm'), $('backend-webgpu')], name: $('backend-name'), adapter: $('backend-adapter'),
    notice: $('backend-notice'), compare: $('backend-compare'), diff: $('gpu-cpu-diff'), wasmTime: $('time-wasm'), gpuTime: $('time-gpu'),
  }, () => {
    pg.page.set({ backend: backend.wanted() }, { from: 'playground' });
    pg.mode.recompute(pg);
  });
  backend.setWanted(pg.page.state.backend);
  return backend;
}

function buildPanels(pg) {
  const { page } = pg;
  pg.softmaxCard = createSoftmaxCard(page.core, { input: $('numbers'), rows: $('rows'), sum: $('sum'), error: $('error') }, (result) => {
    pg.results.softmax = pg.results.latest = result;
  });
  pg.backend = buildBackend(pg);
  pg.weightsPicker = createWeightsPicker({
    input: $('weights-file'), drop: $('weights-drop'), clear: $('weights-clear'), status: $('weights-status'),
    details: $('weights-details'), table: $('config').querySelector('[data-testid="weights-list"]'), vocab: $('weights-vocab'),
  }, { onFiles: (files) => pickWeights(pg, files), onClear: () => pickWeights(pg, null) });
  pg.weightsPicker.render(page.weights);
  // The Share / Embed dialog's code loads when it first opens.
  let share;
  $('share-open').addEventListener('click', async () => {
    share ??= (await import('./share.js')).createShareDialog({
      dialog: $('share-dialog'), hide: $('share-hide'), steps: $('share-steps'),
      link: $('share-link'), element: $('share-element'), iframe: $('share-iframe'), close: $('share-close'),
    }, () => ({ state: structuredClone(page.state), controls: pg.controls.list(), steps: (pg.last?.result.steps ?? []).map((s) => s.name) }));
    share?.open();
  });
  pg.settings = createSettingsPanel({
    toggle: $('settings-toggle'), panel: $('settings-panel'), aside: $('config'), share: document.querySelector('header .share'), header: document.querySelector('body > header'),
  }, () => {
    page.set({ settings: !page.state.settings }, { from: 'playground' });
    pg.settings.show(page.state.settings);
  });
}

async function copyLink(page) {
  const href = page.link.now();
  const note = $('copy-link-note');
  try {
    await navigator.clipboard.writeText(href);
    note.textContent = t('copy.done');
  } catch {
    note.textContent = t('copy.manual', { url: href });
  }
}

// The header's buttons: the link, the scenario, and the modes they open (the state opens them).
function wireHeader(pg) {
  const { page } = pg;
  $('copy-link').addEventListener('click', () => copyLink(page));
  $('export-scenario').addEventListener('click', async () => {
    const { scenarioJSON } = await import('../views/export-formats.js');
    if (pg.last) download(`${page.state.module}.scenario.json`, scenarioJSON(pg.last.plan.main), 'application/json');
  });
  $('train-mode').addEventListener('click', () => {
    // a task (re)opened from the header starts from its own defaults, as a task picked in the panel
    page.set({ train: page.state.train || 'induction', ...Object.fromEntries(TRAIN_OVERRIDES.map((k) => [k, trainFields[k].default])) });
  });
  $('gen-mode').addEventListener('click', () => page.set({ generate: true }));
  $('lab-mode').addEventListener('click', () => page.set({ experiment: page.state.experiment || page.state.train || 'induction' }));
  $('model-mode').addEventListener('click', () => page.set({ models: true }));
}

// Everything a reader edits: the config panel, presets, the backend card, trained weights, the
// softmax card, the share dialog, the header; and the link's problems, if any.
// mode: mode.js's {loadCompare, measureWidths, recompute, renderControls, setArg}, as pg.mode.
export function buildControls(pg, mode) {
  pg.mode = mode;
  const { page } = pg;
  pg.controls = createControls($('config'), page.core.modules(), {
    onField: (key, value) => editField(pg, key, value),
    onArg: (name, value) => pg.mode.setArg(pg, name, value),
  });
  pg.controls.fillModules();
  createPresetButtons($('presets'), presets, (p) => pickPreset(pg, p));
  buildPanels(pg);
  showLinkProblems(page.linkRead);
  document.body.classList.toggle('embed', page.state.embed);
  pg.mode.renderControls(pg);
  wireHeader(pg);
  const observer = new ResizeObserver(() => pg.mode.measureWidths(pg));
  observer.observe($('steps'));
  observer.observe($('attention'));
  pg.mode.measureWidths(pg);
  pg.backend.ready.then(() => pg.mode.recompute(pg));
}

// A language switch: translatePage() (i18n.js) has done the static texts; here every text built
// from data is redrawn.
export function relabelControls(pg) {
  pg.controls.fillModules();
  createPresetButtons($('presets'), presets, (p) => pickPreset(pg, p));
  showLinkProblems(pg.page.linkRead);
  pg.weightsPicker.render(pg.page.weights);
  pg.softmaxCard.recompute();
  $('copy-link-note').textContent = '';
  pg.mode.renderControls(pg);
  pg.mode.recompute(pg);
}

