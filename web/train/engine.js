// The training loop of "Train in the page", without messaging or DOM: a CausalTransformer (or a
// GPT, optionally Llama-style: rope, num_kv_heads, window) trained through the core's trainer (bindings/attention.mjs) on a task's seeded batches (tasks.js), with
// held-out accuracy, snapshots of the sample's attention and pattern scores (patterns.js), and
// exports (.safetensors weights, the run as JSON). worker.js drives it from a Web Worker; Node
// tests (tests/node/train-tasks.test.mjs) drive it directly.
import { scoreLayer } from './patterns.js';
import { encodeSafetensors } from './safetensors.js';
import { batchStream, getTask, heldOutSet } from './tasks.js';

const DEFAULTS = { evalEvery: 25, recordEvery: 10, heldout: 256 };
const MODEL_KNOBS = ['emb_dim', 'num_heads', 'ffn_dim', 'num_layers'];
const MODULES = ['CausalTransformer', 'GPT'];
const GPT_OPTIONS = ['rope', 'num_kv_heads', 'window'];  // the core GPT's Llama-style options
const OPTIMIZER_KNOBS = ['optimizer', 'lr', 'momentum', 'dampening', 'nesterov', 'betas', 'eps', 'weight_decay', 'clip_grad_norm'];

const fail = (field, message) => { throw Object.assign(new Error(message), { field }); };

function positiveInt(value, field, max) {
  if (!Number.isInteger(value) || value < 1 || value > max) fail(field, `${field} (${value}) must be an integer from 1 to ${max}`);
  return value;
}

// The whole training run as plain data (what a link and exportRun() record): the task's defaults
// under the settings given. Only the model's size is open; its vocabulary and context are the
// task's. An optimizer change replaces the task's optimizer settings rather than mixing with them.
// module 'GPT' trains nanoGPT's GPT of the same size (emb_dim, num_heads, num_layers as n_embd,
// n_head, n_layer; its MLP is 4 * n_embd wide, so ffn_dim does not apply) with the task's
// vocabulary and context as vocab_size and block_size, and settings.model's rope, num_kv_heads and
// window: config.model is then the GPT's config as the core takes it.
export function resolveConfig(settings = {}) {
  const task = getTask(settings.task ?? 'copy');
  const seed = settings.seed ?? 1;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) fail('seed', `seed (${seed}) must be an integer from 0 to 4294967295`);
  const module = settings.module ?? 'CausalTransformer';
  if (!MODULES.includes(module)) fail('module', `module (${module}) must be one of ${MODULES.join(', ')}`);
  let model = { ...task.model };
  for (const k of MODEL_KNOBS) if (settings.model?.[k] !== undefined) model[k] = settings.model[k];
  if (module === 'GPT') {
    model = { vocab_size: model.vocab_size, block_size: model.context_length, n_layer: model.num_layers, n_head: model.num_heads,
      n_embd: model.emb_dim, dropout: model.dropout, bias: true };
    for (const k of GPT_OPTIONS) if (settings.model?.[k] !== undefined) model[k] = settings.model[k];
  }
  const given = settings.optimizer ?? {};
  const sameKind = !given.optimizer || given.optimizer === task.optimizer.optimizer;
  const optimizer = sameKind ? { ...task.optimizer } : { optimizer: given.optimizer, lr: task.optimizer.lr };
  for (const k of OPTIMIZER_KNOBS) if (given[k] !== undefined) optimizer[k] = given[k];
  const out = { task: task.id, seed, module, model, optimizer, batch: settings.batch ?? task.batch, steps: settings.steps ?? task.steps };
  for (const [k, v] of Object.entries(DEFAULTS)) out[k] = settings[k] ?? v;
  positiveInt(out.batch, 'batch', 1024);
  positiveInt(out.steps, 'steps', 100000);
  positiveInt(out.evalEvery, 'evalEvery', 100000);
  positiveInt(out.recordEvery, 'recordEvery', 100000);
  positiveInt(out.heldout, 'heldout', 4096);
  return out;
}

// The core's error fields renamed to the settings' (config.emb_dim -> model.emb_dim, config.n_head -> model.n_head).
function renameField(e) {
  if (typeof e.field === 'string') e.field = e.field.replace(/^config\./, 'model.').replace(/^optimize\./, 'optimizer.');
  return e;
}

// A training step's multiply-adds, roughly (forward and backward: 3 x the forward's): per token,
// each layer's four projections (4 d^2), its MLP (2 d ffn; nanoGPT's is 4d wide) and its
// attention over the context (2 T d), and the output layer (d V).
export function stepMultiplyAdds(config) {
  const m = config.model;
  const gpt = config.module === 'GPT';
  const d = gpt ? m.n_embd : m.emb_dim, L = gpt ? m.n_layer : m.num_layers, T = gpt ? m.block_size : m.context_length;
  const ffn = gpt ? 4 * d : m.ffn_dim;
  return 3 * config.batch * T * (L * (4 * d * d + 2 * d * ffn + 2 * T * d) + d * m.vocab_size);
}
// Whether a model's steps run faster on the threaded build than on the one-thread full-speed one:
// from about 1.5e8 multiply-adds a step (measured in Node, Intel Xeon, 2 threads: the induction
// task's 32-wide model, 2.9e7, 229 steps/s on one thread against 179 on two; 64 wide with a
// 256-wide MLP, 1.6e8, 68 against 73; 128 wide, 4 layers, 11.2 against 15.9).
export const THREADS_FROM_MULTIPLY_ADDS = 1.5e8;
export const gainsFromThreads = (config) => stepMultiplyAdds(config) >= THREADS_FROM_MULTIPLY_ADDS;

// The scenario the trainer is built from: core/SCENARIO.md "Training", one optimizer step per
// step() call; `first` is the first training batch (the scenario's own inputs).
export function trainScenario(config, first) {
  const shape = first.shape;
  return {
    module: config.module ?? 'CausalTransformer', config: config.model, seed: config.seed, train: true,
    inputs: [{ name: 'idx', shape, data: first.idx }],
    loss: { fn: 'cross_entropy', target: { shape, data: Array.from(first.target) }, ignore_index: -100 },
    optimize: { ...config.optimizer, steps: 1 },
  };
}

// argmax over the last dim of (N, V) rows, written into out (N).
function argmaxRows(logits, V, out) {
  for (let r = 0; r < out.length; r++) {
    let best = 0, bestV = logits[r * V];
    for (let v = 1; v < V; v++) if (logits[r * V + v] > bestV) { bestV = logits[r * V + v]; best = v; }
    out[r] = best;
  }
  return out;
}

// Fraction of positions with a target where argmax(logits) is that target.
export function accuracy(logits, target, V) {
  let hit = 0, n = 0;
  for (let r = 0; r < target.length; r++) {
    if (target[r] < 0) continue;
    n++;
    let best = 0, bestV = logits[r * V];
    for (let v = 1; v < V; v++) if (logits[r * V + v] > bestV) { bestV = logits[r * V + v]; best = v; }
    if (best === target[r]) hit++;
  }
  return n ? hit / n : 0;
}

// The model's layers and heads, and the step holding layer l's attention weights (1,H,T,T).
const layersOf = (config) => (config.module === 'GPT' ? config.model.n_layer : config.model.num_layers);
const headsOf = (config) => (config.module === 'GPT' ? config.model.n_head : config.model.num_heads);
const weightsStep = (config, l) => (config.module === 'GPT' ? `transformer.h.${l}.attn.att_softmax` : `layers.${l}.attn.attn_weights`);

// The buffers PyTorch's state_dict holds beside the parameters, so that a strict
// load_state_dict accepts the file: PositionalEncoding's pe (1, context, C) as the core computed
// it (its traced `pe` step), and each layer's causal mask triu(ones(context, context), 1). A GPT
// is its parameters as named_parameters() names them (lm_head.weight is transformer.wte.weight).
function stateDict(params, pe, config) {
  if (config.module === 'GPT') return params.map((p) => ({ name: p.name, shape: p.shape, data: p.data.slice() }));
  const n = config.model.context_length;
  const mask = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) mask[i * n + j] = 1;
  const out = [];
  for (const p of params) {
    const layer = /^layers\.(\d+)\.attn\.W_query\.weight$/.exec(p.name);
    if (layer) out.push({ name: `layers.${layer[1]}.attn.mask`, shape: [n, n], data: mask });
    out.push({ name: p.name, shape: p.shape, data: p.data.slice() });
    if (p.name === 'embedding.weight') out.push({ name: 'pos_encoder.pe', shape: [1, n, config.model.emb_dim], data: pe });
  }
  return out;
}

// The sample's context for the pattern scores (patterns.js scoreHead).
function sampleContext(task) {
  const tokens = Array.from(task.sample.idx);
  return { tokens, targets: Array.from(task.sample.target), separator: tokens.indexOf(task.separator), offset: task.pattern.offset ?? 0 };
}

// Accuracy of the model as it is now on a batch {idx, target, shape}: one forward, no step. The
// trainer's input is left on this batch; step() sets its own before every step.
function accuracyOn(trainer, b, V) {
  trainer.setInput('idx', b.idx, b.shape);
  return accuracy(trainer.forward({ trace: false, grads: false }).outputs[0].data, b.target, V);
}

// The sample through the model as it is now: each layer's attention weights (1,H,T,T), the
// logits (1,T,V) and the positional table the core used (for the export's pe buffer; a GPT has none).
function forwardSample(trainer, task, config) {
  trainer.setInput('idx', task.sample.idx, task.sample.shape);
  const r = trainer.forward({ trace: true, grads: false });
  const byName = new Map(r.steps.map((s) => [s.name, s]));
  const attention = Array.from({ length: layersOf(config) }, (_, l) => byName.get(weightsStep(config, l)).data);
  return { attention, logits: r.outputs[0].data, pe: byName.get('pe')?.data ?? null };
}

// {step, loss, attention, logits, predictions (argmax per position), scores (per layer, per head)}
function takeSnapshot(trainer, task, config, context, state) {
  const T = task.length, H = headsOf(config);
  const { attention, logits } = forwardSample(trainer, task, config);
  const predictions = argmaxRows(logits, task.vocabSize, new Int32Array(T));
  const scores = attention.map((w) => scoreLayer(w, H, T, context));
  return { step: state.steps, loss: state.loss, attention, logits, predictions, scores, heads: H, length: T };
}

function exportWeights(trainer, task, config, steps) {
  const { pe } = forwardSample(trainer, task, config);
  const metadata = { format: 'pt', module: config.module ?? 'CausalTransformer', config: JSON.stringify(config.model),
    task: config.task, seed: String(config.seed), step: String(steps) };
  return encodeSafetensors(stateDict(trainer.params(), pe, config), metadata);
}

function createTrainer(core, config, first) {
  try {
    return core.trainer(trainScenario(config, first));
  } catch (e) {
    throw renameField(e);
  }
}

// engine = createEngine(core, {task, seed, model, optimizer, batch, steps, evalEvery, recordEvery,
// heldout}) (resolveConfig fills the task's defaults). engine.step(n) trains n steps and returns
// the last loss; engine.history = {losses: [per step], accuracies: [{step, heldoutAccuracy,
// trainAccuracy}] every evalEvery steps, snapshots: [snapshot()] at step 0 and every recordEvery}.
// trainAccuracy is on the latest training batch; engine.settings: the settings it was built from
// (createEngine(core, engine.settings) builds it again: engine.config, resolved, does not for a GPT,
// whose model it renames to the core's names). Errors carry `field` (a settings field: task,
// seed, batch, model.emb_dim, optimizer.lr, ...; loss when the model diverged).
export function createEngine(core, settings) {
  const config = resolveConfig(settings);
  const task = getTask(config.task);
  const stream = batchStream(task, config.seed, config.batch);
  let batch = stream.next();
  let fresh = true;  // the trainer's own first inputs are batch 1 of the stream
  const trainer = createTrainer(core, config, batch);
  const heldout = heldOutSet(task, config.seed, config.heldout);
  const context = sampleContext(task);
  const history = { losses: [], accuracies: [], snapshots: [] };
  const state = { steps: 0, loss: NaN };

  const evaluate = () => ({ step: state.steps, heldoutAccuracy: accuracyOn(trainer, heldout, task.vocabSize),
    trainAccuracy: accuracyOn(trainer, batch, task.vocabSize) });
  const snapshot = () => takeSnapshot(trainer, task, config, context, state);

  function step(n = 1) {
    for (let k = 0; k < n; k++) {
      if (fresh) fresh = false;
      else batch = stream.next(batch);
      trainer.setInput('idx', batch.idx, batch.shape);
      trainer.setTarget(batch.target, batch.shape);
      state.loss = trainer.step();
      history.losses.push(state.loss);
      state.steps++;
      if (state.steps % config.evalEvery === 0) history.accuracies.push(evaluate());
      if (state.steps % config.recordEvery === 0) history.snapshots.push(snapshot());
    }
    return state.loss;
  }

  const exportRun = () => ({ kind: 'attention-playground/train-run', version: 1, config: structuredClone(config),
    seed: config.seed, steps: state.steps, losses: history.losses.slice(), accuracies: history.accuracies.map((a) => ({ ...a })) });

  history.snapshots.push(snapshot());
  return {
    settings, config, task, history, step, evaluate, snapshot, exportRun,
    exportSafetensors: () => exportWeights(trainer, task, config, state.steps),
    get steps() { return state.steps; },
    get loss() { return state.loss; },
    threads: core.threads(),  // the core's: more than 1 where the page is cross-origin isolated
    // The current parameters: [{name, shape, data}] views, valid until the next call (copy to keep).
    params: () => trainer.params(),
    delete() { trainer.delete(); },
  };
}
