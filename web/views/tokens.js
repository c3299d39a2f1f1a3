// The token chips under a text box: each token as typed (set as text, never HTML) with its id in
// the vocabulary. page.js gives it the tokens and ids (view-data.js chipsData, from the plan).

import { lang, t } from '../i18n.js';
import { PAD, tokenLabel } from '../tokenize.js';

export function createChips(list) {
  let key = '';
  return {
    // tokens: strings; ids: numbers or null (no vocabulary yet); padTo: pad chips up to this length;
    // hidden: no such sentence in this state (its box is hidden too)
    update(tokens, ids, padTo = tokens.length, hidden = false) {
      list.hidden = hidden;
      const next = `${tokens.join('\u0000')}|${ids?.join(',') ?? ''}|${padTo}|${lang()}`;
      if (next === key) return;
      key = next;
      const chips = tokens.map((t, i) => chip(tokenLabel(t), ids?.[i]));
      for (let i = tokens.length; i < padTo; i++) chips.push(chip(PAD, null, 'pad'));
      list.replaceChildren(...chips);
    },
  };
}

function chip(text, id, extra = '') {
  const li = document.createElement('li');
  li.className = `chip ${extra}`.trim();
  li.dataset.testid = extra === 'pad' ? 'pad' : 'token';
  const label = document.createElement('span');
  label.className = 'chip-text';
  label.textContent = text;
  li.append(label);
  if (id != null) {
    const sub = document.createElement('span');
    sub.className = 'chip-id';
    sub.textContent = String(id);
    sub.setAttribute('aria-label', t('chip.id', { id }));
    li.append(sub);
  }
  return li;
}
