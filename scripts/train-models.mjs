// npm run train-models [-- --task induction,copy]: the models the page ships (docs/training.md,
// "Shipped models"), trained by the core's own trainer in Node — no PyTorch — one nanoGPT GPT per
// training task (web/train/tasks.js), each until its held-out accuracy reaches TARGET, written to
// web/public/models/<task>/ as
//   model.safetensors  nanoGPT's whole state_dict in float32: the parameters, lm_head.weight (tied
//                      to transformer.wte.weight, stored again) and every block's attn.bias causal
//                      buffer, so GPT(GPTConfig(**config)).load_state_dict(...) takes it strictly;
//   card.json          the task, the config, seed, optimizer, batch, the steps taken, the held-out
//                      accuracy and loss, the loss curve, and this command.
// The run is the page's training run (web/train/engine.js: the same batches, seed and optimizer as
// training mode with module GPT), on the full-speed WASM build with plain SIMD128 kernels: no
// relaxed SIMD, whose fused multiply-adds may differ between CPUs, so the same seed gives the same
// weights, bit for bit, on any machine (tests/node/shipped-models.test.mjs checks the accuracy
// again and the logits against nanoGPT's).
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAttention } from '../bindings/attention.mjs';
import { createEngine } from '../web/train/engine.js';
import { encodeSafetensors } from '../web/train/safetensors.js';
import { TASK_IDS } from '../web/train/tasks.js';

export const TARGET = 0.97;       // held-out accuracy to stop at (the page promises >= 0.95)
export const SEED = 1;
export const HELDOUT = 512;       // held-out sequences (the page evaluates 256)
const EVAL_EVERY = 25;
const MAX_STEPS = 8000;
// One shape for every task, so the experiments lab shows the same 2 x 4 grid of heads: nanoGPT's
// GPT 32 wide with 4 heads of 8 and 2 blocks (about 26K parameters, 100-110 KB in float32). With
// the tasks' own 1-2 head models a GPT learns induction slowly (0.94 after 8000 steps at 2 heads);
// with 4 it passes 0.97 in about 2300 steps.
export const SHIPPED_MODEL = Object.freeze({ emb_dim: 32, num_heads: 4, num_layers: 2 });
export const MODELS_DIR = fileURLToPath(new URL('../web/public/models/', import.meta.url));

// The settings of a task's shipped run (engine.js resolveConfig fills the task's own defaults).
export const settingsOf = (task, steps = MAX_STEPS) => ({ task, seed: SEED, module: 'GPT', model: { ...SHIPPED_MODEL }, steps, evalEvery: EVAL_EVERY,
  recordEvery: 1e5, heldout: HELDOUT });

// nanoGPT's state_dict of the engine's GPT: [{name, shape, data}] in named_parameters order with
// lm_head.weight after transformer.ln_f.bias and each block's attn.bias (1, 1, T, T) lower
// triangle of ones after its attention's parameters, as GPT.state_dict() orders them.
export function nanoGPTState(params, config) {
  const T = config.block_size;
  const tril = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) tril[i * T + j] = 1;
  const out = [];
  for (const p of params) {
    out.push({ name: p.name, shape: p.shape, data: p.data.slice() });
    const block = /^transformer\.h\.(\d+)\.ln_1\.bias$/.exec(p.name);
    if (block) out.push({ name: `transformer.h.${block[1]}.attn.bias`, shape: [1, 1, T, T], data: tril });
  }
  const wte = params.find((p) => p.name === 'transformer.wte.weight');
  out.push({ name: 'lm_head.weight', shape: wte.shape, data: wte.data.slice() });
  return out;
}

// Trains one task's model, at least the task's own run length (tasks.js steps: the page's default
// run, long enough for its heads to take their pattern) and then until an evaluation reaches
// TARGET; returns {weights (bytes), card}.
export function trainTask(core, task, log = () => {}) {
  const engine = createEngine(core, settingsOf(task));
  const least = engine.task.steps;
  const started = Date.now();
  try {
    let reached = null;
    while (engine.steps < MAX_STEPS) {
      engine.step(EVAL_EVERY);
      const a = engine.history.accuracies.at(-1);
      if (engine.steps % 500 === 0) log(`${task}: step ${engine.steps}, loss ${engine.loss.toFixed(4)}, held-out accuracy ${a.heldoutAccuracy.toFixed(4)}`);
      if (engine.steps >= least && a.heldoutAccuracy >= TARGET) { reached = a; break; }
    }
    if (!reached) throw new Error(`${task}: held-out accuracy ${engine.history.accuracies.at(-1).heldoutAccuracy} after ${MAX_STEPS} steps, below ${TARGET}`);
    const config = engine.config;
    const metadata = { format: 'pt', module: 'GPT', config: JSON.stringify(config.model), task, seed: String(config.seed), step: String(engine.steps) };
    const weights = encodeSafetensors(nanoGPTState(engine.params(), config.model), metadata);
    const card = {
      kind: 'attention-playground/model-card', version: 1, task, module: 'GPT', layout: "nanoGPT's GPT (model.py), its state_dict names",
      config: config.model, seed: config.seed, optimizer: config.optimizer, batch: config.batch, steps: engine.steps,
      heldout: { sequences: config.heldout, accuracy: reached.heldoutAccuracy, seed_stream: 'web/train/tasks.js heldOutSet(task, seed, sequences)' },
      train_accuracy: reached.trainAccuracy,
      parameters: engine.params().reduce((n, p) => n + p.data.length, 0),
      losses: engine.history.losses.map((l) => Number(l.toPrecision(5))),
      accuracies: engine.history.accuracies.map((a) => ({ step: a.step, heldout: Number(a.heldoutAccuracy.toFixed(4)) })),
      trained_by: `the core's trainer, WASM (${core.kernels()}), core ${core.version()}`,
      command: `npm run train-models -- --task ${task}`,
      seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
    };
    return { weights, card };
  } finally {
    engine.delete();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = process.argv.indexOf('--task');
  const tasks = arg > 0 ? process.argv[arg + 1].split(',') : TASK_IDS;
  for (const t of tasks) if (!TASK_IDS.includes(t)) throw new Error(`--task ${t}: the tasks are ${TASK_IDS.join(', ')}`);
  const core = await loadAttention({ fast: true, simd: 'simd128' });
  for (const task of tasks) {
    const { weights, card } = trainTask(core, task, (m) => console.log(m));
    const dir = `${MODELS_DIR}${task}/`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}model.safetensors`, weights);
    writeFileSync(`${dir}card.json`, `${JSON.stringify(card, null, 1)}\n`);
    console.log(`${task}: held-out accuracy ${card.heldout.accuracy} at step ${card.steps} (${card.seconds} s), ${weights.length} bytes -> web/public/models/${task}/`);
  }
}
