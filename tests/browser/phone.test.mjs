// Phones (issue 23): at 360×780 and 390×844 with touch, the sentence input and the top of the
// attention heatmap share the first screen, typing redraws the heatmap on screen, the input
// stays on screen while scrolling, a tapped cell names its value and tokens, the settings panel
// (backend, presets, module, sharing) opens by touch and by keyboard and lives in the link, the
// controls left on screen are at least 44 × 44 px, nothing scrolls sideways, pinch-zoom is
// allowed; the embedded element in a narrow container and training mode do the same; a laptop
// keeps its layout.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { heavy, launch, openPage, startServer, test } from './harness.mjs';

const PHONES = [{ width: 360, height: 780 }, { width: 390, height: 844 }];
// Firefox's pass: the narrower phone's cases run, the wider one's repeat them (harness.mjs heavy())
const wider = (viewport) => (viewport === PHONES[0] ? {} : heavy(`${viewport.width}×${viewport.height} repeats ${PHONES[0].width}×${PHONES[0].height}'s case, which runs`));
const phone = (viewport) => ({ viewport, hasTouch: true, isMobile: true, deviceScaleFactor: 2 });

let server;
const browsers = [];
before(async () => { server = await startServer(); });
after(async () => {
  for (const b of browsers) await b.close();
  await server?.close();
});
async function phoneBrowser(viewport) {
  const b = await launch(phone(viewport));
  browsers.push(b);
  return b;
}

// Document-relative tops (px) of the input, the heatmap, its canvas and the first step card.
const positions = (page) => page.evaluate(() => {
  const top = (sel) => Math.round(document.querySelector(sel).getBoundingClientRect().top + window.scrollY);
  return {
    input: top('[data-testid="tokens-input"]'), heatmap: top('[data-testid="attention-heatmap"]'),
    canvas: top('[data-testid="attention-heatmap"] canvas'), step: top('[data-testid="step"]'),
    height: document.documentElement.scrollHeight,
  };
});
const sideways = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
const chips = (page) => page.locator('#chips1 [data-testid="token"] .chip-text').allTextContents();

// Every rendered control outside `skip` smaller than 44 × 44 px (a checkbox or radio counts its
// label): [{what, w, h}].
const smallTargets = (page, skip = '#settings-panel') => page.evaluate((skipSel) => {
  const small = [];
  for (const el of document.querySelectorAll('button, select, input, summary, a[href], textarea')) {
    if (el.closest(skipSel) || el.closest('dialog') || el.closest('.skip') || el.classList.contains('skip') || el.type === 'hidden') continue;
    if (el.getClientRects().length === 0 || el.closest('[hidden]')) continue;
    const target = el.type === 'checkbox' || el.type === 'radio' ? (el.closest('label') ?? el.closest('.field') ?? el) : el;
    const r = target.getBoundingClientRect();
    if (r.width < 44 || r.height < 44) small.push({ what: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} ${(el.textContent || el.getAttribute('aria-label') || el.type || '').trim().slice(0, 30)}`, w: Math.round(r.width), h: Math.round(r.height) });
  }
  return small;
}, skip);

for (const viewport of PHONES) {
  const size = `${viewport.width}×${viewport.height}`;

  test(`at ${size} the input and the heatmap share the first screen; typing redraws the heatmap on screen; a tap reads a cell`, wider(viewport), async () => {
    const browser = await phoneBrowser(viewport);
    const { page, errors } = await openPage(browser.context, server.url);
    const meta = await page.locator('meta[name="viewport"]').getAttribute('content');
    assert.doesNotMatch(meta, /user-scalable\s*=\s*(no|0)|maximum-scale\s*=\s*1(\.0*)?\b/, 'pinch-zoom must not be blocked');
    const at = await positions(page);
    assert.ok(at.input >= 0 && at.input + 44 <= viewport.height, `input at ${at.input}`);
    assert.ok(at.canvas + 60 <= viewport.height, `heatmap canvas at ${at.canvas}: its top must be on the first screen (${viewport.height} px)`);
    assert.equal(await sideways(page), 0);

    const canvas = page.locator('[data-testid="attention-heatmap"] canvas');
    const before = await canvas.evaluate((c) => c.toDataURL());
    await page.getByTestId('tokens-input').tap();
    await page.keyboard.press('End');
    await page.keyboard.type(' again', { delay: 5 });
    await page.waitForFunction(() => document.querySelectorAll('#chips1 [data-testid="token"]').length === 12);
    // The visible heatmap redraws with the new query row and key column.
    await page.waitForFunction((png) => document.querySelector('[data-testid="attention-heatmap"] canvas').toDataURL() !== png, before);
    assert.equal(await page.evaluate(() => window.playground.result().outputs.find((o) => o.name === 'attention_weights').shape.join('×')), '1×4×12×12');
    const box = await canvas.boundingBox();
    assert.ok(box.y >= 0 && box.y < viewport.height - 60, `the redrawn heatmap is on screen (y = ${box.y})`);

    // Tap a cell of the last row (the query "again"): its value and both tokens, as hover gives.
    await page.locator('[data-testid="attention-heatmap"] .canvas-clip').scrollIntoViewIfNeeded();
    const clip = await page.locator('[data-testid="attention-heatmap"] .canvas-clip').boundingBox();
    await page.evaluate(() => addEventListener('pointerdown', (e) => { window.lastPointer = e.pointerType; }, { once: true, capture: true }));
    await page.touchscreen.tap(clip.x + clip.width * 0.55, clip.y + clip.height - 8);
    assert.equal(await page.evaluate(() => window.lastPointer), 'touch');  // a finger, not a mouse click
    const readout = page.locator('[data-testid="attention-heatmap"] .readout');
    await page.waitForFunction(() => /query “again” → key “.+”: /.test(document.querySelector('[data-testid="attention-heatmap"] .readout').textContent));
    assert.match(await readout.textContent(), /query “again” → key “[^”]+”: (0\.\d+|0|1\.0+)( \(masked\))?$/);
    assert.equal(await page.locator('.tooltip').textContent(), await readout.textContent());
    assert.ok(await page.locator('.tooltip').isVisible());

    // Scrolled down to the steps, the sentence bar stays at the top of the screen.
    await page.getByTestId('step').first().scrollIntoViewIfNeeded();
    await page.evaluate(() => window.scrollBy(0, 600));
    const input = await page.getByTestId('tokens-input').boundingBox();
    assert.ok(input.y >= 0 && input.y + input.height <= 200, `sticky input at y = ${input.y}`);
    assert.deepEqual(await smallTargets(page), []);
    assert.equal(await sideways(page), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`at ${size} the settings panel opens by touch, a preset picked there applies, and the link keeps the panel open`, wider(viewport), async () => {
    const browser = await phoneBrowser(viewport);
    const { page, errors } = await openPage(browser.context, server.url);
    const toggle = page.getByTestId('settings-toggle');
    const panel = page.getByTestId('settings-panel');
    assert.ok(await toggle.isVisible());
    assert.equal(await toggle.getAttribute('aria-controls'), 'settings-panel');
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await panel.isVisible(), false);
    // The header's sharing buttons wait in the panel on a phone.
    assert.equal(await page.locator('#settings-panel [data-testid="copy-link"]').count(), 1);
    const tb = await toggle.boundingBox();
    assert.ok(tb.width >= 44 && tb.height >= 44, `toggle ${tb.width}×${tb.height}`);

    await toggle.tap();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    assert.ok(await panel.isVisible());
    assert.ok(await page.getByRole('group', { name: 'Settings: presets, module, backend, sharing' }).isVisible());
    assert.match(await page.evaluate(() => window.playground.link()), /[#&]settings=1(&|$)/);
    assert.equal(await sideways(page), 0);
    assert.deepEqual(await smallTargets(page, 'dialog'), [], 'the open panel\'s controls are 44 px too');

    await page.locator('[data-preset="journey"]').tap();
    // the default sentence's page has a context_vec step too: wait for the preset's result (its
    // chips and steps are drawn in the same task as it is set), not for that step
    await page.waitForFunction(() => window.playground.result()?.module === 'SelfAttention_v1');
    assert.deepEqual(await chips(page), ['Your', 'journey', 'starts', 'with', 'one', 'step']);
    const out = await page.evaluate(() => window.playground.result());
    assert.equal(out.module, 'SelfAttention_v1');
    // Picking a preset closes the panel: the student sees the preset's attention at once.
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await panel.isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'settings-toggle');
    const at = await positions(page);
    assert.ok(at.canvas + 60 <= viewport.height, `heatmap canvas at ${at.canvas}`);
    assert.deepEqual(errors, []);
    await page.close();

    // A link with settings=1 opens with the panel open.
    const again = await openPage(browser.context, `${server.url}#settings=1&preset=journey`);
    assert.equal(await again.page.getByTestId('settings-toggle').getAttribute('aria-expanded'), 'true');
    assert.ok(await again.page.getByTestId('settings-panel').isVisible());
    assert.equal(await again.page.evaluate(() => window.playground.state().settings), true);
    await again.page.close();
  });
}

test('the settings panel works from the keyboard: Enter opens it, Escape closes it and gives the focus back', async () => {
  const browser = await phoneBrowser(PHONES[0]);
  const { page, errors } = await openPage(browser.context, server.url);
  await page.getByTestId('settings-toggle').focus();
  await page.keyboard.press('Enter');
  assert.equal(await page.getByTestId('settings-toggle').getAttribute('aria-expanded'), 'true');
  await page.keyboard.press('Tab');
  const inPanel = await page.evaluate(() => !!document.activeElement.closest('#config'));
  assert.ok(inPanel, 'Tab moves into the panel\'s column');
  await page.locator('[data-preset="journey"]').focus();
  await page.keyboard.press('Escape');
  assert.equal(await page.getByTestId('settings-toggle').getAttribute('aria-expanded'), 'false');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'settings-toggle');
  assert.equal(await page.evaluate(() => window.playground.state().settings), false);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the embedded <attention-playground> in a 360 px container takes the phone layout inside its frame', async () => {
  const browser = await launch({ viewport: { width: 1280, height: 900 } });
  browsers.push(browser);
  const page = await browser.context.newPage();
  await page.route('**/phone-lesson.html', (route) => route.fulfill({
    contentType: 'text/html',
    body: '<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"><script type="module" src="/attention-playground.js"></script></head>'
      + '<body><div id="box" style="width: 360px"><attention-playground preset="journey" height="780px"></attention-playground></div>'
      + '<div style="width: 1000px"><attention-playground id="wide" height="780px"></attention-playground></div></body></html>',
  }));
  await page.goto(`${server.url}phone-lesson.html`);
  const frameOf = async (sel) => {
    const handle = await page.locator(sel).elementHandle();
    await handle.scrollIntoViewIfNeeded();
    const frame = await (await handle.evaluateHandle((el) => el.shadowRoot.querySelector('iframe'))).asElement().contentFrame();
    await frame.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
    return frame;
  };
  const narrow = await frameOf('#box attention-playground');
  const inside = await narrow.evaluate(() => {
    const top = (sel) => Math.round(document.querySelector(sel).getBoundingClientRect().top + window.scrollY);
    return {
      width: document.documentElement.clientWidth, height: window.innerHeight,
      input: top('[data-testid="tokens-input"]'), canvas: top('[data-testid="attention-heatmap"] canvas'),
      toggle: document.querySelector('[data-testid="settings-toggle"]').getClientRects().length > 0,
      sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    };
  });
  assert.ok(inside.width <= 360, `frame width ${inside.width}`);
  assert.ok(inside.toggle, 'the Settings button is shown in the narrow frame');
  assert.ok(inside.input + 44 <= inside.height && inside.canvas + 60 <= inside.height, JSON.stringify(inside));
  assert.equal(inside.sideways, 0);
  // A wide container keeps the laptop layout: no Settings button, the panel beside the views.
  const wide = await frameOf('#wide');
  assert.equal(await wide.evaluate(() => document.querySelector('[data-testid="settings-toggle"]').getClientRects().length), 0);
  assert.ok(await wide.getByTestId('settings-panel').isVisible());
  await page.close();
});

test('training mode (#train=induction) at 360×780: no sideways scroll, 44 px buttons, training starts and pauses by touch', async () => {
  const browser = await phoneBrowser(PHONES[0]);
  const { page, errors } = await openPage(browser.context, `${server.url}#train=induction`);
  await page.locator('[data-testid="train-start"]:not([disabled])').waitFor();
  assert.equal(await sideways(page), 0);
  const small = (await smallTargets(page)).filter((s) => s.what);
  assert.deepEqual(small, []);
  await page.getByTestId('train-start').tap();
  await page.waitForFunction(() => (window.playground.training()?.step ?? 0) >= 5, null, { timeout: 60000 });
  await page.getByTestId('train-pause').tap();
  await page.waitForFunction(() => window.playground.training().running === false, null, { timeout: 30000 });
  const chart = await page.getByTestId('train-chart').boundingBox();
  assert.ok(chart.width <= 360 && chart.width > 200, `chart ${chart.width} px wide`);
  // its labels as large as the page's CSS says (11 px), not shrunk with a wider viewBox (6 px)
  const ticks = await page.locator('[data-testid="train-chart"] text.tick').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().height));
  assert.ok(ticks.length > 5 && Math.min(...ticks) >= 11, `the chart's labels ${ticks.map((h) => h.toFixed(1)).join(', ')} px tall`);
  assert.equal(await sideways(page), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a laptop keeps its layout: no Settings button, the panel and the sharing buttons where they were', async () => {
  const browser = await launch({ viewport: { width: 1366, height: 900 } });
  browsers.push(browser);
  const { page, errors } = await openPage(browser.context, `${server.url}#settings=0`);
  assert.equal(await page.getByTestId('settings-toggle').isVisible(), false);
  assert.ok(await page.getByTestId('settings-panel').isVisible());
  assert.equal(await page.locator('body > header [data-testid="copy-link"]').count(), 1);
  const [panel, content] = await Promise.all([page.locator('#config').boundingBox(), page.locator('.content').boundingBox()]);
  assert.ok(panel.x < content.x && panel.width === 340, `panel ${JSON.stringify(panel)} beside the views ${JSON.stringify(content)}`);
  assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('config')).position), 'sticky');
  assert.deepEqual(errors, []);
  await page.close();
});
