// Training mode's page side without a browser: the link fields (train=<task id>, the run's
// settings, a legacy train=1 read as the dropout flag trainmode), the settings a link gives the
// engine, the views' data (web/train-data.js), the worker client (web/train-page.js's
// web/training.js) driving the real worker protocol (web/train/worker.js) in-process, and the
// worker resting while the page yields to a reader's typing.
//   node --test tests/node/train-page.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { defaultState, fromHash, hashProblems, toHash } from '../../web/app/state.js';
import { trainSettings } from '../../web/train/fields.js';
import { chartData, headsData, sampleData, scoreSeries, shownSnapshot, trainingSummary } from '../../web/train/data.js';
import { createEngine, gainsFromThreads, resolveConfig, stepMultiplyAdds } from '../../web/train/engine.js';
import { TASK_IDS, TASKS } from '../../web/train/tasks.js';
import { createTrainController } from '../../web/train/worker.js';
import { createTraining } from '../../web/train/training.js';

const core = await loadAttention({ threads: 1 });  // the page's small build, as loadPageCore
const fastCore = await loadAttention({ fast: true, threads: 1 });  // a worker's one-thread build

test('train=<task id> is training mode with the task\'s defaults; every task id is a link value', () => {
  for (const id of TASK_IDS) {
    const state = fromHash(`#train=${id}`);
    assert.equal(state.train, id);
    assert.equal(state.trainmode, false);
    assert.deepEqual(hashProblems(`#train=${id}`), []);
    const config = resolveConfig(trainSettings(state));
    assert.deepEqual(config.model, TASKS[id].model, `${id}: the task's default model`);
    assert.equal(config.seed, 1);
  }
  assert.equal(trainSettings(defaultState()), null, 'no training outside training mode');
  assert.equal(fromHash('#train=nope').train, '');
  assert.match(hashProblems('#train=nope')[0], /train "nope" must be one of copy, reverse, sort, induction, max/);
});

test('a legacy train=1 / true / 0 / false is the dropout flag (trainmode), with no complaint', () => {
  for (const [raw, on] of [['1', true], ['true', true], ['0', false], ['false', false]]) {
    const state = fromHash(`#train=${raw}&text=old+course+link`);
    assert.equal(state.trainmode, on, raw);
    assert.equal(state.train, '', raw);
    assert.deepEqual(hashProblems(`#train=${raw}`), [], raw);
  }
  assert.equal(fromHash('#train=1&trainmode=0').trainmode, false, 'trainmode given wins');
  assert.equal(toHash({ ...defaultState(), trainmode: true }), 'trainmode=1', 'new links write trainmode');
});

test('the training settings round-trip through the link and reach the engine as given', () => {
  const state = { ...defaultState(), train: 'copy', trainseed: 7, trainwidth: 64, trainheads: 4, trainlayers: 2, trainffn: 96,
    trainopt: 'SGD', trainlr: 0.05, trainbatch: 16, trainsteps: 30 };
  const hash = toHash(state);
  assert.equal(hash, 'train=copy&trainseed=7&trainwidth=64&trainheads=4&trainlayers=2&trainffn=96&trainopt=SGD&trainlr=0.05&trainbatch=16&trainsteps=30');
  assert.deepEqual(fromHash(`#${hash}`), state);
  assert.deepEqual(hashProblems(`#${hash}`), []);
  const config = resolveConfig(trainSettings(state));
  assert.deepEqual(config.model, { ...TASKS.copy.model, emb_dim: 64, num_heads: 4, num_layers: 2, ffn_dim: 96 });
  assert.deepEqual(config.optimizer, { optimizer: 'SGD', lr: 0.05 });
  assert.deepEqual([config.seed, config.batch, config.steps], [7, 16, 30]);
  assert.equal(toHash({ ...defaultState(), train: 'sort' }), 'train=sort', 'defaults stay out of the link');
  const bad = hashProblems('#trainlr=-1&trainheads=99&trainopt=RMSprop');
  assert.equal(bad.length, 3, bad.join('; '));
  assert.deepEqual(fromHash('#trainlr=abc&trainheads=99').trainlr, 0);
});

// A run made by the engine directly, for the views' data.
function engineRun(id, steps) {
  const engine = createEngine(core, { task: id, seed: 1, steps });
  engine.step(steps);
  const { losses, accuracies, snapshots } = engine.history;
  const run = { task: engine.task, config: engine.config, step: steps, losses: Float32Array.from(losses), count: losses.length,
    accuracies, snapshots, stepsPerSecond: 100, running: false };
  engine.delete();
  return run;
}

test('the views\' data: chart lines, the shown snapshot, heads, scores over training, the sample', () => {
  const run = engineRun('induction', 60);
  const chart = chartData(run, null);
  assert.equal(chart.loss.length, 60);
  assert.deepEqual(chart.loss[0], [1, run.losses[0]]);
  assert.deepEqual(chart.heldout.map(([s]) => s), [25, 50]);
  assert.equal(chart.maxStep, 60, 'the run\'s length');
  const long = { ...run, losses: new Float32Array(5000).fill(2), count: 5000 };
  assert.ok(chartData(long, null).loss.length <= 400, 'a long run is averaged into at most 400 points');
  assert.equal(shownSnapshot(run, null).step, 60);
  assert.equal(shownSnapshot(run, 0).step, 0);
  const heads = headsData(shownSnapshot(run, 2));
  assert.deepEqual(heads.map((h) => [h.layer, h.head]), [[0, 0], [0, 1], [1, 0], [1, 1]]);
  const T = TASKS.induction.length;
  for (const h of heads) {
    assert.equal(h.slice.data.length, T * T);
    for (let r = 0; r < T; r++) assert.ok(Math.abs(h.slice.data.subarray(r * T, r * T + T).reduce((a, b) => a + b, 0) - 1) < 1e-5);
  }
  const series = scoreSeries(run, ['previous', 'induction']);
  assert.equal(series.length, 4);
  assert.deepEqual(series[3].induction.map(([s]) => s), run.snapshots.map((s) => s.step));
  const sample = sampleData(run.snapshots.at(-1), run.task);
  assert.equal(sample.rows.length, T);
  assert.equal(sample.scored, Array.from(TASKS.induction.sample.target).filter((v) => v >= 0).length);
  assert.deepEqual(Object.keys(trainingSummary(run, 'induction')), ['task', 'step', 'losses', 'accuracy', 'stepsPerSecond', 'threads', 'running']);
  assert.equal(trainingSummary(run, 'induction').accuracy, run.accuracies.at(-1).heldoutAccuracy);
});

// web/training.js over the real protocol: a Worker-shaped object around the worker's controller,
// step 0 on the page's (small) build, the training on the fast one, as in the page.
let fastLoads = 0;
function inProcessWorker() {
  const w = { onmessage: null, onerror: null, terminated: false };
  const controller = createTrainController({ post: (data) => { if (!w.terminated) setImmediate(() => w.onmessage?.({ data })); },
    loadCore: async () => core, loadFastCore: async () => { fastLoads++; return fastCore; }, schedule: (fn) => setImmediate(fn) });
  w.postMessage = (msg) => controller.handle(structuredClone(msg));
  w.terminate = () => { w.terminated = true; controller.engine?.delete(); };
  return w;
}

const until = async (pred, ms = 20000) => {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

test('the worker client: configure, step once, a snapshot on request, train to the end, export, a refused setting, stop', async () => {
  const seen = [];
  const training = createTraining({ onUpdate: (kind) => seen.push(kind), createWorker: inProcessWorker });
  const { run } = training;
  training.configure({ task: 'copy', seed: 2, steps: 40 });
  await until(() => run.status === 'ready');
  assert.equal(run.snapshots.length, 1);
  assert.equal(fastLoads, 0, 'step 0 on the page\'s build: the fast one waits for the first step');
  training.stepOnce();
  await until(() => seen.includes('stopped'));
  assert.equal(run.step, 1);
  assert.equal(run.status, 'paused', 'Step once ends paused, not done');
  training.snapshot();
  training.snapshot();
  await until(() => run.snapshots.length === 2);
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(run.snapshots.map((s) => s.step), [0, 1], 'a snapshot of the step it stopped at, once');
  training.train();
  assert.equal(run.running, true, 'the buttons follow at once');
  await until(() => run.status === 'done');
  assert.equal(run.count, 40);
  assert.equal(fastLoads, 1);
  // trained on the fast build after step 0 on the small one: the losses of a run on the small build alone, to the bit
  const direct = createEngine(core, { task: 'copy', seed: 2, steps: 40 });
  direct.step(40);
  assert.deepEqual(Array.from(run.losses.subarray(0, 40)), Array.from(Float32Array.from(direct.history.losses)));
  direct.delete();
  assert.deepEqual(run.snapshots.map((s) => s.step), [0, 1, 10, 20, 30, 40]);
  const exported = await training.export();
  assert.equal(exported.run.steps, 40);
  assert.ok(exported.safetensors.length > 1000);
  training.configure({ task: 'copy', model: { num_heads: 3 } });
  await until(() => run.invalid);
  assert.equal(run.invalid.field, 'model.num_heads');
  assert.equal(run.count, 40, 'a refused setting keeps the run there was');
  training.stop();
  assert.equal(training.active, false);
  assert.equal(run.count, 0);
});

test('a yield from the page makes the worker rest between chunks for that long, then train at full pace', async () => {
  const messages = [];
  let rests = 0;
  const controller = createTrainController({ post: (m) => messages.push(m), loadCore: async () => core, schedule: (fn) => setImmediate(fn),
    delay: (fn, ms) => { rests++; assert.equal(ms, 32); setTimeout(fn, ms); } });
  controller.handle({ type: 'init', config: { task: 'induction', steps: 100000 } });
  controller.handle({ type: 'run' });
  await until(() => controller.engine?.steps > 5);
  assert.equal(rests, 0, 'no rest unless asked');
  controller.handle({ type: 'yield', ms: 150 });
  await new Promise((r) => setTimeout(r, 120));
  const resting = rests;
  assert.ok(resting >= 2, `${resting} rests while yielding`);
  await new Promise((r) => setTimeout(r, 200));
  const after = rests;
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(rests, after, 'full pace again once the yield is over');
  controller.handle({ type: 'pause' });
  await until(() => messages.some((m) => m.type === 'stopped'));
  controller.engine.delete();
});

test('the first step moves a GPT run to the fast build with its own settings, and reset keeps them', async () => {
  const messages = [];
  const controller = createTrainController({ post: (m) => messages.push(m), loadCore: async () => core, loadFastCore: async () => fastCore,
    schedule: (fn) => setImmediate(fn) });
  const settings = { task: 'copy', seed: 3, module: 'GPT', model: { num_heads: 2, num_kv_heads: 1, rope: true, window: 12 }, steps: 3 };
  controller.handle({ type: 'init', config: settings });
  controller.handle({ type: 'run' });
  await until(() => messages.some((m) => m.type === 'stopped'));
  const ready = messages.find((m) => m.type === 'ready');
  assert.deepEqual(controller.engine.config, ready.config, 'the same model on the fast build');
  assert.equal(ready.config.model.n_head, 2);
  const direct = createEngine(core, settings);
  direct.step(3);
  assert.deepEqual(Array.from(controller.engine.history.losses), direct.history.losses);
  direct.delete();
  controller.handle({ type: 'reset' });
  await until(() => messages.filter((m) => m.type === 'ready').length === 2);
  assert.deepEqual(messages.filter((m) => m.type === 'ready')[1].config, ready.config, 'reset: the same settings');
  controller.engine.delete();
});

test('a model big enough to gain trains on the threaded build, the task\'s small one on one thread; the same losses', async () => {
  const small = resolveConfig({ task: 'induction' }), big = resolveConfig({ task: 'induction', model: { emb_dim: 64, ffn_dim: 256 } });
  assert.equal(gainsFromThreads(small), false, `${stepMultiplyAdds(small)} multiply-adds a step`);
  assert.equal(gainsFromThreads(big), true, `${stepMultiplyAdds(big)} multiply-adds a step`);
  const threaded = await loadAttention({ threads: 2 });
  const asked = [];
  const messages = [];
  const controller = createTrainController({ post: (m) => messages.push(m), loadCore: async () => core,
    loadFastCore: async ({ threads }) => { asked.push(threads); return threads ? threaded : fastCore; }, schedule: (fn) => setImmediate(fn) });
  const stopped = () => messages.filter((m) => m.type === 'stopped').length;
  for (const [i, config] of [[1, { task: 'induction', steps: 2 }], [2, { task: 'induction', model: { emb_dim: 64, ffn_dim: 256 }, steps: 2 }]]) {
    controller.handle({ type: 'init', config });
    controller.handle({ type: 'run' });
    await until(() => stopped() === i);
    const direct = createEngine(fastCore, config);
    direct.step(2);
    assert.deepEqual(Array.from(controller.engine.history.losses), direct.history.losses);
    assert.equal(controller.engine.threads, i === 1 ? 1 : 2);
    direct.delete();
  }
  assert.deepEqual(asked, [false, true]);
  controller.engine.delete();
});
