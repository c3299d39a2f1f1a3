// Accessibility (docs/accessibility.md): axe-core's WCAG 2.1 A/AA rules find no violation in any
// view state of the page (default, every preset, Chinese, the Share / Embed dialog, errors, the
// value tables open, the lesson page's embedded demos, training and generate modes); a keyboard-only student
// types a sentence, reaches the steps, reads a heatmap cell from the live region, switches head
// and language and saves an export, with focus visible at every stop; reduced motion turns the
// page's transitions off; at 200 % zoom and at 360 px the page does not scroll sideways
// (screenshots in build/a11y/). a11y.mjs runs axe.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before } from 'node:test';
import { audit } from './a11y.mjs';
import { engine, full, heavy, launchBrowser, startServer, test } from './harness.mjs';

const SHOTS = new URL('../../build/a11y/', import.meta.url).pathname;

// A plain (not persistent) browser: each test's context gets its own viewport, scale and media.
let server, browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

// A page in a fresh context, ready once the core has loaded (90 s: the suites share two cores with
// builds and benchmarks, and a page's first load then takes longer than openPage's 30 s).
async function open(hash = '', options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${server.url}${hash ? `#${hash}` : ''}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 90000 });
  return { page, errors, close: () => context.close() };
}

// Scrolls the page down and back so that every lazily drawn view (lazy.js) is painted and named.
async function scrollThrough(page) {
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  for (let y = 0; y < height; y += 600) {
    await page.evaluate((top) => window.scrollTo(0, top), y);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }
  await page.evaluate(() => window.scrollTo(0, 0));
}

// Every heatmap that is drawn has a name with its strongest cells and a table as long description.
async function checkHeatmapNames(page, label) {
  const names = await page.locator('.heatmap canvas[role="img"]').evaluateAll((els) => els.filter((e) => e.checkVisibility() && !e.closest('.thumb')).map((e) => ({
    name: e.getAttribute('aria-label'), details: document.getElementById(e.getAttribute('aria-details'))?.tagName,
  })));
  assert.ok(names.length > 0, label);
  for (const { name, details } of names) {
    assert.ok(name && name.length > 10, `${label}: ${name}`);
    assert.equal(details, 'DETAILS', `${label}: ${name} has its value table as long description`);
  }
}

test('axe finds no WCAG 2.1 AA violation: default view, value tables open, every preset, errors, Share / Embed',
  heavy('axe reads the same DOM in both engines: Firefox runs it on the default view, a preset and an error in Chinese, and on the lesson, training and generate views, below'), async () => {
  const { page, errors, close } = await open();
  await audit(page, 'the default view');
  await scrollThrough(page);
  await audit(page, 'the default view, every step drawn');
  await checkHeatmapNames(page, 'default');
  const name = await page.locator('[data-testid="attention-heatmap"] canvas').getAttribute('aria-label');
  assert.match(name, /^Attention weights attention_weights, head 0 of 4, 11 queries × 11 keys\. row “the”: most attention on “the” \(1\.00\); row “animal”: most attention on “\w+” \(0\.\d\d\)/);
  for (const summary of await page.locator('details.value-table > summary').all()) if (await summary.isVisible()) await summary.click();
  await audit(page, 'every value table open');
  // Closed again: the presets are audited as a student first meets them. The tables are one
  // component (value-table.js), audited open above; left open, each preset's step cards keep theirs
  // open and axe checked some 10^5 cells (the fortunes preset's audit took 12 s of this test's 72).
  await page.locator('details.value-table[open]').evaluateAll((els) => els.forEach((e) => { e.open = false; }));

  const presets = await page.locator('[data-preset]').evaluateAll((els) => els.map((e) => e.dataset.preset));
  assert.ok(presets.length >= 6, presets.join());
  for (const id of presets) {
    await page.locator(`[data-preset="${id}"]`).click();
    await page.waitForFunction(() => !document.body.classList.contains('stale'));
    await scrollThrough(page);
    await audit(page, `preset ${id}`);
  }

  // An invalid config: the core's message beside the control, the rest of the page stale.
  await page.locator('[data-preset="default"]').click();
  await page.getByTestId('arg-num_heads').fill('3');
  await page.getByTestId('arg-d_out').fill('10');
  await page.locator('[data-control="arg:num_heads"] [data-testid="error"]').waitFor();
  await audit(page, 'the error state');
  await page.getByTestId('arg-num_heads').fill('2');

  await page.getByTestId('share-open').click();
  await page.getByTestId('share-dialog').waitFor();
  await audit(page, 'the Share / Embed dialog');
  assert.deepEqual(errors, []);
  await close();
});

test('axe finds no violation in Chinese (the default view, a preset, a refused link), and names contain their visible labels', async () => {
  const { page, errors, close } = await open('lang=zh');
  await scrollThrough(page);
  await audit(page, 'lang=zh');
  const name = await page.locator('[data-testid="attention-heatmap"] canvas').getAttribute('aria-label');
  assert.match(name, /^注意力权重 attention_weights，第 0 个头（共 4 个），11 个查询 × 11 个键。“the”行：最多关注“the”（1\.00）；“animal”行：最多关注“\w+”（0\.\d\d）/);
  await page.locator('[data-preset="cross003"]').click();
  await page.waitForFunction(() => window.playground.result().module === 'SplitHeadsMultiHeadAttention');
  await scrollThrough(page);
  await audit(page, 'lang=zh, preset cross003');
  assert.deepEqual(errors, []);
  await close();
  const refused = await open('lang=zh&heads=nine');
  await refused.page.getByTestId('link-error').waitFor();
  await audit(refused.page, 'lang=zh with a refused link');
  await refused.close();
});

test('axe finds no violation in the lesson page, inside each embedded demo\'s shadow root and iframe', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${server.url}examples/lesson.html`);
  const demos = await page.locator('attention-playground').elementHandles();
  assert.ok(demos.length >= 4, `${demos.length} demos`);
  for (const demo of demos) {
    await demo.scrollIntoViewIfNeeded();
    const frame = await (await demo.evaluateHandle((el) => el.shadowRoot.querySelector('iframe'))).asElement().contentFrame();
    await frame.waitForSelector('body[data-ready="true"]', { timeout: 120000 });
  }
  await audit(page, 'the lesson page and its demos');
  await context.close();
});

test('axe finds no violation in training mode, before and after a step, in English and Chinese', async () => {
  for (const hash of ['train=induction', 'train=induction&lang=zh']) {
    const { page, errors, close } = await open(hash);
    await page.locator('[data-testid="train-start"]:not([disabled])').waitFor({ timeout: 90000 });
    await audit(page, `#${hash}`);
    await page.getByTestId('train-step').click();
    await page.waitForFunction(() => window.playground.training().step >= 1 && !window.playground.training().running, null, { timeout: 90000 });
    await page.locator('[data-testid="train-head"]').first().waitFor();
    await scrollThrough(page);
    await audit(page, `#${hash} after one step`);
    assert.match(await page.locator('[data-testid="train-head"] canvas').first().getAttribute('aria-label'), /“[^”]+”/);
    assert.deepEqual(errors, []);
    await close();
  }
});

test('axe finds no violation in generate mode, before and after three tokens, in English and Chinese', async () => {
  for (const hash of ['generate=1', 'generate=1&lang=zh']) {
    const { page, errors, close } = await open(hash);
    await page.locator('[data-testid="generate-step"]:not([disabled])').waitFor({ timeout: 90000 });
    // the shipped model's session has its prompt's forward (Step before the model arrives steps nothing)
    await page.waitForFunction(() => window.playground.generation() !== null, null, { timeout: 90000 });
    await audit(page, `#${hash}`);
    for (let i = 0; i < 3; i++) await page.getByTestId('generate-step').click();
    await page.waitForFunction(() => window.playground.generation().steps === 3 && !window.playground.generation().running, null, { timeout: 90000 });
    await scrollThrough(page);
    await audit(page, `#${hash} after three tokens`);
    assert.deepEqual(errors, []);
    await close();
  }
});

// document.activeElement has a visible focus indicator: its own outline, or (a heatmap's canvas)
// the outline its .canvas-clip draws around it.
const focusShown = (page) => page.evaluate(() => {
  const el = document.activeElement;
  const shown = (e) => { const s = getComputedStyle(e); return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0; };
  const ring = el.closest('.canvas-clip') ?? el;
  return { ok: el !== document.body && (shown(el) || shown(ring)), what: `${el.tagName.toLowerCase()}#${el.id}.${el.className}` };
});

// Presses Tab (Shift+Tab with back) until the focused element matches `selector`, checking that
// each element on the way shows its focus. Returns how many stops it took.
async function tabTo(page, selector, { back = false, max = 250 } = {}) {
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const { ok, what } = await focusShown(page);
    assert.ok(ok, `focus is not visible on ${what}`);
    if (await page.evaluate((s) => document.activeElement.matches(s), selector)) return i;
  }
  throw new Error(`${selector} not reached with ${max} presses of Tab`);
}

test('keyboard only: type a sentence, reach the steps, read a cell aloud, switch head and language, save an export', async () => {
  const { page, errors, close } = await open();
  // The skip link first, then the sentence box.
  await tabTo(page, 'a.skip', { max: 1 });
  await tabTo(page, '#tokens');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('the animal did not cross the street because it was tired', { delay: 5 });
  await page.waitForFunction(() => window.playground.state().text.endsWith('tired'));
  await page.waitForFunction(() => window.playground.result().outputs[0].shape[1] === 11);

  // The attention heatmap: focus reads the first cell, arrow keys move; the live region says it.
  await tabTo(page, '[data-testid="attention-heatmap"] canvas');
  const readout = page.locator('[data-testid="attention-heatmap"] .readout');
  assert.equal(await readout.getAttribute('aria-live'), 'polite');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  const w = await page.evaluate(() => window.playground.result().steps.find((s) => s.name === 'attn_weights').data[11 + 1]);
  assert.equal(await readout.textContent(), `query “animal” → key “animal”: ${w.toFixed(4)}`);
  assert.match(await page.locator('[data-testid="attention-heatmap"] canvas').getAttribute('aria-label'), /row “it”: most attention on “\w+” \(0\.\d\d\)|more rows/);

  // Another head: its thumbnail button, pressed with Enter.
  await tabTo(page, '#attention .thumb[aria-label="Show head 2"]', { back: true });
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid="attention-heatmap"]').dataset.head === '2');
  assert.equal(await page.evaluate(() => window.playground.state().head), 2);

  // The attention view's export menu: open it with Enter, save the weights as JSON.
  await tabTo(page, '[data-testid="attention-export"] > summary');
  await page.keyboard.press('Enter');
  assert.equal(await page.getByTestId('attention-export').getAttribute('open'), '');
  await tabTo(page, '[data-testid="attention-export"] button[data-format="JSON"]');
  const [file] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
  assert.match(file.suggestedFilename(), /^attention_weights_b0_h2\.json$/);

  // Through the steps: a step card's Code button selects it (the code panel follows).
  const stops = await tabTo(page, '[data-step="attn_scores"] header button');
  assert.ok(stops < 120, `${stops} stops`);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-step="attn_scores"]').classList.contains('selected'));
  await tabTo(page, '[data-step="attn_scores"] canvas');
  await page.keyboard.press('ArrowRight');
  assert.match(await page.locator('[data-step="attn_scores"] .value .readout').textContent(), /^attn_scores\[0, \d, 0, 1\] = -?\d/);

  // The language: back to the switch at the top, arrow down to 简体中文.
  await tabTo(page, '#lang-select', { back: true });
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  assert.equal(await page.locator('#h-steps').textContent(), '计算步骤');
  await tabTo(page, '[data-testid="attention-heatmap"] canvas');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Home');
  assert.equal(await readout.textContent(), '查询“the”→ 键“the”：1.0000');
  await audit(page, 'the keyboard walkthrough\'s end, in Chinese');
  assert.deepEqual(errors, []);
  await close();
});

// Chromium emulates the media feature on the open page; Firefox 153's WebDriver BiDi has no
// emulation.setMediaFeaturesOverride, so there a second browser starts with the setting Firefox
// reads from the system (ui.prefersReducedMotion = 1), as a student's "reduce motion" gives it.
test('prefers-reduced-motion: reduce turns the page\'s transitions off', async () => {
  const duration = (page) => page.evaluate(() => {
    document.body.classList.add('stale');
    const d = getComputedStyle(document.querySelector('.content canvas')).transitionDuration;
    document.body.classList.remove('stale');
    return d;
  });
  const { page, close } = await open();
  assert.equal(await duration(page), '0.15s');
  assert.equal(await page.evaluate(() => matchMedia('(prefers-reduced-motion: reduce)').matches), false);
  if (engine === 'chromium') {
    await page.emulateMedia({ reducedMotion: 'reduce' });
    assert.equal(await duration(page), '0s');
    await close();
    return;
  }
  await close();
  const reduced = await launchBrowser({ firefoxUserPrefs: { 'ui.prefersReducedMotion': 1 } });
  try {
    const p = await (await reduced.newContext()).newPage();
    await p.goto(server.url);
    await p.waitForSelector('body[data-ready="true"]', { timeout: 90000 });
    assert.equal(await p.evaluate(() => matchMedia('(prefers-reduced-motion: reduce)').matches), true);
    assert.equal(await duration(p), '0s');
  } finally {
    await reduced.close();
  }
});

// No sideways scrolling of the page itself (a wide table or heatmap scrolls inside its own box).
const pageOverflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

test('at 200 % zoom (683 × 450 CSS px at scale 2) and at 360 px the page does not scroll sideways', async () => {
  mkdirSync(SHOTS, { recursive: true });
  // Firefox's pass: the zoom only (phone.test.mjs checks 360 px there, with touch)
  const sizes = [
    ['zoom-200', { viewport: { width: 683, height: 450 }, deviceScaleFactor: 2 }],
    ...(full ? [['width-360', { viewport: { width: 360, height: 740 } }]] : []),
  ];
  for (const [name, options] of sizes) {
    for (const hash of ['', 'lang=zh', 'preset=cross003', 'train=induction']) {
      const { page, errors, close } = await open(hash, options);
      await scrollThrough(page);
      assert.ok(await pageOverflow(page) <= 0, `${name} #${hash}: the page scrolls sideways by ${await pageOverflow(page)} px`);
      if (hash === '') {
        await audit(page, name);
        // Chromium's pictures only: in Firefox playwright-core's screenshot injects a <style>, which
        // the page's CSP refuses (a console error); the checks above run in both engines.
        if (engine === 'chromium') {
          await page.screenshot({ path: `${SHOTS}${name}.png` });
          await page.screenshot({ path: `${SHOTS}${name}-full.png`, fullPage: true });
        }
      }
      assert.deepEqual(errors, []);
      await close();
    }
  }
});
