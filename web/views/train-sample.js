// The task's sample sequence at the step the scrubber shows: position by position the input
// token, the token the model should write next (where it can be known) and the one it predicts,
// right or wrong, as a table (a screen reader reads it as is). train-data.js sampleData makes the data.

import { i18nText, t } from '../i18n.js';
import { createTableScroll } from './value-table.js';

const ROWS = ['training.sampleInput', 'training.sampleTarget', 'training.samplePredicted'];

// Three rows of n cells, built once per length (a redraw then only changes texts).
function buildRows(body, n) {
  body.replaceChildren(...ROWS.map((key) => {
    const tr = document.createElement('tr');
    const th = i18nText(document.createElement('th'), key);
    th.scope = 'row';
    tr.append(th, ...Array.from({ length: n }, () => document.createElement('td')));
    return tr;
  }));
}

const setCell = (td, text, className) => {
  if (td.textContent !== text) td.textContent = text;
  if (td.className !== className) td.className = className;
};

export function createTrainSample(container) {
  const heading = i18nText(document.createElement('h3'), 'training.sampleHeading');
  const tableScroll = createTableScroll();
  const scroll = tableScroll.element;
  const table = document.createElement('table');
  table.className = 'train-sample';
  table.dataset.testid = 'train-sample';
  const caption = document.createElement('caption');
  const body = document.createElement('tbody');
  table.append(caption, body);
  scroll.append(table);
  container.append(heading, scroll);
  return {
    // d: sampleData (train-data.js) or null
    update(d) {
      if (!d) { body.replaceChildren(); caption.textContent = ''; return; }
      if (body.rows[0]?.cells.length !== d.rows.length + 1) buildRows(body, d.rows.length);
      caption.textContent = t('training.sampleCaption', { step: d.step, right: d.right, n: d.scored });
      tableScroll.label(t('training.sampleHeading'));
      const [input, target, predicted] = body.rows;
      d.rows.forEach((r, i) => {
        setCell(input.cells[i + 1], r.input, '');
        setCell(target.cells[i + 1], r.target ?? '·', '');
        const mark = r.target === null ? '' : r.correct ? '✓' : '✗';
        setCell(predicted.cells[i + 1], `${r.predicted}${mark}`, r.target === null ? 'unscored' : r.correct ? 'right' : 'wrong');
      });
    },
  };
}
