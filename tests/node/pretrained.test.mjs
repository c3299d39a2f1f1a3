// Hugging Face model folders (tests/fixtures/pretrained/) through the WASM core: run(scenario,
// {files}) with the folder as an object or a function gives the references' logits, attention and
// greedy ids (cached or not); the Node CLI reads the folder beside the scenario; an untrusted
// folder's lies give the native core's messages with field "pretrained", and the module keeps working.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { checkResult } from './fixtures.mjs';

const dir = new URL('../fixtures/pretrained/', import.meta.url);
const json = (name) => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));
// the folder as {name: bytes}
const folder = (name) => Object.fromEntries(readdirSync(new URL(`${name}/`, dir)).map((f) => [f, readFileSync(new URL(`${name}/${f}`, dir))]));
const core = await loadAttention();
const CASES = ['gpt2_prefix_f32', 'gpt2_bare_f16_sharded', 'llama_gqa_f32', 'llama_mqa_tied_bf16_sharded', 'qwen2_bias_f16_bare'];

for (const name of CASES) {
  test(`${name}: the folder gives the reference's logits, attention and ids, with and without the cache`, () => {
    const files = folder(name);
    for (const cache of [true, false]) {
      const scenario = json(`${name}.scenario.json`);
      scenario.generate.cache = cache;
      // an object of files, then a function reading them (what the CLI passes)
      const r = core.run(scenario, { files: cache ? files : (f) => files[f] ?? null });
      assert.deepEqual(checkResult(r, json(`${name}.expected.json`)), [], `${name}, cache ${cache}`);
    }
  });
}

test('the Node CLI reads the folder relative to the scenario file', () => {
  const cli = fileURLToPath(new URL('../../bindings/cli.mjs', import.meta.url));
  const p = spawnSync(process.execPath, [cli, 'run', fileURLToPath(new URL('llama_gqa_f32.scenario.json', dir))], { encoding: 'utf8' });
  assert.equal(p.status, 0, p.stderr);
  assert.deepEqual(JSON.parse(p.stdout).ids, json('llama_gqa_f32.expected.json').ids);
});

test('an untrusted folder is refused with a message naming the fault, and the module keeps working', () => {
  const scenario = json('llama_mqa_tied_bf16_sharded.scenario.json');
  const refuse = (edit, pattern) => {
    const files = folder('llama_mqa_tied_bf16_sharded');
    const read = [];
    edit(files);
    assert.throws(() => core.run(scenario, { files: (f) => (read.push(f), files[f] ?? null) }),
      (e) => pattern.test(e.message) && e.field === 'pretrained', String(pattern));
    return read;
  };
  const index = (files, edit) => {
    const j = JSON.parse(files['model.safetensors.index.json']);
    edit(j);
    files['model.safetensors.index.json'] = Buffer.from(JSON.stringify(j));
  };
  let read = refuse((f) => index(f, (j) => { j.weight_map['model.norm.weight'] = '../secret.safetensors'; }),
    /puts 'model\.norm\.weight' in '\.\.\/secret\.safetensors': a shard must be a \.safetensors file in the model folder itself/);
  assert.ok(!read.some((f) => f.endsWith('.safetensors')), 'no shard read before the index is checked');
  read = refuse((f) => index(f, (j) => { j.metadata.total_size = 64e9; }), /total_size \(64000000000 bytes\) is beyond the 2048 MiB/);
  assert.ok(!read.some((f) => f.endsWith('.safetensors')));
  refuse((f) => { f['model-00002-of-00003.safetensors'] = f['model-00002-of-00003.safetensors'].subarray(0, 500); }, /model-00002-of-00003\.safetensors: .*truncated/);
  refuse((f) => { f['config.json'] = Buffer.from('{"model_type": "t5"}'); }, /model_type 't5' is not supported/);
  refuse((f) => { delete f['config.json']; }, /has no config\.json/);
  assert.throws(() => core.run(scenario, { files: 42 }), /options\.files \(number\) must be/);
  assert.throws(() => core.run(scenario), (e) => /no files were handed over/.test(e.message) && e.field === 'pretrained');
  // still usable: the good folder runs
  const r = core.run(json('qwen2_bias_f16_bare.scenario.json'), { files: folder('qwen2_bias_f16_bare') });
  assert.deepEqual(r.ids, json('qwen2_bias_f16_bare.expected.json').ids);
});
