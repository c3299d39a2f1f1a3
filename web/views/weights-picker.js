// The trained-weights picker of the config panel (index.html #weights-drop): a file input and a
// drop zone for the .safetensors file and its vocabulary, a button back to the seeded weights, and
// the file's listing (name, dtype, shape per tensor) and vocabulary line. It reports files and the
// clear button; app/weights.js reads them, and render() shows what is loaded.
import { t } from '../i18n.js';

// els: {input, drop, clear, details, table, vocab, status}; onFiles(FileList), onClear().
export function createWeightsPicker(els, { onFiles, onClear }) {
  els.input.addEventListener('change', () => { if (els.input.files.length) onFiles(els.input.files); });
  els.drop.addEventListener('dragover', (e) => { e.preventDefault(); els.drop.classList.add('dragging'); });
  els.drop.addEventListener('dragleave', () => els.drop.classList.remove('dragging'));
  els.drop.addEventListener('drop', (e) => {
    e.preventDefault();
    els.drop.classList.remove('dragging');
    if (e.dataTransfer.files.length) onFiles(e.dataTransfer.files);
  });
  els.clear.addEventListener('click', () => {
    els.input.value = '';
    onClear();
  });
  return {
    // w: {name, tensors: [{name, dtype, shape}], vocab?, vocabName?} or null
    render(w) {
      els.clear.hidden = !w;
      els.details.hidden = !w;
      els.status.textContent = w ? t('weights.loaded', { name: w.name, n: w.tensors.length }) : '';
      els.vocab.textContent = w?.vocab
        ? t('weights.vocab', { name: w.vocabName, n: w.vocab.length, tokens: `${w.vocab.slice(0, 8).join(' ')}${w.vocab.length > 8 ? ' …' : ''}` })
        : '';
      const body = els.table.tBodies[0];
      body.replaceChildren();
      for (const tensor of w?.tensors ?? []) {
        const tr = body.insertRow();
        for (const text of [tensor.name, tensor.dtype, `[${tensor.shape.join(', ')}]`]) tr.insertCell().textContent = text;
      }
    },
  };
}
