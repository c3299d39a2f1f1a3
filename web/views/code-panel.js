// The code panel: the selected step's PyTorch line (the seed's code) and the C++ call that computed
// it in the core, each with a copy button. Step cards select a step (step-card.js, "Code").
// The captions around the code are in the page's language (i18n.js); the code itself is not.

import { i18nText, t } from '../i18n.js';
import { setAttr, setText } from './dom-write.js';

// titleKey: the message naming the block ('code.python', 'code.cpp').
function block(titleKey) {
  const wrap = document.createElement('div');
  wrap.className = 'code-block';
  const head = document.createElement('div');
  head.className = 'code-head';
  const h = i18nText(document.createElement('h3'), titleKey);
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'small';
  i18nText(button, 'code.copy');
  head.append(h, button);
  const pre = document.createElement('pre');
  const code = document.createElement('code');
  pre.append(code);
  wrap.append(head, pre);
  button.addEventListener('click', () => copy(code.textContent, button));
  // The button's label names the block in the current language.
  const relabel = () => setAttr(button, 'aria-label', t('code.copyLine', { title: t(titleKey) }));
  relabel();
  return { wrap, code, relabel };
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard permission (http, headless): select the text so Ctrl+C works.
    const range = document.createRange();
    range.selectNodeContents(button.closest('.code-block').querySelector('code'));
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  button.textContent = t('code.copied');
  setTimeout(() => { button.textContent = t('code.copy'); }, 1200);
}

export function createCodePanel(container) {
  const title = document.createElement('p');
  title.className = 'code-title';
  const py = block('code.python');
  const cpp = block('code.cpp');
  py.code.dataset.testid = 'code-python';
  cpp.code.dataset.testid = 'code-cpp';
  container.append(title, py.wrap, cpp.wrap);
  return {
    // Scrolls the panel's card into view (a step's "Code" button was pressed).
    reveal: () => container.closest('section')?.scrollIntoView({ block: 'nearest' }),
    // step: {name, code, cpp} or null; index: its position in the pipeline
    update(step, index) {
      py.relabel();
      cpp.relabel();
      if (!step) {
        setText(title, t('code.none'));
        setText(py.code, '');
        setText(cpp.code, '');
        return;
      }
      setText(title, t('code.step', { n: index + 1, name: step.name }));
      setText(py.code, step.code);
      setText(cpp.code, step.cpp);
    },
  };
}
