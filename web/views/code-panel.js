// The code panel: the selected step's PyTorch line (the seed's code) and the C++ call that computed
// it in the core, each with a copy button. Step cards select a step (step-card.js, "Code").

function block(title) {
  const wrap = document.createElement('div');
  wrap.className = 'code-block';
  const head = document.createElement('div');
  head.className = 'code-head';
  const h = document.createElement('h3');
  h.textContent = title;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'small';
  button.textContent = 'Copy';
  button.setAttribute('aria-label', `Copy the ${title} line`);
  head.append(h, button);
  const pre = document.createElement('pre');
  const code = document.createElement('code');
  pre.append(code);
  wrap.append(head, pre);
  button.addEventListener('click', () => copy(code.textContent, button));
  return { wrap, code };
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
  button.textContent = 'Copied';
  setTimeout(() => { button.textContent = 'Copy'; }, 1200);
}

export function createCodePanel(container) {
  const title = document.createElement('p');
  title.className = 'code-title';
  const py = block('PyTorch (the seed)');
  const cpp = block('C++ (the core)');
  py.code.dataset.testid = 'code-python';
  cpp.code.dataset.testid = 'code-cpp';
  container.append(title, py.wrap, cpp.wrap);
  return {
    // step: {name, code, cpp} or null; index: its position in the pipeline
    update(step, index) {
      if (!step) {
        title.textContent = 'This module traced no steps.';
        py.code.textContent = cpp.code.textContent = '';
        return;
      }
      title.textContent = `Step ${index + 1}: ${step.name}`;
      if (py.code.textContent !== step.code) py.code.textContent = step.code;
      if (cpp.code.textContent !== step.cpp) cpp.code.textContent = step.cpp;
    },
  };
}
