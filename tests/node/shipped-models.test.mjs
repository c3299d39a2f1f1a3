// The models the page ships (web/public/models/<task>/, npm run train-models): one per training
// task, each at most 200 KB, its card's held-out accuracy (>= 0.95) given again by the core on the
// same held-out set; the character-level language model (web/public/models/fortunes/, npm run
// train-lm), at most 2 MB, its card's samples generated again; and the logits of each the same as
// nanoGPT's own GPT loading the file strictly in
// PyTorch (scripts/shipped_logits.py; skipped where python3-torch is missing), within 1e-5 of the
// largest logit.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { LM_DIR, SAMPLE } from '../../scripts/train-lm.mjs';
import { HELDOUT, MODELS_DIR, SEED } from '../../scripts/train-models.mjs';
import { accuracy } from '../../web/train/engine.js';
import { getTask, heldOutSet, TASK_IDS } from '../../web/train/tasks.js';

const core = await loadAttention({ fast: true, simd: 'simd128' });  // as train-models.mjs trained them
const models = TASK_IDS.map((task) => ({ task, dir: `${MODELS_DIR}${task}` }));
const read = ({ dir }) => ({ card: JSON.parse(readFileSync(`${dir}/card.json`, 'utf8')), weights: new Uint8Array(readFileSync(`${dir}/model.safetensors`)) });
const scenario = (card, idx, shape) => ({ module: 'GPT', config: card.config, seed: card.seed, inputs: [{ name: 'idx', shape, data: Array.from(idx) }] });
const hasTorch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;

test('every training task has a shipped nanoGPT model of at most 200 KB with its card', () => {
  for (const m of models) {
    assert.ok(existsSync(`${m.dir}/model.safetensors`) && existsSync(`${m.dir}/card.json`), `${m.task}: run npm run train-models`);
    const bytes = statSync(`${m.dir}/model.safetensors`).size;
    assert.ok(bytes <= 200 * 1024, `${m.task}: ${bytes} bytes`);
    const { card } = read(m);
    assert.equal(card.task, m.task);
    assert.equal(card.module, 'GPT');
    assert.equal(card.seed, SEED);
    assert.equal(card.losses.length, card.steps);
    assert.match(card.command, /^npm run train-models/);
  }
});

test("each shipped model's held-out accuracy, computed again by the core, is its card's and at least 0.95", () => {
  for (const m of models) {
    const { card, weights } = read(m);
    const task = getTask(m.task);
    const held = heldOutSet(task, SEED, HELDOUT);
    const r = core.run(scenario(card, held.idx, held.shape), { weights, weightsName: `${m.task}/model.safetensors` });
    const acc = accuracy(r.outputs[0].data, held.target, task.vocabSize);
    assert.equal(acc, card.heldout.accuracy, m.task);
    assert.ok(acc >= 0.95, `${m.task}: ${acc}`);
  }
});

const lm = { task: 'fortunes', dir: LM_DIR.replace(/\/$/, '') };
const lmIds = (card, text) => [...text].map((c) => card.vocab.indexOf(c));

test('the language model: at most 2 MB, its card (corpus, licence, held-out loss), its samples generated again by the core', () => {
  const { card, weights } = read(lm);
  assert.ok(weights.length <= 2 * 1024 * 1024, `${weights.length} bytes`);
  assert.equal(card.corpus.name, 'fortunes');
  assert.match(card.corpus.licence, /BSD/);
  assert.equal(card.vocab.length, card.config.vocab_size);
  assert.ok(card.heldout.loss_nats_per_char > 0 && card.heldout.loss_nats_per_char <= 1.9, `held-out loss ${card.heldout.loss_nats_per_char} nats per character (target 1.9)`);
  assert.equal(card.samples.length, 3);
  for (const sm of card.samples) {
    const ids = lmIds(card, sm.prompt);
    const r = core.run({ module: 'GPT', config: card.config, seed: sm.seed, inputs: [{ name: 'idx', shape: [1, ids.length], data: ids }],
      generate: { max_new_tokens: sm.max_new_tokens, temperature: sm.temperature, top_k: sm.top_k } }, { weights });
    assert.deepEqual(SAMPLE, { max_new_tokens: sm.max_new_tokens, temperature: sm.temperature, top_k: sm.top_k });
    assert.equal(r.ids[0].map((i) => card.vocab[i]).join(''), sm.text, sm.prompt);
  }
});

test("the shipped models' logits are nanoGPT's in PyTorch (1e-5 of the largest)", { skip: !hasTorch && 'python3-torch is not installed' }, () => {
  const inputs = models.map((m) => {
    const held = heldOutSet(getTask(m.task), SEED, 4);
    const T = held.shape[1];
    return { ...m, held, idx: Array.from({ length: 4 }, (_, b) => Array.from(held.idx.subarray(b * T, (b + 1) * T))) };
  });
  const lmCard = read(lm).card;  // the language model on its first sample's text, one full window
  const text = lmIds(lmCard, lmCard.samples[0].text).slice(0, lmCard.config.block_size);
  inputs.push({ ...lm, held: { idx: Float32Array.from(text), shape: [1, text.length] }, idx: [text] });
  const py = spawnSync('/usr/bin/python3', [new URL('../../scripts/shipped_logits.py', import.meta.url).pathname],
    { input: JSON.stringify({ models: inputs.map(({ dir, idx }) => ({ dir, idx })) }), encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(py.status, 0, py.stderr);
  const torchLogits = JSON.parse(py.stdout).logits;
  inputs.forEach((m, i) => {
    const { card, weights } = read(m);
    const got = core.run(scenario(card, m.held.idx, m.held.shape), { weights }).outputs[0].data;
    assert.equal(got.length, torchLogits[i].length, m.task);
    // 1e-5 of the largest logit: trained logits reach 25, where float32's own spacing is 2e-6
    let worst = 0, scale = 1;
    got.forEach((v, k) => { worst = Math.max(worst, Math.abs(v - torchLogits[i][k])); scale = Math.max(scale, Math.abs(torchLogits[i][k])); });
    assert.ok(worst <= 1e-5 * scale, `${m.task}: max |core - nanoGPT| = ${worst}, largest |logit| ${scale}`);
  });
});
