// The token chips under a text box: each token as typed (set as text, never HTML) with its id in
// the vocabulary. main.js gives it the tokens from tokenize.js and the ids from the plan.

import { PAD, tokenLabel } from '../tokenize.js';

export function createChips(list) {
  let key = '';
  return {
    // tokens: strings; ids: numbers or null (no vocabulary yet); padTo: pad chips up to this length
    update(tokens, ids, padTo = tokens.length) {
      const next = `${tokens.join('\u0000')}|${ids?.join(',') ?? ''}|${padTo}`;
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
  const t = document.createElement('span');
  t.className = 'chip-text';
  t.textContent = text;
  li.append(t);
  if (id != null) {
    const sub = document.createElement('span');
    sub.className = 'chip-id';
    sub.textContent = String(id);
    sub.setAttribute('aria-label', `id ${id}`);
    li.append(sub);
  }
  return li;
}
