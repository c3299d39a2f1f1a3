// The whole page state as one declared schema: every control reads and writes a field here, and
// the state round-trips through the URL hash so any view is a shareable link. Module arguments
// live per module (config[moduleId][arg]) so switching modules and back keeps what was typed.
// presets.js holds named states; main.js owns the one live copy.

export const DEFAULT_SENTENCE = "the animal didn't cross the street because it was too tired";

export const schema = {
  text: { type: 'string', default: DEFAULT_SENTENCE },
  text2: { type: 'string', default: 'it was late' },
  tokenizer: { type: 'enum', values: ['word', 'char'], default: 'word' },
  module: { type: 'string', default: 'CausalMultiHeadAttention' },
  seed: { type: 'int', default: 123, min: 0, max: 2 ** 53 - 1 },
  train: { type: 'bool', default: false },      // module.train(): dropout acts only then
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
  weights: { type: 'string', default: '' },
  backend: { type: 'enum', values: ['auto', 'wasm', 'webgpu'], default: 'auto' },  // auto: WebGPU when there is an adapter     // the name of a loaded safetensors file (never its data)
};

// Values for required arguments the core gives no default for: the page's default scenario is a
// d_model 64, 4-head model, small enough to recompute on every keystroke.
export const ARG_DEFAULTS = {
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

function parseField(field, raw) {
  switch (field.type) {
    case 'string': return raw;
    case 'bool': return raw === '1' || raw === 'true';
    case 'enum': return field.values.includes(raw) ? raw : field.default;
    case 'int': {
      const v = Number(raw);
      return Number.isInteger(v) && v >= field.min && v <= field.max ? v : field.default;
    }
    case 'object': try { return JSON.parse(raw); } catch { return field.default; }
    default: return field.default;
  }
}

// Only fields that differ from the defaults go into the hash, so links stay short.
export function toHash(state) {
  const params = new URLSearchParams();
  for (const [key, field] of Object.entries(schema)) {
    const value = key === 'config' ? { [state.module]: state.config[state.module] ?? {} } : state[key];
    const text = field.type === 'bool' ? (value ? '1' : '0') : field.type === 'object' ? JSON.stringify(value) : String(value);
    const def = field.type === 'bool' ? (field.default ? '1' : '0') : field.type === 'object' ? '{}' : String(field.default);
    if (key === 'config' ? Object.keys(value[state.module]).length > 0 : text !== def) params.set(key, text);
  }
  return params.toString();
}

export function fromHash(hash) {
  const state = defaultState();
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  for (const [key, field] of Object.entries(schema)) {
    if (params.has(key)) state[key] = parseField(field, params.get(key));
  }
  if (typeof state.config !== 'object' || state.config === null || Array.isArray(state.config)) state.config = {};
  return state;
}
