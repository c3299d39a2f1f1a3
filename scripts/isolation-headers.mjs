// Cross-origin isolation: with these two headers a page has SharedArrayBuffer, and the core runs
// its threaded build (bindings/attention.mjs: crossOriginIsolated); without them, one thread. Sent
// by `npm start` and `npm run preview` (web/vite.config.mjs), the tests' static server
// (tests/browser/static-server.mjs) and the bench page's server (tests/bench/server.mjs).
export const ISOLATION_HEADERS = Object.freeze({ 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
