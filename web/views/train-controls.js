// Training mode's panel (index.html #train-controls): the task select and its explanation, the
// buttons (Train, Pause, Step once, Reset, exports, Show in the playground), the numbers of the
// run, a polite status line, and the settings (each data-train-field="<state key>"). It reports
// edits and commands; train-page.js turns them into state and worker messages, then calls update().

import { i18nText, t } from '../i18n.js';
import { fillOptions, setText } from './dom-write.js';
import { clearErrors, showError } from './errors.js';

// root: #train-controls; onField(key, raw text): a setting changed (on `change`: a finished
// edit, so a half-typed number never restarts the run); onCommand(name): a data-command button.
export function createTrainControls(root, { onField, onCommand }) {
  const $ = (id) => root.querySelector(`#${id}`);
  const fields = [...root.querySelectorAll('[data-train-field]')];
  for (const el of fields) el.addEventListener('change', () => onField(el.dataset.trainField, el.type === 'checkbox' ? el.checked : el.value));
  const buttons = Object.fromEntries([...root.querySelectorAll('[data-command]')].map((b) => [b.dataset.command, b]));
  for (const [name, b] of Object.entries(buttons)) b.addEventListener('click', () => onCommand(name));
  const stats = { step: $('train-step-count'), loss: $('train-loss'), heldout: $('train-accuracy'), batch: $('train-batch-accuracy'), speed: $('train-speed') };
  const status = $('train-status');
  return {
    // tasks: [{id, nameKey}] in the select's order, named in the current language.
    fillTasks(tasks) {
      fillOptions($('train-task'), tasks.map(({ id, nameKey }) => ({ value: id, text: t(nameKey) })));
    },
    // v: {values: {stateKey: shown value}, explainKey, patternKey, enabled: {command: bool},
    //     stats: {step, loss, heldout, batch, speed} (texts), raw: {loss, heldout} (numbers), status (text)}
    update(v) {
      for (const el of fields) {
        if (el.type === 'checkbox') { el.checked = !!v.values[el.dataset.trainField]; continue; }
        const value = String(v.values[el.dataset.trainField] ?? '');
        if (el.value !== value && document.activeElement !== el) el.value = value;
      }
      // Task texts hold `code` spans; i18nText marks them for a language switch (translatePage).
      for (const [id, key] of [['train-explain', v.explainKey], ['train-pattern', v.patternKey]]) {
        if (key && $(id).dataset.i18n !== key) i18nText($(id), key);
      }
      for (const [name, b] of Object.entries(buttons)) b.disabled = !v.enabled[name];
      buttons.train.setAttribute('aria-pressed', String(!!v.running));
      for (const [k, el] of Object.entries(stats)) setText(el, v.stats[k]);
      stats.loss.dataset.value = String(v.raw.loss);
      stats.heldout.dataset.value = String(v.raw.heldout ?? '');
      setText(status, v.status);
    },
    showError: (key, message) => showError(root, key, message),
    clearErrors: () => clearErrors(root),
  };
}
