// The token chips under a text box: each token as typed (set as text, never HTML) with its id in
// the vocabulary. page.js gives it the tokens and ids (view-data.js chipsData, from the plan).

import { lang, t } from '../i18n.js';
import { PAD, tokenLabel } from '../tokenize.js';
import { setAttr, setHidden, setText } from './dom-write.js';

export function createChips(list) {
  let key = '';
  return {
    // tokens: strings; ids: numbers or null (no vocabulary yet); padTo: pad chips up to this length;
    // hidden: no such sentence in this state (its box is hidden too)
    update(tokens, ids, padTo = tokens.length, hidden = false) {
      setHidden(list, hidden);
      const next = `${tokens.join('\u0000')}|${ids?.join(',') ?? ''}|${padTo}|${lang()}`;
      if (next === key) return;
      key = next;
      const chips = tokens.map((tok, i) => ({ text: tokenLabel(tok), id: ids?.[i] ?? null, pad: false }));
      for (let i = tokens.length; i < padTo; i++) chips.push({ text: PAD, id: null, pad: true });
      // Chips already there are reused: typing inside a word changes one chip's text, not the list.
      while (list.children.length > chips.length) list.lastElementChild.remove();
      chips.forEach((c, i) => setChip(list.children[i] ?? list.appendChild(document.createElement('li')), c));
    },
  };
}

// One chip: its token as text and, when known, its id (a span of its own, read out as "id n").
function setChip(li, { text, id, pad }) {
  setAttr(li, 'class', pad ? 'chip pad' : 'chip');
  setAttr(li, 'data-testid', pad ? 'pad' : 'token');
  let [label, sub] = li.children;
  if (!label) {
    label = li.appendChild(document.createElement('span'));
    label.className = 'chip-text';
  }
  setText(label, text);
  if (id == null) {
    sub?.remove();
    return;
  }
  if (!sub) {
    sub = li.appendChild(document.createElement('span'));
    sub.className = 'chip-id';
  }
  setText(sub, String(id));
  setAttr(sub, 'aria-label', t('chip.id', { id }));
}
