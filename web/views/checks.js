// Prints the on-screen checks (../checks.js computes them): a heading per kind of check, one line
// per tensor with a tick or a cross and the actual numbers. The lines are kept across redraws and
// only changed texts written (dom-write.js): a keystroke rewrites a few numbers, not the list.

import { t } from '../i18n.js';
import { fitChildren as fit, setAttr, setText } from './dom-write.js';

function group() {
  const li = document.createElement('li');
  li.append(document.createElement('strong'), document.createElement('ul'));
  return li;
}

function line() {
  const row = document.createElement('li');
  row.dataset.testid = 'check';
  const mark = document.createElement('span');
  mark.className = 'mark';
  row.append(mark, document.createTextNode(''));
  return row;
}

function setLine(row, item) {
  setAttr(row, 'class', item.ok === null ? 'note' : item.ok ? 'ok' : 'bad');
  const [mark, text] = row.childNodes;
  setText(mark, item.ok === null ? 'ℹ' : item.ok ? '✓' : '✗');
  setAttr(mark, 'aria-label', t(item.ok === null ? 'check.note' : item.ok ? 'check.passes' : 'check.fails'));
  if (text.data !== ` ${item.text}`) text.data = ` ${item.text}`;
}

export function createChecksView(list) {
  return {
    update(groups) {
      fit(list, groups.length, group).forEach((li, i) => {
        const [title, ul] = li.children;
        setText(title, groups[i].title);
        fit(ul, groups[i].items.length, line).forEach((row, k) => setLine(row, groups[i].items[k]));
      });
    },
  };
}
