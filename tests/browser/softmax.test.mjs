// The page in headless Chromium: loads the WASM core, shows the softmax of typed numbers,
// shows a clear message for bad input and recovers.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { launch, openPage, startServer, test } from './harness.mjs';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

test('typing numbers renders their softmax computed by the WASM core', async () => {
  const { page, errors } = await openPage(browser.context, server.url);
  const input = page.getByTestId('numbers-input');
  await input.fill('');
  await input.pressSequentially('1 2 3 4', { delay: 10 });
  const rows = page.getByTestId('softmax-row');
  await assert.doesNotReject(rows.nth(3).waitFor());
  assert.equal(await rows.count(), 4);
  const shown = await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.children[1].textContent)));
  const e = [1, 2, 3, 4].map(Math.exp), s = e.reduce((a, b) => a + b);
  shown.forEach((v, i) => assert.ok(Math.abs(v - e[i] / s) < 1e-6, `row ${i}: ${v}`));
  const result = await page.evaluate(() => window.playground.result());
  assert.equal(result.module, 'softmax');
  assert.match(await page.getByTestId('softmax-sum').textContent(), /1\.000000/);
  assert.deepEqual(errors, []);
});

test('a bad number shows an inline error naming it, and the page recovers', async () => {
  const { page } = await openPage(browser.context, server.url);
  const input = page.getByTestId('numbers-input');
  await input.fill('1 two 3');
  const error = page.getByTestId('error');
  await error.waitFor({ state: 'visible' });
  assert.match(await error.textContent(), /"two" \(item 2\) is not a finite number/);
  await input.fill('0 0');
  await error.waitFor({ state: 'hidden' });
  const shown = await page.getByTestId('softmax-row').evaluateAll((trs) => trs.map((tr) => tr.children[1].textContent));
  assert.deepEqual(shown, ['0.500000', '0.500000']);
});
