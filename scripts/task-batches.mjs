#!/usr/bin/env node
// The training batches of a "Train in the page" task, as the engine draws them (web/train/tasks.js,
// batchStream), printed as JSON for PyTorch: scripts/make_train_parity.py reads this instead of
// re-implementing the generators, so the page and the reference train on the very same tokens.
//   node scripts/task-batches.mjs --task induction --seed 1 --steps 50 [--batch B] [--heldout N]
//   node scripts/task-batches.mjs --list                      the task ids, one per line
// Prints {task, seed, batch, steps, shape, vocab, config, optimizer, batches: [{idx, target}],
// sample: {idx, target, shape}, heldout?: {idx, target, shape}}; batch defaults to the task's,
// idx/target are flat row-major, target -100 where nothing can be predicted.
import { batchStream, getTask, heldOutSet, TASK_IDS } from '../web/train/tasks.js';

const USAGE = `usage: node scripts/task-batches.mjs --task ${TASK_IDS.join('|')} --seed S --steps N [--batch B] [--heldout N] | --list\n`;

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i]?.replace(/^--/, '');
    if (!['task', 'seed', 'steps', 'batch', 'heldout'].includes(key) || argv[i + 1] === undefined) return null;
    args[key] = key === 'task' ? argv[i + 1] : Number(argv[i + 1]);
    if (key !== 'task' && !(Number.isInteger(args[key]) && args[key] >= 0)) return null;
  }
  return args.task && args.seed !== undefined && args.steps !== undefined ? args : null;
}

function main(argv) {
  if (argv.length === 1 && argv[0] === '--list') {
    process.stdout.write(`${TASK_IDS.join('\n')}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  if (!args) {
    process.stderr.write(USAGE);
    return 2;
  }
  let task;
  try {
    task = getTask(args.task);
  } catch (e) {
    process.stderr.write(`error: ${e.message}\n`);
    return 1;
  }
  const batch = args.batch || task.batch;
  const stream = batchStream(task, args.seed, batch);
  const batches = Array.from({ length: args.steps }, () => {
    const b = stream.next();
    return { idx: Array.from(b.idx), target: Array.from(b.target) };
  });
  const out = { task: task.id, seed: args.seed, batch, steps: args.steps, shape: [batch, task.length],
    vocab: task.vocab, config: task.model, optimizer: task.optimizer, batches,
    sample: { idx: Array.from(task.sample.idx), target: Array.from(task.sample.target), shape: task.sample.shape } };
  if (args.heldout) {
    const h = heldOutSet(task, args.seed, args.heldout);
    out.heldout = { idx: Array.from(h.idx), target: Array.from(h.target), shape: h.shape };
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
