// Step cards are painted when they scroll into view (web/views/lazy.js), but take their room from
// the start (heatmap.js reserve): painting a card never moves what is below it, so a click aimed
// at a button further down lands on it (in loaded CI runs a Code button click right after load
// was sometimes lost when an earlier card grew under the pointer).
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { launch, openPage, startServer, test } from './harness.mjs';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

// Every step card's top and height, in page coordinates.
const boxes = (page) => page.evaluate(() => [...document.querySelectorAll('[data-testid="step"]')].map((el) => {
  const r = el.getBoundingClientRect();
  return { step: el.dataset.step, top: Math.round(r.top + window.scrollY), height: Math.round(r.height) };
}));

for (const [name, hash] of [['the default view', ''], ['ModernAttention with RoPE and gradients', '#module=ModernAttention&grads=1&config=%7B%22ModernAttention%22%3A%7B%22d_model%22%3A16%2C%22num_heads%22%3A4%2C%22rope%22%3Atrue%7D%7D']]) {
  test(`painting the step cards as they scroll into view moves none of them: ${name}`, async () => {
    const { page, errors } = await openPage(browser.context, `${server.url}${hash}`);
    await page.setViewportSize({ width: 1280, height: 700 });
    await page.waitForFunction(() => window.playground.result()?.steps?.length > 0);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const before = await boxes(page);
    const painted = () => page.evaluate(() => [...document.querySelectorAll('[data-testid="step"] .step-maps canvas')].filter((c) => !/once scrolled into view/.test(c.getAttribute('aria-label') ?? '')).length);
    const paintedBefore = await painted();
    // Scroll down card by card: each comes into view and is painted.
    for (const { step } of before) {
      await page.locator(`[data-testid="step"][data-step="${step}"]`).scrollIntoViewIfNeeded();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    }
    assert.ok(await painted() > paintedBefore, 'scrolling painted cards that were off screen');
    assert.deepEqual(await boxes(page), before);
    assert.deepEqual(errors, []);
    await page.close();
  });
}
