// Generate mode's bar chart (index.html #gen-probs): the next token's ten most probable ids after
// temperature / top_k / top_p, one bar each (a table: a screen reader reads token, id and
// probability); the token the next Step appends is marked.

import { i18nText, t } from '../i18n.js';

// update({bars: [{id, label, p}], drawn: id | null, caption: [key, params]})
export function createGenProbs(root) {
  const table = document.createElement('table');
  table.className = 'gen-probs-table';
  const caption = document.createElement('caption');
  const body = document.createElement('tbody');
  table.append(caption, body);
  root.append(table);
  return {
    update({ bars, drawn, caption: [key, params] }) {
      i18nText(caption, key, params);
      body.replaceChildren(...bars.map(({ id, label, p }) => {
        const tr = document.createElement('tr');
        tr.dataset.id = String(id);
        if (id === drawn) tr.className = 'drawn';
        const tok = document.createElement('th');
        tok.scope = 'row';
        tok.textContent = label;
        const idCell = document.createElement('td');
        idCell.textContent = String(id);
        const barCell = document.createElement('td');
        const bar = document.createElement('span');
        bar.className = 'gen-bar';
        bar.style.width = `${(p * 100).toFixed(1)}%`;
        barCell.className = 'gen-bar-cell';
        barCell.append(bar);
        const pCell = document.createElement('td');
        pCell.textContent = p.toFixed(4);
        pCell.dataset.value = String(p);
        if (id === drawn) pCell.title = t('gen.drawn');
        tr.append(tok, idCell, barCell, pCell);
        return tr;
      }));
    },
  };
}
