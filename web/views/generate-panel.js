// Generate mode's panel (index.html #gen-controls): the prompt, the sliders (temperature, top_k,
// top_p) with their readouts, the commands (Step, Run to N, Reset), the settings (each
// data-gen-field="<state key>"), the model line, the status line, the layer select and the KV
// cache's shape and bytes. It reports edits and commands; generate/mode.js turns them into state
// and worker messages, then calls update().
import { t } from '../i18n.js';
import { fillOptions, setText } from './dom-write.js';
import { clearErrors, showError } from './errors.js';

const $ = (id) => document.getElementById(id);
const SLIDERS = ['gentemp', 'gentopk', 'gentopp'];

// root: #gen-controls (with the section around it); onField(key, element), onSlide(key, value,
// done), onCommand(name), onLayer(layer).
export function createGenPanel(root, { onField, onSlide, onCommand, onLayer }) {
  for (const el of document.querySelectorAll('[data-gen-field]')) {
    el.addEventListener(el.dataset.genField === 'genprompt' ? 'input' : 'change', () => onField(el.dataset.genField, el));
  }
  for (const el of document.querySelectorAll('[data-gen-slider]')) {
    el.addEventListener('input', () => onSlide(el.dataset.genSlider, Number(el.value), false));
    el.addEventListener('change', () => onSlide(el.dataset.genSlider, Number(el.value), true));
  }
  for (const b of document.querySelectorAll('[data-gen-command]')) b.addEventListener('click', () => onCommand(b.dataset.genCommand));
  $('gen-layer').addEventListener('change', () => onLayer(Number($('gen-layer').value)));
  return {
    // v: {state (the fields' values), shown (the sliders', previewed while one moves), vocabSize,
    // modelText, fromFile, generated, maxNew, done, running, error, layers, layer, cache: {shape, bytes,
    // layers, perToken} | null}
    update(v) {
      for (const el of document.querySelectorAll('[data-gen-field]')) {
        const value = v.state[el.dataset.genField];
        if (el.type === 'checkbox') el.checked = !!value;
        else if (document.activeElement !== el && el.value !== String(value)) el.value = String(value);
      }
      $('gentopk').max = String(v.vocabSize);
      for (const key of SLIDERS) {
        if (document.activeElement !== $(key)) $(key).value = String(v.shown[key]);
        setText($(`${key}-out`), v.shown[key] ? String(v.shown[key]) : key === 'gentemp' ? t('gen.greedy') : t('gen.off'));
      }
      setText($('gen-run'), t('gen.run', { n: v.maxNew }));
      $('gen-model-fields').disabled = v.fromFile;
      setText($('gen-model'), v.modelText);
      for (const b of document.querySelectorAll('[data-gen-command]')) b.disabled = b.dataset.genCommand !== 'reset' && (v.done || v.running);
      setText($('gen-status'), v.error ? t('gen.statusError') : v.running ? t('gen.statusRunning', { n: v.generated, max: v.maxNew })
        : t('gen.status', { n: v.generated, max: v.maxNew }));
      const select = $('gen-layer');
      fillOptions(select, Array.from({ length: v.layers }, (_, l) => ({ value: String(l), text: t('gen.layerN', { l }) })));
      if (select.value !== String(v.layer)) select.value = String(v.layer);
      setText($('gen-cache-shape'), v.cache ? `(${v.cache.shape.join(', ')})` : t('gen.cacheOff'));
      setText($('gen-cache-bytes'), v.cache ? t('gen.cacheBytes', { bytes: v.cache.bytes.toLocaleString('en-US'), layers: v.cache.layers,
        perToken: v.cache.perToken.toLocaleString('en-US') }) : '');
    },
    showError: (control, message) => showError(root, control, message),
    clearErrors: () => clearErrors(root),
  };
}
