// Trained weights on the page: a PyTorch-saved CausalMultiHeadAttention and EncoderLayer in F32,
// F16 (picked with the file input) and BF16 (dropped on the control) reproduce PyTorch's outputs;
// the tensors are listed; a mismatched file shows the core's message next to the picker and the
// page recovers; the URL keeps the file's name only, and a link naming weights asks for the file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { compare, values } from '../node/fixtures.mjs';
import { launch, openPage, startServer, test } from './harness.mjs';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const dir = new URL('../fixtures/weights/', import.meta.url);
const file = (name) => fileURLToPath(new URL(name, dir));
const expected = (name) => JSON.parse(readFileSync(new URL(`${name}.expected.json`, dir), 'utf8'));

// The fixture's scenario as page state: inputs "random normal" drawn after construction, seed 0.
function hashFor(name) {
  const s = JSON.parse(readFileSync(new URL(`${name}.scenario.json`, dir), 'utf8'));
  const [B, T] = s.inputs[0].shape;
  const p = new URLSearchParams({ module: s.module, source: 'randn', seed: String(s.seed), batch: String(B), seqT: String(T),
    causal: '0', config: JSON.stringify({ [s.module]: s.config }) });
  return `#${p}`;
}

async function checkAgainstPyTorch(page, name, t = null) {
  const got = await page.evaluate(() => window.playground.result().outputs.map((o) => ({ name: o.name, data: Array.from(o.data) })));
  for (const e of expected(name).outputs) {
    const g = got.find((o) => o.name === e.name);
    assert.ok(g, `${name}: output ${e.name}`);
    const c = compare(Float32Array.from(g.data), values(e));
    assert.ok(c.ok, `${name} ${e.name}: max |page - pytorch| = ${c.maxAbs}`);
    t?.diagnostic(`${name} ${e.name}: max |page - pytorch| = ${c.maxAbs}`);
  }
}

// Drops the file on the weights control as a browser would (a DataTransfer holding a File).
async function dropFile(page, name) {
  const bytes = Array.from(readFileSync(file(name)));
  const dataTransfer = await page.evaluateHandle(([n, b]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(b)], n));
    return dt;
  }, [name, bytes]);
  await page.dispatchEvent('#weights-drop', 'dragover', { dataTransfer });
  await page.dispatchEvent('#weights-drop', 'drop', { dataTransfer });
}

for (const model of ['causal_mha', 'encoder_layer']) for (const dtype of ['f32', 'f16', 'bf16']) {
  const name = `${model}_${dtype}`;
  const how = dtype === 'bf16' ? 'dropped on the control' : 'picked with the file input';
  test(`${name}: ${how}, the page gives PyTorch's outputs`, async (t) => {
    const { page, errors } = await openPage(browser.context, `${server.url}${hashFor(name)}`);
    const before = await page.evaluate(() => Array.from(window.playground.result().outputs[0].data.slice(0, 4)));
    if (dtype === 'bf16') await dropFile(page, `${name}.safetensors`);
    else await page.getByTestId('weights-input').setInputFiles(file(`${name}.safetensors`));
    await page.getByTestId('weights-status').filter({ hasText: `${name}.safetensors` }).waitFor();
    const rows = page.locator('[data-testid="weights-list"] tbody tr');
    assert.ok(await rows.count() >= 8);
    assert.match(await page.locator('[data-testid="weights-list"]').textContent(), /W_query\.weight|attn\.qkv_proj\.weight/);
    const now = await page.evaluate(() => Array.from(window.playground.result().outputs[0].data.slice(0, 4)));
    assert.notDeepEqual(now, before, 'the trained weights replaced the seeded ones');
    await checkAgainstPyTorch(page, name, t);
    assert.equal(await page.locator('#config [data-testid="error"]').count(), 0);
    assert.deepEqual(errors, []);
  });
}

test('a mismatched file shows the message at the picker; a good one recovers; links keep only the name', async () => {
  const { page, errors } = await openPage(browser.context, `${server.url}${hashFor('causal_mha_f32')}`);
  const picker = page.getByTestId('weights-input');
  await picker.setInputFiles(file('bad_wrong_shape.safetensors'));
  const error = page.locator('[data-control="weights"] [data-testid="error"]');
  await error.waitFor();
  assert.match(await error.textContent(), /'W_query\.weight' has shape \[8, 5\] but CausalMultiHeadAttention with this config needs \[8, 6\]/);
  await picker.setInputFiles(file('bad_truncated.safetensors'));
  await page.locator('[data-control="weights"] [data-testid="error"]', { hasText: 'truncated' }).waitFor();
  await picker.setInputFiles(file('causal_mha_f32.safetensors'));
  await page.getByTestId('weights-status').filter({ hasText: 'causal_mha_f32.safetensors' }).waitFor();
  assert.equal(await page.locator('#config [data-testid="error"]').count(), 0);
  await checkAgainstPyTorch(page, 'causal_mha_f32');

  await page.waitForFunction(() => location.hash.includes('weights=causal_mha_f32.safetensors'));
  const hash = await page.evaluate(() => location.hash);
  assert.ok(hash.length < 400, 'the link carries the name, not the file');
  const { page: shared } = await openPage(browser.context, `${server.url}${hash}`);
  assert.match(await shared.locator('[data-control="weights"] [data-testid="error"]').textContent(), /made with trained weights 'causal_mha_f32\.safetensors': load that file/);
  await shared.getByTestId('weights-input').setInputFiles(file('causal_mha_f32.safetensors'));
  await shared.getByTestId('weights-status').filter({ hasText: 'causal_mha_f32' }).waitFor();
  await checkAgainstPyTorch(shared, 'causal_mha_f32');
  await shared.locator('#weights-clear').click();
  assert.equal(await shared.getByTestId('weights-status').textContent(), '');
  assert.deepEqual(errors, []);
});

test('a trained Transformer with its vocabulary: typed words become its ids and the page gives PyTorch\'s outputs', async (t) => {
  const s = JSON.parse(readFileSync(new URL('module_Transformer.scenario.json', dir), 'utf8'));
  const p = new URLSearchParams({ module: 'Transformer', text: 'the cat sat on the mat', text2: 'the cat sat .',
    tokenizer: 'word', config: JSON.stringify({ Transformer: { ...s.config, vocab_size: null } }) });
  const { page, errors } = await openPage(browser.context, `${server.url}#${p}`);
  const picker = page.getByTestId('weights-input');
  // the vocabulary alone has no table to index: it asks for the weights first
  await picker.setInputFiles(file('module_Transformer.vocab.json'));
  await page.locator('[data-control="weights"] [data-testid="error"]', { hasText: 'before (or together with) its vocabulary' }).waitFor();
  await picker.setInputFiles([file('module_Transformer.safetensors'), file('module_Transformer.vocab.json')]);
  await page.getByTestId('weights-vocab').filter({ hasText: 'module_Transformer.vocab.json: 7 tokens (<pad> the cat sat on mat .)' }).waitFor();
  const ids = await page.evaluate(() => window.playground.plan().main.inputs.map((i) => Array.from(i.data)));
  assert.deepEqual(ids, s.inputs.map((i) => i.data), 'typed tokens map to the vocabulary\'s rows');
  await checkAgainstPyTorch(page, 'module_Transformer', t);
  assert.equal(await page.locator('#config [data-testid="error"]').count(), 0);

  // a word the model never saw is named beside its sentence, with the vocabulary
  await page.getByTestId('tokens2-input').fill('the dog sat .');
  const error = page.locator('[data-control="text2"] [data-testid="error"]');
  await error.waitFor();
  assert.match(await error.textContent(), /'dog' is not in the vocabulary module_Transformer\.vocab\.json \(7 tokens: <pad> the cat sat on mat \.\)/);
  await page.getByTestId('tokens2-input').fill('the cat sat .');
  await error.waitFor({ state: 'detached' });
  await checkAgainstPyTorch(page, 'module_Transformer');
  assert.deepEqual(errors, []);
});

test('the language-model preset: its button loads the shipped GPT by name, the sentence runs through the weights trained on English (the core\'s logits), and the link reloads it', async () => {
  const { loadAttention } = await import('../../bindings/attention.mjs');
  const core = await loadAttention();
  const card = JSON.parse(readFileSync(new URL('../../web/public/models/fortunes/card.json', import.meta.url), 'utf8'));
  const weights = new Uint8Array(readFileSync(new URL('../../web/public/models/fortunes/model.safetensors', import.meta.url)));
  const { page, errors } = await openPage(browser.context, server.url);
  await page.locator('[data-preset="fortunes"]').click();
  await page.waitForFunction(() => window.playground.result()?.module === 'GPT', null, { timeout: 30000 });
  const state = await page.evaluate(() => window.playground.state());
  assert.equal(state.weights, 'models/fortunes/model.safetensors');
  assert.deepEqual(state.config.GPT, card.config, 'the preset\'s config is the card\'s');
  const ids = Array.from(state.text, (c) => card.vocab.indexOf(c));
  const want = core.run({ module: 'GPT', config: card.config, seed: 1, inputs: [{ name: 'idx', shape: [1, ids.length], data: ids }] }, { weights });
  const got = await page.evaluate(() => Array.from(window.playground.result().outputs[0].data));
  const c = compare(Float32Array.from(got), want.outputs[0].data);
  assert.ok(c.ok, `max |page - core| = ${c.maxAbs}`);
  const link = await page.evaluate(() => window.playground.link());
  const { page: again } = await openPage(browser.context, link);
  await again.waitForFunction(() => window.playground.result()?.module === 'GPT' && window.playground.state().weights === 'models/fortunes/model.safetensors', null, { timeout: 30000 });
  const again2 = await again.evaluate(() => Array.from(window.playground.result().outputs[0].data));
  assert.deepEqual(again2, got);
  assert.deepEqual(errors, []);
  await page.close();
  await again.close();
});
