// The config panel (index.html #config): the static fields (each data-field="<state key>"), the
// module's argument form (views/config-form.js), inline errors and lesson-mode hiding.
// controlView() derives from state + module what is shown and how it is labelled (pure); the
// panel writes that into the DOM and reports edits (events.js wires them to page.js).

import { t, tCore } from '../i18n.js';
import { PageError, describeModule, isRandom, pairingOf } from './scenario.js';
import { fieldMessage, fieldProblem, names, schema } from '../app/state.js';
import { moduleConfig } from './fields.js';
import { createArgsForm } from '../views/config-form.js';
import { fillOptions } from '../views/dom-write.js';
import { clearErrors, showError } from '../views/errors.js';

// What the panel shows for this state and module: every control's visibility, the labels of the
// text boxes, the causal box and the notes. Pure.
export function controlView(state, info) {
  const mod = describeModule(info);
  const random = mod.kind !== 'ids' && isRandom(state);
  const pairing = pairingOf(mod, state.pairing);
  const show = {
    text: !random,
    text2: !random && pairing !== 'one',
    tokenizer: !random,
    source: mod.kind !== 'ids',
    pairing: !random && mod.pairings.length > 1,
    kv: random && mod.kind === 'qkv',
    batch: random && mod.rank >= 3,
    seqT: random,
    seqS: random && mod.kind !== 'x',
    width: !mod.widthArg && mod.kind !== 'ids',
    causal: true,
    trainmode: true,
    grads: true,
    seed: true,
  };
  const text2Cross = mod.kind === 'ids' ? 'text2.target' : mod.kind === 'decoder' ? 'text2.encoder' : 'text2.kv';
  return {
    mod, random, pairing, show,
    textLabel: pairing !== 'cross' ? 'tokens.sentence' : mod.kind === 'ids' ? 'text1.source' : 'text1.queries',
    text2Label: { batch: 'text2.batch', cross: text2Cross }[pairing] ?? null,
    causal: {
      disabled: !mod.mask,
      checked: mod.builtinCausal || (!!mod.mask && state.causal),
      note: mod.builtinCausal ? 'causal.builtin' : mod.mask ? (mod.mask.maskedValue === 0 ? 'causal.seed000' : 'causal.seed003') : 'causal.none',
    },
    trainNote: info.dropout ? 'train.dropout' : 'train.noDropout',
    gradsNote: mod.kind === 'ids' ? 'grads.next' : 'grads.sum',
  };
}

// The page's own whole-number fields (seed, random shapes, width) shown are checked here, by the
// one validator (app/state.js); the module's arguments are checked by the core, which names the rule.
export function checkPageFields(state, show) {
  for (const key of ['seed', 'batch', 'seqT', 'seqS', 'width']) {
    if (show[key] === false) continue;
    const problem = fieldProblem(key, state[key]);
    if (problem) throw new PageError(fieldMessage(key, problem), key);
  }
}

function readControl(el) {
  if (el.type === 'checkbox') return el.checked;
  if (schema[el.dataset.field].type === 'int') return el.value.trim() === '' ? NaN : Number(el.value);
  return el.value;
}

// The static fields' values, without disturbing the one being typed in.
function writeFields(panel, state) {
  for (const el of panel.querySelectorAll('[data-field]')) {
    const key = el.dataset.field;
    if (key === 'causal' || document.activeElement === el) continue;
    if (el.type === 'checkbox') el.checked = !!state[key];
    else if (el.type === 'radio') el.checked = el.value === state[key];
    else if (el.value !== String(state[key])) el.value = Number.isNaN(state[key]) ? '' : String(state[key]);
  }
}

const $ = (id) => document.getElementById(id);

function writeView(panel, view, info) {
  for (const [control, shown] of Object.entries(view.show)) {
    const field = panel.querySelector(`[data-control="${control}"]`);
    if (field) field.hidden = !shown;
  }
  $('random-note').hidden = !view.random;
  $('chips-hint').hidden = view.random;
  if (view.text2Label) $('label-text2').textContent = t(view.text2Label);
  $('label-text').textContent = t(view.textLabel);
  for (const o of $('pairing').options) o.disabled = !view.mod.pairings.includes(o.value);
  $('pairing').value = view.pairing;
  const causal = $('causal');
  causal.disabled = view.causal.disabled;
  causal.checked = view.causal.checked;
  $('causal-note').textContent = t(view.causal.note);
  $('trainmode-note').textContent = t(view.trainNote);
  $('grads-note').textContent = t(view.gradsNote);
  $('module-summary').textContent = tCore(info.summary);
}

// panel: the #config element; modules: core.modules(); onField(key, value): a static field was
// edited; onArg(name, value): a module argument was (NaN while a number is half-typed).
export function createControls(panel, modules, { onField, onArg }) {
  const argsForm = createArgsForm($('args'), onArg);
  for (const el of panel.querySelectorAll('[data-field]')) {
    const event = el.type === 'checkbox' || el.type === 'radio' || el.tagName === 'SELECT' ? 'change' : 'input';
    el.addEventListener(event, () => {
      if (el.type !== 'radio' || el.checked) onField(el.dataset.field, readControl(el));
    });
  }
  return {
    // The module select's options, in the current language.
    fillModules() {
      fillOptions($('module'), modules.map((m) => ({
        value: m.id, text: t(m.seed_name !== m.id ? 'module.optionNamed' : 'module.option', { id: m.id, seed: m.seed, name: m.seed_name }),
      })));
    },
    render(state, info, view) {
      writeView(panel, view, info);
      writeFields(panel, state);
      argsForm.update(info, moduleConfig(state, info));
    },
    // Lesson mode: the course author's hidden controls (state.hide); argument fields are rebuilt
    // when the module changes, so this runs after every draw.
    hideAuthorControls(hide) {
      // `train` named the dropout box before training mode (state.js LEGACY_TRAIN): still hides it.
      const hidden = new Set(names(hide).map((name) => (name === 'train' ? 'trainmode' : name)));
      for (const field of panel.querySelectorAll('[data-control]')) {
        const name = field.dataset.control;
        field.classList.toggle('author-hidden', hidden.has(name) || hidden.has(name.replace(/^arg:/, '')));
      }
    },
    // The controls a lesson can hide, as the Share / Embed dialog lists them: [{name, label}].
    list: () => [...panel.querySelectorAll('[data-control]')].map((field) => ({
      name: field.dataset.control.replace(/^arg:/, ''),
      label: (field.querySelector('label, legend')?.textContent ?? field.dataset.control).trim().replace(/\s+/g, ' '),
    })),
    showError: (control, message) => showError(panel, control, message),
    clearErrors: () => clearErrors(panel),
  };
}


