// Hugging Face model folders (tests/fixtures/pretrained/) through the WASM core: run(scenario,
// {files}) with the folder as an object or a function gives the references' logits, attention and
// greedy ids (cached or not); the Node CLI reads the folder beside the scenario; an untrusted
// folder's lies give the native core's messages with field "pretrained" (read whole, and from disk as
// the Node CLI reads it: the same words), and the module keeps working.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { diskFolder } from '../../bindings/disk-folder.mjs';
import { forkGeneration, lastLogits, pretrainedPlan, readModel, sessionGenerator, setInterventions, setMemoryBudget, streamedWeights } from '../../bindings/pretrained.mjs';
import { checkResult } from './fixtures.mjs';

const dir = new URL('../fixtures/pretrained/', import.meta.url);
const json = (name) => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));
// the folder as {name: bytes}
const folder = (name) => Object.fromEntries(readdirSync(new URL(`${name}/`, dir)).map((f) => [f, readFileSync(new URL(`${name}/${f}`, dir))]));
const core = await loadAttention();
const CASES = ['gpt2_prefix_f32', 'gpt2_bare_f16_sharded', 'llama_gqa_f32', 'llama_mqa_tied_bf16_sharded', 'qwen2_bias_f16_bare',
  'mistral_window_f32', 'qwen2_window_bf16', 'llama3_rope_f32', 'llama_linear_rope_bf16'];

for (const name of CASES) {
  test(`${name}: the folder gives the reference's logits, attention and ids, with and without the cache`, () => {
    const files = folder(name);
    for (const cache of [true, false]) {
      const scenario = json(`${name}.scenario.json`);
      scenario.generate.cache = cache;
      // an object of files, then a function reading them (what the CLI passes)
      const r = core.run(scenario, { files: cache ? files : (f) => files[f] ?? null });
      assert.deepEqual(checkResult(r, json(`${name}.expected.json`)), [], `${name}, cache ${cache}`);
      // sampled after the seed: the folder's module drew nothing as it was built (as from_pretrained)
      const sampled = json(`${name}.sampled.json`);
      assert.deepEqual(core.run({ ...sampled.scenario, generate: { ...sampled.scenario.generate, cache } }, { files }).ids, sampled.ids, `${name} sampled, cache ${cache}`);
    }
  });
}

// rope_scaling is what makes these folders' numbers: the same weights with the default frequencies
// miss the reference; the traced cos table names the scaling it was computed with.
test('rope_scaling (llama3, linear): the folders miss their references without it; the cos step carries it', () => {
  for (const [name, type] of [['llama3_rope_f32', 'llama3'], ['llama_linear_rope_bf16', 'linear']]) {
    const files = folder(name);
    const config = JSON.parse(files['config.json']);
    const { generate, ...forward } = json(`${name}.scenario.json`);
    const traced = core.run({ ...forward, trace: true }, { files });
    const cos = traced.steps.find((st) => st.name === 'model.layers.0.self_attn.cos');
    assert.equal(cos.attrs.rope_scaling.rope_type, type, name);
    assert.equal(cos.attrs.rope_scaling.factor, config.rope_scaling.factor);
    const plain = core.run(forward, { files: { ...files, 'config.json': Buffer.from(JSON.stringify({ ...config, rope_scaling: null })) } });
    const want = json(`${name}.expected.json`);
    assert.deepEqual(checkResult(core.run(forward, { files }), { ...want, ids: undefined, generated: undefined }), [], name);
    assert.notDeepEqual(checkResult(plain, { ...want, ids: undefined, generated: undefined }), [], `${name}: the default frequencies miss the reference`);
  }
});

test('the Node CLI reads the folder relative to the scenario file', () => {
  const cli = fileURLToPath(new URL('../../bindings/cli.mjs', import.meta.url));
  const p = spawnSync(process.execPath, [cli, 'run', fileURLToPath(new URL('llama_gqa_f32.scenario.json', dir))], { encoding: 'utf8' });
  assert.equal(p.status, 0, p.stderr);
  assert.deepEqual(JSON.parse(p.stdout).ids, json('llama_gqa_f32.expected.json').ids);
});

// The Node CLI's way (bindings/disk-folder.mjs diskFolder): each weight file's header and size, then run
// reads the weights a range at a time straight into the module; the same numbers as whole files.
test('run with sizes and range reads each weight file\'s data once, a range at a time, and gives the reference\'s numbers', () => {
  for (const name of ['gpt2_bare_f16_sharded', 'llama_gqa_f32']) {
    const files = folder(name);
    const headerOf = (b) => b.subarray(0, 8 + Number(b.readBigUInt64LE(0)));
    const ranges = [];
    const options = {
      files: (f) => (f.endsWith('.safetensors') ? (files[f] ? headerOf(files[f]) : null) : files[f] ?? null),
      sizes: (f) => files[f].length,
      range: (f, offset, length) => (ranges.push([f, offset, length]), files[f].subarray(offset, offset + length)),
    };
    assert.deepEqual(checkResult(core.run(json(`${name}.scenario.json`), options), json(`${name}.expected.json`)), [], name);
    // every byte after each header read once, nothing else
    const weightFiles = Object.keys(files).filter((f) => f.endsWith('.safetensors'));
    for (const f of weightFiles) {
      const got = ranges.filter((r) => r[0] === f).sort((a, b) => a[1] - b[1]);
      assert.equal(got[0][1], headerOf(files[f]).length, `${name}/${f}: the first range starts after the header`);
      got.forEach((r, i) => i > 0 && assert.equal(r[1], got[i - 1][1] + got[i - 1][2], `${name}/${f}: ranges follow each other`));
      assert.equal(got.at(-1)[1] + got.at(-1)[2], files[f].length, `${name}/${f}: the last range ends the file`);
    }
    // a file cut after its header was read, and a reader that gives no bytes, are refused by name
    const cut = { ...options, range: (f, offset, length) => files[f].subarray(offset, Math.min(offset + length, files[f].length - 1)) };
    assert.throws(() => core.run(json(`${name}.scenario.json`), cut),
      (e) => /could not be read at byte \d+ .*shorter than its header says/.test(e.message) && e.field === 'pretrained', name);
    assert.throws(() => core.run(json(`${name}.scenario.json`), { ...options, range: () => 'bytes' }),
      (e) => /options\.range\('.*\.safetensors', \.\.\.\) must give a Uint8Array, got string/.test(e.message) && e.field === 'pretrained', name);
    // without a range, a folder planned from its headers is a trainer's to stream
    assert.throws(() => core.run(json(`${name}.scenario.json`), { ...options, range: undefined }), /streamed into a trainer/);
  }
});

test('a trainer planned from the headers computes nothing until every weight has come, and takes its bytes as a Uint8Array', () => {
  const files = folder('gpt2_prefix_f32');
  const headerOf = (b) => b.subarray(0, 8 + Number(b.readBigUInt64LE(0)));
  const options = { files: (f) => (f.endsWith('.safetensors') ? headerOf(files[f]) : files[f] ?? null), sizes: (f) => files[f].length };
  const tr = core.trainer({ pretrained: 'g', inputs: [{ name: 'idx', shape: [1, 3], data: [1, 2, 3] }], generate: { max_new_tokens: 1, temperature: 0 } }, options);
  try {
    const sink = streamedWeights(tr);
    // before: a forward of uninitialised memory ("the inputs overflow float32"), a generation from it
    const coming = (e) => e.field === 'weights' && e.message.includes(`the model's weights are still coming (${sink.tensors.length} tensors planned from the headers)`);
    assert.throws(() => tr.forward({ trace: false }), coming);
    assert.throws(() => sessionGenerator(tr, 1), coming);
    // a list of numbers was copied as if it were bytes
    assert.throws(() => sink.write(0, 0, [1, 2, 3, 4]), (e) => e.field === 'weights' && e.message === "writeWeights: tensor 0's bytes must be a Uint8Array, got object");
    // a tensor or a first value that is no whole number reached the core cut ("x" wrote into tensor 0,
    // 1.5 into tensor 1) or wrapped (-1 was tensor 4294967295)
    const last = sink.tensors.length - 1;
    for (const [i, first, message] of [
      [1.5, 0, `writeWeights: the tensor (1.5) must be a whole number from 0 to ${last}, an index into tensors`],
      ['x', 0, `writeWeights: the tensor ("x") must be a whole number from 0 to ${last}, an index into tensors`],
      [-1, 0, `writeWeights: the tensor (-1) must be a whole number from 0 to ${last}, an index into tensors`],
      [last + 1, 0, `writeWeights: the tensor (${last + 1}) must be a whole number from 0 to ${last}, an index into tensors`],
      [0, 1.5, "writeWeights: first (1.5) must be a whole number of values from 0 to 2^53 - 1: the tensor's values before these bytes"],
      [0, Number.NaN, "writeWeights: first (NaN) must be a whole number of values from 0 to 2^53 - 1: the tensor's values before these bytes"],
    ]) assert.throws(() => sink.write(i, first, new Uint8Array(4)), (e) => e.field === 'weights' && e.message === message, message);
    for (const [i, t] of sink.tensors.entries()) sink.write(i, 0, files[t.file].subarray(t.begin, t.end));
    sink.finish();
    const whole = core.run({ pretrained: 'g', inputs: [{ name: 'idx', shape: [1, 3], data: [1, 2, 3] }] }, { files });
    assert.deepEqual(Array.from(tr.forward({ trace: false }).outputs[0].data), Array.from(whole.outputs[0].data));
  } finally {
    tr.delete();
  }
});

test('an untrusted folder is refused with a message naming the fault, and the module keeps working', () => {
  const scenario = json('llama_mqa_tied_bf16_sharded.scenario.json');
  // each lie read whole (the bindings' run) and from disk as the Node CLI reads it (diskFolder: the
  // headers and sizes, then ranges): the same words, the folder named as each was given
  const refuse = (edit, pattern) => {
    const files = folder('llama_mqa_tied_bf16_sharded');
    const read = [];
    edit(files);
    let whole = '';
    assert.throws(() => core.run(scenario, { files: (f) => (read.push(f), files[f] ?? null) }),
      (e) => (whole = e.message, pattern.test(e.message) && e.field === 'pretrained'), String(pattern));
    const dir = mkdtempSync(join(tmpdir(), 'attn-folder-'));
    try {
      for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
      const disk = diskFolder(dir), files2 = disk.files;
      disk.files = (f) => (read.push(`disk:${f}`), files2(f));
      assert.throws(() => core.run({ ...scenario, pretrained: dir }, disk),
        (e) => e.message.split(dir).join(scenario.pretrained) === whole && e.field === 'pretrained', `${pattern} from disk`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
  // a header of several MB, refused from its length (the disk reader reads its 8 bytes only), and
  // one that claims more bytes than the file holds
  const lengthOf = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
  refuse((f) => { f['model-00001-of-00003.safetensors'] = Buffer.concat([lengthOf(20 << 20), Buffer.alloc(64)]); }, /above the 16777216-byte limit/);
  refuse((f) => { f['model-00001-of-00003.safetensors'] = Buffer.concat([lengthOf(4096), Buffer.from('{}')]); }, /runs past the end of the file/);
  refuse((f) => { f['config.json'] = Buffer.from('{"model_type": "t5"}'); }, /model_type 't5' is not supported/);
  refuse((f) => { delete f['config.json']; }, /has no config\.json/);
  assert.throws(() => core.run(scenario, { files: 42 }), /options\.files \(number\) must be/);
  assert.throws(() => core.run(scenario), (e) => /no files were handed over/.test(e.message) && e.field === 'pretrained');
  // still usable: the good folder runs
  const r = core.run(json('qwen2_bias_f16_bare.scenario.json'), { files: folder('qwen2_bias_f16_bare') });
  assert.deepEqual(r.ids, json('qwen2_bias_f16_bare.expected.json').ids);
});

// An address as a student pastes it: a Hub model's page, a tree/ or blob/ view, a revision, any folder.
test('folderUrl: a Hub model page, tree view or file link reads the folder at resolve/<revision>/; other hosts as given', async () => {
  const { folderUrl } = await import('../../web/model/loader.js');
  const at = (s) => folderUrl(s, 'http://localhost/').href;
  assert.equal(at('https://huggingface.co/openai-community/gpt2'), 'https://huggingface.co/openai-community/gpt2/resolve/main/');
  assert.equal(at('https://huggingface.co/gpt2/'), 'https://huggingface.co/gpt2/resolve/main/');
  assert.equal(at('https://huggingface.co/HuggingFaceTB/SmolLM2-135M/tree/main'), 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/main/');
  assert.equal(at('https://huggingface.co/HuggingFaceTB/SmolLM2-135M/blob/v1.0/config.json'), 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/v1.0/');
  assert.equal(at('https://hf.co/a/b/resolve/abc123?x=1#y'), 'https://hf.co/a/b/resolve/abc123/');
  assert.equal(at('https://example.org/models/gpt2'), 'https://example.org/models/gpt2/');
  assert.equal(at('/hf/tiny'), 'http://localhost/hf/tiny/');
  assert.equal(at('https://example.org/m/model.safetensors.index.json'), 'https://example.org/m/');
  assert.throws(() => folderUrl('file:///etc/', 'http://localhost/'), /file: URLs are not read/);
});

// The page's check before a download (web/model/loader.js): the index alone lists the shards
// without reading them; their headers and sizes alone give the plan, and a size short of what a
// header claims (a truncated download) is refused before the data is asked for.
test('setMemoryBudget: a value that is no number of bytes is refused by name; past 4 GiB the WebAssembly memory is the limit, and its message says so', () => {
  for (const bad of [-1, Number.NaN, '5', undefined])
    assert.throws(() => setMemoryBudget(core, bad), new RegExp(`^Error: setMemoryBudget: bytes \\(${bad === '5' ? '"5"' : String(bad)}\\) must be a number of bytes, 0 or more$`));
  // 4 GiB wrapped to a budget of 0 bytes in 32-bit WebAssembly before: every tensor refused
  const attention = (T, H) => ({ module: 'CausalMultiHeadAttention', seed: 1, inputs: [{ name: 'x', shape: [1, T, 4], init: 'randn' }],
    config: { d_in: 4, d_out: 2 * H, context_length: T, dropout: 0, num_heads: H, qkv_bias: false } });
  try {
    setMemoryBudget(core, 2 ** 32);
    assert.deepEqual(core.run(attention(8, 2)).outputs[0].shape, [1, 8, 4]);
    // 40 heads x 4096 x 4096 weights: 2560 MiB, past the 2048 MiB this build's memory may grow to
    assert.throws(() => core.run(attention(4096, 40)),
      /^Error: a tensor of shape \[1, 40, 4096, 4096\] \(2560 MiB\) does not fit in this WebAssembly memory \(2048 MiB at most, its tensors and the rest\): make the scenario smaller$/);
    assert.deepEqual(core.run(attention(8, 2)).outputs[0].shape, [1, 8, 4]);  // and the core goes on
  } finally {
    setMemoryBudget(core, 768 * 2 ** 20);
  }
});

test('pretrainedPlan: the index lists the shards unread; the headers and sizes plan the folder', () => {
  const files = folder('gpt2_bare_f16_sharded');
  const asked = [];
  const heads = (f) => {
    asked.push(f);
    const b = files[f];
    return b == null ? null : f.endsWith('.safetensors') ? new Uint8Array(b.subarray(0, 8 + Number(b.readBigUInt64LE(0)))) : new Uint8Array(b);
  };
  const listed = pretrainedPlan(core, { label: 'g', files: heads, headers: false });
  assert.deepEqual(listed.files, [{ name: 'model-00001-of-00002.safetensors' }, { name: 'model-00002-of-00002.safetensors' }]);
  assert.ok(!asked.some((f) => f.endsWith('.safetensors')), `no shard read: ${asked}`);
  const sizes = Object.fromEntries(listed.files.map(({ name }) => [name, files[name].length]));
  const plan = pretrainedPlan(core, { label: 'g', files: heads, sizes });
  assert.equal(plan.module, 'GPT');
  assert.deepEqual(plan.files.map((f) => f.size), Object.values(sizes));
  assert.equal(plan.f32_bytes, plan.parameters * 4);
  sizes['model-00002-of-00002.safetensors'] -= 1;
  assert.throws(() => pretrainedPlan(core, { label: 'g', files: heads, sizes }), (e) => /truncated/.test(e.message) && e.field === 'pretrained');
  assert.throws(() => pretrainedPlan(core, { label: 'g', files: heads, sizes: {}, maxBytes: 1 << 20 }), /size of the model folder's file/);
  assert.throws(() => pretrainedPlan(core, { label: 'g', files: heads, sizes: { ...sizes, 'model-00002-of-00002.safetensors': files['model-00002-of-00002.safetensors'].length }, maxBytes: 1000 }),
    /beyond the 0.00095 MiB of weights the core can hold here/);
  // no options, or files and sizes that are neither a map nor a function: TypeErrors from inside the core's lookups before
  for (const [options, message] of [
    [null, 'pretrainedPlan: options must be {label?, files, sizes?, maxBytes?, headers?}, got null'],
    [{ label: 'g', files: null }, "pretrainedPlan: files must be {name: Uint8Array} or a function of the file's name, got null"],
    [{ label: 'g', files: heads, sizes: 5 }, "pretrainedPlan: sizes must be {name: bytes} or a function of the file's name, got 5"],
  ]) assert.throws(() => pretrainedPlan(core, options), (e) => e.field === 'pretrained' && e.message === message, message);
  // a damaged header or config.json whose bytes are not UTF-8: the message quotes them as U+FFFD
  const damaged = (name, b) => (f) => (f === name ? b : heads(f));
  const bad = Buffer.concat([Buffer.from('{"model_type": "gpt2'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
  assert.throws(() => pretrainedPlan(core, { label: 'g', files: damaged('config.json', new Uint8Array(bad)), headers: false }),
    (e) => e instanceof Error && /config\.json is not valid JSON: .*ill-formed UTF-8 byte; last read: '"gpt2\ufffd/.test(e.message) && e.field === 'pretrained');
  const head = Buffer.from(heads('model-00001-of-00002.safetensors'));
  head[12] = 0xff;  // inside the first tensor's name
  sizes['model-00002-of-00002.safetensors'] += 1;
  assert.throws(() => pretrainedPlan(core, { label: 'g', files: damaged('model-00001-of-00002.safetensors', new Uint8Array(head)), sizes }),
    (e) => e instanceof Error && /model-00001-of-00002\.safetensors: weights file header is not valid JSON: .*\ufffd/.test(e.message) && e.field === 'pretrained');
  assert.equal(pretrainedPlan(core, { label: 'g', files: heads, sizes }).module, 'GPT');
});

// The page's worker without a worker (web/model/worker.js, loader.js): a folder read in chunks
// (64 KB, as a download comes) straight into the module, built once, each sentence one forward of
// it; the numbers equal a run of the whole folder; a refused folder keeps the model that was open.
test('the "Open a model" worker: weights streamed into the module, the same numbers as the whole folder; a bad folder keeps the open model', async () => {
  const { createModelController } = await import('../../web/model/worker.js');
  const answers = [];
  const c = createModelController({ post: (m) => answers.push(m), loadCore: async () => core });
  const ask = async (msg) => { await c.handle(msg); return answers.at(-1); };
  for (const name of CASES) {
    const bytes = Object.fromEntries(Object.entries(folder(name)).map(([k, v]) => [k, new Uint8Array(v)]));
    const opened = await ask({ type: 'open', id: 1, source: { label: name, bytes } });
    assert.equal(opened.type, 'opened', opened.message);
    assert.ok(answers.some((m) => m.type === 'progress' && m.phase === 'weights' && m.loaded < m.total), 'progress on the way');
    const input = name.startsWith('gpt2') ? 'idx' : 'input_ids';
    const text = 'tokenizer.json' in bytes ? 'the cat sat' : '1 9 33 4';
    const ran = await ask({ type: 'run', id: 2, text });
    assert.equal(ran.type, 'ran', ran.message);
    const r = core.run({ pretrained: name, inputs: [{ name: input, shape: [1, ran.T], data: ran.ids }] }, { files: bytes });
    assert.deepEqual(Array.from(ran.maps), Array.from(r.outputs.find((o) => o.name === 'attention_weights').data), name);
    const gen = await ask({ type: 'generate', id: 3, text, n: 4 });
    const greedy = core.run({ pretrained: name, inputs: [{ name: input, shape: [1, ran.T], data: ran.ids }], generate: { max_new_tokens: 4, temperature: 0 } }, { files: bytes });
    assert.deepEqual(gen.ids, greedy.ids[0].slice(ran.T), `${name}: greedy by forwards = the core's generation`);
  }
  const good = Object.fromEntries(Object.entries(folder('llama_gqa_f32')).map(([k, v]) => [k, new Uint8Array(v)]));
  await ask({ type: 'open', id: 4, source: { label: 'llama', bytes: good } });
  // a token that adds no text (the leading ▁ the decoder strips) is labelled with its vocabulary string
  assert.deepEqual((await ask({ type: 'run', id: 11, text: '🙂 the' })).pieces, ['▁', '<unk>', ' the']);
  // heads switched off: the core's interventions on the open module, as a run of the folder with them
  const ablate = [[0, 1], [1, 3]];
  const off = await ask({ type: 'run', id: 8, text: 'the cat sat', ablate });
  const interventions = ablate.map(([l, h]) => ({ step: `model.layers.${l}.self_attn.attn_output_heads`, head: h, set: 'zero' }));
  const scenario = { pretrained: 'llama', inputs: [{ name: 'input_ids', shape: [1, off.T], data: off.ids }], interventions };
  const ref = core.run(scenario, { files: good });
  assert.deepEqual(Array.from(off.maps), Array.from(ref.outputs.find((o) => o.name === 'attention_weights').data), 'maps with heads off');
  const offGen = await ask({ type: 'generate', id: 9, text: 'the cat sat', n: 4, ablate });
  assert.deepEqual(offGen.ids, core.run({ ...scenario, generate: { max_new_tokens: 4, temperature: 0 } }, { files: good }).ids[0].slice(off.T));
  const before = await ask({ type: 'run', id: 5, text: 'the cat sat' });
  assert.notDeepEqual(before.next, off.next, 'switching heads off changes the next token\'s distribution');
  const config = JSON.parse(new TextDecoder().decode(good['config.json']));
  // patching: the two sentences as two rows; the answer is the clean row's likeliest token, wrong the
  // corrupted row's (or the clean runner-up); the grids are read's cells, heads off in both rows
  const patched = await ask({ type: 'patch', id: 10, text: 'the cat sat', corrupt: 'the sat cat', ablate });
  assert.equal(patched.type, 'patched', patched.message);
  const rows = { name: 'input_ids', shape: [2, off.T], data: [...patched.ids, ...patched.corruptIds] };
  const logits = core.run({ ...scenario, inputs: [rows] }, { files: good }).outputs[0].data, V = config.vocab_size, T = off.T;
  const argmax = (row) => { const r = logits.subarray((row * T + T - 1) * V, (row * T + T) * V); return r.indexOf(Math.max(...r)); };
  assert.equal(patched.token.id, argmax(0));
  if (argmax(1) !== argmax(0)) assert.equal(patched.wrong.id, argmax(1));
  const metric = { kind: 'logit_diff', position: -1, token: patched.token.id, wrong: patched.wrong.id };
  const want = core.run({ ...scenario, inputs: [rows], patching: { clean: 0, corrupted: 1, steps: ['model.layers.*.self_attn.attn_output_heads'], by: 'head', metric },
    logit_attribution: { position: -1, token: metric.token, wrong: metric.wrong, batch: 0 } }, { files: good });
  assert.equal(patched.effect.length, config.num_hidden_layers * config.num_attention_heads);
  want.patching.cells.forEach((c) => {
    const l = Number(/layers\.(\d+)\./.exec(c.step)[1]);
    assert.equal(patched.effect[l * config.num_attention_heads + c.head], Math.fround(c.metric - want.patching.corrupted_metric), c.step);
  });
  assert.equal(Math.fround(patched.dla_total), Math.fround(want.logit_attribution.total));
  const offHead = patched.dla[1 * config.num_attention_heads + 3];
  assert.equal(offHead, 0, 'a head switched off adds nothing to the logits');
  const unequal = await ask({ type: 'patch', id: 11, text: 'the cat sat', corrupt: 'the cat sat on the mat' });
  assert.equal(unequal.type, 'error');
  assert.equal(unequal.field, 'ptcorrupt');
  assert.match(unequal.message, /the corrupted sentence has \d+ tokens and the sentence \d+: .* the same number of tokens/);
  for (const [lie, says] of [[{ 'config.json': JSON.stringify({ ...config, intermediate_size: 64 }) }, /needs \[32, 64\]: config.json disagrees/],
    [{ 'config.json': '{"model_type": "bert"}' }, /model_type 'bert' is not supported/],
    [{ 'model.safetensors': good['model.safetensors'].subarray(0, 5000) }, /truncated/]]) {
    const files = { ...good, ...Object.fromEntries(Object.entries(lie).map(([k, v]) => [k, typeof v === 'string' ? new TextEncoder().encode(v) : v])) };
    const refused = await ask({ type: 'open', id: 6, source: { label: 'bad', bytes: files } });
    assert.equal(refused.type, 'error');
    assert.match(refused.message, says);
    const again = await ask({ type: 'run', id: 7, text: 'the cat sat' });
    assert.deepEqual(Array.from(again.maps), Array.from(before.maps), 'the open model stays');
  }
});

// A trainer's interventions set between forwards (bindings/pretrained.mjs setInterventions): checked
// as the scenario's field, applied to the next forward, removed by [].
test('setInterventions changes the next forward, is checked as the field, and [] removes it', () => {
  const files = folder('llama_gqa_f32');
  const ids = [1, 9, 33, 4, 27];
  const tr = core.trainer({ pretrained: 'l', inputs: [{ name: 'input_ids', shape: [1, 5], data: ids }] }, { files });
  try {
    const plain = tr.forward({ trace: false }).outputs[0].data;
    const list = [{ step: 'model.layers.1.self_attn.attn_output_heads', head: 2, set: 'zero' }];
    setInterventions(tr, list);
    const off = tr.forward({ trace: false }).outputs[0].data;
    const ref = core.run({ pretrained: 'l', inputs: [{ name: 'input_ids', shape: [1, 5], data: ids }], interventions: list }, { files }).outputs[0].data;
    assert.deepEqual(Array.from(off), Array.from(ref));
    assert.notDeepEqual(Array.from(off), Array.from(plain));
    assert.throws(() => setInterventions(tr, [{ head: 1, set: 'zero' }]), (e) => /step/.test(e.message) && e.field.startsWith('interventions'));
    // no list (undefined: Embind's "Cannot pass non-string to std::string"): named as the field
    assert.throws(() => setInterventions(tr, undefined), (e) => e.field === 'interventions' && /must be a list of/.test(e.message));
    setInterventions(tr, []);
    assert.deepEqual(Array.from(tr.forward({ trace: false }).outputs[0].data), Array.from(plain));
  } finally {
    tr.delete();
  }
});

test('a Llama prompt\'s forward in generation (the last block on its last row only) gives the full forward\'s last row, to the bit', () => {
  for (const cache of [true, false]) {
    const sc = json('llama3_rope_f32.scenario.json');
    const tr = core.trainer({ ...sc, generate: { ...sc.generate, cache } }, { files: folder('llama3_rope_f32') });
    const g = sessionGenerator(tr, 2);
    try {
      const full = tr.forward({ trace: false }).outputs[0].data, T = sc.inputs[0].data.length, V = full.length / T;
      g.next();
      assert.deepEqual(Array.from(lastLogits(g)), Array.from(full.subarray((T - 1) * V, T * V)), `cache ${cache}`);
    } finally {
      g.delete();
      tr.delete();
    }
  }
});

test('forkGeneration repeats the same step on the KV cache; lastLogits are the forward\'s last row', () => {
  const ids = [3, 17, 42, 8, 8, 30];
  const tr = core.trainer({ pretrained: 'g', inputs: [{ name: 'idx', shape: [1, 6], data: ids }], generate: { max_new_tokens: 3, temperature: 0 } },
    { files: folder('gpt2_prefix_f32') });
  // a count of new tokens that is no whole number >= 1 is refused by name (1.5 and NaN reached the core cut before)
  for (const bad of [0, 1.5, Number.NaN, '2'])
    assert.throws(() => sessionGenerator(tr, bad), (e) => e.field === 'generate.max_new_tokens'
      && e.message === `sessionGenerator: maxNew (${bad === '2' ? '"2"' : String(bad)}) must be a whole number of tokens, 1 or more`);
  // the prompt's ids as a trainer's input: a fraction is no token id (it was generated from, cut to 2)
  tr.setInput('idx', Float32Array.from([3, 2.5]), [1, 2]);
  assert.throws(() => sessionGenerator(tr, 1).next(), /^Error: input 'idx' value 2\.5 at position 1 is not a token id: ids must be integers in \[0, 50\) \(vocab_size\)$/);
  tr.setInput('idx', Float32Array.from(ids), [1, 6]);
  const g = sessionGenerator(tr, 3);
  const forks = [];
  try {
    const full = tr.forward({ trace: false }).outputs[0].data;
    const V = full.length / ids.length;
    const prefill = g.next();
    assert.equal(prefill.mode, 'prefill');
    const last = lastLogits(g);
    assert.equal(last.length, V);
    // the prompt's forward keeps the last row alone after the last attention (modules.hpp
    // last_row_only): every row is computed alone in the WASM kernels, so the same floats
    assert.deepEqual(Array.from(last), Array.from(full.subarray((ids.length - 1) * V, ids.length * V)));
    // two forks at the prefill: the same decode step, to the bit; the generator itself then takes it too
    const steps = [0, 1].map(() => {
      const f = forkGeneration(g);
      forks.push(f);
      const t = f.next();
      return { t, logits: Array.from(lastLogits(f)) };
    });
    assert.equal(steps[0].t.mode, 'decode');
    assert.deepEqual(steps[1], steps[0]);
    const own = g.next();
    assert.deepEqual({ t: own, logits: Array.from(lastLogits(g)) }, steps[0]);
    assert.deepEqual(g.ids[0], [...ids, prefill.ids[0], own.ids[0]]);
  } finally {
    forks.forEach((f) => f.delete());
    g.delete();
    tr.delete();
  }
});

// The page's patching on an open checkpoint: the clean and corrupted sentences as two rows of one
// read, every head's output patched (and estimated by attribution patching) as core.run's
// scenario fields compute them on the same folder.
test('readModel: activation and attribution patching of every head on a model that also generates, as core.run computes them', () => {
  for (const [name, steps] of [['gpt2_prefix_f32', 'transformer.h.*.attn.y'], ['llama_gqa_f32', 'model.layers.*.self_attn.attn_output_heads']]) {
    const files = folder(name);
    const sc = json(`${name}.scenario.json`);
    const clean = Array.from(sc.inputs[0].data), T = clean.length;
    const corrupted = clean.slice();
    corrupted[1] = (corrupted[1] + 7) % 50;
    const tr = core.trainer({ ...sc, generate: { max_new_tokens: 2, temperature: 0 } }, { files });
    try {
      tr.setInput(sc.inputs[0].name, Float32Array.from([...clean, ...corrupted]), [2, T]);
      const metric = { kind: 'logit_diff', position: -1, token: 3, wrong: 5 };
      const patch = { clean: 0, corrupted: 1, steps: [steps], by: 'head', metric };
      const got = readModel(tr, { patching: patch, attribution_patching: patch, logit_attribution: { position: -1, token: 3, wrong: 5, batch: 0 } });
      const { generate, ...plain } = sc;
      const ref = core.run({ ...plain, inputs: [{ ...sc.inputs[0], shape: [2, T], data: [...clean, ...corrupted] }], patching: patch, attribution_patching: patch,
        logit_attribution: { position: -1, token: 3, wrong: 5, batch: 0 } }, { files });
      // the same float32s (read's JSON writes them as doubles, run's as the shortest float32 text)
      const f = Math.fround;
      assert.equal(f(got.patching.clean_metric), f(ref.patching.clean_metric));
      assert.equal(f(got.patching.corrupted_metric), f(ref.patching.corrupted_metric));
      assert.notEqual(got.patching.clean_metric, got.patching.corrupted_metric, `${name}: the corruption moves the metric`);
      assert.ok(got.patching.cells.length > 1 && got.patching.cells.every((c) => Number.isInteger(c.head) && c.position === undefined), name);
      const same = (list, key) => list.map((c) => ({ ...c, [key]: f(c[key]) }));
      assert.deepEqual(same(got.patching.cells, 'metric'), same(ref.patching.cells, 'metric'), name);
      assert.deepEqual(same(got.attribution_patching.cells, 'estimate'), same(ref.attribution_patching.cells, 'estimate'), name);
      assert.equal(f(got.logit_attribution.total), f(ref.logit_attribution.total));
      assert.deepEqual(same(got.logit_attribution.components, 'value'), same(ref.logit_attribution.components, 'value'), name);
      // patching one row into itself is refused by name; the trainer keeps generating afterwards
      assert.throws(() => readModel(tr, { patching: { ...patch, corrupted: 0 } }), (e) => e.field === 'patching.corrupted');
      tr.setInput(sc.inputs[0].name, Float32Array.from(clean), [1, T]);
      assert.equal(tr.forward({ trace: false }).patching, undefined);
    } finally {
      tr.delete();
    }
  }
});

test('readModel: the logit lens and logit attribution of a model that also generates, as core.run reads them; the trainer stays as built', () => {
  for (const name of ['gpt2_prefix_f32', 'llama_gqa_f32']) {
    const files = folder(name);
    const sc = json(`${name}.scenario.json`);
    const input = sc.inputs[0], T = input.data.length;
    const tr = core.trainer({ ...sc, generate: { max_new_tokens: 2, temperature: 0 } }, { files });
    try {
      const attribution = { position: -1, token: 3, wrong: 5 };
      const got = readModel(tr, { logit_lens: true, logit_attribution: attribution }, { position: -2, top: 4 });
      const { generate, ...plain } = sc;
      const ref = core.run({ ...plain, logit_lens: true, logit_attribution: attribution }, { files });
      assert.equal(got.logit_lens.length, ref.logit_lens.length);
      got.logit_lens.forEach((e, i) => {
        const r = ref.logit_lens[i], V = r.shape[2], row = Array.from(r.data.subarray((T - 2) * V, (T - 1) * V));
        assert.equal(e.step, r.step);
        const max = Math.max(...row), sum = row.reduce((a, v) => a + Math.exp(v - max), 0);
        const want = row.map((v, id) => ({ id, prob: Math.exp(v - max) / sum })).sort((a, b) => b.prob - a.prob || a.id - b.id).slice(0, 4);
        assert.deepEqual(e.top.map((x) => x.id), want.map((x) => x.id), `${name} ${e.step}`);
        e.top.forEach((x, k) => assert.ok(Math.abs(x.prob - want[k].prob) <= 1e-6, `${name} ${e.step} prob ${x.prob} vs ${want[k].prob}`));
      });
      assert.ok(Math.abs(got.logit_attribution.total - ref.logit_attribution.total) <= 1e-6);
      assert.deepEqual(got.logit_attribution.components.map((c) => c.name), ref.logit_attribution.components.map((c) => c.name));
      // the trainer's next forward has no readings; bad readings name their field and leave it usable
      assert.equal(tr.forward({ trace: false }).logit_lens, undefined);
      assert.throws(() => readModel(tr, { patching: {} }), (e) => e.field === 'patching.clean' && /is missing/.test(e.message));
      assert.throws(() => readModel(tr, { loss: true }), (e) => e.field === 'readings.loss');
      assert.throws(() => readModel(tr, { logit_lens: true }, { position: T }), (e) => /outside the/.test(e.message));
      assert.deepEqual(readModel(tr, {}), {});
      // a position or a count that is no whole number reached the core's ints cut (1.5 read position
      // 1; NaN and "x" position 0; 1e12 wrapped; top 0 or 2.7 as 1 or 2): refused by name
      for (const [options, field, message] of [
        [{ position: 1.5 }, 'position', "readModel: position (1.5) must be a whole number, a token's index (negative: from the end)"],
        [{ position: Number.NaN }, 'position', "readModel: position (NaN) must be a whole number, a token's index (negative: from the end)"],
        [{ position: 'x' }, 'position', 'readModel: position ("x") must be a whole number, a token\'s index (negative: from the end)'],
        [{ position: 1e12 }, 'position', 'readModel: position 1000000000000 is outside the tokens'],
        [{ top: 0 }, 'top', 'readModel: top (0) must be a whole number of tokens, 1 or more'],
        [{ top: 2.7 }, 'top', 'readModel: top (2.7) must be a whole number of tokens, 1 or more'],
      ]) assert.throws(() => readModel(tr, { logit_lens: true }, options), (e) => e.field === field && e.message === message, message);
      // readings left out (undefined: Embind's "Cannot pass non-string to std::string") and options null
      assert.throws(() => readModel(tr, undefined), (e) => e.field === 'readings' && /^readings must be \{/.test(e.message));
      assert.equal(readModel(tr, { logit_lens: true }, null).logit_lens.length, got.logit_lens.length);
    } finally {
      tr.delete();
    }
  }
});

// The model mode's next tokens and logit lens: a 50,257-token model's likeliest tokens can all be
// under 0.001 (GPT-2 small's shape with random weights: 0.00013-0.00014), which three decimals
// printed as 0.000 each.
test('the "Open a model" mode prints a probability with three decimals, or two significant digits under 0.001', async () => {
  const { probText, tokenProb } = await import('../../web/views/model-views.js');
  assert.deepEqual([0.25, 0.0304, 0.001, 0.000137, 0.0009996, 2e-5, 0].map(probText),
    ['0.250', '0.030', '0.001', '0.00014', '0.0010', '0.000020', '0.0']);
  assert.equal(tokenProb({ piece: ' Fleming', prob: 0.00013368 }), '" Fleming" 0.00013');
});
