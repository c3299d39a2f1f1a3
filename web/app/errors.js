// The one map from an error's field to the control it is shown beside, for every mode. The core
// names the scenario field an error is about (core/SCENARIO.md "Errors": "config.num_heads",
// "inputs.mask", "generate.top_k", ...), training's engine names its settings' ("model.emb_dim",
// "optimizer.lr"); each mode's controls carry data-control="<state field>" (or "arg:<name>" for a
// module argument), and views/errors.js puts the message there.

// Per mode: error field -> control; `'config.*'` maps every module argument, `'*'` is the fallback.
const CONTROLS = {
  playground: { module: 'module', seed: 'seed', train: 'trainmode', weights: 'weights', loss: 'grads', 'config.*': 'arg:*', '*': 'text' },
  train: {
    task: 'train', seed: 'trainseed', batch: 'trainbatch', steps: 'trainsteps', module: 'trainmodel',
    'model.emb_dim': 'trainwidth', 'model.n_embd': 'trainwidth', 'model.num_heads': 'trainheads', 'model.n_head': 'trainheads',
    'model.num_layers': 'trainlayers', 'model.n_layer': 'trainlayers', 'model.ffn_dim': 'trainffn', 'model.rope': 'trainrope',
    'model.num_kv_heads': 'trainkvheads', 'model.window': 'trainwindow', 'optimizer.optimizer': 'trainopt', 'optimizer.lr': 'trainlr',
    '*': 'train',
  },
  generate: {
    'config.vocab_size': 'genvocab', 'config.block_size': 'genblock', 'config.n_layer': 'genlayers', 'config.n_head': 'genheads',
    'config.n_embd': 'genembd', 'config.rope': 'genrope', 'config.num_kv_heads': 'genkvheads', 'config.window': 'genwindow',
    'generate.temperature': 'gentemp', 'generate.top_k': 'gentopk', 'generate.top_p': 'gentopp', 'generate.max_new_tokens': 'genmax',
    seed: 'genseed', '*': 'genprompt',
  },
};

// The control of mode `mode` an error with `field` (error.field, or null) belongs beside. extra:
// the mode's own fields of this moment ({"inputs.mask": "causal"}: the playground's mask input
// belongs beside its causal box), looked up first.
export function controlFor(mode, field, extra = {}) {
  const map = CONTROLS[mode];
  if (!map) throw new Error(`controlFor: '${mode}' is not a mode (${Object.keys(CONTROLS).join(', ')})`);
  const f = field ?? '';
  if (f in extra) return extra[f];
  if (f in map) return map[f];
  if (f.startsWith('config.') && map['config.*']) return map['config.*'].replace('*', f.slice('config.'.length));
  return map['*'];
}
