// Generation through the WASM core (SCENARIO.md, "Generation"): a nanoGPT checkpoint exported by
// scripts/export_nanogpt.py gives PyTorch's logits and ids (tests/fixtures/nanogpt/); the
// token-by-token API (core.generator) gives run()'s tokens, decode steps with their data, errors
// with fields, and no heap growth. The gpt_generate_* fixtures run in core.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { checkResult } from './fixtures.mjs';

const core = await loadAttention();
const dir = new URL('../fixtures/nanogpt/', import.meta.url);
const json = (name) => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));

test('the module table lists GPT as a module that generates', () => {
  const gpt = core.modules().find((m) => m.id === 'GPT');
  assert.equal(gpt.generates, true);
  assert.deepEqual(gpt.args.map((a) => a.name), ['vocab_size', 'block_size', 'n_layer', 'n_head', 'n_embd', 'dropout', 'bias',
    'rope', 'rope_base', 'num_kv_heads', 'window', 'sink_tokens', 'gelu_tanh', 'layer_norm_epsilon']);
  assert.equal(gpt.attention[0].projection, 'split');
  assert.equal(core.modules().find((m) => m.id === 'CausalTransformer').generates, false);
});

for (const model of ['nanogpt_char', 'nanogpt_char_compiled_f32']) {
  for (const kind of ['sample', 'greedy']) {
    test(`${model}_${kind}: the exported nanoGPT checkpoint gives PyTorch's logits and ids through WASM, cached or not`, () => {
      const scenario = json(`${model}_${kind}.scenario.json`), expected = json(`${model}_${kind}.expected.json`);
      const weights = readFileSync(new URL(`${model}.safetensors`, dir));
      for (const cache of [true, false]) {
        const r = core.run({ ...scenario, generate: { ...scenario.generate, cache } }, { weights });
        assert.deepEqual(checkResult(r, expected), [], `cache ${cache}`);
      }
      const vocab = json('nanogpt_char.vocab.json').tokens;
      assert.equal(vocab.length, scenario.config.vocab_size);
    });
  }
}

const tiny = (generate, extra = {}) => ({
  module: 'GPT', seed: 3, config: { vocab_size: 13, block_size: 8, n_layer: 2, n_head: 2, n_embd: 8 },
  inputs: [{ name: 'idx', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }], generate, ...extra,
});

test('core.generator gives run()\'s tokens one by one, decode steps with their data', () => {
  const scenario = tiny({ max_new_tokens: 9, temperature: 0.9, top_k: 6 }, { trace: true });
  const all = core.run(scenario);
  const g = core.generator(scenario);
  try {
    const tokens = Array.from({ length: 9 }, () => g.next());
    assert.deepEqual(tokens.map((t) => t.ids), all.generated.map((t) => t.ids));
    assert.deepEqual(tokens.map((t) => t.mode), ['prefill', 'decode', 'decode', 'decode', 'decode', 'decode', 'prefill', 'prefill', 'prefill']);
    assert.deepEqual(g.ids, all.ids);
    const kc = tokens[2].steps.find((s) => s.name === 'transformer.h.1.attn.k_cache');
    assert.equal(kc.op, 'cache_append');
    assert.deepEqual(kc.shape, [2, 2, 5, 4]);
    assert.ok(kc.data instanceof Float32Array && kc.data.length === 2 * 2 * 5 * 4);
    assert.deepEqual(tokens[2].cache, { shape: [2, 2, 5, 4], bytes: 2 * 2 * 2 * 2 * 5 * 4 * 4 });
    assert.deepEqual(tokens[2].steps.find((s) => s.name === 'transformer.h.0.attn.att_softmax').shape, [2, 2, 1, 5]);
    const run2 = all.generated[2].steps.find((s) => s.name === 'transformer.h.1.attn.k_cache');
    assert.deepEqual(Array.from(kc.data), Array.from(run2.data));
    assert.throws(() => g.next(), (e) => e.field === 'generate.max_new_tokens' && /are done/.test(e.message));
  } finally {
    g.delete();
  }
});

test('generate errors arrive with their field, and the core keeps working', () => {
  const cases = [
    [tiny({ max_new_tokens: 0 }), 'generate.max_new_tokens'],
    [tiny({ max_new_tokens: 3, temperature: -1 }), 'generate.temperature'],
    [tiny({ max_new_tokens: 3, top_k: 0 }), 'generate.top_k'],
    [tiny({ max_new_tokens: 3, top_p: 2 }), 'generate.top_p'],
    [tiny({ max_new_tokens: 3 }, { train: true }), 'train'],
  ];
  for (const [scenario, field] of cases) {
    assert.throws(() => core.run(scenario), (e) => e.field === field, field);
    assert.throws(() => core.generator(scenario), (e) => e.field === field, field);
  }
  assert.throws(() => core.generator({ ...tiny({ max_new_tokens: 1 }), generate: undefined }), (e) => e.field === 'generate');
  assert.equal(core.run(tiny({ max_new_tokens: 2, temperature: 0 })).ids[0].length, 5);
});

test('1,000 generators built, run and deleted do not grow the WASM heap', () => {
  const scenario = JSON.stringify(tiny({ max_new_tokens: 4 }, { trace: true }));
  const once = () => { const g = core.generator(scenario); try { for (let k = 0; k < 4; k++) g.next(); } finally { g.delete(); } };
  for (let i = 0; i < 50; i++) once();
  const before = { size: core.heapBytes(), used: core.heapUsed() };
  for (let i = 0; i < 1000; i++) once();
  assert.equal(core.heapBytes(), before.size, 'WASM memory grew');
  const grew = core.heapUsed() - before.used;
  assert.ok(grew <= 4096, `malloc'd bytes grew by ${grew} over 1,000 generators: a leak`);
});

// Generate mode's session (web/generate/session.js) against a stand-in worker: the messages it posts.
test('a Step or Run pressed while Generate mode has no session waits for the next one; close() forgets it', async () => {
  const { createGenerator } = await import('../../web/generate/session.js');
  const posted = [];
  const gen = createGenerator({ onUpdate: () => {}, createWorker: () => ({ postMessage: (m) => posted.push(m), terminate: () => {} }) });
  const spec = { config: { vocab_size: 13 }, seed: 1 };
  const kinds = () => posted.splice(0).map((m) => m.type);
  gen.step(); gen.step(); gen.run();
  assert.deepEqual(kinds(), []);
  gen.start(spec, [1, 2], { temperature: 1 }, 5);
  assert.deepEqual(kinds(), ['start', 'step', 'step', 'run']);
  gen.start(spec, [1, 2], { temperature: 1 }, 5);
  assert.deepEqual(kinds(), ['start'], 'the presses went to the session that took them');
  gen.drop();                    // the model is being fetched: presses wait, a second drop keeps them
  gen.step(); gen.run(); gen.drop(); gen.step();
  gen.start(spec, [1], { temperature: 1 }, 1);
  assert.deepEqual(kinds(), ['start', 'step', 'run'], 'at most maxNew steps');
  gen.close();
  gen.step(); gen.run(); gen.close();
  gen.start(spec, [1], { temperature: 1 }, 5);
  assert.deepEqual(kinds(), ['start']);
  gen.drop(); gen.run(); gen.stop();
  gen.start(spec, [1], { temperature: 1 }, 5);
  assert.deepEqual(kinds(), ['start'], 'Stop takes back a waiting Run');
  gen.drop(); gen.step(); gen.step(); gen.stop();
  gen.start(spec, [1], { temperature: 1 }, 5);
  assert.deepEqual(kinds(), ['start'], 'and waiting steps');
});

test('a prompt the model cannot take clears the session (a run stops, presses go) and keeps the worker; a core that fails to load is the session\'s error', async () => {
  const { createGenerator } = await import('../../web/generate/session.js');
  const { inOrder } = await import('../../web/app/worker-host.js');
  const posted = [];
  let workers = 0;
  const gen = createGenerator({ onUpdate: () => {}, createWorker: () => { workers++; return { postMessage: (m) => posted.push(m), terminate: () => {} }; } });
  const spec = { config: { vocab_size: 13 }, seed: 1 };
  gen.start(spec, [1, 2], { temperature: 1 }, 5);
  gen.run();
  gen.clear();
  assert.deepEqual(posted.splice(0).map((m) => m.type), ['start', 'run', 'stop']);
  assert.equal(gen.session, null);
  gen.step(); gen.clear();
  gen.start(spec, [1], { temperature: 1 }, 5);
  assert.deepEqual(posted.splice(0).map((m) => m.type), ['start'], 'a press before clear() is forgotten');
  assert.equal(workers, 1, 'the worker and its core stay');
  const replies = [];
  const handle = inOrder(async (msg) => { if (msg.type === 'start') throw new Error('the core could not load'); }, (m) => replies.push(m));
  await handle({ type: 'start', id: 7 });
  assert.deepEqual(replies, [{ type: 'error', message: 'the core could not load', field: null, id: 7 }]);
});

test("a fresh core's first forwards are untimed: the first session's cached and uncached prefills run on a warm engine, and later sessions do not warm again", async () => {
  const { createGenerateController } = await import('../../web/generate/worker.js');
  // A core whose very first forward is slow (the engine's unoptimised tier), on a clock of its own.
  let clock = 0, forwards = 0, made = 0, deleted = 0;
  const generator = () => {
    made++;
    return {
      next: () => {
        clock += forwards++ === 0 ? 20 : 2;
        return { ids: [1], top_ids: [[1]], top_probs: [[1]], mode: 'prefill', position: 0, cache: null,
          steps: [{ name: 'logits', shape: [1, 1, 3], data: new Float32Array(3) }] };
      },
      delete: () => { deleted++; },
    };
  };
  const posted = [];
  const ctl = createGenerateController({ post: (m) => posted.push(m), loadCore: async () => ({ generator }), now: () => clock, schedule: () => {} });
  const spec = { config: { vocab_size: 3 }, seed: 1 };
  await ctl.handle({ type: 'start', id: 1, spec, weights: null, prompt: [1], settings: { temperature: 1 }, maxNew: 8 });
  const first = posted.filter((m) => m.type === 'token');
  assert.equal(first.length, 1);
  assert.deepEqual([first[0].cached.ms, first[0].uncached.ms], [2, 2], 'neither prefill paid for the cold engine');
  assert.deepEqual([made, deleted], [4, 2], 'the warm-up pair was deleted');
  await ctl.handle({ type: 'start', id: 2, spec, weights: null, prompt: [1], settings: { temperature: 1 }, maxNew: 8 });
  assert.deepEqual([made, deleted], [6, 4], 'a second session builds only its own pair');
});
