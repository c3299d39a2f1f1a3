// web/playground/given.js, the plan of a notebook's view (bindings/python): given tensors run as given, labelled
// with the notebook's tokens or vocabulary, the given mask read in the module's convention and
// broadcast, the chips in input order; and the plan's scenario gives the core's numbers for them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { planGiven } from '../../web/playground/given.js';

const core = await loadAttention();
const info = (id) => core.modules().find((m) => m.id === id);
// The core's attention rules, as the page hands them to its plans (playground/mode.js).
const rules = { mask: (T, S, opts) => core.attentionMask(T, S, opts) };
const range = (n, f = (i) => i) => Array.from({ length: n }, (_, i) => f(i));

test('seed 000 with one tensor as Q, K and V and a (B,1,T,S) padding mask: labels, mask cells and the core\'s run', () => {
  const x = range(2 * 3 * 4, (i) => Math.sin(i));
  const mask = [1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0];   // (2,1,3,3): key 2 hidden; item 1 also key 1
  const given = {
    scenario: {
      module: 'MultiHeadAttention', config: { d_model: 4, num_heads: 2 }, seed: 0, train: false,
      inputs: [{ name: 'Q', shape: [2, 3, 4], data: x }, { name: 'K', same_as: 'Q' }, { name: 'V', same_as: 'Q' }, { name: 'mask', shape: [2, 1, 3, 3], data: mask }],
    },
    tokens: { Q: [['a', 'b', 'c'], ['d', 'e', 'f']] },
  };
  const plan = planGiven(given, info('MultiHeadAttention'), { rules });
  assert.deepEqual([plan.B, plan.T, plan.S, plan.pairing], [2, 3, 3, 'one']);
  assert.deepEqual(plan.tokens.K, [['a', 'b', 'c'], ['d', 'e', 'f']], 'K is Q: its labels');
  assert.deepEqual(plan.sentences, [['a', 'b', 'c']]);
  assert.equal(plan.mask.convention, 'zero');
  assert.equal(plan.mask.causal, false);
  assert.deepEqual(range(3, (k) => plan.mask.at(0, 1, k)), [false, false, true]);
  assert.deepEqual(range(3, (k) => plan.mask.at(1, 2, k)), [false, true, true]);
  const r = core.run(plan.main);
  const w = r.outputs.find((o) => o.name === 'attention_weights');
  assert.deepEqual(w.shape, [2, 2, 3, 3]);
  // Where the mask hides a key its weight is exactly 0, for every head.
  for (let b = 0; b < 2; b++) for (let h = 0; h < 2; h++) for (let q = 0; q < 3; q++) for (let k = 0; k < 3; k++) {
    if (plan.mask.at(b, q, k)) assert.equal(w.data[((b * 2 + h) * 3 + q) * 3 + k], 0);
  }
});

test('seed 002\'s Transformer with ids and a vocabulary: the vocabulary labels both sentences, source chips first', () => {
  const vocab = ['<pad>', 'I', 'love', 'you', '<eos>'];
  const given = {
    scenario: {
      module: 'Transformer', config: { vocab_size: 5, emb_dim: 8, num_heads: 2, ffn_dim: 16, num_layers: 1 }, seed: 3, train: false,
      inputs: [{ name: 'src', shape: [1, 3], data: [1, 2, 3] }, { name: 'tgt', shape: [1, 4], data: [3, 2, 1, 4] }],
    },
    vocab,
  };
  const plan = planGiven(given, info('Transformer'), { rules });
  assert.deepEqual([plan.T, plan.S, plan.pairing], [4, 3, 'cross']);
  assert.deepEqual(plan.tokens.src, [['I', 'love', 'you']]);
  assert.deepEqual(plan.tokens.tgt, [['you', 'love', 'I', '<eos>']]);
  assert.deepEqual(plan.sentences, [['I', 'love', 'you'], ['you', 'love', 'I', '<eos>']]);
  assert.deepEqual(plan.vocab.ids(plan.sentences[1]), [3, 2, 1, 4]);
  assert.equal(plan.mask, null);
  assert.deepEqual(core.run(plan.main).outputs[0].shape, [1, 4, 5]);
});

test('seed 004\'s causal module without tokens: positions label the axes, its built-in mask is the causal one', () => {
  const given = {
    scenario: {
      module: 'CausalMultiHeadAttention', config: { d_in: 3, d_out: 2, context_length: 6, dropout: 0, num_heads: 2, qkv_bias: false }, seed: 123,
      inputs: [{ name: 'x', shape: [1, 4, 3], data: range(12, (i) => i / 12) }],
    },
  };
  const plan = planGiven(given, info('CausalMultiHeadAttention'), { grads: true, rules });
  assert.deepEqual(plan.tokens.x, [['0', '1', '2', '3']]);
  assert.equal(plan.mask.builtin, true);
  assert.equal(plan.mask.at(0, 1, 2), true);
  assert.equal(plan.loss, 'sum');
  assert.ok(core.run(plan.main).grads.length > 0);
});
