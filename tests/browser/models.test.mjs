// "Open a model" (web/model/, docs/pretrained.md) in Chromium and Firefox, on Hugging Face folders
// PyTorch wrote (tests/fixtures/pretrained/) served by the page's own server: the link's
// `pretrained` address opens a Llama folder (its tokenizer.json cuts the sentence; a tile per layer
// x head; each head's map equal to the core's run of the same folder under Node; a tile opens its
// head large; axe finds no WCAG 2.1 AA violation; a head switched off moves the next token's
// probabilities and switching it on again restores them; the logit lens at the last token gives the
// core's likeliest tokens per readout and goes with its sentence; patching every head from the
// sentence into a corrupted one gives the core's numbers, a corrupted sentence of another length is
// refused at its input); a throttled download shows bytes, speed and time left and completes; cancel leaves the
// open model and the page usable; a truncated file, a wrong dtype, a missing tensor, a config.json
// that disagrees with the weights, a shard index naming a file outside the folder and a tokenizer.json
// that never ends (sent without a length) each give the
// core's message, the open model staying; a tokenizer.json whose regular expression never ends
// stalls the worker, which Cancel replaces; a sharded BF16 folder without a tokenizer takes token ids;
// picked files open as a folder does; cross-origin isolated, the mode's worker runs the threaded
// build on two threads with the same numbers as one thread's.
import assert from 'node:assert/strict';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { readModel } from '../../bindings/pretrained.mjs';
import { loadTokenizer } from '../../bindings/tokenizer.mjs';
import { audit } from './a11y.mjs';
import { launch, openPage, startServer, test } from './harness.mjs';

const FIXTURES = new URL('../fixtures/pretrained/', import.meta.url).pathname;
const GOOD = 'llama_gqa_f32';
let server, isolated, browser, bad;

// The bad folders, each a copy of GOOD (or the sharded GPT-2) with one lie, and the message's words.
const edits = {
  truncated: { from: GOOD, edit: (f) => { f['model.safetensors'] = f['model.safetensors'].subarray(0, f['model.safetensors'].length - 100); }, says: /model\.safetensors.*truncated/ },
  dtype: { from: GOOD, edit: (f) => { f['model.safetensors'] = swap(f['model.safetensors'], '"F32"', '"I64"'); }, says: /I64/ },
  missing: { from: GOOD, edit: (f) => { f['model.safetensors'] = without(f['model.safetensors'], 'model.norm.weight'); }, says: /model\.norm\.weight/ },
  config: { from: GOOD, edit: (f) => { f['config.json'] = Buffer.from(String(f['config.json']).replace('"intermediate_size": 48', '"intermediate_size": 64')); }, says: /needs \[/ },
  outside: { from: 'gpt2_bare_f16_sharded', edit: (f) => { f['model.safetensors.index.json'] = Buffer.from(String(f['model.safetensors.index.json']).replace('"model-00002-of-00002.safetensors"', '"../model-00002-of-00002.safetensors"')); }, says: /in the model folder itself/ },
};
// GOOD with a tokenizer.json whose pre-tokenizer splits on a regular expression that backtracks
// for ever on REDOS_TEXT (every way of cutting its run of a's into groups is tried before the '!' fails it)
const REDOS = 'redos_tokenizer';
const REDOS_TEXT = `${'a'.repeat(40)}!`;
function redosFiles() {
  const files = folderFiles(GOOD);
  const tokenizer = JSON.parse(String(files['tokenizer.json']));
  tokenizer.pre_tokenizer = { type: 'Split', pattern: { Regex: '(a+)+$' }, behavior: 'Isolated', invert: false };
  files['tokenizer.json'] = Buffer.from(JSON.stringify(tokenizer));
  return files;
}
// GOOD read as 16 heads of width 2 (8 key/value heads): the same tensors, as many tiles per layer as
// GPT-2 small's 12 and more
const WIDE = 'sixteen_heads';
function wideFiles() {
  const files = folderFiles(GOOD);
  files['config.json'] = Buffer.from(String(files['config.json']).replace('"num_attention_heads": 4', '"num_attention_heads": 16')
    .replace('"num_key_value_heads": 2', '"num_key_value_heads": 8'));
  return files;
}
// The first occurrence of `a` in a file's bytes replaced by `b` (the same length: offsets stay).
function swap(bytes, a, b) {
  const s = Buffer.from(bytes).toString('latin1');
  assert.ok(s.includes(a) && a.length === b.length);
  return Buffer.from(s.replace(a, b), 'latin1');
}
// A safetensors file with one tensor left out (the others' data packed again, offsets rewritten).
function without(bytes, name) {
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  assert.ok(header[name]);
  delete header[name];
  const parts = [];
  let at = 0;
  for (const [key, e] of Object.entries(header)) {
    if (key === '__metadata__') continue;
    const [b, end] = e.data_offsets;
    parts.push(bytes.subarray(8 + n + b, 8 + n + end));
    e.data_offsets = [at, at + end - b];
    at += end - b;
  }
  const text = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(text.length));
  return Buffer.concat([length, text, ...parts]);
}
const folderFiles = (name) => Object.fromEntries(readdirSync(join(FIXTURES, name)).map((f) => [f, readFileSync(join(FIXTURES, name, f))]));

// /hf/<folder>/<file> from the written bad folders or the fixtures, with Content-Length;
// /slow/<folder>/<file>: the same, 2 KB every 40 ms; /endless/<folder>/: its tokenizer.json, sent
// without a length, never ends.
function routes(req, res, next) {
  const m = /^\/(hf|slow|endless)\/([\w-]+)\/([\w.-]+)$/.exec(decodeURIComponent(req.url.split('?')[0]));
  if (!m) return next();
  const [, kind, folder, file] = m;
  if (kind === 'endless' && file === 'tokenizer.json') {
    res.writeHead(200, { 'content-type': 'application/json' });
    const spaces = Buffer.alloc(1 << 20, 0x20);
    const more = () => { while (!res.destroyed && res.write(spaces)); if (!res.destroyed) res.once('drain', more); };
    more();
    return;
  }
  const path = [join(bad, folder, file), join(FIXTURES, folder, file)].find((p) => existsSync(p));
  if (!path) { res.writeHead(404).end('not found'); return; }
  const bytes = readFileSync(path);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
  if (kind !== 'slow') { createReadStream(path).pipe(res); return; }
  let at = 0;
  const tick = () => {
    if (res.destroyed) return;
    res.write(bytes.subarray(at, at + 2048));
    at += 2048;
    if (at < bytes.length) setTimeout(tick, 40); else res.end();
  };
  tick();
}

before(async () => {
  bad = mkdtempSync(join(tmpdir(), 'bad-models-'));
  const edited = Object.entries(edits).map(([name, { from, edit }]) => {
    const files = folderFiles(from);
    edit(files);
    return [name, files];
  });
  for (const [name, files] of [...edited, [REDOS, redosFiles()], [WIDE, wideFiles()]]) {
    mkdirSync(join(bad, name));
    for (const [f, b] of Object.entries(files)) writeFileSync(join(bad, name, f), b);
  }
  [server, isolated] = await Promise.all([startServer({ middleware: routes }), startServer({ middleware: routes, isolated: true })]);
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await isolated?.close();
  if (bad) rmSync(bad, { recursive: true, force: true });
});

// Console errors but the 404s of a folder's optional files (tokenizer.json, the index, ...).
const real = (errors) => errors.filter((e) => !/status of 404/.test(e));
const model = (page) => page.evaluate(() => window.playground.model());
// The mode has a model and its sentence's maps (and nothing is loading); if not within 60 s, the
// error says what the page showed instead (its status, error and progress; the console's errors).
async function ready(page, label, errors = []) {
  try {
    await page.waitForFunction((l) => {
      const m = window.playground.model();
      return m && m.label === l && m.ids.length > 0 && !m.loading;
    }, label, { timeout: 60000, polling: 50 });
  } catch (e) {
    const shown = await page.evaluate(() => {
      const text = (id) => document.querySelector(`[data-testid="${id}"]`)?.textContent ?? null;
      const m = window.playground.model();
      return { model: m && { label: m.label, ids: m.ids.length, loading: m.loading, error: m.error },
        status: text('model-status'), error: text('model-error'), progress: text('model-progress-text') };
    }).catch((why) => String(why));
    throw new Error(`${label} was not open with its maps: ${JSON.stringify({ shown, errors })}`, { cause: e });
  }
}
async function openUrl(page, url) {
  await page.getByTestId('model-url').fill(url);
  await page.getByTestId('model-url-open').click();
}

// The core under Node on the same folder and ids: every layer's attention [layer, 1, head, T, T].
async function nodeMaps(name, ids) {
  const core = await loadAttention({ fast: true, threads: 1 });
  const files = (f) => (existsSync(join(FIXTURES, name, f)) && statSync(join(FIXTURES, name, f)).isFile() ? new Uint8Array(readFileSync(join(FIXTURES, name, f))) : null);
  const r = core.run({ pretrained: name, inputs: [{ name: 'input_ids', shape: [1, ids.length], data: ids }] }, { files });
  const tr = core.trainer({ pretrained: name, inputs: [{ name: 'input_ids', shape: [1, ids.length], data: ids }] }, { files });
  const lens = readModel(tr, { logit_lens: true }, { position: -1, top: 5 }).logit_lens;
  // patching every head from the clean row into the corrupted one, with the answer and wrong token the page chose
  const patch = (clean, corrupted, token, wrong) => {
    tr.setInput('input_ids', Float32Array.from([...clean, ...corrupted]), [2, clean.length]);
    const spec = { clean: 0, corrupted: 1, steps: ['model.layers.*.self_attn.attn_output_heads'], by: 'head', metric: { kind: 'logit_diff', position: -1, token, wrong } };
    return readModel(tr, { patching: spec, logit_attribution: { position: -1, token, wrong, batch: 0 } });
  };
  return { maps: r.outputs.find((o) => o.name === 'attention_weights').data, lens, patch, done: () => tr.delete(), tokenizer: await loadTokenizer(files, 'llama') };
}

test('a link opens a Llama folder: its tokenizer, a tile per layer x head, maps equal to the core under Node, a head opened large, greedy continuation', async () => {
  const { page, errors } = await openPage(browser.context, `${server.url}#pretrained=${encodeURIComponent(`${server.url}hf/${GOOD}/`)}&pttext=${encodeURIComponent('the cat sat')}`);
  await ready(page, `hf/${GOOD}`);
  const m = await model(page);
  assert.equal(m.module, 'Llama');
  assert.equal(m.model_type, 'llama');
  assert.deepEqual([m.layers, m.heads], [2, 4]);
  assert.equal(m.tokenizer, 'tokenizer.json');
  assert.equal(await page.getByTestId('model-tile').count(), 8, 'a tile per layer x head');
  const node = await nodeMaps(GOOD, m.ids);
  assert.deepEqual(m.ids, node.tokenizer.encode('the cat sat'), 'the folder\'s tokenizer.json cut the sentence');
  assert.deepEqual(m.pieces, node.tokenizer.pieces(m.ids));
  assert.equal(await page.getByTestId('model-tokens').locator('[data-testid="token"]').count(), m.ids.length);
  const T = m.ids.length;
  for (const [l, h] of [[0, 0], [1, 3]]) {
    const drawn = await page.evaluate(([a, b]) => window.playground.modelMap(a, b), [l, h]);
    assert.deepEqual(drawn, Array.from(node.maps.subarray((l * 4 + h) * T * T, (l * 4 + h + 1) * T * T)), `layer ${l} head ${h}: the page's map is the core's`);
  }
  assert.ok(m.next.length === 5 && m.next[0].prob >= m.next[1].prob);
  await page.locator('[data-testid="model-tile"][data-layer="1"][data-head="2"]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="model-head"]').dataset.head === '2');
  assert.match(await page.getByTestId('model-head-title').textContent(), /Layer 1, head 2/);
  assert.match(await page.evaluate(() => window.playground.link()), /pthead=1\.2/);
  // the logit lens at the last token: a row per readout (embeddings, each layer's attention and MLP), the core's tokens
  await page.getByTestId('model-lens').click();
  await page.waitForFunction(() => window.playground.model().lens !== null);
  const lens = (await model(page)).lens;
  assert.equal(lens.length, 2 * 2 + 1);
  assert.equal(await page.getByTestId('model-lens-table').locator('tbody tr').count(), 5);
  lens.forEach((e, i) => {
    assert.equal(e.step, node.lens[i].step);
    assert.deepEqual(e.top.map((x) => x.id), node.lens[i].top.map((x) => x.id), `readout ${e.step}: the core's tokens`);
    e.top.forEach((x, k) => assert.ok(Math.abs(x.prob - node.lens[i].top[k].prob) <= 1e-6));
  });
  assert.deepEqual([lens[0].after, lens[1].layer, lens[1].after, lens[4].layer, lens[4].after], ['embed', 0, 'attn', 1, 'mlp']);
  // patching: a corrupted sentence of as many tokens, every head patched; the grids are the core's under Node
  await page.getByTestId('model-corrupt').fill('the cat cat sat');
  await page.getByTestId('model-patch').click();
  await page.waitForFunction(() => /same number of tokens/.test(document.querySelector('[data-testid="model-patch-note"]').textContent));
  assert.equal(await page.getByTestId('model-corrupt').getAttribute('aria-invalid'), 'true');
  await page.getByTestId('model-corrupt').fill('the sat cat');
  await page.getByTestId('model-patch').click();
  await page.waitForFunction(() => window.playground.model().patching !== null);
  const p = (await model(page)).patching;
  assert.deepEqual(p.ids, m.ids);
  assert.deepEqual(p.corruptIds, node.tokenizer.encode('the sat cat'));
  const want = node.patch(p.ids, p.corruptIds, p.token.id, p.wrong.id);
  assert.equal(Math.fround(p.clean_metric), Math.fround(want.patching.clean_metric));
  for (const c of want.patching.cells) {
    const l = Number(/layers\.(\d+)\./.exec(c.step)[1]);
    assert.equal(p.effect[l][c.head], Math.fround(c.metric - want.patching.corrupted_metric), `patched ${c.step} head ${c.head}`);
  }
  assert.equal(Math.fround(p.dla_total), Math.fround(want.logit_attribution.total));
  assert.equal(p.effect.length, 2);
  assert.equal(await page.locator('[data-testid="model-patching"]').getAttribute('data-cells'), '8');
  assert.equal(await page.locator('[data-testid="model-dla"]').getAttribute('data-cells'), '8');
  assert.match(await page.getByTestId('model-patch-note').textContent(), /8 heads patched/);
  assert.match(await page.evaluate(() => window.playground.link()), /ptcorrupt=the(%20|\+)sat(%20|\+)cat/);
  await audit(page, '"Open a model" with a head open, the logit lens and patching');
  // heads switched off: the next token's probabilities move; the link keeps them; every head on again restores them
  const next0 = (await model(page)).next;
  await page.getByTestId('model-ablate-mode').click();
  await page.locator('[data-testid="model-tile"][data-layer="0"][data-head="1"]').click();
  await page.waitForFunction(() => window.playground.model().ablated.length === 1);
  assert.equal(await page.locator('[data-testid="model-tile"][data-layer="0"][data-head="1"]').getAttribute('data-off'), 'true');
  assert.notDeepEqual((await model(page)).next, next0);
  assert.match(await page.evaluate(() => window.playground.link()), /ptablate=0\.1/);
  await page.getByTestId('model-ablate-reset').click();
  await page.waitForFunction(() => window.playground.model().ablated.length === 0);
  assert.deepEqual((await model(page)).next, next0);
  await page.getByTestId('model-generate').click();
  await page.waitForFunction(() => window.playground.model().generated !== null);
  assert.equal((await model(page)).generated.ids.length, 16);
  // a sentence near the model's 64 positions: the continuation stops there and says so
  await page.getByTestId('model-text').fill('the cat sat on the mat and the dog ate the hat while a bird sang in the tree by the lake');
  await page.waitForFunction(() => window.playground.model().generated === null && window.playground.model().ids.length > 50);
  const long = (await model(page)).ids.length;
  await page.getByTestId('model-generate').click();
  await page.waitForFunction(() => window.playground.model().generated !== null);
  assert.equal((await model(page)).generated.ids.length, 64 - long);
  assert.match(await page.getByTestId('model-generated').textContent(), new RegExp(`\\(${64 - long} of 16 tokens: the sentence and its continuation fit in 64 positions\\)$`));
  // typing a sentence recomputes
  await page.getByTestId('model-text').fill('a dog');
  await page.waitForFunction(() => window.playground.model().text === 'a dog');
  assert.equal((await model(page)).lens, null, 'the lens of the old sentence is gone');
  assert.equal((await model(page)).patching, null, 'so is the patching');
  assert.equal((await model(page)).generated, null, 'and the continuation');
  assert.equal(await page.getByTestId('model-generated').textContent(), '');
  assert.equal(await page.getByTestId('model-patch-result').isHidden(), true);
  node.done();
  assert.equal(await page.getByTestId('model-lens-table').isHidden(), true);
  assert.deepEqual(real(errors), []);
  await page.close();
});

test('at a laptop\'s width the address field spans its panel, and a 16-head model shows each layer as one row of tiles', async () => {
  const { page, errors } = await openPage(browser.context, `${server.url}#pretrained=${encodeURIComponent(`${server.url}hf/${WIDE}/`)}&pttext=${encodeURIComponent('the cat sat')}`);
  await page.setViewportSize({ width: 1280, height: 900 });
  await ready(page, `hf/${WIDE}`, errors);
  const { layers, heads } = await model(page);
  assert.deepEqual([layers, heads], [2, 16]);
  const { field, panel, tiles, grid } = await page.evaluate(() => {
    const input = document.querySelector('[data-testid="model-url"]');
    const g = document.querySelector('[data-testid="model-grid"]');
    return { field: input.getBoundingClientRect().width, panel: input.closest('.field').getBoundingClientRect().width,
      tiles: [...g.querySelectorAll('[data-testid="model-tile"]')].map((b) => ({ layer: b.dataset.layer, top: Math.round(b.getBoundingClientRect().top), width: b.getBoundingClientRect().width })),
      grid: [g.scrollWidth, g.clientWidth] };
  });
  assert.ok(field >= 0.95 * panel, `the address field spans its panel (${field} of ${panel} px): a Hub address is long`);
  assert.equal(tiles.length, 32);
  for (const layer of ['0', '1']) assert.equal(new Set(tiles.filter((x) => x.layer === layer).map((x) => x.top)).size, 1, `layer ${layer}'s 16 tiles in one row`);
  assert.ok(tiles.every((x) => x.width >= 40), `every tile at least 40 px wide (${Math.min(...tiles.map((x) => x.width))})`);
  assert.ok(grid[0] <= grid[1] + 1, `16 tiles fit at 1280 px without scrolling (${grid})`);
  // the three layer x head heatmaps of "Patch every head", side by side in half a card each: every column shown
  await page.getByTestId('model-corrupt').fill('the sat cat');
  await page.getByTestId('model-patch').click();
  await page.waitForFunction(() => window.playground.model()?.patching, null, { timeout: 30000 });
  for (const id of ['model-patching', 'model-attribution', 'model-dla']) {
    const [map, figure, cut] = await page.evaluate((i) => {
      const f = document.querySelector(`[data-testid="${i}"]`);
      const clip = f.querySelector('.canvas-clip');
      // ink the canvas holds right of its box's last pixel column: a label drawn there is cut off
      const canvas = clip.querySelector('canvas');
      const dpr = canvas.width / parseFloat(canvas.style.width);
      const x = Math.floor(clip.getBoundingClientRect().width * dpr) - 1;
      const { data } = canvas.getContext('2d').getImageData(x, 0, canvas.width - x, canvas.height);
      let ink = 0;
      for (let k = 3; k < data.length; k += 4) if (data[k] > 96) ink++;
      return [clip.getBoundingClientRect().width, f.getBoundingClientRect().width, ink];
    }, id);
    assert.ok(map > 0 && map <= figure + 0.5, `${id}: its 16 columns within its figure (${map} of ${figure} px)`);
    assert.equal(cut, 0, `${id}: no label runs past the map's right edge ("Head 15" slants up and right)`);
  }
  assert.deepEqual(real(errors), []);
  await page.close();
});

// Served cross-origin isolated (npm start's headers) the worker takes the threaded build on every
// core; the tiles, the next tokens and the patching grids are those of the single-thread build.
test('cross-origin isolated, the model worker runs the threaded build: the same maps, next tokens and patching as one thread', async () => {
  const seen = [];
  for (const s of [server, isolated]) {
    const link = `${s.url}#pretrained=${encodeURIComponent(`${s.url}hf/${GOOD}/`)}&pttext=${encodeURIComponent('the cat sat')}&ptcorrupt=${encodeURIComponent('the sat cat')}`;
    const { page, errors } = await openPage(browser.context, link);
    await ready(page, `hf/${GOOD}`, errors);
    await page.getByTestId('model-patch').click();
    await page.waitForFunction(() => window.playground.model().patching !== null, null, { timeout: 60000 });
    const m = await model(page);
    seen.push({ isolated: await page.evaluate(() => window.crossOriginIsolated), threads: m.threads, next: m.next, patching: m.patching,
      maps: await page.evaluate(() => [window.playground.modelMap(0, 0), window.playground.modelMap(1, 3)]) });
    assert.deepEqual(real(errors), []);
    await page.close();
  }
  assert.deepEqual(seen.map((x) => [x.isolated, x.threads]), [[false, 1], [true, 2]]);
  const { ms: _a, ...one } = seen[0].patching, { ms: _b, ...two } = seen[1].patching;
  assert.deepEqual(two, one);
  assert.deepEqual([seen[1].next, seen[1].maps], [seen[0].next, seen[0].maps]);
});

test('a throttled folder shows bytes, speed and time left; cancel keeps the open model and the page usable', async () => {
  const { page, errors } = await openPage(browser.context, `${server.url}#models=1`);
  await openUrl(page, `${server.url}hf/${GOOD}/`);
  await ready(page, `hf/${GOOD}`);
  await openUrl(page, `${server.url}slow/${GOOD}/`);
  await page.waitForFunction(() => {
    const b = document.querySelector('[data-testid="model-progress"]');
    return b && Number(b.dataset.loaded) > 0 && Number(b.dataset.loaded) < Number(b.dataset.total);
  }, null, { polling: 20 });
  await page.waitForFunction(() => /[\d.]+ of 0\.07 MB · [\d.]+ MB\/s · \d+ s left/.test(document.querySelector('[data-testid="model-progress-text"]').textContent), null, { polling: 20 });
  await page.getByTestId('model-cancel').click();
  await page.waitForFunction(() => /Cancelled/.test(document.querySelector('[data-testid="model-status"]').textContent));
  assert.equal((await model(page)).label, `hf/${GOOD}`, 'the open model stays');
  await page.getByTestId('model-text').fill('the dog');
  await page.waitForFunction(() => window.playground.model().text === 'the dog' && window.playground.model().ids.length > 0);
  // the slow one, left to finish, opens
  await openUrl(page, `${server.url}slow/${GOOD}/`);
  await ready(page, `slow/${GOOD}`);
  assert.deepEqual(real(errors), []);
  await page.close();
});

// Cancel is a message: a worker busy in one step that never ends cannot read it. The page replaces
// a worker that does not answer it within 2 s (web/model/mode.js), and opens the next folder.
test('a tokenizer whose regular expression never ends: Cancel replaces the stuck worker, and the next folder opens', async () => {
  const { page, errors } = await openPage(browser.context, `${server.url}#models=1&pttext=${REDOS_TEXT}`);
  await openUrl(page, `${server.url}hf/${REDOS}/`);
  // its weights are built, then its tokenizer runs on the sentence and does not come back
  await page.waitForFunction((l) => window.playground.model()?.label === l, `hf/${REDOS}`, { timeout: 30000 });
  await page.waitForTimeout(1500);
  assert.deepEqual(await model(page).then((m) => [m.ids.length, m.loading]), [0, true], 'its sentence has not come back');
  const t0 = Date.now();
  await page.getByTestId('model-cancel').click();
  await page.waitForFunction(() => /did not answer Cancel within 2 s/.test(document.querySelector('[data-testid="model-error"]').textContent), null, { timeout: 10000 });
  const waited = Date.now() - t0;
  assert.ok(waited >= 1900 && waited < 10000, `${waited} ms`);
  assert.equal(await page.evaluate(() => window.playground.link()).then((l) => /pretrained=/.test(l)), false, 'the link no longer names the folder');
  assert.equal(await page.getByTestId('model-cancel').isDisabled(), true);
  await page.getByTestId('model-text').fill('the cat sat');
  await openUrl(page, `${server.url}hf/${GOOD}/`);
  await ready(page, `hf/${GOOD}`, errors);
  assert.equal(await page.getByTestId('model-error').isHidden(), true);
  assert.deepEqual(real(errors), []);
  await page.close();
});

// A worker whose script does not load answers nothing: the page says so, and the next open starts another.
test('the mode\'s worker script not served: the open fails with that, and the next open works', async () => {
  const { page, errors } = await openPage(browser.context, `${server.url}#models=1`);
  await page.route('**/model/worker.js*', (route) => route.fulfill({ status: 404, body: 'not here' }));
  await openUrl(page, `${server.url}hf/${GOOD}/`);
  await page.waitForFunction(() => /worker failed \(its script did not load\)/.test(document.querySelector('[data-testid="model-error"]').textContent), null, { timeout: 30000 });
  assert.equal(await model(page), null);
  await page.unroute('**/model/worker.js*');
  await openUrl(page, `${server.url}hf/${GOOD}/`);
  await ready(page, `hf/${GOOD}`, errors);
  assert.equal(await page.getByTestId('model-error').isHidden(), true);
  assert.deepEqual(real(errors).filter((e) => !/worker\.js/.test(e)), []);
  await page.close();
});

test('bad folders give the core\'s message and the open model stays; a sharded BF16 folder without a tokenizer takes ids', async () => {
  const { page } = await openPage(browser.context, `${server.url}#models=1`);
  await openUrl(page, `${server.url}hf/${GOOD}/`);
  await ready(page, `hf/${GOOD}`);
  // the written bad folders, and a tokenizer.json without end, sent without a length
  const folders = [...Object.entries(edits).map(([name, { says }]) => [`hf/${name}`, says]), [`endless/${GOOD}`, /tokenizer\.json goes on past 67108864 bytes/]];
  for (const [name, says] of folders) {
    await openUrl(page, `${server.url}${name}/`);
    await page.waitForFunction(() => !document.querySelector('[data-testid="model-error"]').hidden && !window.playground.model().loading);
    const message = await page.getByTestId('model-error').textContent();
    assert.match(message, says, `${name}: ${message}`);
    assert.equal((await model(page)).label, `hf/${GOOD}`, `${name}: the open model stays`);
    assert.equal(await page.getByTestId('model-tile').count(), 8);
  }
  await openUrl(page, `${server.url}hf/llama_mqa_tied_bf16_sharded/`);
  await ready(page, 'hf/llama_mqa_tied_bf16_sharded');
  const m = await model(page);
  assert.equal(m.tokenizer, null);
  assert.deepEqual(m.ids, [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(m.pieces, m.ids.map((i) => `#${i}`));
  assert.equal(await page.getByTestId('model-error').isHidden(), true);
  // picked files (the file picker; a drop reads the same list)
  await page.getByTestId('model-files').setInputFiles(readdirSync(join(FIXTURES, GOOD)).map((f) => join(FIXTURES, GOOD, f)));
  await ready(page, 'files');
  assert.equal((await model(page)).tokenizer, 'tokenizer.json');
  await page.close();
});
