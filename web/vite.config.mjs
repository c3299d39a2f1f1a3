// Vite serves web/ for `npm start` and builds the static site into dist/ for `npm run build`:
// the playground (index.html), an example lesson page with three embedded demos (examples/lesson.html),
// and the <attention-playground> element at a fixed name (dist/attention-playground.js) for
// course pages to load. The page imports ../bindings/attention.mjs, which loads
// ../build/wasm/attention.{js,wasm}; so does training mode's module worker (train/worker.js), built
// as an ES module (`worker.format`) beside the page's own chunks.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { wgslMinify } from './wgsl-minify.mjs';

const root = fileURLToPath(new URL('.', import.meta.url));
const project = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  root,
  base: './',
  server: { fs: { allow: [project] }, host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
  worker: { format: 'es' },
  plugins: [wgslMinify()],
  build: {
    outDir: `${project}/dist`,
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    // every browser the page supports has <link rel=modulepreload>: no polyfill chunk
    modulePreload: { polyfill: false },
    rollupOptions: {
      input: {
        index: `${root}/index.html`,
        lesson: `${root}/examples/lesson.html`,
        'attention-playground': `${root}/attention-playground.js`,
      },
      preserveEntrySignatures: 'exports-only',
      output: {
        entryFileNames: (chunk) => (chunk.name === 'attention-playground' ? 'attention-playground.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
});
