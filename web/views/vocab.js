// The vocabulary table: each distinct token, its id, and its embedding row (the first few of its
// d numbers) as nn.Embedding or the preset's table gives it. view-data.js collects the rows.

import { t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { tokenLabel } from '../tokenize.js';
import { createTableScroll } from './value-table.js';

const SHOWN = 6;

export function createVocabView(container) {
  const caption = document.createElement('p');
  caption.className = 'hint';
  const tableScroll = createTableScroll();
  const scroll = tableScroll.element;
  const table = document.createElement('table');
  table.className = 'vocab';
  table.dataset.testid = 'vocab-table';
  scroll.append(table);
  container.append(caption, scroll);
  return {
    // v: {title, tokens, rows (V×d Float32Array or null), d, seen? (per id: its row is known)} or
    // null (random inputs: no vocabulary), or a title without tokens (a notebook's float inputs).
    // A row nobody looked up (an unused <pad>) stays blank.
    update(v) {
      container.hidden = false;
      if (!v || v.tokens.length === 0) {
        caption.textContent = v?.title ?? t('vocab.random');
        tableScroll.label(t('vocab.heading'));
        table.replaceChildren();
        return;
      }
      caption.textContent = v.title;
      tableScroll.label(v.title);
      const n = Math.min(SHOWN, v.d);
      const head = document.createElement('tr');
      for (const text of [t('vocab.id'), t('vocab.token'), ...Array.from({ length: n }, (_, i) => `e[${i}]`), ...(v.d > n ? [t('ui.more', { n: v.d - n })] : [])]) {
        const th = document.createElement('th');
        th.scope = 'col';
        th.textContent = text;
        head.append(th);
      }
      const body = v.tokens.map((tok, id) => {
        const tr = document.createElement('tr');
        const idCell = document.createElement('td');
        idCell.textContent = String(id);
        const tokCell = document.createElement('th');
        tokCell.scope = 'row';
        tokCell.textContent = tokenLabel(tok);
        tr.append(idCell, tokCell);
        for (let i = 0; i < n; i++) {
          const td = document.createElement('td');
          td.textContent = v.rows && (!v.seen || v.seen[id]) ? formatValue(v.rows[id * v.d + i]) : '';
          tr.append(td);
        }
        if (v.d > n) tr.append(document.createElement('td'));
        return tr;
      });
      const thead = document.createElement('thead');
      thead.append(head);
      const tbody = document.createElement('tbody');
      tbody.append(...body);
      table.replaceChildren(thead, tbody);
    },
  };
}
