// The module's constructor arguments as a form, built from core.modules(): one field per argument,
// named as in the seed (d_in, num_heads, qkv_bias, ...), with its range and help text. Every
// keystroke reports the parsed value (NaN while a number is half-typed) through onChange.

import { lang, t, tCore } from '../i18n.js';

let uid = 0;

function parse(arg, input) {
  if (arg.type === 'bool') return input.checked;
  const text = input.value.trim();
  if (text === '') return arg.name === 'vocab_size' ? null : NaN;
  const v = Number(text);
  if (arg.type === 'int' && !Number.isInteger(v)) return NaN;
  return v;
}

// options.prefix: the fields' test id and element id prefix (a second form on the page, compare
// mode's, uses its own so every data-testid stays unique).
export function createArgsForm(container, onChange, { prefix = 'arg' } = {}) {
  let moduleId = null;
  let builtIn = null;   // the language the fields were built in: a switch rebuilds them
  const inputs = new Map();

  function build(info, config) {
    moduleId = info.id;
    builtIn = lang();
    inputs.clear();
    const fields = info.args.map((arg) => {
      const id = `${prefix}-${arg.name}-${++uid}`;
      const field = document.createElement('div');
      field.className = arg.type === 'bool' ? 'field check' : 'field';
      field.dataset.control = `arg:${arg.name}`;
      const label = document.createElement('label');
      label.htmlFor = id;
      const name = document.createElement('code');
      name.textContent = arg.name;
      label.append(name);
      const input = document.createElement('input');
      input.id = id;
      input.dataset.testid = `${prefix}-${arg.name}`;
      input.dataset.arg = arg.name;
      const help = document.createElement('span');
      help.className = 'hint';
      help.id = `${id}-help`;
      const range = arg.type === 'bool' ? '' : ` (${arg.min}…${arg.max})`;
      help.textContent = `${tCore(arg.help)}${range}`;
      input.setAttribute('aria-describedby', help.id);
      if (arg.type === 'bool') {
        input.type = 'checkbox';
        field.append(input, label, help);
      } else {
        input.type = 'text';
        input.inputMode = arg.type === 'int' ? 'numeric' : 'decimal';
        input.autocomplete = 'off';
        input.spellcheck = false;
        if (arg.name === 'vocab_size') input.placeholder = t('arg.auto');
        field.append(label, input, help);
      }
      input.addEventListener(arg.type === 'bool' ? 'change' : 'input', () => onChange(arg.name, parse(arg, input)));
      inputs.set(arg.name, { arg, input });
      return field;
    });
    container.replaceChildren(...fields);
    set(config);
  }

  // Writes values into the fields without disturbing the one being typed in.
  function set(config) {
    for (const [name, { arg, input }] of inputs) {
      const v = config[name];
      if (Object.is(parse(arg, input), v)) continue;
      if (arg.type === 'bool') input.checked = !!v;
      else if (document.activeElement !== input) input.value = v === null || v === undefined || Number.isNaN(v) ? '' : String(v);
    }
  }

  return {
    update(info, config) {
      if (info.id !== moduleId || builtIn !== lang()) build(info, config);
      else set(config);
    },
  };
}
