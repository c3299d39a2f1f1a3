// The whole page state as one declared schema: every mode declares its fields (fields.js beside
// its code: playground/, train/, generate/, lab/) and they are merged here; every control reads and
// writes a field, and the state round-trips through the URL hash, so any view is a shareable link.
// fieldProblem() is the one validator of a field's value: links, the playground's form and the
// modes' panels all ask it. link.js reads and writes links; app/page.js owns the one live copy.
import { fields as generateFields } from '../generate/fields.js';
import { fields as labFields } from '../lab/fields.js';
import { fields as modelFields } from '../model/fields.js';
import { t } from '../i18n.js';
import { fields as playgroundFields } from '../playground/fields.js';
import { fields as trainFields } from '../train/fields.js';

export const schema = Object.freeze({ ...playgroundFields, ...trainFields, ...generateFields, ...labFields, ...modelFields });

export function defaultState() {
  const state = {};
  for (const [key, field] of Object.entries(schema)) state[key] = structuredClone(field.default);
  return state;
}

// Why `value` is not allowed in field `key`, or null. typed: a value typed in a form, which must
// also meet the field's typedMin / typedAbove (in a link, 0 may stand for "the default").
// {key: the i18n key of the rule, params: {min, max}}.
export function fieldProblem(key, value, { typed = false } = {}) {
  const field = schema[key];
  if (!field) throw new Error(`fieldProblem: '${key}' is not a field of the state`);
  if (field.type === 'enum') return field.values.includes(value) ? null : { key: 'field.enum', params: { list: field.values.filter(Boolean).join(', ') } };
  if (field.type !== 'int' && field.type !== 'number') return null;
  const above = typed && field.typedAbove !== undefined;
  const min = typed && field.typedMin !== undefined ? field.typedMin : above ? field.typedAbove : field.min;
  const ok = Number.isFinite(value) && (above ? value > min : value >= min) && value <= field.max && (field.type !== 'int' || Number.isInteger(value));
  if (ok) return null;
  return { key: field.type === 'int' ? 'field.int' : above ? 'field.numberAbove' : 'field.number', params: { min, max: field.max } };
}

// A field's name as its form labels it (the PyTorch argument, or the page's own words).
export function fieldLabel(key) {
  const field = schema[key];
  return field?.labelKey ? t(field.labelKey) : field?.label ?? key;
}

// The message for a problem of fieldProblem() beside a form's field: "<label>: <rule>".
export function fieldMessage(key, problem) {
  return t('field.message', { label: fieldLabel(key), rule: t(problem.key, problem.params) });
}

const MAX_LINK_TEXT = 2000;  // characters of one string field in a link

// A link's `config`: {module: {argument: number | boolean | null}}; anything else is refused.
function validConfig(v) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  return Object.values(v).every((args) => typeof args === 'object' && args !== null && !Array.isArray(args)
    && Object.values(args).every((x) => x === null || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x))));
}

// A link's text of field `key` as a value, or undefined when it is not one (with the rule broken).
function parseField(key, raw) {
  const field = schema[key];
  switch (field.type) {
    case 'string': return raw.length <= MAX_LINK_TEXT ? { value: raw } : { tooLong: true };
    case 'bool': return ['0', '1', 'true', 'false'].includes(raw) ? { value: raw === '1' || raw === 'true' } : { problem: { key: 'link.bool' } };
    case 'object': {
      let v = null;
      try { v = JSON.parse(raw); } catch { v = null; }
      return validConfig(v) ? { value: v } : { problem: { key: 'link.config' } };
    }
    default: {
      const value = field.type === 'enum' ? raw : raw.trim() === '' ? NaN : Number(raw);
      const problem = fieldProblem(key, value);
      return problem ? { problem } : { value };
    }
  }
}

// Links made before training mode said `train=1` (or true, 0, false) for the dropout flag, now
// `trainmode`: such a value is read as trainmode (unless the link has trainmode too), so old course
// links keep working. `train=<task id>` is training mode.
const LEGACY_TRAIN = { 1: true, true: true, 0: false, false: false };

// A link's parameters, with a legacy `train` rewritten as `trainmode`.
export function linkParams(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const legacy = LEGACY_TRAIN[params.get('train')];
  if (legacy !== undefined) {
    params.delete('train');
    if (!params.has('trainmode')) params.set('trainmode', legacy ? '1' : '0');
  }
  return params;
}

// What is wrong with a link's hash, one message per field (fromHash ignores those fields): unknown
// fields, values of the wrong type or range, over-long text. Messages quote at most 40 characters
// of the bad value; the page shows them as text, never as markup.
export function hashProblems(hash, { modules = null, presets = [] } = {}) {
  const problems = [];
  const quote = (s) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
  for (const [key, raw] of linkParams(hash)) {
    if (key === 'preset') {
      if (!presets.includes(raw)) problems.push(t('link.presetUnknown', { value: quote(raw), list: presets.join(', ') }));
      continue;
    }
    if (!schema[key]) { problems.push(t('link.notField', { key: quote(key) })); continue; }
    const { problem, tooLong } = parseField(key, raw);
    if (tooLong) problems.push(t('link.tooLong', { key, n: raw.length, max: MAX_LINK_TEXT }));
    if (problem) problems.push(t('link.problem', { key, value: quote(raw), rule: t(problem.key, problem.params) }));
    if (key === 'module' && modules && !modules.includes(raw)) problems.push(t('link.moduleUnknown', { value: quote(raw), list: modules.join(', ') }));
  }
  return problems;
}

// The names of a comma-separated field (hide, steps), blanks around them ignored.
export function names(value) {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

// Only fields that differ from the defaults go into the hash, so links stay short.
export function toHash(state) {
  const params = new URLSearchParams();
  for (const [key, field] of Object.entries(schema)) {
    const perModule = key === 'config' || key === 'config2';   // only the shown module's arguments
    const value = perModule ? { [state.module]: state[key][state.module] ?? {} } : state[key];
    const text = field.type === 'bool' ? (value ? '1' : '0') : field.type === 'object' ? JSON.stringify(value) : String(value);
    const def = field.type === 'bool' ? (field.default ? '1' : '0') : field.type === 'object' ? '{}' : String(field.default);
    if (perModule ? Object.keys(value[state.module]).length > 0 : text !== def) params.set(key, text);
  }
  return params.toString();
}

export function fromHash(hash) {
  const state = defaultState();
  const params = linkParams(hash);
  for (const key of Object.keys(schema)) {
    if (!params.has(key)) continue;
    const { value } = parseField(key, params.get(key));
    if (value !== undefined) state[key] = value;
  }
  return state;
}
