// The whole page state as one declared schema: every control reads and writes a field here, and
// the state round-trips through the URL hash so any view is a shareable link. Module arguments
// live per module (config[moduleId][arg]) so switching modules and back keeps what was typed.
// presets.js holds named states, link.js reads and writes links; page.js owns the one live copy.
// Training mode (README "Training in the page") is `train` (the task) and the train* fields.

import { t } from './i18n.js';
import { TASK_IDS } from './train/tasks.js';

export const DEFAULT_SENTENCE = "the animal didn't cross the street because it was too tired";

export const schema = {
  text: { type: 'string', default: DEFAULT_SENTENCE },
  text2: { type: 'string', default: 'it was late' },
  tokenizer: { type: 'enum', values: ['word', 'char'], default: 'word' },
  module: { type: 'string', default: 'CausalMultiHeadAttention' },
  seed: { type: 'int', default: 123, min: 0, max: 2 ** 53 - 1 },
  trainmode: { type: 'bool', default: false },  // module.train(): dropout acts only then (legacy link: train=1)
  causal: { type: 'bool', default: true },      // modules with a mask input only
  pairing: { type: 'enum', values: ['one', 'batch', 'cross'], default: 'one' },
  source: { type: 'enum', values: ['embedding', 'table', 'randn', 'rand'], default: 'embedding' },
  table: { type: 'string', default: '' },       // a preset's own embedding table (presets.js)
  kv: { type: 'enum', values: ['same', 'separate'], default: 'same' },  // random K/V: one x_kv or two draws
  batch: { type: 'int', default: 2, min: 1, max: 256 },     // random inputs: B
  seqT: { type: 'int', default: 6, min: 1, max: 512 },      // random inputs: T (queries)
  seqS: { type: 'int', default: 6, min: 1, max: 512 },      // random inputs: S (keys/values)
  width: { type: 'int', default: 8, min: 1, max: 1024 },    // d for modules without a width argument
  config: { type: 'object', default: {} },
  weights: { type: 'string', default: '' },     // the name of a loaded safetensors file (never its data)
  backend: { type: 'enum', values: ['auto', 'wasm', 'webgpu'], default: 'auto' },   // auto: WebGPU when there is an adapter
  hide: { type: 'string', default: '' },        // lesson mode: controls hidden, comma-separated data-control names
  embed: { type: 'bool', default: false },      // compact page inside <attention-playground> (no page header)
  settings: { type: 'bool', default: false },   // narrow screens: the settings panel (backend, presets, module, sharing) open
  steps: { type: 'string', default: '' },       // lesson mode: the step cards shown, comma-separated step names ('' = all)
  step: { type: 'string', default: '' },        // the selected step (code panel); '' = the first softmax
  head: { type: 'int', default: 0, min: 0, max: 4095 },    // the attention view's head
  item: { type: 'int', default: 0, min: 0, max: 255 },     // the attention view's batch item
  lang: { type: 'enum', values: ['en', 'zh'], default: '' },  // UI language; '' (absent) = the browser's (i18n.js)
  grads: { type: 'bool', default: false },      // step cards show dL/d(step) beside the value (scenario.js lossFor)
  // Compare mode (compare.js): a second configuration B of the module on the same input, its
  // arguments A's with the overrides in config2 (per module, like config).
  compare: { type: 'bool', default: false },
  config2: { type: 'object', default: {} },
  // Training mode: the task trained in the page ('' = the playground alone) and its run's settings
  // (web/train/engine.js resolveConfig); 0 or '' = the task's own default.
  train: { type: 'enum', values: ['', ...TASK_IDS], default: '' },
  trainseed: { type: 'int', default: 1, min: 0, max: 4294967295 },
  trainwidth: { type: 'int', default: 0, min: 0, max: 512 },     // emb_dim
  trainheads: { type: 'int', default: 0, min: 0, max: 16 },      // num_heads
  trainlayers: { type: 'int', default: 0, min: 0, max: 6 },      // num_layers
  trainffn: { type: 'int', default: 0, min: 0, max: 2048 },      // ffn_dim
  trainopt: { type: 'enum', values: ['', 'SGD', 'Adam', 'AdamW'], default: '' },
  trainlr: { type: 'number', default: 0, min: 0, max: 10 },
  trainbatch: { type: 'int', default: 0, min: 0, max: 1024 },
  trainsteps: { type: 'int', default: 0, min: 0, max: 100000 },
  // the model trained: '' = the task's CausalTransformer, 'GPT' = nanoGPT's GPT of that size, with
  // the core GPT's Llama-style options (rope instead of wpe; num_kv_heads 0 = n_head; window 0 = none)
  trainmodel: { type: 'enum', values: ['', 'GPT'], default: '' },
  trainrope: { type: 'bool', default: false },
  trainkvheads: { type: 'int', default: 0, min: 0, max: 16 },
  trainwindow: { type: 'int', default: 0, min: 0, max: 64 },
  // Generate mode (README "Generate mode", web/generate-page.js): on/off, the seeded GPT (genseed,
  // genvocab characters, genblock, genlayers, genheads, genembd, genbias), the prompt and the
  // sampling (gentemp; gentopk / gentopp 0 = off), max new tokens and the KV cache.
  generate: { type: 'bool', default: false },
  genseed: { type: 'int', default: 1, min: 0, max: 4294967295 },
  genprompt: { type: 'string', default: 'to be or not to' },
  gentemp: { type: 'number', default: 1, min: 0, max: 5 },
  gentopk: { type: 'int', default: 0, min: 0, max: 100000 },
  gentopp: { type: 'number', default: 0, min: 0, max: 1 },
  genmax: { type: 'int', default: 16, min: 1, max: 1024 },
  gencache: { type: 'bool', default: true },
  genvocab: { type: 'int', default: 27, min: 2, max: 88 },   // generation.js CHARS
  genblock: { type: 'int', default: 32, min: 1, max: 1024 },
  genlayers: { type: 'int', default: 2, min: 1, max: 12 },
  genheads: { type: 'int', default: 2, min: 1, max: 16 },
  genembd: { type: 'int', default: 32, min: 1, max: 1024 },
  genbias: { type: 'bool', default: true },
  // the seeded GPT's Llama-style options (core GPT: rope instead of wpe, num_kv_heads 0 = n_head, window 0 = none)
  genrope: { type: 'bool', default: false },
  genkvheads: { type: 'int', default: 0, min: 0, max: 16 },
  genwindow: { type: 'int', default: 0, min: 0, max: 1024 },
};

// The training settings of a state, as engine.js resolveConfig takes them (the task's defaults
// fill what is 0 or ''); null outside training mode.
export function trainSettings(state) {
  if (!state.train) return null;
  const pick = (entries) => Object.fromEntries(entries.filter(([, v]) => v));
  const model = pick([['emb_dim', state.trainwidth], ['num_heads', state.trainheads], ['num_layers', state.trainlayers], ['ffn_dim', state.trainffn]]);
  const optimizer = pick([['optimizer', state.trainopt], ['lr', state.trainlr]]);
  const gpt = state.trainmodel === 'GPT' ? { module: 'GPT' } : {};
  if (gpt.module) Object.assign(model, pick([['rope', state.trainrope], ['num_kv_heads', state.trainkvheads], ['window', state.trainwindow]]));
  return { task: state.train, seed: state.trainseed, ...gpt, model, optimizer, ...pick([['batch', state.trainbatch], ['steps', state.trainsteps]]) };
}

// The fields a new task resets to its defaults (the seed stays).
export const TRAIN_OVERRIDES = ['trainwidth', 'trainheads', 'trainlayers', 'trainffn', 'trainopt', 'trainlr', 'trainbatch', 'trainsteps'];
// The model's kind and its GPT options: kept when the task changes.
export const TRAIN_MODEL_FIELDS = ['trainmodel', 'trainrope', 'trainkvheads', 'trainwindow'];

// Values for required arguments the core gives no default for: the page's default scenario is a
// d_model 64, 4-head model, small enough to recompute on every keystroke.
const ARG_DEFAULTS = {
  d_in: 64, d_out: 64, context_length: 32, dropout: 0.1, num_heads: 4, d_model: 64,
  dim_in: 64, dim_k: 64, dim_v: 64, emb_dim: 64, ffn_dim: 128, num_layers: 2, vocab_size: null,
};

export function defaultState() {
  const state = {};
  for (const [key, field] of Object.entries(schema)) state[key] = structuredClone(field.default);
  return state;
}

// The module's arguments as the form shows them: typed value, else the core's default, else ours.
export function moduleConfig(state, info) {
  const typed = state.config[info.id] ?? {};
  const config = {};
  for (const arg of info.args) {
    if (arg.name in typed) config[arg.name] = typed[arg.name];
    else if ('default' in arg) config[arg.name] = arg.default;
    else config[arg.name] = ARG_DEFAULTS[arg.name] ?? null;
  }
  return config;
}

const MAX_LINK_TEXT = 2000;  // characters of one string field in a link

// A link's `config`: {module: {argument: number | boolean | null}}; anything else is refused.
function validConfig(v) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  return Object.values(v).every((args) => typeof args === 'object' && args !== null && !Array.isArray(args)
    && Object.values(args).every((x) => x === null || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x))));
}

function parseField(field, raw) {
  switch (field.type) {
    case 'string': return raw.length <= MAX_LINK_TEXT ? raw : field.default;
    case 'bool': return raw === '1' || raw === 'true';
    case 'enum': return field.values.includes(raw) ? raw : field.default;
    case 'int': {
      const v = Number(raw);
      return Number.isInteger(v) && v >= field.min && v <= field.max ? v : field.default;
    }
    case 'number': {
      const v = raw.trim() === '' ? NaN : Number(raw);
      return Number.isFinite(v) && v >= field.min && v <= field.max ? v : field.default;
    }
    case 'object': try { const v = JSON.parse(raw); return validConfig(v) ? v : field.default; } catch { return field.default; }
    default: return field.default;
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
  const params = linkParams(hash);
  const problems = [];
  const quote = (s) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
  for (const [key, raw] of params) {
    const field = schema[key];
    if (key === 'preset') {
      if (!presets.includes(raw)) problems.push(t('link.presetUnknown', { value: quote(raw), list: presets.join(', ') }));
      continue;
    }
    if (!field) { problems.push(t('link.notField', { key: quote(key) })); continue; }
    if (field.type === 'string' && raw.length > MAX_LINK_TEXT) problems.push(t('link.tooLong', { key, n: raw.length, max: MAX_LINK_TEXT }));
    if (field.type === 'enum' && !field.values.includes(raw)) problems.push(t('link.enum', { key, value: quote(raw), list: field.values.filter(Boolean).join(', ') }));
    if (field.type === 'bool' && !['0', '1', 'true', 'false'].includes(raw)) problems.push(t('link.bool', { key, value: quote(raw) }));
    if (field.type === 'int') {
      const v = Number(raw);
      if (!Number.isInteger(v) || v < field.min || v > field.max) problems.push(t('link.int', { key, value: quote(raw), min: field.min, max: field.max }));
    }
    if (field.type === 'number' && parseField(field, raw) !== Number(raw)) problems.push(t('link.number', { key, value: quote(raw), min: field.min, max: field.max }));
    if (field.type === 'object') {
      let ok = false;
      try { ok = validConfig(JSON.parse(raw)); } catch { ok = false; }
      if (!ok) problems.push(t('link.config', { key, value: quote(raw) }));
    }
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
  for (const [key, field] of Object.entries(schema)) {
    if (params.has(key)) state[key] = parseField(field, params.get(key));
  }
  for (const key of ['config', 'config2']) {
    if (typeof state[key] !== 'object' || state[key] === null || Array.isArray(state[key])) state[key] = {};
  }
  return state;
}
