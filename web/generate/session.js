// Generate mode's page side of the worker (worker.js): a session of the two generators as they
// arrive, token by token (no DOM). The mode (mode.js) starts sessions, asks for steps and runs, and
// draws what comes; nothing here computes a token.
import { CHECK_ATOL } from './model.js';

// onUpdate(kind, session): after each message ('token', 'stopped', 'error'). createWorker: for tests.
// A Step or Run pressed while there is no session (the model being fetched or replaced) waits in
// `early` for the next session, which takes it; close() forgets it.
export function createGenerator({ onUpdate, createWorker = () => new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }) }) {
  let worker = null, session = null, nextId = 1;
  let early = { steps: 0, run: false };

  function onMessage({ data }) {
    if (!session || data.id !== session.id) return;   // a reply to a session already replaced
    if (data.type === 'token') {
      session.tokens.true.push(data.cached);
      session.tokens.false.push(data.uncached);
      session.pending = Math.max(0, session.pending - 1);
      const a = data.cached.logits, b = data.uncached.logits;
      for (let i = 0; i < a.length; i++) session.maxDiff = Math.max(session.maxDiff, Math.abs(a[i] - b[i]));
    } else if (data.type === 'stopped') {
      session.running = false;
      session.pending = 0;
    } else if (data.type === 'error') {
      session.error = Object.assign(new Error(data.message), { field: data.field });
      session.running = false;
    }
    onUpdate(data.type, session);
  }

  const post = (msg) => {
    if (!worker) {
      worker = createWorker();
      worker.onmessage = onMessage;
      worker.onerror = (e) => { if (session) { session.error = new Error(e.message || 'the generation worker could not start'); onUpdate('error', session); } };
    }
    worker.postMessage(msg);
  };

  const api = {
    get session() { return session; },
    // A new session (the last one ends): spec (model.js modelSpec), the prompt's ids, the sampling
    // settings, max new tokens; it takes the presses that came while there was no session.
    start(spec, prompt, settings, maxNew) {
      session = { id: nextId++, spec, prompt, settings, maxNew, tokens: { true: [], false: [] }, maxDiff: 0, running: false, pending: 1, error: null };
      post({ type: 'start', id: session.id, spec: { config: spec.config, seed: spec.seed }, weights: spec.bytes ?? null, prompt, settings, maxNew });
      const pressed = early;
      early = { steps: 0, run: false };
      for (let i = 0; i < pressed.steps; i++) api.step();   // step() stops at maxNew
      if (pressed.run) api.run();
      return session;
    },
    step() {
      if (!session) { early.steps++; return; }
      if (session.running || session.error || session.tokens.true.length + session.pending >= session.maxNew + 1) return;
      session.pending++;
      post({ type: 'step', id: session.id });
    },
    run() {
      if (!session) { early.run = true; return; }
      if (session.running || session.error) return;
      session.running = true;
      post({ type: 'run', id: session.id });
    },
    // Stop, or, with no session, take back the presses waiting for one.
    stop() {
      if (!session) early = { steps: 0, run: false };
      else if (session.running) post({ type: 'stop', id: session.id });
    },
    // No session until the next start (the model is being fetched): the worker stays, replies to the
    // last session are ignored, and presses wait for the next session.
    drop() { session = null; },
    // The settings cannot make a session (a prompt character outside the vocabulary): the session
    // ends (a run under way stops) and presses waiting are forgotten; the worker and its core stay
    // for the next start, which needs no second load.
    clear() {
      api.stop();
      session = null;
      early = { steps: 0, run: false };
    },
    // The mode closed: the worker and its WASM instance go, and presses not taken yet.
    close() {
      worker?.terminate();
      worker = null;
      session = null;
      early = { steps: 0, run: false };
    },
  };
  return api;
}

// Tokens generated so far (the forwards that arrived minus the one ahead).
export const generatedCount = (session) => Math.max(0, session.tokens.true.length - 1);

// The sequence so far: prompt + generated ids (the token drawn ahead is not part of it yet).
export function sessionIds(session) {
  return [...session.prompt, ...session.tokens.true.slice(0, -1).map((x) => x.id)];
}

const median = (xs) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Per-token times (ms): the prefill, then the median of the tokens after it, cached and not.
export function timings(session) {
  const of = (list) => ({ first: list[0]?.ms ?? null, median: median(list.slice(1).map((x) => x.ms)), last: list.at(-1)?.ms ?? null });
  return { cached: of(session.tokens.true), uncached: of(session.tokens.false), maxDiff: session.maxDiff, ok: session.maxDiff <= CHECK_ATOL };
}
