// The table alternative to a heatmap, for screen readers and for copying numbers: a <details>
// that builds its <table> only while open (a table per step on every keystroke would cost more
// than the whole recompute). heatmap.js draws the same slice.

import { i18nText, t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { setAttr } from './dom-write.js';

const MAX_CELLS = 4096;

// The box a wide table scrolls sideways in: focusable, so that the keyboard scrolls it too, and
// named (label: the table's caption) for the screen reader that lands on it. Every view's tables use it.
export function createTableScroll() {
  const scroll = document.createElement('div');
  scroll.className = 'table-scroll';
  scroll.tabIndex = 0;
  scroll.setAttribute('role', 'group');
  return { element: scroll, label: (caption) => setAttr(scroll, 'aria-label', t('table.scroll', { caption })) };
}

// summaryKey: the message (i18n.js) the <summary> shows.
export function createValueTable(summaryKey = 'table.values') {
  const details = document.createElement('details');
  details.className = 'value-table';
  const sum = document.createElement('summary');
  i18nText(sum, summaryKey);
  const scroll = createTableScroll();
  const holder = scroll.element;
  details.append(sum, holder);
  let data = null;
  let built = null;

  function build() {
    if (!data || built === data) return;
    built = data;
    const { slice, rowLabels, colLabels, caption, masked } = data;
    const cols = Math.min(slice.cols, Math.max(1, Math.floor(MAX_CELLS / slice.rows)));
    const table = document.createElement('table');
    const cap = document.createElement('caption');
    cap.textContent = cols < slice.cols ? t('table.firstColumns', { caption, cols, total: slice.cols }) : caption;
    const head = document.createElement('tr');
    const corner = document.createElement('th');
    corner.scope = 'col';
    corner.textContent = data.corner ?? '';
    head.append(corner);
    for (let c = 0; c < cols; c++) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = colLabels ? colLabels[c] : String(c);
      head.append(th);
    }
    const thead = document.createElement('thead');
    thead.append(head);
    const tbody = document.createElement('tbody');
    for (let r = 0; r < slice.rows; r++) {
      const tr = document.createElement('tr');
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = rowLabels ? rowLabels[r] : String(r);
      tr.append(th);
      for (let c = 0; c < cols; c++) {
        const td = document.createElement('td');
        const v = slice.data[r * slice.cols + c];
        td.textContent = masked?.(r, c) ? t('ui.masked', { text: formatValue(v) }) : formatValue(v);
        tr.append(td);
      }
      tbody.append(tr);
    }
    table.append(cap, thead, tbody);
    scroll.label(cap.textContent);
    holder.replaceChildren(table);
  }

  details.addEventListener('toggle', () => { if (details.open) build(); });

  return {
    element: details,
    // data: {slice, rowLabels?, colLabels?, caption, corner?, masked?(r, c)}
    update(next) {
      data = next;
      if (details.open) build();
    },
  };
}
