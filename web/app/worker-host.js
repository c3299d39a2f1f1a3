// What every mode's Web Worker shares (train/worker.js, generate/worker.js): its own WASM core,
// messages handled one after another in order, errors sent back as messages with the field they
// are about, and the loop's next turn without setTimeout's 4 ms clamp.
import { loadAttention, threadsAvailable } from '../../bindings/attention.mjs';

// The workers compute with the full-speed build of the core (bindings/attention.mjs), on one
// thread; with { threads: true } on the threaded build where the page is cross-origin isolated
// (its pool started once per worker). The threaded build's JavaScript exceptions make its
// bookkeeping slower (CMakeLists.txt): a worker asks for threads only where its work gains from
// them (training: engine.js gainsFromThreads). Every build computes the same numbers to the bit.
let threaded = null;
export const loadWorkerCore = ({ threads = false } = {}) =>
  (threads && threadsAvailable() ? (threaded ??= loadAttention()) : loadAttention({ fast: true, threads: 1 }));
// The page's own small build, for what a worker shows before the student asks for work:
// training's step 0 (the full-speed build, 90 KB more, is fetched at the first Train or Step).
export const loadPageCore = () => loadAttention({ threads: 1 });

export const errorMessage = (e) => ({ type: 'error', message: String(e?.message ?? e), field: e?.field ?? null });

// handle(msg) runs dispatch(msg) after every message before it is done (an init's core load
// included); a thrown error becomes an error message to the page, with the message's id (a core
// that failed to load in a session's start is that session's error, not a reply nobody awaits).
export function inOrder(dispatch, post) {
  let queue = Promise.resolve();
  return (msg) => (queue = queue.then(() => dispatch(msg)).catch((e) => post({ ...errorMessage(e), id: msg?.id ?? null })));
}

// A later turn of the worker's loop: a MessageChannel message, since nested setTimeout(0) is
// clamped to 4 ms (a quarter of a 16 ms chunk lost).
export function macrotask() {
  const channel = new MessageChannel();
  const queue = [];
  channel.port1.onmessage = () => queue.shift()?.();
  return (fn) => { queue.push(fn); channel.port2.postMessage(0); };
}

// Inside a Web Worker: a controller made by create({post, schedule}) answers the page's messages.
// Imported anywhere else (Node tests) it does nothing: the file just gives its controller.
export function serve(create) {
  if (typeof WorkerGlobalScope === 'undefined' || !(globalThis instanceof WorkerGlobalScope)) return;
  const controller = create({ post: (message, transfer = []) => globalThis.postMessage(message, transfer), schedule: macrotask() });
  globalThis.onmessage = (event) => controller.handle(event.data);
}
