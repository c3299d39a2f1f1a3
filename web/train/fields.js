// Training mode's fields of the one state (app/state.js): the task trained in the page ('' = the
// playground alone) and its run's settings (engine.js resolveConfig); 0 or '' = the task's own
// default, so links stay short. A setting typed in the panel must be at least `typedMin` (0 is
// "the default" only in a link).

// The tasks' ids (tasks.js TASKS has one task per id, in this order: tests/node/train-tasks.test.mjs).
export const TASK_IDS = Object.freeze(['copy', 'reverse', 'sort', 'induction', 'max']);

export const fields = {
  train: { type: 'enum', values: ['', ...TASK_IDS], default: '' },
  trainseed: { type: 'int', default: 1, min: 0, max: 4294967295, label: 'seed' },
  trainwidth: { type: 'int', default: 0, min: 0, max: 512, typedMin: 1, label: 'emb_dim' },
  trainheads: { type: 'int', default: 0, min: 0, max: 16, typedMin: 1, label: 'num_heads' },
  trainlayers: { type: 'int', default: 0, min: 0, max: 6, typedMin: 1, label: 'num_layers' },
  trainffn: { type: 'int', default: 0, min: 0, max: 2048, typedMin: 1, label: 'ffn_dim' },
  trainopt: { type: 'enum', values: ['', 'SGD', 'Adam', 'AdamW'], default: '' },
  trainlr: { type: 'number', default: 0, min: 0, max: 10, typedAbove: 0, label: 'lr' },
  trainbatch: { type: 'int', default: 0, min: 0, max: 1024, typedMin: 1, label: 'batch' },
  trainsteps: { type: 'int', default: 0, min: 0, max: 100000, typedMin: 1, label: 'steps' },
  // the model trained: '' = the task's CausalTransformer, 'GPT' = nanoGPT's GPT of that size, with
  // the core GPT's Llama-style options (rope instead of wpe; num_kv_heads 0 = n_head; window 0 = none)
  trainmodel: { type: 'enum', values: ['', 'GPT'], default: '' },
  trainrope: { type: 'bool', default: false },
  trainkvheads: { type: 'int', default: 0, min: 0, max: 16, label: 'num_kv_heads' },
  trainwindow: { type: 'int', default: 0, min: 0, max: 64, label: 'window' },
};

// The fields a new task resets to its defaults (the seed stays).
export const TRAIN_OVERRIDES = ['trainwidth', 'trainheads', 'trainlayers', 'trainffn', 'trainopt', 'trainlr', 'trainbatch', 'trainsteps'];
// The model's kind and its GPT options: kept when the task changes.
export const TRAIN_MODEL_FIELDS = ['trainmodel', 'trainrope', 'trainkvheads', 'trainwindow'];

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
