// The playground as one self-contained HTML file for Jupyter (bindings/python, docs/embedding.md, "In a
// notebook"): the page (index.html) with its JS, CSS, WASM core and WGSL kernels inlined
// (vite-plugin-singlefile; assets become data: URLs), written to dist/notebook/playground.html.
// The Python package puts a <script type="application/json" id="notebook-data"> with the module's
// scenario and weights where the marker below stands (web/playground/notebook.js reads it) and shows
// the file in an <iframe srcdoc>: nothing is fetched from a server or a CDN. The core's files for
// `View.outputs()` (bindings/cli.mjs under Node) are the repository's own (bindings/*.mjs,
// build/wasm/attention.*): the package takes them from there (bindings/python/setup.py), so dist/
// holds one copy of each file.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { viteSingleFile } from 'vite-plugin-singlefile';

const root = fileURLToPath(new URL('.', import.meta.url));
const project = fileURLToPath(new URL('..', import.meta.url));
export const NOTEBOOK_MARKER = '<!-- notebook-data -->';
// The page's own policy, inlined code allowed (the notebook's output is one file): no origin at all
// is reachable, data: URLs (the inlined WASM and kernels) are.
const NOTEBOOK_CSP = "default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; style-src 'unsafe-inline'; connect-src data:; img-src data: blob:";

// index.html as the notebook's page: its CSP for inlined code, no favicon (a notebook output has
// no folder to load it from), the marker for the data.
function notebookPage() {
  return {
    name: 'notebook-page',
    transformIndexHtml(html) {
      const out = html
        .replace(/<meta http-equiv="Content-Security-Policy" content="[^"]*">/, `<meta http-equiv="Content-Security-Policy" content="${NOTEBOOK_CSP}">`)
        .replace(/\s*<link rel="icon"[^>]*>/, '')
        .replace('</title>', `</title>\n  ${NOTEBOOK_MARKER}`);
      if (!out.includes(NOTEBOOK_CSP) || !out.includes(NOTEBOOK_MARKER)) throw new Error('web/index.html: no CSP meta or <title> to rewrite for the notebook page');
      return out;
    },
  };
}

// The WASM stays out of the page (the glue and the bindings each reference it, which would inline
// it twice): the Python package inlines it once, as base64 in the notebook data (wasmBinary), and
// the page never fetches a .wasm file (a notebook's view opens no mode with a worker). So the
// files the bundler emitted for those references are not kept: dist/ has each .wasm once, in
// dist/assets/. After vite-plugin-singlefile's own config hook, which inlines every asset.
function wasmApart() {
  return {
    name: 'notebook-wasm-apart',
    enforce: 'post',
    config(config) { config.build.assetsInlineLimit = (file) => !file.endsWith('.wasm'); },
    generateBundle(options, bundle) {
      for (const name of Object.keys(bundle)) if (name.endsWith('.wasm')) delete bundle[name];
    },
  };
}

export default defineConfig({
  root,
  base: './',
  // web/public (the lesson example, the shipped models) belongs to the site, not to the one file
  publicDir: false,
  logLevel: 'warn',
  worker: { format: 'es' },
  plugins: [notebookPage(), viteSingleFile({ removeViteModuleLoader: true, outputFileName: 'playground.html' }), wasmApart()],
  build: { outDir: `${project}/dist/notebook`, emptyOutDir: true, target: 'es2022', rollupOptions: { input: `${root}/index.html` } },
});
