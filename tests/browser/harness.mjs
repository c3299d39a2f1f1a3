// Browser test harness: serves web/ with Vite (as `npm start` does) and drives Debian's
// Chromium headless with playwright-core. WebGPU runs on SwiftShader (../shared/TOOLCHAIN.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createServer } from 'vite';

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

// options.locale: the browser's language (navigator.languages), e.g. 'zh-CN'; default Chromium's en-US.
// Other options go to the context as they are (a phone: {viewport, hasTouch: true, isMobile: true}).
export async function launch({ locale, ...options } = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'attn-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: chromiumArgs,
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
