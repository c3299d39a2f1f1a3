// The page: loads the core (bindings/attention.mjs), keeps the one page state (state.js), and on
// every keystroke plans a run (scenario.js), runs it and hands the result to the views (views/).
// Views take data and draw; this file only wires controls, state, core and views together.
import { loadAttention } from '../bindings/attention.mjs';
import { attentionSources, isSoftmaxStep } from './attention-data.js';
import { computeChecks } from './checks.js';
import { presets } from './presets.js';
import { PageError, controlForError, describeModule, planRun, runPlan, stepLabels } from './scenario.js';
import { defaultState, fromHash, hashProblems, moduleConfig, names, schema, toHash } from './state.js';
import { tokenize } from './tokenize.js';
import { createAttentionView } from './views/attention.js';
import { createChecksView } from './views/checks.js';
import { createCodePanel } from './views/code-panel.js';
import { createArgsForm } from './views/config-form.js';
import { clearErrors, showError } from './views/errors.js';
import { createOutputView } from './views/output.js';
import { createPipeline } from './views/pipeline.js';
import { createPresetButtons } from './views/presets.js';
import { createSoftmaxCard } from './views/softmax-card.js';
import { createChips } from './views/tokens.js';
import { createVocabView } from './views/vocab.js';
import { createWeightsPicker } from './weights.js';
import { createBackend } from './backend.js';
import { download, scenarioJSON } from './export.js';
import { createShareDialog } from './share.js';
import { i18nText, lang, pickLang, setLang, t, tCore, translatePage } from './i18n.js';

const $ = (id) => document.getElementById(id);

// The most recent result of either card; window.playground.result() returns it.
const results = { latest: null, pipeline: null, softmax: null };
window.playground = {
  result: () => results.latest,
  pipelineResult: () => results.pipeline,
  softmaxResult: () => results.softmax,
};

function readControl(el, field) {
  if (el.type === 'checkbox') return el.checked;
  if (field.type === 'int') return el.value.trim() === '' ? NaN : Number(el.value);
  return el.value;
}

// Whole numbers typed in the page's own fields (seed, random shapes, width) are checked here; the
// module's arguments are checked by the core, which names the rule.
function checkPageFields(state, visible) {
  for (const [key, field] of Object.entries(schema)) {
    if (field.type !== 'int' || !visible(key)) continue;
    const v = state[key];
    if (!Number.isInteger(v) || v < field.min || v > field.max) {
      throw new PageError(t('field.range', { label: $(`label-${key}`)?.textContent ?? key, min: field.min, max: field.max }), key);
    }
  }
}

function vocabData(plan, result) {
  if (!plan.vocab) return null;
  const tokens = plan.vocab.tokens;
  if (plan.mod.kind === 'ids') {
    const w = result.params?.find((p) => p.name === 'embedding.weight');
    return w && { title: t('vocab.transformer', { V: w.shape[0], d: w.shape[1] }), tokens, rows: w.data, d: w.shape[1] };
  }
  if (plan.table) {
    const title = plan.tableName ? t('vocab.presetTable', { title: plan.table.title }) : t('vocab.seededTable', { title: plan.table.title, seed: plan.main.seed });
    return { title, tokens, rows: plan.table.data, d: plan.table.dim };
  }
  // Single-input modules: the looked-up rows came back with the input; every id occurs in it.
  const x = result.inputs?.[0];
  if (!x) return null;
  const d = x.shape.at(-1);
  const rows = new Float32Array(tokens.length * d);
  plan.qIds.forEach((id, p) => { if (id >= 0) rows.set(x.data.subarray(p * d, p * d + d), id * d); });
  return { title: t('vocab.afterModule', { V: tokens.length, d, seed: plan.main.seed }), tokens, rows, d };
}

async function main() {
  // The language: the link's `lang`, else the browser's (i18n.js). Static texts follow at once,
  // the switch works while the core loads; once it has, relabel() redraws everything.
  setLang(pickLang(fromHash(location.hash).lang, navigator.languages));
  translatePage();
  const langSelect = $('lang-select');
  langSelect.value = lang();
  let relabel = () => {};
  langSelect.addEventListener('change', () => {
    setLang(langSelect.value);
    translatePage();
    relabel();
  });
  const status = $('status');
  let core;
  try {
    core = await loadAttention();
  } catch (e) {
    i18nText(status, 'status.failed', { message: e.message });
    status.classList.add('failed');
    status.setAttribute('role', 'alert');
    return;
  }
  i18nText(status, 'status.ready');
  status.classList.add('ready');
  document.body.classList.remove('loading');
  i18nText($('version'), 'footer.version', { version: core.version(), kernels: core.kernels() });

  const modules = core.modules();
  const infoOf = new Map(modules.map((m) => [m.id, m]));
  let state = fromHash(location.hash);
  // A link may name a preset (course pages: preset=journey); its own fields then apply on top.
  const linkParams = new URLSearchParams(location.hash.replace(/^#/, ''));
  const linkPreset = presets.find((p) => p.id === linkParams.get('preset'));
  if (linkPreset) {
    const fromLink = state;
    state = { ...defaultState(), ...structuredClone(linkPreset.state) };
    state.config = { ...structuredClone(linkPreset.state.config ?? {}) };
    for (const key of Object.keys(schema)) {
      if (!linkParams.has(key)) continue;
      state[key] = key === 'config' ? { ...state.config, ...fromLink.config } : fromLink[key];
    }
  }
  if (!infoOf.has(state.module)) state.module = defaultState().module;
  const linkHash = location.hash;
  const showLinkProblems = () => {
    const linkProblems = hashProblems(linkHash, { modules: modules.map((m) => m.id), presets: presets.map((p) => p.id) });
    if (!linkProblems.length) return;
    const banner = $('link-error');
    banner.textContent = t('link.ignored', { problems: linkProblems.join(t('link.separator')) });
    banner.hidden = false;
  };
  showLinkProblems();

  const panel = $('config');
  const moduleSelect = $('module');
  const fillModules = () => moduleSelect.replaceChildren(...modules.map((m) => {
    const o = document.createElement('option');
    o.value = m.id;
    o.textContent = t(m.seed_name !== m.id ? 'module.optionNamed' : 'module.option', { id: m.id, seed: m.seed, name: m.seed_name });
    return o;
  }));
  fillModules();

  const chips1 = createChips($('chips1'));
  const chips2 = createChips($('chips2'));
  const argsForm = createArgsForm($('args'), (name, value) => {
    state.config[state.module] = { ...(state.config[state.module] ?? {}), [name]: value };
    recompute();
  });
  const attention = createAttentionView($('attention'), {
    onView: ({ head, batch }) => { state.head = head; state.item = batch; saveHash(); },
  });
  attention.select({ head: state.head, batch: state.item });
  const checks = createChecksView($('checks'));
  const output = createOutputView($('output'));
  const vocab = createVocabView($('vocab'));
  const code = createCodePanel($('code-panel'));
  let selected = state.step || null;
  let last = null;   // {plan, result, info}: the last good state the views show
  const pipeline = createPipeline($('steps'), {
    onSelect: (name) => { selected = state.step = name; draw(); saveHash(); $('code-card').scrollIntoView({ block: 'nearest' }); },
  });

  // Heatmap widths follow their columns; measured on resize only, never during a redraw.
  const widths = { steps: 600, attention: 560 };
  const measure = () => {
    widths.steps = Math.max(240, $('steps').clientWidth - 34);
    // The attention heatmap and the lines share a row on wide screens: size to one figure.
    const figure = $('attention').querySelector('.attention-grid > figure');
    widths.attention = Math.max(240, figure?.clientWidth || $('attention').clientWidth);
  };
  measure();
  const observer = new ResizeObserver(() => {
    const before = `${widths.steps}|${widths.attention}`;
    measure();
    if (last && before !== `${widths.steps}|${widths.attention}`) draw();
  });
  observer.observe($('steps'));
  observer.observe($('attention'));

  const visibility = {};   // control -> shown?, recomputed by syncControls
  function syncControls() {
    const info = infoOf.get(state.module);
    const mod = describeModule(info);
    const random = mod.kind !== 'ids' && (state.source === 'randn' || state.source === 'rand');
    const pairing = mod.pairings.includes(state.pairing) ? state.pairing : mod.pairings[0];
    const show = {
      text: !random,
      text2: !random && (pairing !== 'one'),
      tokenizer: !random,
      source: mod.kind !== 'ids',
      pairing: !random && mod.pairings.length > 1,
      kv: random && mod.kind === 'qkv',
      batch: random && mod.rank >= 3,
      seqT: random,
      seqS: random && mod.kind !== 'x',
      width: !mod.widthArg && mod.kind !== 'ids',
      causal: true,
      train: true,
      seed: true,
    };
    Object.assign(visibility, show);
    for (const [control, shown] of Object.entries(show)) {
      const field = panel.querySelector(`[data-control="${control}"]`);
      if (field) field.hidden = !shown;
    }
    $('chips2').hidden = !show.text2;
    $('random-note').hidden = !random;
    $('chips-hint').hidden = random;
    const text2Label = { batch: 'text2.batch', cross: mod.kind === 'ids' ? 'text2.target' : mod.kind === 'decoder' ? 'text2.encoder' : 'text2.kv' }[pairing];
    if (text2Label) $('label-text2').textContent = t(text2Label);
    $('label-text').textContent = t(mod.kind === 'ids' ? 'text1.source' : pairing === 'cross' ? 'text1.queries' : 'tokens.sentence');
    for (const o of $('pairing').options) o.disabled = !mod.pairings.includes(o.value);
    $('pairing').value = pairing;

    const causal = $('causal');
    causal.disabled = !mod.mask;
    causal.checked = mod.builtinCausal || (!!mod.mask && state.causal);
    $('causal-note').textContent = t(mod.builtinCausal ? 'causal.builtin'
      : mod.mask ? (mod.mask.maskedValue === 0 ? 'causal.seed000' : 'causal.seed003')
        : 'causal.none');
    $('train-note').textContent = t(info.args.some((a) => a.name === 'dropout') || mod.kind === 'ids' || /Layer|Transformer/.test(info.id)
      ? 'train.dropout' : 'train.noDropout');
    $('module-summary').textContent = tCore(info.summary);

    for (const el of panel.querySelectorAll('[data-field]')) {
      const key = el.dataset.field;
      if (key === 'causal' || document.activeElement === el) continue;
      if (el.type === 'checkbox') el.checked = !!state[key];
      else if (el.type === 'radio') el.checked = el.value === state[key];
      else if (el.value !== String(state[key])) el.value = Number.isNaN(state[key]) ? '' : String(state[key]);
    }
    argsForm.update(info, moduleConfig(state, info));
  }

  function draw() {
    const { plan, result } = last;
    const steps = result.steps ?? [];
    if (!steps.some((s) => s.name === selected)) selected = (steps.find(isSoftmaxStep) ?? steps[0])?.name ?? null;
    const sources = attentionSources(result, plan);
    attention.update({ sources, width: widths.attention });
    checks.update(computeChecks(result, plan));
    const out = result.outputs[0];
    const lastStep = [...steps].reverse().find((s) => s.shape.join() === out.shape.join());
    const dims = lastStep?.dims ?? out.shape.map((_, i) => (i === out.shape.length - 1 ? 'features' : i === out.shape.length - 2 ? 'seq' : 'batch'));
    const outLabels = stepLabels(plan, lastStep?.name ?? 'output');
    output.update({
      output: out, dims, rowLabels: outLabels.q,
      colLabels: dims.at(-1) === 'vocab' && plan.vocab?.tokens.length === out.shape.at(-1) ? plan.vocab.tokens : null,
    });
    vocab.update(vocabData(plan, result));
    const index = steps.findIndex((s) => s.name === selected);
    code.update(steps[index] ?? null, index);
    const only = state.steps ? new Set(names(state.steps)) : null;
    pipeline.update({ result, plan, width: widths.steps, selected, only });
  }

  function updateChips(plan) {
    const random = visibility.tokenizer === false;
    if (random) { chips1.update([], null); chips2.update([], null); return; }
    const t1 = plan?.sentences?.[0] ?? tokenize(state.text, state.tokenizer);
    const t2 = plan?.sentences?.[1] ?? tokenize(state.text2, state.tokenizer);
    const ids = (ts) => (plan?.vocab ? plan.vocab.ids(ts) : null);
    const padTo = plan?.pairing === 'batch' ? plan.T : 0;
    chips1.update(t1, ids(t1), Math.max(t1.length, padTo));
    chips2.update(t2, ids(t2), Math.max(t2.length, padTo));
  }

  function recompute() {
    clearErrors(panel);
    const info = infoOf.get(state.module);
    let plan = null;
    try {
      checkPageFields(state, (key) => visibility[key] !== false);
      if (weightsError) throw new PageError(weightsError.message, 'weights');
      if (state.weights && !weights) {
        throw new PageError(t('weights.linkNeedsFile', { name: state.weights }), 'weights');
      }
      plan = planRun(state, info, weights);
      if (backend.needsParams()) plan.main.return_params = true;  // the GPU computes from the same weights
      const t0 = performance.now();
      const result = runPlan(core, plan, weights);
      wasmMs = performance.now() - t0;
      last = { plan, result, info };
      results.pipeline = results.latest = result;
      document.body.classList.remove('stale');
      updateChips(plan);
      draw();
      hideAuthorControls();
      backend.compare(plan.main, result, wasmMs);
    } catch (e) {
      const control = e instanceof PageError ? e.control : controlForError(e.message, info);
      showError(panel, control, e.message);
      // The views keep the last good result; they are marked stale until the input is fixed.
      document.body.classList.add('stale');
      updateChips(null);
    }
    saveHash();
  }

  // Lesson mode: the course author's hidden controls (state.hide); argument fields are rebuilt
  // when the module changes, so this runs after every draw.
  function hideAuthorControls() {
    const hidden = new Set(names(state.hide));
    for (const field of panel.querySelectorAll('[data-control]')) {
      const name = field.dataset.control;
      field.classList.toggle('author-hidden', hidden.has(name) || hidden.has(name.replace(/^arg:/, '')));
    }
  }

  // The URL follows the state, but replaceState is slow (Chromium rate-limits it): once typing pauses.
  let hashTimer = 0;
  function saveHash() {
    clearTimeout(hashTimer);
    hashTimer = setTimeout(() => history.replaceState(null, '', `#${toHash(state)}`), 400);
  }

  // Static controls: each carries data-field="<state key>".
  for (const el of panel.querySelectorAll('[data-field]')) {
    const key = el.dataset.field;
    const field = schema[key];
    const event = el.type === 'checkbox' || el.type === 'radio' || el.tagName === 'SELECT' ? 'change' : 'input';
    el.addEventListener(event, () => {
      if (el.type === 'radio' && !el.checked) return;
      state[key] = readControl(el, field);
      if (key === 'module') {
        // A preset's table fits its own module only; other modules start from seeded embeddings.
        if (state.source === 'table') state.source = 'embedding';
        selected = null;
        state.step = '';
      }
      if (key === 'source' && state.source === 'table' && !state.table) state.table = 'journey';
      if (key !== 'text' && key !== 'text2') syncControls();
      recompute();
    });
  }

  const pickPreset = (preset) => {
    const base = defaultState();
    const next = { ...base, text: state.text, text2: state.text2, lang: state.lang, ...structuredClone(preset.state) };
    next.config = { ...state.config, ...structuredClone(preset.state.config ?? {}) };
    state = next;
    selected = null;
    syncControls();
    recompute();
  };
  createPresetButtons($('presets'), presets, pickPreset);

  const softmaxCard = createSoftmaxCard(core, { input: $('numbers'), rows: $('rows'), sum: $('sum'), error: $('error') }, (result) => {
    results.softmax = results.latest = result;
  });
  // Backends: the WASM core always; WebGPU side by side when the browser has an adapter.
  let wasmMs = 0;
  const backend = createBackend(core, {
    radios: [$('backend-wasm'), $('backend-webgpu')], name: $('backend-name'), adapter: $('backend-adapter'),
    notice: $('backend-notice'), compare: $('backend-compare'), diff: $('gpu-cpu-diff'), wasmTime: $('time-wasm'), gpuTime: $('time-gpu'),
  }, (active) => {
    state.backend = backend.wanted();
    recompute();
  });
  backend.setWanted(state.backend);
  backend.ready.then(() => recompute());
  for (const id of ['attention-batch', 'attention-head']) {
    $(id)?.addEventListener('change', () => { if (last) backend.compare(last.plan.main, last.result, wasmMs); });
  }
  window.playground.backend = backend;
  // Trained weights: the file stays in memory only; the state (and the URL) keep its name.
  let weights = null, weightsError = null;
  const weightsStatus = $('weights-status');
  const showWeightsStatus = () => {
    weightsStatus.textContent = weights ? t('weights.loaded', { name: weights.name, n: weights.tensors.length }) : '';
  };
  const weightsPicker = createWeightsPicker(core, {
    input: $('weights-file'), drop: $('weights-drop'), clear: $('weights-clear'),
    details: $('weights-details'), table: panel.querySelector('[data-testid="weights-list"]'), vocab: $('weights-vocab'),
  }, (w, error) => {
    weights = w;
    weightsError = error;
    state.weights = w ? w.name : '';
    showWeightsStatus();
    recompute();
  });
  document.body.classList.toggle('embed', state.embed);
  syncControls();
  recompute();
  // A language switch (the select at the top): translatePage() has done the static texts; here
  // every text built from data is redrawn, and the link records the choice.
  relabel = () => {
    state.lang = lang();
    fillModules();
    createPresetButtons($('presets'), presets, pickPreset);
    showLinkProblems();
    showWeightsStatus();
    weightsPicker.refresh();
    softmaxCard.recompute();
    $('copy-link-note').textContent = '';
    syncControls();
    recompute();
  };
  $('copy-link').addEventListener('click', async () => {
    clearTimeout(hashTimer);
    history.replaceState(null, '', `#${toHash(state)}`);
    const note = $('copy-link-note');
    try {
      await navigator.clipboard.writeText(location.href);
      note.textContent = t('copy.done');
    } catch {
      note.textContent = t('copy.manual', { url: location.href });
    }
  });
  $('export-scenario').addEventListener('click', () => {
    if (!last) return;
    download(`${state.module}.scenario.json`, scenarioJSON(last.plan.main), 'application/json');
  });
  // Share / Embed: the controls a lesson can hide and the steps it can show.
  createShareDialog({
    open: $('share-open'), dialog: $('share-dialog'), hide: $('share-hide'), steps: $('share-steps'),
    link: $('share-link'), element: $('share-element'), iframe: $('share-iframe'), close: $('share-close'),
  }, () => ({
    state: structuredClone(state),
    controls: [...panel.querySelectorAll('[data-control]')].map((field) => ({
      name: field.dataset.control.replace(/^arg:/, ''),
      label: (field.querySelector('label, legend')?.textContent ?? field.dataset.control).trim().replace(/\s+/g, ' '),
    })),
    steps: (last?.result.steps ?? []).map((s) => s.name),
  }));
  window.playground.link = () => { clearTimeout(hashTimer); history.replaceState(null, '', `#${toHash(state)}`); return location.href; };
  window.playground.state = () => structuredClone(state);
  window.playground.core = core;  // the loaded WASM core (bindings/attention.mjs API)
  // The WASM heap: memory size and bytes malloc holds now (soak tests watch both for growth).
  window.playground.heap = () => ({ wasmMemoryBytes: core.heapBytes(), wasmMallocBytes: core.heapUsed() });
  window.playground.plan = () => last?.plan ?? null;
  document.body.dataset.ready = 'true';
}

main();
