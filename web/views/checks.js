// Prints the on-screen checks (../checks.js computes them): a heading per kind of check, one line
// per tensor with a tick or a cross and the actual numbers.

import { t } from '../i18n.js';

export function createChecksView(list) {
  return {
    update(groups) {
      list.replaceChildren(...groups.map((g) => {
        const li = document.createElement('li');
        const title = document.createElement('strong');
        title.textContent = g.title;
        const ul = document.createElement('ul');
        ul.append(...g.items.map((item) => {
          const row = document.createElement('li');
          row.className = item.ok === null ? 'note' : item.ok ? 'ok' : 'bad';
          row.dataset.testid = 'check';
          const mark = document.createElement('span');
          mark.className = 'mark';
          mark.textContent = item.ok === null ? 'ℹ' : item.ok ? '✓' : '✗';
          mark.setAttribute('aria-label', t(item.ok === null ? 'check.note' : item.ok ? 'check.passes' : 'check.fails'));
          row.append(mark, ` ${item.text}`);
          return row;
        }));
        li.append(title, ul);
        return li;
      }));
    },
  };
}
