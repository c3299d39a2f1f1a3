// PyTorch-saved weights (tests/fixtures/weights/) through the WASM core: every dtype reproduces
// PyTorch's outputs at the native tolerance, damaged files give their errors (the same as
// natively) and the module keeps working, and the WASM CLI agrees with the native one.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { compare, values } from './fixtures.mjs';

const dir = new URL('../fixtures/weights/', import.meta.url);
const read = (name) => readFileSync(new URL(name, dir));
const json = (name) => JSON.parse(read(name).toString('utf8'));
const core = await loadAttention();

for (const model of ['encoder_layer', 'causal_mha']) {
  for (const dtype of ['f32', 'f16', 'bf16']) {
    const name = `${model}_${dtype}`;
    test(`${name}: PyTorch's weights give PyTorch's outputs through WASM`, () => {
      const r = core.run(json(`${name}.scenario.json`), { weights: read(`${name}.safetensors`) });
      for (const e of json(`${name}.expected.json`).outputs) {
        const got = r.outputs.find((o) => o.name === e.name);
        const c = compare(got.data, values(e));
        assert.ok(c.ok, `${name} ${e.name}: max diff ${c.maxAbs}`);
      }
    });
  }
}

// One file per other seed module, saved as users would (scripts/export_state_dict.py).
const everyModule = readdirSync(dir).filter((f) => /^module_.*\.safetensors$/.test(f)).map((f) => f.slice(0, -'.safetensors'.length));
test('a state_dict of every seed module saved by export_state_dict.py gives PyTorch\'s outputs through WASM', () => {
  assert.ok(everyModule.length >= 10);
  for (const name of everyModule) {
    const r = core.run(json(`${name}.scenario.json`), { weights: read(`${name}.safetensors`) });
    const expected = json(`${name}.expected.json`).outputs;
    assert.ok(expected.length > 0);
    for (const e of expected) {
      const got = r.outputs.find((o) => o.name === e.name);
      assert.ok(got, `${name}: output ${e.name}`);
      const c = compare(got.data, values(e));
      assert.ok(c.ok, `${name} ${e.name}: max diff ${c.maxAbs}`);
    }
  }
});

test('damaged weights files give their errors and the core keeps working', () => {
  const bad = json('bad.json');
  const scenario = json(bad.scenario);
  const good = () => core.run(scenario, { weights: read('causal_mha_f32.safetensors') }).outputs[0].data[0];
  const first = good();
  assert.ok(Object.keys(bad.files).length >= 8);
  for (const [file, message] of Object.entries(bad.files)) {
    assert.throws(() => core.run(scenario, { weights: read(file) }), (e) => e instanceof Error && e.message.includes(message), file);
    assert.equal(good(), first);
  }
  assert.throws(() => core.run(scenario), /the file is not loaded/);
  // weights that are no file's bytes: a number n became n zero bytes, a string none, a list its values
  for (const [weights, kind] of [[5, '5'], ['x', '"x"'], [{}, 'Object'], [[1, 2], 'Array']])
    assert.throws(() => core.run(scenario, { weights }), (e) => e.field === 'weights'
      && e.message === `options.weights must be the file's bytes (a Uint8Array or an ArrayBuffer), got ${kind}`, kind);
  // the same bytes as an ArrayBuffer or through another view; options null as none
  const bytes = read('causal_mha_f32.safetensors');
  const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  assert.equal(core.run(scenario, { weights: copy }).outputs[0].data[0], first);
  assert.equal(core.run(scenario, { weights: new DataView(copy) }).outputs[0].data[0], first);
  assert.throws(() => core.run(scenario, null), /the file is not loaded/);
});

test('weightsListing names every tensor with dtype and shape; a damaged file throws', () => {
  const list = core.weightsListing(read('encoder_layer_bf16.safetensors'));
  assert.ok(list.length >= 12);
  assert.deepEqual(list.find((t) => t.name === 'attn.qkv_proj.weight'), { name: 'attn.qkv_proj.weight', dtype: 'BF16', shape: [48, 16] });
  assert.throws(() => core.weightsListing(read('bad_oversized_header.safetensors')), /above the 16777216-byte limit/);
});

// A safetensors file of this header and data: the header's length (8 bytes, little-endian) before it.
const safetensors = (head, data = Buffer.alloc(0)) => {
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(head.length));
  return Buffer.concat([size, head, data]);
};

test('a header nested 10,000 deep is an Error, not a WASM stack overflow', () => {
  const file = safetensors(Buffer.from(`{"a":${'['.repeat(10000)}${']'.repeat(10000)}}`));
  assert.throws(() => core.weightsListing(file), /nests deeper than 8 levels/);
  assert.throws(() => core.run(json('causal_mha_f32.scenario.json'), { weights: file }), /nests deeper than 8 levels/);
});

// A damaged header's bytes need not be UTF-8, and the parser's message quotes them ("last read").
test('a header with bytes that are not UTF-8 is an Error quoting them as U+FFFD, not a bare WebAssembly.Exception', () => {
  const head = Buffer.concat([Buffer.from('{"a'), Buffer.from([0xf4, 0x20]), Buffer.from('":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}')]);
  const file = safetensors(head, Buffer.alloc(4));
  for (let i = 0; i < 2; ++i)
    assert.throws(() => core.weightsListing(file), (e) => e instanceof Error && /ill-formed UTF-8 byte; last read: '"a\ufffd/.test(e.message), String(i));
  assert.throws(() => core.run(json('causal_mha_f32.scenario.json'), { weights: file }), (e) => e instanceof Error && /ill-formed UTF-8/.test(e.message));
  assert.equal(core.weightsListing(read('encoder_layer_bf16.safetensors')).length >= 12, true);
});

test('the WASM CLI and the native CLI print the same result with --weights', () => {
  const cwd = fileURLToPath(dir);
  const args = ['run', 'causal_mha_bf16.scenario.json', '--weights', 'causal_mha_bf16.safetensors'];
  const wasm = JSON.parse(execFileSync('node', [fileURLToPath(new URL('../../bindings/cli.mjs', import.meta.url)), ...args], { cwd }));
  const native = JSON.parse(execFileSync(fileURLToPath(new URL('../../build/native/attention-cli', import.meta.url)), args, { cwd }));
  const c = compare(Float32Array.from(wasm.outputs[0].data), Float32Array.from(native.outputs[0].data), 1e-6, 1e-6);
  assert.ok(c.ok, `max diff ${c.maxAbs}`);
  // a file of another module: both name the file given, not the one the scenario was made with
  const wrong = ['run', 'causal_mha_f32.scenario.json', '--weights', 'module_Transformer.safetensors'];
  for (const [cmd, args] of [['node', [fileURLToPath(new URL('../../bindings/cli.mjs', import.meta.url)), ...wrong]],
    [fileURLToPath(new URL('../../build/native/attention-cli', import.meta.url)), wrong]]) {
    const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
    assert.equal(r.status, 1, cmd);
    assert.match(r.stderr, /^error: weights 'module_Transformer\.safetensors': '[\w.]+' is not a parameter of CausalMultiHeadAttention/, cmd);
  }
});
