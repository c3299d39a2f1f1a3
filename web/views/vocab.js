// The vocabulary table: each distinct token, its id, and its embedding row (the first few of its
// d numbers) as nn.Embedding or the preset's table gives it. view-data.js collects the rows.

import { t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { tokenLabel } from '../tokenize.js';
import { setHidden, setText, syncRows } from './dom-write.js';
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
      setHidden(container, false);
      if (!v || v.tokens.length === 0) {
        setText(caption, v?.title ?? t('vocab.random'));
        tableScroll.label(t('vocab.heading'));
        table.replaceChildren();
        return;
      }
      setText(caption, v.title);
      tableScroll.label(v.title);
      const n = Math.min(SHOWN, v.d);
      const head = [t('vocab.id'), t('vocab.token'), ...Array.from({ length: n }, (_, i) => `e[${i}]`), ...(v.d > n ? [t('ui.more', { n: v.d - n })] : [])].map((text) => ['th', text, 'col']);
      const body = v.tokens.map((tok, id) => {
        const row = [['td', String(id)], ['th', tokenLabel(tok), 'row']];
        for (let i = 0; i < n; i++) row.push(['td', v.rows && (!v.seen || v.seen[id]) ? formatValue(v.rows[id * v.d + i]) : '']);
        if (v.d > n) row.push(['td', '']);
        return row;
      });
      syncRows(table.tHead ?? table.createTHead(), [head]);
      syncRows(table.tBodies[0] ?? table.createTBody(), body);
    },
  };
}
