// The page: loads the core (bindings/attention.mjs), then recomputes on every keystroke.
// Views take data and draw; this file wires the input to the core and the views.
import { loadAttention } from '../bindings/attention.mjs';

const $ = (id) => document.getElementById(id);

// "2, 1 0.1" -> [2, 1, 0.1]; throws an Error naming the first token that is not a number.
export function parseNumbers(text) {
  const tokens = text.split(/[\s,]+/).filter(Boolean);
  if (tokens.length === 0) throw new Error('type at least one number');
  return tokens.map((t, i) => {
    const v = Number(t);
    if (!Number.isFinite(v)) throw new Error(`"${t}" (item ${i + 1}) is not a finite number`);
    return v;
  });
}

function drawSoftmax(xs, ys) {
  const rows = $('rows');
  rows.replaceChildren(...xs.map((x, i) => {
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
  $('sum').textContent = `Σ softmax = ${sum.toFixed(6)} (|Σ − 1| = ${Math.abs(sum - 1).toExponential(1)})`;
}

function recompute(core) {
  const error = $('error');
  try {
    const xs = parseNumbers($('numbers').value);
    const result = core.run({ module: 'softmax', inputs: [{ name: 'x', shape: [xs.length], data: xs }] });
    drawSoftmax(xs, Array.from(result.outputs[0].data));
    error.hidden = true;
    window.playground.last = result;
  } catch (e) {
    error.textContent = e.message;  // text only, never HTML
    error.hidden = false;
  }
}

async function main() {
  const status = $('status');
  window.playground = { last: null, result: () => window.playground.last };
  try {
    const core = await loadAttention();
    status.textContent = 'Ready';
    status.classList.add('ready');
    $('version').textContent = `core ${core.version()} · kernels ${core.kernels()}`;
    const input = $('numbers');
    input.disabled = false;
    input.addEventListener('input', () => recompute(core));
    recompute(core);
    document.body.dataset.ready = 'true';
  } catch (e) {
    status.textContent = `The WebAssembly core could not be loaded: ${e.message}`;
    status.classList.add('failed');
  }
}

main();
