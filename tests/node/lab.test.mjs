// The experiments lab without a browser (web/lab/): the corruption proposed for every task
// changes the answer and follows the task's rule; `ablate` links are read strictly; the worker's
// answers are the core's own, checked by running the very scenarios the page builds through
// `node bindings/cli.mjs` (the page's numbers = the CLI's); and on the shipped induction model the
// head ranked first is the one the held-out pattern scores call induction (or the previous-token
// head below it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { MODELS_DIR } from '../../scripts/train-models.mjs';
import { analysisScenarios, evaluationBatch, evaluationScenario, formatAblate, parseAblate, patchingGrid, residualLabel,
  proposeCorruption, rankHeads, sequenceIds, sequenceText } from '../../web/lab/lab.js';
import { HELDOUT } from '../../web/lab/mode.js';
import { createLabController } from '../../web/lab/worker.js';
import { accuracy } from '../../web/train/engine.js';
import { getTask, heldOutSet, nextTokenInputs, TASK_IDS } from '../../web/train/tasks.js';

const tmp = mkdtempSync(join(tmpdir(), 'lab-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const shipped = (id) => {
  const card = JSON.parse(readFileSync(`${MODELS_DIR}${id}/card.json`, 'utf8'));
  return { card, path: `${MODELS_DIR}${id}/model.safetensors`, weights: new Uint8Array(readFileSync(`${MODELS_DIR}${id}/model.safetensors`)),
    model: { module: card.module, config: card.config, seed: card.seed } };
};
// The lab's default clean sequence: the first held-out sequence, input and answer.
const firstHeldOut = (task, seed) => {
  const held = heldOutSet(task, seed, 1);
  return [...held.idx, held.target.at(-1)];
};

test('the proposed corruption of every task changes the answer at the last position, by the task\'s own rule', () => {
  for (const id of TASK_IDS) {
    const task = getTask(id);
    const clean = firstHeldOut(task, 1);
    const pos = clean.length - 2;
    const corrupted = proposeCorruption(task, clean, pos);
    assert.ok(corrupted, id);
    assert.equal(corrupted.length, clean.length);
    assert.notEqual(corrupted[pos + 1], clean[pos + 1], `${id}: ${sequenceText(task, clean)} -> ${sequenceText(task, corrupted)}`);
    const changed = corrupted.map((c, i) => (c !== clean[i] ? i : -1)).filter((i) => i >= 0);
    assert.ok(changed.length >= 2 && changed.at(-1) === pos + 1, `${id}: the input changes and the answer follows it (${changed})`);
    // a corrupted sequence of a task follows its rule: the task's own next-token targets agree with it
    if (id === 'copy') assert.deepEqual(corrupted.slice(9), corrupted.slice(0, 8));
    if (id === 'reverse') assert.deepEqual(corrupted.slice(9), corrupted.slice(0, 8).reverse());
    if (id === 'sort') assert.deepEqual(corrupted.slice(7), corrupted.slice(0, 6).sort((a, b) => a - b));
    if (id === 'max') assert.equal(corrupted[9], Math.max(...corrupted.slice(0, 8)));
  }
  const induction = getTask('induction');
  const ids = sequenceIds(induction, 'HDMLBOFKCNAPKCNAP', 16, 'expclean');
  assert.equal(sequenceText(induction, proposeCorruption(induction, ids, 15)), 'HDMLBOFKCNAEKCNAE', 'the token after the earlier A, and its copy');
  assert.equal(proposeCorruption(induction, ids, 3), null, 'no earlier copy of the current token: nothing to corrupt');
});

test('ablate: <layer>.<head> items, sorted and once each; anything else refused naming the item and the rule', () => {
  assert.deepEqual(parseAblate(' 1.2, 0.3,1.2 ', 2, 4), [[0, 3], [1, 2]]);
  assert.equal(formatAblate(parseAblate('1.0,0.1', 2, 4)), '0.1,1.0');
  assert.deepEqual(parseAblate('', 2, 4), []);
  assert.throws(() => parseAblate('0.4', 2, 4), /ablate: "0.4" is not a head of this model \(layers 0 to 1, heads 0 to 3\)/);
  assert.throws(() => parseAblate('x', 2, 4), /ablate: "x" is not <layer>.<head>/);
  assert.throws(() => sequenceIds(getTask('induction'), 'AB?', 16, 'expclean'), /expclean: "\?" is not a token of the task/);
  assert.throws(() => sequenceIds(getTask('induction'), 'A', 16, 'expclean'), /expclean: 1 tokens; a sequence here has 2 to 17/);
});

// The worker's protocol in Node: every answer, in order.
async function labOn(id) {
  const { model, weights } = shipped(id);
  const task = getTask(id);
  const answers = [];
  const ctl = createLabController({ post: (m) => answers.push(m) });
  const ask = async (msg) => { await ctl.handle(msg); const a = answers.pop(); if (a.type === 'error') throw new Error(a.message); return a; };
  const held = heldOutSet(task, model.seed, HELDOUT);
  const loaded = await ask({ type: 'load', id: 1, model, weights: weights.slice(), heldout: held });
  return { task, model, held, loaded, ask };
}

const cli = (scenario, weightsPath) => {
  const file = join(tmp, `s${Math.random().toString(36).slice(2)}.json`);
  const plain = { ...scenario, inputs: scenario.inputs.map((i) => ({ ...i, data: Array.from(i.data) })) };
  writeFileSync(file, JSON.stringify(plain));
  const r = spawnSync(process.execPath, [new URL('../../bindings/cli.mjs', import.meta.url).pathname, 'run', file, '--weights', weightsPath], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
};

test("the page's numbers are the core's: a press's and the analysis's scenarios through node bindings/cli.mjs give the worker's answers", async () => {
  const { task, model, held, ask } = await labOn('induction');
  const clean = firstHeldOut(task, model.seed), pos = clean.length - 2;
  const corrupted = proposeCorruption(task, clean, pos);
  const input = nextTokenInputs(clean);
  const ablated = [[0, 1], [1, 2]];
  const m = await ask({ type: 'evaluate', id: 2, ablated, mean: true, input, pos });
  const { path } = shipped('induction');
  const viaCli = cli(evaluationScenario(model, evaluationBatch(held, input), ablated, true), path);
  const close = (x, y, what) => assert.ok(Math.abs(x - y) <= 1e-5 * Math.max(1, Math.abs(y)), `${what}: ${x} vs ${y}`);
  close(m.loss, viaCli.loss, 'held-out loss');
  const V = model.config.vocab_size, n = held.shape[0] * held.shape[1];
  assert.equal(accuracy(Float32Array.from(viaCli.outputs[0].data).subarray(0, n * V), held.target, V), m.accuracy, 'held-out accuracy');
  const a = await ask({ type: 'analyse', id: 3, clean: clean.slice(0, -1), corrupted: corrupted.slice(0, -1), pos, token: clean[pos + 1], wrong: corrupted[pos + 1] });
  const { heads, residual } = analysisScenarios(model, clean.slice(0, -1), corrupted.slice(0, -1), pos, clean[pos + 1], corrupted[pos + 1]);
  const h = cli(heads, path), r = cli(residual, path);
  h.patching.cells.forEach((c, i) => close(a.heads.patching.cells[i].metric, c.metric, `patching ${c.step} ${c.head}`));
  h.attribution_patching.cells.forEach((c, i) => close(a.heads.attribution_patching.cells[i].estimate, c.estimate, `attribution ${c.step} ${c.head}`));
  r.patching.cells.forEach((c, i) => close(a.residual.patching.cells[i].metric, c.metric, `residual ${c.step} ${c.position}`));
  h.logit_attribution.components.forEach((c, i) => close(a.dla.components[i].value, c.value, c.name));
  assert.equal(a.heads.patching.cells.length, model.config.n_layer * model.config.n_head);
  const grid = patchingGrid(a.heads.patching, a.heads.attribution_patching, 'head');
  assert.equal(grid.effect.length, model.config.n_layer * model.config.n_head);
  // the lens's last point is the model's own output: its top token at every position is the logits' argmax
  const last = h.logit_lens.at(-1);
  const argmax = (row) => row.indexOf(Math.max(...row));
  for (let i = 0; i < clean.length - 1; i++) assert.equal(a.lens.at(-1).top[i], argmax(h.outputs[0].data.slice(i * V, (i + 1) * V)), `position ${i}`);
  assert.equal(last.step, 'transformer.h.1.x_mlp');
});

test('on the shipped induction model the head ranked first is the induction head of the held-out pattern scores (or the previous-token head below it), and switching it off costs >= 0.3 accuracy', async () => {
  const { loaded, ask } = await labOn('induction');
  const base = await ask({ type: 'evaluate', id: 2, ablated: [], mean: false, input: { idx: new Float32Array(0) }, pos: 0 });
  const ranking = rankHeads((await ask({ type: 'rank', id: 4, mean: false })).rows);
  const top = ranking[0];
  const all = loaded.scores.flatMap((layer, l) => layer.map((s, h) => ({ layer: l, head: h, ...s })));
  const induction = all.reduce((a, b) => (b.induction > a.induction ? b : a));
  assert.ok(induction.induction >= 0.5, `the strongest induction score is ${induction.induction}`);
  const isInduction = top.layer === induction.layer && top.head === induction.head;
  const isPrevBelow = top.layer === induction.layer - 1 && all.find((x) => x.layer === top.layer && x.head === top.head).previous >= 0.5;
  assert.ok(isInduction || isPrevBelow, `ranked first: ${JSON.stringify(top)}; induction head: layer ${induction.layer}, head ${induction.head}`);
  assert.ok(base.accuracy - top.accuracy >= 0.3, `${base.accuracy} -> ${top.accuracy}`);
});

test('a scenario\'s loss without grads or trace (no backward pass, the lab\'s held-out loss) is the loss a backward pass reports, bit for bit', async () => {
  const { loadAttention } = await import('../../bindings/attention.mjs');
  const core = await loadAttention({ fast: true });
  const { model, weights } = shipped('induction');
  const held = heldOutSet(getTask('induction'), model.seed, 32);
  for (const [ablated, mean] of [[[], false], [[[0, 2], [1, 1]], true]]) {
    const s = evaluationScenario(model, evaluationBatch(held, { idx: new Float32Array(0) }), ablated, mean);
    const alone = core.run(s, { weights }), withGrads = core.run({ ...s, grads: true }, { weights });
    assert.equal(alone.loss, withGrads.loss);
    assert.deepEqual(alone.outputs[0].data, withGrads.outputs[0].data);
    assert.equal(alone.grads.length, 0);
  }
});

// The residual patching map's rows: the heatmap cuts a label at 12 characters, and whole step names
// ("transformer.h.0.x_attn", "layers.0.norm1") all came out "transformer…" or "layers.0.no…".
test('residualLabel: each residual step of both architectures as a label of at most 12 characters, all different', () => {
  const steps = ['x', 'transformer.h.0.x_attn', 'transformer.h.0.x_mlp', 'transformer.h.11.x_attn', 'layers.0.norm1', 'layers.0.norm2', 'layers.1.norm1'];
  assert.deepEqual(steps.map(residualLabel), ['x', '0.x_attn', '0.x_mlp', '11.x_attn', '0.norm1', '0.norm2', '1.norm1']);
});
