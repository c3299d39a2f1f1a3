// The "softmax of typed numbers" card (the page's first slice): type scores, see
// torch.softmax(scores, dim=-1) computed by the core, one bar per entry and the sum.

import { t } from '../i18n.js';

// "2, 1 0.1" -> [2, 1, 0.1]; throws an Error naming the first token that is not a number.
function parseNumbers(text) {
  const tokens = text.split(/[\s,]+/).filter(Boolean);
  if (tokens.length === 0) throw new Error(t('softmax.empty'));
  return tokens.map((token, i) => {
    const v = Number(token);
    if (!Number.isFinite(v)) throw new Error(t('softmax.notNumber', { token, i: i + 1 }));
    return v;
  });
}

// els: {input, rows (tbody), sum, error}; onResult(result) is told of each good result.
// Returns {recompute} (events.js calls it on a language switch).
export function createSoftmaxCard(core, els, onResult) {
  function draw(xs, ys) {
    els.rows.replaceChildren(...xs.map((x, i) => {
      const tr = document.createElement('tr');
      tr.dataset.testid = 'softmax-row';
      const bar = document.createElement('span');
      bar.style.width = `${(ys[i] * 100).toFixed(2)}%`;
      const cells = [String(x), ys[i].toFixed(6)].map((text) => {
        const td = document.createElement('td');
        td.textContent = text;
        return td;
      });
      const barCell = document.createElement('td');
      barCell.className = 'bar';
      barCell.append(bar);
      tr.append(...cells, barCell);
      return tr;
    }));
    const sum = ys.reduce((a, b) => a + b, 0);
    els.sum.textContent = `Σ softmax = ${sum.toFixed(6)} (|Σ − 1| = ${Math.abs(sum - 1).toExponential(1)})`;
  }

  function recompute() {
    try {
      const xs = parseNumbers(els.input.value);
      const result = core.run({ module: 'softmax', inputs: [{ name: 'x', shape: [xs.length], data: xs }] });
      draw(xs, Array.from(result.outputs[0].data));
      els.error.hidden = true;
      onResult(result);
    } catch (e) {
      els.error.textContent = e.message;  // text only, never HTML
      els.error.hidden = false;
    }
  }

  els.input.disabled = false;
  els.input.addEventListener('input', recompute);
  recompute();
  return { recompute };
}
