// Exports and the Share / Embed dialog: every download is a valid file with the page's numbers (the
// .npy re-read here by a NumPy-format reader, the scenario re-run by the CLI), and the dialog's
// link opens the lesson view it describes (hidden controls, shown steps).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { launch, openPage, startServer, test } from './harness.mjs';

let server, browser, tmp;
before(async () => {
  server = await startServer();
  browser = await launch();
  tmp = mkdtempSync(join(tmpdir(), 'attn-export-'));
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// NumPy's .npy v1.0/2.0 reader for little-endian float32 (what numpy.load accepts).
function readNpy(buf) {
  assert.deepEqual([...buf.subarray(0, 6)], [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59], 'magic');
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  assert.equal(start % 64, 0, 'data aligned to 64 bytes');
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  assert.match(header, /^\{'descr': '<f4', 'fortran_order': False, 'shape': \(([\d, ]*)\), \} *\n$/);
  const shape = /'shape': \(([\d, ]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  assert.equal(buf.length - start, count * 4, 'data length');
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) data[i] = buf.readFloatLE(start + i * 4);
  return { shape, data };
}

async function save(page, click) {
  const [download] = await Promise.all([page.waitForEvent('download'), click()]);
  const file = join(tmp, download.suggestedFilename());
  await download.saveAs(file);
  return { name: download.suggestedFilename(), bytes: readFileSync(file), file };
}

test('a step exports as JSON, CSV, .npy, PNG and SVG with the page\'s numbers', async () => {
  const { page, errors } = await openPage(browser.context, server.url);
  await page.getByTestId('tokens-input').fill('export every number');
  await page.waitForFunction(() => window.playground.result().outputs[0].shape[1] === 3);
  const card = page.locator('[data-testid="step"]').nth(3);
  await card.scrollIntoViewIfNeeded();
  const stepName = await card.getAttribute('data-step');
  const step = await page.evaluate((name) => {
    const s = window.playground.result().steps.find((x) => x.name === name);
    return { name: s.name, shape: s.shape, dims: s.dims, data: Array.from(s.data) };
  }, stepName);
  await card.locator('details.export summary').click();
  const button = (format) => card.locator(`details.export button[data-format="${format}"]`);

  const json = await save(page, () => button('JSON').click());
  const parsed = JSON.parse(json.bytes.toString('utf8'));
  assert.equal(parsed.name, step.name);
  assert.deepEqual(parsed.shape, step.shape);
  assert.deepEqual(parsed.dims, step.dims);
  assert.deepEqual(parsed.data, step.data);

  const csv = (await save(page, () => button('CSV').click())).bytes.toString('utf8').trim().split('\n');
  const last = step.shape.at(-1);
  assert.equal(csv.length, 1 + step.data.length / last);
  assert.deepEqual(csv[0].split(','), [...step.dims.slice(0, -1), ...Array.from({ length: last }, (_, j) => `${step.dims.at(-1)}=${j}`)]);
  const lead = step.shape.length - 1;
  const fromCsv = csv.slice(1).flatMap((line) => line.split(',').slice(lead).map(Number));
  assert.deepEqual(fromCsv, step.data);
  // Each row starts with its indices over the leading dims, in row-major order.
  csv.slice(1).forEach((line, r) => {
    const index = [];
    for (let k = lead - 1, rest = r; k >= 0; k--) { index.unshift(rest % step.shape[k]); rest = Math.floor(rest / step.shape[k]); }
    assert.deepEqual(line.split(',').slice(0, lead).map(Number), index);
  });

  const npy = await save(page, () => button('npy').click());
  assert.match(npy.name, /\.npy$/);
  const arr = readNpy(npy.bytes);
  assert.deepEqual(arr.shape, step.shape);
  assert.deepEqual(Array.from(arr.data), step.data);

  const png = (await save(page, () => button('PNG').click())).bytes;
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.ok(png.readUInt32BE(16) > 20 && png.readUInt32BE(20) > 20, `PNG is ${png.readUInt32BE(16)} x ${png.readUInt32BE(20)}`);

  const svg = (await save(page, () => button('SVG').click())).bytes.toString('utf8');
  const cells = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    if (doc.querySelector('parsererror')) return -1;
    return doc.querySelectorAll('rect[x]').length;
  }, svg);
  const rows = step.shape.length >= 2 ? step.shape.at(-2) : 1;
  assert.equal(cells, rows * last, 'one rect per cell of the displayed slice');
  assert.deepEqual(errors, []);
});

test('the attention view exports its head as PNG, SVG and .npy; the scenario JSON re-runs to the same output', async () => {
  const { page, errors } = await openPage(browser.context, server.url);
  await page.getByTestId('tokens-input').fill('the cat sat on the mat');
  await page.waitForFunction(() => window.playground.result().outputs[0].shape[1] === 6);
  await page.locator('#attention-head').selectOption('2');
  const menu = page.getByTestId('attention-export');
  await menu.locator('summary').click();
  const npy = readNpy((await save(page, () => menu.locator('button[data-format="npy"]').click())).bytes);
  assert.deepEqual(npy.shape, [6, 6]);
  const weights = await page.evaluate(() => {
    const s = window.playground.result().steps.find((x) => x.name === 'attn_weights');
    return Array.from(s.data.subarray(2 * 36, 3 * 36));   // (batch=1, heads=4, 6, 6): head 2
  });
  assert.deepEqual(Array.from(npy.data), weights);
  for (let r = 0; r < 6; r++) for (let c = r + 1; c < 6; c++) assert.equal(npy.data[r * 6 + c], 0, 'causal: masked weights are 0');
  const png = (await save(page, () => menu.locator('button[data-format="PNG"]').click())).bytes;
  assert.equal(png.toString('latin1', 1, 4), 'PNG');
  const svg = (await save(page, () => menu.locator('button[data-format="SVG"]').click())).bytes.toString('utf8');
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.equal((svg.match(/fill="url\(#hatch\)"/g) ?? []).length, 15, 'the 15 masked cells are hatched');
  assert.match(svg, />the<\/text>/);

  const scenario = await save(page, () => page.getByTestId('export-scenario').click());
  const cli = fileURLToPath(new URL('../../bindings/cli.mjs', import.meta.url));
  const rerun = JSON.parse(execFileSync('node', [cli, 'run', scenario.file], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  const out = await page.evaluate(() => Array.from(window.playground.result().outputs[0].data));
  assert.deepEqual(Array.from(Float32Array.from(rerun.outputs[0].data)), out, 'the same float32 bits (the CLI prints shortest float32 text)');
  assert.deepEqual(errors, []);
});

test('Share / Embed gives a link and snippets for the lesson the author picks', async () => {
  const { page, errors } = await openPage(browser.context, server.url);
  await page.getByTestId('tokens-input').fill("it's <b>the</b> \"cat\"");
  await page.waitForFunction(() => window.playground.state().text.endsWith('"cat"'));
  await page.getByTestId('share-open').click();
  const dialog = page.getByTestId('share-dialog');
  await dialog.waitFor();
  await dialog.locator('#share-hide input[value="seed"]').check();
  await dialog.locator('#share-hide input[value="module"]').check();
  const steps = await dialog.locator('#share-steps input').evaluateAll((els) => els.map((e) => e.value));
  assert.ok(steps.includes('attn_weights'), steps.join());
  for (const name of steps) if (name !== 'attn_scores' && name !== 'attn_weights') await dialog.locator(`#share-steps input[value="${name}"]`).uncheck();
  const link = await page.getByTestId('share-link').inputValue();
  const element = await page.getByTestId('share-element').inputValue();
  const iframe = await page.getByTestId('share-iframe').inputValue();
  assert.match(link, /hide=seed%2Cmodule|hide=module%2Cseed/);
  assert.match(link, /steps=attn_scores%2Cattn_weights/);
  assert.match(element, /^<script type="module" src="http:[^"]+\/attention-playground\.js"><\/script>\n<attention-playground [^>]*steps='attn_scores,attn_weights'[^>]*><\/attention-playground>$/);
  // Quoted so the text survives as text: the snippet's attribute reads back as the typed sentence.
  const attrText = await page.evaluate((html) => {
    const t = document.createElement('template');
    t.innerHTML = html;
    return t.content.querySelector('attention-playground').getAttribute('text');
  }, element);
  assert.equal(attrText, "it's <b>the</b> \"cat\"");
  assert.match(element, /text="it's &lt;b&gt;the&lt;\/b&gt; &quot;cat&quot;"/);
  assert.match(iframe, /^<iframe src="[^"]+&amp;embed=1&amp;[^"]+" title="Attention Playground"/);
  // The page itself is unchanged until the link is opened.
  await dialog.locator('#share-close').click();
  assert.equal(await page.locator('[data-control="seed"]').isVisible(), true);

  const { page: lesson } = await openPage(browser.context, link);
  await lesson.locator('[data-testid="step"][data-step="attn_weights"]').waitFor();
  const visible = await lesson.locator('[data-testid="step"]:visible').evaluateAll((els) => els.map((e) => e.dataset.step));
  assert.deepEqual(visible, ['attn_scores', 'attn_weights']);
  assert.equal(await lesson.getByTestId('tokens-input').inputValue(), "it's <b>the</b> \"cat\"");
  assert.equal(await lesson.locator('[data-control="seed"]').isVisible(), false);
  assert.equal(await lesson.locator('[data-control="module"]').isVisible(), false);
  assert.deepEqual(errors, []);
});
