// "Train in the page" without the page (web/train/): the seeded tasks (the rules re-checked here
// from the token ids alone), the held-out split, the pattern scores on ideal maps, the engine's
// first 50 losses against PyTorch's (tests/fixtures/train-parity/, scripts/make_train_parity.py),
// the .safetensors export, the worker's protocol, and a table of steps and seconds each task needs.
//   node --test tests/node/train-tasks.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { createEngine, resolveConfig } from '../../web/train/engine.js';
import { headLabels, previousOccurrence, scoreHead } from '../../web/train/patterns.js';
import { createRng } from '../../web/train/rng.js';
import { readSafetensorsHeader, readSafetensorsTensor } from '../../web/train/safetensors.js';
import { batchStream, heldOutSet, IGNORE, TASK_IDS, TASKS } from '../../web/train/tasks.js';
import { createTrainController } from '../../web/train/worker.js';
import { trainEn } from '../../web/locales/train.en.js';
import { trainZh } from '../../web/locales/train.zh.js';

const core = await loadAttention();
const parity = (id) => JSON.parse(readFileSync(new URL(`../fixtures/train-parity/${id}.json`, import.meta.url), 'utf8'));
const rows = (b) => Array.from({ length: b.shape[0] }, (_, r) => {
  const T = b.shape[1];
  return { idx: Array.from(b.idx.subarray(r * T, (r + 1) * T)), target: Array.from(b.target.subarray(r * T, (r + 1) * T)) };
});

// The targets a row must have, from its input tokens alone, by each task's rule (written again
// here, not taken from tasks.js): null where the row is not a sequence of the task at all.
function expectedTargets(task, idx) {
  const T = idx.length, sep = idx.indexOf(task.separator), out = new Array(T).fill(IGNORE);
  const input = idx.slice(0, sep);
  if (task.id === 'induction') {
    const prev = previousOccurrence(idx);
    prev.forEach((q, i) => { if (q >= 0) out[i] = idx[q + 1]; });
    return out;
  }
  if (sep !== task.params.n) return null;
  const sorted = [...input].sort((a, b) => a - b);
  for (let i = sep; i < T; i++) {
    const k = i - sep;
    if (task.id === 'copy') out[i] = input[k];
    if (task.id === 'reverse') out[i] = input[sep - 1 - k];
    if (task.id === 'sort') out[i] = sorted[k];
    if (task.id === 'max') out[i] = sorted[sep - 1];
  }
  return out;
}

// Other invariants of a row: the next-token cut, distinct symbols where the task says so.
function rowProblems(task, { idx, target }) {
  const want = expectedTargets(task, idx);
  if (!want) return 'no separator where the task puts it';
  if (!want.every((v, i) => v === target[i])) return `targets ${target} != ${want}`;
  for (let i = 0; i + 1 < idx.length; i++) if (target[i] !== IGNORE && target[i] !== idx[i + 1]) return `target ${i} is not the next token`;
  const first = target.findIndex((v) => v !== IGNORE);
  if (first < 0 || target.slice(first).includes(IGNORE)) return 'the predictable part is not one stretch up to the end';
  if (task.id === 'sort' && new Set(idx.slice(0, task.params.n)).size !== task.params.n) return 'sort input repeats a symbol';
  if (task.id === 'induction') {
    const m = task.length - first + 1;  // the repeat's length: its first token is not predictable
    if (m < task.params.minRepeat || m > task.params.maxRepeat) return `repeat of ${m}`;
    if (new Set(idx.slice(0, first)).size !== first) return 'tokens before the repeat are not distinct';
  }
  return null;
}

test('the generator gives the same integers in every engine (mulberry32, pinned values)', () => {
  const r = createRng(0, 0);  // start state 0: mulberry32's reference sequence
  assert.deepEqual([r.u32(), r.u32()], [1144304738, 1416247]);
  const s = createRng(1, 1);
  assert.deepEqual([s.u32(), s.u32(), s.u32()], [2130758139, 2447611090, 3816413612]);
  const counts = new Array(7).fill(0);
  const t = createRng(3);
  for (let i = 0; i < 7000; i++) counts[t.int(7)]++;
  assert.ok(counts.every((c) => c > 850 && c < 1150), `int(7) spread ${counts}`);
  assert.notEqual(createRng(3, 1).u32(), createRng(3, 2).u32(), 'streams of one seed differ');
});

test('tasks are deterministic per seed and differ across seeds', () => {
  for (const id of TASK_IDS) {
    const draw = (seed) => { const s = batchStream(TASKS[id], seed, 8); return [s.next(), s.next(), s.next()].map((b) => Array.from(b.idx)); };
    assert.deepEqual(draw(7), draw(7), id);
    assert.notDeepEqual(draw(7), draw(8), id);
    assert.deepEqual(Array.from(heldOutSet(TASKS[id], 7, 16).target), Array.from(heldOutSet(TASKS[id], 7, 16).target), id);
  }
});

test('targets are -100 exactly where nothing can be predicted, and the task\'s answer elsewhere', () => {
  for (const id of TASK_IDS) {
    const task = TASKS[id];
    assert.ok(task.vocabSize >= 8 && task.vocabSize <= 33 && task.length <= 32, `${id}: vocabulary ${task.vocabSize}, length ${task.length}`);
    const batches = [1, 2, 3].flatMap((seed) => { const s = batchStream(task, seed, 64); return [s.next(), s.next()]; });
    batches.push(heldOutSet(task, 1, 64));
    for (const b of batches) for (const row of rows(b)) assert.equal(rowProblems(task, row), null, `${id}: ${row.idx}`);
    const sample = { idx: Array.from(task.sample.idx), target: Array.from(task.sample.target) };
    assert.equal(rowProblems(task, sample), null, `${id}: the sample`);
    assert.equal(task.sample.tokens.length, task.length + 1);
  }
});

test('no held-out sequence is ever a training sequence (the first 1000 steps of every task)', () => {
  for (const id of TASK_IDS) {
    const task = TASKS[id];
    const held = new Set(rows(heldOutSet(task, 1, 256)).map((r) => `${r.idx}/${r.target}`));
    const stream = batchStream(task, 1, task.batch);
    let batch;
    for (let k = 0; k < 1000; k++) {
      batch = stream.next(batch);
      for (const r of rows(batch)) assert.ok(!held.has(`${r.idx}/${r.target}`), `${id}: step ${k} trains on a held-out sequence`);
    }
  }
});

// Ideal maps of the patterns on a task's sample: row i puts all its mass on cell pick(i) (or
// spreads it over cells pick returns as an array), the other rows look at themselves.
function idealMap(T, pick) {
  const map = new Float32Array(T * T);
  for (let i = 0; i < T; i++) {
    const j = pick(i);
    const cells = (Array.isArray(j) ? j : [j]).filter((c) => c !== null && c >= 0 && c <= i);
    if (cells.length === 0) map[i * T + i] = 1;
    for (const c of cells) map[i * T + c] += 1 / cells.length;
  }
  return map;
}

test('pattern scores are 1 on the ideal map of their pattern and near 0 on another', () => {
  const ctx = (task) => ({ tokens: Array.from(task.sample.idx), targets: Array.from(task.sample.target),
    separator: Array.from(task.sample.idx).indexOf(task.separator), offset: task.pattern.offset ?? 0 });
  const cases = {
    copy: [(i) => i - 8, 'offset'],
    reverse: [(i) => (i >= 8 ? 15 - i : null), 'antiDiagonal'],
    induction: [(i, c) => { const q = previousOccurrence(c.tokens)[i]; return q < 0 ? null : q + 1; }, 'induction'],
    sort: [(i, c) => (c.targets[i] < 0 ? null : c.tokens.map((t, j) => (t === c.targets[i] ? j : -1)).filter((j) => j >= 0)), 'source'],
  };
  for (const [id, [pick, pattern]] of Object.entries(cases)) {
    const task = TASKS[id], T = task.length, c = ctx(task);
    const scores = scoreHead(idealMap(T, (i) => pick(i, c)), T, c);
    assert.ok(Math.abs(scores[pattern] - 1) < 1e-6, `${id}: ${pattern} ${scores[pattern]}`);
    assert.equal(headLabels(scores)[0] === pattern || scores[headLabels(scores)[0]] === scores[pattern], true, `${id}: labels ${headLabels(scores)}`);
    const prev = scoreHead(idealMap(T, (i) => i - 1), T, c);
    assert.ok(Math.abs(prev.previous - 1) < 1e-6 && prev[pattern] < 0.2, `${id}: a previous-token head scores ${pattern} ${prev[pattern]}`);
  }
  const T = TASKS.reverse.length, c = ctx(TASKS.reverse);
  const self = scoreHead(idealMap(T, (i) => i), T, c);
  assert.ok(Math.abs(self.self - 1) < 1e-6 && self.antiDiagonal === 0 && self.previous === 0 && self.offset === 0);
  const copy = scoreHead(idealMap(T, (i) => i - 8), T, c);
  assert.ok(copy.antiDiagonal < 0.2, `a copy head scores anti-diagonal ${copy.antiDiagonal}`);
  assert.equal(copy.bestOffset, 8);
});

test('the engine\'s first 50 losses are PyTorch\'s for every task (rtol 1e-3), from the same batches', () => {
  const table = [];
  for (const id of TASK_IDS) {
    const f = parity(id);
    const engine = createEngine(core, { task: id, seed: f.seed, batch: f.batch });
    try {
      assert.deepEqual(engine.config.model, f.config, `${id}: the task's model changed since the fixture: run scripts/make_train_parity.py`);
      assert.deepEqual(engine.config.optimizer, f.optimizer, `${id}: the task's optimizer changed since the fixture`);
      engine.step(f.steps);
      const rel = engine.history.losses.map((l, i) => Math.abs(l - f.losses[i]) / Math.abs(f.losses[i]));
      table.push({ task: id, 'loss 1': f.losses[0].toFixed(4), 'loss 50': f.losses.at(-1).toFixed(4), 'max rel diff': Math.max(...rel).toExponential(2) });
      assert.ok(Math.max(...rel) <= f.rtol, `${id}: losses differ from PyTorch by ${Math.max(...rel)} (relative)`);
    } finally {
      engine.delete();
    }
  }
  console.table(table);
});

test('the exported .safetensors is a valid file of state_dict names that reloads to the same logits', () => {
  for (const id of ['copy', 'induction']) {
    const f = parity(id);
    const engine = createEngine(core, { task: id, seed: f.seed });
    try {
      engine.step(f.steps);
      const logits = engine.snapshot().logits;
      // the sample after 50 steps, as PyTorch computes it
      const d = Math.max(...Array.from(logits, (v, i) => Math.abs(v - f.sample.logits[i]) - 1e-3 * Math.abs(f.sample.logits[i])));
      assert.ok(d <= 1e-4, `${id}: sample logits after 50 steps differ from PyTorch's beyond atol 1e-4 + rtol 1e-3`);
      const bytes = engine.exportSafetensors();
      const { header, dataStart } = readSafetensorsHeader(bytes);
      assert.equal(Number(new DataView(bytes.buffer).getBigUint64(0, true)) % 8, 0);
      assert.equal(dataStart % 8, 0);
      const names = Object.keys(header).filter((n) => n !== '__metadata__');
      const params = engine.params().map((p) => p.name);
      const buffers = ['pos_encoder.pe', ...Array.from({ length: engine.config.model.num_layers }, (_, l) => `layers.${l}.attn.mask`)];
      assert.deepEqual([...names].sort(), [...params, ...buffers].sort());
      let end = 0;
      for (const n of names) {
        const e = header[n];
        assert.equal(e.dtype, 'F32');
        assert.deepEqual(e.data_offsets, [end, end + 4 * e.shape.reduce((a, b) => a * b, 1)], n);
        end = e.data_offsets[1];
      }
      assert.equal(dataStart + end, bytes.length);
      assert.deepEqual(JSON.parse(header.__metadata__.config), engine.config.model);
      const emb = readSafetensorsTensor(bytes, 'embedding.weight');
      assert.deepEqual(Array.from(emb.data), Array.from(engine.params()[0].data));
      const r = core.run({ module: 'CausalTransformer', config: engine.config.model, weights: { name: `${id}.safetensors` },
        inputs: [{ name: 'idx', shape: [1, engine.task.length], data: Array.from(engine.task.sample.idx) }] }, { weights: bytes });
      assert.deepEqual(Array.from(r.outputs[0].data), Array.from(logits), `${id}: reloaded logits`);
      const run = engine.exportRun();
      assert.deepEqual(JSON.parse(JSON.stringify(run)), run);
      assert.equal(run.losses.length, f.steps);
      assert.equal(run.seed, f.seed);
    } finally {
      engine.delete();
    }
  }
});

test('settings: the task\'s defaults under what is given; a bad value names its field', () => {
  const c = resolveConfig({ task: 'induction', model: { emb_dim: 64, vocab_size: 3 }, optimizer: { lr: 0.001 } });
  assert.equal(c.model.emb_dim, 64);
  assert.equal(c.model.vocab_size, TASKS.induction.vocabSize, 'the vocabulary is the task\'s');
  assert.deepEqual(c.optimizer, { ...TASKS.induction.optimizer, lr: 0.001 });
  assert.deepEqual(resolveConfig({ task: 'copy', optimizer: { optimizer: 'SGD', momentum: 0.9 } }).optimizer,
    { optimizer: 'SGD', lr: TASKS.copy.optimizer.lr, momentum: 0.9 });
  assert.deepEqual(resolveConfig(JSON.parse(JSON.stringify(c))), c, 'a resolved config (a link) resolves to itself');
  const bad = [[{ task: 'nope' }, 'task'], [{ seed: -1 }, 'seed'], [{ batch: 0 }, 'batch'], [{ steps: 1.5 }, 'steps'],
    [{ model: { num_heads: 3 } }, 'model.num_heads'], [{ model: { emb_dim: 31, num_heads: 1 } }, 'model.emb_dim'],
    [{ optimizer: { optimizer: 'RMSprop' } }, 'optimizer.optimizer'], [{ optimizer: { lr: -1 } }, 'optimizer.lr']];
  for (const [settings, field] of bad) {
    assert.throws(() => createEngine(core, { task: 'copy', ...settings }).delete(), (e) => e.field === field, `${JSON.stringify(settings)}: ${field}`);
  }
});

test('every task text exists in English and Chinese, with a translation', () => {
  assert.deepEqual(Object.keys(trainZh).sort(), Object.keys(trainEn).sort());
  for (const task of Object.values(TASKS)) {
    for (const key of [task.nameKey, task.explainKey, task.patternKey]) {
      assert.ok(trainEn[key] && trainZh[key], key);
      assert.match(trainZh[key], /[\u4e00-\u9fff]/, key);
    }
  }
  for (const key of Object.keys(trainEn)) {
    const params = (t) => [...t.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    assert.deepEqual(params(trainZh[key]), params(trainEn[key]), key);
  }
});

// Wait until pred(messages) holds, or fail after ms.
async function until(messages, pred, ms = 20000) {
  const t0 = Date.now();
  while (!pred(messages)) {
    if (Date.now() - t0 > ms) throw new Error(`timed out; last messages: ${messages.slice(-3).map((m) => m.type)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('the worker\'s protocol: ready, step, run, pause, snapshots transferred, export, errors', async () => {
  const messages = [], transfers = [];
  const controller = createTrainController({ post: (m, t = []) => { messages.push(m); transfers.push(t); },
    loadCore: async () => core, schedule: (fn) => setImmediate(fn) });
  const stopped = (n) => (ms) => ms.filter((m) => m.type === 'stopped').length >= n;
  controller.handle({ type: 'init', config: { task: 'copy', seed: 3, steps: 60 } });
  controller.handle({ type: 'step', n: 5 });
  await until(messages, stopped(1));
  const ready = messages[0];
  assert.equal(ready.type, 'ready');
  assert.equal(ready.snapshot.step, 0);
  assert.equal(ready.task.vocab.length, TASKS.copy.vocabSize);
  assert.deepEqual(messages.at(-1), { type: 'stopped', step: 5, reason: 'done' });
  controller.handle({ type: 'run' });
  await until(messages, stopped(2));
  assert.deepEqual(messages.at(-1), { type: 'stopped', step: 60, reason: 'done' });
  const losses = messages.filter((m) => m.type === 'progress').flatMap((m) => Array.from(m.losses));
  const direct = createEngine(core, { task: 'copy', seed: 3, steps: 60 });
  direct.step(60);
  assert.deepEqual(losses, Array.from(Float32Array.from(direct.history.losses)), 'the worker trains exactly as the engine');
  direct.delete();
  const snaps = messages.map((m, i) => [m, transfers[i]]).filter(([m]) => m.type === 'snapshot');
  assert.deepEqual(snaps.map(([m]) => m.step), [10, 20, 30, 40, 50, 60]);
  assert.ok(snaps.every(([m, t]) => t.includes(m.attention[0].buffer) && t.includes(m.predictions.buffer)), 'typed arrays are transferred');
  controller.handle({ type: 'run', steps: 1e6 });
  await until(messages, (ms) => ms.at(-1).type === 'progress' && ms.at(-1).running);
  const t0 = Date.now();
  controller.handle({ type: 'pause' });
  await until(messages, stopped(3));
  assert.ok(Date.now() - t0 < 500, `pause took ${Date.now() - t0} ms`);
  assert.equal(messages.at(-1).reason, 'paused');
  controller.handle({ type: 'reset', config: { task: 'copy', model: { num_heads: 3 } } });
  await until(messages, (ms) => ms.at(-1).type === 'error');
  assert.equal(messages.at(-1).field, 'model.num_heads');
  controller.handle({ type: 'export' });
  await until(messages, (ms) => ms.at(-1).type === 'exported');
  const exported = messages.at(-1);
  assert.ok(exported.run.steps > 60, 'a refused reset keeps the engine there was');
  assert.equal(readSafetensorsHeader(exported.safetensors).header.__metadata__.task, 'copy');
  controller.handle({ type: 'fly' });
  await until(messages, (ms) => ms.at(-1).type === 'error' && /fly/.test(ms.at(-1).message));
  controller.engine.delete();
});

// Steps and seconds from the default settings to held-out accuracy >= 0.95, evaluating as the page
// does (every evalEvery steps), then on to the task's default length: the goals of the issue
// (Chromium runs the same V8 and WASM) with this machine's CPU printed beside them.
function timeToLearn(id) {
  const engine = createEngine(core, { task: id, seed: 1 });
  const best = (s) => Math.max(...s.scores.flat().map((h) => h[engine.task.pattern.score]));
  const induction = (s) => Math.max(...s.scores.flat().map((h) => h.induction));
  const t0 = performance.now(), c0 = process.cpuUsage();
  let hit = null;
  try {
    while (engine.steps < engine.config.steps) {
      engine.step(engine.config.evalEvery);
      if (hit || engine.history.accuracies.at(-1).heldoutAccuracy < 0.95) continue;
      const c = process.cpuUsage(c0), s = engine.snapshot();
      hit = { steps: engine.steps, wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6, pattern: best(s), induction: induction(s) };
    }
    const end = engine.snapshot();
    return { hit, steps: engine.steps, msPerStep: (performance.now() - t0) / engine.steps, pattern: engine.task.pattern.score,
      accuracy: engine.history.accuracies.at(-1).heldoutAccuracy, endPattern: best(end), endInduction: induction(end) };
  } finally {
    engine.delete();
  }
}

test('every task learns from its defaults: held-out >= 0.95 in seconds; induction grows an induction head', () => {
  const results = TASK_IDS.map((id) => [id, timeToLearn(id)]);
  let load = '';
  try { load = `; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`; } catch { /* not Linux */ }
  console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}; Node ${process.version}${load}`);
  console.table(results.map(([id, r]) => ({ task: id, 'steps to 0.95': r.hit?.steps ?? '-', 's wall': r.hit?.wall.toFixed(1),
    's cpu': r.hit?.cpu.toFixed(1), 'ms/step': r.msPerStep.toFixed(1), steps: r.steps, 'final acc': r.accuracy.toFixed(3),
    pattern: r.pattern, 'score at 0.95': r.hit?.pattern.toFixed(2), 'score at end': r.endPattern.toFixed(2),
    'induction at 0.95 / end': `${r.hit?.induction.toFixed(2)} / ${r.endInduction.toFixed(2)}` })));
  for (const [id, r] of results) {
    assert.ok(r.hit, `${id} never reached held-out accuracy 0.95 in ${r.steps} steps`);
    assert.ok(r.hit.wall < (id === 'copy' || id === 'induction' ? 20 : 60), `${id}: ${r.hit.wall} s to 0.95`);
  }
  const induction = Object.fromEntries(results).induction;
  assert.ok(induction.hit.induction >= 0.5 && induction.endInduction >= 0.5, `induction head scores ${induction.hit.induction}, ${induction.endInduction}`);
});
