// Browser test harness: serves web/ with Vite (as `npm start` does) and drives one engine headless
// with playwright-core: Debian's Chromium over CDP (WebGPU on SwiftShader), or
// Debian's firefox-esr over WebDriver BiDi (Playwright's moz-firefox channel). BROWSER=chromium|firefox
// picks it (default chromium); scripts/run-tests.mjs runs the browser suites once per engine. Suites
// import `test` from here so every test's name ends with its engine, e.g. "... [firefox]".
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as nodeTest } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { chromium, firefox } from 'playwright-core';
import { createServer } from 'vite';
import { hasRelaxedSimd } from '../../bindings/attention.mjs';

// Both engines validate relaxed SIMD, so the page runs attention-relaxed.wasm (bindings/attention.mjs);
// suites that check the page against a core of their own in Node (loadAttention() here) compare bit
// for bit, so Node's V8 must load that build too: Node 20 validates relaxed SIMD behind this flag,
// which V8 reads when it validates a module, i.e. after this line (bindings/cli.mjs does the same).
if (!hasRelaxedSimd()) setFlagsFromString('--experimental-wasm-relaxed-simd');

export const ENGINES = ['chromium', 'firefox'];
export const engine = process.env.BROWSER ?? 'chromium';
if (!ENGINES.includes(engine)) {
  throw new Error(`BROWSER (${engine}) must be one of ${ENGINES.join(', ')}: one engine per run (scripts/run-tests.mjs browser runs both)`);
}

// node:test's test, named with the engine so a report from either run says where a test ran.
export function test(name, ...rest) { return nodeTest(`${name} [${engine}]`, ...rest); }

// A test's options when it needs one engine's API: the other engine reports it skipped, with why.
export function only(wanted, why) { return engine === wanted ? {} : { skip: `${wanted} only: ${why}` }; }

// npm test's Firefox pass must fit CI's budget beside Chromium's (scripts/run-tests.mjs): a case
// that repeats, in Firefox, what another case there already covers is marked heavy and reported
// skipped with why; BROWSER_FULL=1 runs it. A suite's counts may shrink the same way (soak.test.mjs).
export const full = engine === 'chromium' || process.env.BROWSER_FULL === '1';
export function heavy(why) { return full ? {} : { skip: `heavy, trimmed from npm test's Firefox pass (BROWSER_FULL=1 runs it): ${why}` }; }

export const chromiumArgs = [
  '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu', '--enable-features=Vulkan',
  '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader',
];

// isolated: the Cross-Origin-Opener-Policy and -Embedder-Policy headers npm start sends (the page
// then runs the threaded build); by default they are sent as their defaults, as a course page's host
// does, so the suites see the single-thread build (threads.test.mjs opens the page both ways).
// middleware: a connect handler (req, res, next) run before Vite's own (a suite's extra routes).
// Each server bundles the page's npm dependencies into a folder of its own: Vite's default,
// node_modules/.vite, is shared, and a server whose plugins differ (a suite's routes) finds it made
// under another configuration, deletes it and bundles again, under the feet of a server still
// serving from it (two start at once in models.test.mjs and threads.test.mjs).
export async function startServer({ isolated = false, middleware = null } = {}) {
  const headers = isolated ? {} : { 'Cross-Origin-Opener-Policy': 'unsafe-none', 'Cross-Origin-Embedder-Policy': 'unsafe-none' };
  const cacheDir = mkdtempSync(join(tmpdir(), 'attn-vite-'));
  const server = await createServer({
    configFile: new URL('../../web/vite.config.mjs', import.meta.url).pathname,
    cacheDir,
    plugins: middleware ? [{ name: 'suite-routes', configureServer: (s) => { s.middlewares.use(middleware); } }] : [],
    server: { port: 0, strictPort: false, hmr: false, headers },
    logLevel: 'error',
  });
  await server.listen();
  const { port } = server.httpServer.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => server.close().finally(() => rmSync(cacheDir, { recursive: true, force: true })) };
}

// Firefox 153 ESR speaks an older WebDriver BiDi than playwright-core 1.65 expects. Two gaps are
// bridged on Playwright's socket to the browser; every other message passes unchanged, and a Firefox
// that has what is missing answers for itself:
// 1. emulation.setMediaFeaturesOverride (prefers-color-scheme, sent for every context and page; no
//    suite emulates a colour scheme) is an unknown command: its error becomes an empty success, so
//    page.emulateMedia does nothing in Firefox (a11y.test.mjs's reduced-motion test sets Firefox's
//    ui.prefersReducedMotion pref instead).
// 2. browsingContext.downloadWillBegin / downloadEnd carry no `download` id (and navigation null for
//    a blob: link), so Playwright dropped them and page.waitForEvent('download') never fired: each
//    download gets an id, and its end the same one (matched by url).
function bridgeFirefoxBidi() {
  const { ws: WebSocket } = createRequire(import.meta.url)('playwright-core/lib/utilsBundle');
  if (WebSocket.prototype.emit.firefoxBridge) return;
  const pending = new Set();
  const downloads = new Map();  // url -> id of the download in progress
  let count = 0;
  const { send, emit } = WebSocket.prototype;
  WebSocket.prototype.send = function (data, ...rest) {
    if (typeof data === 'string' && data.includes('"emulation.setMediaFeaturesOverride"')) pending.add(JSON.parse(data).id);
    return send.call(this, data, ...rest);
  };
  const rewrite = (text) => {
    if (pending.size > 0 && text.includes('"unknown command"')) {
      const m = JSON.parse(text);
      if (pending.delete(m.id)) return { type: 'success', id: m.id, result: {} };
    }
    if (text.includes('"browsingContext.download')) {
      const m = JSON.parse(text);
      const p = m.params;
      if (m.type !== 'event' || p.download || p.navigation) return null;
      if (m.method === 'browsingContext.downloadWillBegin') downloads.set(p.url, `firefox-download-${++count}`);
      const id = downloads.get(p.url);
      if (m.method === 'browsingContext.downloadEnd') downloads.delete(p.url);
      return id ? { ...m, params: { ...p, download: id } } : null;
    }
    return null;
  };
  WebSocket.prototype.emit = function (event, data, ...rest) {
    const changed = event === 'message' && data.length < 4096 && rewrite(String(data));  // both kinds are short
    return emit.call(this, event, changed ? Buffer.from(JSON.stringify(changed)) : data, ...rest);
  };
  WebSocket.prototype.emit.firefoxBridge = true;
}

// The in-process server object behind a playwright-core page (its connection's toImpl), where the
// two Firefox helpers below reach what the public API does not give.
function serverPage(page, what) {
  const server = page._connection?.toImpl?.(page);
  if (!server) throw new Error(`playwright-core changed: no server object behind the page to ${what}`);
  return server;
}

// 3. playwright-core's BiDi touchscreen sends nothing (its tap() is empty), so page.tap() and
//    touchscreen.tap() did nothing in Firefox. A tap is BiDi's input.performActions with a touch
//    pointer (down and up at one point), which Firefox has: the raw touchscreen's tap sends that.
//    Its class is reached through the page's server object (serverPage).
function bridgeFirefoxTouch(page) {
  const raw = serverPage(page, 'send Firefox taps through').touchscreen?._raw;
  if (!raw) throw new Error('playwright-core changed: no raw touchscreen behind the page to send Firefox taps through');
  const proto = Object.getPrototypeOf(raw);
  if (proto.tap.firefoxBridge) return;
  proto.tap = async function (progress, x, y) {
    const at = { x: Math.round(x), y: Math.round(y) };
    await progress.race(this._session.send('input.performActions', {
      context: this._session.sessionId,
      actions: [{ type: 'pointer', id: 'pw_touch', parameters: { pointerType: 'touch' },
        actions: [{ type: 'pointerMove', ...at }, { type: 'pointerDown', button: 0 }, { type: 'pointerUp', button: 0 }] }],
    }));
  };
  proto.tap.firefoxBridge = true;
}

// A full garbage collection of a Firefox page, as Chromium's CDP HeapProfiler.collectGarbage: the
// browser, launched with `firefoxGcOptions`, asks its content processes to collect (what
// about:memory's GC and CC buttons send: child-gc-request, child-cc-request, then a GC again),
// from its own window through WebDriver BiDi's chrome scope. Resolves once the page's
// SpiderMonkey has counted a major GC after each GC request (performance.mozMemory,
// dom.enable_memory_stats).
export const firefoxGcOptions = { args: ['--remote-allow-system-access'], firefoxUserPrefs: { 'dom.enable_memory_stats': true } };
export async function firefoxCollectGarbage(page) {
  const session = serverPage(page, 'ask Firefox for a GC').delegate?._browserContext?._browser?._browserSession;
  if (!session) throw new Error('playwright-core changed: no WebDriver BiDi browser session behind the page to ask Firefox for a GC');
  const { contexts } = await session.send('browsingContext.getTree', { 'moz:scope': 'chrome' });
  const window = contexts.find((c) => c.url === 'chrome://browser/content/browser.xhtml');
  if (!window) throw new Error(`no Firefox browser window among the chrome contexts (${contexts.map((c) => c.url).join(', ')}): launch with firefoxGcOptions`);
  for (const topic of ['child-gc-request', 'child-cc-request', 'child-gc-request']) {
    const n = await page.evaluate(() => performance.mozMemory.gc.majorGCCount);
    await session.send('script.evaluate', { expression: `Services.obs.notifyObservers(null, '${topic}')`, target: { context: window.context }, awaitPromise: false });
    if (topic === 'child-gc-request') await page.waitForFunction((n) => performance.mozMemory.gc.majorGCCount > n, n, { polling: 50, timeout: 30000 });
  }
}

const engines = {
  chromium: () => ({ type: chromium, options: { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: chromiumArgs } }),
  firefox: () => {
    bridgeFirefoxBidi();
    // WebGPU is behind a pref in Firefox 153 ESR on Linux, as behind flags in Chromium: on, with
    // Mesa's lavapipe (mesa-vulkan-drivers, a CPU Vulkan) as its adapter when no GPU is there.
    // Firefox opens its downloads panel at each download, and the panel takes the keyboard focus
    // from the page (document.hasFocus() false after an export is saved with Enter; the next Tab
    // then moves an unfocused page's focus, shown by no ring): the page cannot keep it, and a student
    // returns with Esc, which BiDi's key input (sent to the page) cannot press in the browser's own
    // UI. So the panel stays closed, as Chromium's download bubble does headless (a11y.test.mjs).
    return { type: firefox, options: { channel: 'moz-firefox', executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
      firefoxUserPrefs: { 'dom.webgpu.enabled': true, 'gfx.webgpu.ignore-blocklist': true, 'browser.download.alwaysOpenPanel': false } } };
  },
};

function engineOf(name) {
  if (!engines[name]) throw new Error(`engine (${name}) must be one of ${ENGINES.join(', ')}`);
  return engines[name]();
}

// A browser of the selected engine (a11y.test.mjs launches one without a persistent profile);
// options.engine picks another one for this browser (the bench runs its WASM table in both).
// options.firefoxUserPrefs are added to the engine's own (a11y.test.mjs: ui.prefersReducedMotion).
export async function launchBrowser({ engine: name = engine, ...options } = {}) {
  const { type, options: base } = engineOf(name);
  const prefs = name === 'firefox' ? { firefoxUserPrefs: { ...base.firefoxUserPrefs, ...options.firefoxUserPrefs } } : {};
  return type.launch({ ...base, headless: true, ...options, ...prefs });
}

// options.locale: the browser's language (navigator.languages), e.g. 'zh-CN'; default en-US.
// options.engine: 'chromium' or 'firefox' instead of BROWSER's (scripts/measure-redraw.mjs, the bench).
// Other options go to the context as they are (a phone: {viewport, hasTouch: true, isMobile: true}).
// options.fineTimers: Firefox's performance.now() without its 1 ms rounding (privacy.reduceTimerPrecision
// off), for the measuring scripts (measure-redraw, the bench); Chromium's is fine already.
export async function launch({ engine: name = engine, locale, fineTimers = false, ...options } = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), `attn-${name}-`));
  const { type, options: base } = engineOf(name);
  const prefs = { ...base.firefoxUserPrefs, ...(fineTimers ? { 'privacy.reduceTimerPrecision': false } : {}), ...options.firefoxUserPrefs };
  const context = await type.launchPersistentContext(userDataDir, {
    ...base,
    headless: true,
    ...(locale ? { locale } : {}),
    ...options,
    ...(name === 'firefox' ? { firefoxUserPrefs: prefs } : {}),
  });
  if (name === 'firefox' && options.hasTouch) {
    context.on('page', bridgeFirefoxTouch);
    context.pages().forEach(bridgeFirefoxTouch);
  }
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

// Types `text` into a field as a student does: select all, type, Enter. Firefox fires `change` on
// Enter only after typed input, never after locator.fill()'s programmatic value (Chromium does both).
export async function typeAndEnter(locator, text) {
  await locator.click();
  await locator.press('ControlOrMeta+a');
  await locator.pressSequentially(text);
  await locator.press('Enter');
}

// The options of the visible selects under `root` that would not show whole in the closed select:
// each option against a select of the same font, padding and border left at its own width (the
// width the engine gives an option and its arrow) -> ["id: text needs N px of M"].
export function cutSelects(page, root) {
  return page.evaluate((sel) => [...document.querySelectorAll(`${sel} select`)].filter((s) => s.offsetParent).flatMap((s) => {
    const cs = getComputedStyle(s), probe = document.createElement('select');
    probe.style.cssText = `font: ${cs.font}; padding: ${cs.padding}; border: ${cs.border}; box-sizing: ${cs.boxSizing}; width: auto; min-width: 0; max-width: none; position: absolute; visibility: hidden`;
    probe.append(document.createElement('option'));
    document.body.append(probe);
    const cut = [...s.options].map((o) => {
      probe.options[0].textContent = o.textContent;
      const need = probe.getBoundingClientRect().width, room = s.getBoundingClientRect().width;
      return need > room + 0.5 ? `${s.id}: ${o.textContent} needs ${need.toFixed(0)} px of ${room.toFixed(0)}` : null;
    });
    probe.remove();
    return cut.filter(Boolean);
  }), root);
}

// A page with console errors and page errors collected, ready after the core loaded.
export async function openPage(context, url) {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  return { page, errors };
}
