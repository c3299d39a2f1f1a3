// The module's output as numbers: one row per token (e.g. the context vector of each query),
// its first columns to 4 decimals, for the batch item chosen. The journey preset's row for
// "journey" reads 0.3061 0.8210, as in the book.

import { i18nText, t } from '../i18n.js';
import { formatValue, namedShape } from '../tensor.js';

const SHOWN = 8;

export function createOutputView(container) {
  const head = document.createElement('p');
  head.className = 'shape';
  const label = document.createElement('label');
  label.className = 'inline';
  const span = i18nText(document.createElement('span'), 'ui.batchItem');
  const select = document.createElement('select');
  label.append(span, select);
  const scroll = document.createElement('div');
  scroll.className = 'table-scroll';
  const table = document.createElement('table');
  table.className = 'numbers';
  table.dataset.testid = 'output-table';
  scroll.append(table);
  container.append(head, label, scroll);
  let data = null;
  let batch = 0;
  select.addEventListener('change', () => { batch = Number(select.value); draw(); });

  function draw() {
    const { output, dims, rowLabels, colLabels } = data;
    const shape = output.shape;
    const C = shape.at(-1);
    const T = shape.length >= 2 ? shape.at(-2) : 1;
    const B = shape.length >= 3 ? shape.slice(0, -2).reduce((a, b) => a * b, 1) : 1;
    batch = Math.min(batch, B - 1);
    if (select.options.length !== B) {
      select.replaceChildren(...Array.from({ length: B }, (_, b) => {
        const o = document.createElement('option');
        o.value = String(b);
        o.textContent = String(b);
        return o;
      }));
    }
    select.value = String(batch);
    label.hidden = B < 2;
    head.textContent = `${output.name} ${namedShape(dims, shape)}`;
    const n = Math.min(SHOWN, C);
    const tr = document.createElement('tr');
    const corner = document.createElement('th');
    corner.scope = 'col';
    corner.textContent = dims.at(-2) ?? '';
    tr.append(corner);
    for (let c = 0; c < n; c++) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = colLabels?.[c] ?? `[${c}]`;
      tr.append(th);
    }
    if (C > n) {
      const th = document.createElement('th');
      th.textContent = t('ui.more', { n: C - n });
      tr.append(th);
    }
    const thead = document.createElement('thead');
    thead.append(tr);
    const tbody = document.createElement('tbody');
    const labels = rowLabels?.[batch] ?? rowLabels?.[0];
    for (let t = 0; t < T; t++) {
      const row = document.createElement('tr');
      row.dataset.testid = 'output-row';
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = labels?.length === T ? labels[t] : String(t);
      row.append(th);
      const base = (batch * T + t) * C;
      for (let c = 0; c < n; c++) {
        const td = document.createElement('td');
        td.textContent = formatValue(output.data[base + c]);
        row.append(td);
      }
      if (C > n) row.append(document.createElement('td'));
      tbody.append(row);
    }
    table.replaceChildren(thead, tbody);
  }

  return {
    // d: {output: {name, shape, data}, dims, rowLabels (per batch), colLabels?}
    update(d) {
      data = d;
      draw();
    },
  };
}
