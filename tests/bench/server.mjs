// Static server for the bench page (page.html): the project's own files the page needs and the
// peers' packages from node_modules, wasm included, all from this machine (no CDN). node:http only;
// anything outside the listed folders is a 404. tfjs-core's ES modules import each other without
// the .js extension (written for bundlers): under node_modules/@tensorflow/, `x` redirects to
// `x.js` (or `x/index.js`), so that the module's own imports resolve from its real address.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ISOLATION_HEADERS } from '../../scripts/isolation-headers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// /build/wasm/attention.{js,wasm}: the page's core, which describes the attention block for core-webgpu;
// attention-fast*: the full build (training mode's and "Open a model"'s), for the training and pretrained tables;
// attention-threads*: its threaded build (the page's where it is cross-origin isolated), for the pretrained table's N threads.
const ALLOWED = ['/tests/bench/', '/bindings/', '/build/wasm/bench/', '/build/wasm/attention.', '/build/wasm/attention-fast', '/build/wasm/attention-threads',
  '/build/bench/', '/web/',
  '/node_modules/onnxruntime-web/dist/', '/node_modules/@tensorflow/'];
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json', '.wgsl': 'text/plain; charset=utf-8' };

export async function serveBench() {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = join(ROOT, path);
    if (path.startsWith('/node_modules/@tensorflow/') && file.startsWith(ROOT) && (!existsSync(file) || statSync(file).isDirectory())) {
      const to = [`${path}.js`, `${path}/index.js`].find((p) => existsSync(join(ROOT, p)));
      if (to) {
        res.writeHead(302, { location: to, 'cache-control': 'no-store' }).end();
        return;
      }
    }
    if (!ALLOWED.some((p) => path.startsWith(p)) || !file.startsWith(ROOT) || !existsSync(file) || statSync(file).isDirectory()) {
      res.writeHead(404).end('not found');
      return;
    }
    // page.html?threads=N and pretrained.html?threads=N are cross-origin isolated (SharedArrayBuffer:
    // the peers' and the core's threaded builds can start threads); the one-thread pages are not
    const isolate = extname(file) !== '.html' || new URL(req.url, 'http://x').searchParams.has('threads');
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store', 'content-length': statSync(file).size,
      ...(isolate ? ISOLATION_HEADERS : {}) });
    createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/tests/bench/page.html`, close: () => new Promise((r) => server.close(r)) };
}
