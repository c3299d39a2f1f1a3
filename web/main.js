// The page's startup, as a list of named calls: hooks, language, core, link, page, modes, ready.
// app/page.js holds the one state; app/modes.js the modes it opens (the playground always; training
// and Generate mode when the state says, their code loaded then); app/hooks.js is what tests see
// (window.playground). README "How a keystroke flows", docs/architecture.md.
import { loadAttention } from '../bindings/attention.mjs';
import { exposeHooks } from './app/hooks.js';
import { readLink } from './app/link.js';
import { createPage, openModes, relabel } from './app/page.js';
import { fromHash } from './app/state.js';
import { setWeights } from './app/weights.js';
import { i18nText, lang, pickLang, setLang, translatePage } from './i18n.js';

// The language: the link's `lang` (or the notebook's), else the browser's (i18n.js). Static texts
// follow as soon as its dictionary is there, and the switch works while the core loads; once the
// page is built, a switch also relabels every open mode.
// The page is attached by a call (attach) to a variable here, not set as a property of the object
// returned: Rollup 4 took such a `page: null`, reached only through the awaited return value, for
// never set, and left the relabel out of the built site (the switch changed the static texts only).
async function startLanguage(wanted = fromHash(location.hash).lang) {
  let page = null;
  await setLang(pickLang(wanted, navigator.languages));
  translatePage();
  const select = document.getElementById('lang-select');
  select.value = lang();
  select.addEventListener('change', async () => {
    await setLang(select.value);
    translatePage();
    if (page) relabel(page);
  });
  return { current: lang, attach(built) { page = built; } };
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
  // the threaded build where the page is cross-origin isolated (bindings/attention.mjs)
  const footer = document.getElementById('threads'), count = core.threads();
  footer.dataset.threads = count;
  i18nText(footer, count > 1 ? 'footer.threads.many' : 'footer.threads.one', { count });
}

// The WASM core (the small build: bindings/attention.mjs), or null (the status banner then says why).
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

// In a notebook's output, the module, weights and inputs the notebook gave (playground/notebook.js,
// loaded only there), or null.
async function notebookOf(doc) {
  if (!doc.getElementById('notebook-data')) return null;
  const nb = await import('./playground/notebook.js');
  return { nb, data: nb.notebookData(doc) };
}

async function main() {
  let page = null;
  exposeHooks(() => page);
  const inNotebook = await notebookOf(document);
  const notebook = inNotebook?.data;
  const [language, core] = await Promise.all([startLanguage(notebook?.lang), loadCore(notebook ? { wasmBinary: inNotebook.nb.notebookWasm(notebook) } : {})]);
  if (!core) return;
  const modules = core.modules();
  let link;
  try {
    link = notebook ? inNotebook.nb.notebookLink(notebook, modules.find((m) => m.id === notebook.scenario.module)) : readLink(location.hash, modules.map((m) => m.id));
  } catch (e) {
    showCoreStatus(null, e);
    return;
  }
  page = createPage(core, link.state);
  page.linkRead = link;
  page.language = language;
  language.attach(page);
  if (notebook) {
    page.notebook = { given: inNotebook.nb.notebookGiven(notebook), planGiven: inNotebook.nb.planGiven };
    document.body.classList.add('notebook');
    setWeights(page, inNotebook.nb.notebookWeights(core, notebook));
  }
  await openModes(page);
  document.body.dataset.ready = 'true';
}

main();
