// Keystroke-to-redraw time of the default scenario in headless Chromium or, with --browser firefox,
// Debian's firefox-esr over WebDriver BiDi (playwright-core and Vite as in tests/browser/harness.mjs).
// Types a sentence (at most 16 tokens) character by character and erases it again, >= 200
// keystrokes, and prints the median, p95, p99 and max of
//   redraw: keydown event -> the page's input handler has recomputed and redrawn everything
//   frame:  keydown event -> the next frame after it has been produced (includes style/layout/paint)
// twice: typing from the moment the page is ready (data-ready), while the WebGPU start-up may
// still run (adapter, device, shader compiles: on SwiftShader the GPU process compiles for
// seconds on the same CPU cores), then again once it is done (data-backend-ready) and the first
// check has run: the typing a reader does after start-up. --phase ready|started picks one.
// With --at steps the page is scrolled to the step cards first, so their heatmaps repaint too
// (cards off screen only update their text until scrolled into view). Firefox runs with its timer
// rounding off (harness.mjs fineTimers): by default its performance.now() moves in 1 ms steps.
// --layouts (Chromium) also prints the layouts and style recalculations per keystroke (CDP
// Performance.getMetrics: LayoutCount, RecalcStyleCount and their durations, over all keystrokes).
// --hash sets the page state, e.g. --hash 'backend=wasm' (WebGPU comparisons off) or
// --hash 'module=Transformer&config={"Transformer":{"emb_dim":64,"num_heads":4,"num_layers":2}}'.
// --isolated serves the page with the cross-origin isolation headers: it runs the threaded build.
//   node scripts/measure-redraw.mjs [--browser chromium|firefox] [--keys 240] [--at steps] [--hash STATE] [--layouts] [--phase ready|started] [--isolated]
import { launch, openPage, startServer } from '../tests/browser/harness.mjs';

const args = process.argv.slice(2);
const keysWanted = Number(args.includes('--keys') ? args[args.indexOf('--keys') + 1] : 0) || 240;
const at = args.includes('--at') ? args[args.indexOf('--at') + 1] : 'top';
const hash = args.includes('--hash') ? `#${args[args.indexOf('--hash') + 1]}` : '';
const engine = args.includes('--browser') ? args[args.indexOf('--browser') + 1] : 'chromium';
const layouts = args.includes('--layouts');
const phases = args.includes('--phase') ? [args[args.indexOf('--phase') + 1]] : ['ready', 'started'];
if (!phases.every((p) => p === 'ready' || p === 'started')) throw new Error(`--phase must be ready or started, not ${phases[0]}`);
if (layouts && engine !== 'chromium') throw new Error(`--layouts needs Chromium (CDP Performance.getMetrics); --browser is ${engine}`);
const sentence = "the animal didn't cross the street because it was too tired";

const server = await startServer({ isolated: args.includes('--isolated') });
const browser = await launch({ engine, fineTimers: true });
try {
  const { page, errors } = await openPage(browser.context, `${server.url}${hash}`);
  await page.setViewportSize({ width: 1366, height: 900 });
  const scenario = await page.evaluate(() => {
    const p = window.playground.plan();
    return { module: p.module, config: p.config };
  });
  const input = page.getByTestId('tokens-input');
  await input.fill('');
  await input.focus();
  if (at === 'steps') await page.evaluate(() => document.querySelector('[data-step="attn_scores"]').scrollIntoView({ block: 'start' }));
  // Listeners added after the page's own run after it: the input listener marks the end of the
  // page's synchronous recompute + redraw; a frame later marks when the result was painted.
  await page.evaluate(() => {
    const el = document.querySelector('[data-testid="tokens-input"]');
    const m = { start: 0, redraw: [], frame: [], pending: null };
    window.__measure = m;
    el.addEventListener('keydown', (e) => { m.start = e.timeStamp; }, true);
    el.addEventListener('input', () => {
      const start = m.start;
      m.redraw.push(performance.now() - start);
      m.pending = new Promise((resolve) => {
        requestAnimationFrame(() => setTimeout(() => { m.frame.push(performance.now() - start); resolve(); }, 0));
      });
    });
  });

  const keys = [];
  while (keys.length < keysWanted) {
    for (const ch of sentence) keys.push(ch);
    for (let i = 0; i < sentence.length; i++) keys.push('Backspace');
  }
  keys.length = Math.max(keysWanted, 200);
  const cdp = layouts ? await page.context().newCDPSession(page) : null;
  const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  if (cdp) await cdp.send('Performance.enable');
  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
    return { n: s.length, median: q(0.5), p95: q(0.95), p99: q(0.99), max: s.at(-1) };
  };
  console.log(`browser: ${engine}, ${await page.evaluate(() => navigator.userAgent)}; core: ${await page.evaluate(() => document.getElementById('threads').textContent)}`);
  for (const phase of phases) {
    let waited = '';
    if (phase === 'started') {
      const t0 = Date.now();
      await page.waitForSelector('body[data-backend-ready="true"]', { timeout: 120000 });
      await page.waitForFunction(() => window.playground.backend.idle(), null, { timeout: 120000 });
      waited = `, after waiting ${Date.now() - t0} ms for the WebGPU start-up (${await page.evaluate(() => document.querySelector('[data-testid="backend"]')?.textContent ?? '?')})`;
    }
    await page.evaluate(() => { window.__measure.redraw = []; window.__measure.frame = []; });
    const before = cdp ? await metrics() : null;
    let maxTokens = 0;
    for (const key of keys) {
      await page.keyboard.press(key);
      await page.evaluate(() => window.__measure.pending);
      maxTokens = Math.max(maxTokens, await page.evaluate(() => document.querySelectorAll('#chips1 [data-testid="token"]').length));
    }
    const after = cdp ? await metrics() : null;
    const { redraw, frame } = await page.evaluate(() => ({ redraw: window.__measure.redraw, frame: window.__measure.frame }));
    const r = stats(redraw), f = stats(frame);
    console.log(`\n${phase === 'ready' ? 'typing from page ready' : 'typing after start-up'}: ${scenario.module} ${JSON.stringify(scenario.config)}, up to ${maxTokens} tokens, ${keys.length} keystrokes, view at ${at}${waited}`);
    console.log(`redraw (keydown -> recomputed and redrawn): median ${r.median.toFixed(2)} ms, p95 ${r.p95.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(2)} ms (n=${r.n})`);
    console.log(`frame  (keydown -> next frame produced):   median ${f.median.toFixed(2)} ms, p95 ${f.p95.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms, max ${f.max.toFixed(2)} ms (n=${f.n})`);
    if (cdp) {
      const per = (name, scale = 1) => ((after[name] - before[name]) * scale / keys.length);
      console.log(`layouts per keystroke: ${per('LayoutCount').toFixed(2)} (${per('LayoutDuration', 1000).toFixed(2)} ms), style recalcs ${per('RecalcStyleCount').toFixed(2)} (${per('RecalcStyleDuration', 1000).toFixed(2)} ms)`);
    }
  }
  if (errors.length) console.log(`page errors:\n${errors.join('\n')}`);
} finally {
  await browser.close();
  await server.close();
}
