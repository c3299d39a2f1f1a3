// Generate mode in headless Chromium (docs/generation.md, "Generate mode"): a seeded GPT loaded through the
// link with a PyTorch fixture's config, seed and prompt steps 8 tokens, shows 8 attention rows, the
// cache (1, n_head, prompt + 8, head_dim) and the fixture's ids, then runs to the fixture's end;
// cached and uncached logits agree within 1e-5 and both times are shown; a slider's release
// generates again with the new setting (the core's ids for it); the default link opens the shipped
// language model (the core's ids) and reads in Chinese; the weights picker's nanoGPT checkpoint generates PyTorch's ids.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { CHARS } from '../../web/generate/model.js';
import { cutSelects, launch, openPage, startServer, test } from './harness.mjs';

let server, browser, core;
before(async () => {
  server = await startServer();
  browser = await launch();
  core = await loadAttention();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const fixtures = new URL('../fixtures/', import.meta.url);
const json = (name) => JSON.parse(readFileSync(new URL(name, fixtures), 'utf8'));
const generation = (page) => page.evaluate(() => window.playground.generation());
// Generation runs in the mode's worker: the page has `n` tokens once they have arrived and none is
// under way, and has drawn them in the frame after.
// A wait that runs out says what the page had: the session, its status and the messages shown.
async function settled(page, n) {
  await page.waitForFunction((k) => {
    const g = window.playground.generation();
    return g?.steps === k && !g.running;
  }, n, { timeout: 60000, polling: 50 }).catch(async (e) => {
    const seen = await page.evaluate(() => ({ generation: window.playground.generation(), status: document.querySelector('[data-testid="generate-status"]')?.textContent,
      errors: Array.from(document.querySelectorAll('#generation [data-testid="error"]'), (el) => el.textContent) })).catch((x) => String(x));
    throw new Error(`${e.message}\nwaiting for ${n} tokens, the page had ${JSON.stringify(seen)}`);
  });
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}

// A fixture's scenario as Generate mode's link fields (the prompt's ids as the seeded vocabulary's characters).
function linkOf(scenario, extra = {}) {
  const c = scenario.config, g = scenario.generate;
  const fields = {
    generate: '1', genmodel: 'seeded', genseed: scenario.seed, genvocab: c.vocab_size, genblock: c.block_size, genlayers: c.n_layer, genheads: c.n_head,
    genembd: c.n_embd, genbias: c.bias ? '1' : '0', gentemp: g.temperature, gentopk: g.top_k ?? 0, gentopp: g.top_p ?? 0,
    genmax: g.max_new_tokens, genprompt: scenario.inputs[0].data.map((id) => CHARS[id]).join(''), ...extra,
  };
  return `#${new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)]))}`;
}

async function open(hash, { ready = true } = {}) {
  const { page, errors } = await openPage(browser.context, `${server.url}${hash}`);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByTestId('generate-mode').waitFor();
  if (ready) await page.locator('[data-testid="generate-step"]:not([disabled])').waitFor();
  return { page, errors };
}

test('a seeded GPT from a PyTorch fixture: 8 steps give 8 attention rows, the cache (1, n_head, prompt+8, head_dim) and the fixture\'s ids', async () => {
  const name = 'gpt_generate_sample_vocab65';
  const scenario = json(`${name}.scenario.json`), expected = json(`${name}.expected.json`);
  const { page, errors } = await open(linkOf(scenario));
  const P = scenario.inputs[0].data.length, { n_head: H, n_embd: E } = scenario.config;
  assert.equal(await page.getByTestId('generate-prompt').inputValue(), scenario.inputs[0].data.map((id) => CHARS[id]).join(''));
  for (let i = 0; i < 8; i++) await page.getByTestId('generate-step').click();
  await settled(page, 8);
  const g = await generation(page);
  assert.equal(g.steps, 8);
  assert.equal(g.running, false);
  assert.deepEqual(g.ids, expected.ids[0].slice(0, P + 8), 'the page\'s ids are PyTorch\'s');
  assert.deepEqual(g.cacheShape, [1, H, P + 8, E / H]);
  assert.equal(await page.getByTestId('generate-cache-shape').textContent(), `(1, ${H}, ${P + 8}, ${E / H})`);
  const rows = page.locator('[data-testid="generate-rows"] .gen-row');
  assert.equal(await rows.count(), 8);
  assert.equal(await rows.nth(7).locator('canvas').count(), H, 'one strip per head');
  // each strip's head above it, and what its columns are below the rows
  const heads = await page.locator('.gen-heads .gen-head').evaluateAll((els) => els.map((e) => [e.textContent, Math.round(e.getBoundingClientRect().left)]));
  const strips = await rows.nth(7).locator('canvas').evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().left)));
  assert.deepEqual(heads.map(([text]) => text), Array.from({ length: H }, (_, h) => `head ${h}`));
  heads.forEach(([, left], h) => assert.ok(Math.abs(left - strips[h]) <= 2, `head ${h}'s label over its strip (${left} px, strip ${strips[h]} px)`));
  assert.match(await page.locator('.gen-key').textContent(), new RegExp(`^0  1 · .*positions 0 to ${P + scenario.generate.max_new_tokens - 1} `));
  assert.equal(await page.locator('[data-testid="generate-probs"] tbody tr').count(), 10);
  const check = page.getByTestId('generate-check');
  assert.ok(Number(await check.getAttribute('data-max-diff')) <= 1e-5, await check.textContent());
  assert.match(await check.textContent(), /agree/);
  const medians = await page.locator('[data-testid="generate-times"] tr').evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.median)));
  assert.equal(medians.length, 2);
  assert.ok(medians.every((ms) => ms > 0), `times ${medians}`);
  // Run to N: the rest of the fixture's tokens, drawn as they come.
  await page.getByTestId('generate-run').click();
  await settled(page, scenario.generate.max_new_tokens);
  assert.deepEqual((await generation(page)).ids, expected.ids[0]);
  assert.equal(await rows.count(), scenario.generate.max_new_tokens);
  assert.ok(Number(await check.getAttribute('data-max-diff')) <= 1e-5);
  for (const width of [1366, 390]) {  // every select shows any of its options whole
    await page.setViewportSize({ width, height: 800 });
    assert.deepEqual(await cutSelects(page, '[data-testid="generate-mode"]'), [], `at ${width} px`);
  }
  assert.deepEqual(errors, []);
  await page.close();   // its workers and their WASM memories go before the next test opens its own
});

test('the greedy fixture through the link, and a slider released: the same step count again with the core\'s ids for the new setting', async () => {
  const scenario = json('gpt_generate_greedy.scenario.json'), expected = json('gpt_generate_greedy.expected.json');
  const { page, errors } = await open(linkOf(scenario));
  for (let i = 0; i < 3; i++) await page.getByTestId('generate-step').click();
  await settled(page, 3);
  assert.deepEqual((await generation(page)).ids, expected.ids[0].slice(0, 7));
  // temperature 0 → 1.3: the bars preview while it moves, then the run is generated again to 3 tokens
  const slider = page.getByTestId('generate-temperature');
  await slider.evaluate((el) => { el.value = '1.3'; el.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.getByTestId('generate-probs').filter({ hasText: /Preview/ }).waitFor();
  await slider.evaluate((el) => el.dispatchEvent(new Event('change', { bubbles: true })));
  await page.waitForFunction(() => window.playground.state().gentemp === 1.3);
  await settled(page, 3);
  const g = await generation(page);
  assert.equal(g.steps, 3);
  const want = core.run({ ...scenario, trace: false, generate: { max_new_tokens: 3, temperature: 1.3 } });
  assert.deepEqual(g.ids, want.ids[0]);
  assert.match(await page.evaluate(() => window.playground.link()), /gentemp=1\.3/);
  assert.deepEqual(errors, []);
  await page.close();   // its workers and their WASM memories go before the next test opens its own
});

test('#generate=1 opens the shipped language model (fortunes: 4 layers, 4 heads, 128 wide) and draws the core\'s ids; Chinese texts; a bad prompt character is named', async () => {
  const { page, errors } = await open('#generate=1&lang=zh');
  assert.match(await page.locator('#h-generation').textContent(), /生成/);
  assert.match(await page.getByTestId('generate-model').textContent(), /models\/fortunes\/model\.safetensors/);
  await page.getByTestId('generate-step').click();
  await settled(page, 1);
  const g = await generation(page);
  const prompt = 'to be or not to', P = Array.from(prompt).length;
  assert.equal(g.steps, 1);
  assert.deepEqual(g.cacheShape, [1, 4, P + 1, 32]);
  const card = JSON.parse(readFileSync(new URL('../../web/public/models/fortunes/card.json', import.meta.url), 'utf8'));
  const weights = new Uint8Array(readFileSync(new URL('../../web/public/models/fortunes/model.safetensors', import.meta.url)));
  const ids = Array.from(prompt, (c) => card.vocab.indexOf(c));
  const want = core.run({ module: 'GPT', config: card.config, seed: 1, inputs: [{ name: 'idx', shape: [1, P], data: ids }], generate: { max_new_tokens: 1, temperature: 1 } }, { weights });
  assert.deepEqual(g.ids, want.ids[0], 'the page draws the core\'s token from the language model');
  assert.match(await page.getByTestId('generate-status').textContent(), /已生成 1/);
  await page.getByTestId('generate-prompt').fill('to be中');
  await page.locator('[data-control="genprompt"] [data-testid="error"]').waitFor();
  assert.equal(await generation(page), null);
  await page.getByTestId('generate-prompt').fill('to be');
  await page.locator('[data-testid="generate-step"]:not([disabled])').waitFor();
  await settled(page, 0);
  assert.deepEqual(errors, []);
  await page.close();   // its workers and their WASM memories go before the next test opens its own
});

test('a nanoGPT checkpoint from the weights picker (scripts/export_nanogpt.py) generates PyTorch\'s ids', async () => {
  const scenario = json('nanogpt/nanogpt_char_greedy.scenario.json'), expected = json('nanogpt/nanogpt_char_greedy.expected.json');
  const vocab = json('nanogpt/nanogpt_char.vocab.json').tokens;
  const prompt = scenario.inputs[0].data.map((id) => (vocab[id] === '\n' ? '↵' : vocab[id])).join('');
  const hash = `#${new URLSearchParams({ generate: '1', genmodel: 'seeded', module: 'GPT', config: JSON.stringify({ GPT: scenario.config }), gentemp: '0', genmax: '8', genprompt: prompt })}`;
  // before the file, the seeded model's 27 characters lack the prompt's capitals: the prompt says so
  const { page, errors } = await open(hash, { ready: false });
  await page.locator('[data-control="genprompt"] [data-testid="error"]').waitFor();
  const file = (name) => new URL(`nanogpt/${name}`, fixtures).pathname;
  await page.getByTestId('weights-input').setInputFiles([file('nanogpt_char.safetensors'), file('nanogpt_char.vocab.json')]);
  await page.getByTestId('generate-model').filter({ hasText: 'nanogpt_char.safetensors' }).waitFor();
  // the prompt's forward arriving from the worker moves nothing above the buttons: a press as the model
  // shows is not lost under a button that moved (CI's Firefox once clicked where Run had been)
  const run = page.getByTestId('generate-run'), at = await run.boundingBox();
  await settled(page, 0);
  assert.deepEqual(await run.boundingBox(), at, 'the Run button stays where it was when the prompt\'s ids came');
  await run.click();
  await settled(page, 8);
  const P = scenario.inputs[0].data.length;
  assert.deepEqual((await generation(page)).ids, expected.ids[0].slice(0, P + 8));
  assert.deepEqual((await generation(page)).cacheShape, [1, 4, P + 8, 8]);
  assert.match(await page.getByTestId('generate-text').textContent(), /^First Citizen:↵\n↵/);
  assert.deepEqual(errors, []);
  await page.close();   // its workers and their WASM memories go before the next test opens its own
});
