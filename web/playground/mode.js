// The playground, the page's first mode and always open: state -> plan (scenario.js) -> core
// (bindings/attention.mjs) -> typed steps -> views (views/). Its controls (wire.js) edit the state
// through app/page.js setState and recompute here; another mode's edit (training's model, a weights
// file) reaches it through sync(). Views take data and draw, and tell the mode what a reader chose.
import { controlFor } from '../app/errors.js';
import { loadShippedWeights, setWeights, SHIPPED_WEIGHTS } from '../app/weights.js';
import { t } from '../i18n.js';
import { attentionSources } from './attention-data.js';
import { computeChecks } from './checks.js';
import { checkPageFields, controlView } from './controls.js';
import { fields, moduleConfig } from './fields.js';
import { PageError, planRun, runPlan } from './scenario.js';
import { names } from '../app/state.js';
import { chipsData, outputData, selectedStep, viewSelection, vocabData } from './view-data.js';
import { buildControls, relabelControls } from './wire.js';
import { createAttentionView } from '../views/attention.js';
import { createChecksView } from '../views/checks.js';
import { createCodePanel } from '../views/code-panel.js';
import { createKvCacheView } from '../views/kv-cache.js';
import { createOutputView } from '../views/output.js';
import { createPipeline } from '../views/pipeline.js';
import { createChips } from '../views/tokens.js';
import { createVocabView } from '../views/vocab.js';

const $ = (id) => document.getElementById(id);

// The views of a run's result, each told where a reader's choice goes.
function createResultViews(pg) {
  return {
    chips: [createChips($('chips1')), createChips($('chips2'))],
    attention: createAttentionView($('attention'), { onView: ({ head, batch }) => setView(pg, { head, item: batch }) }),
    checks: createChecksView($('checks')),
    output: createOutputView($('output')),
    vocab: createVocabView($('vocab')),
    code: createCodePanel($('code-panel')),
    pipeline: createPipeline($('steps'), { onSelect: (name) => selectStep(pg, name) }),
    kvCache: createKvCacheView($('kv-cache')),
  };
}

// pg: {page, infoOf, last: {plan, result, info, wasmMs} | null (the last good run, which the views
// show), results (the latest result of each card, for app/hooks.js), widths (heatmaps', measured on
// resize), views, given (a notebook's inputs), and what wire.js adds: controls, backend,
// weightsPicker, softmaxCard, settings}.
export function start(page) {
  const pg = {
    page, infoOf: new Map(page.core.modules().map((m) => [m.id, m])), last: null,
    results: { latest: null, pipeline: null, softmax: null }, widths: { steps: 600, attention: 560 },
    rules: { mask: (T, S, opts) => page.core.attentionMask(T, S, opts) },
  };
  pg.views = createResultViews(pg);
  if (page.notebook) pg.given = page.notebook.given;
  buildControls(pg, { loadCompare, measureWidths, recompute, renderControls, setArg });
  recompute(pg);
  return {
    sync: (state, prev) => sync(pg, state, prev),
    relabel: () => relabelControls(pg),
    stop: () => {},
    summary: () => pg,
  };
}

// Another mode changed the state: a playground field (training's model and sentence) or the
// weights (app/weights.js) mean a new run.
function sync(pg, state, prev) {
  const weights = pg.page.weights !== pg.weightsSeen;
  if (!weights && !Object.keys(fields).some((key) => key !== 'lang' && state[key] !== prev[key])) return;
  if (weights) pg.weightsPicker.render(pg.page.weights);
  renderControls(pg);
  recompute(pg);
}

// A module argument typed in the form (NaN while half-typed, null for "auto").
export function setArg(pg, name, value) {
  const { config, module } = pg.page.state;
  pg.page.set({ config: { ...config, [module]: { ...(config[module] ?? {}), [name]: value } } }, { from: 'playground' });
  recompute(pg);
}

// An argument of compare mode's configuration B (compare.js): an override of A's, per module.
function setCompareArg(pg, name, value) {
  const { config2, module } = pg.page.state;
  pg.page.set({ config2: { ...config2, [module]: { ...(config2[module] ?? {}), [name]: value } } }, { from: 'playground' });
  recompute(pg);
}

// The attention view's head and batch item are page state: links open the same view, and the
// GPU comparison follows the displayed head.
function setView(pg, { head, item }) {
  pg.page.set({ head, item }, { from: 'playground' });
  compareOnGpu(pg);
}

function selectStep(pg, name) {
  pg.page.set({ step: name }, { from: 'playground' });
  draw(pg);
  pg.views.code.reveal();
}

// The controls as this state and module show them (visibility, labels, notes, values).
export function renderControls(pg) {
  const { state } = pg.page;
  const info = pg.infoOf.get(state.module);
  pg.controls.render(state, info, controlView(state, info));
  $('compare-card').hidden = !state.compare;
  pg.settings.show(state.settings);
}

// state -> plan -> core, at once (a reader's edit is on screen in the next frame: the scheduler's
// now): on success the views redraw from the new result; on an error the message goes beside its
// control and the views keep the last good result, marked stale.
export function recompute(pg) {
  pg.page.scheduler.now(() => recomputeNow(pg));
}

// Weights the page ships, named by the state (a preset, a link): fetched once, then set as a picked file is.
function fetchShipped(pg, name) {
  if (pg.shippedLoading === name) return;
  pg.shippedLoading = name;
  loadShippedWeights(pg.page.core, name).then((w) => {
    if (pg.page.state.weights === name) setWeights(pg.page, w, null);
  }, (e) => {
    if (pg.page.state.weights === name) setWeights(pg.page, null, e);
  }).finally(() => { pg.shippedLoading = null; });
}

// The plan of the state (or of a notebook's given inputs), or a PageError for the control at fault.
function planOf(pg, info, view) {
  const { state, weights, weightsError } = pg.page;
  checkPageFields(state, view.show);
  if (weightsError) throw new PageError(weightsError.message, 'weights');
  if (SHIPPED_WEIGHTS.test(state.weights) && weights?.name !== state.weights) {
    fetchShipped(pg, state.weights);
    throw new PageError(t('weights.loadingShipped', { name: state.weights }), 'weights');
  }
  if (state.weights && !weights) throw new PageError(t('weights.linkNeedsFile', { name: state.weights }), 'weights');
  const options = { returnParams: pg.backend.needsParams(), rules: pg.rules };
  return pg.given ? pg.page.notebook.planGiven(pg.given, info, { ...options, train: state.trainmode, grads: state.grads })
    : planRun(state, info, { ...options, weights });
}

function recomputeNow(pg) {
  const { state } = pg.page;
  pg.weightsSeen = pg.page.weights;
  const info = pg.infoOf.get(state.module);
  const view = controlView(state, info);
  pg.controls.clearErrors();
  try {
    const plan = planOf(pg, info, view);
    const t0 = performance.now();
    const result = runPlan(pg.page.core, plan, pg.page.weights);
    pg.last = { plan, result, info, wasmMs: performance.now() - t0 };
    runCompare(pg);
    pg.results.pipeline = pg.results.latest = result;
    if (document.body.classList.contains('stale')) document.body.classList.remove('stale');
    updateChips(pg, plan, view);
    drawViews(pg);
    pg.controls.hideAuthorControls(state.hide);
    compareOnGpu(pg);
  } catch (e) {
    const mask = view.mod?.mask ? { [`inputs.${view.mod.mask.name}`]: 'causal' } : {};
    pg.controls.showError(e instanceof PageError ? e.control : controlFor('playground', e.field, mask), e.message);
    document.body.classList.add('stale');
    updateChips(pg, null, view);
  }
  pg.page.link.soon();
}

// Compare mode's code (compare.js and its view), loaded when it is first switched on.
export function loadCompare(pg) {
  pg.compareLoad ??= Promise.all([import('./compare.js'), import('../views/compare.js')]).then(([code, view]) => {
    pg.compare = code;
    pg.views.compare = view.createCompareView($('compare-view'), { onArg: (name, value) => setCompareArg(pg, name, value) });
  });
  return pg.compareLoad;
}

// Compare mode: the same input through configuration B (compare.js stateB); its core error, if
// any, shown in the compare card while A's views stay live. Its code loads first (then a recompute).
function runCompare(pg) {
  const { state, weights } = pg.page;
  pg.compared = null;
  if (!state.compare) return;
  if (!pg.compare) { loadCompare(pg).then(() => recompute(pg)); return; }
  const info = pg.infoOf.get(state.module);
  const b = pg.compare.stateB(state, info);
  pg.views.compare.form(info, moduleConfig(b, info));
  try {
    const plan = planRun(b, info, { weights, rules: pg.rules });
    pg.compared = { plan, result: runPlan(pg.page.core, plan, weights) };
    pg.views.compare.error(null);
  } catch (e) {
    pg.views.compare.error(e.message);
  }
}

// The token chips under each box (view: controlView's, which says whether the boxes are shown).
function updateChips(pg, plan, view) {
  const hidden = [false, !view.show.text2];
  chipsData(pg.page.state, plan, view.random).forEach((c, i) => pg.views.chips[i].update(c.tokens, c.ids, c.padTo, hidden[i]));
}

// The last good result into every view (their canvases painted once the DOM is written).
export function draw(pg) {
  pg.page.scheduler.now(() => drawViews(pg));
}

function drawViews(pg) {
  const { plan, result } = pg.last;
  const { views, widths } = pg;
  const { state } = pg.page;
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
  if (pg.compared) {
    const { info } = pg.last;
    views.compare.update(pg.compare.compareData({ info, planA: plan, resultA: result, planB: pg.compared.plan, resultB: pg.compared.result, head: state.head, item: state.item }), Math.floor(widths.steps / 3) - 16);
  }
}

// The WASM result compared on the GPU (backend.js), for the displayed batch item and head.
export function compareOnGpu(pg) {
  const { last } = pg;
  if (!last) return;
  const selection = viewSelection(pg.page.state, attentionSources(last.result, last.plan));
  pg.backend.compare(last.plan.main, last.result, last.wasmMs, selection);
}

// Heatmap widths follow their columns: measured on resize only, never during a redraw.
export function measureWidths(pg) {
  const before = `${pg.widths.steps}|${pg.widths.attention}`;
  pg.widths = { steps: pg.views.pipeline.measureWidth(), attention: pg.views.attention.measureWidth() };
  if (pg.last && before !== `${pg.widths.steps}|${pg.widths.attention}`) draw(pg);
}
