// Vite serves web/ for `npm start` and builds the static site into dist/ for `npm run build`:
// the playground (index.html), an example lesson page with three embedded demos (examples/lesson.html),
// and the <attention-playground> element at a fixed name (dist/attention-playground.js) for
// course pages to load. The page imports ../bindings/attention.mjs, which loads
// ../build/wasm/attention.{js,wasm}; so does training mode's module worker (train/worker.js), built
// as an ES module (`worker.format`) beside the page's own chunks.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { ISOLATION_HEADERS } from '../scripts/isolation-headers.mjs';
import { wgslMinify } from './wgsl-minify.mjs';

const root = fileURLToPath(new URL('.', import.meta.url));
const project = fileURLToPath(new URL('..', import.meta.url));

// The threaded build's worker script (build/wasm/attention-threads.worker.js) is a classic worker
// script, which `npm start` must serve as written: Vite's dev server would make its dynamic
// import() of the glue an ES module's (an injected import line). The built site copies it as is.
function rawWorkerScripts() {
  return {
    name: 'raw-worker-scripts',
    apply: 'serve',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const path = decodeURIComponent(req.url.split('?')[0]);
        if (!/\/build\/wasm\/[\w-]+\.worker\.js$/.test(path)) return next();
        const file = path.startsWith('/@fs/') ? path.slice(4) : `${project}${path}`;
        let body;
        try { body = readFileSync(file); } catch { return next(); }
        res.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'no-cache', ...server.config.server.headers });
        res.end(body);
      });
    },
  };
}

export default defineConfig({
  root,
  base: './',
  server: { fs: { allow: [project] }, host: '127.0.0.1', headers: ISOLATION_HEADERS },
  preview: { host: '127.0.0.1', headers: ISOLATION_HEADERS },
  worker: { format: 'es' },
  // The two packages only the model mode's worker imports (bindings/tokenizer.mjs): Vite's scan of
  // the page does not follow a worker, so the dev server found them at the first model opened and
  // bundled them then, mid-request (a second bundling that could replace files a page was loading).
  // Named here, they are bundled when the server starts.
  optimizeDeps: { include: ['@huggingface/tokenizers', 'gpt-tokenizer/encoding/r50k_base'] },
  plugins: [wgslMinify(), rawWorkerScripts()],
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
