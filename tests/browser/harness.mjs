// Browser test harness: serves web/ with Vite (as `npm start` does) and drives one engine headless
// with playwright-core: Debian's Chromium over CDP (WebGPU on SwiftShader, ../shared/TOOLCHAIN.md), or
// Debian's firefox-esr over WebDriver BiDi (Playwright's moz-firefox channel). BROWSER=chromium|firefox
// picks it (default chromium); scripts/run-tests.mjs runs the browser suites once per engine. Suites
// import `test` from here so every test's name ends with its engine, e.g. "... [firefox]".
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as nodeTest } from 'node:test';
import { chromium, firefox } from 'playwright-core';
import { createServer } from 'vite';

export const ENGINES = ['chromium', 'firefox'];
export const engine = process.env.BROWSER ?? 'chromium';
if (!ENGINES.includes(engine)) {
  throw new Error(`BROWSER (${engine}) must be one of ${ENGINES.join(', ')}: one engine per run (scripts/run-tests.mjs browser runs both)`);
}

// node:test's test, named with the engine so a report from either run says where a test ran.
export function test(name, ...rest) { return nodeTest(`${name} [${engine}]`, ...rest); }

// A test's options when it needs one engine's API: the other engine reports it skipped, with why.
export function only(wanted, why) { return engine === wanted ? {} : { skip: `${wanted} only: ${why}` }; }

export const chromiumArgs = [
  '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu', '--enable-features=Vulkan',
  '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader',
];

export async function startServer() {
  const server = await createServer({
    configFile: new URL('../../web/vite.config.mjs', import.meta.url).pathname,
    server: { port: 0, strictPort: false, hmr: false },
    logLevel: 'error',
  });
  await server.listen();
  const { port } = server.httpServer.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => server.close() };
}

// Firefox 153 ESR's WebDriver BiDi has no emulation.setMediaFeaturesOverride, which Playwright sends
// for every new context and page to set prefers-color-scheme (no suite emulates a colour scheme).
// Its "unknown command" error is turned into an empty success on Playwright's socket; every other
// command and answer passes unchanged, and an engine that knows the command answers it itself.
function tolerateMissingColorSchemeOverride() {
  const { ws: WebSocket } = createRequire(import.meta.url)('playwright-core/lib/utilsBundle');
  if (WebSocket.prototype.emit.colorSchemeShim) return;
  const pending = new Set();
  const { send, emit } = WebSocket.prototype;
  WebSocket.prototype.send = function (data, ...rest) {
    if (typeof data === 'string' && data.includes('"emulation.setMediaFeaturesOverride"')) pending.add(JSON.parse(data).id);
    return send.call(this, data, ...rest);
  };
  WebSocket.prototype.emit = function (event, data, ...rest) {
    if (event === 'message' && pending.size > 0 && String(data).includes('"unknown command"')) {
      const m = JSON.parse(String(data));
      if (pending.delete(m.id)) return emit.call(this, event, Buffer.from(JSON.stringify({ type: 'success', id: m.id, result: {} })), ...rest);
    }
    return emit.call(this, event, data, ...rest);
  };
  WebSocket.prototype.emit.colorSchemeShim = true;
}

const engines = {
  chromium: () => ({ type: chromium, options: { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: chromiumArgs } }),
  firefox: () => {
    tolerateMissingColorSchemeOverride();
    return { type: firefox, options: { channel: 'moz-firefox', executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr' } };
  },
};

// A browser of the selected engine (a11y.test.mjs launches one without a persistent profile).
export async function launchBrowser(options = {}) {
  const { type, options: base } = engines[engine]();
  return type.launch({ ...base, headless: true, ...options });
}

// options.locale: the browser's language (navigator.languages), e.g. 'zh-CN'; default en-US.
// Other options go to the context as they are (a phone: {viewport, hasTouch: true, isMobile: true}).
export async function launch({ locale, ...options } = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), `attn-${engine}-`));
  const { type, options: base } = engines[engine]();
  const context = await type.launchPersistentContext(userDataDir, {
    ...base,
    headless: true,
    ...(locale ? { locale } : {}),
    ...options,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
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
