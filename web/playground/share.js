// Share / Embed: a course author picks the controls to hide and the steps to show, and gets the
// view as a link, as an <attention-playground> element (two lines of HTML) and as an iframe.
// The choices go into the link only; the page itself stays as it is.

import { t } from '../i18n.js';
import { names, toHash } from '../app/state.js';
import { checkboxLabel } from '../views/dom-write.js';

// An HTML attribute, quoted so that JSON and apostrophes survive: the result is inert text.
function attr(name, value) {
  const text = String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return text.includes("'") ? ` ${name}="${text.replace(/"/g, '&quot;')}"` : ` ${name}='${text}'`;
}

// The state's hash as element attributes (state.js field names, lower-cased by HTML anyway);
// `config` holds the module's own arguments.
function elementSnippet(state, scriptUrl) {
  const params = new URLSearchParams(toHash({ ...state, embed: false }));
  let attrs = '';
  for (const [key, value] of params) {
    if (key === 'embed') continue;
    attrs += key === 'config' ? attr('config', JSON.stringify(JSON.parse(value)[state.module])) : attr(key.toLowerCase(), value);
  }
  return `<script type="module" src="${scriptUrl}"></script>\n<attention-playground${attrs}></attention-playground>`;
}

function iframeSnippet(link) {
  const src = link.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  return `<iframe src="${src}" title="Attention Playground" width="100%" height="900" loading="lazy"></iframe>`;
}

// els: {dialog, hide, steps (fieldsets), link, element, iframe (textareas), close}; get(): {state,
// controls: [{name, label}], steps: [step names]}. Returns {open()}, or null on a page with no
// address of its own (a notebook's <iframe srcdoc>, notebook.js): it has no link to give.
export function createShareDialog(els, get) {
  if (!URL.canParse('./', location.href)) return null;
  const page = new URL('./', location.href);
  const scriptUrl = new URL('attention-playground.js', page).href;
  let state = null;

  function chosen(fieldset) {
    return [...fieldset.querySelectorAll('input:checked')].map((i) => i.value);
  }

  function refresh() {
    const allSteps = [...els.steps.querySelectorAll('input')];
    const shown = chosen(els.steps);
    const lesson = {
      ...state,
      hide: chosen(els.hide).join(','),
      steps: shown.length === allSteps.length ? '' : shown.join(','),
    };
    const base = location.href.split('#')[0];
    els.link.value = `${base}#${toHash(lesson)}`;
    els.element.value = elementSnippet(lesson, scriptUrl);
    els.iframe.value = iframeSnippet(`${base}#${toHash({ ...lesson, embed: true })}`);
  }

  function open() {
    const now = get();
    state = now.state;
    const hidden = new Set(names(state.hide));
    els.hide.replaceChildren(els.hide.querySelector('legend'), ...now.controls.map((c) => checkboxLabel(c.name, c.label, hidden.has(c.name))));
    const only = new Set(names(state.steps));
    els.steps.replaceChildren(els.steps.querySelector('legend'), ...now.steps.map((s) => checkboxLabel(s, s, only.size === 0 || only.has(s))));
    refresh();
    els.dialog.showModal();
  }
  els.dialog.addEventListener('change', refresh);
  els.close.addEventListener('click', () => els.dialog.close());
  for (const button of els.dialog.querySelectorAll('[data-copy]')) {
    button.addEventListener('click', async () => {
      const box = els[button.dataset.copy];
      try { await navigator.clipboard.writeText(box.value); button.textContent = t('share.copied'); } catch { box.select(); }
    });
  }
  return { open };
}
