// The tasks of "Train in the page": each a seeded sequence generator (rng.js), its vocabulary as
// token strings, a default CausalTransformer and optimizer that learn it in seconds, the pattern a
// solving head shows (patterns.js scores it) and its texts' keys (locales/train.en.js, train.zh.js).
// engine.js trains on batchStream(); scripts/task-batches.mjs prints the same batches for PyTorch.
import { TASK_IDS } from './fields.js';
import { createRng, mix32, STREAM } from './rng.js';

// A full sequence S of L tokens is cut the usual next-token way: the model reads idx = S[0..L-2]
// (T = L - 1 positions) and position i is asked for S[i + 1]. Only the part of S a model can know
// is scored: target[i] = S[i + 1] for i + 1 >= from, IGNORE before (cross_entropy's ignore_index).
export const IGNORE = -100;

// One in HOLDOUT sequences (by a hash of its tokens) is held out: training rejects those and the
// held-out set takes only those, so no held-out sequence is ever trained on, at any step.
const HOLDOUT = 8;

const letters = (n) => Array.from({ length: n }, (_, i) => String.fromCharCode(65 + i));

// FNV-1a over the tokens, then a finaliser: FNV's low bits alone follow a sequence's structure
// (a copy task's sequences never landed in the held-out eighth), the mixed ones do not.
function hashTokens(tokens, L) {
  let h = 0x811c9dc5;
  for (let i = 0; i < L; i++) h = Math.imul(h ^ tokens[i], 0x01000193);
  return mix32(h, L);
}

const isHeldOut = (tokens, L) => hashTokens(tokens, L) % HOLDOUT === 0;

// --- the generators: fill `s` (L tokens) and return `from`, the first predictable index of S ---

// x1..xn | x1..xn: the output repeats the input, n positions back.
function copySeq(rng, s, { n, symbols }) {
  for (let i = 0; i < n; i++) s[i] = s[n + 1 + i] = rng.int(symbols);
  s[n] = symbols;  // the separator follows the symbols
  return n + 1;
}

// x1..xn | xn..x1: output k reads input n-1-k, mirrored about the separator.
function reverseSeq(rng, s, { n, symbols }) {
  for (let i = 0; i < n; i++) s[i] = s[2 * n - i] = rng.int(symbols);
  s[n] = symbols;
  return n + 1;
}

// x1..xn | sorted: n distinct symbols, so each output is the smallest input above the last one.
function sortSeq(rng, s, { n, symbols }) {
  const xs = rng.distinct(n, symbols);
  for (let i = 0; i < n; i++) s[i] = xs[i];
  xs.sort((a, b) => a - b);
  s[n] = symbols;
  for (let i = 0; i < n; i++) s[n + 1 + i] = xs[i];
  return n + 1;
}

// filler, r1..rm, r1..rm with m drawn per sequence and every token of filler + r distinct: the
// repeat's offset changes from sequence to sequence, so no fixed-offset head can solve it; only
// "find the earlier copy of this token and read what followed it" (an induction head) does.
// r1 of the repeat cannot be known (the repeat might not have started); r2..rm can.
function inductionSeq(rng, s, { L, minRepeat, maxRepeat, symbols }) {
  const m = minRepeat + rng.int(maxRepeat - minRepeat + 1);
  const fresh = rng.distinct(L - m, symbols);
  for (let i = 0; i < L - m; i++) s[i] = fresh[i];
  for (let i = 0; i < m; i++) s[L - m + i] = s[L - 2 * m + i];
  return L - m + 1;
}

// x1..xn | max: one answer, read from wherever the largest symbol sits.
function maxSeq(rng, s, { n, symbols }) {
  let best = 0;
  for (let i = 0; i < n; i++) {
    s[i] = rng.int(symbols);
    if (s[i] > best) best = s[i];
  }
  s[n] = symbols;
  s[n + 1] = best;
  return n + 1;
}

// --- the table ---

// A CausalTransformer config for a task (dropout 0: the numbers stay PyTorch-exact and the
// attention maps show the pattern itself, not a thinned copy of it).
const model = (vocab, T, emb_dim, num_heads, ffn_dim, num_layers) =>
  ({ vocab_size: vocab, emb_dim, num_heads, ffn_dim, num_layers, context_length: T, dropout: 0 });

function defineTask(spec) {
  const L = spec.params.L;
  const task = { ...spec, length: L - 1, vocabSize: spec.vocab.length, separator: spec.vocab.indexOf('|') };
  task.make = (rng, batch, options) => makeBatch(task, rng, batch, options);
  task.sample = cut(task, Array.from(spec.sample.text, (c) => spec.vocab.indexOf(c)), spec.sample.from);
  return Object.freeze(task);
}

// A task: id; nameKey, explainKey, patternKey (its texts); vocab (token strings, ids by position;
// '|' the separator where there is one); params (the generator's: L the full sequence length, n
// the symbols per input, symbols how many letters are drawn from); sample (the fixed heatmap
// sequence, written as a string since every token is one character, and its first predictable
// index); model and optimizer (the CausalTransformer and torch.optim settings that learn it in
// seconds, measured in tests/node/train-tasks.test.mjs); batch; steps (a run's default length);
// pattern: the patterns.js score a solving head raises (offset: the distance, for copy).
// defineTask adds length (T = L - 1, the model's input), vocabSize, separator (its id or -1),
// make (makeBatch) and sample.{tokens, idx, target, from, shape}.
export const TASKS = Object.freeze({
  copy: defineTask({
    id: 'copy', nameKey: 'trainTask.copy.name', explainKey: 'trainTask.copy.explain', patternKey: 'trainTask.copy.pattern',
    vocab: [...letters(10), '|'],
    params: { n: 8, symbols: 10, L: 17 },
    generate: copySeq,
    sample: { text: 'CAFEBJGH|CAFEBJGH', from: 9 },
    model: model(11, 16, 32, 1, 64, 1),
    optimizer: { optimizer: 'AdamW', lr: 0.005, betas: [0.9, 0.98], weight_decay: 0.01 },
    batch: 32, steps: 400,
    pattern: { score: 'offset', offset: 8 },
  }),
  reverse: defineTask({
    id: 'reverse', nameKey: 'trainTask.reverse.name', explainKey: 'trainTask.reverse.explain', patternKey: 'trainTask.reverse.pattern',
    vocab: [...letters(10), '|'],
    params: { n: 8, symbols: 10, L: 17 },
    generate: reverseSeq,
    sample: { text: 'CAFEBJGH|HGJBEFAC', from: 9 },
    model: model(11, 16, 32, 1, 64, 1),
    optimizer: { optimizer: 'AdamW', lr: 0.01, betas: [0.9, 0.98], weight_decay: 0.01 },
    batch: 32, steps: 400,
    pattern: { score: 'antiDiagonal' },
  }),
  sort: defineTask({
    id: 'sort', nameKey: 'trainTask.sort.name', explainKey: 'trainTask.sort.explain', patternKey: 'trainTask.sort.pattern',
    vocab: [...letters(16), '|'],
    params: { n: 6, symbols: 16, L: 13 },
    generate: sortSeq,
    sample: { text: 'KCNFAH|ACFHKN', from: 7 },
    model: model(17, 12, 32, 2, 64, 1),
    optimizer: { optimizer: 'AdamW', lr: 0.01, betas: [0.9, 0.98], weight_decay: 0.01 },
    batch: 32, steps: 600,
    pattern: { score: 'source' },
  }),
  induction: defineTask({
    id: 'induction', nameKey: 'trainTask.induction.name', explainKey: 'trainTask.induction.explain', patternKey: 'trainTask.induction.pattern',
    vocab: letters(16),
    params: { L: 17, minRepeat: 4, maxRepeat: 7, symbols: 16 },
    generate: inductionSeq,
    sample: { text: 'HDMLBOFKCNAPKCNAP', from: 13 },
    model: model(16, 16, 32, 2, 64, 2),
    optimizer: { optimizer: 'AdamW', lr: 0.003, betas: [0.9, 0.98], weight_decay: 0.01 },
    batch: 32, steps: 1200,
    pattern: { score: 'induction' },
  }),
  max: defineTask({
    id: 'max', nameKey: 'trainTask.max.name', explainKey: 'trainTask.max.explain', patternKey: 'trainTask.max.pattern',
    vocab: [...letters(16), '|'],
    params: { n: 8, symbols: 16, L: 10 },
    generate: maxSeq,
    sample: { text: 'DKBGNCFA|N', from: 9 },
    model: model(17, 9, 64, 4, 128, 1),
    optimizer: { optimizer: 'AdamW', lr: 0.005, betas: [0.9, 0.98], weight_decay: 0.01 },
    batch: 32, steps: 400,
    pattern: { score: 'source' },
  }),
});

// The state's list of task ids (fields.js, in the first view without this file) names these tasks.
if (TASK_IDS.join() !== Object.keys(TASKS).join()) throw new Error(`train/fields.js TASK_IDS (${TASK_IDS}) must list tasks.js TASKS (${Object.keys(TASKS)}) in order`);
export { TASK_IDS };

// The page's texts of a task (keys quoted here so a check for unused keys finds them).
export const TASK_TEXT_KEYS = Object.freeze(['trainTask.copy.name', 'trainTask.copy.explain', 'trainTask.copy.pattern',
  'trainTask.reverse.name', 'trainTask.reverse.explain', 'trainTask.reverse.pattern',
  'trainTask.sort.name', 'trainTask.sort.explain', 'trainTask.sort.pattern',
  'trainTask.induction.name', 'trainTask.induction.explain', 'trainTask.induction.pattern',
  'trainTask.max.name', 'trainTask.max.explain', 'trainTask.max.pattern']);

export function getTask(id) {
  const task = TASKS[id];
  if (!task) throw Object.assign(new Error(`task "${id}" is not one of ${TASK_IDS.join(', ')}`), { field: 'task' });
  return task;
}

// One full sequence S as {idx (T), target (T), from}: the next-token cut described at the top.
function cut(task, s, from) {
  return { tokens: Int32Array.from(s), ...nextTokenInputs(s, from), from, shape: [1, task.length] };
}

// A whole sequence s (T + 1 ids) as the model's input, all but the last id (idx, T), and each
// position's next id (target, T; IGNORE before `from`). The sample's cut, the lab's sequences.
export function nextTokenInputs(s, from = 1) {
  const T = s.length - 1;
  const idx = new Float32Array(T), target = new Float32Array(T);
  for (let i = 0; i < T; i++) {
    idx[i] = s[i];
    target[i] = i + 1 >= from ? s[i + 1] : IGNORE;
  }
  return { idx, target };
}

// One sequence's worth of working space per length, reused: a training step draws a batch, and
// the hot loop should not feed the garbage collector.
const scratch = new Map();
const scratchOf = (L) => scratch.get(L) ?? scratch.set(L, new Int32Array(L)).get(L);

// {idx, target: Float32Array (B*T), shape: [B, T]}: `batch` sequences of `split` ('train' or
// 'heldout'); `out` (an earlier result of the same size) is refilled instead of allocating.
export function makeBatch(task, rng, batch, { split = 'train', out } = {}) {
  const T = task.length, L = T + 1, wantHeldOut = split === 'heldout';
  const res = out ?? { idx: new Float32Array(batch * T), target: new Float32Array(batch * T), shape: [batch, T] };
  const s = scratchOf(L);
  for (let b = 0; b < batch; b++) {
    let from;
    do from = task.generate(rng, s, task.params); while (isHeldOut(s, L) !== wantHeldOut);
    const o = b * T;
    for (let i = 0; i < T; i++) {
      res.idx[o + i] = s[i];
      res.target[o + i] = i + 1 >= from ? s[i + 1] : IGNORE;
    }
  }
  return res;
}

// The training batches of (task, seed, batch): batch k of this stream is batch k of every run
// with these settings, in the engine, in the page and in the parity script.
export function batchStream(task, seed, batch) {
  const rng = createRng(seed, STREAM.train);
  // next(out): refills `out` (an earlier batch of this stream) when given, so a loop that hands
  // each batch straight to the core allocates nothing per step
  return { next: (out) => makeBatch(task, rng, batch, { out }) };
}

// The held-out set: `count` sequences from their own stream, never produced for training.
export function heldOutSet(task, seed, count) {
  return makeBatch(task, createRng(seed, STREAM.heldout), count, { split: 'heldout' });
}
