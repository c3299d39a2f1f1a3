// The module's output as numbers: one row per token (e.g. the context vector of each query),
// its first columns to 4 decimals, for the batch item chosen. The journey preset's row for
// "journey" reads 0.3061 0.8210, as in the book.

import { i18nText, t } from '../i18n.js';
import { formatValue, namedShape } from '../tensor.js';
import { setHidden, setText, syncRows } from './dom-write.js';
import { createTableScroll } from './value-table.js';

const SHOWN = 8;

function cell(tag, text) {
  const el = document.createElement(tag);
  el.textContent = text;
  return el;
}

// The header row: the row dim, then the first columns (their labels or indices) and "n more".
function headRow(dims, colLabels, n, C) {
  const row = [['th', dims.at(-2) ?? '', 'col']];
  for (let c = 0; c < n; c++) row.push(['th', colLabels?.[c] ?? `[${c}]`, 'col']);
  if (C > n) row.push(['th', t('ui.more', { n: C - n })]);
  return row;
}

// One row per token of batch item `batch`: its label and its first n values.
function bodyRows(output, labels, batch, { T, C, n }) {
  const rows = [];
  for (let r = 0; r < T; r++) {
    const row = [['th', labels?.length === T ? labels[r] : String(r), 'row']];
    const base = (batch * T + r) * C;
    for (let c = 0; c < n; c++) row.push(['td', formatValue(output.data[base + c])]);
    if (C > n) row.push(['td', '']);
    rows.push(row);
  }
  return rows;
}

export function createOutputView(container) {
  const head = document.createElement('p');
  head.className = 'shape';
  const label = document.createElement('label');
  label.className = 'inline';
  const span = i18nText(document.createElement('span'), 'ui.batchItem');
  const select = document.createElement('select');
  label.append(span, select);
  const tableScroll = createTableScroll();
  const scroll = tableScroll.element;
  const table = document.createElement('table');
  table.className = 'numbers';
  table.dataset.testid = 'output-table';
  const thead = table.createTHead();
  const tbody = table.createTBody();
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
      select.replaceChildren(...Array.from({ length: B }, (_, b) => cell('option', String(b))));
      for (const o of select.options) o.value = o.textContent;
    }
    if (select.value !== String(batch)) select.value = String(batch);
    setHidden(label, B < 2);
    setText(head, `${output.name} ${namedShape(dims, shape)}`);
    tableScroll.label(head.textContent);
    const n = Math.min(SHOWN, C);
    syncRows(thead, [headRow(dims, colLabels, n, C)]);
    syncRows(tbody, bodyRows(output, rowLabels?.[batch] ?? rowLabels?.[0], batch, { T, C, n }), (tr) => { tr.dataset.testid = 'output-row'; });
  }

  return {
    // d: {output: {name, shape, data}, dims, rowLabels (per batch item), colLabels?}
    update(d) {
      data = d;
      draw();
    },
  };
}
