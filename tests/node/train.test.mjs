// Training through the WASM core's incremental API (bindings/attention.mjs: core.trainer): it
// takes the very steps a scenario with "optimize" takes, new inputs and targets between steps,
// errors that name their field and leave the trainer usable, and no heap growth over many steps.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { compare, fixtureNames, readFixture, values } from './fixtures.mjs';

const core = await loadAttention();

test('a trainer stepped N times gives the losses and parameters of the scenario (and PyTorch)', () => {
  const names = fixtureNames('train/').filter((n) => n.includes('/opt_'));
  assert.ok(names.length >= 8);
  for (const name of names) {
    const { scenario, expected } = readFixture(name);
    const trainer = core.trainer({ ...scenario, optimize: { ...scenario.optimize, steps: 1 } });
    try {
      const losses = Array.from({ length: scenario.optimize.steps }, () => trainer.step());
      const c = compare(Float32Array.from(losses), Float32Array.from(expected.losses), 1e-7, 1e-4);
      assert.ok(c.ok, `${name}: losses differ from PyTorch by ${c.maxAbs}`);
      for (const p of trainer.params()) {
        const e = expected.params.find((x) => x.name === p.name);
        const d = compare(p.data, values(e), 1e-4, 1e-3);
        assert.ok(d.ok, `${name} ${p.name}: max |trainer - pytorch| = ${d.maxAbs}`);
      }
      assert.equal(trainer.steps, scenario.optimize.steps);
    } finally {
      trainer.delete();
    }
  }
});

const tiny = (seed = 3) => ({
  module: 'CausalMultiHeadAttention', seed, config: { d_in: 4, d_out: 4, context_length: 8, dropout: 0, num_heads: 2 },
  inputs: [{ name: 'x', shape: [2, 5, 4], init: 'randn' }],
  loss: { fn: 'mse', target: { shape: [2, 5, 4], init: 'randn' } },
  optimize: { optimizer: 'Adam', lr: 0.01, steps: 1 },
});

test('new inputs and targets between steps: the same numbers as giving them in the scenario', () => {
  const x = Float32Array.from({ length: 40 }, (_, i) => Math.cos(i));
  const y = Float32Array.from({ length: 40 }, (_, i) => Math.sin(i * 0.3));
  const trainer = core.trainer(tiny());
  trainer.setInput('x', x, [2, 5, 4]);
  trainer.setTarget(y, [2, 5, 4]);
  const fromTrainer = [trainer.step(), trainer.step()];
  trainer.delete();
  const s = { ...tiny(), inputs: [{ name: 'x', shape: [2, 5, 4], data: Array.from(x) }],
    loss: { fn: 'mse', target: { shape: [2, 5, 4], data: Array.from(y) } }, optimize: { optimizer: 'Adam', lr: 0.01, steps: 2 } };
  assert.deepEqual(fromTrainer, core.run(s).losses);
});

test('trainer.forward gives traced steps with gradients of the current batch', () => {
  const trainer = core.trainer(tiny());
  const r = trainer.forward({ trace: true, grads: true });
  trainer.delete();
  assert.ok(r.loss > 0);
  const weights = r.steps.find((s) => s.name === 'attn_weights');
  assert.equal(weights.op, 'softmax');
  assert.equal(weights.grad.length, weights.data.length);
  assert.deepEqual(r.grads.map((g) => g.name), ['W_query.weight', 'W_key.weight', 'W_value.weight', 'out_proj.weight', 'out_proj.bias', 'input:x']);
});

test('bad training fields name their field; a failed call leaves the trainer usable', () => {
  const bad = [
    [{ loss: { fn: 'hinge' } }, 'loss.fn'],
    [{ optimize: { optimizer: 'RMSprop' } }, 'optimize.optimizer'],
    [{ optimize: { optimizer: 'SGD', lr: 0 } }, 'optimize.lr'],
    [{ optimize: { optimizer: 'Adam', lr: 'NaN' } }, 'optimize.lr'],
    [{ optimize: { optimizer: 'Adam', steps: 1e6 } }, 'optimize.steps'],
  ];
  for (const [change, field] of bad) {
    assert.throws(() => core.trainer({ ...tiny(), ...change }).delete(), (e) => e.field === field, JSON.stringify(change));
  }
  // a target of another shape than the output: known at the first forward
  const mismatched = core.trainer({ ...tiny(), loss: { fn: 'mse', target: { shape: [2, 5, 3], init: 'randn' } } });
  assert.throws(() => mismatched.step(), (e) => e.field === 'loss.target' && /shape \[2, 5, 3\]/.test(e.message));
  mismatched.delete();
  const trainer = core.trainer(tiny());
  trainer.setTarget(new Float32Array(3), [3]);
  assert.throws(() => trainer.step(), (e) => e.field === 'loss.target');
  trainer.setTarget(new Float32Array(40), [2, 5, 4]);
  assert.ok(Number.isFinite(trainer.step()));
  // values that do not fill the shape, or a shape that is no shape: refused by name (too few values
  // were read past their end before), and the trainer goes on as it was
  const refused = [
    [() => trainer.setInput('x', new Float32Array(39), [2, 5, 4]), 'inputs.x', "input 'x' has 39 values but the shape [2, 5, 4] needs 40: give one value per element, row-major"],
    [() => trainer.setInput('x', new Float32Array(41), [2, 5, 4]), 'inputs.x', "input 'x' has 41 values but the shape [2, 5, 4] needs 40: give one value per element, row-major"],
    [() => trainer.setInput('x', new Float32Array(40), [2, 5, 4.5]), 'inputs.x', "input 'x': the shape's sizes must be whole numbers >= 1, got 4.5"],
    [() => trainer.setInput('x', new Float32Array(0), [2, Number.NaN, 4]), 'inputs.x', "input 'x': the shape's sizes must be whole numbers >= 1, got NaN"],
    [() => trainer.setInput('x', new Float32Array(1), [1, 1, 1, 1, 1, 1, 1, 1, 1]), 'inputs.x', "input 'x': the shape [1, 1, 1, 1, 1, 1, 1, 1, 1] must have 1 to 8 sizes, e.g. [1, 6]"],
    [() => trainer.setTarget(new Float32Array(8), [2, 5, 4]), 'target', 'the target has 8 values but the shape [2, 5, 4] needs 40: give one value per element, row-major'],
    [() => trainer.setTarget(new Float32Array(40), [2, 0, 4]), 'target', "the target: the shape's sizes must be whole numbers >= 1, got 0"],
    // values that are no float32 number: a NaN was taken (the step after it said the model diverged)
    [() => trainer.setInput('x', new Float32Array(40).fill(0.5).fill(Number.NaN, 7, 8), [2, 5, 4]), 'inputs.x', "input 'x': the value at index 7 (NaN) is not a finite float32 value"],
    [() => trainer.setTarget(new Float32Array(40).fill(-Infinity, 3), [2, 5, 4]), 'target', 'the target: the value at index 3 (-Infinity) is not a finite float32 value'],
    [() => trainer.setInput('x', Array(40).fill({}), [2, 5, 4]), 'inputs.x', "input 'x': the value at index 0 (NaN) is not a finite float32 value"],
    // no list where one is due: a TypeError from inside Embind's copy, or a string's letters as NaNs
    [() => trainer.setInput('x', null, [2, 5, 4]), 'inputs.x', "input 'x': the values must be a Float32Array or a list of numbers, got null"],
    [() => trainer.setInput('x', 'abc', [3]), 'inputs.x', 'input \'x\': the values must be a Float32Array or a list of numbers, got "abc"'],
    [() => trainer.setInput('x', new Float32Array(40), undefined), 'inputs.x', "input 'x': the shape must be a list of sizes, e.g. [1, 6], got undefined"],
    [() => trainer.setTarget(new DataView(new ArrayBuffer(160)), [2, 5, 4]), 'target', 'the target: the values must be a Float32Array or a list of numbers, got DataView'],
    [() => trainer.setInput(5, new Float32Array(40), [2, 5, 4]), 'inputs', 'setInput: the input\'s name must be a string, got 5'],
  ];
  for (const [call, field, message] of refused) assert.throws(call, (e) => e.field === field && e.message === message, message);
  assert.ok(Number.isFinite(trainer.step()));
  assert.equal(trainer.forward(null).outputs[0].data.length, 40, 'forward(null) as forward()');
  trainer.delete();
});

test('2,000 training steps do not grow the WASM heap after warm-up', () => {
  const trainer = core.trainer({ ...tiny(), train: true, config: { ...tiny().config, dropout: 0.1 } });
  for (let i = 0; i < 50; i++) trainer.step();
  const before = { size: core.heapBytes(), used: core.heapUsed() };
  for (let i = 0; i < 2000; i++) trainer.step();
  trainer.delete();
  assert.equal(core.heapBytes(), before.size, 'WASM memory grew');
  assert.ok(core.heapUsed() - before.used <= 4096, `malloc'd bytes grew by ${core.heapUsed() - before.used}`);
});
