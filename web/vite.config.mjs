// Vite serves web/ for `npm start` and builds the static site into dist/ for `npm run build`.
// The page imports ../bindings/attention.mjs, which loads ../build/wasm/attention.{js,wasm}.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const project = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  root,
  base: './',
  server: { fs: { allow: [project] }, host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
  build: { outDir: `${project}/dist`, emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0 },
});
