// Text in, tokens out (bindings/tokenizer.mjs over @huggingface/tokenizers and gpt-tokenizer):
// GPT-2's ranks offline give GPT-2's ids; vocab.json + merges.txt and a Llama-style tokenizer.json
// written here give the ids their merges make; text round-trips; an input given as text runs
// through both CLIs' rules (the Node CLI tokenizes it, the native one asks for ids).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { loadTokenizer, withTokens } from '../../bindings/tokenizer.mjs';
import { compare } from './fixtures.mjs';

const folder = fileURLToPath(new URL('../fixtures/pretrained/llama_gqa_f32/', import.meta.url));
const read = (dir) => (name) => { try { return readFileSync(join(dir, name)); } catch { return null; } };
const bytes = (obj) => Buffer.from(typeof obj === 'string' ? obj : JSON.stringify(obj));
const ROUND_TRIPS = ['Hello world', '  two  spaces\tand a tab\n', 'naïve café 你好 Привет', 'emoji 🙂👍🏽 and ZWJ 👩‍💻', ''];

test("GPT-2's ranks, offline: GPT-2's ids, pieces with the leading space as a space, round trips", async () => {
  const gpt2 = await loadTokenizer(() => null, 'gpt2');
  assert.deepEqual(gpt2.encode('Hello world'), [15496, 995]);
  assert.deepEqual(gpt2.encode(' the'), [262]);
  assert.deepEqual(gpt2.pieces([15496, 995]), ['Hello', ' world']);
  for (const s of ROUND_TRIPS) {
    const ids = gpt2.encode(s);
    assert.equal(gpt2.decode(ids), s);
    assert.equal(gpt2.pieces(ids).join(''), s, JSON.stringify(s));
  }
});

test("GPT-2's vocab.json + merges.txt: the ids its merges make", async () => {
  const vocab = { h: 0, e: 1, l: 2, o: 3, 'Ġ': 4, w: 5, r: 6, d: 7, he: 8, ll: 9, hell: 10, hello: 11, 'Ġw': 12, or: 13, 'Ġwor': 14,
    'Ġworl': 15, 'Ġworld': 16, '<|endoftext|>': 17 };
  const merges = '#version: 0.2\nh e\nl l\nhe ll\nhell o\nĠ w\no r\nĠw or\nĠwor l\nĠworl d\n';
  const files = { 'vocab.json': bytes(vocab), 'merges.txt': bytes(merges) };
  const tok = await loadTokenizer((n) => files[n] ?? null, 'gpt2');
  assert.deepEqual(tok.encode('hello world'), [11, 16]);
  assert.deepEqual(tok.encode('hello held'), [11, 4, 8, 2, 7]);  // Ġheld: Ġ, he, l, d (no merge makes more)
  assert.deepEqual(tok.pieces([11, 4, 8, 2, 7]), ['hello', ' ', 'he', 'l', 'd']);
  assert.equal(tok.decode([11, 16]), 'hello world');
});

test("a Llama-style tokenizer.json (▁ for spaces, merges by rank): the ids its merges make, round trips", async () => {
  const tok = await loadTokenizer(read(folder), 'llama');
  assert.equal(tok.kind, 'tokenizer.json');
  // ▁the ▁cat ▁ in ▁ a ▁ h at, by the merges "▁ t", "h e", "▁t he", "a t", "▁ c", "▁c at", "i n"
  assert.deepEqual(tok.encode('the cat in a hat'), [32, 35, 3, 36, 3, 4, 3, 11, 33]);
  assert.deepEqual(tok.pieces([32, 35, 3, 36]), ['the', ' cat', ' ', 'in']);
  // a next token as it prints after the sentence: alone the decoder's Strip takes ▁'s space away
  assert.deepEqual([tok.pieces([3])[0], tok.pieces([32])[0]], ['', 'the']);
  assert.deepEqual([tok.pieces([3], [32, 35])[0], tok.pieces([32], [32, 35])[0]], [' ', ' the']);
  assert.deepEqual(tok.pieces([35, 3], [32]), [' cat', ' ']);
  assert.deepEqual([3, 32, 0].map(tok.token), ['▁', '▁the', '<unk>']);
  for (const s of ['the cat in a hat', 'a  b']) assert.equal(tok.decode(tok.encode(s)), s);
  await assert.rejects(loadTokenizer(() => null, 'llama'), /has no tokenizer \(tokenizer\.json, or vocab\.json \+ merges\.txt\): give the input as token ids/);
});

// A folder's tokenizer.json is untrusted: damaged, it is refused naming the file and what the library
// could not read (not "Cannot read properties of null"); a model type the library does not know (which
// it would take for BPE without a word) is refused.
test('a damaged tokenizer.json is refused with a message naming it; an unknown model.type too', async () => {
  const good = JSON.parse(readFileSync(join(folder, 'tokenizer.json'), 'utf8'));
  const edited = (edit) => { const j = structuredClone(good); edit(j); return j; };
  const refused = (json, pattern) => assert.rejects(async () => (await loadTokenizer((f) => (f === 'tokenizer.json' ? bytes(json) : null), 'llama')).encode('the cat'), pattern);
  const unreadable = /^Error: the model folder's tokenizer\.json is not a tokenizer @huggingface\/tokenizers can run: /;
  await refused(edited((j) => { j.model = null; }), unreadable);
  await refused(edited((j) => { j.model.merges = [42]; }), unreadable);
  await refused(edited((j) => { j.pre_tokenizer = { type: 'Split', pattern: { Regex: '(' }, behavior: 'Isolated', invert: false }; }), unreadable);
  await refused(edited((j) => { j.model.vocab = null; }), unreadable);
  await refused('42', unreadable);
  await refused(edited((j) => { j.model.type = 'Nope'; }), /tokenizer\.json has model\.type "Nope": the tokenizers read here are BPE, WordPiece, Unigram/);
  await refused('{"model": ', /tokenizer\.json is not valid JSON/);
  assert.deepEqual((await loadTokenizer(read(folder), 'llama')).encode('the cat'), [32, 35]);
  // GPT-2's vocab.json that is no object of ids (null threw a TypeError from inside the conversion)
  for (const [vocab, got] of [['null', 'null'], ['[1, 2]', '[1,2]'], ['7', '7']])
    await assert.rejects(loadTokenizer((f) => ({ 'vocab.json': bytes(vocab), 'merges.txt': bytes('h e\n') })[f] ?? null, 'gpt2'),
      (e) => e.constructor === Error && e.message === `the model folder's vocab.json must be an object of token: id, got ${got}`);
});

test('an input given as text: the bindings and the Node CLI tokenize it, the native CLI asks for ids', async () => {
  const core = await loadAttention();
  const scenario = { pretrained: 'llama_gqa_f32', inputs: [{ name: 'input_ids', text: 'the cat' }] };
  const { scenario: ids, tokens } = await withTokens(scenario, read(folder));
  assert.deepEqual(ids.inputs[0], { name: 'input_ids', shape: [1, 2], data: [32, 35] });
  assert.deepEqual(tokens.input_ids, ['the', ' cat']);
  const files = read(folder);
  const a = core.run(ids, { files }), b = core.run({ ...scenario, inputs: [{ name: 'input_ids', shape: [1, 2], data: [32, 35] }] }, { files });
  assert.deepEqual([...a.outputs[0].data], [...b.outputs[0].data]);
  assert.throws(() => core.run(scenario, { files }), /is text: the core takes token ids/);
  // text that is not a string, or beside ids: refused by name, never one silently over the other
  await assert.rejects(withTokens({ ...scenario, inputs: [{ name: 'input_ids', text: 5 }] }, read(folder)),
    /^Error: input 'input_ids': text must be a string, got 5$/);
  await assert.rejects(withTokens({ ...scenario, inputs: [{ name: 'input_ids', text: 'the cat', shape: [1, 1], data: [3] }] }, read(folder)),
    /^Error: input 'input_ids': give its text or its ids \("data" and "shape"\), not both$/);

  const dir = mkdtempSync(join(tmpdir(), 'attn-text-'));
  try {
    const file = join(dir, 'text.scenario.json');
    writeFileSync(file, JSON.stringify({ ...scenario, pretrained: folder }));
    const cli = fileURLToPath(new URL('../../bindings/cli.mjs', import.meta.url));
    const node = spawnSync(process.execPath, [cli, 'run', file], { encoding: 'utf8' });
    assert.equal(node.status, 0, node.stderr);
    // the CLI may run the relaxed-SIMD build (fused multiply-adds): the same numbers within float rounding
    assert.ok(compare(Float32Array.from(JSON.parse(node.stdout).outputs[0].data), b.outputs[0].data).ok);
    // without a folder the Node CLI names what text needs (not the native CLI's words)
    writeFileSync(join(dir, 'no-folder.json'), JSON.stringify({ module: 'GPT', config: { vocab_size: 10, block_size: 8, n_layer: 1, n_head: 2, n_embd: 8 },
      inputs: [{ name: 'idx', text: 'the cat' }] }));
    const bare = spawnSync(process.execPath, [cli, 'run', join(dir, 'no-folder.json')], { encoding: 'utf8' });
    assert.equal(bare.status, 1);
    assert.equal(bare.stderr, 'error: an input given as text needs "pretrained": a model folder whose tokenizer turns it into ids\n');
    const native = spawnSync(fileURLToPath(new URL('../../build/native/attention-cli', import.meta.url)), ['run', file], { encoding: 'utf8' });
    if (!native.error) {
      assert.equal(native.status, 1);
      assert.match(native.stderr, /^error: inputs\[0\] is text: the core takes token ids; .* give "data": \[ids\]/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
