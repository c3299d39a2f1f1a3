// The page's one live state and the one direction it flows in: state → plan (scenario.js) → core
// (bindings/attention.mjs) → typed steps → views (views/). Edits reach the state only through
// setState / setArg / setView here (events.js wires the controls to them); views take data and
// draw, and tell the page what a reader chose. main.js starts it all; hooks.js exposes it to tests.

import { attentionSources } from './attention-data.js';
import { computeChecks } from './checks.js';
import { compareData, stateB } from './compare.js';
import { checkPageFields, controlView } from './controls.js';
import { t } from './i18n.js';
import { planGiven } from './given.js';
import { PageError, controlForError, planRun, runPlan } from './scenario.js';
import { moduleConfig, names } from './state.js';
import { chipsData, outputData, selectedStep, viewSelection, vocabData } from './view-data.js';
import { createAttentionView } from './views/attention.js';
import { createChecksView } from './views/checks.js';
import { createCodePanel } from './views/code-panel.js';
import { createCompareView } from './views/compare.js';
import { createKvCacheView } from './views/kv-cache.js';
import { createOutputView } from './views/output.js';
import { paintsLast } from './views/paint-batch.js';
import { createPipeline } from './views/pipeline.js';
import { createChips } from './views/tokens.js';
import { createVocabView } from './views/vocab.js';

const $ = (id) => document.getElementById(id);

// The views of a run's result, each told where a reader's choice goes.
function createResultViews(page) {
  return {
    chips: [createChips($('chips1')), createChips($('chips2'))],
    attention: createAttentionView($('attention'), { onView: ({ head, batch }) => setView(page, { head, item: batch }) }),
    checks: createChecksView($('checks')),
    output: createOutputView($('output')),
    vocab: createVocabView($('vocab')),
    code: createCodePanel($('code-panel')),
    pipeline: createPipeline($('steps'), { onSelect: (name) => selectStep(page, name) }),
    compare: createCompareView($('compare-view'), { onArg: (name, value) => setCompareArg(page, name, value) }),
    kvCache: createKvCacheView($('kv-cache')),
  };
}

// page: {core, infoOf, state, last: {plan, result, info, wasmMs} | null (the last good run, which
// the views show), weights / weightsError (trained weights: the file stays in memory only),
// results (the latest result of each card, for hooks.js), widths (heatmaps', measured on resize),
// views, and what buildControls adds: controls, backend, link, weightsPicker, softmaxCard,
// settings (settings.js: the narrow screens' settings panel)}.
export function createPage(core, state) {
  const page = {
    core, state, infoOf: new Map(core.modules().map((m) => [m.id, m])),
    last: null, weights: null, weightsError: null,
    results: { latest: null, pipeline: null, softmax: null },
    widths: { steps: 600, attention: 560 },
  };
  page.views = createResultViews(page);
  return page;
}

// The only writer of the state: a patch of schema fields (state.js).
export function setState(page, patch) {
  page.state = { ...page.state, ...patch };
}

// A module argument typed in the form (NaN while half-typed, null for "auto").
export function setArg(page, name, value) {
  const { config, module } = page.state;
  setState(page, { config: { ...config, [module]: { ...(config[module] ?? {}), [name]: value } } });
  recompute(page);
}

// An argument of compare mode's configuration B (compare.js): an override of A's, per module.
export function setCompareArg(page, name, value) {
  const { config2, module } = page.state;
  setState(page, { config2: { ...config2, [module]: { ...(config2[module] ?? {}), [name]: value } } });
  recompute(page);
}

// The attention view's head and batch item are page state: links open the same view, and the
// GPU comparison follows the displayed head.
function setView(page, { head, item }) {
  setState(page, { head, item });
  page.link.soon();
  compareOnGpu(page);
}

function selectStep(page, name) {
  setState(page, { step: name });
  draw(page);
  page.link.soon();
  page.views.code.reveal();
}

// The controls as this state and module show them (visibility, labels, notes, values).
export function renderControls(page) {
  const info = page.infoOf.get(page.state.module);
  page.controls.render(page.state, info, controlView(page.state, info));
  $('compare-card').hidden = !page.state.compare;
  page.settings.show(page.state.settings);
}

// state → plan → core: on success the views redraw from the new result; on an error the message
// goes beside its control and the views keep the last good result, marked stale. Canvases are
// painted after every DOM write of the recompute (paint-batch.js): one layout per keystroke, not two.
export function recompute(page) {
  paintsLast(() => recomputeNow(page));
}

function recomputeNow(page) {
  const { state, controls } = page;
  const info = page.infoOf.get(state.module);
  const view = controlView(state, info);
  controls.clearErrors();
  try {
    checkPageFields(state, view.show);
    if (page.weightsError) throw new PageError(page.weightsError.message, 'weights');
    if (state.weights && !page.weights) throw new PageError(t('weights.linkNeedsFile', { name: state.weights }), 'weights');
    // A notebook's view (notebook.js) plans its given inputs; the page plans its state.
    const plan = page.given
      ? planGiven(page.given, info, { returnParams: page.backend.needsParams(), train: state.trainmode, grads: state.grads })
      : planRun(state, info, { weights: page.weights, returnParams: page.backend.needsParams() });
    const t0 = performance.now();
    const result = runPlan(page.core, plan, page.weights);
    page.last = { plan, result, info, wasmMs: performance.now() - t0 };
    runCompare(page);
    page.results.pipeline = page.results.latest = result;
    if (document.body.classList.contains('stale')) document.body.classList.remove('stale');
    updateChips(page, plan, view);
    draw(page);
    controls.hideAuthorControls(state.hide);
    compareOnGpu(page);
  } catch (e) {
    controls.showError(e instanceof PageError ? e.control : controlForError(e, view.mod), e.message);
    document.body.classList.add('stale');
    updateChips(page, null, view);
  }
  page.link.soon();
}

// Compare mode: the same input through configuration B (compare.js stateB); its core error, if
// any, shown in the compare card while A's views stay live.
function runCompare(page) {
  const { state } = page;
  page.compared = null;
  if (!state.compare) return;
  const info = page.infoOf.get(state.module);
  const b = stateB(state, info);
  page.views.compare.form(info, moduleConfig(b, info));
  try {
    const plan = planRun(b, info, { weights: page.weights });
    page.compared = { plan, result: runPlan(page.core, plan, page.weights) };
    page.views.compare.error(null);
  } catch (e) {
    page.views.compare.error(e.message);
  }
}

// The token chips under each box (view: controlView's, which says whether the boxes are shown).
function updateChips(page, plan, view) {
  const hidden = [false, !view.show.text2];
  chipsData(page.state, plan, view.random).forEach((c, i) => page.views.chips[i].update(c.tokens, c.ids, c.padTo, hidden[i]));
}

// The last good result into every view (their canvases painted once the DOM is written).
export function draw(page) {
  paintsLast(() => drawViews(page));
}

function drawViews(page) {
  const { plan, result } = page.last;
  const { views, state, widths } = page;
  const steps = result.steps ?? [];
  const selected = selectedStep(steps, state.step);
  views.attention.update({ sources: attentionSources(result, plan), width: widths.attention, head: state.head, batch: state.item });
  views.checks.update(computeChecks(result, plan));
  views.output.update(outputData(result, plan));
  views.vocab.update(vocabData(plan, result));
  const index = steps.findIndex((s) => s.name === selected);
  views.code.update(steps[index] ?? null, index);
  const only = state.steps ? new Set(names(state.steps)) : null;
  views.pipeline.update({ result, plan, width: widths.steps, selected, only });
  views.kvCache.update(plan.config, plan.T);
  if (page.compared) {
    const { info } = page.last;
    views.compare.update(compareData({ info, planA: plan, resultA: result, planB: page.compared.plan, resultB: page.compared.result, head: state.head, item: state.item }), Math.floor(widths.steps / 3) - 16);
  }
}

// The WASM result compared on the GPU (backend.js), for the displayed batch item and head.
export function compareOnGpu(page) {
  const { last } = page;
  if (!last) return;
  const selection = viewSelection(page.state, attentionSources(last.result, last.plan));
  page.backend.compare(last.plan.main, last.result, last.wasmMs, selection);
}

// Heatmap widths follow their columns: measured on resize only, never during a redraw.
export function measureWidths(page) {
  const before = `${page.widths.steps}|${page.widths.attention}`;
  page.widths = { steps: page.views.pipeline.measureWidth(), attention: page.views.attention.measureWidth() };
  if (page.last && before !== `${page.widths.steps}|${page.widths.attention}`) draw(page);
}
