// The page's inputs, wired to its state (page.js): the config panel's fields and arguments, the
// presets, trained weights, the backend choice, the softmax card, the share dialog, the language
// switch, resizing, and the header's buttons. Each handler changes the state, then recomputes.
// main.js calls buildControls then wireEvents once the core has loaded.

import { createBackend } from './backend.js';
import { firstFlip } from './compare.js';
import { showWeightsStatus, createControls } from './controls.js';
import { download, scenarioJSON } from './export.js';
import { lang, t } from './i18n.js';
import { createLinkWriter, presetState } from './link.js';
import { measureWidths, recompute, renderControls, setArg, setState } from './page.js';
import { presets } from './presets.js';
import { TRAIN_OVERRIDES } from './state.js';
import { relabelTraining } from './train-page.js';
import { createSettingsPanel } from './settings.js';
import { createShareDialog } from './share.js';
import { createPresetButtons } from './views/presets.js';
import { createSoftmaxCard } from './views/softmax-card.js';
import { createWeightsPicker } from './weights.js';

const $ = (id) => document.getElementById(id);

// Weights training mode handed over (train-page.js) belong to its CausalTransformer: another
// module (picked, or a preset's) runs with its seeded weights; "Show in the playground" brings them back.
function leaveTrainedWeights(page, module) {
  if (!page.weights?.fromTraining || module === 'CausalTransformer') return;
  page.weights = null;
  page.weightsPicker.adopt(null);
  showWeightsStatus(null);
}

// A static field edited (data-field="<key>"): the state, and what a new module or source implies.
function editField(page, key, value) {
  const patch = { [key]: value };
  if (key === 'module') {
    leaveTrainedWeights(page, value);
    // A preset's table fits its own module only; other modules start from seeded embeddings.
    if (page.state.source === 'table') patch.source = 'embedding';
    patch.step = '';
  }
  if (key === 'source' && value === 'table' && !page.state.table) patch.table = 'journey';
  // Compare mode switched on: B starts as A with its first switch flipped (compare.js firstFlip).
  const { module, config2 } = page.state;
  if (key === 'compare' && value && !config2[module]) {
    patch.config2 = { ...config2, [module]: firstFlip(page.state, page.infoOf.get(module)) };
  }
  setState(page, patch);
  if (key !== 'text' && key !== 'text2') renderControls(page);
  recompute(page);
}

// A preset button: its state, keeping the typed texts, the language, other modules' arguments
// and training mode (its task and settings).
function pickPreset(page, preset) {
  const { text, text2, lang: language, config } = page.state;
  const training = Object.fromEntries(['train', 'trainseed', ...TRAIN_OVERRIDES].map((k) => [k, page.state[k]]));
  setState(page, presetState(preset, { under: { text, text2, lang: language, config, ...training } }));
  leaveTrainedWeights(page, page.state.module);
  renderControls(page);
  recompute(page);
}

// Trained weights picked, refused or cleared: the state keeps the file's name only.
function setWeights(page, weights, error) {
  page.weights = weights;
  page.weightsError = error;
  setState(page, { weights: weights ? weights.name : '' });
  showWeightsStatus(weights);
  recompute(page);
}

function showLinkProblems(link) {
  const problems = link.problems();
  if (!problems.length) return;
  const banner = $('link-error');
  banner.textContent = t('link.ignored', { problems: problems.join(t('link.separator')) });
  banner.hidden = false;
}

function buildBackend(page) {
  const backend = createBackend(page.core, {
    radios: [$('backend-wasm'), $('backend-webgpu')], name: $('backend-name'), adapter: $('backend-adapter'),
    notice: $('backend-notice'), compare: $('backend-compare'), diff: $('gpu-cpu-diff'), wasmTime: $('time-wasm'), gpuTime: $('time-gpu'),
  }, () => {
    setState(page, { backend: backend.wanted() });
    recompute(page);
  });
  backend.setWanted(page.state.backend);
  return backend;
}

function buildWeightsPicker(page) {
  return createWeightsPicker(page.core, {
    input: $('weights-file'), drop: $('weights-drop'), clear: $('weights-clear'),
    details: $('weights-details'), table: $('config').querySelector('[data-testid="weights-list"]'), vocab: $('weights-vocab'),
  }, (weights, error) => setWeights(page, weights, error));
}

// Everything a reader edits: the config panel, presets, the backend card, trained weights, the
// softmax card, the share dialog; and the link's problems, if any.
export function buildControls(page, link) {
  page.link = createLinkWriter(() => page.state);
  page.controls = createControls($('config'), page.core.modules(), {
    onField: (key, value) => editField(page, key, value),
    onArg: (name, value) => setArg(page, name, value),
  });
  page.controls.fillModules();
  createPresetButtons($('presets'), presets, (p) => pickPreset(page, p));
  page.softmaxCard = createSoftmaxCard(page.core, { input: $('numbers'), rows: $('rows'), sum: $('sum'), error: $('error') }, (result) => {
    page.results.softmax = page.results.latest = result;
  });
  page.backend = buildBackend(page);
  page.weightsPicker = buildWeightsPicker(page);
  createShareDialog({
    open: $('share-open'), dialog: $('share-dialog'), hide: $('share-hide'), steps: $('share-steps'),
    link: $('share-link'), element: $('share-element'), iframe: $('share-iframe'), close: $('share-close'),
  }, () => ({ state: structuredClone(page.state), controls: page.controls.list(), steps: (page.last?.result.steps ?? []).map((s) => s.name) }));
  page.settings = createSettingsPanel({
    toggle: $('settings-toggle'), panel: $('settings-panel'), aside: $('config'), share: document.querySelector('header .share'), header: document.querySelector('body > header'),
  }, () => toggleSettings(page));
  showLinkProblems(link);
  document.body.classList.toggle('embed', page.state.embed);
  renderControls(page);
}

// The narrow screens' settings panel opened or closed (settings.js); the link keeps it.
function toggleSettings(page) {
  setState(page, { settings: !page.state.settings });
  page.settings.show(page.state.settings);
  page.link.soon();
}

// A language switch: translatePage() (i18n.js) has done the static texts; here every text built
// from data is redrawn, and the link records the choice.
function relabel(page, link) {
  setState(page, { lang: lang() });
  page.controls.fillModules();
  createPresetButtons($('presets'), presets, (p) => pickPreset(page, p));
  showLinkProblems(link);
  showWeightsStatus(page.weights);
  page.weightsPicker.refresh();
  page.softmaxCard.recompute();
  $('copy-link-note').textContent = '';
  renderControls(page);
  recompute(page);
  relabelTraining(page);
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

// language: startLanguage()'s switch (main.js), told to relabel the page from now on.
export function wireEvents(page, language, link) {
  language.onSwitch = () => relabel(page, link);
  const observer = new ResizeObserver(() => measureWidths(page));
  observer.observe($('steps'));
  observer.observe($('attention'));
  measureWidths(page);
  page.backend.ready.then(() => recompute(page));
  $('copy-link').addEventListener('click', () => copyLink(page));
  $('export-scenario').addEventListener('click', () => {
    if (page.last) download(`${page.state.module}.scenario.json`, scenarioJSON(page.last.plan.main), 'application/json');
  });
}
