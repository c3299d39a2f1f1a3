// The playground's fields of the one state (app/state.js assembles every mode's): the sentences and
// how they become inputs, the module and its arguments (per module: switching modules and back
// keeps what was typed), the view (step, head, batch item), lesson and embed switches, compare mode.
// Plus moduleConfig: the arguments the form shows, typed or default.

export const DEFAULT_SENTENCE = "the animal didn't cross the street because it was too tired";

export const fields = {
  text: { type: 'string', default: DEFAULT_SENTENCE },
  text2: { type: 'string', default: 'it was late' },
  tokenizer: { type: 'enum', values: ['word', 'char'], default: 'word' },
  module: { type: 'string', default: 'CausalMultiHeadAttention' },
  seed: { type: 'int', default: 123, min: 0, max: 2 ** 53 - 1, label: 'torch.manual_seed' },
  trainmode: { type: 'bool', default: false },  // module.train(): dropout acts only then (legacy link: train=1)
  causal: { type: 'bool', default: true },      // modules with a mask input only
  pairing: { type: 'enum', values: ['one', 'batch', 'cross'], default: 'one' },
  source: { type: 'enum', values: ['embedding', 'table', 'randn', 'rand'], default: 'embedding' },
  table: { type: 'string', default: '' },       // a preset's own embedding table (presets.js)
  kv: { type: 'enum', values: ['same', 'separate'], default: 'same' },  // random K/V: one x_kv or two draws
  batch: { type: 'int', default: 2, min: 1, max: 256, labelKey: 'random.batch' },     // random inputs: B
  seqT: { type: 'int', default: 6, min: 1, max: 512, labelKey: 'random.seqT' },      // random inputs: T (queries)
  seqS: { type: 'int', default: 6, min: 1, max: 512, labelKey: 'random.seqS' },      // random inputs: S (keys/values)
  width: { type: 'int', default: 8, min: 1, max: 1024, labelKey: 'random.width' },   // d for modules without a width argument
  config: { type: 'object', default: {} },
  // The name of the loaded safetensors file (never its data: app/weights.js keeps the bytes, set
  // with setWeights, the one setter every mode reads through).
  weights: { type: 'string', default: '' },
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
};

// Values for required arguments the core gives no default for: the page's default scenario is a
// d_model 64, 4-head model, small enough to recompute on every keystroke.
const ARG_DEFAULTS = {
  d_in: 64, d_out: 64, context_length: 32, dropout: 0.1, num_heads: 4, d_model: 64,
  dim_in: 64, dim_k: 64, dim_v: 64, emb_dim: 64, ffn_dim: 128, num_layers: 2, vocab_size: null,
};

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
