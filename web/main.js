// The page's startup, as a list of named calls: hooks, language, core, link, page, controls,
// events, training mode, Generate mode, first recompute. page.js holds the one state and its one direction (state → plan →
// core → typed steps → views); events.js wires the inputs to it; link.js reads and writes the
// URL; train-page.js runs training mode; hooks.js is what tests see (window.playground).
// README "How a keystroke flows".
import { loadAttention } from '../bindings/attention.mjs';
import { buildControls, wireEvents } from './events.js';
import { exposeHooks } from './hooks.js';
import { i18nText, lang, pickLang, setLang, translatePage } from './i18n.js';
import { readLink } from './link.js';
import { notebookData, notebookLink, notebookWasm, startNotebook } from './notebook.js';
import { createPage, recompute } from './page.js';
import { fromHash } from './state.js';
import { buildGeneration } from './generate-page.js';
import { buildTraining } from './train-page.js';

// The language: the link's `lang` (or the notebook's), else the browser's (i18n.js). Static texts
// follow at once and the switch works while the core loads; onSwitch is the page's relabel once it is built.
function startLanguage(wanted = fromHash(location.hash).lang) {
  const language = { onSwitch: () => {} };
  setLang(pickLang(wanted, navigator.languages));
  translatePage();
  const select = document.getElementById('lang-select');
  select.value = lang();
  select.addEventListener('change', () => {
    setLang(select.value);
    translatePage();
    language.onSwitch();
  });
  return language;
}

// The status banner: ready (with the core's version in the footer), or why the core could not load.
function showCoreStatus(core, error = null) {
  const status = document.getElementById('status');
  if (error) {
    i18nText(status, 'status.failed', { message: error.message });
    status.classList.add('failed');
    status.setAttribute('role', 'alert');
    return;
  }
  i18nText(status, 'status.ready');
  status.classList.add('ready');
  document.body.classList.remove('loading');
  i18nText(document.getElementById('version'), 'footer.version', { version: core.version(), kernels: core.kernels() });
}

// The WASM core, or null (the status banner then says why). options: loadAttention's.
async function loadCore(options) {
  try {
    const core = await loadAttention(options);
    showCoreStatus(core);
    return core;
  } catch (e) {
    showCoreStatus(null, e);
    return null;
  }
}

async function main() {
  let page = null;
  exposeHooks(() => page);
  // In a notebook's output (notebook.js): the module, weights and inputs the notebook gave.
  const notebook = notebookData();
  const language = startLanguage(notebook?.lang);
  const core = await loadCore(notebook ? { wasmBinary: notebookWasm(notebook) } : {});
  if (!core) return;
  const modules = core.modules();
  let link;
  try {
    link = notebook ? notebookLink(notebook, modules.find((m) => m.id === notebook.scenario.module)) : readLink(location.hash, modules.map((m) => m.id));
  } catch (e) {
    showCoreStatus(null, e);
    return;
  }
  page = createPage(core, link.state);
  if (notebook) startNotebook(page, notebook);
  buildControls(page, link);
  wireEvents(page, language, link);
  buildTraining(page);
  buildGeneration(page);
  recompute(page);
  document.body.dataset.ready = 'true';
}

main();
